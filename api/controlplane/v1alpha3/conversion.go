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

	utilconversion "sigs.k8s.io/cluster-api/util/conversion"
	"sigs.k8s.io/controller-runtime/pkg/conversion"

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
)

// v1alpha3 and v1alpha4 differ in one place: v1alpha4 holds a machine template's
// infrastructureRef and deletion under its spec (spec.machineTemplate.spec, and the arbiter's), as
// Cluster API's v1beta2 control-plane contract does, and adds what v1alpha3 has no place for
// (spec.version, the machine templates' readinessGates and taints). Every other field has the same
// name, type and meaning in both. What v1alpha3 cannot hold is kept, as in Cluster API's
// conversions, in the cluster.x-k8s.io/conversion-data annotation, from which converting back
// restores it; the annotation is written only when there is something to keep.

// ConvertTo converts this OpenshiftAssistedControlPlane to the hub version (v1alpha4).
func (src *OpenshiftAssistedControlPlane) ConvertTo(dstRaw conversion.Hub) error {
	dst, ok := dstRaw.(*controlplanev1.OpenshiftAssistedControlPlane)
	if !ok {
		return fmt.Errorf("cannot convert OpenshiftAssistedControlPlane v1alpha3 to %T", dstRaw)
	}
	src.ObjectMeta.DeepCopyInto(&dst.ObjectMeta)
	restored := &controlplanev1.OpenshiftAssistedControlPlane{}
	if _, err := utilconversion.UnmarshalData(dst, restored); err != nil {
		return fmt.Errorf("reading the %s annotation of OpenshiftAssistedControlPlane %s/%s: %w", utilconversion.DataAnnotation, src.Namespace, src.Name, err)
	}
	in := src.Spec.DeepCopy()
	dst.Spec = controlplanev1.OpenshiftAssistedControlPlaneSpec{
		Config:                      configToHub(&in.Config),
		MachineTemplate:             machineTemplateToHub(&in.MachineTemplate, &restored.Spec.MachineTemplate),
		OpenshiftAssistedConfigSpec: in.OpenshiftAssistedConfigSpec,
		Replicas:                    in.Replicas,
		DistributionVersion:         in.DistributionVersion,
		Rollout:                     controlplanev1.OpenshiftAssistedControlPlaneRolloutSpec(in.Rollout),
		Remediation:                 controlplanev1.OpenshiftAssistedControlPlaneRemediationSpec(in.Remediation),
	}
	if restored.Spec.DistributionVersion == in.DistributionVersion {
		// A distributionVersion changed through v1alpha3 makes the Kubernetes version it was
		// paired with stale: it is dropped rather than left to contradict the new release.
		dst.Spec.Version = restored.Spec.Version
	}
	if in.Arbiter != nil {
		restoredArbiter := &controlplanev1.OpenshiftAssistedControlPlaneMachineTemplate{}
		if restored.Spec.Arbiter != nil {
			restoredArbiter = &restored.Spec.Arbiter.MachineTemplate
		}
		dst.Spec.Arbiter = &controlplanev1.OpenshiftAssistedControlPlaneArbiterSpec{MachineTemplate: machineTemplateToHub(&in.Arbiter.MachineTemplate, restoredArbiter)}
	}
	st := src.Status.DeepCopy()
	dst.Status = controlplanev1.OpenshiftAssistedControlPlaneStatus{
		Conditions:          st.Conditions,
		Initialization:      controlplanev1.OpenshiftAssistedControlPlaneInitializationStatus(st.Initialization),
		Selector:            st.Selector,
		Replicas:            st.Replicas,
		ReadyReplicas:       st.ReadyReplicas,
		AvailableReplicas:   st.AvailableReplicas,
		UpToDateReplicas:    st.UpToDateReplicas,
		Version:             st.Version,
		DistributionVersion: st.DistributionVersion,
		ObservedGeneration:  st.ObservedGeneration,
	}
	return nil
}

// ConvertFrom converts the hub version (v1alpha4) to this OpenshiftAssistedControlPlane.
func (dst *OpenshiftAssistedControlPlane) ConvertFrom(srcRaw conversion.Hub) error { //nolint:revive // dst and src, as in Cluster API's conversions
	src, ok := srcRaw.(*controlplanev1.OpenshiftAssistedControlPlane)
	if !ok {
		return fmt.Errorf("cannot convert %T to OpenshiftAssistedControlPlane v1alpha3", srcRaw)
	}
	src.ObjectMeta.DeepCopyInto(&dst.ObjectMeta)
	in := src.Spec.DeepCopy()
	dst.Spec = OpenshiftAssistedControlPlaneSpec{
		Config:                      configFromHub(&in.Config),
		MachineTemplate:             machineTemplateFromHub(&in.MachineTemplate),
		OpenshiftAssistedConfigSpec: in.OpenshiftAssistedConfigSpec,
		Replicas:                    in.Replicas,
		DistributionVersion:         in.DistributionVersion,
		Rollout:                     OpenshiftAssistedControlPlaneRolloutSpec(in.Rollout),
		Remediation:                 OpenshiftAssistedControlPlaneRemediationSpec(in.Remediation),
	}
	if in.Arbiter != nil {
		dst.Spec.Arbiter = &OpenshiftAssistedControlPlaneArbiterSpec{MachineTemplate: machineTemplateFromHub(&in.Arbiter.MachineTemplate)}
	}
	st := src.Status.DeepCopy()
	dst.Status = OpenshiftAssistedControlPlaneStatus{
		Conditions:          st.Conditions,
		Initialization:      OpenshiftAssistedControlPlaneInitializationStatus(st.Initialization),
		Selector:            st.Selector,
		Replicas:            st.Replicas,
		ReadyReplicas:       st.ReadyReplicas,
		AvailableReplicas:   st.AvailableReplicas,
		UpToDateReplicas:    st.UpToDateReplicas,
		Version:             st.Version,
		DistributionVersion: st.DistributionVersion,
		ObservedGeneration:  st.ObservedGeneration,
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

func machineTemplateToHub(in *OpenshiftAssistedControlPlaneMachineTemplate, restored *controlplanev1.OpenshiftAssistedControlPlaneMachineTemplate) controlplanev1.OpenshiftAssistedControlPlaneMachineTemplate {
	return controlplanev1.OpenshiftAssistedControlPlaneMachineTemplate{
		ObjectMeta: in.ObjectMeta,
		Spec: controlplanev1.OpenshiftAssistedControlPlaneMachineTemplateSpec{
			InfrastructureRef: in.InfrastructureRef,
			ReadinessGates:    restored.Spec.ReadinessGates,
			Deletion:          in.Deletion,
			Taints:            restored.Spec.Taints,
		},
	}
}

func machineTemplateFromHub(in *controlplanev1.OpenshiftAssistedControlPlaneMachineTemplate) OpenshiftAssistedControlPlaneMachineTemplate {
	return OpenshiftAssistedControlPlaneMachineTemplate{ObjectMeta: in.ObjectMeta, InfrastructureRef: in.Spec.InfrastructureRef, Deletion: in.Spec.Deletion}
}

func configToHub(in *OpenshiftAssistedControlPlaneConfigSpec) controlplanev1.OpenshiftAssistedControlPlaneConfigSpec {
	return controlplanev1.OpenshiftAssistedControlPlaneConfigSpec{
		APIVIPs:                in.APIVIPs,
		IngressVIPs:            in.IngressVIPs,
		ManifestsConfigMapRefs: in.ManifestsConfigMapRefs,
		DiskEncryption:         (*controlplanev1.DiskEncryption)(in.DiskEncryption),
		Proxy:                  in.Proxy,
		MastersSchedulable:     in.MastersSchedulable,
		NetworkType:            in.NetworkType,
		SSHAuthorizedKey:       in.SSHAuthorizedKey,
		ClusterName:            in.ClusterName,
		BaseDomain:             in.BaseDomain,
		PullSecretRef:          in.PullSecretRef,
		ImageRegistryRef:       in.ImageRegistryRef,
		Capabilities:           controlplanev1.Capabilities(in.Capabilities),
	}
}

func configFromHub(in *controlplanev1.OpenshiftAssistedControlPlaneConfigSpec) OpenshiftAssistedControlPlaneConfigSpec {
	return OpenshiftAssistedControlPlaneConfigSpec{
		APIVIPs:                in.APIVIPs,
		IngressVIPs:            in.IngressVIPs,
		ManifestsConfigMapRefs: in.ManifestsConfigMapRefs,
		DiskEncryption:         (*DiskEncryption)(in.DiskEncryption),
		Proxy:                  in.Proxy,
		MastersSchedulable:     in.MastersSchedulable,
		NetworkType:            in.NetworkType,
		SSHAuthorizedKey:       in.SSHAuthorizedKey,
		ClusterName:            in.ClusterName,
		BaseDomain:             in.BaseDomain,
		PullSecretRef:          in.PullSecretRef,
		ImageRegistryRef:       in.ImageRegistryRef,
		Capabilities:           Capabilities(in.Capabilities),
	}
}
