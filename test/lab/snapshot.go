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

package lab

import (
	"context"
	"fmt"
	"sort"
	"strings"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
)

// Snapshot is what a person follows during an installation: one line per object of interest.
type Snapshot struct {
	Lines []string
}

func (s Snapshot) String() string { return strings.Join(s.Lines, "\n") }

// why returns the first condition of conds, in the order of types, that is not True: its type,
// reason and the first line of its message, which says why the object waits.
func why(conds []metav1.Condition, types ...string) string {
	for _, t := range types {
		for _, c := range conds {
			if c.Type != t || c.Status == metav1.ConditionTrue {
				continue
			}
			msg := strings.TrimLeft(strings.SplitN(c.Message, "\n", 2)[0], "* ")
			return fmt.Sprintf("%s=%s %s: %s", c.Type, c.Status, c.Reason, msg)
		}
	}
	return ""
}

// Snapshot reads the state of namespace ns: Clusters and ClusterClasses, control planes, Machines, BareMetalHosts, Agents and
// AgentClusterInstalls, and the workload cluster's Nodes.
func (l *Lab) Snapshot(ctx context.Context, ns string) (Snapshot, error) {
	c := l.Mgmt.Client
	var s Snapshot
	add := func(format string, args ...any) { s.Lines = append(s.Lines, fmt.Sprintf(format, args...)) }

	clusters := &clusterv1.ClusterList{}
	if err := c.List(ctx, clusters, client.InNamespace(ns)); err != nil {
		return s, err
	}
	for _, cl := range clusters.Items {
		add("Cluster %s: %s", cl.Name, why(cl.Status.Conditions, clusterv1.ClusterTopologyReconciledCondition, "Available"))
	}
	classes := &clusterv1.ClusterClassList{}
	if err := c.List(ctx, classes, client.InNamespace(ns)); err != nil {
		return s, err
	}
	for _, cc := range classes.Items {
		add("ClusterClass %s: %s", cc.Name, why(cc.Status.Conditions, "VariablesReady", "RefVersionsUpToDate", "Paused"))
	}
	cps := &controlplanev1.OpenshiftAssistedControlPlaneList{}
	if err := c.List(ctx, cps, client.InNamespace(ns)); err != nil {
		return s, err
	}
	for _, cp := range cps.Items {
		add("ControlPlane %s: version=%s replicas=%d ready=%d initialized=%v %s", cp.Name, cp.Spec.DistributionVersion,
			deref(cp.Status.Replicas), deref(cp.Status.ReadyReplicas), cp.Status.Initialization.ControlPlaneInitialized != nil && *cp.Status.Initialization.ControlPlaneInitialized,
			why(cp.Status.Conditions, "Available", "MachinesReady", "Upgrading"))
	}
	acis := &hiveextv1beta1.AgentClusterInstallList{}
	if err := c.List(ctx, acis, client.InNamespace(ns)); err != nil {
		return s, err
	}
	for _, aci := range acis.Items {
		add("AgentClusterInstall %s: %s (%s)", aci.Name, aci.Status.DebugInfo.State, aci.Status.DebugInfo.StateInfo)
	}
	machines := &clusterv1.MachineList{}
	if err := c.List(ctx, machines, client.InNamespace(ns)); err != nil {
		return s, err
	}
	sort.Slice(machines.Items, func(i, j int) bool { return machines.Items[i].Name < machines.Items[j].Name })
	for _, m := range machines.Items {
		add("Machine %s: phase=%s node=%s %s", m.Name, m.Status.Phase, m.Status.NodeRef.Name,
			why(m.Status.Conditions, "BootstrapConfigReady", "InfrastructureReady", "NodeHealthy", "Ready"))
	}
	configs := &bootstrapv1.OpenshiftAssistedConfigList{}
	if err := c.List(ctx, configs, client.InNamespace(ns)); err != nil {
		return s, err
	}
	for _, cfg := range configs.Items {
		var owners []string
		for _, ref := range cfg.OwnerReferences {
			owners = append(owners, ref.Kind+"/"+ref.Name)
		}
		add("OpenshiftAssistedConfig %s: owners=%v deleting=%v finalizers=%v %s", cfg.Name, owners, !cfg.DeletionTimestamp.IsZero(),
			cfg.Finalizers, why(cfg.Status.Conditions, "Ready"))
	}
	mds := &clusterv1.MachineDeploymentList{}
	if err := c.List(ctx, mds, client.InNamespace(ns)); err != nil {
		return s, err
	}
	for _, md := range mds.Items {
		add("MachineDeployment %s: replicas=%d ready=%d %s", md.Name, deref(md.Status.Replicas), deref(md.Status.ReadyReplicas),
			why(md.Status.Conditions, "Available", "MachinesReady", "ScalingUp"))
	}
	hosts := &bmov1alpha1.BareMetalHostList{}
	if err := c.List(ctx, hosts, client.InNamespace(ns)); err != nil {
		return s, err
	}
	for _, h := range hosts.Items {
		consumer := ""
		if h.Spec.ConsumerRef != nil {
			consumer = h.Spec.ConsumerRef.Name
		}
		add("BareMetalHost %s: %s consumer=%s", h.Name, h.Status.Provisioning.State, consumer)
	}
	agents := &aiv1beta1.AgentList{}
	if err := c.List(ctx, agents, client.InNamespace(ns)); err != nil {
		return s, err
	}
	for _, a := range agents.Items {
		add("Agent %s: %s approved=%v role=%s (%s)", a.Spec.Hostname, a.Status.DebugInfo.State, a.Spec.Approved, a.Spec.Role, a.Status.DebugInfo.StateInfo)
	}
	// The workload cluster's Nodes, which Cluster API's Machine controller finds by providerID.
	nodes := &corev1.NodeList{}
	if err := l.Workload.Client.List(ctx, nodes); err != nil {
		return s, err
	}
	for _, n := range nodes.Items {
		add("Node %s: providerID=%s", n.Name, n.Spec.ProviderID)
	}
	return s, nil
}

func deref(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}
