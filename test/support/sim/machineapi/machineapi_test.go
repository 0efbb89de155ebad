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

package machineapi

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

var clusterVersionListGVK = schema.GroupVersionKind{Group: "config.openshift.io", Version: "v1", Kind: "ClusterVersionList"}

func newScheme(t *testing.T, withMachines bool) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := corev1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	s.AddKnownTypeWithName(clusterVersion, &unstructured.Unstructured{})
	s.AddKnownTypeWithName(clusterVersionListGVK, &unstructured.UnstructuredList{})
	if withMachines {
		s.AddKnownTypeWithName(MachineGVK, &unstructured.Unstructured{})
		s.AddKnownTypeWithName(machineListGVK, &unstructured.UnstructuredList{})
	}
	return s
}

func machineKind() *unstructured.Unstructured {
	m := &unstructured.Unstructured{}
	m.SetGroupVersionKind(MachineGVK)
	return m
}

func clusterVersionWith(caps ...string) *unstructured.Unstructured {
	cv := &unstructured.Unstructured{}
	cv.SetGroupVersionKind(clusterVersion)
	cv.SetName("version")
	list := make([]any, len(caps))
	for i, c := range caps {
		list[i] = c
	}
	cv.Object["status"] = map[string]any{"capabilities": map[string]any{"enabledCapabilities": list}}
	return cv
}

func node(name, ip string) corev1.Node {
	return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name)},
		Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}}}}
}

func TestFunctionalNeedsTheCapabilityOrTheKindAndARunningMasterMachine(t *testing.T) {
	ctx := context.Background()
	// No Machine kind (the capability is off, as its CRD): not functional.
	c := fake.NewClientBuilder().WithScheme(newScheme(t, false)).WithObjects(clusterVersionWith("baremetal")).Build()
	if ok, err := Functional(ctx, c); err != nil || ok {
		t.Errorf("without Machine API: functional %v (%v)", ok, err)
	}
	// The capability, and the installer's Running master Machines.
	c = fake.NewClientBuilder().WithScheme(newScheme(t, true)).WithStatusSubresource(machineKind()).WithObjects(clusterVersionWith("baremetal", Capability)).Build()
	if ok, err := Functional(ctx, c); err != nil || ok {
		t.Errorf("no master Machine yet: functional %v (%v)", ok, err)
	}
	if err := EnsureInstallerMachines(ctx, c, "infra", []corev1.Node{node("m1", "10.0.0.2"), node("m0", "10.0.0.1")}); err != nil {
		t.Fatal(err)
	}
	if ok, err := Functional(ctx, c); err != nil || !ok {
		t.Errorf("Running master Machines: functional %v (%v)", ok, err)
	}
	m := &unstructured.Unstructured{}
	m.SetGroupVersionKind(MachineGVK)
	if err := c.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: "infra-master-0"}, m); err != nil {
		t.Fatal(err)
	}
	if ref, _, _ := unstructured.NestedString(m.Object, "status", "nodeRef", "name"); ref != "m0" || m.GetLabels()[RoleLabel] != "master" {
		t.Errorf("Machine infra-master-0: node %q labels %v, want m0 and the master role", ref, m.GetLabels())
	}
	// The kind served without the capability listed (CEO's IsAvailable) is enough too.
	c = fake.NewClientBuilder().WithScheme(newScheme(t, true)).WithStatusSubresource(machineKind()).WithObjects(clusterVersionWith()).Build()
	if err := EnsureInstallerMachines(ctx, c, "infra", []corev1.Node{node("m0", "10.0.0.1")}); err != nil {
		t.Fatal(err)
	}
	if ok, err := Functional(ctx, c); err != nil || !ok {
		t.Errorf("Machine kind served, a Running master Machine: functional %v (%v)", ok, err)
	}
}

func TestMachineForNodeMatchesTheInternalIP(t *testing.T) {
	ctx := context.Background()
	c := fake.NewClientBuilder().WithScheme(newScheme(t, true)).WithStatusSubresource(machineKind()).Build()
	if err := EnsureInstallerMachines(ctx, c, "infra", []corev1.Node{node("m0", "10.0.0.1")}); err != nil {
		t.Fatal(err)
	}
	old, day2 := node("m0", "10.0.0.1"), node("cp-day2", "10.0.0.9")
	if got, err := MachineForNode(ctx, c, &old); err != nil || got != "infra-master-0" {
		t.Errorf("installed node: %q (%v)", got, err)
	}
	if got, err := MachineForNode(ctx, c, &day2); err != nil || got != "" {
		t.Errorf("a node no Machine lists: %q (%v), want none", got, err)
	}
}
