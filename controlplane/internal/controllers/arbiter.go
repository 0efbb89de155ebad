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
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/reconciler"
)

// Two-node OpenShift with an arbiter (TNA; assisted-service docs/enhancements/arbiter-clusters.md,
// OpenShift 4.19 tech preview): two control-plane nodes and a third, smaller "arbiter" node
// that runs etcd and the control plane's critical components only. Here spec.replicas is 2
// and spec.arbiter adds one more control-plane Machine, labelled
// controlplane.cluster.x-k8s.io/arbiter, whose host the bootstrap provider installs with the
// "arbiter" role. Its etcd member counts like any other in every quorum decision (scale down,
// remediation, rollout: see machines.go and etcd.go); only the template it is created from, the
// role of its host and the replica counts of the status (which pair with spec.replicas) differ.
// The AgentClusterInstall asks for it with spec.provisionRequirements.arbiterAgents, a field
// that the assisted-service Go types this project pins lack: it is written as an unstructured
// field, with strict field validation, so that a hub whose CRD does not know it refuses the
// write instead of silently dropping it (the API server prunes unknown fields otherwise).

// arbiterAgentsField is the path of the AgentClusterInstall field that asks for arbiter hosts
// (ProvisionRequirements.ArbiterAgents in assisted-service's api/hiveextension/v1beta1 from 2025).
var arbiterAgentsField = []string{"spec", "provisionRequirements", "arbiterAgents"}

// arbiterAgents is the AgentClusterInstall field that asks for arbiters arbiter hosts.
func arbiterAgents(arbiters int) newerField {
	return newerField{path: arbiterAgentsField, value: int64(arbiters)}
}

// isArbiter tells the arbiter Machine of two-node OpenShift.
func isArbiter(m *clusterv1.Machine) bool {
	return metav1.HasLabel(m.ObjectMeta, controlplanev1.ArbiterMachineLabel)
}

// machineTemplate is the template of the arbiter Machine (arbiter true) or of the other
// control-plane Machines.
func machineTemplate(oacp *controlplanev1.OpenshiftAssistedControlPlane, arbiter bool) *controlplanev1.OpenshiftAssistedControlPlaneMachineTemplate {
	if arbiter && oacp.Spec.Arbiter != nil {
		return &oacp.Spec.Arbiter.MachineTemplate
	}
	return &oacp.Spec.MachineTemplate
}

// templateField names the spec field of the template of an arbiter Machine or of the others.
func templateField(arbiter bool) string {
	if arbiter {
		return "spec.arbiter.machineTemplate"
	}
	return "spec.machineTemplate"
}

// replacementIsArbiter tells whether the Machine that a rollout surges in replaces the arbiter:
// the oldest outdated Machine is replaced first.
func replacementIsArbiter(machines []*clusterv1.Machine, outdated map[string]string) (bool, string) {
	for _, m := range machines {
		if why, ok := outdated[m.Name]; ok && m.DeletionTimestamp.IsZero() {
			return isArbiter(m), fmt.Sprintf("Replacing control-plane Machine %s: %s", m.Name, why)
		}
	}
	return false, ""
}

// arbiterRefusal turns the API server's refusal of arbiterAgents (a hub whose assisted-service
// predates arbiter clusters) into a problem the user can act on; nil for another error.
func arbiterRefusal(err error) error {
	if apierrors.IsBadRequest(err) && strings.Contains(err.Error(), "arbiterAgents") {
		return reconciler.NewProblem(controlplanev1.AvailableCondition, controlplanev1.ArbiterNotSupportedReason,
			errors.New("the hub's assisted-service does not support two-node OpenShift with an arbiter: its AgentClusterInstall has no spec.provisionRequirements.arbiterAgents; "+
				"upgrade the hub's assisted-service (multicluster engine) to a version with arbiter clusters, or create the cluster with replicas 3 and without spec.arbiter"))
	}
	return nil
}
