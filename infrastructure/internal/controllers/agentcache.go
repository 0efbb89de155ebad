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
	"slices"
	"strings"
	"sync"

	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	conditionsv1 "github.com/openshift/custom-resource-status/conditions/v1"
	corev1 "k8s.io/api/core/v1"
)

// TrimAgent is the transform of the cache that holds Agents (cache.ByObject): it keeps what this
// provider's controllers read and drops the rest before the Agent is stored. A hub caches every
// Agent it has, and most of an Agent is its hardware inventory (CPU flags, every disk's and NIC's
// details), its validations and, like any object, its managed fields: none of which a claim or
// an AgentMachine's status needs. Kept:
//   - metadata, but its managed fields and kubectl's last-applied annotation;
//   - the whole spec, which claims and releases write;
//   - the status conditions the controllers read (agentConditionsRead: availability, the
//     mirrored ones, Bound) without their times, and the host state of debugInfo (the
//     capoa_agents metric);
//   - of the inventory: hostname, CPU count and architecture, physical memory, the disks as one
//     of their total size (diskBytes, the size class of a claim, is all that reads them), and
//     the NICs that have an address, with their MAC and IP addresses (Machine addresses).
//
// What a cached Agent costs is measured by BenchmarkCachedAgent (issue 45): the decoder gives each
// string and slice an allocation of its own, so what repeats from Agent to Agent is shared
// instead: the strings (namespace, condition types, statuses, reasons and messages, architecture,
// host state: intern), the conditions (trimConditions) and the disks (sharedDisks); the slice of
// NICs is a new one of exactly its length (append would leave a quarter to a half unused).
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
	agent.Namespace = intern(agent.Namespace)
	inv := &agent.Status.Inventory
	trimmed := aiv1beta1.HostInventory{
		Hostname: inv.Hostname,
		Cpu:      aiv1beta1.HostCPU{Count: inv.Cpu.Count, Architecture: intern(inv.Cpu.Architecture)},
		Memory:   aiv1beta1.HostMemory{PhysicalBytes: inv.Memory.PhysicalBytes},
	}
	if len(inv.Disks) > 0 {
		var total int64
		for i := range inv.Disks {
			total += inv.Disks[i].SizeBytes
		}
		trimmed.Disks = sharedDisks(total)
	}
	addressed := 0
	for i := range inv.Interfaces {
		if len(inv.Interfaces[i].IPV4Addresses)+len(inv.Interfaces[i].IPV6Addresses) > 0 {
			addressed++
		}
	}
	if addressed > 0 {
		trimmed.Interfaces = make([]aiv1beta1.HostInterface, 0, addressed)
		for i := range inv.Interfaces {
			nic := &inv.Interfaces[i]
			if len(nic.IPV4Addresses)+len(nic.IPV6Addresses) > 0 {
				trimmed.Interfaces = append(trimmed.Interfaces, aiv1beta1.HostInterface{
					MacAddress: nic.MacAddress, IPV4Addresses: nonEmpty(nic.IPV4Addresses), IPV6Addresses: nonEmpty(nic.IPV6Addresses),
				})
			}
		}
	}
	agent.Status = aiv1beta1.AgentStatus{
		Conditions: trimConditions(agent.Status.Conditions),
		Inventory:  trimmed,
		// The host state, for the capoa_agents metric (CountAgents).
		DebugInfo: aiv1beta1.DebugInfo{State: intern(agent.Status.DebugInfo.State)},
	}
	return agent, nil
}

// agentConditionsRead are the Agent conditions the controllers read: the availability of a host
// (agentUsable), those mirrored on the AgentMachine (mirrored: Connected, SpecSynced, Validated,
// RequirementsMet, Installed) and Bound (the release waits for the unbinding).
var agentConditionsRead = []conditionsv1.ConditionType{
	aiv1beta1.ConnectedCondition, aiv1beta1.SpecSyncedCondition, aiv1beta1.ValidatedCondition,
	aiv1beta1.RequirementsMetCondition, aiv1beta1.InstalledCondition, aiv1beta1.BoundCondition,
}

// trimConditions returns the conditions of agentConditionsRead without their times, which no
// controller reads, in a slice that every Agent with the same conditions shares (a hub's free
// hosts all report the same six): the cache's objects are never changed in place (they are
// deep-copied before a change), so one slice serves them all. Conditions not seen before are
// kept in a slice of their own when the table of shared ones is full (sharedMax).
func trimConditions(conds []conditionsv1.Condition) []conditionsv1.Condition {
	var kept [8]conditionsv1.Condition
	out := kept[:0]
	var key strings.Builder
	for _, c := range conds {
		if !slices.Contains(agentConditionsRead, c.Type) {
			continue
		}
		out = append(out, conditionsv1.Condition{Type: c.Type, Status: c.Status, Reason: c.Reason, Message: c.Message})
		for _, part := range []string{string(c.Type), string(c.Status), c.Reason, c.Message} {
			key.WriteString(part)
			key.WriteByte(0)
		}
	}
	if len(out) == 0 {
		return nil
	}
	shared.Lock()
	defer shared.Unlock()
	if found, ok := shared.conditions[key.String()]; ok {
		return found
	}
	for i := range out {
		c := &out[i]
		c.Type = conditionsv1.ConditionType(internLocked(string(c.Type)))
		c.Status = corev1.ConditionStatus(internLocked(string(c.Status)))
		c.Reason, c.Message = internLocked(c.Reason), internLocked(c.Message)
	}
	own := slices.Clip(slices.Clone(out))
	if len(shared.conditions) < sharedMax && key.Len() <= internLongest*4 {
		shared.conditions[key.String()] = own
	}
	return own
}

// sharedDisks returns the disks of an Agent as one of their total size, in a slice every Agent
// with that total shares (see trimConditions).
func sharedDisks(total int64) []aiv1beta1.HostDisk {
	shared.Lock()
	defer shared.Unlock()
	if found, ok := shared.disks[total]; ok {
		return found
	}
	own := []aiv1beta1.HostDisk{{SizeBytes: total}}
	if len(shared.disks) < sharedMax {
		shared.disks[total] = own
	}
	return own
}

// nonEmpty returns s, or nil for an empty slice (the decoder's []string{} of a NIC without
// addresses of a family).
func nonEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

// internMax, internLongest and sharedMax bound what the tables of shared values hold: the
// vocabulary of Agents (namespaces, condition types, statuses, reasons and messages,
// architectures, host states, disk totals) is small, but a message may name a host, and the
// tables never forget. Past the bounds, values are kept as decoded: at most 1,024 strings of 256
// bytes and 256 sets of conditions (of at most 1 KiB of text each) stay in memory for the
// process's life, less than 1 MiB.
const (
	internMax     = 1024
	internLongest = 256
	sharedMax     = 256
)

// shared holds what Agents share in the cache: one copy of each string interned, and the
// condition and disk slices of trimConditions and sharedDisks.
var shared = struct {
	sync.Mutex
	strings    map[string]string
	conditions map[string][]conditionsv1.Condition
	disks      map[int64][]aiv1beta1.HostDisk
}{strings: map[string]string{}, conditions: map[string][]conditionsv1.Condition{}, disks: map[int64][]aiv1beta1.HostDisk{}}

// intern returns the copy of s the interning table holds, adding s when there is room: the copy
// decoded for this Agent becomes garbage, and the cache holds one copy of each string however
// many Agents carry it. (unique.Make forgets a value no handle refers to at the next GC, and
// would allocate a new copy after each.) The transform of an informer runs on one goroutine: the
// lock is not contended.
func intern(s string) string {
	if s == "" || len(s) > internLongest {
		return s
	}
	shared.Lock()
	defer shared.Unlock()
	return internLocked(s)
}

// internLocked is intern with shared locked.
func internLocked(s string) string {
	if s == "" || len(s) > internLongest {
		return s
	}
	if c, ok := shared.strings[s]; ok {
		return c
	}
	if len(shared.strings) < internMax {
		shared.strings[s] = s
	}
	return s
}
