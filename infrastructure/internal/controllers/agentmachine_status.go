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
	"net"
	"strings"

	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	conditionsv1 "github.com/openshift/custom-resource-status/conditions/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/controllers/clustercache"
	"sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/infrastructure/v1beta1"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/reconciler"
)

// mirrored maps the Agent's conditions to the AgentMachine's.
var mirrored = []struct {
	from conditionsv1.ConditionType
	to   string
}{
	{aiv1beta1.ConnectedCondition, infrav1.AgentConnectedCondition},
	{aiv1beta1.SpecSyncedCondition, infrav1.AgentSpecSyncedCondition},
	{aiv1beta1.ValidatedCondition, infrav1.AgentValidatedCondition},
	{aiv1beta1.RequirementsMetCondition, infrav1.AgentRequirementsMetCondition},
	{aiv1beta1.InstalledCondition, infrav1.InstalledCondition},
}

func setReserved(am *infrav1.AgentMachine, status metav1.ConditionStatus, reason, message string) {
	conditions.Set(am, metav1.Condition{Type: infrav1.AgentReservedCondition, Status: status, Reason: reason, Message: message})
}

// mirrorAgent copies the Agent's conditions, addresses and installation state to the AgentMachine.
// It runs on every reconcile, also after the host is installed, so that a disconnected host shows.
func mirrorAgent(am *infrav1.AgentMachine, agent *aiv1beta1.Agent) {
	for _, m := range mirrored {
		c := conditionsv1.FindStatusCondition(agent.Status.Conditions, m.from)
		if c == nil {
			conditions.Set(am, metav1.Condition{Type: m.to, Status: metav1.ConditionUnknown, Reason: "NotReported",
				Message: "assisted-service has not reported " + string(m.from) + " for Agent " + agent.Name + " yet"})
			continue
		}
		reason := c.Reason
		if reason == "" {
			reason = string(c.Status)
		}
		conditions.Set(am, metav1.Condition{Type: m.to, Status: metav1.ConditionStatus(c.Status), Reason: reason, Message: c.Message})
	}
	am.Status.Addresses = agentAddresses(agent)
	if conditionsv1.IsStatusConditionTrue(agent.Status.Conditions, aiv1beta1.InstalledCondition) {
		am.Status.Initialization.Provisioned = ptr.To(true)
		am.Status.Ready = true //nolint:staticcheck // still written for clients of the v1beta1 contract
	}
}

// machineProvisioned says whether the AgentMachine is reported provisioned: in
// status.initialization.provisioned, or in status.ready alone where the API server serves
// HyperShift's copy of the CRD (upstream's v1beta1 status; see package servedschema).
func machineProvisioned(am *infrav1.AgentMachine) bool {
	return ptr.Deref(am.Status.Initialization.Provisioned, false) || am.Status.Ready //nolint:staticcheck // see above
}

// setNodeJoined reports an AgentMachine whose host is a Node of the cluster and whose Agent is
// gone: provisioned, with the Agent's conditions as they were when it installed.
func setNodeJoined(am *infrav1.AgentMachine, m *clusterv1.Machine) {
	msg := fmt.Sprintf("Machine %s is Node %s; its Agent is gone (after a clusterctl move, assisted-service deletes the Agents of hosts installed from another hub)",
		m.Name, m.Status.NodeRef.Name)
	setReserved(am, metav1.ConditionTrue, infrav1.NodeJoinedReason, msg)
	for _, c := range mirrored {
		conditions.Set(am, metav1.Condition{Type: c.to, Status: metav1.ConditionTrue, Reason: infrav1.NodeJoinedReason, Message: msg})
	}
	am.Status.AgentRef = nil
	am.Status.Initialization.Provisioned = ptr.To(true)
	am.Status.Ready = true //nolint:staticcheck // still written for clients of the v1beta1 contract
}

// clearAgentConditions marks the mirrored conditions as having no Agent to mirror.
func clearAgentConditions(am *infrav1.AgentMachine, message string) {
	for _, m := range mirrored {
		conditions.Set(am, metav1.Condition{Type: m.to, Status: metav1.ConditionUnknown, Reason: infrav1.NoAgentReason, Message: message})
	}
}

// setReady summarizes the conditions that matter for the Machine into Ready.
func setReady(am *infrav1.AgentMachine) error {
	return reconciler.SetReadySummary(am, clusterv1.ReadyCondition, clusterv1.ReadyReason,
		conditions.ForConditionTypes{infrav1.AgentReservedCondition, infrav1.AgentConnectedCondition, infrav1.InstalledCondition})
}

// nodeAddresses returns a Node's addresses as Machine addresses (the two share their type names).
func nodeAddresses(node *corev1.Node) []clusterv1.MachineAddress {
	out := make([]clusterv1.MachineAddress, 0, len(node.Status.Addresses))
	for _, a := range node.Status.Addresses {
		out = append(out, clusterv1.MachineAddress{Type: clusterv1.MachineAddressType(a.Type), Address: a.Address})
	}
	return out
}

// agentAddresses returns the host's IPv4 and IPv6 addresses (InternalIP) and its hostname
// (Hostname and InternalDNS), in the order the Agent reports them, without duplicates.
func agentAddresses(agent *aiv1beta1.Agent) []clusterv1.MachineAddress {
	var out []clusterv1.MachineAddress
	seen := map[clusterv1.MachineAddress]bool{}
	add := func(t clusterv1.MachineAddressType, a string) {
		addr := clusterv1.MachineAddress{Type: t, Address: a}
		if a != "" && !seen[addr] {
			seen[addr] = true
			out = append(out, addr)
		}
	}
	for _, iface := range agent.Status.Inventory.Interfaces {
		for _, cidr := range append(append([]string{}, iface.IPV4Addresses...), iface.IPV6Addresses...) {
			add(clusterv1.MachineInternalIP, stripPrefix(cidr))
		}
	}
	hostname := agent.Spec.Hostname
	if hostname == "" {
		hostname = agent.Status.Inventory.Hostname
	}
	add(clusterv1.MachineHostName, hostname)
	add(clusterv1.MachineInternalDNS, hostname)
	return out
}

// stripPrefix turns "10.0.0.5/24" into "10.0.0.5"; an address without a prefix is kept.
func stripPrefix(cidr string) string {
	if ip, _, err := net.ParseCIDR(cidr); err == nil {
		return ip.String()
	}
	return strings.TrimSpace(cidr)
}

// reconcileNodeAddresses reports the addresses of a host whose Agent is gone, whose Machine is a
// Node, as that Node has them: a clusterctl move carries no status, and Cluster API copies these
// addresses to the Machine. Until the workload cluster can be reached, the addresses are kept.
func (r *AgentMachineReconciler) reconcileNodeAddresses(ctx context.Context, s *scope) (ctrl.Result, error) {
	if r.ClusterCache == nil {
		return ctrl.Result{}, nil
	}
	remote, err := r.ClusterCache.GetClient(ctx, client.ObjectKeyFromObject(s.cluster))
	if errors.Is(err, clustercache.ErrClusterNotConnected) {
		ctrl.LoggerFrom(ctx).V(4).Info("Workload cluster not connected yet; the Node's addresses are read later")
		return ctrl.Result{RequeueAfter: workloadRetry}, nil
	}
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("getting a client for Cluster %s: %w", s.cluster.Name, err)
	}
	node := &corev1.Node{}
	if err := remote.Get(ctx, client.ObjectKey{Name: s.machine.Status.NodeRef.Name}, node); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, nil // Cluster API reports a Machine whose Node is gone.
		}
		return ctrl.Result{}, fmt.Errorf("reading Node %s of Cluster %s: %w", s.machine.Status.NodeRef.Name, s.cluster.Name, err)
	}
	if addresses := nodeAddresses(node); len(addresses) > 0 {
		s.agentMachine.Status.Addresses = addresses
	}
	return ctrl.Result{}, nil
}
