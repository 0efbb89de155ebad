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

package simtest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	configv1 "github.com/openshift/api/config/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/cvo"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/machineapi"
)

// TestEtcdMachineAPIKeepsNodesWithoutAMachineOut is the Machine API trap: on a cluster installed
// on platform baremetal with the MachineAPI capability (the ClusterVersion lists it, the
// installer's master Machines are Running), cluster-etcd-operator adds no member for a new
// control-plane Node that no machine.openshift.io Machine references, and says so; a Machine with
// the Node's internal IP lets it join. Without the capability (baseline None with the control
// plane's default list) Machine API is not functional and the Node joins.
func TestEtcdMachineAPIKeepsNodesWithoutAMachineOut(t *testing.T) {
	e := startEtcdSim(t)
	names := e.threeMembers(t, "mapi")
	for i, n := range names {
		setInternalIP(t, n, fmt.Sprintf("192.168.111.%d", 20+i))
	}
	freshClusterVersion(NewWithT(t))
	if err := cvo.EnsureClusterVersion(ctx, workload.Client, cvo.Release("4.17.3", ""), ""); err != nil {
		t.Fatal(err)
	}
	// The installation: vCurrent (no capabilities in the install-config), platform baremetal.
	if err := cvo.EnsureCapabilities(ctx, workload.Client, "4.17.3", nil); err != nil {
		t.Fatal(err)
	}
	if err := machineapi.InstallCRD(ctx, workload.Config); err != nil {
		t.Fatal(err)
	}
	var nodes []corev1.Node
	for _, n := range names {
		node := &corev1.Node{}
		if err := workload.Client.Get(ctx, client.ObjectKey{Name: n}, node); err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, *node)
	}
	if err := machineapi.EnsureInstallerMachines(ctx, workload.Client, "mapi-x1y2z", nodes); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteMachineAPI(t) })
	if ok, err := machineapi.Functional(ctx, workload.Client); err != nil || !ok {
		t.Fatalf("Machine API functional = %v (%v), want true", ok, err)
	}

	// Day 2: a control-plane Node of Cluster API, which no machine.openshift.io Machine references.
	e.addNode(t, "mapi-d")
	setInternalIP(t, "mapi-d", "192.168.111.30")
	eventually(t, "the etcd pod of mapi-d says why it waits", func() (bool, string) {
		_, pod, err := podReady("mapi-d")
		if err != nil || pod == nil {
			return false, fmt.Sprint(err)
		}
		msg := podMessages(pod)
		return strings.Contains(msg, "no Machine found referencing this node's internal IP (192.168.111.30)"), msg
	})
	if ms, _ := e.sim.Members(ctx); len(ms) != 3 {
		t.Fatalf("members %s: a Node no Machine references was added while Machine API is functional", describe(ms))
	}

	// A Machine that lists the Node's internal IP (what assisted-service's day-2 guide makes by
	// hand) lets it join.
	node := &corev1.Node{}
	if err := workload.Client.Get(ctx, client.ObjectKey{Name: "mapi-d"}, node); err != nil {
		t.Fatal(err)
	}
	if err := machineapi.EnsureInstallerMachines(ctx, workload.Client, "mapi-day2", []corev1.Node{*node}); err != nil {
		t.Fatal(err)
	}
	e.waitVoting(t, append(slices.Clone(names), "mapi-d")...)
}

// TestEtcdWithoutMachineAPIAddsEveryControlPlaneNode: installed with the control plane's default
// on platform baremetal (baseline None, MachineAPI left out), no Machine exists and a new
// control-plane Node joins.
func TestEtcdWithoutMachineAPIAddsEveryControlPlaneNode(t *testing.T) {
	e := startEtcdSim(t)
	names := e.threeMembers(t, "nomapi")
	freshClusterVersion(NewWithT(t))
	if err := cvo.EnsureClusterVersion(ctx, workload.Client, cvo.Release("4.17.3", ""), ""); err != nil {
		t.Fatal(err)
	}
	spec := &configv1.ClusterVersionCapabilitiesSpec{BaselineCapabilitySet: configv1.ClusterVersionCapabilitySetNone,
		AdditionalEnabledCapabilities: []configv1.ClusterVersionCapability{"baremetal", "Ingress", "Console"}}
	if err := cvo.EnsureCapabilities(ctx, workload.Client, "4.17.3", spec); err != nil {
		t.Fatal(err)
	}
	if ok, err := machineapi.Functional(ctx, workload.Client); err != nil || ok {
		t.Fatalf("Machine API functional = %v (%v), want false", ok, err)
	}
	e.addNode(t, "nomapi-d")
	e.waitVoting(t, append(slices.Clone(names), "nomapi-d")...)
}

func setInternalIP(t *testing.T, name, ip string) {
	t.Helper()
	node := &corev1.Node{}
	if err := workload.Client.Get(ctx, client.ObjectKey{Name: name}, node); err != nil {
		t.Fatal(err)
	}
	node.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}, {Type: corev1.NodeHostName, Address: name}}
	if err := workload.Client.Status().Update(ctx, node); err != nil {
		t.Fatal(err)
	}
}

func podMessages(p *corev1.Pod) string {
	var parts []string
	for _, c := range p.Status.Conditions {
		parts = append(parts, c.Message)
	}
	for _, s := range p.Status.ContainerStatuses {
		if s.State.Waiting != nil {
			parts = append(parts, s.State.Waiting.Message)
		}
	}
	return strings.Join(parts, "; ")
}

// deleteMachineAPI removes the Machines and the ClusterVersion, which the workload API server of
// the other tests shares.
func deleteMachineAPI(t *testing.T) {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(machineapi.MachineGVK)
	if err := workload.Client.DeleteAllOf(context.Background(), u, client.InNamespace(machineapi.Namespace)); err != nil {
		t.Error(err)
	}
	cv := &configv1.ClusterVersion{ObjectMeta: metav1.ObjectMeta{Name: cvo.ClusterVersionName}}
	if err := client.IgnoreNotFound(workload.Client.Delete(context.Background(), cv)); err != nil {
		t.Error(err)
	}
}
