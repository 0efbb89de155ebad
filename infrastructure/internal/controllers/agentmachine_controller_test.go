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

	. "github.com/onsi/gomega"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	infrav1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/infrastructure/v1beta1"
	capoascheme "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/scheme"
)

// TestAgentMachineWaits walks the AgentMachine through what it waits for, with a fake client:
// each case adds one missing piece and checks the reason the next reconcile reports.
func TestAgentMachineWaits(t *testing.T) {
	scheme, err := capoascheme.New(infrav1.AddToScheme)
	if err != nil {
		t.Fatal(err)
	}
	const ns = "ns"
	cluster := func(provisioned bool) *clusterv1.Cluster {
		return &clusterv1.Cluster{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c1"},
			Spec: clusterv1.ClusterSpec{InfrastructureRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: infrav1.GroupVersion.Group, Kind: "AgentCluster", Name: "c1",
			}},
			Status: clusterv1.ClusterStatus{Initialization: clusterv1.ClusterInitializationStatus{InfrastructureProvisioned: ptr.To(provisioned)}},
		}
	}
	machine := func(dataSecret *string) *clusterv1.Machine {
		return &clusterv1.Machine{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m1", UID: "machine-uid", Labels: map[string]string{clusterv1.ClusterNameLabel: "c1"}},
			Spec:       clusterv1.MachineSpec{ClusterName: "c1", Bootstrap: clusterv1.Bootstrap{DataSecretName: dataSecret}},
		}
	}
	agentCluster := func(cd string) *infrav1.AgentCluster {
		ac := &infrav1.AgentCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c1"}}
		if cd != "" {
			ac.Spec.ClusterDeploymentRef = &infrav1.ClusterDeploymentReference{Name: cd}
		}
		return ac
	}
	data := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "data"}, Data: map[string][]byte{
		"format": []byte("ignition"), "value": []byte(`{"ignition":{"version":"3.1.0"}}`),
	}}
	agent := testAgent("a1")
	agent.Namespace = ns

	tests := []struct {
		name       string
		owned      bool
		objects    []client.Object
		wantReason string
		wantMsg    string
	}{
		// Just created by a MachineSet: left untouched for reconciler.UnownedGracePeriod (no
		// condition), so the MachineSet's own patch after the create does not conflict.
		{"just created, no Machine owns it yet", false, nil, "", ""},
		{"no Machine owns it", false, nil, infrav1.WaitingForMachineReason, ""},
		{"infrastructure not provisioned", true, []client.Object{cluster(false), machine(ptr.To("data"))}, infrav1.WaitingForClusterInfrastructureReason, ""},
		{"no bootstrap data yet", true, []client.Object{cluster(true), machine(nil)}, infrav1.WaitingForBootstrapDataReason, ""},
		{"no ClusterDeployment yet", true, []client.Object{cluster(true), machine(ptr.To("data")), agentCluster("")}, infrav1.WaitingForClusterDeploymentReason, ""},
		{"bootstrap Secret missing", true, []client.Object{cluster(true), machine(ptr.To("data")), agentCluster("cd")}, infrav1.WaitingForBootstrapDataReason, ""},
		{"no Agent", true, []client.Object{cluster(true), machine(ptr.To("data")), agentCluster("cd"), data}, infrav1.NoSuitableAgentsReason, "0 of 0 agents fit"},
		{"claims the Agent", true, []client.Object{cluster(true), machine(ptr.To("data")), agentCluster("cd"), data, agent}, infrav1.AgentReservedReason, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := context.Background()
			am := &infrav1.AgentMachine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m1", UID: "am-uid",
				Finalizers: []string{infrav1.AgentMachineFinalizer}}}
			if tt.owned {
				am.OwnerReferences = []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: "m1", UID: "machine-uid"}}
			}
			if tt.wantReason == "" {
				am.CreationTimestamp = metav1.Now()
			}
			c := fake.NewClientBuilder().WithScheme(scheme).
				WithObjects(append([]client.Object{am}, tt.objects...)...).
				WithStatusSubresource(&infrav1.AgentMachine{}, &clusterv1.Cluster{}).
				WithIndex(&aiv1beta1.Agent{}, agentClaimIndex, indexAgentClaim).
				Build()
			r := &AgentMachineReconciler{Client: c, APIReader: c, AgentReader: c, Recorder: events.NewFakeRecorder(10)}
			// Twice, as the first one's writes bring it back: what it reports must be stable.
			for range 2 {
				_, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(am)})
				g.Expect(err).NotTo(HaveOccurred())
			}
			got := &infrav1.AgentMachine{}
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(am), got)).To(Succeed())
			cond := conditions.Get(got, infrav1.AgentReservedCondition)
			if tt.wantReason == "" {
				g.Expect(got.Status.Conditions).To(BeEmpty())
				return
			}
			g.Expect(cond).NotTo(BeNil())
			g.Expect(cond.Reason).To(Equal(tt.wantReason), cond.Message)
			if tt.wantMsg != "" {
				g.Expect(cond.Message).To(Equal(tt.wantMsg))
			}
			if tt.wantReason == infrav1.AgentReservedReason {
				g.Expect(got.Spec.ProviderID).To(Equal("agent://a1"))
				claimed := &aiv1beta1.Agent{}
				g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "a1"}, claimed)).To(Succeed())
				g.Expect(claimed.Labels[infrav1.AgentClaimedByLabel]).To(Equal("am-uid"))
				g.Expect(claimed.Spec.ClusterDeploymentName).To(Equal(&aiv1beta1.ClusterReference{Namespace: ns, Name: "cd"}))
			} else {
				g.Expect(got.Spec.ProviderID).To(BeEmpty())
			}
		})
	}
}

// TestDeletedForMoveIsLeftAlone: an AgentMachine that clusterctl move deletes from the management
// cluster it leaves (its owner Machine already gone there) keeps its Agent bound and claimed: the
// host lives on in the other management cluster.
func TestDeletedForMoveIsLeftAlone(t *testing.T) {
	g := NewWithT(t)
	scheme, err := capoascheme.New(infrav1.AddToScheme)
	g.Expect(err).NotTo(HaveOccurred())
	now := metav1.Now()
	am := &infrav1.AgentMachine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m1", UID: "am-uid",
		Finalizers: []string{infrav1.AgentMachineFinalizer}, DeletionTimestamp: &now,
		Annotations: map[string]string{"clusterctl.cluster.x-k8s.io/delete-for-move": ""}},
		Spec: infrav1.AgentMachineSpec{ProviderID: "agent://a1"}}
	am.Status.AgentRef = &infrav1.AgentReference{Namespace: "ns", Name: "a1"}
	agent := testAgent("a1")
	agent.Namespace = "ns"
	agent.Labels = map[string]string{infrav1.AgentClaimedByLabel: "am-uid"}
	agent.Spec.ClusterDeploymentName = &aiv1beta1.ClusterReference{Namespace: "ns", Name: "cd"}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(am, agent).
		WithStatusSubresource(&infrav1.AgentMachine{}).
		WithIndex(&aiv1beta1.Agent{}, agentClaimIndex, indexAgentClaim).
		Build()
	r := &AgentMachineReconciler{Client: c, APIReader: c, AgentReader: c, Recorder: events.NewFakeRecorder(10)}
	_, err = r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(am)})
	g.Expect(err).NotTo(HaveOccurred())

	got := &aiv1beta1.Agent{}
	g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(agent), got)).To(Succeed())
	g.Expect(got.Spec.ClusterDeploymentName).To(Equal(agent.Spec.ClusterDeploymentName), "the Agent stays bound")
	g.Expect(got.Labels).To(HaveKeyWithValue(infrav1.AgentClaimedByLabel, "am-uid"))
	gotAM := &infrav1.AgentMachine{}
	g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(am), gotAM)).To(Succeed())
	g.Expect(gotAM.Finalizers).To(ConsistOf(infrav1.AgentMachineFinalizer), "clusterctl removes the finalizers itself")
}

// TestNewAgentMachineIsClaimedInOneReconcile: the first reconcile of a new AgentMachine claims
// its Agent. Its Paused condition and its finalizer take no write and no reconcile of their own
// (Cluster API's paused.EnsurePausedCondition and finalizers.EnsureFinalizer would each write and
// end the reconcile): the finalizer goes out with the choice of the Agent, before the claim, and
// the condition with the reconcile's status.
func TestNewAgentMachineIsClaimedInOneReconcile(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	scheme, err := capoascheme.New(infrav1.AddToScheme)
	g.Expect(err).NotTo(HaveOccurred())
	const ns = "ns"
	cluster := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c1"},
		Spec: clusterv1.ClusterSpec{InfrastructureRef: clusterv1.ContractVersionedObjectReference{
			APIGroup: infrav1.GroupVersion.Group, Kind: "AgentCluster", Name: "c1",
		}},
		Status: clusterv1.ClusterStatus{Initialization: clusterv1.ClusterInitializationStatus{InfrastructureProvisioned: ptr.To(true)}},
	}
	machine := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m1", UID: "machine-uid", Labels: map[string]string{clusterv1.ClusterNameLabel: "c1"}},
		Spec:       clusterv1.MachineSpec{ClusterName: "c1", Bootstrap: clusterv1.Bootstrap{DataSecretName: ptr.To("data")}},
	}
	ac := &infrav1.AgentCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c1"},
		Spec: infrav1.AgentClusterSpec{ClusterDeploymentRef: &infrav1.ClusterDeploymentReference{Name: "cd"}}}
	data := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "data"}, Data: map[string][]byte{
		"format": []byte("ignition"), "value": []byte(`{"ignition":{"version":"3.1.0"}}`),
	}}
	agent := testAgent("a1")
	agent.Namespace = ns
	am := &infrav1.AgentMachine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m1", UID: "am-uid",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: "m1", UID: "machine-uid"}}}}

	var writes []string
	finalizedAtClaim := false
	c := fake.NewClientBuilder().WithScheme(scheme).
		WithObjects(am, cluster, machine, ac, data, agent).
		WithStatusSubresource(&infrav1.AgentMachine{}, &clusterv1.Cluster{}).
		WithIndex(&aiv1beta1.Agent{}, agentClaimIndex, indexAgentClaim).
		WithInterceptorFuncs(interceptor.Funcs{
			Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
				switch obj.(type) {
				case *aiv1beta1.Agent:
					stored := &infrav1.AgentMachine{}
					if err := c.Get(ctx, client.ObjectKeyFromObject(am), stored); err != nil {
						return err
					}
					finalizedAtClaim = controllerutil.ContainsFinalizer(stored, infrav1.AgentMachineFinalizer)
				case *infrav1.AgentMachine:
					writes = append(writes, "patch")
				}
				return c.Patch(ctx, obj, patch, opts...)
			},
			SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
				if _, ok := obj.(*infrav1.AgentMachine); ok {
					writes = append(writes, sub)
				}
				return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
			},
		}).Build()
	recorder := events.NewFakeRecorder(10)
	r := &AgentMachineReconciler{Client: c, APIReader: c, AgentReader: c, Recorder: recorder}
	_, err = r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(am)})
	g.Expect(err).NotTo(HaveOccurred())

	got := &infrav1.AgentMachine{}
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(am), got)).To(Succeed())
	g.Expect(got.Spec.ProviderID).To(Equal("agent://a1"), "claimed in the first reconcile")
	g.Expect(finalizedAtClaim).To(BeTrue(), "the finalizer is stored before the Agent is claimed")
	g.Expect(got.Finalizers).To(ContainElement(infrav1.AgentMachineFinalizer))
	g.Expect(conditions.Get(got, clusterv1.PausedCondition)).To(HaveField("Reason", clusterv1.NotPausedReason))
	// First the choice, with the finalizer; then the deferred Patcher's: the AgentMachine
	// (providerID), then its whole status, conditions included, in one patch (Cluster API's
	// patch helper sent the conditions apart: 4 writes).
	g.Expect(writes).To(Equal([]string{"patch", "patch", "status"}))
	// No event for a claim that went well: the status says it, and an event was a write per
	// bound machine (issue 45).
	g.Expect(recorder.Events).To(BeEmpty())
}
