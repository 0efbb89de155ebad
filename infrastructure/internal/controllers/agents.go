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

	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	conditionsv1 "github.com/openshift/custom-resource-status/conditions/v1"
	"k8s.io/apimachinery/pkg/labels"
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

// CountAgents counts the Agents reader holds, for the capoa_agents metric: by namespace, by
// availability ("free" when an AgentMachine may claim it, else why not: claimed, not-approved,
// not-connected, not-validated, deleting) and by assisted-service's host state.
func CountAgents(reader client.Reader) metrics.Source {
	return func(ctx context.Context) ([]metrics.Count, error) {
		list := &aiv1beta1.AgentList{}
		if err := reader.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
			return nil, fmt.Errorf("listing Agents: %w", err)
		}
		keys := make([][]string, 0, len(list.Items))
		for i := range list.Items {
			a := &list.Items[i]
			availability := agentUsable(a)
			if availability == "" {
				availability = "free"
			}
			state := a.Status.DebugInfo.State
			if state == "" {
				state = "unknown"
			}
			keys = append(keys, []string{a.Namespace, strings.ReplaceAll(availability, " ", "-"), state})
		}
		return metrics.Tally(keys), nil
	}
}
