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
	"fmt"
	"math/rand"
	"testing"

	. "github.com/onsi/gomega"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/infrastructure/v1beta1"
)

func poolOf(agents ...*aiv1beta1.Agent) *agentPool {
	p := newAgentPool()
	for _, a := range agents {
		p.observe(a)
	}
	return p
}

func noSkip(client.ObjectKey) bool { return false }

// order returns the Agents best returns one after the other, each skipped once returned.
func order(p *agentPool, req agentRequest) []string {
	passed := map[client.ObjectKey]bool{}
	var out []string
	for {
		a := p.best(req, func(k client.ObjectKey) bool { return passed[k] })
		if a == nil {
			return out
		}
		passed[client.ObjectKeyFromObject(a)] = true
		out = append(out, a.Name)
	}
}

func TestAgentPoolBestFit(t *testing.T) {
	g := NewWithT(t)
	p := poolOf(
		testAgent("big", withCPU(32)),
		testAgent("small", withCPU(4)),
		testAgent("off", withCPU(2), func(a *aiv1beta1.Agent) { a.Spec.Approved = false }),
		testAgent("mid", withCPU(8)),
		testAgent("mid-more-memory", withCPU(8), func(a *aiv1beta1.Agent) { a.Status.Inventory.Memory.PhysicalBytes = 64 << 30 }),
		testAgent("mid-bigger-disk", withCPU(8), func(a *aiv1beta1.Agent) {
			a.Status.Inventory.Disks = []aiv1beta1.HostDisk{{SizeBytes: 1 << 40}}
		}),
	)
	// Fewest cores, then least memory, then smallest disks.
	g.Expect(order(p, agentRequest{key: "m1"})).To(Equal([]string{"small", "mid", "mid-bigger-disk", "mid-more-memory", "big"}))
	// The request's fit still rules: a selector skips the hosts it does not match.
	g.Expect(order(p, agentRequest{key: "m1", architecture: "arm64"})).To(BeEmpty())

	// Claimed or deleted: out of the pool; released: back.
	small := testAgent("small", withCPU(4), withLabel(infrav1.AgentClaimedByLabel, "u1"))
	p.observe(small)
	g.Expect(p.best(agentRequest{key: "m1"}, noSkip).Name).To(Equal("mid"))
	p.forget(client.ObjectKey{Namespace: "agents", Name: "mid"})
	g.Expect(p.best(agentRequest{key: "m1"}, noSkip).Name).To(Equal("mid-bigger-disk"))
	p.observe(testAgent("small", withCPU(4)))
	g.Expect(p.best(agentRequest{key: "m1"}, noSkip).Name).To(Equal("small"))
	g.Expect(p.in).To(HaveLen(4))
}

func TestAgentPoolFailureDomains(t *testing.T) {
	g := NewWithT(t)
	p := poolOf(
		testAgent("a1", withCPU(4), withLabel(infrav1.FailureDomainLabel, "fd1")),
		testAgent("a2", withCPU(8), withLabel(infrav1.FailureDomainLabel, "fd2")),
		testAgent("a3", withCPU(16)),
	)
	g.Expect(order(p, agentRequest{key: "m", failureDomain: "fd2"})).To(Equal([]string{"a2"}))
	g.Expect(order(p, agentRequest{key: "m"})).To(Equal([]string{"a1", "a2", "a3"}))
	g.Expect(order(p, agentRequest{key: "m", failureDomain: "fd3"})).To(BeEmpty())
	// An Agent that moves to another failure domain moves pools.
	p.observe(testAgent("a1", withCPU(4), withLabel(infrav1.FailureDomainLabel, "fd2")))
	g.Expect(order(p, agentRequest{key: "m", failureDomain: "fd2"})).To(Equal([]string{"a1", "a2"}))
	g.Expect(p.domains).NotTo(HaveKey("fd1"), "an empty pool is dropped")
}

// TestAgentPoolSpreadsEqualHosts: among hosts of one size, one AgentMachine's choice does not
// depend on the order the Agents arrived in, and parallel AgentMachines prefer different ones.
func TestAgentPoolSpreadsEqualHosts(t *testing.T) {
	g := NewWithT(t)
	var equal []*aiv1beta1.Agent
	for i := range 20 {
		a := testAgent(fmt.Sprintf("a%02d", i))
		a.UID = types.UID(fmt.Sprintf("uid-%d", i))
		equal = append(equal, a)
	}
	first := order(poolOf(equal...), agentRequest{key: "m1"})
	shuffled := append([]*aiv1beta1.Agent{}, equal...)
	rand.New(rand.NewSource(1)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] }) //nolint:gosec // a test's order
	g.Expect(order(poolOf(shuffled...), agentRequest{key: "m1"})).To(Equal(first))
	g.Expect(first).To(HaveLen(20))

	p := poolOf(equal...)
	tops := map[string]bool{}
	for i := range 10 {
		tops[p.best(agentRequest{key: fmt.Sprintf("machine-%d", i)}, noSkip).Name] = true
	}
	g.Expect(len(tops)).To(BeNumerically(">", 3), "parallel machines should prefer different agents")
}

// TestAgentPoolAgainstRanking checks the pool against the plain definition of the best fit
// (sort every fitting Agent by size) on random pools and changes.
func TestAgentPoolAgainstRanking(t *testing.T) {
	g := NewWithT(t)
	rng := rand.New(rand.NewSource(7)) //nolint:gosec // a seeded test
	p := newAgentPool()
	all := map[string]*aiv1beta1.Agent{}
	for step := range 2000 {
		name := fmt.Sprintf("a%03d", rng.Intn(200))
		switch rng.Intn(5) {
		case 0:
			p.forget(client.ObjectKey{Namespace: "agents", Name: name})
			delete(all, name)
		default:
			a := testAgent(name, withCPU(int64(4*(1+rng.Intn(4)))))
			a.Status.Inventory.Memory.PhysicalBytes = int64(1+rng.Intn(3)) << 30
			if rng.Intn(4) == 0 {
				a.Labels[infrav1.AgentClaimedByLabel] = "someone"
			}
			if rng.Intn(3) == 0 {
				a.Labels[infrav1.FailureDomainLabel] = fmt.Sprintf("fd%d", rng.Intn(2))
			}
			if rng.Intn(6) == 0 {
				a.Status.Conditions[0].Status = corev1.ConditionFalse
			}
			p.observe(a)
			all[name] = a
		}
		req := agentRequest{key: fmt.Sprintf("m%d", step), failureDomain: []string{"", "fd0", "fd1"}[rng.Intn(3)]}
		var want *sizeClass
		for _, a := range all {
			if req.mismatch(a) == "" {
				if s := sizeOf(a); want == nil || compareSize(s, *want) < 0 {
					want = &s
				}
			}
		}
		got := p.best(req, noSkip)
		if want == nil {
			g.Expect(got).To(BeNil(), "step %d", step)
			continue
		}
		g.Expect(got).NotTo(BeNil(), "step %d", step)
		g.Expect(req.mismatch(got)).To(BeEmpty())
		g.Expect(sizeOf(got)).To(Equal(*want), "step %d: the smallest fitting size", step)
	}
	free := 0
	for _, a := range all {
		if agentUsable(a) == "" {
			free++
		}
	}
	g.Expect(p.in).To(HaveLen(free))
}

// TestAgentPoolUpdateInPlace: an update that keeps a free Agent's size class and failure domain
// (assisted-service's heartbeats) keeps its place, and the pool hands out the new copy.
func TestAgentPoolUpdateInPlace(t *testing.T) {
	g := NewWithT(t)
	p := poolOf(testAgent("other", withCPU(8)), testAgent("a", withCPU(8), withLabel("rack", "1")))
	updated := testAgent("a", withCPU(8), withLabel("rack", "2"))
	p.observe(updated)
	g.Expect(p.in).To(HaveLen(2))
	g.Expect(p.domains[anyFailureDomain].members[sizeOf(updated)]).To(HaveLen(2))
	sel, err := labels.Parse("rack=2")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(p.best(agentRequest{key: "m", selector: sel}, noSkip)).To(BeIdenticalTo(updated))

	// A new Agent under the same name (another UID) is pooled afresh, not in the old one's place.
	recreated := testAgent("a", withCPU(8), withLabel("rack", "2"))
	recreated.UID = "uid-a-again"
	p.observe(recreated)
	g.Expect(p.in).To(HaveLen(2))
	g.Expect(p.domains[anyFailureDomain].members[sizeOf(recreated)]).To(HaveLen(2))
	g.Expect(p.best(agentRequest{key: "m", selector: sel}, noSkip)).To(BeIdenticalTo(recreated))
}

// BenchmarkAgentPoolHeartbeat measures what an update of a free Agent that changes nothing the
// pool orders by (assisted-service's periodic status update) costs the Agent watch, in a pool of
// 10,000 Agents of a few size classes.
func BenchmarkAgentPoolHeartbeat(b *testing.B) {
	p := newAgentPool()
	agents := make([]*aiv1beta1.Agent, 10000)
	for i := range agents {
		agents[i] = testAgent(fmt.Sprintf("a%05d", i), withCPU(int64(8*(1+i%4))))
		p.observe(agents[i])
	}
	updates := make([]*aiv1beta1.Agent, len(agents))
	for i, a := range agents {
		updates[i] = a.DeepCopy()
	}
	i := 0
	for b.Loop() {
		p.observe(updates[i%len(updates)])
		i++
	}
}
