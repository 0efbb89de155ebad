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

package etcd

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/machineapi"
)

func TestMachineAPIIgnoresANodeNoMachineReferences(t *testing.T) {
	ctx := context.Background()
	s := runtime.NewScheme()
	if err := corev1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	cvGVK := schema.GroupVersionKind{Group: "config.openshift.io", Version: "v1", Kind: "ClusterVersion"}
	s.AddKnownTypeWithName(cvGVK, &unstructured.Unstructured{})
	s.AddKnownTypeWithName(machineapi.MachineGVK, &unstructured.Unstructured{})
	s.AddKnownTypeWithName(machineapi.MachineGVK.GroupVersion().WithKind("MachineList"), &unstructured.UnstructuredList{})
	cv := &unstructured.Unstructured{}
	cv.SetGroupVersionKind(cvGVK)
	cv.SetName("version")
	cv.Object["status"] = map[string]any{"capabilities": map[string]any{"enabledCapabilities": []any{"MachineAPI"}}}
	machine := &unstructured.Unstructured{}
	machine.SetGroupVersionKind(machineapi.MachineGVK)
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(cv).WithStatusSubresource(machine).Build()
	sim := &Simulator{client: c}
	node := func(name, ip string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name},
			Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}}}}
	}
	installed, day2 := node("master-0", "10.0.0.1"), node("cp-day2", "10.0.0.9")

	// No Running master Machine yet (during the installation): every node joins.
	if why, err := sim.machineAPIIgnores(ctx, day2); err != nil || why != "" {
		t.Errorf("before the installer's Machines run: %q (%v), want none", why, err)
	}
	if err := machineapi.EnsureInstallerMachines(ctx, c, "infra", []corev1.Node{*installed}); err != nil {
		t.Fatal(err)
	}
	if why, err := sim.machineAPIIgnores(ctx, installed); err != nil || why != "" {
		t.Errorf("a node of the installation: %q (%v), want none", why, err)
	}
	why, err := sim.machineAPIIgnores(ctx, day2)
	if err != nil || !strings.Contains(why, "Ignoring node (cp-day2) for scale-up: no Machine found referencing this node's internal IP (10.0.0.9)") {
		t.Errorf("a day-2 node: %q (%v), want cluster-etcd-operator's message", why, err)
	}
}
