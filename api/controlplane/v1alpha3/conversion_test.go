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

package v1alpha3_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	utilconversion "sigs.k8s.io/cluster-api/util/conversion"

	controlplanev1alpha3 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha3"
	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
)

// TestFuzzyConversion converts random objects v1alpha4 -> v1alpha3 -> v1alpha4 and v1alpha3 ->
// v1alpha4 -> v1alpha3: nothing may be lost either way.
func TestFuzzyConversion(t *testing.T) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{controlplanev1alpha3.AddToScheme, controlplanev1.AddToScheme} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("for OpenshiftAssistedControlPlane", utilconversion.FuzzTestFunc(utilconversion.FuzzTestFuncInput{
		Scheme: s,
		Hub:    &controlplanev1.OpenshiftAssistedControlPlane{},
		Spoke:  &controlplanev1alpha3.OpenshiftAssistedControlPlane{},
	}))
}

// TestConversionMovesTheMachineTemplates: v1alpha3's machineTemplate.infrastructureRef and
// .deletion are v1alpha4's machineTemplate.spec.infrastructureRef and .deletion, the arbiter's too;
// a Kubernetes version paired with a distributionVersion that a v1alpha3 client changed is dropped.
func TestConversionMovesTheMachineTemplates(t *testing.T) {
	ref := clusterv1.ContractVersionedObjectReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "Metal3MachineTemplate", Name: "cp"}
	drain := int32(300)
	spoke := &controlplanev1alpha3.OpenshiftAssistedControlPlane{Spec: controlplanev1alpha3.OpenshiftAssistedControlPlaneSpec{
		DistributionVersion: "4.19.3",
		MachineTemplate: controlplanev1alpha3.OpenshiftAssistedControlPlaneMachineTemplate{
			InfrastructureRef: ref, Deletion: clusterv1.MachineDeletionSpec{NodeDrainTimeoutSeconds: &drain},
		},
		Arbiter: &controlplanev1alpha3.OpenshiftAssistedControlPlaneArbiterSpec{MachineTemplate: controlplanev1alpha3.OpenshiftAssistedControlPlaneMachineTemplate{
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: ref.APIGroup, Kind: ref.Kind, Name: "arbiter"},
		}},
	}}
	hub := &controlplanev1.OpenshiftAssistedControlPlane{}
	if err := spoke.ConvertTo(hub); err != nil {
		t.Fatal(err)
	}
	if got := hub.Spec.MachineTemplate.Spec; got.InfrastructureRef != ref || got.Deletion.NodeDrainTimeoutSeconds == nil || *got.Deletion.NodeDrainTimeoutSeconds != drain {
		t.Errorf("machineTemplate.spec: got %+v", got)
	}
	if got := hub.Spec.Arbiter.MachineTemplate.Spec.InfrastructureRef.Name; got != "arbiter" {
		t.Errorf("arbiter's infrastructureRef: got %q", got)
	}

	hub.Spec.Version = "v1.32.5"
	back := &controlplanev1alpha3.OpenshiftAssistedControlPlane{}
	if err := back.ConvertFrom(hub); err != nil {
		t.Fatal(err)
	}
	if _, ok := back.Annotations[utilconversion.DataAnnotation]; !ok {
		t.Fatalf("a v1alpha4 version is not kept in the %s annotation", utilconversion.DataAnnotation)
	}
	back.Spec.DistributionVersion = "4.20.1"
	again := &controlplanev1.OpenshiftAssistedControlPlane{}
	if err := back.ConvertTo(again); err != nil {
		t.Fatal(err)
	}
	if again.Spec.Version != "" {
		t.Errorf("version %q was kept for distributionVersion 4.20.1, which v1alpha3 changed", again.Spec.Version)
	}
	if _, ok := again.Annotations[utilconversion.DataAnnotation]; ok {
		t.Errorf("the %s annotation was left on the hub", utilconversion.DataAnnotation)
	}
}
