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

package etcd

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/machineapi"
)

// machineAPIIgnores returns why cluster-etcd-operator adds no member for node ("" when it may):
// while Machine API is functional (machineapi.Functional: the MachineAPI capability, or the
// Machine kind served, and a Running master Machine, as after an installation on platform
// baremetal with that capability), ClusterMemberController.getEtcdPeerURLToAdd
// (openshift/cluster-etcd-operator b4786ae pkg/operator/clustermembercontroller/
// clustermembercontroller.go) adds a node only when a master machine.openshift.io Machine, not
// being deleted, lists the node's internal IP (ceohelpers.FindMachineByNodeInternalIP), and logs
// the text returned here otherwise. (It also waits for the Machine's PreDrain hook, which its own
// machine-deletion-hooks controller adds: the lab leaves that step out, a Machine is enough.)
// The Node then never gets a member: a control-plane Machine of Cluster API added on day 2 has no
// such Machine.
func (s *Simulator) machineAPIIgnores(ctx context.Context, node *corev1.Node) (string, error) {
	functional, err := machineapi.Functional(ctx, s.client)
	if err != nil || !functional {
		return "", err
	}
	machine, err := machineapi.MachineForNode(ctx, s.client, node)
	if err != nil || machine != "" {
		return "", err
	}
	return fmt.Sprintf("Ignoring node (%s) for scale-up: no Machine found referencing this node's internal IP (%s)", node.Name, internalIP(node)), nil
}

func internalIP(n *corev1.Node) string {
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			return a.Address
		}
	}
	return ""
}
