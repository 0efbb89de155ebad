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

	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/infrastructure/v1beta1"
)

const (
	// agentClaimIndex indexes Agents by the UID of the AgentMachine that claimed them (see claimUID).
	agentClaimIndex = "agent.claimedBy"
	// agentClaimOwnerIndex indexes the Agents this provider claimed by the <namespace>/<name> of
	// the claiming AgentMachine (ClaimOwnerAnnotation), to find them once it is gone.
	agentClaimOwnerIndex = "agent.claimOwner"
	// waitingIndex indexes the AgentMachines that wait for an Agent ("true"); those that found
	// none that fits and say why, counting the Agents by what keeps each out, also under
	// waitingExplained.
	waitingIndex     = "agentMachine.waitingForAgent"
	waitingExplained = "explained"
	// agentMachineUIDIndex indexes AgentMachines by UID (the value of an Agent's claim label).
	agentMachineUIDIndex = "agentMachine.uid"
	// hookedMachineIndex indexes the Machines that carry our pre-terminate hook by the name of
	// their AgentMachine.
	hookedMachineIndex = "machine.agentMachineHook"
	agentMachineKind   = "AgentMachine"
)

func indexAgentClaim(o client.Object) []string {
	if agent, ok := o.(*aiv1beta1.Agent); ok {
		return claimKeys(agent)
	}
	return nil
}

func indexAgentClaimOwner(o client.Object) []string {
	agent, ok := o.(*aiv1beta1.Agent)
	if !ok || agent.Labels[infrav1.AgentClaimedByLabel] == "" || agent.Annotations[infrav1.ClaimOwnerAnnotation] == "" {
		return nil
	}
	return []string{agent.Annotations[infrav1.ClaimOwnerAnnotation]}
}

func indexAgentMachineUID(o client.Object) []string {
	return []string{string(o.GetUID())}
}

func indexWaiting(o client.Object) []string {
	am, ok := o.(*infrav1.AgentMachine)
	if !ok || !waitsForAgent(am) {
		return nil
	}
	if c := conditions.Get(am, infrav1.AgentReservedCondition); c != nil && c.Reason == infrav1.NoSuitableAgentsReason {
		return []string{"true", waitingExplained}
	}
	return []string{"true"}
}

// indexHookedMachine: a Machine that carries our pre-terminate hook, under the name of the
// AgentMachine it refers to.
func indexHookedMachine(o client.Object) []string {
	m, ok := o.(*clusterv1.Machine)
	if !ok {
		return nil
	}
	if _, hooked := m.Annotations[infrav1.PreTerminateHookAnnotation]; !hooked {
		return nil
	}
	ref := m.Spec.InfrastructureRef
	if ref.APIGroup != infrav1.GroupVersion.Group || ref.Kind != agentMachineKind || ref.Name == "" {
		return nil
	}
	return []string{ref.Name}
}

// waitsForAgent tells whether the AgentMachine still has to claim an Agent.
func waitsForAgent(am *infrav1.AgentMachine) bool {
	return am.DeletionTimestamp == nil && am.Status.AgentRef == nil && am.Spec.ProviderID == ""
}

// setupIndexes registers the field indexes: agentIndexer is the cache that holds Agents (the
// manager's, or the one of --agent-namespace), machineIndexer the manager's.
func setupIndexes(ctx context.Context, agentIndexer, machineIndexer client.FieldIndexer) error {
	if err := agentIndexer.IndexField(ctx, &aiv1beta1.Agent{}, agentClaimIndex, indexAgentClaim); err != nil {
		return fmt.Errorf("indexing Agents by claim: %w", err)
	}
	if err := agentIndexer.IndexField(ctx, &aiv1beta1.Agent{}, agentClaimOwnerIndex, indexAgentClaimOwner); err != nil {
		return fmt.Errorf("indexing Agents by claiming AgentMachine: %w", err)
	}
	if err := machineIndexer.IndexField(ctx, &infrav1.AgentMachine{}, waitingIndex, indexWaiting); err != nil {
		return fmt.Errorf("indexing waiting AgentMachines: %w", err)
	}
	if err := machineIndexer.IndexField(ctx, &infrav1.AgentMachine{}, agentMachineUIDIndex, indexAgentMachineUID); err != nil {
		return fmt.Errorf("indexing AgentMachines by UID: %w", err)
	}
	if err := machineIndexer.IndexField(ctx, &clusterv1.Machine{}, hookedMachineIndex, indexHookedMachine); err != nil {
		return fmt.Errorf("indexing the Machines that carry the pre-terminate hook: %w", err)
	}
	return nil
}
