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
	"fmt"
	"slices"
	"testing"

	. "github.com/onsi/gomega"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	conditionsv1 "github.com/openshift/custom-resource-status/conditions/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache/informertest"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	infrav1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/infrastructure/v1beta1"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/metrics"
)

type agentOpt func(*aiv1beta1.Agent)

func testAgent(name string, opts ...agentOpt) *aiv1beta1.Agent {
	a := &aiv1beta1.Agent{
		ObjectMeta: metav1.ObjectMeta{Namespace: "agents", Name: name, UID: types.UID("uid-" + name), Labels: map[string]string{}},
		Spec:       aiv1beta1.AgentSpec{Approved: true},
	}
	a.Status.Conditions = []conditionsv1.Condition{
		{Type: aiv1beta1.ConnectedCondition, Status: corev1.ConditionTrue},
		{Type: aiv1beta1.ValidatedCondition, Status: corev1.ConditionTrue},
	}
	a.Status.Inventory.Cpu = aiv1beta1.HostCPU{Count: 8, Architecture: "x86_64"}
	a.Status.Inventory.Memory.PhysicalBytes = 32 << 30
	for _, o := range opts {
		o(a)
	}
	return a
}

func withLabel(k, v string) agentOpt { return func(a *aiv1beta1.Agent) { a.Labels[k] = v } }
func withCPU(n int64) agentOpt       { return func(a *aiv1beta1.Agent) { a.Status.Inventory.Cpu.Count = n } }
func withCondition(t conditionsv1.ConditionType, s corev1.ConditionStatus) agentOpt {
	return func(a *aiv1beta1.Agent) {
		conditionsv1.SetStatusConditionNoHeartbeat(&a.Status.Conditions, conditionsv1.Condition{Type: t, Status: s})
	}
}

func TestAgentRequestMismatch(t *testing.T) {
	sel, _ := labels.Parse("rack=r1")
	req := agentRequest{namespace: "agents", selector: sel, failureDomain: "fd1", architecture: "amd64", clusterDeployment: "ns/cd"}
	fits := []agentOpt{withLabel("rack", "r1"), withLabel(infrav1.FailureDomainLabel, "fd1")}
	tests := []struct {
		name string
		opts []agentOpt
		want string
	}{
		{"fits", nil, ""},
		{"another namespace", []agentOpt{func(a *aiv1beta1.Agent) { a.Namespace = "tenant-b" }}, "in another namespace"},
		{"not approved", []agentOpt{func(a *aiv1beta1.Agent) { a.Spec.Approved = false }}, "not approved"},
		{"disconnected", []agentOpt{withCondition(aiv1beta1.ConnectedCondition, corev1.ConditionFalse)}, "not connected"},
		{"not validated", []agentOpt{withCondition(aiv1beta1.ValidatedCondition, corev1.ConditionFalse)}, "not validated"},
		{"claimed", []agentOpt{withLabel(infrav1.AgentClaimedByLabel, "x")}, "claimed"},
		// Bound to this very cluster by cluster-api-provider-agent before the switch: still taken.
		{"claimed by upstream", []agentOpt{withLabel(infrav1.UpstreamAgentClaimLabel, "x"), func(a *aiv1beta1.Agent) {
			a.Spec.ClusterDeploymentName = &aiv1beta1.ClusterReference{Namespace: "ns", Name: "cd"}
		}}, "claimed"},
		{"other cluster", []agentOpt{func(a *aiv1beta1.Agent) {
			a.Spec.ClusterDeploymentName = &aiv1beta1.ClusterReference{Namespace: "ns", Name: "other"}
		}}, "bound to another cluster"},
		{"same cluster", []agentOpt{func(a *aiv1beta1.Agent) {
			a.Spec.ClusterDeploymentName = &aiv1beta1.ClusterReference{Namespace: "ns", Name: "cd"}
		}}, ""},
		{"selector", []agentOpt{withLabel("rack", "r2")}, "not matching agentLabelSelector"},
		{"failure domain", []agentOpt{withLabel(infrav1.FailureDomainLabel, "fd2")}, "in another failure domain"},
		{"architecture", []agentOpt{func(a *aiv1beta1.Agent) { a.Status.Inventory.Cpu.Architecture = "aarch64" }}, "of another CPU architecture"},
		{"prepared by a bootstrap config", []agentOpt{withLabel(bootstrapv1.AgentConfigLabel, "m1")}, "prepared for another Machine"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(req.mismatch(testAgent("a", append(append([]agentOpt{}, fits...), tt.opts...)...))).To(Equal(tt.want))
		})
	}
}

// TestAgentScope: --agent-namespace names the one namespace of Agents for every AgentMachine;
// without it an AgentMachine takes its own namespace's, or every namespace's with
// --shared-agent-pool; a request without a namespace matches an Agent of any namespace.
func TestAgentScope(t *testing.T) {
	for _, tc := range []struct {
		agentNamespace string
		shared         bool
		want           string
	}{
		{want: "tenant-a"},
		{shared: true, want: ""},
		{agentNamespace: "hosts", want: "hosts"},
		{agentNamespace: "hosts", shared: true, want: "hosts"},
	} {
		t.Run(fmt.Sprintf("%q shared=%v", tc.agentNamespace, tc.shared), func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(agentScope(tc.agentNamespace, tc.shared, "tenant-a")).To(Equal(tc.want))
		})
	}
	g := NewWithT(t)
	g.Expect(agentRequest{}.mismatch(testAgent("a"))).To(BeEmpty(), "every namespace")
	g.Expect(agentRequest{namespace: "tenant-a"}.mismatch(testAgent("a"))).To(Equal("in another namespace"))
}

// A Machine bootstrapped by an OpenshiftAssistedConfig takes only the Agent that config
// recognized and approved (with that Machine's role and hostname), never another Machine's.
func TestAgentRequestBootstrapConfig(t *testing.T) {
	req := agentRequest{clusterDeployment: "ns/cd", bootstrapConfig: "agents/m1"}
	tests := []struct {
		name string
		opts []agentOpt
		want string
	}{
		{"prepared for this Machine", []agentOpt{withLabel(bootstrapv1.AgentConfigLabel, "m1")}, ""},
		{"prepared for another Machine", []agentOpt{withLabel(bootstrapv1.AgentConfigLabel, "m2")}, "prepared for another Machine"},
		{"same config name in another namespace", []agentOpt{withLabel(bootstrapv1.AgentConfigLabel, "m1"),
			func(a *aiv1beta1.Agent) { a.Namespace = "other" }}, "prepared for another Machine"},
		{"approved by hand", nil, "not prepared by this Machine's OpenshiftAssistedConfig"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(req.mismatch(testAgent("a", tt.opts...))).To(Equal(tt.want))
		})
	}
}

func TestSummaryOfNoFit(t *testing.T) {
	g := NewWithT(t)
	sel, _ := labels.Parse("rack=r9")
	agents := []aiv1beta1.Agent{*testAgent("a"), *testAgent("b"), *testAgent("c", withLabel(infrav1.AgentClaimedByLabel, "x"))}
	g.Expect(summarizeFit(agentRequest{selector: sel}, agents)).To(Equal("0 of 3 agents fit: 1 claimed, 2 not matching agentLabelSelector"))
	g.Expect(summarizeFit(agentRequest{}, agents)).To(Equal("2 of 3 agents fit: 1 claimed"))
}

func TestBracketIPv6(t *testing.T) {
	for in, want := range map[string]string{
		"https://fd00::1/config/worker":           "https://[fd00::1]/config/worker",
		"https://fd00::1":                         "https://[fd00::1]",
		"https://[fd00::1]:22623/config/worker":   "https://[fd00::1]:22623/config/worker",
		"https://192.168.1.1:22623/config/worker": "https://192.168.1.1:22623/config/worker",
		"https://ignition.example.com/x":          "https://ignition.example.com/x",
	} {
		if got := bracketIPv6(in); got != want {
			t.Errorf("bracketIPv6(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestBaseDomain(t *testing.T) {
	g := NewWithT(t)
	g.Expect(baseDomain("c1", "api.c1.example.com")).To(Equal("example.com"))
	g.Expect(baseDomain("c1", "api.other.example.com")).To(Equal("other.example.com"))
	g.Expect(baseDomain("c1", "192.168.1.5")).To(Equal("local"))
}

// TestCountAgents: capoa_agents counts from the Agent informer's events, nothing before its
// first list, and follows updates and deletions (a tombstone's too).
func TestCountAgents(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	scheme := runtime.NewScheme()
	g.Expect(aiv1beta1.AddToScheme(scheme)).To(Succeed())
	informers := &informertest.FakeInformers{Scheme: scheme}
	count, err := CountAgents(ctx, informers)
	g.Expect(err).NotTo(HaveOccurred())
	informer, err := informers.FakeInformerFor(ctx, &aiv1beta1.Agent{})
	g.Expect(err).NotTo(HaveOccurred())
	informer.Synced = false // its first list is under way

	state := func(s string) agentOpt { return func(a *aiv1beta1.Agent) { a.Status.DebugInfo.State = s } }
	notApproved := func(a *aiv1beta1.Agent) { a.Spec.Approved = false }
	free1 := testAgent("free-1", state("known"))
	lost := testAgent("lost", state("disconnected"), withCondition(aiv1beta1.ConnectedCondition, corev1.ConditionFalse))
	for _, a := range []*aiv1beta1.Agent{
		free1,
		testAgent("free-2", state("known")),
		testAgent("claimed", state("installing"), withLabel(infrav1.AgentClaimedByLabel, "u")),
		testAgent("upstream", state("installed"), withLabel(infrav1.UpstreamAgentClaimLabel, "u2")),
		testAgent("new", notApproved),
		lost,
	} {
		informer.Add(a)
	}
	counts, err := count(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(counts).To(BeEmpty(), "not synced yet")

	informer.Synced = true
	counts, err = count(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(counts).To(Equal([]metrics.Count{
		{Labels: []string{"agents", "claimed", "installed"}, Value: 1},
		{Labels: []string{"agents", "claimed", "installing"}, Value: 1},
		{Labels: []string{"agents", "free", "known"}, Value: 2},
		{Labels: []string{"agents", "not-approved", "unknown"}, Value: 1},
		{Labels: []string{"agents", "not-connected", "disconnected"}, Value: 1},
	}))

	claimed := free1.DeepCopy()
	claimed.Labels = map[string]string{infrav1.AgentClaimedByLabel: "u3"}
	informer.Update(free1, claimed)
	informer.Delete(lost)
	counts, err = count(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(counts).To(Equal([]metrics.Count{
		{Labels: []string{"agents", "claimed", "installed"}, Value: 1},
		{Labels: []string{"agents", "claimed", "installing"}, Value: 1},
		{Labels: []string{"agents", "claimed", "known"}, Value: 1},
		{Labels: []string{"agents", "free", "known"}, Value: 1},
		{Labels: []string{"agents", "not-approved", "unknown"}, Value: 1},
	}))

	// A deletion the informer missed comes as the last state it knew, in a tombstone.
	c := &agentCounter{counts: map[agentTally]int{}}
	c.add(lost, 1)
	c.add(toolscache.DeletedFinalStateUnknown{Key: "agents/lost", Obj: lost}, -1)
	g.Expect(c.snapshot()).To(BeEmpty())
}

// TestClaimedBy: an Agent is held by the AgentMachine whose UID our claim label holds, or whose
// UID or namespace and name upstream's claim label and namespace annotation hold (its v1alpha1
// releases wrote the UID, the later ones the name); by no other.
func TestClaimedBy(t *testing.T) {
	am := &infrav1.AgentMachine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m1", UID: "uid-1"}}
	for _, tc := range []struct {
		name        string
		labels      map[string]string
		annotations map[string]string
		want        bool
		keys        []string
	}{
		{name: "not claimed", want: false},
		{name: "ours", labels: map[string]string{infrav1.AgentClaimedByLabel: "uid-1"}, want: true, keys: []string{"uid-1"}},
		{name: "ours, another AgentMachine", labels: map[string]string{infrav1.AgentClaimedByLabel: "uid-2"}, want: false, keys: []string{"uid-2"}},
		{name: "ours wins over upstream's", labels: map[string]string{infrav1.AgentClaimedByLabel: "uid-2", infrav1.UpstreamAgentClaimLabel: "m1"},
			annotations: map[string]string{infrav1.UpstreamAgentClaimNamespaceAnnotation: "ns"}, want: false, keys: []string{"uid-2"}},
		{name: "upstream v1alpha1, by UID", labels: map[string]string{infrav1.UpstreamAgentClaimLabel: "uid-1"}, want: true, keys: []string{"uid-1"}},
		{name: "upstream, by name", labels: map[string]string{infrav1.UpstreamAgentClaimLabel: "m1"},
			annotations: map[string]string{infrav1.UpstreamAgentClaimNamespaceAnnotation: "ns"}, want: true, keys: []string{"m1", "ns/m1"}},
		{name: "upstream, same name in another namespace", labels: map[string]string{infrav1.UpstreamAgentClaimLabel: "m1"},
			annotations: map[string]string{infrav1.UpstreamAgentClaimNamespaceAnnotation: "other"}, want: false, keys: []string{"m1", "other/m1"}},
		{name: "upstream, by name without its namespace", labels: map[string]string{infrav1.UpstreamAgentClaimLabel: "m1"}, want: false, keys: []string{"m1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			agent := &aiv1beta1.Agent{ObjectMeta: metav1.ObjectMeta{Labels: tc.labels, Annotations: tc.annotations}}
			if got := claimedBy(agent, am); got != tc.want {
				t.Errorf("claimedBy = %v, want %v", got, tc.want)
			}
			if got := claimKeys(agent); !slices.Equal(got, tc.keys) {
				t.Errorf("claimKeys = %q, want %q", got, tc.keys)
			}
			if got := claimUID(agent) != ""; got != (len(tc.keys) > 0) {
				t.Errorf("claimed = %v, want %v", got, len(tc.keys) > 0)
			}
		})
	}
}

// TestHeldBy: a claim by the AgentMachine's UID holds wherever the Agent is (a claim made before
// the pool was narrowed, which the release must still undo); upstream's claim by name holds only
// in the AgentMachine's agentScope, since whoever edits another namespace's Agents can write it.
func TestHeldBy(t *testing.T) {
	am := &infrav1.AgentMachine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m1", UID: "uid-1"}}
	byUID := map[string]string{infrav1.AgentClaimedByLabel: "uid-1"}
	byName := map[string]string{infrav1.UpstreamAgentClaimLabel: "m1"}
	for _, tc := range []struct {
		name      string
		namespace string
		labels    map[string]string
		scope     string
		want      bool
	}{
		{name: "by UID, in scope", namespace: "ns", labels: byUID, scope: "ns", want: true},
		{name: "by UID, another namespace", namespace: "other", labels: byUID, scope: "ns", want: true},
		{name: "by name, in scope", namespace: "ns", labels: byName, scope: "ns", want: true},
		{name: "by name, another namespace", namespace: "other", labels: byName, scope: "ns", want: false},
		{name: "by name, a shared pool", namespace: "other", labels: byName, scope: "", want: true},
		{name: "not claimed", namespace: "ns", scope: "ns", want: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			agent := &aiv1beta1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: tc.namespace, Name: "a1", Labels: tc.labels,
				Annotations: map[string]string{infrav1.UpstreamAgentClaimNamespaceAnnotation: "ns"}}}
			if got := heldBy(agent, am, tc.scope); got != tc.want {
				t.Errorf("heldBy = %v, want %v", got, tc.want)
			}
		})
	}
}
