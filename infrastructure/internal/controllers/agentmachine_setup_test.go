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

	. "github.com/onsi/gomega"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	infrav1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/infrastructure/v1beta1"
)

// TestSetupWithManagerNeedsItsReaders: the controller is not set up without its clients, its
// recorder or the Agent cache, before it touches the manager.
func TestSetupWithManagerNeedsItsReaders(t *testing.T) {
	c := fake.NewClientBuilder().Build()
	full := func() *AgentMachineReconciler {
		return &AgentMachineReconciler{Client: c, APIReader: c, AgentReader: c, Recorder: events.NewFakeRecorder(1)}
	}
	for _, tt := range []struct {
		name   string
		mutate func(*AgentMachineReconciler)
	}{
		{"no Client", func(r *AgentMachineReconciler) { r.Client = nil }},
		{"no APIReader", func(r *AgentMachineReconciler) { r.APIReader = nil }},
		{"no AgentReader", func(r *AgentMachineReconciler) { r.AgentReader = nil }},
		{"no Recorder", func(r *AgentMachineReconciler) { r.Recorder = nil }},
		{"no Agent cache", func(*AgentMachineReconciler) {}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := full()
			tt.mutate(r)
			// The manager is nil: it must not be used.
			err := r.SetupWithManager(context.Background(), nil, nil, controller.Options{})
			NewWithT(t).Expect(err).To(MatchError("AgentMachineReconciler needs Client, APIReader, AgentReader, Recorder and an Agent cache"))
		})
	}
}

// setupFixture is an AgentMachineReconciler on a fake client with the indexes its mappers list by.
func setupFixture(t *testing.T, objects ...client.Object) (*AgentMachineReconciler, *[]string) {
	t.Helper()
	scheme := testScheme(t)
	var lists []string
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objects...).
		WithIndex(&infrav1.AgentMachine{}, waitingIndex, indexWaiting).
		WithIndex(&infrav1.AgentMachine{}, agentMachineUIDIndex, indexAgentMachineUID).
		WithInterceptorFuncs(interceptor.Funcs{
			List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
				lists = append(lists, "list")
				return c.List(ctx, list, opts...)
			},
		}).Build()
	return &AgentMachineReconciler{Client: c, APIReader: c, AgentReader: c}, &lists
}

func failingLists(r *AgentMachineReconciler) {
	r.Client = interceptor.NewClient(r.Client.(client.WithWatch), interceptor.Funcs{
		List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error {
			return errors.New("boom")
		},
	})
}

func setupAgentMachine(ns, name, uid string, labels map[string]string, mutate ...func(*infrav1.AgentMachine)) *infrav1.AgentMachine {
	am := &infrav1.AgentMachine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: uidOf(uid), Labels: labels}}
	for _, m := range mutate {
		m(am)
	}
	return am
}

func uidOf(s string) types.UID { return types.UID(s) }

func req(ns, name string) reconcile.Request {
	return reconcile.Request{NamespacedName: client.ObjectKey{Namespace: ns, Name: name}}
}

// TestAgentClusterToAgentMachines: an AgentCluster wakes the AgentMachines of its Cluster in its
// namespace, none without a Cluster label or when the list fails.
func TestAgentClusterToAgentMachines(t *testing.T) {
	g := NewWithT(t)
	of := func(cluster string) map[string]string { return map[string]string{clusterv1.ClusterNameLabel: cluster} }
	r, _ := setupFixture(t,
		setupAgentMachine("ns", "c1-a", "1", of("c1")),
		setupAgentMachine("ns", "c1-b", "2", of("c1")),
		setupAgentMachine("ns", "c2-a", "3", of("c2")),
		setupAgentMachine("other", "c1-a", "4", of("c1")),
		setupAgentMachine("ns", "unlabelled", "5", nil),
	)
	ctx := context.Background()
	ac := &infrav1.AgentCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c1", Labels: of("c1")}}
	g.Expect(r.agentClusterToAgentMachines(ctx, ac)).To(ConsistOf(req("ns", "c1-a"), req("ns", "c1-b")))
	g.Expect(r.agentClusterToAgentMachines(ctx, &infrav1.AgentCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c1"}})).To(BeNil())
	g.Expect(r.agentClusterToAgentMachines(ctx, &infrav1.AgentCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c3", Labels: of("c3")}})).To(BeEmpty())
	failingLists(r)
	g.Expect(r.agentClusterToAgentMachines(ctx, ac)).To(BeNil())
}

// TestClaimOwner: the claiming AgentMachine is the one the owner annotation names (no list), else
// the one whose UID a claim label holds, ours or upstream's.
func TestClaimOwner(t *testing.T) {
	owner := setupAgentMachine("ns", "m1", "am-uid", nil)
	for _, tt := range []struct {
		name      string
		agent     *aiv1beta1.Agent
		failList  bool
		want      *reconcile.Request
		wantLists int
	}{
		{name: "owner annotation", agent: func() *aiv1beta1.Agent {
			a := testAgent("a1")
			a.Annotations = map[string]string{infrav1.ClaimOwnerAnnotation: "elsewhere/m9"}
			return a
		}(), want: &reconcile.Request{NamespacedName: client.ObjectKey{Namespace: "elsewhere", Name: "m9"}}},
		{name: "claim label", agent: testAgent("a1", withLabel(infrav1.AgentClaimedByLabel, "am-uid")),
			want: &reconcile.Request{NamespacedName: client.ObjectKey{Namespace: "ns", Name: "m1"}}, wantLists: 1},
		{name: "upstream claim label", agent: testAgent("a1", withLabel(infrav1.UpstreamAgentClaimLabel, "am-uid")),
			want: &reconcile.Request{NamespacedName: client.ObjectKey{Namespace: "ns", Name: "m1"}}, wantLists: 1},
		{name: "upstream claim label by name", agent: func() *aiv1beta1.Agent {
			a := testAgent("a1", withLabel(infrav1.UpstreamAgentClaimLabel, "m1"))
			a.Annotations = map[string]string{infrav1.UpstreamAgentClaimNamespaceAnnotation: "ns"}
			return a
		}(), want: &reconcile.Request{NamespacedName: client.ObjectKey{Namespace: "ns", Name: "m1"}}, wantLists: 1},
		{name: "upstream claim label by name, beside ours", agent: func() *aiv1beta1.Agent {
			a := testAgent("a1", withLabel(infrav1.UpstreamAgentClaimLabel, "m1"), withLabel(infrav1.AgentClaimedByLabel, "gone-uid"))
			a.Annotations = map[string]string{infrav1.UpstreamAgentClaimNamespaceAnnotation: "ns"}
			return a
		}(), wantLists: 1},
		{name: "an owner annotation without a namespace", agent: func() *aiv1beta1.Agent {
			a := testAgent("a1", withLabel(infrav1.AgentClaimedByLabel, "am-uid"))
			a.Annotations = map[string]string{infrav1.ClaimOwnerAnnotation: "m9"}
			return a
		}(), want: &reconcile.Request{NamespacedName: client.ObjectKey{Namespace: "ns", Name: "m1"}}, wantLists: 1},
		{name: "the claiming AgentMachine is gone", agent: testAgent("a1", withLabel(infrav1.AgentClaimedByLabel, "gone-uid")), wantLists: 1},
		{name: "free", agent: testAgent("a1")},
		{name: "the list fails", agent: testAgent("a1", withLabel(infrav1.AgentClaimedByLabel, "am-uid")), failList: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			r, lists := setupFixture(t, owner)
			if tt.failList {
				failingLists(r)
			}
			g.Expect(r.claimOwner(context.Background(), tt.agent)).To(Equal(tt.want))
			g.Expect(*lists).To(HaveLen(tt.wantLists))
		})
	}
}

// waitingMachines are AgentMachines in two namespaces: waiting ones with and without selectors
// and watch-filter labels, and ones that wait for nothing.
func waitingMachines() []client.Object {
	selector := func(s *metav1.LabelSelector) func(*infrav1.AgentMachine) {
		return func(am *infrav1.AgentMachine) { am.Spec.AgentLabelSelector = s }
	}
	return []client.Object{
		setupAgentMachine("ns", "any", "1", nil),
		setupAgentMachine("other", "any", "2", nil),
		setupAgentMachine("ns", "rack-r1", "3", nil, selector(&metav1.LabelSelector{MatchLabels: map[string]string{"rack": "r1"}})),
		setupAgentMachine("ns", "rack-r2", "4", nil, selector(&metav1.LabelSelector{MatchLabels: map[string]string{"rack": "r2"}})),
		setupAgentMachine("ns", "invalid-selector", "5", nil, selector(&metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "rack", Operator: "Bogus"}}})),
		setupAgentMachine("ns", "filtered", "6", map[string]string{clusterv1.WatchLabel: "mine"}),
		setupAgentMachine("ns", "claimed", "7", nil, func(am *infrav1.AgentMachine) {
			am.Status.AgentRef = &infrav1.AgentReference{Namespace: "agents", Name: "a9"}
		}),
		setupAgentMachine("ns", "provider-id", "8", nil, func(am *infrav1.AgentMachine) { am.Spec.ProviderID = "agent://gone" }),
		// Found no Agent that fits, and says why.
		setupAgentMachine("ns", "explained", "9", nil, selector(&metav1.LabelSelector{MatchLabels: map[string]string{"rack": "r2"}}), explainedNoFit),
		setupAgentMachine("other", "explained", "10", nil, selector(&metav1.LabelSelector{MatchLabels: map[string]string{"rack": "r2"}}), explainedNoFit),
		setupAgentMachine("ns", "explained-filtered", "11", map[string]string{clusterv1.WatchLabel: "mine"},
			selector(&metav1.LabelSelector{MatchLabels: map[string]string{"rack": "r3"}}), explainedNoFit),
	}
}

// explainedNoFit gives an AgentMachine the condition of one that found no Agent that fits.
func explainedNoFit(am *infrav1.AgentMachine) {
	setReserved(am, metav1.ConditionFalse, infrav1.NoSuitableAgentsReason, "0 of 3 agents fit: 3 not matching agentLabelSelector")
}

// mapperScope is how a mapper's test sets up the AgentMachine reconciler over waitingMachines:
// its watch filter, its Agents' scope (--agent-namespace "agents" unless ownNamespace, or a
// shared pool) and lists that fail.
type mapperScope struct {
	watchFilter string
	// ownNamespace: no --agent-namespace, so each AgentMachine takes its own namespace's.
	ownNamespace bool
	shared       bool
	failList     bool
}

func (m mapperScope) reconciler(t *testing.T) *AgentMachineReconciler {
	t.Helper()
	r, _ := setupFixture(t, waitingMachines()...)
	r.WatchFilterValue = m.watchFilter
	if !m.ownNamespace {
		r.AgentNamespace = "agents"
	}
	r.SharedAgentPool = m.shared
	if m.failList {
		failingLists(r)
	}
	return r
}

// expectRequests checks the requests a mapper returned: none when want is nil.
func expectRequests(t *testing.T, got, want []reconcile.Request) {
	t.Helper()
	if want == nil {
		NewWithT(t).Expect(got).To(BeEmpty())
		return
	}
	NewWithT(t).Expect(got).To(ConsistOf(want))
}

// TestExplainedWaiting: an Agent wakes the waiting AgentMachines that say why nothing fits them
// whatever their selector, only those whose scope holds it and that are in the watch filter.
func TestExplainedWaiting(t *testing.T) {
	for _, tt := range []struct {
		name    string
		agentNS string
		mapperScope
		want []reconcile.Request
	}{
		{name: "the agent namespace", agentNS: "agents",
			want: []reconcile.Request{req("ns", "explained"), req("other", "explained"), req("ns", "explained-filtered")}},
		{name: "a tenant's own namespace", agentNS: "ns", mapperScope: mapperScope{ownNamespace: true},
			want: []reconcile.Request{req("ns", "explained"), req("ns", "explained-filtered")}},
		{name: "a namespace of no AgentMachine", agentNS: "elsewhere", mapperScope: mapperScope{ownNamespace: true}},
		{name: "a watch filter", agentNS: "agents", mapperScope: mapperScope{watchFilter: "mine"}, want: []reconcile.Request{req("ns", "explained-filtered")}},
		{name: "the list fails", agentNS: "agents", mapperScope: mapperScope{failList: true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := testAgent("a1")
			a.Namespace = tt.agentNS
			expectRequests(t, tt.reconciler(t).explainedWaiting(context.Background(), a), tt.want)
		})
	}
}

// TestAgentToAgentMachines: a claimed Agent wakes its AgentMachine only; a free, usable one the
// waiting AgentMachines that may take it (--agent-namespace "agents" here, unless the row says
// otherwise) whose selector it matches, in the watch filter; one that cannot be claimed wakes none.
func TestAgentToAgentMachines(t *testing.T) {
	inNS := func(ns string, a *aiv1beta1.Agent) *aiv1beta1.Agent {
		a.Namespace = ns
		return a
	}
	for _, tt := range []struct {
		name  string
		agent *aiv1beta1.Agent
		mapperScope
		want []reconcile.Request
	}{
		{name: "free, in one tenant's namespace", agent: inNS("ns", testAgent("a1")), mapperScope: mapperScope{ownNamespace: true},
			want: []reconcile.Request{req("ns", "any"), req("ns", "filtered")}},
		{name: "free, in another tenant's namespace", agent: inNS("other", testAgent("a1")), mapperScope: mapperScope{ownNamespace: true},
			want: []reconcile.Request{req("other", "any")}},
		{name: "free, in a namespace of no AgentMachine", agent: testAgent("a1"), mapperScope: mapperScope{ownNamespace: true}},
		{name: "free, a shared pool", agent: testAgent("a1"), mapperScope: mapperScope{ownNamespace: true, shared: true},
			want: []reconcile.Request{req("ns", "any"), req("other", "any"), req("ns", "filtered")}},
		{name: "claimed", agent: func() *aiv1beta1.Agent {
			a := testAgent("a1", withLabel(infrav1.AgentClaimedByLabel, "7"))
			a.Annotations = map[string]string{infrav1.ClaimOwnerAnnotation: "ns/claimed"}
			return a
		}(), want: []reconcile.Request{req("ns", "claimed")}},
		{name: "free", agent: testAgent("a1", withLabel("rack", "r1")),
			want: []reconcile.Request{req("ns", "any"), req("other", "any"), req("ns", "rack-r1"), req("ns", "filtered")}},
		{name: "free, unlabelled", agent: testAgent("a1"),
			want: []reconcile.Request{req("ns", "any"), req("other", "any"), req("ns", "filtered")}},
		{name: "free, with a watch filter", agent: testAgent("a1", withLabel("rack", "r2")), mapperScope: mapperScope{watchFilter: "mine"},
			want: []reconcile.Request{req("ns", "filtered")}},
		{name: "not approved", agent: func() *aiv1beta1.Agent {
			a := testAgent("a1")
			a.Spec.Approved = false
			return a
		}()},
		{name: "disconnected", agent: testAgent("a1", withCondition(aiv1beta1.ConnectedCondition, corev1.ConditionFalse))},
		{name: "the list fails", agent: testAgent("a1"), mapperScope: mapperScope{failList: true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			expectRequests(t, tt.reconciler(t).agentToAgentMachines(context.Background(), tt.agent), tt.want)
		})
	}
}

// recordingQueue records the requests a handler adds.
type recordingQueue struct {
	workqueue.TypedRateLimitingInterface[reconcile.Request]
	added []reconcile.Request
}

func (q *recordingQueue) Add(r reconcile.Request) { q.added = append(q.added, r) }

// TestAgentEventHandler: every event of a claimed Agent wakes the AgentMachine that claimed it
// (both, when the claim moves); the waiting AgentMachines wake only when an Agent becomes
// claimable or a claimable one changes its labels or architecture; those that found nothing that
// fits and say why also when an Agent arrives, goes or changes its standing (a claim, approval,
// labels, cluster); none on status updates nor for the Agents of the cache's initial list.
func TestAgentEventHandler(t *testing.T) {
	owned := func(owner string) func(*aiv1beta1.Agent) {
		return func(a *aiv1beta1.Agent) {
			a.Labels[infrav1.AgentClaimedByLabel] = owner + "-uid"
			a.Annotations = map[string]string{infrav1.ClaimOwnerAnnotation: "ns/" + owner}
		}
	}
	agent := func(mutate ...func(*aiv1beta1.Agent)) *aiv1beta1.Agent {
		a := testAgent("a1")
		for _, m := range mutate {
			m(a)
		}
		return a
	}
	notApproved := func(a *aiv1beta1.Agent) { a.Spec.Approved = false }
	waiting := []reconcile.Request{req("ns", "any"), req("other", "any"), req("ns", "filtered")}
	// explained: the AgentMachines that found no Agent that fits, whose counts an Agent's arrival,
	// deletion or change of standing changes.
	explained := []reconcile.Request{req("ns", "explained"), req("other", "explained"), req("ns", "explained-filtered")}
	with := func(reqs ...[]reconcile.Request) []reconcile.Request {
		var out []reconcile.Request
		for _, r := range reqs {
			out = append(out, r...)
		}
		return out
	}
	m1 := []reconcile.Request{req("ns", "m1")}
	type eventKind int
	const (
		create eventKind = iota
		initial
		update
		deleted
		generic
	)
	for _, tt := range []struct {
		name     string
		kind     eventKind
		old, new *aiv1beta1.Agent
		want     []reconcile.Request
	}{
		{name: "create, claimed", kind: create, new: agent(owned("m1")), want: with(m1, explained)},
		{name: "create, free", kind: create, new: agent(), want: with(waiting, explained)},
		{name: "create, not approved", kind: create, new: agent(notApproved), want: explained},
		{name: "initial list, claimed", kind: initial, new: agent(owned("m1")), want: m1},
		{name: "initial list, free", kind: initial, new: agent()},
		{name: "update, claimed", kind: update, old: agent(owned("m1")), new: agent(owned("m1")), want: m1},
		{name: "update, claimed by another", kind: update, old: agent(owned("m1")), new: agent(owned("m2")),
			want: with(m1, []reconcile.Request{req("ns", "m2")}, explained)},
		{name: "update, newly claimed", kind: update, old: agent(), new: agent(owned("m1")), want: with(m1, explained)},
		{name: "update, released", kind: update, old: agent(owned("m1")), new: agent(), want: with(m1, waiting, explained)},
		{name: "update, released not approved", kind: update, old: agent(owned("m1")), new: agent(notApproved), want: with(m1, explained)},
		{name: "update, approved", kind: update, old: agent(notApproved), new: agent(), want: with(waiting, explained)},
		{name: "update, connected", kind: update, old: agent(func(a *aiv1beta1.Agent) {
			withCondition(aiv1beta1.ConnectedCondition, corev1.ConditionFalse)(a)
		}), new: agent(), want: with(waiting, explained)},
		{name: "update, status of a free Agent", kind: update, old: agent(), new: agent(func(a *aiv1beta1.Agent) {
			a.Status.DebugInfo.State = "known"
			a.Status.Inventory.Memory.PhysicalBytes = 64 << 30
		})},
		{name: "update, status of a claimed Agent", kind: update, old: agent(owned("m1")), new: agent(owned("m1"), func(a *aiv1beta1.Agent) {
			a.Status.DebugInfo.State = "installing"
		}), want: m1},
		{name: "update, bound to a cluster", kind: update, old: agent(notApproved), new: agent(notApproved, func(a *aiv1beta1.Agent) {
			a.Spec.ClusterDeploymentName = &aiv1beta1.ClusterReference{Namespace: "ns", Name: "c1"}
		}), want: explained},
		{name: "update, labels of a free Agent", kind: update, old: agent(), new: agent(withLabel("rack", "r1")),
			want: with([]reconcile.Request{req("ns", "rack-r1")}, waiting, explained)},
		{name: "update, architecture of a free Agent", kind: update, old: agent(), new: agent(func(a *aiv1beta1.Agent) {
			a.Status.Inventory.Cpu.Architecture = "aarch64"
		}), want: with(waiting, explained)},
		{name: "update, labels of an Agent not approved", kind: update, old: agent(notApproved), new: agent(notApproved, withLabel("rack", "r1")),
			want: explained},
		{name: "delete, claimed", kind: deleted, new: agent(owned("m1")), want: with(m1, explained)},
		{name: "delete, free", kind: deleted, new: agent(), want: explained},
		{name: "generic, free", kind: generic, new: agent(), want: waiting},
		{name: "generic, claimed", kind: generic, new: agent(owned("m1")), want: m1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := context.Background()
			r, _ := setupFixture(t, waitingMachines()...)
			r.AgentNamespace = "agents" // where testAgent's Agents are
			r.pool = newAgentPool()
			h := r.agentEventHandler()
			q := &recordingQueue{}
			switch tt.kind {
			case create, initial:
				h.Create(ctx, event.TypedCreateEvent[*aiv1beta1.Agent]{Object: tt.new, IsInInitialList: tt.kind == initial}, q)
			case update:
				h.Update(ctx, event.TypedUpdateEvent[*aiv1beta1.Agent]{ObjectOld: tt.old, ObjectNew: tt.new}, q)
			case deleted:
				r.pool.observe(tt.new)
				h.Delete(ctx, event.TypedDeleteEvent[*aiv1beta1.Agent]{Object: tt.new}, q)
			case generic:
				h.Generic(ctx, event.TypedGenericEvent[*aiv1beta1.Agent]{Object: tt.new}, q)
			}
			if tt.want == nil {
				g.Expect(q.added).To(BeEmpty())
			} else {
				g.Expect(q.added).To(ConsistOf(tt.want))
			}
			// The pool follows the Agent: a free, usable one is pooled, none after its deletion.
			_, pooled := r.pool.in[client.ObjectKeyFromObject(tt.new)]
			g.Expect(pooled).To(Equal(tt.kind != deleted && agentUsable(tt.new) == ""))
		})
	}
}

// TestObserveAgent: the pool holds the free Agents of --agent-namespace only, and forgets one that
// is claimed; without a pool (before SetupWithManager) nothing happens.
func TestObserveAgent(t *testing.T) {
	g := NewWithT(t)
	(&AgentMachineReconciler{}).observeAgent(testAgent("a1")) // no pool: no panic

	r := &AgentMachineReconciler{AgentNamespace: "agents", pool: newAgentPool()}
	pooled := func(a *aiv1beta1.Agent) bool {
		_, ok := r.pool.in[client.ObjectKeyFromObject(a)]
		return ok
	}
	a1 := testAgent("a1")
	r.observeAgent(a1)
	g.Expect(pooled(a1)).To(BeTrue())
	elsewhere := testAgent("a2")
	elsewhere.Namespace = "other"
	r.pool.observe(elsewhere) // pooled before --agent-namespace applied
	r.observeAgent(elsewhere)
	g.Expect(pooled(elsewhere)).To(BeFalse(), "an Agent outside --agent-namespace")
	r.observeAgent(testAgent("a1", withLabel(infrav1.AgentClaimedByLabel, "u")))
	g.Expect(pooled(a1)).To(BeFalse(), "claimed")

	r.AgentNamespace = ""
	r.observeAgent(elsewhere)
	g.Expect(pooled(elsewhere)).To(BeTrue(), "every namespace without --agent-namespace")
}

// TestAgentClusterReferencesChanged: an AgentCluster's update wakes its AgentMachines only when
// what they read of it changes (its spec, the ClusterDeployment its status records, its labels,
// its deletion), not on its conditions.
func TestAgentClusterReferencesChanged(t *testing.T) {
	base := func() *infrav1.AgentCluster {
		return &infrav1.AgentCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c1", Generation: 1,
			Labels: map[string]string{clusterv1.ClusterNameLabel: "c1"}}}
	}
	now := metav1.Now()
	for _, tt := range []struct {
		name   string
		mutate func(*infrav1.AgentCluster)
		want   bool
	}{
		{"conditions", func(ac *infrav1.AgentCluster) {
			ac.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Ready"}}
		}, false},
		{"provisioned", func(ac *infrav1.AgentCluster) { ac.Status.Initialization.Provisioned = ptr.To(true) }, false},
		{"spec", func(ac *infrav1.AgentCluster) { ac.Generation = 2 }, true},
		{"the recorded ClusterDeployment", func(ac *infrav1.AgentCluster) {
			ac.Status.ClusterDeploymentRef = infrav1.ClusterDeploymentReference{Name: "c1-cd"}
		}, true},
		{"labels", func(ac *infrav1.AgentCluster) { ac.Labels[clusterv1.ClusterNameLabel] = "c2" }, true},
		{"deletion", func(ac *infrav1.AgentCluster) { ac.DeletionTimestamp = &now }, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			old, ac := base(), base()
			tt.mutate(ac)
			p := agentClusterReferencesChanged()
			NewWithT(t).Expect(p.Update(event.UpdateEvent{ObjectOld: old, ObjectNew: ac})).To(Equal(tt.want))
			NewWithT(t).Expect(p.Create(event.CreateEvent{Object: ac})).To(BeTrue())
			NewWithT(t).Expect(p.Delete(event.DeleteEvent{Object: ac})).To(BeTrue())
		})
	}
}
