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

// Package kubelet plays the kubelet of an installed OpenShift host: it registers the host's Node
// in the workload cluster and reports it healthy. The assisted-service simulator and the hosts
// that talk to the real assisted-service share it.
package kubelet

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/inventory"
)

// Node is what the kubelet of an installed host registers.
type Node struct {
	Host *inventory.Host
	// Name is the Node's name: the host's hostname, or the one assisted-service was told.
	Name string
	// Labels are set at registration: the role labels the machine-config operator's kubelet
	// configuration gives a node of its pool, and the node labels of the host's installation.
	Labels map[string]string
	// Taints are set at registration (an arbiter's NoSchedule taint).
	Taints []corev1.Taint
	// ProviderID is the kubelet's --provider-id, "" when none is set.
	ProviderID string
	// KubeletVersion is the Kubernetes version of the release installed, "" when unknown.
	KubeletVersion string
	// MachineNetworks choose the node's addresses (inventory.Host.NodeAddresses).
	MachineNetworks []string
	// BootID changes at each boot of the host.
	BootID string
}

// RoleLabels are the labels of a Node of that role: master (with control-plane), worker, or
// arbiter.
func RoleLabels(role string) map[string]string {
	switch role {
	case "master", "bootstrap":
		return map[string]string{"node-role.kubernetes.io/master": "", "node-role.kubernetes.io/control-plane": ""}
	case "arbiter":
		return map[string]string{"node-role.kubernetes.io/arbiter": ""}
	}
	return map[string]string{"node-role.kubernetes.io/worker": ""}
}

// Register creates the Node in the workload cluster c if it is missing, then writes the status a
// healthy kubelet reports, heartbeats at now.
func Register(ctx context.Context, c client.Client, n Node, now time.Time) error {
	h := n.Host
	crio := ""
	if n.KubeletVersion != "" {
		// OpenShift ships the CRI-O of its Kubernetes minor (CRI-O's versions follow
		// Kubernetes': cri-o 1.30 for Kubernetes 1.30, in OpenShift 4.17).
		crio = "cri-o://" + strings.TrimPrefix(n.KubeletVersion, "v")
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name}}
	err := c.Get(ctx, client.ObjectKeyFromObject(node), node)
	if apierrors.IsNotFound(err) {
		node.Labels = map[string]string{
			corev1.LabelHostname: n.Name, corev1.LabelOSStable: "linux", corev1.LabelArchStable: "amd64",
			"node.openshift.io/os_id": "rhcos",
		}
		for k, v := range n.Labels {
			node.Labels[k] = v
		}
		node.Spec.Taints = n.Taints
		node.Spec.ProviderID = n.ProviderID
		if err := c.Create(ctx, node); err != nil {
			return fmt.Errorf("creating Node %s in the workload cluster: %w", n.Name, err)
		}
	} else if err != nil {
		return fmt.Errorf("reading Node %s in the workload cluster: %w", n.Name, err)
	}
	t := metav1.NewTime(now)
	mem := resource.NewQuantity(int64(h.RAMMebibytes)*1024*1024, resource.BinarySI)
	cpu := resource.NewQuantity(int64(h.CPUCount), resource.DecimalSI)
	node.Status = corev1.NodeStatus{
		Capacity:    corev1.ResourceList{corev1.ResourceCPU: *cpu, corev1.ResourceMemory: *mem},
		Allocatable: corev1.ResourceList{corev1.ResourceCPU: *cpu, corev1.ResourceMemory: *mem},
		Addresses:   h.NodeAddresses(n.MachineNetworks...),
		NodeInfo: corev1.NodeSystemInfo{
			SystemUUID: strings.ToLower(h.SystemUUID), MachineID: strings.ReplaceAll(strings.ToLower(h.SystemUUID), "-", ""),
			BootID: n.BootID, OSImage: "Red Hat Enterprise Linux CoreOS (simulated)", OperatingSystem: "linux",
			Architecture: "amd64", KernelVersion: "5.14.0", ContainerRuntimeVersion: crio, KubeletVersion: n.KubeletVersion,
		},
		// What a healthy kubelet reports (Cluster API's NodeHealthy reads all four).
		Conditions: []corev1.NodeCondition{
			{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientMemory",
				Message: "kubelet has sufficient memory available", LastHeartbeatTime: t, LastTransitionTime: t},
			{Type: corev1.NodeDiskPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasNoDiskPressure",
				Message: "kubelet has no disk pressure", LastHeartbeatTime: t, LastTransitionTime: t},
			{Type: corev1.NodePIDPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientPID",
				Message: "kubelet has sufficient PID available", LastHeartbeatTime: t, LastTransitionTime: t},
			{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
				Message: "kubelet is posting ready status", LastHeartbeatTime: t, LastTransitionTime: t},
		},
	}
	if err := c.Status().Update(ctx, node); err != nil {
		return fmt.Errorf("updating Node %s status in the workload cluster: %w", n.Name, err)
	}
	return nil
}
