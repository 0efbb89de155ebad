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
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
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
