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

package assisted

import (
	"context"
	"fmt"

	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	"github.com/openshift/assisted-service/models"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/etcd"
)

// Two-node OpenShift with fencing (TNF), as assisted-service models it (openshift/assisted-service
// 063b257950f726d6b291dc94b806bc243a1b56de):
//
//   - an Agent's spec.fencingCredentialsSecretRef names a Secret of the Agent's namespace whose keys
//     address, username, password and certificateVerification become the host's fencing
//     credentials (internal/controller/controllers/agent_controller.go updateHostFencingCredentials);
//     the service refuses them unless it runs with TNF_CLUSTERS_SUPPORT=true, and for a cluster
//     whose platform is not baremetal or none (internal/bminventory/inventory.go updateHostFencing,
//     internal/common/common.go ValidateClusterSupportsFencingCredentials): the Agent's SpecSynced
//     condition says so, as for any input error the service answers with 400;
//   - a cluster is TNF when it asks for two control-plane hosts, has no arbiter, and both its
//     masters have fencing credentials (common.go IsClusterTopologyTwoNodesWithFencing); a cluster
//     of two control-plane hosts that is neither TNF nor has an arbiter is insufficient
//     (internal/cluster/validator.go, "... and at least 1 arbiter node or the control plane nodes
//     must have fencing credentials");
//   - the installer gets the credentials in install-config controlPlane.fencing.credentials
//     (internal/installcfg/builder/builder.go handleFencing), from which the installed cluster has
//     a Secret openshift-etcd/fencing-credentials-<node> per node, the Secrets
//     cluster-etcd-operator configures pacemaker's fencing from (cluster-etcd-operator
//     pkg/tnf/pkg/tools/secrets.go, fencingSecretNamePrefix and fencingNamespace). The simulator
//     writes those Secrets in the workload cluster when it creates a master's Node.
//
// Not simulated: the minimum OpenShift version (4.20, MinimumVersionForTwoNodesWithFencing; the
// simulator does not know a cluster's version, and the control plane's CRD refuses fencing below
// 4.20), the MAC-keyed credentials of the agent-based installer, and day-2 hosts.

// fencingCredentialsField is the Agent field that names its fencing credentials Secret.
var fencingCredentialsField = []string{"spec", "fencingCredentialsSecretRef"}

// fencingKeys are the keys assisted-service reads from the Secret.
var fencingKeys = []string{"address", "username", "password", "certificateVerification"}

// syncFencing records the Agent's fencing credentials as the service stores a host's, or says why
// it refuses them (an input error of the Agent, "" when none). An Agent without a reference keeps
// what was recorded (assisted-service does not clear a host's credentials then).
func (s *Simulator) syncFencing(ctx context.Context, a *aiv1beta1.Agent, cl *cluster) (string, error) {
	spec, err := s.liveSpec(ctx, a, aiv1beta1.GroupVersion.WithKind("Agent"))
	if err != nil {
		return "", err
	}
	name, _, _ := unstructured.NestedString(spec, fencingCredentialsField[1:]...)
	if name == "" {
		return "", nil
	}
	hostID := agentName(a.Name)
	if !s.TNFClustersSupport {
		return fmt.Sprintf("TNF clusters support is disabled, cannot set fencing credentials to host %s", hostID), nil
	}
	if p := cl.aci.Spec.PlatformType; p != "" && p != hiveextv1beta1.BareMetalPlatformType && p != hiveextv1beta1.NonePlatformType {
		return fmt.Sprintf("Cannot set fencing credentials to host %s: cluster's platform must be baremetal or none", hostID), nil
	}
	secret := &corev1.Secret{}
	if err := s.reader.Get(ctx, client.ObjectKey{Namespace: a.Namespace, Name: name}, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Sprintf("failed to get fencing credentials secret %s for host %s: not found", name, hostID), nil
		}
		return "", fmt.Errorf("reading the fencing credentials Secret %s: %w", name, err)
	}
	creds := map[string][]byte{}
	for _, k := range fencingKeys {
		if v, ok := secret.Data[k]; ok {
			creds[k] = v
		}
	}
	// The REST API's validation of fencing-credentials-params: certificate_verification is
	// Enabled or Disabled when given.
	if v, ok := creds["certificateVerification"]; ok && string(v) != "Enabled" && string(v) != "Disabled" {
		return fmt.Sprintf("fencing credentials of host %s: certificate_verification must be Enabled or Disabled", hostID), nil
	}
	s.mu.Lock()
	s.fencing[client.ObjectKeyFromObject(a)] = creds
	s.mu.Unlock()
	return "", nil
}

// hasFencing tells whether the service holds fencing credentials for the Agent's host.
func (s *Simulator) hasFencing(a *aiv1beta1.Agent) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fencing[client.ObjectKeyFromObject(a)] != nil
}

// forgetFencing drops what the service holds of an Agent's host.
func (s *Simulator) forgetFencing(key types.NamespacedName) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.fencing, key)
}

// fencedAgents names the Agents whose hosts have fencing credentials.
func (s *Simulator) fencedAgents(agents []aiv1beta1.Agent) map[string]bool {
	out := map[string]bool{}
	for i := range agents {
		if s.hasFencing(&agents[i]) {
			out[agents[i].Name] = true
		}
	}
	return out
}

// isTNF is assisted-service's IsClusterTopologyTwoNodesWithFencing: two control-plane hosts asked
// for, no arbiter, and two masters, each with fencing credentials.
func isTNF(aci *hiveextv1beta1.AgentClusterInstall, agents []aiv1beta1.Agent, arbiters int, fenced map[string]bool) bool {
	if aci.Spec.ProvisionRequirements.ControlPlaneAgents != 2 || arbiters > 0 {
		return false
	}
	masters := 0
	for i := range agents {
		if agents[i].Spec.Role != models.HostRoleMaster {
			continue
		}
		if !fenced[agents[i].Name] {
			return false
		}
		masters++
	}
	return masters == 2
}

// writeFencingSecret writes the installed cluster's fencing credentials Secret of a master's Node
// from what the service holds of its host (nothing when it holds none).
func (s *Simulator) writeFencingSecret(ctx context.Context, c client.Client, a *aiv1beta1.Agent, node string) error {
	s.mu.Lock()
	creds := s.fencing[client.ObjectKeyFromObject(a)]
	s.mu.Unlock()
	if creds == nil {
		return nil
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: etcd.FencingNamespace}}
	if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s in the workload cluster: %w", etcd.FencingNamespace, err)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: etcd.FencingNamespace, Name: etcd.FencingSecretPrefix + node}}
	if _, err := controllerutil.CreateOrPatch(ctx, c, secret, func() error {
		secret.Data = creds
		return nil
	}); err != nil {
		return fmt.Errorf("writing the fencing credentials Secret of Node %s in the workload cluster: %w", node, err)
	}
	return nil
}
