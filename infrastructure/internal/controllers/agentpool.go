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
	"cmp"
	"hash/fnv"
	"slices"
	"sync"

	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/infrastructure/v1beta1"
)

// anyFailureDomain is the pool of every free Agent, whatever its failure domain.
const anyFailureDomain = "*"

// anyDomainOnly are the domains of an Agent without a failure domain, shared by all of them
// (never changed).
var anyDomainOnly = []string{anyFailureDomain}

// agentPool holds the free Agents (agentUsable) so that a claim finds the best fit without
// ranking every one of them (issue 19: that cost grew with the pool). The best fit is the
// smallest host that fits (fewest CPU cores, then least memory, then smallest disk total), which
// keeps bigger hosts for the Machines that need them. Among hosts of one size the request's key
// (the AgentMachine's UID) picks the start of a scan in an order that hashes the Agents: the
// choice is the same for one AgentMachine whatever the order Agents arrived in, and parallel
// AgentMachines start at different Agents. A claim looks at the size classes, and at the Agents
// it skips (reserved, or not matching its selector), never at the whole pool.
//
// The Agent watch of the AgentMachine controller feeds it (observe, forget); it holds the
// cache's objects, which nobody may change.
type agentPool struct {
	mu sync.RWMutex
	// domains holds a pool per failure domain and anyFailureDomain.
	domains map[string]*domainPool
	// in maps each free Agent to where it is pooled.
	in map[client.ObjectKey]pooled
}

// pooled says where a free Agent is: its member entry, under its size class, in these domains.
type pooled struct {
	m       member
	size    sizeClass
	domains []string
}

type sizeClass struct{ cpu, memory, disk int64 }

func compareSize(a, b sizeClass) int {
	return cmp.Or(cmp.Compare(a.cpu, b.cpu), cmp.Compare(a.memory, b.memory), cmp.Compare(a.disk, b.disk))
}

// domainPool holds free Agents by size class, the classes in increasing size.
type domainPool struct {
	classes []sizeClass
	members map[sizeClass][]member
}

// member is a pooled Agent; the members of a class are ordered by hash.
type member struct {
	hash  uint64
	key   client.ObjectKey
	agent *aiv1beta1.Agent
}

func newAgentPool() *agentPool {
	return &agentPool{domains: map[string]*domainPool{}, in: map[client.ObjectKey]pooled{}}
}

func sizeOf(a *aiv1beta1.Agent) sizeClass {
	return sizeClass{cpu: a.Status.Inventory.Cpu.Count, memory: a.Status.Inventory.Memory.PhysicalBytes, disk: diskBytes(a)}
}

func hashOf(parts ...string) uint64 {
	h := fnv.New64a()
	for _, p := range parts {
		_, _ = h.Write([]byte(p))
		_, _ = h.Write([]byte{0})
	}
	// FNV's high bits barely change between keys that differ in their last bytes (machine-1,
	// machine-2): MurmurHash3's finalizer spreads them over the whole range.
	x := h.Sum64()
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

// observe records the Agent as it is now: pooled when it may be claimed, else not.
func (p *agentPool) observe(agent *aiv1beta1.Agent) {
	key := client.ObjectKeyFromObject(agent)
	usable := agentUsable(agent) == ""
	domains := anyDomainOnly
	if fd := agent.Labels[infrav1.FailureDomainLabel]; fd != "" && fd != anyFailureDomain {
		domains = []string{anyFailureDomain, fd}
	}
	size := sizeOf(agent)
	p.mu.Lock()
	defer p.mu.Unlock()
	if at, ok := p.in[key]; ok && usable && at.size == size && at.m.agent.UID == agent.UID && slices.Equal(at.domains, domains) {
		// Most updates of a free Agent are assisted-service's status heartbeats: it keeps its
		// place in every list (the hash is of its UID and key; an Agent recreated under the same
		// name has another UID), only the copy it points at is new.
		for _, d := range domains {
			list := p.domains[d].members[size]
			if i, found := slices.BinarySearchFunc(list, at.m, compareMember); found {
				list[i].agent = agent
			}
		}
		at.m.agent = agent
		p.in[key] = at
		return
	}
	p.remove(key)
	if !usable {
		return
	}
	m := member{hash: hashOf(string(agent.UID), key.String()), key: key, agent: agent}
	for _, d := range domains {
		dp := p.domains[d]
		if dp == nil {
			dp = &domainPool{members: map[sizeClass][]member{}}
			p.domains[d] = dp
		}
		list, ok := dp.members[size]
		if !ok {
			i, _ := slices.BinarySearchFunc(dp.classes, size, compareSize)
			dp.classes = slices.Insert(dp.classes, i, size)
		}
		i, _ := slices.BinarySearchFunc(list, m, compareMember)
		dp.members[size] = slices.Insert(list, i, m)
	}
	p.in[key] = pooled{m: m, size: size, domains: domains}
}

// forget removes a deleted Agent.
func (p *agentPool) forget(key client.ObjectKey) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.remove(key)
}

func compareMember(a, b member) int {
	if c := cmp.Compare(a.hash, b.hash); c != 0 {
		return c
	}
	return cmp.Or(cmp.Compare(a.key.Namespace, b.key.Namespace), cmp.Compare(a.key.Name, b.key.Name))
}

// remove takes the Agent out of every pool it is in; p.mu is held.
func (p *agentPool) remove(key client.ObjectKey) {
	at, ok := p.in[key]
	if !ok {
		return
	}
	delete(p.in, key)
	for _, d := range at.domains {
		dp := p.domains[d]
		list := dp.members[at.size]
		i, found := slices.BinarySearchFunc(list, at.m, compareMember)
		if !found {
			continue
		}
		if list = slices.Delete(list, i, i+1); len(list) > 0 {
			dp.members[at.size] = list
			continue
		}
		delete(dp.members, at.size)
		if j, found := slices.BinarySearchFunc(dp.classes, at.size, compareSize); found {
			dp.classes = slices.Delete(dp.classes, j, j+1)
		}
		if len(dp.classes) == 0 {
			delete(p.domains, d)
		}
	}
}

// best returns the best fit free Agent for the request that skip does not refuse, or nil.
func (p *agentPool) best(req agentRequest, skip func(client.ObjectKey) bool) *aiv1beta1.Agent {
	fd := req.failureDomain
	if fd == "" {
		fd = anyFailureDomain
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	dp := p.domains[fd]
	if dp == nil {
		return nil
	}
	start := hashOf(req.key)
	for _, size := range dp.classes {
		list := dp.members[size]
		first, _ := slices.BinarySearchFunc(list, start, func(m member, h uint64) int { return cmp.Compare(m.hash, h) })
		for i := range list {
			m := list[(first+i)%len(list)]
			if !skip(m.key) && req.mismatch(m.agent) == "" {
				return m.agent
			}
		}
	}
	return nil
}
