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

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apimachineryconversion "k8s.io/apimachinery/pkg/conversion"
	"k8s.io/utils/ptr"
	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1" //nolint:staticcheck // upstream's v1alpha1 holds Cluster API v1beta1 conditions
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	utilconversion "sigs.k8s.io/cluster-api/util/conversion"
	"sigs.k8s.io/controller-runtime/pkg/conversion"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
)

// Conversion follows Cluster API's pattern (api/core/v1beta1/conversion.go): v1alpha2 is the hub,
// conversion-gen writes the field-by-field conversions (zz_generated.conversion.go, `make
// generate`), and this file holds the Convert functions it cannot write, each saying why.
//
// Converting the hub to v1alpha1 stores the whole hub object in the spoke's
// cluster.x-k8s.io/conversion-data annotation; converting a spoke back restores from it what
// v1alpha1 cannot hold (pre/post bootstrap commands and their paths, providerID, the ISO URL, the
// Agent reference's kind and namespace, the conditions' observedGeneration), so an object written
// by a v1alpha1 client loses nothing. Upstream does it the other way round (it stores the spoke in
// the hub), which drops hub-only fields whenever an old client writes; an upstream annotation
// found on a spoke is read like ours and only fills fields v1alpha1 does not have.
//
// The generated functions convert a copy of the object (src.DeepCopy()): they share slices, maps
// and pointers between their input and output, and neither the request's object nor the
// annotation logic below may see the other's changes.

// ConvertTo converts this OpenshiftAssistedConfig to the hub version (v1alpha2).
func (src *OpenshiftAssistedConfig) ConvertTo(dstRaw conversion.Hub) error {
	dst, ok := dstRaw.(*bootstrapv1.OpenshiftAssistedConfig)
	if !ok {
		return fmt.Errorf("cannot convert OpenshiftAssistedConfig v1alpha1 to %T", dstRaw)
	}
	restored := &bootstrapv1.OpenshiftAssistedConfig{}
	if _, err := utilconversion.UnmarshalData(src, restored); err != nil {
		return fmt.Errorf("reading the %s annotation of OpenshiftAssistedConfig %s/%s: %w", utilconversion.DataAnnotation, src.Namespace, src.Name, err)
	}
	if err := Convert_v1alpha1_OpenshiftAssistedConfig_To_v1alpha2_OpenshiftAssistedConfig(src.DeepCopy(), dst, nil); err != nil {
		return err
	}
	RestoreSpec(&dst.Spec, &restored.Spec)

	RestoreConditions(dst.Status.Conditions, src.Status.Conditions, restored.Status.Conditions)
	dst.Status.ISODownloadURL = restored.Status.ISODownloadURL
	// ready is the v1beta1 contract's dataSecretCreated; a restored false stays false, not unset.
	if !src.Status.Ready && restored.Status.Initialization.DataSecretCreated != nil {
		dst.Status.Initialization.DataSecretCreated = ptr.To(false)
	}
	if ref := dst.Status.AgentRef; ref != nil {
		if r := restored.Status.AgentRef; r != nil && r.Name == ref.Name {
			dst.Status.AgentRef = r.DeepCopy()
		} else {
			ref.Namespace = src.Namespace
		}
	}
	return nil
}

// ConvertFrom converts the hub version (v1alpha2) to this OpenshiftAssistedConfig.
func (dst *OpenshiftAssistedConfig) ConvertFrom(srcRaw conversion.Hub) error { //nolint:revive // dst and src, as in Cluster API's conversions
	src, ok := srcRaw.(*bootstrapv1.OpenshiftAssistedConfig)
	if !ok {
		return fmt.Errorf("cannot convert %T to OpenshiftAssistedConfig v1alpha1", srcRaw)
	}
	if err := Convert_v1alpha2_OpenshiftAssistedConfig_To_v1alpha1_OpenshiftAssistedConfig(src.DeepCopy(), dst, nil); err != nil {
		return err
	}
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
	if err := Convert_v1alpha1_OpenshiftAssistedConfigTemplate_To_v1alpha2_OpenshiftAssistedConfigTemplate(src.DeepCopy(), dst, nil); err != nil {
		return err
	}
	RestoreSpec(&dst.Spec.Template.Spec, &restored.Spec.Template.Spec)
	return nil
}

// ConvertFrom converts the hub version (v1alpha2) to this OpenshiftAssistedConfigTemplate.
func (dst *OpenshiftAssistedConfigTemplate) ConvertFrom(srcRaw conversion.Hub) error { //nolint:revive // dst and src, as in Cluster API's conversions
	src, ok := srcRaw.(*bootstrapv1.OpenshiftAssistedConfigTemplate)
	if !ok {
		return fmt.Errorf("cannot convert %T to OpenshiftAssistedConfigTemplate v1alpha1", srcRaw)
	}
	if err := Convert_v1alpha2_OpenshiftAssistedConfigTemplate_To_v1alpha1_OpenshiftAssistedConfigTemplate(src.DeepCopy(), dst, nil); err != nil {
		return err
	}
	return utilconversion.MarshalData(src, dst)
}

// RestoreSpec sets in dst, a spec converted from v1alpha1, the v1alpha2 fields that v1alpha1 has
// no place for, from restored (the hub spec the spoke was converted from, if any). The control
// plane's v1alpha2, which embeds this spec, uses it too.
func RestoreSpec(dst, restored *bootstrapv1.OpenshiftAssistedConfigSpec) {
	dst.NodeRegistration.ProviderID = restored.NodeRegistration.ProviderID
	dst.PreBootstrapCommands = restored.PreBootstrapCommands
	dst.PostBootstrapCommands = restored.PostBootstrapCommands
	dst.BootstrapCommandSentinelDir = restored.BootstrapCommandSentinelDir
	dst.PostBootstrapKubeconfigPath = restored.PostBootstrapKubeconfigPath
}

// Convert_v1alpha1_OpenshiftAssistedConfigSpec_To_v1alpha2_OpenshiftAssistedConfigSpec is manual
// only so that conversion-gen sees it when it converts the control plane's v1alpha2, which embeds
// this spec: it reads no generated file, so it cannot call the generated one of another package. It
// is the generated conversion; ConvertTo restores v1alpha2's own fields (RestoreSpec).
func Convert_v1alpha1_OpenshiftAssistedConfigSpec_To_v1alpha2_OpenshiftAssistedConfigSpec(in *OpenshiftAssistedConfigSpec, out *bootstrapv1.OpenshiftAssistedConfigSpec, s apimachineryconversion.Scope) error {
	return autoConvert_v1alpha1_OpenshiftAssistedConfigSpec_To_v1alpha2_OpenshiftAssistedConfigSpec(in, out, s)
}

// Convert_v1alpha2_OpenshiftAssistedConfigSpec_To_v1alpha1_OpenshiftAssistedConfigSpec is manual
// because v1alpha1 has no preBootstrapCommands, postBootstrapCommands, bootstrapCommandSentinelDir
// and postBootstrapKubeconfigPath: they are dropped here, kept in the conversion-data annotation
// and restored by ConvertTo (RestoreSpec).
func Convert_v1alpha2_OpenshiftAssistedConfigSpec_To_v1alpha1_OpenshiftAssistedConfigSpec(in *bootstrapv1.OpenshiftAssistedConfigSpec, out *OpenshiftAssistedConfigSpec, s apimachineryconversion.Scope) error {
	return autoConvert_v1alpha2_OpenshiftAssistedConfigSpec_To_v1alpha1_OpenshiftAssistedConfigSpec(in, out, s)
}

// Convert_v1alpha2_NodeRegistrationOptions_To_v1alpha1_NodeRegistrationOptions is manual because
// v1alpha1 has no providerID: it is dropped here, kept in the conversion-data annotation and
// restored by ConvertTo (RestoreSpec).
func Convert_v1alpha2_NodeRegistrationOptions_To_v1alpha1_NodeRegistrationOptions(in *bootstrapv1.NodeRegistrationOptions, out *NodeRegistrationOptions, s apimachineryconversion.Scope) error {
	return autoConvert_v1alpha2_NodeRegistrationOptions_To_v1alpha1_NodeRegistrationOptions(in, out, s)
}

// agentAPIVersion is the apiVersion of assisted-service's Agent, which v1alpha1's agentRef names.
const agentAPIVersion = "agent-install.openshift.io/v1beta1"

// Convert_v1alpha1_OpenshiftAssistedConfigStatus_To_v1alpha2_OpenshiftAssistedConfigStatus is
// manual because the v1beta1 contract's ready is v1alpha2's initialization.dataSecretCreated (true,
// or unset: ConvertTo restores a false), because v1alpha1's agentRef names only the Agent where
// v1alpha2's is a full reference (its apiVersion and kind are the Agent's; ConvertTo sets its
// namespace, or restores it), and because v1alpha2 has no failureReason and failureMessage: it
// reports problems in conditions, and its provider never sets them. Both versions' agentRef opt out
// of conversion-gen (its tag set to false): it would convert a LocalObjectReference to an
// ObjectReference and back with a Go type conversion, which does not compile.
func Convert_v1alpha1_OpenshiftAssistedConfigStatus_To_v1alpha2_OpenshiftAssistedConfigStatus(in *OpenshiftAssistedConfigStatus, out *bootstrapv1.OpenshiftAssistedConfigStatus, s apimachineryconversion.Scope) error {
	if err := autoConvert_v1alpha1_OpenshiftAssistedConfigStatus_To_v1alpha2_OpenshiftAssistedConfigStatus(in, out, s); err != nil {
		return err
	}
	if in.Ready {
		out.Initialization.DataSecretCreated = ptr.To(true)
	}
	if in.AgentRef != nil {
		out.AgentRef = &corev1.ObjectReference{APIVersion: agentAPIVersion, Kind: "Agent", Name: in.AgentRef.Name}
	}
	return nil
}

// Convert_v1alpha2_OpenshiftAssistedConfigStatus_To_v1alpha1_OpenshiftAssistedConfigStatus is
// manual because v1alpha2's initialization.dataSecretCreated is the v1beta1 contract's ready,
// because v1alpha1 has no isoDownloadURL (kept in the conversion-data annotation, restored by
// ConvertTo), because an empty dataSecretName is an unset one in v1alpha1, not a pointer to "", and
// because v1alpha1's agentRef keeps only the Agent's name (see above).
func Convert_v1alpha2_OpenshiftAssistedConfigStatus_To_v1alpha1_OpenshiftAssistedConfigStatus(in *bootstrapv1.OpenshiftAssistedConfigStatus, out *OpenshiftAssistedConfigStatus, s apimachineryconversion.Scope) error {
	if err := autoConvert_v1alpha2_OpenshiftAssistedConfigStatus_To_v1alpha1_OpenshiftAssistedConfigStatus(in, out, s); err != nil {
		return err
	}
	out.Ready = ptr.Deref(in.Initialization.DataSecretCreated, false)
	if in.DataSecretName == "" {
		out.DataSecretName = nil
	}
	if in.AgentRef != nil {
		out.AgentRef = &corev1.LocalObjectReference{Name: in.AgentRef.Name}
	}
	return nil
}

// Convert_v1beta1_ObjectMeta_To_v1beta2_ObjectMeta is manual because conversion-gen does not see
// the conversion of Cluster API's two ObjectMeta types (it reads no generated file of another
// package): it calls it. The control plane's v1alpha2 uses it too.
func Convert_v1beta1_ObjectMeta_To_v1beta2_ObjectMeta(in *clusterv1beta1.ObjectMeta, out *clusterv1.ObjectMeta, s apimachineryconversion.Scope) error {
	return clusterv1beta1.Convert_v1beta1_ObjectMeta_To_v1beta2_ObjectMeta(in, out, s)
}

// Convert_v1beta2_ObjectMeta_To_v1beta1_ObjectMeta is manual for the same reason.
func Convert_v1beta2_ObjectMeta_To_v1beta1_ObjectMeta(in *clusterv1.ObjectMeta, out *clusterv1beta1.ObjectMeta, s apimachineryconversion.Scope) error {
	return clusterv1beta1.Convert_v1beta2_ObjectMeta_To_v1beta1_ObjectMeta(in, out, s)
}

// NoReasonReported is the reason a converted condition gets when its v1beta1 form has none: v1beta2
// conditions (metav1.Condition) require one.
const NoReasonReported = "NoReasonReported"

// Convert_v1beta1_Condition_To_v1_Condition is manual because Cluster API's v1beta1 conditions and
// metav1 conditions differ: a condition without a reason gets NoReasonReported (metav1 conditions
// require one), and the severity has no place (converting back derives it). ConvertTo then takes
// from the conversion-data annotation a condition the spoke did not change (RestoreConditions). The
// control plane's v1alpha2 uses it too.
func Convert_v1beta1_Condition_To_v1_Condition(in *clusterv1beta1.Condition, out *metav1.Condition, _ apimachineryconversion.Scope) error {
	*out = metav1.Condition{
		Type:               string(in.Type),
		Status:             metav1.ConditionStatus(in.Status),
		LastTransitionTime: in.LastTransitionTime,
		Reason:             in.Reason,
		Message:            in.Message,
	}
	if out.Reason == "" {
		out.Reason = NoReasonReported
	}
	return nil
}

// Convert_v1_Condition_To_v1beta1_Condition is manual because the two condition types differ: a
// condition that is not True gets severity Info (metav1 conditions have no severity), the reason
// NoReasonReported, which only a conversion writes, becomes empty again, and observedGeneration has
// no place (kept in the conversion-data annotation). The control plane's v1alpha2 uses it too.
func Convert_v1_Condition_To_v1beta1_Condition(in *metav1.Condition, out *clusterv1beta1.Condition, _ apimachineryconversion.Scope) error {
	*out = clusterv1beta1.Condition{
		Type:               clusterv1beta1.ConditionType(in.Type),
		Status:             corev1.ConditionStatus(in.Status),
		LastTransitionTime: in.LastTransitionTime,
		Reason:             in.Reason,
		Message:            in.Message,
	}
	if out.Reason == NoReasonReported {
		out.Reason = ""
	}
	if in.Status != metav1.ConditionTrue {
		out.Severity = clusterv1beta1.ConditionSeverityInfo
	}
	return nil
}

// RestoreConditions replaces each of converted, the conversion of the v1beta1 conditions in, by
// the condition of restored (the hub's conditions the spoke was converted from) it matches, if
// any: the same type, status, message and time, and the same reason unless in's was empty. So a
// round trip keeps what the v1beta1 form cannot hold (observedGeneration, and a reason a v1beta1
// condition left empty). The control plane's v1alpha2 uses it too.
func RestoreConditions(converted []metav1.Condition, in clusterv1beta1.Conditions, restored []metav1.Condition) {
	for i, c := range in {
		for _, r := range restored {
			if r.Type == converted[i].Type && r.Status == converted[i].Status && r.Message == converted[i].Message &&
				r.LastTransitionTime.Equal(&converted[i].LastTransitionTime) && (r.Reason == c.Reason || c.Reason == "") {
				converted[i] = r
				break
			}
		}
	}
}
