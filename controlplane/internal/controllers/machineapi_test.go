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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
)

func clusterVersionWith(capabilities ...any) *unstructured.Unstructured {
	cv := &unstructured.Unstructured{Object: map[string]any{
		"status": map[string]any{"capabilities": map[string]any{"enabledCapabilities": capabilities}},
	}}
	cv.SetGroupVersionKind(clusterVersionGVK)
	cv.SetName(clusterVersionName)
	return cv
}

func mapiMachine(name, role, phase string) *unstructured.Unstructured {
	m := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"phase": phase}}}
	m.SetGroupVersionKind(schema.GroupVersionKind{Group: "machine.openshift.io", Version: "v1beta1", Kind: "Machine"})
	m.SetNamespace(machineAPINamespace)
	m.SetName(name)
	m.SetLabels(map[string]string{machineAPIRoleLabel: role})
	return m
}

// TestMachineAPIFunctional: cluster-etcd-operator's test of Machine API mode, as the control plane
// reads it from the workload cluster.
func TestMachineAPIFunctional(t *testing.T) {
	for name, tc := range map[string]struct {
		objs []client.Object
		want bool
	}{
		"no ClusterVersion":                            {want: false},
		"capability off":                               {objs: []client.Object{clusterVersionWith("baremetal"), mapiMachine("m0", "master", "Running")}},
		"capability on, no Machines":                   {objs: []client.Object{clusterVersionWith("baremetal", "MachineAPI")}},
		"capability on, master Machine provisioned":    {objs: []client.Object{clusterVersionWith("MachineAPI"), mapiMachine("m0", "master", "Provisioned")}},
		"capability on, only a worker Machine running": {objs: []client.Object{clusterVersionWith("MachineAPI"), mapiMachine("w0", "worker", "Running")}},
		"capability on, master Machine running": {objs: []client.Object{clusterVersionWith("MachineAPI"), mapiMachine("m0", "master", "Running")},
			want: true},
	} {
		t.Run(name, func(t *testing.T) {
			s := runtime.NewScheme()
			s.AddKnownTypeWithName(clusterVersionGVK, &unstructured.Unstructured{})
			c := fake.NewClientBuilder().WithScheme(s).WithObjects(tc.objs...).Build()
			got, err := machineAPIFunctional(context.Background(), c)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("machineAPIFunctional = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestMachineAPIModeIsReported: a Machine whose member does not join in a workload cluster that
// runs Machine API makes EtcdClusterHealthy False, reason MemberNotAdded, with a Warning event.
func TestMachineAPIModeIsReported(t *testing.T) {
	s := runtime.NewScheme()
	s.AddKnownTypeWithName(clusterVersionGVK, &unstructured.Unstructured{})
	workloadClient := fake.NewClientBuilder().WithScheme(s).
		WithObjects(clusterVersionWith("MachineAPI"), mapiMachine("m0", "master", "Running")).Build()
	recorder := events.NewFakeRecorder(10)
	r := &OpenshiftAssistedControlPlaneReconciler{Recorder: recorder, ClusterCache: reachableWorkload{client: workloadClient}}
	sc := &scope{oacp: testOACP(3), cluster: testCluster(nil, nil), kubeconfigWritten: true,
		machines: []*clusterv1.Machine{onNode("m1", "n1"), onNode("m2", "n2"), onNode("m3", "n3"), onNode("m4", "n4")},
		etcd:     etcdState{loaded: true, cluster: members(up("n1"), up("n2"), up("n3"))}}
	if err := r.reconcileMachineAPIMode(context.Background(), sc); err != nil {
		t.Fatal(err)
	}
	setEtcdCondition(sc)
	c := conditions.Get(sc.oacp, controlplanev1.EtcdClusterHealthyCondition)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != controlplanev1.EtcdMemberNotAddedReason || !strings.Contains(c.Message, "Machine m4 (node n4)") {
		t.Fatalf("EtcdClusterHealthy = %+v", c)
	}
	if ev := <-recorder.Events; !strings.HasPrefix(ev, "Warning MemberNotAdded") {
		t.Errorf("event %q, want a MemberNotAdded warning", ev)
	}

	// Without Machine API the member is only late: nothing is reported.
	sc.etcd.machineAPI = ""
	r.ClusterCache = reachableWorkload{client: fake.NewClientBuilder().WithScheme(s).WithObjects(clusterVersionWith("baremetal")).Build()}
	if err := r.reconcileMachineAPIMode(context.Background(), sc); err != nil || sc.etcd.machineAPI != "" {
		t.Errorf("without Machine API: err %v, reported %q", err, sc.etcd.machineAPI)
	}
}
