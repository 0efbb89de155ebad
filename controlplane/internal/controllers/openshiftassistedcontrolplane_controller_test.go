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
	"errors"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	"github.com/openshift/assisted-service/models"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	capoascheme "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/scheme"
)

// TestClusterToControlPlane: a Cluster wakes its control plane only when that is an
// OpenshiftAssistedControlPlane (kind and group), in the Cluster's namespace.
func TestClusterToControlPlane(t *testing.T) {
	ref := func(group, kind string) clusterv1.ContractVersionedObjectReference {
		return clusterv1.ContractVersionedObjectReference{APIGroup: group, Kind: kind, Name: "cp"}
	}
	for name, tc := range map[string]struct {
		obj  client.Object
		want []reconcile.Request
	}{
		"ours": {
			obj:  &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c1"}, Spec: clusterv1.ClusterSpec{ControlPlaneRef: ref(controlplanev1.GroupVersion.Group, controlplanev1.ControlPlaneKind)}},
			want: []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: "ns", Name: "cp"}}},
		},
		"KubeadmControlPlane": {
			obj: &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c1"}, Spec: clusterv1.ClusterSpec{ControlPlaneRef: ref(controlplanev1.GroupVersion.Group, "KubeadmControlPlane")}},
		},
		"our kind name in another group": {
			obj: &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c1"}, Spec: clusterv1.ClusterSpec{ControlPlaneRef: ref("example.com", controlplanev1.ControlPlaneKind)}},
		},
		"no control plane yet": {obj: &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c1"}}},
		"not a Cluster":        {obj: &clusterv1.Machine{}},
	} {
		t.Run(name, func(t *testing.T) {
			r := &OpenshiftAssistedControlPlaneReconciler{}
			NewWithT(t).Expect(r.clusterToControlPlane(context.Background(), tc.obj)).To(Equal(tc.want))
		})
	}
}

// TestLoadMachines: the control plane's Machines are those it controls among the Machines with its
// labels, oldest first (then by name); a Machine with the labels that another object controls is
// not its own.
func TestLoadMachines(t *testing.T) {
	g := NewWithT(t)
	s, err := capoascheme.New(controlplanev1.AddToScheme)
	g.Expect(err).NotTo(HaveOccurred())
	oacp := &controlplanev1.OpenshiftAssistedControlPlane{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cp", UID: "cp-uid"}}
	cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c1"}}
	base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	machine := func(name string, age time.Duration, controller string) *clusterv1.Machine {
		m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: machineLabels(oacp, cluster),
			CreationTimestamp: metav1.NewTime(base.Add(-age))}}
		if controller != "" {
			m.OwnerReferences = []metav1.OwnerReference{{APIVersion: controlplanev1.GroupVersion.String(), Kind: controlplanev1.ControlPlaneKind,
				Name: "cp", UID: "cp-uid", Controller: ptr.To(controller == "cp")}}
		}
		return m
	}
	objs := []client.Object{
		machine("young", time.Hour, "cp"), machine("old-b", 2*time.Hour, "cp"), machine("old-a", 2*time.Hour, "cp"),
		machine("not-controlled", 3*time.Hour, "other"), machine("no-owner", 3*time.Hour, ""),
		&clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "worker", OwnerReferences: machine("x", 0, "cp").OwnerReferences}},
	}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).Build()
	r := &OpenshiftAssistedControlPlaneReconciler{Client: c}
	sc := &scope{oacp: oacp, cluster: cluster}
	g.Expect(r.loadMachines(context.Background(), sc)).To(Succeed())
	var names []string
	for _, m := range sc.machines {
		names = append(names, m.Name)
	}
	g.Expect(names).To(Equal([]string{"old-a", "old-b", "young"}))
}

// TestReplicasSelector: spec.replicas counts the control plane's Machines but its arbiter.
func TestReplicasSelector(t *testing.T) {
	g := NewWithT(t)
	cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "c1"}}
	oacp := &controlplanev1.OpenshiftAssistedControlPlane{ObjectMeta: metav1.ObjectMeta{Name: "cp"}}
	master := machineLabels(oacp, cluster)
	arbiter := labels.Merge(master, labels.Set{controlplanev1.ArbiterMachineLabel: ""})
	other := labels.Set{clusterv1.ClusterNameLabel: "c1", clusterv1.MachineControlPlaneLabel: "", clusterv1.MachineControlPlaneNameLabel: "other"}

	sel := replicasSelector(oacp, cluster)
	g.Expect(sel.Matches(master)).To(BeTrue())
	g.Expect(sel.Matches(other)).To(BeFalse())

	oacp.Spec.Arbiter = &controlplanev1.OpenshiftAssistedControlPlaneArbiterSpec{}
	sel = replicasSelector(oacp, cluster)
	g.Expect(sel.Matches(master)).To(BeTrue())
	g.Expect(sel.Matches(arbiter)).To(BeFalse(), "the arbiter is not a replica")
	g.Expect(sel.String()).To(ContainSubstring("!" + controlplanev1.ArbiterMachineLabel))
}

// TestGoneCluster: a control plane whose Cluster is deleted names it by its Cluster owner
// reference, else by its cluster-name label.
func TestGoneCluster(t *testing.T) {
	g := NewWithT(t)
	oacp := &controlplanev1.OpenshiftAssistedControlPlane{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cp",
		Labels: map[string]string{clusterv1.ClusterNameLabel: "from-label"}}}
	g.Expect(goneCluster(oacp).Name).To(Equal("from-label"))
	g.Expect(goneCluster(oacp).Namespace).To(Equal("ns"))
	oacp.OwnerReferences = []metav1.OwnerReference{
		{APIVersion: "example.com/v1", Kind: "Cluster", Name: "not-capi"},
		{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: "from-owner"},
	}
	g.Expect(goneCluster(oacp).Name).To(Equal("from-owner"))
}

// TestMinResult: the sooner of two requeues wins; no requeue loses to any.
func TestMinResult(t *testing.T) {
	g := NewWithT(t)
	in := func(d time.Duration) ctrl.Result { return ctrl.Result{RequeueAfter: d} }
	g.Expect(minResult(in(0), in(0))).To(Equal(in(0)))
	g.Expect(minResult(in(0), in(time.Second))).To(Equal(in(time.Second)))
	g.Expect(minResult(in(time.Second), in(0))).To(Equal(in(time.Second)))
	g.Expect(minResult(in(time.Minute), in(time.Second))).To(Equal(in(time.Second)))
	g.Expect(minResult(in(time.Second), in(time.Minute))).To(Equal(in(time.Second)))
}

// TestWaitsUnwatched: the control plane polls only for what no watch brings: the admin kubeconfig
// of an installed cluster, an upgrade, an unreadable release; not while its cluster installs.
func TestWaitsUnwatched(t *testing.T) {
	installedACI := &hiveextv1beta1.AgentClusterInstall{}
	installedACI.Status.DebugInfo.State = models.ClusterStatusInstalled
	installingACI := &hiveextv1beta1.AgentClusterInstall{}
	installingACI.Status.DebugInfo.State = models.ClusterStatusInstalling
	for _, tt := range []struct {
		name string
		s    scope
		want bool
	}{
		{"before the install", scope{}, false},
		{"installing", scope{aci: installingACI}, false},
		{"installed, no kubeconfig yet", scope{aci: installedACI}, true},
		{"installed as Hive says, no kubeconfig yet", scope{cd: &hivev1.ClusterDeployment{Spec: hivev1.ClusterDeploymentSpec{Installed: true}}}, true},
		{"installed, kubeconfig written", scope{aci: installedACI, kubeconfigWritten: true}, false},
		{"upgrading", scope{aci: installedACI, kubeconfigWritten: true, upgrade: upgradeState{inProgress: true}}, true},
		{"the release cannot be read", scope{aci: installingACI, releaseErr: errors.New("unauthorized")}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(waitsUnwatched(&tt.s)).To(Equal(tt.want))
		})
	}
}
