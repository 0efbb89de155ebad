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

package controllers_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"

	. "github.com/onsi/gomega"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/infrastructure/v1beta1"
	infracontroller "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/infrastructure/internal/controllers"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/manager"
)

func TestCrossNamespaceRefusal(t *testing.T) {
	ca := func(ns string) *infrav1.IgnitionEndpoint {
		return &infrav1.IgnitionEndpoint{Url: "https://ign.example.com", CaCertificateReference: &infrav1.CaCertificateReference{Namespace: ns, Name: "ca"}}
	}
	for _, tc := range []struct {
		name    string
		spec    infrav1.AgentClusterSpec
		allowed bool
		want    string // a part of the refusal; "" for none
	}{
		{name: "no references", want: ""},
		{name: "ClusterDeployment without namespace (own)", spec: infrav1.AgentClusterSpec{ClusterDeploymentRef: &infrav1.ClusterDeploymentReference{Name: "cd"}}},
		{name: "ClusterDeployment in the own namespace", spec: infrav1.AgentClusterSpec{ClusterDeploymentRef: &infrav1.ClusterDeploymentReference{Namespace: "tenant-a", Name: "cd"}}},
		{name: "ClusterDeployment elsewhere", spec: infrav1.AgentClusterSpec{ClusterDeploymentRef: &infrav1.ClusterDeploymentReference{Namespace: "tenant-b", Name: "cd"}},
			want: "spec.clusterDeploymentRef names ClusterDeployment tenant-b/cd, outside the AgentCluster's namespace tenant-a: refused"},
		{name: "ClusterDeployment elsewhere, allowed", allowed: true, spec: infrav1.AgentClusterSpec{ClusterDeploymentRef: &infrav1.ClusterDeploymentReference{Namespace: "tenant-b", Name: "cd"}}},
		{name: "CA Secret in the own namespace", spec: infrav1.AgentClusterSpec{IgnitionEndpoint: ca("tenant-a")}},
		{name: "CA Secret elsewhere", spec: infrav1.AgentClusterSpec{IgnitionEndpoint: ca("kube-system")},
			want: "spec.ignitionEndpoint.caCertificateReference names Secret kube-system/ca, outside the AgentCluster's namespace tenant-a: refused"},
		{name: "CA Secret elsewhere, allowed", allowed: true, spec: infrav1.AgentClusterSpec{IgnitionEndpoint: ca("kube-system")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			ac := &infrav1.AgentCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-a", Name: "c1"}, Spec: tc.spec}
			got := infracontroller.CrossNamespaceRefusal(ac, tc.allowed)
			if tc.want == "" {
				g.Expect(got).To(BeEmpty())
				return
			}
			g.Expect(got).To(ContainSubstring(tc.want))
			g.Expect(got).To(ContainSubstring("--allow-cross-namespace-references"), "the message says what to do")
		})
	}
}

// TestCrossNamespaceClusterDeploymentIsRefused: an AgentCluster that names another namespace's
// ClusterDeployment says it is refused, is not provisioned, and its Machines claim no Agent
// (they were bound to the other namespace's cluster).
func TestCrossNamespaceClusterDeploymentIsRefused(t *testing.T) {
	t.Parallel() // see suite_test.go
	g := NewWithT(t)
	ctx := context.Background()
	victim, err := env.CreateNamespace(ctx, "victim")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(env.Client.Create(ctx, clusterDeployment(victim, "theirs", "theirs"))).To(Succeed())
	f := newFixtureWith(t, ctx, "crossns", nil, func(ac *infrav1.AgentCluster) {
		ac.Spec.ClusterDeploymentRef = &infrav1.ClusterDeploymentReference{Namespace: victim, Name: "theirs"}
	})
	startManager(t, isolated(f, 0))
	createAgent(t, ctx, f.ns, agentName(1), nil, 8)
	f.machine(t, ctx, "m1", nil)

	g.Eventually(func(g Gomega) {
		ac := &infrav1.AgentCluster{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "c1"}, ac)).To(Succeed())
		c := conditions.Get(ac, infrav1.ClusterDeploymentReadyCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(infrav1.CrossNamespaceReferenceRefusedReason))
		g.Expect(c.Message).To(ContainSubstring("ClusterDeployment " + victim + "/theirs"))
		g.Expect(ptr.Deref(ac.Status.Initialization.Provisioned, false)).To(BeFalse())
		// Cluster API does not mark the cluster's infrastructure provisioned, so the Machine waits
		// there; were it not so, the AgentMachine refuses the reference itself.
		g.Expect(reservedReason(getAM(g, ctx, f.ns, "m1"))).To(BeElementOf(infrav1.WaitingForClusterInfrastructureReason, infrav1.CrossNamespaceReferenceRefusedReason))
	}, timeout, interval).Should(Succeed())
	g.Expect(claimedAgents(g, ctx, f.ns)).To(BeEmpty(), "no Agent is claimed for another namespace's cluster")
}

// TestTenantsKeepTheirAgents: without --agent-namespace or --shared-agent-pool, an AgentMachine
// claims only the Agents of its own namespace. Tenant a's AgentMachine neither claims tenant b's
// free Agent (a better fit than a's own), nor takes it when it names it with the chosen-agent
// annotation, nor counts it in its "no Agent fits" message; each tenant's Machine gets its own
// tenant's host.
func TestTenantsKeepTheirAgents(t *testing.T) {
	t.Parallel() // see suite_test.go
	g := NewWithT(t)
	ctx := context.Background()
	// A watch filter keeps this manager, which watches every namespace, off other tests' objects.
	filter := map[string]string{clusterv1.WatchLabel: "tenancy"}
	a := newFixture(t, ctx, "tenant-a", filter)
	b := newFixture(t, ctx, "tenant-b", filter)
	createAgent(t, ctx, b.ns, agentName(1), nil, 2)
	startManager(t, managerConfig{opts: manager.Options{WatchFilterValue: "tenancy"}})
	a.machine(t, ctx, "a1", func(m *clusterv1.Machine, am *infrav1.AgentMachine) {
		m.Labels = merge(m.Labels, filter)
		am.Labels = merge(am.Labels, filter)
		am.Annotations = map[string]string{infrav1.ChosenAgentAnnotation: b.ns + "/" + agentName(1)}
	})
	g.Eventually(func(g Gomega) {
		a1 := getAM(g, ctx, a.ns, "a1")
		g.Expect(reservedReason(a1)).To(Equal(infrav1.NoSuitableAgentsReason))
		g.Expect(conditions.Get(a1, infrav1.AgentReservedCondition).Message).To(Equal("0 of 0 agents fit"), "tenant b's Agent is not counted")
		g.Expect(a1.Annotations).NotTo(HaveKey(infrav1.ChosenAgentAnnotation), "the refused choice is dropped")
		// The refusal is told where the tenant looks, without reading the other tenant's Agent.
		list := &eventsv1.EventList{}
		g.Expect(env.Client.List(ctx, list, client.InNamespace(a.ns))).To(Succeed())
		g.Expect(list.Items).To(ContainElement(And(HaveField("Reason", "ChosenAgentRefused"), HaveField("Type", corev1.EventTypeWarning),
			HaveField("Regarding.Name", "a1"), HaveField("Note", ContainSubstring("it takes the Agents of namespace "+a.ns)))))
	}, timeout, interval).Should(Succeed())
	g.Expect(claimedAgents(g, ctx, b.ns)).To(BeEmpty(), "tenant b's Agent is not claimed")

	createAgent(t, ctx, a.ns, agentName(2), nil, 8)
	b.machine(t, ctx, "b1", func(m *clusterv1.Machine, am *infrav1.AgentMachine) {
		m.Labels = merge(m.Labels, filter)
		am.Labels = merge(am.Labels, filter)
	})
	g.Eventually(func(g Gomega) {
		g.Expect(getAM(g, ctx, a.ns, "a1").Spec.ProviderID).To(Equal("agent://" + agentName(2)))
		g.Expect(getAM(g, ctx, b.ns, "b1").Spec.ProviderID).To(Equal("agent://" + agentName(1)))
	}, timeout, interval).Should(Succeed())
	a2 := &aiv1beta1.Agent{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: a.ns, Name: agentName(2)}, a2)).To(Succeed())
	g.Expect(a2.Spec.ClusterDeploymentName).To(Equal(&aiv1beta1.ClusterReference{Namespace: a.ns, Name: a.cd}))
}
