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
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/infrastructure/v1beta1"
)

func TestAgentClaimIndex(t *testing.T) {
	g := NewWithT(t)
	g.Expect(indexAgentClaim(testAgent("a"))).To(BeEmpty())
	g.Expect(indexAgentClaim(testAgent("a", withLabel(infrav1.AgentClaimedByLabel, "u")))).To(Equal([]string{"u"}))
	// A claim cluster-api-provider-agent recorded is a claim, found under the same AgentMachine UID.
	g.Expect(indexAgentClaim(testAgent("a", withLabel(infrav1.UpstreamAgentClaimLabel, "u")))).To(Equal([]string{"u"}))
}

// TestAgentClaimIndexPrefersOurClaim: an Agent with both claim labels is indexed under ours only;
// an object that is not an Agent is not indexed.
func TestAgentClaimIndexPrefersOurClaim(t *testing.T) {
	g := NewWithT(t)
	g.Expect(indexAgentClaim(testAgent("a", withLabel(infrav1.AgentClaimedByLabel, "ours"),
		withLabel(infrav1.UpstreamAgentClaimLabel, "upstream")))).To(Equal([]string{"ours"}))
	g.Expect(indexAgentClaim(testAgent("a", withLabel(infrav1.AgentClaimedByLabel, ""),
		withLabel(infrav1.UpstreamAgentClaimLabel, "upstream")))).To(Equal([]string{"upstream"}), "an empty claim label is no claim")
	g.Expect(indexAgentClaim(&infrav1.AgentMachine{ObjectMeta: metav1.ObjectMeta{
		Labels: map[string]string{infrav1.AgentClaimedByLabel: "u"}}})).To(BeNil())
}

func TestAgentMachineUIDIndex(t *testing.T) {
	NewWithT(t).Expect(indexAgentMachineUID(&infrav1.AgentMachine{ObjectMeta: metav1.ObjectMeta{UID: "am-uid"}})).
		To(Equal([]string{"am-uid"}))
}

// TestWaitingIndex: an AgentMachine waits for an Agent while it is not deleted, has no agentRef
// and no providerID; it is indexed under "true" then, and not at all otherwise.
func TestWaitingIndex(t *testing.T) {
	now := metav1.Now()
	for _, tt := range []struct {
		name   string
		mutate func(*infrav1.AgentMachine)
		want   []string
	}{
		{"new", func(*infrav1.AgentMachine) {}, []string{"true"}},
		{"found none that fits", explainedNoFit, []string{"true", waitingExplained}},
		{"another reason to wait", func(am *infrav1.AgentMachine) {
			setReserved(am, metav1.ConditionFalse, infrav1.WaitingForBootstrapDataReason, "Waiting for bootstrap data Secret m1")
		}, []string{"true"}},
		{"deleting", func(am *infrav1.AgentMachine) { am.DeletionTimestamp = &now }, nil},
		{"agentRef set", func(am *infrav1.AgentMachine) {
			am.Status.AgentRef = &infrav1.AgentReference{Namespace: "agents", Name: "a1"}
		}, nil},
		// A host claimed once whose Agent is gone never takes another.
		{"providerID set", func(am *infrav1.AgentMachine) { am.Spec.ProviderID = "agent://a1" }, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			am := &infrav1.AgentMachine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m1"}}
			tt.mutate(am)
			g.Expect(waitsForAgent(am)).To(Equal(tt.want != nil))
			g.Expect(indexWaiting(am)).To(Equal(tt.want))
		})
	}
	NewWithT(t).Expect(indexWaiting(testAgent("a"))).To(BeNil(), "not an AgentMachine")
}

// TestHookedMachineIndex: a Machine is indexed under its AgentMachine's name only when it carries
// our pre-terminate hook and its infrastructureRef names an AgentMachine of our group.
func TestHookedMachineIndex(t *testing.T) {
	agentMachineRef := clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "AgentMachine", Name: "am-1"}
	hook := map[string]string{infrav1.PreTerminateHookAnnotation: preTerminateHookOwner}
	for _, tt := range []struct {
		name        string
		annotations map[string]string
		ref         clusterv1.ContractVersionedObjectReference
		want        []string
	}{
		{"hooked", hook, agentMachineRef, []string{"am-1"}},
		{"hook with an empty value", map[string]string{infrav1.PreTerminateHookAnnotation: ""}, agentMachineRef, []string{"am-1"}},
		{"no hook", nil, agentMachineRef, nil},
		{"another pre-terminate hook", map[string]string{clusterv1.PreTerminateDeleteHookAnnotationPrefix + "/other": ""}, agentMachineRef, nil},
		{"another group", hook, clusterv1.ContractVersionedObjectReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "AgentMachine", Name: "am-1"}, nil},
		{"another kind", hook, clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "AgentCluster", Name: "am-1"}, nil},
		{"no name", hook, clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "AgentMachine"}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m1", Annotations: tt.annotations},
				Spec: clusterv1.MachineSpec{InfrastructureRef: tt.ref}}
			NewWithT(t).Expect(indexHookedMachine(m)).To(Equal(tt.want))
		})
	}
	NewWithT(t).Expect(indexHookedMachine(&infrav1.AgentMachine{ObjectMeta: metav1.ObjectMeta{Annotations: hook}})).To(BeNil(), "not a Machine")
}

// recordingIndexer records the indexes registered with it and fails the failAt-th (1-based).
type recordingIndexer struct {
	name    string
	calls   *[]string
	funcs   map[string]client.IndexerFunc
	failAt  int
	counter *int
}

func (r recordingIndexer) IndexField(_ context.Context, obj client.Object, field string, f client.IndexerFunc) error {
	*r.counter++
	*r.calls = append(*r.calls, fmt.Sprintf("%s %T %s", r.name, obj, field))
	r.funcs[field] = f
	if *r.counter == r.failAt {
		return errors.New("boom")
	}
	return nil
}

// TestSetupIndexes: the claim indexes go to the Agents' cache, the others to the manager's, each
// with its function; a failure stops the registration and says which index failed.
func TestSetupIndexes(t *testing.T) {
	all := []string{
		"agents *v1beta1.Agent " + agentClaimIndex,
		"agents *v1beta1.Agent " + agentClaimOwnerIndex,
		"manager *v1beta1.AgentMachine " + waitingIndex,
		"manager *v1beta1.AgentMachine " + agentMachineUIDIndex,
		"manager *v1beta2.Machine " + hookedMachineIndex,
	}
	for _, tt := range []struct {
		failAt  int
		wantErr string
	}{
		{0, ""},
		{1, "indexing Agents by claim: boom"},
		{2, "indexing Agents by claiming AgentMachine: boom"},
		{3, "indexing waiting AgentMachines: boom"},
		{4, "indexing AgentMachines by UID: boom"},
		{5, "indexing the Machines that carry the pre-terminate hook: boom"},
	} {
		t.Run(fmt.Sprintf("fail at %d", tt.failAt), func(t *testing.T) {
			g := NewWithT(t)
			var calls []string
			counter := 0
			funcs := map[string]client.IndexerFunc{}
			agents := recordingIndexer{name: "agents", calls: &calls, funcs: funcs, failAt: tt.failAt, counter: &counter}
			machines := recordingIndexer{name: "manager", calls: &calls, funcs: funcs, failAt: tt.failAt, counter: &counter}
			err := setupIndexes(context.Background(), agents, machines)
			if tt.wantErr == "" {
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(calls).To(Equal(all))
				// Each index has its own function.
				g.Expect(funcs[agentClaimIndex](testAgent("a", withLabel(infrav1.AgentClaimedByLabel, "u")))).To(Equal([]string{"u"}))
				owned := testAgent("a", withLabel(infrav1.AgentClaimedByLabel, "u"))
				owned.Annotations = map[string]string{infrav1.ClaimOwnerAnnotation: "ns/m1"}
				g.Expect(funcs[agentClaimOwnerIndex](owned)).To(Equal([]string{"ns/m1"}))
				delete(owned.Labels, infrav1.AgentClaimedByLabel)
				g.Expect(funcs[agentClaimOwnerIndex](owned)).To(BeEmpty(), "an owner without our claim")
				g.Expect(funcs[waitingIndex](&infrav1.AgentMachine{})).To(Equal([]string{"true"}))
				g.Expect(funcs[agentMachineUIDIndex](&infrav1.AgentMachine{ObjectMeta: metav1.ObjectMeta{UID: "x"}})).To(Equal([]string{"x"}))
				g.Expect(funcs[hookedMachineIndex](&clusterv1.Machine{
					ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{infrav1.PreTerminateHookAnnotation: ""}},
					Spec: clusterv1.MachineSpec{InfrastructureRef: clusterv1.ContractVersionedObjectReference{
						APIGroup: infrav1.GroupVersion.Group, Kind: "AgentMachine", Name: "am"}}})).To(Equal([]string{"am"}))
				return
			}
			g.Expect(err).To(MatchError(tt.wantErr))
			g.Expect(calls).To(Equal(all[:tt.failAt]), "nothing is registered after a failure")
		})
	}
}
