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
	"testing"

	capm3v1beta2 "github.com/metal3-io/cluster-api-provider-metal3/api/v1beta2"
	. "github.com/onsi/gomega"
	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/reconciler"
	capoascheme "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/scheme"
)

// fixture is a config owned by a worker Machine of a Cluster whose infrastructure is
// provisioned, whose ClusterDeployment has a pull secret and whose installation is done.
type fixture struct {
	config  *bootstrapv1.OpenshiftAssistedConfig
	machine *clusterv1.Machine
	cluster *clusterv1.Cluster
	cd      *hivev1.ClusterDeployment
	aci     *hiveextv1beta1.AgentClusterInstall
}

func newFixture() *fixture {
	f := &fixture{
		cluster: &clusterv1.Cluster{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c1"},
			Spec: clusterv1.ClusterSpec{ControlPlaneRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: "controlplane.cluster.x-k8s.io", Kind: "OpenshiftAssistedControlPlane", Name: "c1"}},
			Status: clusterv1.ClusterStatus{Initialization: clusterv1.ClusterInitializationStatus{InfrastructureProvisioned: ptr.To(true)}},
		},
		machine: &clusterv1.Machine{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m1", UID: "m1-uid"},
			Spec: clusterv1.MachineSpec{ClusterName: "c1", Bootstrap: clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: bootstrapv1.GroupVersion.Group, Kind: "OpenshiftAssistedConfig", Name: "m1"}}},
		},
		cd: &hivev1.ClusterDeployment{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c1"},
			Spec: hivev1.ClusterDeploymentSpec{
				PullSecretRef:     &corev1.LocalObjectReference{Name: "pull"},
				ClusterInstallRef: &hivev1.ClusterInstallLocalReference{Group: hiveextv1beta1.Group, Version: "v1beta1", Kind: "AgentClusterInstall", Name: "c1"},
			},
		},
		aci: &hiveextv1beta1.AgentClusterInstall{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c1"},
			Status: hiveextv1beta1.AgentClusterInstallStatus{DebugInfo: hiveextv1beta1.DebugInfo{State: "installed"}}},
	}
	f.config = &bootstrapv1.OpenshiftAssistedConfig{ObjectMeta: metav1.ObjectMeta{
		Namespace: "ns", Name: "m1", Finalizers: []string{bootstrapv1.ConfigFinalizer},
		Labels:          map[string]string{clusterv1.ClusterNameLabel: "c1"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: "m1", UID: "m1-uid"}},
	}}
	return f
}

// TestReconcileWaits checks, with a fake client, that the config says what it waits for in
// InfraEnvReady and creates no InfraEnv meanwhile.
func TestReconcileWaits(t *testing.T) {
	for _, tc := range []struct {
		name       string
		mutate     func(*fixture)
		wantReason string
		wantInMsg  string
	}{
		{"no owner Machine", func(f *fixture) { f.config.OwnerReferences = nil }, bootstrapv1.WaitingForMachineReason, "Machine"},
		{"no Cluster", func(f *fixture) { f.cluster = nil }, bootstrapv1.WaitingForClusterReason, "c1"},
		{"infrastructure not provisioned", func(f *fixture) { f.cluster.Status.Initialization.InfrastructureProvisioned = nil },
			bootstrapv1.WaitingForClusterInfrastructureReason, "infrastructure of Cluster c1"},
		{"no ClusterDeployment", func(f *fixture) { f.cd = nil }, bootstrapv1.WaitingForClusterDeploymentReason, "ClusterDeployment ns/c1"},
		{"no controlPlaneRef", func(f *fixture) { f.cluster.Spec.ControlPlaneRef = clusterv1.ContractVersionedObjectReference{} },
			bootstrapv1.WaitingForClusterDeploymentReason, "ClusterDeployment ns/c1"},
		{"no pull secret", func(f *fixture) { f.cd.Spec.PullSecretRef = nil }, bootstrapv1.WaitingForPullSecretReason, "pullSecretRef"},
		{"installation running", func(f *fixture) { f.aci.Status.DebugInfo.State = "installing" },
			bootstrapv1.WaitingForInstallationToCompleteReason, `state "installing"`},
		{"installation finalizing", func(f *fixture) { f.aci.Status.DebugInfo.State = "finalizing" },
			bootstrapv1.WaitingForInstallationToCompleteReason, "day-2"},
		{"ISO not ready", func(*fixture) {}, bootstrapv1.WaitingForISOReason, "discovery ISO of InfraEnv m1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			f := newFixture()
			tc.mutate(f)
			objs := []client.Object{f.config, f.machine, f.aci}
			for _, o := range []client.Object{f.cluster, f.cd} {
				if !isNil(o) {
					objs = append(objs, o)
				}
			}
			c, got := reconcileConfig(g, f, 2, objs...)
			cond := conditions.Get(got, bootstrapv1.InfraEnvReadyCondition)
			g.Expect(cond).NotTo(BeNil())
			g.Expect(cond.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(cond.Reason).To(Equal(tc.wantReason))
			g.Expect(cond.Message).To(ContainSubstring(tc.wantInMsg))
			g.Expect(conditions.IsFalse(got, bootstrapv1.ReadyCondition)).To(BeTrue())
			g.Expect(got.Status.DataSecretName).To(BeEmpty())

			ies := &aiv1beta1.InfraEnvList{}
			g.Expect(c.List(context.Background(), ies)).To(Succeed())
			if tc.wantReason == bootstrapv1.WaitingForISOReason {
				g.Expect(ies.Items).To(HaveLen(1))
				g.Expect(ies.Items[0].Spec.ClusterRef.Name).To(Equal("c1"))
			} else {
				g.Expect(ies.Items).To(BeEmpty())
			}
		})
	}
}

// TestNewConfigWithoutMachineIsNotWrittenTo: a config that Cluster API's MachineSet has just
// created (owned by the MachineSet; the Machine comes next) gets no finalizer and no status for
// reconciler.UnownedGracePeriod, so the MachineSet's own patch right after the create does not
// run out of conflict retries and leave the config behind. The reconcile asks to look again
// when the period ends; then the config says it waits for a Machine (TestReconcileWaits).
func TestNewConfigWithoutMachineIsNotWrittenTo(t *testing.T) {
	g := NewWithT(t)
	f := newFixture()
	f.config.Finalizers = nil
	f.config.CreationTimestamp = metav1.Now()
	f.config.OwnerReferences = []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "MachineSet", Name: "ms", UID: "ms-uid"}}
	s, err := capoascheme.New(bootstrapv1.AddToScheme)
	g.Expect(err).NotTo(HaveOccurred())
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(f.config, f.cluster, f.cd, f.aci).
		WithStatusSubresource(&bootstrapv1.OpenshiftAssistedConfig{}).Build()
	before := &bootstrapv1.OpenshiftAssistedConfig{}
	g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(f.config), before)).To(Succeed())
	r := &OpenshiftAssistedConfigReconciler{Client: c, Recorder: events.NewFakeRecorder(10)}
	res, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(f.config)})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.RequeueAfter).To(And(BeNumerically(">", 0), BeNumerically("<=", reconciler.UnownedGracePeriod)))
	got := &bootstrapv1.OpenshiftAssistedConfig{}
	g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(f.config), got)).To(Succeed())
	g.Expect(got.ResourceVersion).To(Equal(before.ResourceVersion), "nothing written")
}

// TestMachineWithNodeIsDone checks that a config whose Machine is a Node of the cluster, as after
// a clusterctl move (no status, no Agent: assisted-service on the new hub deleted it), gets its
// status back from the Machine and touches nothing.
func TestMachineWithNodeIsDone(t *testing.T) {
	g := NewWithT(t)
	f := newFixture()
	f.aci.Status = hiveextv1beta1.AgentClusterInstallStatus{} // moved: no status
	f.machine.Spec.Bootstrap.DataSecretName = ptr.To("m1")
	f.machine.Spec.ProviderID = "metal3://ns/host-0/m1"
	f.machine.Status.NodeRef = clusterv1.MachineNodeReference{Name: "master-0"}
	c, got := reconcileConfig(g, f, 2, f.config, f.machine, f.cluster, f.cd, f.aci)
	g.Expect(got.Status.DataSecretName).To(Equal("m1"))
	g.Expect(got.Status.Initialization.DataSecretCreated).To(Equal(ptr.To(true)))
	g.Expect(conditions.IsTrue(got, bootstrapv1.ReadyCondition)).To(BeTrue())
	for _, t := range []string{bootstrapv1.InfraEnvReadyCondition, bootstrapv1.DataSecretAvailableCondition,
		bootstrapv1.AgentRegisteredCondition, bootstrapv1.AgentApprovedCondition, bootstrapv1.InstalledCondition} {
		cond := conditions.Get(got, t)
		g.Expect(cond).NotTo(BeNil(), t)
		g.Expect(cond.Status).To(Equal(metav1.ConditionTrue), t)
		g.Expect(cond.Reason).To(Equal(bootstrapv1.NodeJoinedReason), t)
		g.Expect(cond.Message).To(ContainSubstring("Node master-0"))
	}
	g.Expect(conditions.IsFalse(got, bootstrapv1.InstallingCondition)).To(BeTrue())
	ies := &aiv1beta1.InfraEnvList{}
	g.Expect(c.List(context.Background(), ies)).To(Succeed())
	g.Expect(ies.Items).To(BeEmpty(), "nothing is created for a Machine that runs already")
	secrets := &corev1.SecretList{}
	g.Expect(c.List(context.Background(), secrets)).To(Succeed())
	g.Expect(secrets.Items).To(BeEmpty())
}

// TestUpstreamFinalizer: a config that openshift-assisted/cluster-api-provider-openshift-assisted
// created carries its finalizer, which nothing removes after the switch. It is replaced with
// this provider's on a running config (the Machine runs already: nothing else changes), and
// removed with ours when a config being deleted has been cleaned up, so the deletion ends.
func TestUpstreamFinalizer(t *testing.T) {
	for name, tc := range map[string]struct {
		finalizers []string
		deleting   bool
		want       []string
	}{
		"running config":            {finalizers: []string{bootstrapv1.UpstreamConfigFinalizer}, want: []string{bootstrapv1.ConfigFinalizer}},
		"deleted before the switch": {finalizers: []string{bootstrapv1.UpstreamConfigFinalizer, "other"}, deleting: true, want: []string{"other"}},
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			f := newFixture()
			f.config.Finalizers = tc.finalizers
			if tc.deleting {
				now := metav1.Now()
				f.config.DeletionTimestamp = &now
			}
			f.machine.Spec.Bootstrap.DataSecretName = ptr.To("m1")
			f.machine.Status.NodeRef = clusterv1.MachineNodeReference{Name: "master-0"}
			_, got := reconcileConfig(g, f, 2, f.config, f.machine, f.cluster, f.cd, f.aci)
			g.Expect(got.Finalizers).To(ConsistOf(tc.want))
		})
	}
}

// reconcileConfig runs the reconciler n times for f's config on a fake client that holds objs, and
// returns the client and the config as it is then. (The first reconcile of a config only sets its
// Paused condition: a patch that triggers the next reconcile in a manager.)
func reconcileConfig(g Gomega, f *fixture, n int, objs ...client.Object) (client.Client, *bootstrapv1.OpenshiftAssistedConfig) {
	s, err := capoascheme.New(bootstrapv1.AddToScheme)
	g.Expect(err).NotTo(HaveOccurred())
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).
		WithStatusSubresource(&bootstrapv1.OpenshiftAssistedConfig{}).Build()
	r := &OpenshiftAssistedConfigReconciler{Client: c, Recorder: events.NewFakeRecorder(10)}
	for range n {
		_, err = r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(f.config)})
		g.Expect(err).NotTo(HaveOccurred())
	}
	got := &bootstrapv1.OpenshiftAssistedConfig{}
	g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(f.config), got)).To(Succeed())
	return c, got
}

func isNil(o client.Object) bool {
	switch v := o.(type) {
	case *clusterv1.Cluster:
		return v == nil
	case *hivev1.ClusterDeployment:
		return v == nil
	}
	return o == nil
}

// TestDiscoveryIgnitionUnavailableIsRetried: a host that boots a disk image waits for its
// discovery ignition, saying why in DataSecretAvailable, and the reconcile asks to try again
// (a download that failed sends no event the controller watches), without a reconcile error.
func TestDiscoveryIgnitionUnavailableIsRetried(t *testing.T) {
	g := NewWithT(t)
	f := newFixture()
	f.machine.Spec.InfrastructureRef = clusterv1.ContractVersionedObjectReference{APIGroup: capm3v1beta2.GroupVersion.Group, Kind: "Metal3Machine", Name: "m1"}
	m3m := &capm3v1beta2.Metal3Machine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m1"},
		Spec: capm3v1beta2.Metal3MachineSpec{Image: capm3v1beta2.Image{URL: "https://mirror.example/rhcos-nutanix.qcow2", DiskFormat: "qcow2"}}}
	ie := &aiv1beta1.InfraEnv{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m1"},
		Status: aiv1beta1.InfraEnvStatus{ISODownloadURL: "https://images.example/m1.iso"}}
	s, err := capoascheme.New(bootstrapv1.AddToScheme)
	g.Expect(err).NotTo(HaveOccurred())
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(f.config, f.machine, f.cluster, f.cd, f.aci, m3m, ie).
		WithStatusSubresource(&bootstrapv1.OpenshiftAssistedConfig{}).Build()
	recorder := events.NewFakeRecorder(10)
	r := &OpenshiftAssistedConfigReconciler{Client: c, Recorder: recorder} // no Discovery: every download fails
	res, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(f.config)})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.RequeueAfter).To(Equal(discoveryRetry))
	got := &bootstrapv1.OpenshiftAssistedConfig{}
	g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(f.config), got)).To(Succeed())
	cond := conditions.Get(got, bootstrapv1.DataSecretAvailableCondition)
	g.Expect(cond).NotTo(BeNil())
	g.Expect(cond.Reason).To(Equal(bootstrapv1.DiscoveryIgnitionUnavailableReason))
	g.Expect(cond.Message).To(ContainSubstring("disk image https://mirror.example/rhcos-nutanix.qcow2"))
	g.Expect(got.Status.DataSecretName).To(BeEmpty())
	g.Expect(recorder.Events).To(Receive(ContainSubstring(bootstrapv1.DiscoveryIgnitionUnavailableReason)))
	// The Metal3Machine keeps its image.
	g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(m3m), m3m)).To(Succeed())
	g.Expect(m3m.Spec.Image.URL).To(Equal("https://mirror.example/rhcos-nutanix.qcow2"))
}
