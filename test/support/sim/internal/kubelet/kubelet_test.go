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

package kubelet

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/inventory"
)

// TestRegister: the Node is created once with its labels, taints and providerID, and reports
// Ready with the host's identity; registering again keeps what the cluster changed since.
func TestRegister(t *testing.T) {
	ctx := context.Background()
	c := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).WithStatusSubresource(&corev1.Node{}).Build()
	h := inventory.Generate("k", 1, inventory.GenerateOptions{})[0]
	n := Node{Host: h, Name: "k-0", Labels: RoleLabels("master"), ProviderID: "metal3://ns/k-0", KubeletVersion: "v1.30.4",
		MachineNetworks: []string{"192.168.111.0/24"}, BootID: "b1"}
	if err := Register(ctx, c, n, time.Now()); err != nil {
		t.Fatal(err)
	}
	node := &corev1.Node{}
	if err := c.Get(ctx, client.ObjectKey{Name: "k-0"}, node); err != nil {
		t.Fatal(err)
	}
	if _, ok := node.Labels["node-role.kubernetes.io/control-plane"]; !ok || node.Spec.ProviderID != "metal3://ns/k-0" {
		t.Fatalf("node %v, providerID %q: want a control-plane node with its providerID", node.Labels, node.Spec.ProviderID)
	}
	if node.Status.NodeInfo.SystemUUID != h.SystemUUID || node.Status.NodeInfo.ContainerRuntimeVersion != "cri-o://1.30.4" ||
		node.Status.Addresses[0].Address != h.IPv4() {
		t.Fatalf("status %+v", node.Status.NodeInfo)
	}
	ready := false
	for _, cond := range node.Status.Conditions {
		ready = ready || cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue
	}
	if !ready {
		t.Fatal("the Node is not Ready")
	}
	node.Labels["added"] = "by-the-cluster"
	if err := c.Update(ctx, node); err != nil {
		t.Fatal(err)
	}
	n.BootID, n.ProviderID = "b2", "other"
	if err := Register(ctx, c, n, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKey{Name: "k-0"}, node); err != nil {
		t.Fatal(err)
	}
	if node.Labels["added"] != "by-the-cluster" || node.Spec.ProviderID != "metal3://ns/k-0" || node.Status.NodeInfo.BootID != "b2" {
		t.Fatalf("after a second registration: labels %v, providerID %q, boot %q", node.Labels, node.Spec.ProviderID, node.Status.NodeInfo.BootID)
	}
}

// TestRoleLabels: each role's labels.
func TestRoleLabels(t *testing.T) {
	for role, want := range map[string]string{"master": "node-role.kubernetes.io/control-plane", "bootstrap": "node-role.kubernetes.io/master",
		"worker": "node-role.kubernetes.io/worker", "": "node-role.kubernetes.io/worker", "arbiter": "node-role.kubernetes.io/arbiter"} {
		if _, ok := RoleLabels(role)[want]; !ok {
			t.Errorf("RoleLabels(%q) = %v, want %s", role, RoleLabels(role), want)
		}
	}
}
