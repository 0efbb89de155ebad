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

package v1alpha3

import (
	"fmt"

	apimachineryconversion "k8s.io/apimachinery/pkg/conversion"
	utilconversion "sigs.k8s.io/cluster-api/util/conversion"
	"sigs.k8s.io/controller-runtime/pkg/conversion"

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
)

// v1alpha3 and v1alpha4 differ in one place: v1alpha4 holds a machine template's
// infrastructureRef and deletion under its spec (spec.machineTemplate.spec, and the arbiter's), as
// Cluster API's v1beta2 control-plane contract does, and adds what v1alpha3 has no place for
// (spec.version, the machine templates' readinessGates and taints). Every other field has the same
// name, type and meaning in both. conversion-gen writes the conversions (zz_generated.conversion.go,
// `make generate`); this file holds the Convert functions it cannot write, each saying why. What
// v1alpha3 cannot hold is kept, as in Cluster API's conversions, in the
// cluster.x-k8s.io/conversion-data annotation, from which converting back restores it; the
// annotation is written only when there is something to keep.
//
// The generated functions convert a copy of the object (src.DeepCopy()): they share slices, maps
// and pointers between their input and output, and neither the request's object nor the
// annotation logic below may see the other's changes.

// ConvertTo converts this OpenshiftAssistedControlPlane to the hub version (v1alpha4).
func (src *OpenshiftAssistedControlPlane) ConvertTo(dstRaw conversion.Hub) error {
	dst, ok := dstRaw.(*controlplanev1.OpenshiftAssistedControlPlane)
	if !ok {
		return fmt.Errorf("cannot convert OpenshiftAssistedControlPlane v1alpha3 to %T", dstRaw)
	}
	if err := Convert_v1alpha3_OpenshiftAssistedControlPlane_To_v1alpha4_OpenshiftAssistedControlPlane(src.DeepCopy(), dst, nil); err != nil {
		return err
	}
	restored := &controlplanev1.OpenshiftAssistedControlPlane{}
	if _, err := utilconversion.UnmarshalData(dst, restored); err != nil {
		return fmt.Errorf("reading the %s annotation of OpenshiftAssistedControlPlane %s/%s: %w", utilconversion.DataAnnotation, src.Namespace, src.Name, err)
	}
	if restored.Spec.DistributionVersion == dst.Spec.DistributionVersion {
		// A distributionVersion changed through v1alpha3 makes the Kubernetes version it was
		// paired with stale: it is dropped rather than left to contradict the new release.
		dst.Spec.Version = restored.Spec.Version
	}
	restoreMachineTemplate(&dst.Spec.MachineTemplate, &restored.Spec.MachineTemplate)
	if dst.Spec.Arbiter != nil {
		restoredArbiter := &controlplanev1.OpenshiftAssistedControlPlaneMachineTemplate{}
		if restored.Spec.Arbiter != nil {
			restoredArbiter = &restored.Spec.Arbiter.MachineTemplate
		}
		restoreMachineTemplate(&dst.Spec.Arbiter.MachineTemplate, restoredArbiter)
	}
	return nil
}

// ConvertFrom converts the hub version (v1alpha4) to this OpenshiftAssistedControlPlane.
func (dst *OpenshiftAssistedControlPlane) ConvertFrom(srcRaw conversion.Hub) error { //nolint:revive // dst and src, as in Cluster API's conversions
	src, ok := srcRaw.(*controlplanev1.OpenshiftAssistedControlPlane)
	if !ok {
		return fmt.Errorf("cannot convert %T to OpenshiftAssistedControlPlane v1alpha3", srcRaw)
	}
	if err := Convert_v1alpha4_OpenshiftAssistedControlPlane_To_v1alpha3_OpenshiftAssistedControlPlane(src.DeepCopy(), dst, nil); err != nil {
		return err
	}
	if !lossy(src) {
		return nil
	}
	return utilconversion.MarshalData(src, dst)
}

// lossy tells whether the v1alpha4 control plane cp holds what v1alpha3 has no place for.
func lossy(cp *controlplanev1.OpenshiftAssistedControlPlane) bool {
	t := &cp.Spec.MachineTemplate.Spec
	if cp.Spec.Version != "" || len(t.ReadinessGates) > 0 || len(t.Taints) > 0 {
		return true
	}
	return cp.Spec.Arbiter != nil && (len(cp.Spec.Arbiter.MachineTemplate.Spec.ReadinessGates) > 0 || len(cp.Spec.Arbiter.MachineTemplate.Spec.Taints) > 0)
}

// restoreMachineTemplate sets in dst, a machine template converted from v1alpha3, what v1alpha3
// has no place for, from restored (the hub's template the spoke was converted from, if any).
func restoreMachineTemplate(dst, restored *controlplanev1.OpenshiftAssistedControlPlaneMachineTemplate) {
	dst.Spec.ReadinessGates = restored.Spec.ReadinessGates
	dst.Spec.Taints = restored.Spec.Taints
}

// Convert_v1alpha3_OpenshiftAssistedControlPlaneMachineTemplate_To_v1alpha4_OpenshiftAssistedControlPlaneMachineTemplate is
// manual because v1alpha4 moved infrastructureRef and deletion under the template's spec.
func Convert_v1alpha3_OpenshiftAssistedControlPlaneMachineTemplate_To_v1alpha4_OpenshiftAssistedControlPlaneMachineTemplate(in *OpenshiftAssistedControlPlaneMachineTemplate, out *controlplanev1.OpenshiftAssistedControlPlaneMachineTemplate, s apimachineryconversion.Scope) error {
	if err := autoConvert_v1alpha3_OpenshiftAssistedControlPlaneMachineTemplate_To_v1alpha4_OpenshiftAssistedControlPlaneMachineTemplate(in, out, s); err != nil {
		return err
	}
	out.Spec.InfrastructureRef = in.InfrastructureRef
	out.Spec.Deletion = in.Deletion
	return nil
}

// Convert_v1alpha4_OpenshiftAssistedControlPlaneMachineTemplate_To_v1alpha3_OpenshiftAssistedControlPlaneMachineTemplate is
// manual because v1alpha4 moved infrastructureRef and deletion under the template's spec, and
// because v1alpha3 has no readinessGates and taints: they are kept in the conversion-data
// annotation and restored by ConvertTo.
func Convert_v1alpha4_OpenshiftAssistedControlPlaneMachineTemplate_To_v1alpha3_OpenshiftAssistedControlPlaneMachineTemplate(in *controlplanev1.OpenshiftAssistedControlPlaneMachineTemplate, out *OpenshiftAssistedControlPlaneMachineTemplate, s apimachineryconversion.Scope) error {
	if err := autoConvert_v1alpha4_OpenshiftAssistedControlPlaneMachineTemplate_To_v1alpha3_OpenshiftAssistedControlPlaneMachineTemplate(in, out, s); err != nil {
		return err
	}
	out.InfrastructureRef = in.Spec.InfrastructureRef
	out.Deletion = in.Spec.Deletion
	return nil
}

// Convert_v1alpha4_OpenshiftAssistedControlPlaneSpec_To_v1alpha3_OpenshiftAssistedControlPlaneSpec is
// manual because v1alpha3 has no spec.version: it is kept in the conversion-data annotation and
// restored by ConvertTo (unless distributionVersion changed).
func Convert_v1alpha4_OpenshiftAssistedControlPlaneSpec_To_v1alpha3_OpenshiftAssistedControlPlaneSpec(in *controlplanev1.OpenshiftAssistedControlPlaneSpec, out *OpenshiftAssistedControlPlaneSpec, s apimachineryconversion.Scope) error {
	return autoConvert_v1alpha4_OpenshiftAssistedControlPlaneSpec_To_v1alpha3_OpenshiftAssistedControlPlaneSpec(in, out, s)
}
