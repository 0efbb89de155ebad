/*
Copyright 2026 The cluster-api-provider-openshift-assisted Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package v1alpha1

import (
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1" //nolint:staticcheck // upstream's v1alpha1 holds Cluster API v1beta1 conditions
	utilconversion "sigs.k8s.io/cluster-api/util/conversion"
	"sigs.k8s.io/controller-runtime/pkg/conversion"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
)

// Conversion follows Cluster API's pattern (api/core/v1beta1/conversion.go): v1alpha2 is the hub.
// Converting the hub to v1alpha1 stores the whole hub object in the spoke's
// cluster.x-k8s.io/conversion-data annotation; converting a spoke back restores from it what
// v1alpha1 cannot hold (pre/post bootstrap commands and their paths, providerID, the ISO URL, the
// Agent reference's kind and namespace, the conditions' observedGeneration), so an object written
// by a v1alpha1 client loses nothing. Upstream does it the other way round (it stores the spoke in
// the hub), which drops hub-only fields whenever an old client writes; an upstream annotation
// found on a spoke is read like ours and only fills fields v1alpha1 does not have.

// ConvertTo converts this OpenshiftAssistedConfig to the hub version (v1alpha2).
func (src *OpenshiftAssistedConfig) ConvertTo(dstRaw conversion.Hub) error {
	dst, ok := dstRaw.(*bootstrapv1.OpenshiftAssistedConfig)
	if !ok {
		return fmt.Errorf("cannot convert OpenshiftAssistedConfig v1alpha1 to %T", dstRaw)
	}
	restored := &bootstrapv1.OpenshiftAssistedConfig{}
	hasRestored, err := utilconversion.UnmarshalData(src, restored)
	if err != nil {
		return fmt.Errorf("reading the %s annotation of OpenshiftAssistedConfig %s/%s: %w", utilconversion.DataAnnotation, src.Namespace, src.Name, err)
	}
	src.ObjectMeta.DeepCopyInto(&dst.ObjectMeta)
	dst.Spec = SpecToHub(&src.Spec, &restored.Spec)
	dst.Status = statusToHub(src, &restored.Status, hasRestored)
	return nil
}

// ConvertFrom converts the hub version (v1alpha2) to this OpenshiftAssistedConfig.
func (dst *OpenshiftAssistedConfig) ConvertFrom(srcRaw conversion.Hub) error { //nolint:revive // dst and src, as in Cluster API's conversions
	src, ok := srcRaw.(*bootstrapv1.OpenshiftAssistedConfig)
	if !ok {
		return fmt.Errorf("cannot convert %T to OpenshiftAssistedConfig v1alpha1", srcRaw)
	}
	src.ObjectMeta.DeepCopyInto(&dst.ObjectMeta)
	dst.Spec = SpecFromHub(&src.Spec)
	dst.Status = statusFromHub(&src.Status)
	return utilconversion.MarshalData(src, dst)
}

// ConvertTo converts this OpenshiftAssistedConfigTemplate to the hub version (v1alpha2).
func (src *OpenshiftAssistedConfigTemplate) ConvertTo(dstRaw conversion.Hub) error {
	dst, ok := dstRaw.(*bootstrapv1.OpenshiftAssistedConfigTemplate)
	if !ok {
		return fmt.Errorf("cannot convert OpenshiftAssistedConfigTemplate v1alpha1 to %T", dstRaw)
	}
	restored := &bootstrapv1.OpenshiftAssistedConfigTemplate{}
	if _, err := utilconversion.UnmarshalData(src, restored); err != nil {
		return fmt.Errorf("reading the %s annotation of OpenshiftAssistedConfigTemplate %s/%s: %w", utilconversion.DataAnnotation, src.Namespace, src.Name, err)
	}
	src.ObjectMeta.DeepCopyInto(&dst.ObjectMeta)
	dst.Spec.Template.ObjectMeta.Labels = maps.Clone(src.Spec.Template.ObjectMeta.Labels)
	dst.Spec.Template.ObjectMeta.Annotations = maps.Clone(src.Spec.Template.ObjectMeta.Annotations)
	dst.Spec.Template.Spec = SpecToHub(&src.Spec.Template.Spec, &restored.Spec.Template.Spec)
	return nil
}

// ConvertFrom converts the hub version (v1alpha2) to this OpenshiftAssistedConfigTemplate.
func (dst *OpenshiftAssistedConfigTemplate) ConvertFrom(srcRaw conversion.Hub) error { //nolint:revive // dst and src, as in Cluster API's conversions
	src, ok := srcRaw.(*bootstrapv1.OpenshiftAssistedConfigTemplate)
	if !ok {
		return fmt.Errorf("cannot convert %T to OpenshiftAssistedConfigTemplate v1alpha1", srcRaw)
	}
	src.ObjectMeta.DeepCopyInto(&dst.ObjectMeta)
	dst.Spec.Template.ObjectMeta.Labels = maps.Clone(src.Spec.Template.ObjectMeta.Labels)
	dst.Spec.Template.ObjectMeta.Annotations = maps.Clone(src.Spec.Template.ObjectMeta.Annotations)
	dst.Spec.Template.Spec = SpecFromHub(&src.Spec.Template.Spec)
	return utilconversion.MarshalData(src, dst)
}

// SpecToHub converts a v1alpha1 spec to v1alpha2, with v1alpha2's own fields taken from restored
// (the hub this spec was converted from, if any). The control plane's older versions, which embed
// this spec, use it too.
func SpecToHub(in *OpenshiftAssistedConfigSpec, restored *bootstrapv1.OpenshiftAssistedConfigSpec) bootstrapv1.OpenshiftAssistedConfigSpec {
	in = in.DeepCopy()
	return bootstrapv1.OpenshiftAssistedConfigSpec{
		Proxy:                      in.Proxy,
		PullSecretRef:              in.PullSecretRef,
		AdditionalNTPSources:       in.AdditionalNTPSources,
		SSHAuthorizedKey:           in.SSHAuthorizedKey,
		NMStateConfigLabelSelector: in.NMStateConfigLabelSelector,
		CpuArchitecture:            in.CpuArchitecture,
		KernelArguments:            in.KernelArguments,
		AdditionalTrustBundle:      in.AdditionalTrustBundle,
		OSImageVersion:             in.OSImageVersion,
		NodeRegistration: bootstrapv1.NodeRegistrationOptions{
			Name:               in.NodeRegistration.Name,
			KubeletExtraLabels: in.NodeRegistration.KubeletExtraLabels,
			ProviderID:         restored.NodeRegistration.ProviderID,
		},
		PreBootstrapCommands:        restored.PreBootstrapCommands,
		PostBootstrapCommands:       restored.PostBootstrapCommands,
		BootstrapCommandSentinelDir: restored.BootstrapCommandSentinelDir,
		PostBootstrapKubeconfigPath: restored.PostBootstrapKubeconfigPath,
	}
}

// SpecFromHub converts a v1alpha2 spec to v1alpha1, which has no place for v1alpha2's own fields:
// the caller keeps them (in the conversion-data annotation).
func SpecFromHub(in *bootstrapv1.OpenshiftAssistedConfigSpec) OpenshiftAssistedConfigSpec {
	in = in.DeepCopy()
	return OpenshiftAssistedConfigSpec{
		Proxy:                      in.Proxy,
		PullSecretRef:              in.PullSecretRef,
		AdditionalNTPSources:       in.AdditionalNTPSources,
		SSHAuthorizedKey:           in.SSHAuthorizedKey,
		NMStateConfigLabelSelector: in.NMStateConfigLabelSelector,
		CpuArchitecture:            in.CpuArchitecture,
		KernelArguments:            in.KernelArguments,
		AdditionalTrustBundle:      in.AdditionalTrustBundle,
		OSImageVersion:             in.OSImageVersion,
		NodeRegistration: NodeRegistrationOptions{
			Name:               in.NodeRegistration.Name,
			KubeletExtraLabels: in.NodeRegistration.KubeletExtraLabels,
		},
	}
}

func statusToHub(src *OpenshiftAssistedConfig, restored *bootstrapv1.OpenshiftAssistedConfigStatus, hasRestored bool) bootstrapv1.OpenshiftAssistedConfigStatus {
	in := src.Status.DeepCopy()
	out := bootstrapv1.OpenshiftAssistedConfigStatus{
		Conditions:         ConditionsToHub(in.Conditions, restored.Conditions),
		DataSecretName:     ptr.Deref(in.DataSecretName, ""),
		InfraEnvRef:        in.InfraEnvRef,
		ISODownloadURL:     restored.ISODownloadURL,
		ObservedGeneration: in.ObservedGeneration,
	}
	// ready is the v1beta1 contract's dataSecretCreated; a restored false stays false, not unset.
	if in.Ready {
		out.Initialization.DataSecretCreated = ptr.To(true)
	} else if hasRestored && restored.Initialization.DataSecretCreated != nil {
		out.Initialization.DataSecretCreated = ptr.To(false)
	}
	if in.AgentRef != nil {
		if r := restored.AgentRef; r != nil && r.Name == in.AgentRef.Name {
			out.AgentRef = r.DeepCopy()
		} else {
			out.AgentRef = &corev1.ObjectReference{APIVersion: agentAPIVersion, Kind: "Agent", Namespace: src.Namespace, Name: in.AgentRef.Name}
		}
	}
	return out
}

// agentAPIVersion is the apiVersion of assisted-service's Agent, which v1alpha1's agentRef names.
const agentAPIVersion = "agent-install.openshift.io/v1beta1"

func statusFromHub(in *bootstrapv1.OpenshiftAssistedConfigStatus) OpenshiftAssistedConfigStatus {
	in = in.DeepCopy()
	out := OpenshiftAssistedConfigStatus{
		InfraEnvRef:        in.InfraEnvRef,
		Ready:              ptr.Deref(in.Initialization.DataSecretCreated, false),
		ObservedGeneration: in.ObservedGeneration,
		Conditions:         ConditionsFromHub(in.Conditions),
	}
	if in.DataSecretName != "" {
		out.DataSecretName = ptr.To(in.DataSecretName)
	}
	if in.AgentRef != nil {
		out.AgentRef = &corev1.LocalObjectReference{Name: in.AgentRef.Name}
	}
	return out
}

// NoReasonReported is the reason a converted condition gets when its v1beta1 form has none: v1beta2
// conditions (metav1.Condition) require one.
const NoReasonReported = "NoReasonReported"

// ConditionsToHub converts Cluster API v1beta1 conditions to metav1 conditions. A condition that
// matches one of restored (the hub's conditions this spoke was converted from) is taken from
// there, so a round trip keeps what the v1beta1 form cannot hold (observedGeneration, and a reason
// a v1beta1 condition left empty).
func ConditionsToHub(in clusterv1beta1.Conditions, restored []metav1.Condition) []metav1.Condition {
	if in == nil {
		return nil
	}
	out := make([]metav1.Condition, 0, len(in))
	for _, c := range in {
		converted := metav1.Condition{
			Type:               string(c.Type),
			Status:             metav1.ConditionStatus(c.Status),
			LastTransitionTime: c.LastTransitionTime,
			Reason:             c.Reason,
			Message:            c.Message,
		}
		if converted.Reason == "" {
			converted.Reason = NoReasonReported
		}
		for _, r := range restored {
			if r.Type == converted.Type && r.Status == converted.Status && r.Message == converted.Message &&
				r.LastTransitionTime.Equal(&converted.LastTransitionTime) && (r.Reason == c.Reason || c.Reason == "") {
				converted = r
				break
			}
		}
		out = append(out, converted)
	}
	return out
}

// ConditionsFromHub converts metav1 conditions to Cluster API v1beta1 conditions: a condition
// that is not True gets severity Info (metav1 conditions have no severity), and the reason
// NoReasonReported, which only a conversion writes, becomes empty again.
func ConditionsFromHub(in []metav1.Condition) clusterv1beta1.Conditions {
	if in == nil {
		return nil
	}
	out := make(clusterv1beta1.Conditions, 0, len(in))
	for _, c := range in {
		converted := clusterv1beta1.Condition{
			Type:               clusterv1beta1.ConditionType(c.Type),
			Status:             corev1.ConditionStatus(c.Status),
			LastTransitionTime: c.LastTransitionTime,
			Reason:             c.Reason,
			Message:            c.Message,
		}
		if converted.Reason == NoReasonReported {
			converted.Reason = ""
		}
		if c.Status != metav1.ConditionTrue {
			converted.Severity = clusterv1beta1.ConditionSeverityInfo
		}
		out = append(out, converted)
	}
	return out
}
