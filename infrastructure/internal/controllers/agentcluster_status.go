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
	"maps"
	"slices"

	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/infrastructure/v1beta1"
)

// agentClusterOwnedConditions are the conditions the AgentCluster controller writes (the patch
// helper's owned conditions: a conflict on them is resolved in our favour).
var agentClusterOwnedConditions = []string{clusterv1.ReadyCondition, infrav1.ClusterDeploymentReadyCondition}

// setCDCondition sets the ClusterDeploymentReady condition.
func setCDCondition(ac *infrav1.AgentCluster, status metav1.ConditionStatus, reason, message string) {
	conditions.Set(ac, metav1.Condition{Type: infrav1.ClusterDeploymentReadyCondition, Status: status, Reason: reason, Message: message})
}

// setFailureDomains offers every failure domain an Agent is labelled with (sorted by name).
func (r *AgentClusterReconciler) setFailureDomains(ctx context.Context, ac *infrav1.AgentCluster) error {
	if r.AgentReader == nil {
		return nil
	}
	agents := &aiv1beta1.AgentList{}
	opts := append(agentListOptions(agentScope(r.AgentNamespace, r.SharedAgentPool, ac.Namespace)), client.HasLabels{infrav1.FailureDomainLabel})
	if err := r.AgentReader.List(ctx, agents, opts...); err != nil {
		return fmt.Errorf("listing the failure domains of Agents: %w", err)
	}
	names := map[string]bool{}
	for i := range agents.Items {
		names[agents.Items[i].Labels[infrav1.FailureDomainLabel]] = true
	}
	domains := make([]clusterv1.FailureDomain, 0, len(names))
	for _, name := range slices.Sorted(maps.Keys(names)) {
		domains = append(domains, clusterv1.FailureDomain{Name: name, ControlPlane: ptr.To(true)})
	}
	if len(domains) == 0 {
		domains = nil
	}
	ac.Status.FailureDomains = domains
	return nil
}
