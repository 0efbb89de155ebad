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

package v1alpha2

import (
	"errors"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	utilconversion "sigs.k8s.io/cluster-api/util/conversion"
	"sigs.k8s.io/controller-runtime/pkg/conversion"

	bootstrapv1alpha1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha1"
	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
)

// Conversion follows Cluster API's pattern (api/core/v1beta1/conversion.go), as the bootstrap
// provider's v1alpha1 does: v1alpha4 is the hub, kept whole in a v1alpha2 object's
// cluster.x-k8s.io/conversion-data annotation, from which converting back restores what v1alpha2
// cannot hold (rollout, remediation, arbiter, networkType, version, the machine templates' readinessGates and taints, the bootstrap config's v1alpha2
// fields, the infrastructure reference's exact form, the conditions' observedGeneration).
//
// v1alpha2's infrastructureRef names an apiVersion where v1alpha4 names an apiGroup: converting
// to v1alpha2 asks apiVersionGetter for the version of the template's kind (Cluster API's
// contract: the version its CRD labels for the current contract). The control-plane provider sets
// it when it starts (SetAPIVersionGetter); until then converting to v1alpha2 fails.

var apiVersionGetter = func(_ schema.GroupKind) (string, error) {
	return "", errors.New("the control-plane provider has not set the API version lookup for v1alpha2 conversions")
}

// SetAPIVersionGetter sets the function that returns the apiVersion (group/version) of a kind,
// with which a v1alpha4 infrastructure reference is turned into a v1alpha2 one.
func SetAPIVersionGetter(f func(gk schema.GroupKind) (string, error)) {
	apiVersionGetter = f
}

// ConvertTo converts this OpenshiftAssistedControlPlane to the hub version (v1alpha4).
func (src *OpenshiftAssistedControlPlane) ConvertTo(dstRaw conversion.Hub) error {
	dst, ok := dstRaw.(*controlplanev1.OpenshiftAssistedControlPlane)
	if !ok {
		return fmt.Errorf("cannot convert OpenshiftAssistedControlPlane v1alpha2 to %T", dstRaw)
	}
	restored := &controlplanev1.OpenshiftAssistedControlPlane{}
	hasRestored, err := utilconversion.UnmarshalData(src, restored)
	if err != nil {
		return fmt.Errorf("reading the %s annotation of OpenshiftAssistedControlPlane %s/%s: %w", utilconversion.DataAnnotation, src.Namespace, src.Name, err)
	}
	src.ObjectMeta.DeepCopyInto(&dst.ObjectMeta)
	in := src.Spec.DeepCopy()
	dst.Spec = controlplanev1.OpenshiftAssistedControlPlaneSpec{
		Config:                      configToHub(&in.Config, &restored.Spec.Config),
		MachineTemplate:             machineTemplateToHub(&in.MachineTemplate, &restored.Spec.MachineTemplate),
		OpenshiftAssistedConfigSpec: bootstrapv1alpha1.SpecToHub(&in.OpenshiftAssistedConfigSpec, &restored.Spec.OpenshiftAssistedConfigSpec),
		Replicas:                    replicasToHub(in.Replicas, restored.Spec.Replicas),
		DistributionVersion:         in.DistributionVersion,
		Version:                     versionToHub(in.DistributionVersion, &restored.Spec),
		Rollout:                     restored.Spec.Rollout,
		Remediation:                 restored.Spec.Remediation,
		Arbiter:                     restored.Spec.Arbiter,
	}
	dst.Status = statusToHub(&src.Status, &restored.Status, hasRestored)
	return nil
}

// ConvertFrom converts the hub version (v1alpha4) to this OpenshiftAssistedControlPlane.
func (dst *OpenshiftAssistedControlPlane) ConvertFrom(srcRaw conversion.Hub) error { //nolint:revive // dst and src, as in Cluster API's conversions
	src, ok := srcRaw.(*controlplanev1.OpenshiftAssistedControlPlane)
	if !ok {
		return fmt.Errorf("cannot convert %T to OpenshiftAssistedControlPlane v1alpha2", srcRaw)
	}
	src.ObjectMeta.DeepCopyInto(&dst.ObjectMeta)
	in := src.Spec.DeepCopy()
	template, err := machineTemplateFromHub(&in.MachineTemplate)
	if err != nil {
		return fmt.Errorf("converting OpenshiftAssistedControlPlane %s/%s to v1alpha2: %w", src.Namespace, src.Name, err)
	}
	dst.Spec = OpenshiftAssistedControlPlaneSpec{
		Config:                      configFromHub(&in.Config),
		MachineTemplate:             template,
		OpenshiftAssistedConfigSpec: bootstrapv1alpha1.SpecFromHub(&in.OpenshiftAssistedConfigSpec),
		Replicas:                    ptr.Deref(in.Replicas, 0),
		DistributionVersion:         in.DistributionVersion,
	}
	dst.Status = statusFromHub(&src.Status)
	return utilconversion.MarshalData(src, dst)
}

func configToHub(in *OpenshiftAssistedControlPlaneConfigSpec, restored *controlplanev1.OpenshiftAssistedControlPlaneConfigSpec) controlplanev1.OpenshiftAssistedControlPlaneConfigSpec {
	return controlplanev1.OpenshiftAssistedControlPlaneConfigSpec{
		APIVIPs:                in.APIVIPs,
		IngressVIPs:            in.IngressVIPs,
		ManifestsConfigMapRefs: in.ManifestsConfigMapRefs,
		DiskEncryption:         in.DiskEncryption,
		Proxy:                  in.Proxy,
		MastersSchedulable:     in.MastersSchedulable,
		NetworkType:            restored.NetworkType,
		SSHAuthorizedKey:       in.SSHAuthorizedKey,
		ClusterName:            in.ClusterName,
		BaseDomain:             in.BaseDomain,
		PullSecretRef:          in.PullSecretRef,
		ImageRegistryRef:       in.ImageRegistryRef,
		Capabilities:           in.Capabilities,
	}
}

func configFromHub(in *controlplanev1.OpenshiftAssistedControlPlaneConfigSpec) OpenshiftAssistedControlPlaneConfigSpec {
	return OpenshiftAssistedControlPlaneConfigSpec{
		APIVIPs:                in.APIVIPs,
		IngressVIPs:            in.IngressVIPs,
		ManifestsConfigMapRefs: in.ManifestsConfigMapRefs,
		DiskEncryption:         in.DiskEncryption,
		Proxy:                  in.Proxy,
		MastersSchedulable:     in.MastersSchedulable,
		SSHAuthorizedKey:       in.SSHAuthorizedKey,
		ClusterName:            in.ClusterName,
		BaseDomain:             in.BaseDomain,
		PullSecretRef:          in.PullSecretRef,
		ImageRegistryRef:       in.ImageRegistryRef,
		Capabilities:           in.Capabilities,
	}
}

func machineTemplateToHub(in *OpenshiftAssistedControlPlaneMachineTemplate, restored *controlplanev1.OpenshiftAssistedControlPlaneMachineTemplate) controlplanev1.OpenshiftAssistedControlPlaneMachineTemplate {
	ref := clusterv1.ContractVersionedObjectReference{
		APIGroup: in.InfrastructureRef.GroupVersionKind().Group,
		Kind:     in.InfrastructureRef.Kind,
		Name:     in.InfrastructureRef.Name,
	}
	return controlplanev1.OpenshiftAssistedControlPlaneMachineTemplate{
		ObjectMeta: clusterv1.ObjectMeta{
			Labels:      maps.Clone(in.ObjectMeta.Labels),
			Annotations: maps.Clone(in.ObjectMeta.Annotations),
		},
		Spec: controlplanev1.OpenshiftAssistedControlPlaneMachineTemplateSpec{
			InfrastructureRef: ref,
			ReadinessGates:    restored.Spec.ReadinessGates,
			Deletion: clusterv1.MachineDeletionSpec{
				NodeDrainTimeoutSeconds:        secondsToHub(in.NodeDrainTimeout, restored.Spec.Deletion.NodeDrainTimeoutSeconds),
				NodeVolumeDetachTimeoutSeconds: secondsToHub(in.NodeVolumeDetachTimeout, restored.Spec.Deletion.NodeVolumeDetachTimeoutSeconds),
				NodeDeletionTimeoutSeconds:     secondsToHub(in.NodeDeletionTimeout, restored.Spec.Deletion.NodeDeletionTimeoutSeconds),
			},
			Taints: restored.Spec.Taints,
		},
	}
}

func machineTemplateFromHub(in *controlplanev1.OpenshiftAssistedControlPlaneMachineTemplate) (OpenshiftAssistedControlPlaneMachineTemplate, error) {
	out := OpenshiftAssistedControlPlaneMachineTemplate{
		NodeDrainTimeout:        clusterv1.ConvertFromSeconds(in.Spec.Deletion.NodeDrainTimeoutSeconds),
		NodeVolumeDetachTimeout: clusterv1.ConvertFromSeconds(in.Spec.Deletion.NodeVolumeDetachTimeoutSeconds),
		NodeDeletionTimeout:     clusterv1.ConvertFromSeconds(in.Spec.Deletion.NodeDeletionTimeoutSeconds),
	}
	out.ObjectMeta.Labels = maps.Clone(in.ObjectMeta.Labels)
	out.ObjectMeta.Annotations = maps.Clone(in.ObjectMeta.Annotations)
	if ref := in.Spec.InfrastructureRef; ref.IsDefined() {
		apiVersion, err := apiVersionGetter(schema.GroupKind{Group: ref.APIGroup, Kind: ref.Kind})
		if err != nil {
			return out, fmt.Errorf("finding the version of the infrastructure template's kind %s.%s: %w", ref.Kind, ref.APIGroup, err)
		}
		out.InfrastructureRef = corev1.ObjectReference{APIVersion: apiVersion, Kind: ref.Kind, Name: ref.Name}
	}
	return out, nil
}

// versionToHub is the restored hub's Kubernetes version, unless distributionVersion was changed
// through v1alpha2: that makes the Kubernetes version it was paired with stale.
func versionToHub(distributionVersion string, restored *controlplanev1.OpenshiftAssistedControlPlaneSpec) string {
	if restored.DistributionVersion != distributionVersion {
		return ""
	}
	return restored.Version
}

// secondsToHub converts a duration to whole seconds; restored, the hub's value this spoke was
// converted from, is kept when it is the same number of seconds (nil and 0 differ in v1alpha4).
func secondsToHub(in *metav1.Duration, restored *int32) *int32 {
	out := clusterv1.ConvertToSeconds(in)
	if out != nil && restored != nil && *out == *restored {
		return restored
	}
	return out
}

// replicasToHub: v1alpha2 cannot tell an unset replicas (v1alpha4 defaults it to 1) from 0.
func replicasToHub(in int32, restored *int32) *int32 {
	if restored != nil && *restored == in {
		return ptr.To(in)
	}
	if in == 0 {
		return nil
	}
	return ptr.To(in)
}

// statusToHub converts a v1alpha2 status. v1alpha2's counters are plain numbers where v1alpha4's
// may be unset, and it holds unavailableReplicas where v1alpha4 holds availableReplicas: a field
// whose v1alpha2 value is what the restored hub converts to is taken from the restored hub.
func statusToHub(in *OpenshiftAssistedControlPlaneStatus, restored *controlplanev1.OpenshiftAssistedControlPlaneStatus, hasRestored bool) controlplanev1.OpenshiftAssistedControlPlaneStatus {
	in = in.DeepCopy()
	out := controlplanev1.OpenshiftAssistedControlPlaneStatus{
		Conditions:          bootstrapv1alpha1.ConditionsToHub(in.Conditions, restored.Conditions),
		Selector:            in.Selector,
		Replicas:            ptr.To(in.Replicas),
		ReadyReplicas:       ptr.To(in.ReadyReplicas),
		UpToDateReplicas:    ptr.To(in.UpdatedReplicas),
		Version:             ptr.Deref(in.Version, ""),
		DistributionVersion: in.DistributionVersion,
		ObservedGeneration:  restored.ObservedGeneration,
	}
	if available := in.Replicas - in.UnavailableReplicas; available >= 0 {
		out.AvailableReplicas = ptr.To(available)
	}
	if in.Initialized {
		out.Initialization.ControlPlaneInitialized = ptr.To(true)
	} else if hasRestored && restored.Initialization.ControlPlaneInitialized != nil {
		out.Initialization.ControlPlaneInitialized = ptr.To(false)
	}
	if !hasRestored {
		return out
	}
	back := statusFromHub(restored)
	if in.Replicas == back.Replicas {
		out.Replicas = restored.Replicas
	}
	if in.ReadyReplicas == back.ReadyReplicas {
		out.ReadyReplicas = restored.ReadyReplicas
	}
	if in.UpdatedReplicas == back.UpdatedReplicas {
		out.UpToDateReplicas = restored.UpToDateReplicas
	}
	if in.Replicas == back.Replicas && in.UnavailableReplicas == back.UnavailableReplicas {
		out.AvailableReplicas = restored.AvailableReplicas
	}
	return out
}

func statusFromHub(in *controlplanev1.OpenshiftAssistedControlPlaneStatus) OpenshiftAssistedControlPlaneStatus {
	in = in.DeepCopy()
	out := OpenshiftAssistedControlPlaneStatus{
		Selector:            in.Selector,
		Replicas:            ptr.Deref(in.Replicas, 0),
		DistributionVersion: in.DistributionVersion,
		UpdatedReplicas:     ptr.Deref(in.UpToDateReplicas, 0),
		ReadyReplicas:       ptr.Deref(in.ReadyReplicas, 0),
		Initialized:         ptr.Deref(in.Initialization.ControlPlaneInitialized, false),
		Conditions:          bootstrapv1alpha1.ConditionsFromHub(in.Conditions),
	}
	if in.AvailableReplicas != nil {
		out.UnavailableReplicas = max(0, out.Replicas-*in.AvailableReplicas)
	}
	if in.Version != "" {
		out.Version = ptr.To(in.Version)
	}
	for _, c := range in.Conditions {
		if c.Type == controlplanev1.AvailableCondition {
			out.Ready = c.Status == metav1.ConditionTrue
		}
	}
	return out
}
