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
	"sort"
	"strings"
	"sync"

	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	conditionsv1 "github.com/openshift/custom-resource-status/conditions/v1"
	"k8s.io/apimachinery/pkg/labels"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	infrav1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/infrastructure/v1beta1"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/metrics"
)

// claimUID returns the key of the AgentMachine that claimed the Agent: the UID ours writes
// (AgentClaimedByLabel), else what cluster-api-provider-agent recorded before a switch to this
// provider (UpstreamAgentClaimLabel: the AgentMachine's UID in its v1alpha1 releases, its name in
// the later ones), else "". Empty means the Agent is not claimed; claimedBy says by whom.
func claimUID(agent *aiv1beta1.Agent) string {
	if uid := agent.Labels[infrav1.AgentClaimedByLabel]; uid != "" {
		return uid
	}
	return agent.Labels[infrav1.UpstreamAgentClaimLabel]
}

// claimKeys are the keys the claim index holds for the Agent: its claimUID and, for a claim
// upstream recorded with the AgentMachine's namespace beside it (UpstreamAgentClaimNamespaceAnnotation),
// <namespace>/<label value>, the AgentMachine by name as upstream's getAgentMachineRefLabel
// writes it (controllers/agentmachine_controller.go, from v1beta1 on). A UID has no "/", so the
// two kinds of key never meet.
func claimKeys(agent *aiv1beta1.Agent) []string {
	key := claimUID(agent)
	if key == "" {
		return nil
	}
	if _, ours := agent.Labels[infrav1.AgentClaimedByLabel]; !ours {
		if ns := agent.Annotations[infrav1.UpstreamAgentClaimNamespaceAnnotation]; ns != "" {
			return []string{key, nameClaimKey(ns, key)}
		}
	}
	return []string{key}
}

// nameClaimKey is the claim index's key of the AgentMachine namespace/name, for claims upstream
// recorded by name.
func nameClaimKey(namespace, name string) string { return namespace + "/" + name }

// claimedBy tells whether the AgentMachine holds the Agent's claim: by its UID (ours, or upstream's
// v1alpha1 releases) or by its namespace and name (upstream's later releases).
func claimedBy(agent *aiv1beta1.Agent, am *infrav1.AgentMachine) bool {
	for _, k := range claimKeys(agent) {
		if k == string(am.UID) || k == nameClaimKey(am.Namespace, am.Name) {
			return true
		}
	}
	return false
}

// heldBy tells whether am holds the Agent's claim, as far as scope (agentScope) lets it: by its
// UID wherever the Agent is, since only a claim made for am carries it (one made before the pool
// was narrowed to scope too, which am's release must still find and undo); by its namespace and
// name (upstream's claims, which whoever edits that namespace's Agents can write) only in scope.
func heldBy(agent *aiv1beta1.Agent, am *infrav1.AgentMachine, scope string) bool {
	if !claimedBy(agent, am) {
		return false
	}
	return inScope(scope, agent.Namespace) || slices.Contains(claimKeys(agent), string(am.UID))
}

// agentUsable tells whether an Agent may be claimed at all: approved, connected, validated and
// not yet claimed. An empty reason means it may.
func agentUsable(agent *aiv1beta1.Agent) string {
	switch {
	case agent.DeletionTimestamp != nil:
		return "deleting"
	case claimUID(agent) != "":
		return "claimed"
	case !agent.Spec.Approved:
		return "not approved"
	case !conditionsv1.IsStatusConditionTrue(agent.Status.Conditions, aiv1beta1.ConnectedCondition):
		return "not connected"
	case !conditionsv1.IsStatusConditionTrue(agent.Status.Conditions, aiv1beta1.ValidatedCondition):
		return "not validated"
	}
	return ""
}

// agentScope is the namespace an AgentMachine or AgentCluster of namespace ns takes Agents from,
// "" for every namespace:
//   - the one --agent-namespace names (HyperShift's way: AgentMachines in the hosted control
//     plane's namespace, Agents in the one its HostedCluster names);
//   - else every namespace with --shared-agent-pool (upstream cluster-api-provider-agent's
//     default without --agent-namespace), where any tenant may claim any namespace's host;
//   - else ns itself: a tenant's AgentMachines never see, count or claim another's Agents.
func agentScope(agentNamespace string, shared bool, ns string) string {
	switch {
	case agentNamespace != "":
		return agentNamespace
	case shared:
		return ""
	}
	return ns
}

// inScope tells whether an Agent of namespace ns is in scope ("" is every namespace).
func inScope(scope, ns string) bool { return scope == "" || ns == scope }

// agentRequest is what a Machine asks of a host.
type agentRequest struct {
	// namespace the Agent must be in (agentScope); empty matches every namespace.
	namespace string
	// selector of the AgentMachine's agentLabelSelector; nil matches everything.
	selector labels.Selector
	// failureDomain of the Machine; empty matches every host.
	failureDomain string
	// architecture of the Machine (kubernetes.io/arch); empty matches every host.
	architecture string
	// clusterDeployment is <namespace>/<name> of the ClusterDeployment the Agent will bind to;
	// an Agent already bound to another one is not a fit.
	clusterDeployment string
	// bootstrapConfig is <namespace>/<name> of the Machine's OpenshiftAssistedConfig, when its
	// bootstrap is one: only the Agent that config prepared fits. Empty for other bootstraps,
	// which take no Agent that a config prepared for a Machine.
	bootstrapConfig string
	// key breaks ties between equally good hosts (the AgentMachine's UID), spreading parallel
	// claims over different Agents.
	key string
}

// mismatch returns why the Agent does not fit the request, or "" when it fits.
func (r agentRequest) mismatch(agent *aiv1beta1.Agent) string {
	if !inScope(r.namespace, agent.Namespace) {
		return "in another namespace"
	}
	if reason := agentUsable(agent); reason != "" {
		return reason
	}
	if cd := agent.Spec.ClusterDeploymentName; cd != nil && cd.Name != "" &&
		cd.Namespace+"/"+cd.Name != r.clusterDeployment {
		return "bound to another cluster"
	}
	if config, ok := agent.Labels[bootstrapv1.AgentConfigLabel]; ok && agent.Namespace+"/"+config != r.bootstrapConfig {
		return "prepared for another Machine"
	} else if !ok && r.bootstrapConfig != "" {
		return "not prepared by this Machine's OpenshiftAssistedConfig"
	}
	if r.selector != nil && !r.selector.Matches(labels.Set(agent.Labels)) {
		return "not matching agentLabelSelector"
	}
	if r.failureDomain != "" && agent.Labels[infrav1.FailureDomainLabel] != r.failureDomain {
		return "in another failure domain"
	}
	if r.architecture != "" && !sameArchitecture(r.architecture, agent.Status.Inventory.Cpu.Architecture) {
		return "of another CPU architecture"
	}
	return ""
}

// sameArchitecture compares a Kubernetes architecture name with the one assisted-service reports.
func sameArchitecture(kube, agent string) bool {
	alias := map[string]string{"amd64": "x86_64", "arm64": "aarch64"}
	if a, ok := alias[kube]; ok {
		kube = a
	}
	if a, ok := alias[agent]; ok {
		agent = a
	}
	return strings.EqualFold(kube, agent)
}

// summarizeFit says how many Agents fit the request and why the others do not.
func summarizeFit(req agentRequest, agents []aiv1beta1.Agent) string {
	fit := 0
	reasons := map[string]int{}
	for i := range agents {
		if reason := req.mismatch(&agents[i]); reason != "" {
			reasons[reason]++
			continue
		}
		fit++
	}
	return summarize(len(agents), fit, reasons)
}

func diskBytes(a *aiv1beta1.Agent) int64 {
	var total int64
	for _, d := range a.Status.Inventory.Disks {
		total += d.SizeBytes
	}
	return total
}

// summarize writes "0 of 12 agents fit: 5 claimed, 7 not matching agentLabelSelector".
func summarize(total, fit int, reasons map[string]int) string {
	msg := fmt.Sprintf("%d of %d agents fit", fit, total)
	if len(reasons) == 0 {
		return msg
	}
	keys := make([]string, 0, len(reasons))
	for k := range reasons {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%d %s", reasons[k], k))
	}
	return msg + ": " + strings.Join(parts, ", ")
}

// CountAgents counts the Agents of the cache for the capoa_agents metric: by namespace, by
// availability ("free" when an AgentMachine may claim it, else why not: claimed, not-approved,
// not-connected, not-validated, deleting) and by assisted-service's host state. It counts from
// the events of the cache's Agent informer (a handler of its own, so a manager that is not the
// leader counts too), not by listing every Agent at each scrape: through a namespaced cache that
// list copied each Agent twice (apimeta.SetList), 18 MB a scrape at 10,000 Agents (issue 45).
// The counts are kept by label values only, with nothing per Agent: an update takes one off the
// old object's values and adds one to the new's. Until the informer has delivered its first list
// the metric reports nothing.
func CountAgents(ctx context.Context, agentCache interface {
	GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error)
}) (metrics.Source, error) {
	informer, err := agentCache.GetInformer(ctx, &aiv1beta1.Agent{})
	if err != nil {
		return nil, fmt.Errorf("getting the Agent informer: %w", err)
	}
	c := &agentCounter{counts: map[agentTally]int{}}
	reg, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.add(obj, 1) },
		UpdateFunc: func(old, obj any) { c.add(old, -1); c.add(obj, 1) },
		DeleteFunc: func(obj any) { c.add(obj, -1) },
	})
	if err != nil {
		return nil, fmt.Errorf("adding the Agent counter to the Agent informer: %w", err)
	}
	return func(context.Context) ([]metrics.Count, error) {
		if !reg.HasSynced() {
			return nil, nil
		}
		return c.snapshot(), nil
	}, nil
}

// agentCounter holds the number of Agents by capoa_agents's label values.
type agentCounter struct {
	mu     sync.Mutex
	counts map[agentTally]int
}

// agentTally are the label values of an Agent in capoa_agents.
type agentTally struct{ namespace, availability, state string }

func tallyOf(a *aiv1beta1.Agent) agentTally {
	availability := agentUsable(a)
	if availability == "" {
		availability = "free"
	}
	state := a.Status.DebugInfo.State
	if state == "" {
		state = "unknown"
	}
	return agentTally{namespace: a.Namespace, availability: strings.ReplaceAll(availability, " ", "-"), state: state}
}

// add adds delta Agents of obj's label values (a deleted Agent's tombstone included).
func (c *agentCounter) add(obj any, delta int) {
	if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	a, ok := obj.(*aiv1beta1.Agent)
	if !ok {
		return
	}
	t := tallyOf(a)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.counts[t] += delta; c.counts[t] <= 0 {
		delete(c.counts, t)
	}
}

// snapshot returns the counts in a stable order (by namespace, availability, state).
func (c *agentCounter) snapshot() []metrics.Count {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]metrics.Count, 0, len(c.counts))
	for t, n := range c.counts {
		out = append(out, metrics.Count{Labels: []string{t.namespace, t.availability, t.state}, Value: float64(n)})
	}
	slices.SortFunc(out, func(a, b metrics.Count) int { return slices.Compare(a.Labels, b.Labels) })
	return out
}
