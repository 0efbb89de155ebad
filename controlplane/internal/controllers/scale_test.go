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
	"context"
	"strings"
	"testing"

	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	capoascheme "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/scheme"
)

func TestSelectMachineForScaleDown(t *testing.T) {
	for name, tc := range map[string]struct {
		machines  []*clusterv1.Machine
		outdated  map[string]string
		arbiter   bool // the arbiter goes (there is one too many)
		installed bool
		want      string
		wantWhy   string
	}{
		"two-node: a surplus control-plane Machine goes, never the older arbiter": {
			machines:  []*clusterv1.Machine{asArbiter(machine("a1", 1, true, "")), machine("m2", 2, true, ""), machine("m3", 3, true, ""), machine("m4", 4, true, "")},
			outdated:  map[string]string{"a1": "x", "m2": "x"},
			installed: true, want: "m2",
		},
		"two-node: the outdated arbiter goes once its replacement surged in": {
			machines: []*clusterv1.Machine{asArbiter(machine("a1", 1, true, "")), machine("m2", 2, true, ""), machine("m3", 3, true, ""), asArbiter(machine("a4", 4, true, ""))},
			outdated: map[string]string{"a1": "x"},
			arbiter:  true, installed: true, want: "a1",
		},
		"two-node: the arbiter's member counts towards quorum": {
			machines: []*clusterv1.Machine{machine("m1", 1, true, "", clusterv1.DeleteMachineAnnotation), machine("m2", 2, false, ""),
				asArbiter(machine("a3", 3, true, "")), machine("m4", 4, true, "")},
			installed: true, want: "m1",
		},
		"two-node: no arbiter to remove": {
			machines: []*clusterv1.Machine{machine("m1", 1, true, ""), machine("m2", 2, true, "")},
			arbiter:  true, installed: true, wantWhy: "no Machine of that kind",
		},
		"oldest healthy when all are healthy": {
			machines:  []*clusterv1.Machine{machine("m1", 1, true, ""), machine("m2", 2, true, ""), machine("m3", 3, true, ""), machine("m4", 4, true, "")},
			installed: true, want: "m1",
		},
		"delete annotation first": {
			machines: []*clusterv1.Machine{machine("m1", 1, true, ""), machine("m2", 2, false, ""), machine("m3", 3, true, "", clusterv1.DeleteMachineAnnotation),
				machine("m4", 4, true, "")},
			installed: true, want: "m3",
		},
		"unhealthy before healthy": {
			machines:  []*clusterv1.Machine{machine("m1", 1, true, ""), machine("m2", 2, true, ""), machine("m3", 3, false, ""), machine("m4", 4, true, "")},
			installed: true, want: "m3",
		},
		"most crowded failure domain": {
			machines: []*clusterv1.Machine{machine("m1", 1, true, "a"), machine("m2", 2, true, "b"), machine("m3", 3, true, "b"),
				machine("m4", 4, true, "c")},
			installed: true, want: "m2",
		},
		"quorum would be lost": {
			machines:  []*clusterv1.Machine{machine("m1", 1, true, ""), machine("m2", 2, true, ""), machine("m3", 3, false, "", clusterv1.DeleteMachineAnnotation), machine("m4", 4, false, "")},
			installed: true, want: "m3",
		},
		"healthy removal below quorum is refused": {
			machines:  []*clusterv1.Machine{machine("m1", 1, true, "", clusterv1.DeleteMachineAnnotation), machine("m2", 2, true, ""), machine("m3", 3, false, ""), machine("m4", 4, false, "")},
			installed: true, wantWhy: "below etcd quorum",
		},
		"last healthy member is never removed": {
			machines:  []*clusterv1.Machine{machine("m1", 1, true, "", clusterv1.DeleteMachineAnnotation), machine("m2", 2, false, "")},
			installed: true, wantWhy: "below etcd quorum",
		},
		"before the installation quorum does not apply": {
			machines:  []*clusterv1.Machine{machine("m1", 1, false, ""), machine("m2", 2, false, "")},
			installed: false, want: "m1",
		},
	} {
		t.Run(name, func(t *testing.T) {
			got, why := selectMachineForScaleDown(tc.machines, tc.outdated, tc.installed, tc.arbiter)
			if tc.wantWhy != "" {
				if got != nil || !strings.Contains(why, tc.wantWhy) {
					t.Fatalf("got %v %q, want nil and a reason containing %q", got, why, tc.wantWhy)
				}
				return
			}
			if got == nil || got.Name != tc.want {
				t.Fatalf("got %v (%s), want %s", got, why, tc.want)
			}
		})
	}
}

func TestFailureDomainForNewMachine(t *testing.T) {
	cluster := &clusterv1.Cluster{}
	if got := failureDomainForNewMachine(cluster, nil); got != "" {
		t.Errorf("no failure domains: got %q", got)
	}
	cluster.Status.FailureDomains = []clusterv1.FailureDomain{
		{Name: "c", ControlPlane: ptr.To(true)}, {Name: "a", ControlPlane: ptr.To(true)},
		{Name: "b", ControlPlane: ptr.To(true)}, {Name: "workers", ControlPlane: ptr.To(false)},
	}
	var machines []*clusterv1.Machine
	var got []string
	for i := range 5 {
		fd := failureDomainForNewMachine(cluster, machines)
		got = append(got, fd)
		machines = append(machines, machine("m", i, true, fd))
	}
	if strings.Join(got, ",") != "a,b,c,a,b" {
		t.Errorf("spread = %v, want a,b,c,a,b", got)
	}
}

// TestScaleDownRemovesOneMachineAtATime reconciles a 5-Machine control plane scaled to 3: the
// first pass deletes one Machine, and nothing more is deleted while it is still going away.
func TestScaleDownRemovesOneMachineAtATime(t *testing.T) {
	s, err := capoascheme.New(controlplanev1.AddToScheme)
	if err != nil {
		t.Fatal(err)
	}
	oacp := testOACP(3)
	var objs []client.Object
	for i, name := range []string{"m1", "m2", "m3", "m4", "m5"} {
		m := machine(name, i, true, "")
		m.Namespace = "ns"
		// A finalizer keeps a deleted Machine around, as Cluster API's Machine controller does.
		m.Finalizers = []string{clusterv1.MachineFinalizer}
		objs = append(objs, m)
	}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).WithStatusSubresource(&clusterv1.Machine{}).Build()
	r := &OpenshiftAssistedControlPlaneReconciler{Client: c, APIReader: c, Recorder: events.NewFakeRecorder(10)}
	installed := &hiveextv1beta1.AgentClusterInstall{}
	installed.Status.DebugInfo.State = "installed"

	deleting := func() []string {
		list := &clusterv1.MachineList{}
		if err := c.List(context.Background(), list); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, m := range list.Items {
			if !m.DeletionTimestamp.IsZero() {
				names = append(names, m.Name)
			}
		}
		return names
	}
	for pass := range 2 {
		list := &clusterv1.MachineList{}
		if err := c.List(context.Background(), list); err != nil {
			t.Fatal(err)
		}
		sc := &scope{oacp: oacp, cluster: testCluster(nil, nil), aci: installed}
		for i := range list.Items {
			sc.machines = append(sc.machines, &list.Items[i])
		}
		if _, err := r.reconcileMachines(context.Background(), sc); err != nil {
			t.Fatal(err)
		}
		if got := deleting(); len(got) != 1 || got[0] != "m1" {
			t.Fatalf("pass %d: Machines being deleted = %v, want only the oldest, m1", pass, got)
		}
	}
}
