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

	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/reconciler"
)

// Two-node OpenShift with fencing (TNF; assisted-service docs/enhancements/tnf-clusters.md,
// OpenShift 4.20 tech preview, 4.22 GA): two control-plane nodes and no arbiter, each node's
// BMC credentials given to the installation so that pacemaker on the survivor can power a failed
// node off (fence_redfish) and keep etcd running as a single member. assisted-service knows the
// topology from the cluster itself: two control-plane hosts, no arbiter, both with fencing
// credentials (IsClusterTopologyTwoNodesWithFencing, internal/common/common.go); the
// AgentClusterInstall asks for nothing more than controlPlaneAgents 2. Each host's credentials
// reach it through its Agent's spec.fencingCredentialsSecretRef, a Secret in the Agent's
// namespace with the keys address, username, password and certificateVerification, which the
// bootstrap provider writes from the host's BareMetalHost for every Machine labelled
// controlplanev1.FencingMachineLabel (bootstrap/internal/controllers/fencing.go). The control
// plane checks that the hub can take it: a hub whose Agent CRD lacks the field would prune it in
// silence and install nothing (assisted-service then waits for an arbiter or credentials).
// See docs/research/two-node-fencing.md.

// agentCRD is the name of the Agent CRD.
const agentCRD = "agents.agent-install.openshift.io"

// fencingCredentialsSecretRefField is the path of the Agent field that names a host's fencing
// credentials Secret (Spec.FencingCredentialsSecretRef in assisted-service's api/v1beta1 from 2025;
// the Go types this project pins lack it).
var fencingCredentialsSecretRefField = []string{"spec", "fencingCredentialsSecretRef"}

// checkFencingSupport refuses to install two-node OpenShift with fencing on a hub whose Agent CRD
// has no spec.fencingCredentialsSecretRef: a problem on Available, with what to do; nothing is
// created for the cluster (no AgentClusterInstall, hence no Machine).
func (r *OpenshiftAssistedControlPlaneReconciler) checkFencingSupport(ctx context.Context, s *scope) error {
	if s.oacp.Spec.Fencing == nil {
		return nil
	}
	has, err := r.schemas.Has(ctx, r.Client, r.APIReader, agentCRD, aiv1beta1.GroupVersion.Version, fencingCredentialsSecretRefField...)
	if err != nil || has {
		return err
	}
	return reconciler.NewProblem(controlplanev1.AvailableCondition, controlplanev1.FencingNotSupportedReason,
		errors.New("the hub's assisted-service does not support two-node OpenShift with fencing: its Agent CRD has no spec.fencingCredentialsSecretRef; "+
			"upgrade the hub's assisted-service (multicluster engine) to a version with two-node fencing clusters, or create the cluster with spec.arbiter or replicas 3 instead of spec.fencing"))
}
