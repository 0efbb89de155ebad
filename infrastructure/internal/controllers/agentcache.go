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
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
)

// TrimAgent is the transform of the cache that holds Agents (cache.ByObject): it keeps what this
// provider's controllers read and drops the rest before the Agent is stored. A hub caches every
// Agent it has, and most of an Agent is its hardware inventory (CPU flags, every disk's and NIC's
// details), its validations and, like any object, its managed fields: none of which a claim or
// an AgentMachine's status needs. Kept:
//   - metadata, but its managed fields and kubectl's last-applied annotation;
//   - the whole spec, which claims and releases write;
//   - status conditions, and the host state of debugInfo (the capoa_agents metric);
//   - of the inventory: hostname, CPU count and architecture, physical memory, each disk's size
//     and each NIC's MAC and IP addresses (ranking, architecture match, Machine addresses).
//
// Agents are only written with merge patches computed between two trimmed copies, so the fields
// dropped here never appear in a patch and survive on the API server. Objects other than Agents
// (and tombstones) pass unchanged.
func TrimAgent(obj any) (any, error) {
	agent, ok := obj.(*aiv1beta1.Agent)
	if !ok {
		return obj, nil
	}
	agent.ManagedFields = nil
	delete(agent.Annotations, corev1.LastAppliedConfigAnnotation)
	inv := agent.Status.Inventory
	trimmed := aiv1beta1.HostInventory{
		Hostname: inv.Hostname,
		Cpu:      aiv1beta1.HostCPU{Count: inv.Cpu.Count, Architecture: inv.Cpu.Architecture},
		Memory:   aiv1beta1.HostMemory{PhysicalBytes: inv.Memory.PhysicalBytes},
	}
	for _, d := range inv.Disks {
		trimmed.Disks = append(trimmed.Disks, aiv1beta1.HostDisk{SizeBytes: d.SizeBytes})
	}
	for _, i := range inv.Interfaces {
		trimmed.Interfaces = append(trimmed.Interfaces, aiv1beta1.HostInterface{
			MacAddress: i.MacAddress, IPV4Addresses: i.IPV4Addresses, IPV6Addresses: i.IPV6Addresses,
		})
	}
	agent.Status = aiv1beta1.AgentStatus{
		Conditions: agent.Status.Conditions,
		Inventory:  trimmed,
		// The host state, for the capoa_agents metric (CountAgents).
		DebugInfo: aiv1beta1.DebugInfo{State: agent.Status.DebugInfo.State},
	}
	return agent, nil
}
