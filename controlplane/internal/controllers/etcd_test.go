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

package controllers

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/controlplane/internal/etcd"
)

// deletingMachine returns a Machine deleted at minute deletedAt, with the etcd hook, a node, and
// Cluster API's Deleting condition at reason.
func deletingMachine(name string, deletedAt int, reason string, annotations ...string) *clusterv1.Machine {
	m := machine(name, 0, true, "", append([]string{controlplanev1.EtcdMemberHookAnnotation}, annotations...)...)
	m.DeletionTimestamp = &metav1.Time{Time: time.Date(2026, 1, 2, 0, deletedAt, 0, 0, time.UTC)}
	m.Status.NodeRef = clusterv1.MachineNodeReference{Name: name + "-node"}
	if reason != "" {
		m.Status.Conditions = append(m.Status.Conditions, metav1.Condition{Type: clusterv1.MachineDeletingCondition, Status: metav1.ConditionTrue, Reason: reason})
	}
	return m
}

func TestHookPending(t *testing.T) {
	const waiting = clusterv1.MachineDeletingWaitingForPreTerminateHookReason
	noHook := deletingMachine("nohook", 0, waiting)
	delete(noHook.Annotations, controlplanev1.EtcdMemberHookAnnotation)
	tests := []struct {
		name     string
		machines []*clusterv1.Machine
		want     string
	}{
		{name: "no Machine being deleted", machines: []*clusterv1.Machine{machine("a", 0, true, "", controlplanev1.EtcdMemberHookAnnotation)}},
		{name: "the Machine controller waits on the hook", machines: []*clusterv1.Machine{deletingMachine("a", 1, waiting)}, want: "a"},
		{name: "still draining", machines: []*clusterv1.Machine{deletingMachine("a", 1, clusterv1.MachineDeletingDrainingNodeReason)}},
		{name: "no Deleting condition yet", machines: []*clusterv1.Machine{deletingMachine("a", 1, "")}},
		{name: "another pre-terminate hook runs first", machines: []*clusterv1.Machine{
			deletingMachine("a", 1, waiting, clusterv1.PreTerminateDeleteHookAnnotationPrefix+"/backup")}},
		{name: "the Machine deleted first goes first", machines: []*clusterv1.Machine{
			deletingMachine("late", 5, waiting), deletingMachine("early", 2, clusterv1.MachineDeletingDrainingNodeReason)}},
		{name: "hook already removed", machines: []*clusterv1.Machine{noHook}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := hookPending(tc.machines)
			switch {
			case tc.want == "" && got != nil:
				t.Errorf("hookPending = %s, want none", got.Name)
			case tc.want != "" && (got == nil || got.Name != tc.want):
				t.Errorf("hookPending = %v, want %s", got, tc.want)
			}
		})
	}
}

func TestLeaderCandidate(t *testing.T) {
	withNode := func(m *clusterv1.Machine) *clusterv1.Machine {
		m.Status.NodeRef = clusterv1.MachineNodeReference{Name: m.Name + "-node"}
		return m
	}
	tests := []struct {
		name     string
		machines []*clusterv1.Machine
		want     string
	}{
		{name: "newest with a node", machines: []*clusterv1.Machine{withNode(machine("old", 0, true, "")), withNode(machine("new", 1, true, ""))}, want: "new-node"},
		{name: "newest has no node yet", machines: []*clusterv1.Machine{withNode(machine("old", 0, true, "")), machine("new", 1, true, "")}, want: "old-node"},
		{name: "newest is being deleted", machines: []*clusterv1.Machine{withNode(machine("old", 0, true, "")), deletingMachine("new", 1, "")}, want: "old-node"},
		{name: "none", machines: []*clusterv1.Machine{deletingMachine("a", 1, "")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := leaderCandidate(tc.machines); got != tc.want {
				t.Errorf("leaderCandidate = %q, want %q", got, tc.want)
			}
		})
	}
}

// onNode is a control-plane Machine whose node is node.
func onNode(name, node string) *clusterv1.Machine {
	m := machine(name, 0, true, "")
	m.Status.NodeRef = clusterv1.MachineNodeReference{Name: node}
	return m
}

func members(ms ...etcd.Member) *etcd.Cluster { return &etcd.Cluster{Members: ms} }

func up(name string) etcd.Member {
	return etcd.Member{Name: name, Healthy: true, ID: uint64(len(name) + int(name[len(name)-1]))}
}

func down(name string) etcd.Member { return etcd.Member{Name: name, Problem: "connection refused"} }

// TestUnsafeScalingApplies: single-node control planes never need the override; two nodes with
// an arbiter (three members) do, like three or more.
func TestUnsafeScalingApplies(t *testing.T) {
	arbiter := &controlplanev1.OpenshiftAssistedControlPlaneArbiterSpec{}
	for _, tc := range []struct {
		replicas int32
		arbiter  *controlplanev1.OpenshiftAssistedControlPlaneArbiterSpec
		want     bool
	}{{1, nil, false}, {2, arbiter, true}, {3, nil, true}, {5, nil, true}} {
		oacp := &controlplanev1.OpenshiftAssistedControlPlane{Spec: controlplanev1.OpenshiftAssistedControlPlaneSpec{Replicas: ptr.To(tc.replicas), Arbiter: tc.arbiter}}
		if got := unsafeScalingApplies(oacp); got != tc.want {
			t.Errorf("replicas %d, arbiter %v: unsafeScalingApplies = %v, want %v", tc.replicas, tc.arbiter != nil, got, tc.want)
		}
	}
}

// TestUnsafeScaling: when the control plane sets cluster-etcd-operator's unsafe scaling override,
// and when it removes it.
func TestUnsafeScaling(t *testing.T) {
	deleting := onNode("m3", "n3")
	now := metav1.Now()
	deleting.DeletionTimestamp = &now
	for name, tc := range map[string]struct {
		etcd       *etcd.Cluster
		machines   []*clusterv1.Machine
		wantNeeded string // substring; "" for not needed
		wantDone   bool
	}{
		"healthy three, nothing joins": {
			etcd: members(up("n1"), up("n2"), up("n3")), machines: []*clusterv1.Machine{onNode("m1", "n1"), onNode("m2", "n2"), onNode("m3", "n3")},
			wantDone: true,
		},
		"a fourth joins three healthy: fault tolerant, no override": {
			etcd: members(up("n1"), up("n2"), up("n3")), machines: []*clusterv1.Machine{onNode("m1", "n1"), onNode("m2", "n2"), onNode("m3", "n3"), onNode("m4", "n4")},
		},
		"the replacement of a removed dead member joins two: override": {
			etcd: members(up("n1"), up("n2")), machines: []*clusterv1.Machine{onNode("m1", "n1"), onNode("m2", "n2"), onNode("m4", "n4")},
			wantNeeded: "Machine m4 (node n4) cannot join without it: 2 members, 2 healthy",
		},
		"two nodes and an arbiter: the replacement of a dead member joins the other and the arbiter: override": {
			etcd:       members(up("n1"), up("a1")),
			machines:   []*clusterv1.Machine{onNode("m1", "n1"), asArbiter(onNode("a1", "a1")), onNode("m4", "n4")},
			wantNeeded: "Machine m4 (node n4) cannot join without it",
		},
		"the dead member is still there: the operator adds nothing anyway, no override": {
			etcd: members(up("n1"), up("n2"), down("n3")), machines: []*clusterv1.Machine{onNode("m1", "n1"), onNode("m2", "n2"), onNode("m4", "n4")},
		},
		"a learner catching up: no override": {
			etcd:     members(up("n1"), up("n2"), etcd.Member{Name: "n4", IsLearner: true, Healthy: true}),
			machines: []*clusterv1.Machine{onNode("m1", "n1"), onNode("m2", "n2"), onNode("m4", "n4")},
		},
		"a Machine without a node yet: nothing joins": {
			etcd: members(up("n1"), up("n2")), machines: []*clusterv1.Machine{onNode("m1", "n1"), onNode("m2", "n2"), machine("m4", 0, true, "")},
		},
		"a Machine being deleted does not join": {
			etcd: members(up("n1"), up("n2")), machines: []*clusterv1.Machine{onNode("m1", "n1"), onNode("m2", "n2"), deleting},
		},
		"five with two dead removed: three healthy are fault tolerant, no override": {
			etcd: members(up("n1"), up("n2"), up("n3")), machines: []*clusterv1.Machine{onNode("m1", "n1"), onNode("m2", "n2"), onNode("m3", "n3"), onNode("m6", "n6"), onNode("m7", "n7")},
		},
		"the replacement joined: override done": {
			etcd: members(up("n1"), up("n2"), up("n4")), machines: []*clusterv1.Machine{onNode("m1", "n1"), onNode("m2", "n2"), onNode("m4", "n4")},
			wantDone: true,
		},
		"two members only: not done": {
			etcd: members(up("n1"), up("n2")), machines: []*clusterv1.Machine{onNode("m1", "n1"), onNode("m2", "n2")},
		},
	} {
		t.Run(name, func(t *testing.T) {
			got := unsafeScalingNeeded(tc.etcd, tc.machines)
			if (got == "") != (tc.wantNeeded == "") || !strings.Contains(got, tc.wantNeeded) {
				t.Errorf("unsafeScalingNeeded = %q, want %q", got, tc.wantNeeded)
			}
			if done := unsafeScalingDone(tc.etcd, tc.machines); done != tc.wantDone {
				t.Errorf("unsafeScalingDone = %v, want %v", done, tc.wantDone)
			}
		})
	}
}

func TestOverrideOn(t *testing.T) {
	for v, want := range map[any]bool{true: true, false: false, "true": true, "1": true, "no": false, "": false, 1: false} {
		if got := overrideOn(v); got != want {
			t.Errorf("overrideOn(%#v) = %v, want %v", v, got, want)
		}
	}
}
