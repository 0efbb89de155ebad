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

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apimachineryconversion "k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	utilconversion "sigs.k8s.io/cluster-api/util/conversion"
	"sigs.k8s.io/controller-runtime/pkg/conversion"

	bootstrapv1alpha1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha1"
	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
)

// Conversion follows Cluster API's pattern (api/core/v1beta1/conversion.go), as the bootstrap
// provider's v1alpha1 does: v1alpha4 is the hub, conversion-gen writes the field-by-field
// conversions (zz_generated.conversion.go, `make generate`), and this file holds the Convert
// functions it cannot write, each saying why. The hub is kept whole in a v1alpha2 object's
// cluster.x-k8s.io/conversion-data annotation, from which converting back restores what v1alpha2
// cannot hold (rollout, remediation, arbiter, fencing, networkType, version, the machine templates' readinessGates and taints, the bootstrap config's v1alpha2
// fields, the infrastructure reference's exact form, the conditions' observedGeneration).
//
// v1alpha2's infrastructureRef names an apiVersion where v1alpha4 names an apiGroup: converting
// to v1alpha2 asks apiVersionGetter for the version of the template's kind (Cluster API's
// contract: the version its CRD labels for the current contract). The control-plane provider sets
// it when it starts (SetAPIVersionGetter); until then converting to v1alpha2 fails.
//
// The generated functions convert a copy of the object (src.DeepCopy()): they share slices, maps
// and pointers between their input and output, and neither the request's object nor the
// annotation logic below may see the other's changes.

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
	if err := Convert_v1alpha2_OpenshiftAssistedControlPlane_To_v1alpha4_OpenshiftAssistedControlPlane(src.DeepCopy(), dst, nil); err != nil {
		return err
	}

	dst.Spec.Config.NetworkType = restored.Spec.Config.NetworkType
	dst.Spec.Config.MachineNetworks = restored.Spec.Config.MachineNetworks
	dst.Spec.MachineTemplate.Spec.ReadinessGates = restored.Spec.MachineTemplate.Spec.ReadinessGates
	dst.Spec.MachineTemplate.Spec.Taints = restored.Spec.MachineTemplate.Spec.Taints
	bootstrapv1alpha1.RestoreSpec(&dst.Spec.OpenshiftAssistedConfigSpec, &restored.Spec.OpenshiftAssistedConfigSpec)
	dst.Spec.Replicas = replicasToHub(src.Spec.Replicas, restored.Spec.Replicas)
	dst.Spec.Version = versionToHub(src.Spec.DistributionVersion, &restored.Spec)
	dst.Spec.Rollout = restored.Spec.Rollout
	dst.Spec.Remediation = restored.Spec.Remediation
	dst.Spec.Arbiter = restored.Spec.Arbiter
	dst.Spec.Fencing = restored.Spec.Fencing

	restoreStatus(&dst.Status, &src.Status, &restored.Status, hasRestored)
	return nil
}

// ConvertFrom converts the hub version (v1alpha4) to this OpenshiftAssistedControlPlane.
func (dst *OpenshiftAssistedControlPlane) ConvertFrom(srcRaw conversion.Hub) error { //nolint:revive // dst and src, as in Cluster API's conversions
	src, ok := srcRaw.(*controlplanev1.OpenshiftAssistedControlPlane)
	if !ok {
		return fmt.Errorf("cannot convert %T to OpenshiftAssistedControlPlane v1alpha2", srcRaw)
	}
	if err := Convert_v1alpha4_OpenshiftAssistedControlPlane_To_v1alpha2_OpenshiftAssistedControlPlane(src.DeepCopy(), dst, nil); err != nil {
		return fmt.Errorf("converting OpenshiftAssistedControlPlane %s/%s to v1alpha2: %w", src.Namespace, src.Name, err)
	}
	return utilconversion.MarshalData(src, dst)
}

// versionToHub is the restored hub's Kubernetes version, unless distributionVersion was changed
// through v1alpha2: that makes the Kubernetes version it was paired with stale.
func versionToHub(distributionVersion string, restored *controlplanev1.OpenshiftAssistedControlPlaneSpec) string {
	if restored.DistributionVersion != distributionVersion {
		return ""
	}
	return restored.Version
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

// restoreStatus completes dst, a status converted from the v1alpha2 status in, from restored (the
// hub's status the spoke was converted from, if hasRestored). v1alpha2's counters are plain
// numbers where v1alpha4's may be unset, and it holds unavailableReplicas where v1alpha4 holds
// availableReplicas: a field whose v1alpha2 value is what the restored hub converts to is taken
// from the restored hub.
func restoreStatus(dst *controlplanev1.OpenshiftAssistedControlPlaneStatus, in *OpenshiftAssistedControlPlaneStatus, restored *controlplanev1.OpenshiftAssistedControlPlaneStatus, hasRestored bool) {
	bootstrapv1alpha1.RestoreConditions(dst.Conditions, in.Conditions, restored.Conditions)
	dst.ObservedGeneration = restored.ObservedGeneration
	if !hasRestored {
		return
	}
	if !in.Initialized && restored.Initialization.ControlPlaneInitialized != nil {
		dst.Initialization.ControlPlaneInitialized = ptr.To(false)
	}
	back := OpenshiftAssistedControlPlaneStatus{}
	// The conversion of a status cannot fail.
	_ = Convert_v1alpha4_OpenshiftAssistedControlPlaneStatus_To_v1alpha2_OpenshiftAssistedControlPlaneStatus(restored.DeepCopy(), &back, nil)
	if in.Replicas == back.Replicas {
		dst.Replicas = restored.Replicas
	}
	if in.ReadyReplicas == back.ReadyReplicas {
		dst.ReadyReplicas = restored.ReadyReplicas
	}
	if in.UpdatedReplicas == back.UpdatedReplicas {
		dst.UpToDateReplicas = restored.UpToDateReplicas
	}
	if in.Replicas == back.Replicas && in.UnavailableReplicas == back.UnavailableReplicas {
		dst.AvailableReplicas = restored.AvailableReplicas
	}
}

// Convert_v1alpha4_OpenshiftAssistedControlPlaneSpec_To_v1alpha2_OpenshiftAssistedControlPlaneSpec is
// manual because v1alpha2 has no version, rollout, remediation, arbiter and fencing: they are kept in the
// conversion-data annotation and restored by ConvertTo.
func Convert_v1alpha4_OpenshiftAssistedControlPlaneSpec_To_v1alpha2_OpenshiftAssistedControlPlaneSpec(in *controlplanev1.OpenshiftAssistedControlPlaneSpec, out *OpenshiftAssistedControlPlaneSpec, s apimachineryconversion.Scope) error {
	return autoConvert_v1alpha4_OpenshiftAssistedControlPlaneSpec_To_v1alpha2_OpenshiftAssistedControlPlaneSpec(in, out, s)
}

// Convert_v1alpha4_OpenshiftAssistedControlPlaneConfigSpec_To_v1alpha2_OpenshiftAssistedControlPlaneConfigSpec is
// manual because v1alpha2 has no networkType or machineNetworks: they are kept in the
// conversion-data annotation and restored by ConvertTo.
func Convert_v1alpha4_OpenshiftAssistedControlPlaneConfigSpec_To_v1alpha2_OpenshiftAssistedControlPlaneConfigSpec(in *controlplanev1.OpenshiftAssistedControlPlaneConfigSpec, out *OpenshiftAssistedControlPlaneConfigSpec, s apimachineryconversion.Scope) error {
	return autoConvert_v1alpha4_OpenshiftAssistedControlPlaneConfigSpec_To_v1alpha2_OpenshiftAssistedControlPlaneConfigSpec(in, out, s)
}

// Convert_v1alpha2_OpenshiftAssistedControlPlaneMachineTemplate_To_v1alpha4_OpenshiftAssistedControlPlaneMachineTemplate is
// manual because v1alpha4 holds the infrastructure reference and the node timeouts under the
// template's spec, in other forms: the reference names the template's group (from v1alpha2's
// apiVersion), kind and name, and the timeouts are whole seconds under deletion. v1alpha2 has no
// readinessGates and taints: ConvertTo restores them.
func Convert_v1alpha2_OpenshiftAssistedControlPlaneMachineTemplate_To_v1alpha4_OpenshiftAssistedControlPlaneMachineTemplate(in *OpenshiftAssistedControlPlaneMachineTemplate, out *controlplanev1.OpenshiftAssistedControlPlaneMachineTemplate, s apimachineryconversion.Scope) error {
	if err := autoConvert_v1alpha2_OpenshiftAssistedControlPlaneMachineTemplate_To_v1alpha4_OpenshiftAssistedControlPlaneMachineTemplate(in, out, s); err != nil {
		return err
	}
	out.Spec.InfrastructureRef = clusterv1.ContractVersionedObjectReference{
		APIGroup: in.InfrastructureRef.GroupVersionKind().Group,
		Kind:     in.InfrastructureRef.Kind,
		Name:     in.InfrastructureRef.Name,
	}
	out.Spec.Deletion = clusterv1.MachineDeletionSpec{
		NodeDrainTimeoutSeconds:        clusterv1.ConvertToSeconds(in.NodeDrainTimeout),
		NodeVolumeDetachTimeoutSeconds: clusterv1.ConvertToSeconds(in.NodeVolumeDetachTimeout),
		NodeDeletionTimeoutSeconds:     clusterv1.ConvertToSeconds(in.NodeDeletionTimeout),
	}
	return nil
}

// Convert_v1alpha4_OpenshiftAssistedControlPlaneMachineTemplate_To_v1alpha2_OpenshiftAssistedControlPlaneMachineTemplate is
// manual for the same reasons: v1alpha2's infrastructureRef needs the version of the template's
// kind, which apiVersionGetter finds, and its timeouts are durations; readinessGates and taints are
// kept in the conversion-data annotation.
func Convert_v1alpha4_OpenshiftAssistedControlPlaneMachineTemplate_To_v1alpha2_OpenshiftAssistedControlPlaneMachineTemplate(in *controlplanev1.OpenshiftAssistedControlPlaneMachineTemplate, out *OpenshiftAssistedControlPlaneMachineTemplate, s apimachineryconversion.Scope) error {
	if err := autoConvert_v1alpha4_OpenshiftAssistedControlPlaneMachineTemplate_To_v1alpha2_OpenshiftAssistedControlPlaneMachineTemplate(in, out, s); err != nil {
		return err
	}
	out.NodeDrainTimeout = clusterv1.ConvertFromSeconds(in.Spec.Deletion.NodeDrainTimeoutSeconds)
	out.NodeVolumeDetachTimeout = clusterv1.ConvertFromSeconds(in.Spec.Deletion.NodeVolumeDetachTimeoutSeconds)
	out.NodeDeletionTimeout = clusterv1.ConvertFromSeconds(in.Spec.Deletion.NodeDeletionTimeoutSeconds)
	if ref := in.Spec.InfrastructureRef; ref.IsDefined() {
		apiVersion, err := apiVersionGetter(schema.GroupKind{Group: ref.APIGroup, Kind: ref.Kind})
		if err != nil {
			return fmt.Errorf("finding the version of the infrastructure template's kind %s.%s: %w", ref.Kind, ref.APIGroup, err)
		}
		out.InfrastructureRef = corev1.ObjectReference{APIVersion: apiVersion, Kind: ref.Kind, Name: ref.Name}
	}
	return nil
}

// Convert_v1alpha2_OpenshiftAssistedControlPlaneStatus_To_v1alpha4_OpenshiftAssistedControlPlaneStatus is
// manual because v1alpha2 follows the Cluster API v1beta1 contract: updatedReplicas is v1alpha4's
// upToDateReplicas, unavailableReplicas the complement of availableReplicas, initialized is
// initialization.controlPlaneInitialized (true, or unset: ConvertTo restores a false), and v1alpha4
// has no clusterDeploymentRef, failureReason, failureMessage and ready (v1alpha4 reports in
// conditions; ready is its Available condition). ConvertTo restores observedGeneration and the
// counters' exact form.
func Convert_v1alpha2_OpenshiftAssistedControlPlaneStatus_To_v1alpha4_OpenshiftAssistedControlPlaneStatus(in *OpenshiftAssistedControlPlaneStatus, out *controlplanev1.OpenshiftAssistedControlPlaneStatus, s apimachineryconversion.Scope) error {
	if err := autoConvert_v1alpha2_OpenshiftAssistedControlPlaneStatus_To_v1alpha4_OpenshiftAssistedControlPlaneStatus(in, out, s); err != nil {
		return err
	}
	out.UpToDateReplicas = ptr.To(in.UpdatedReplicas)
	if available := in.Replicas - in.UnavailableReplicas; available >= 0 {
		out.AvailableReplicas = ptr.To(available)
	}
	if in.Initialized {
		out.Initialization.ControlPlaneInitialized = ptr.To(true)
	}
	return nil
}

// Convert_v1alpha4_OpenshiftAssistedControlPlaneStatus_To_v1alpha2_OpenshiftAssistedControlPlaneStatus is
// manual for the same reasons: ready is whether the Available condition is True, an empty version
// is an unset one in v1alpha2, and observedGeneration has no place (it is kept in the
// conversion-data annotation).
func Convert_v1alpha4_OpenshiftAssistedControlPlaneStatus_To_v1alpha2_OpenshiftAssistedControlPlaneStatus(in *controlplanev1.OpenshiftAssistedControlPlaneStatus, out *OpenshiftAssistedControlPlaneStatus, s apimachineryconversion.Scope) error {
	if err := autoConvert_v1alpha4_OpenshiftAssistedControlPlaneStatus_To_v1alpha2_OpenshiftAssistedControlPlaneStatus(in, out, s); err != nil {
		return err
	}
	out.UpdatedReplicas = ptr.Deref(in.UpToDateReplicas, 0)
	out.Initialized = ptr.Deref(in.Initialization.ControlPlaneInitialized, false)
	if in.AvailableReplicas != nil {
		out.UnavailableReplicas = max(0, out.Replicas-*in.AvailableReplicas)
	}
	if in.Version == "" {
		out.Version = nil
	}
	for _, c := range in.Conditions {
		if c.Type == controlplanev1.AvailableCondition {
			out.Ready = c.Status == metav1.ConditionTrue
		}
	}
	return nil
}
