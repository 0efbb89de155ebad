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

package controllers_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/infrastructure/v1beta1"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/faults"
)

// faultyConfig is the environment's rest.Config with the injector in front of the API server.
func faultyConfig(in *faults.Injector) *rest.Config {
	cfg := in.Config(env.Config)
	cfg.QPS, cfg.Burst = 200, 300
	return cfg
}

// reconcilePanics is controller-runtime's count of recovered reconcile panics, every controller.
func reconcilePanics(t *testing.T) float64 {
	t.Helper()
	n, err := faults.ReconcilePanics()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestFaults runs the infrastructure provider through randomized, seeded runs with faults: the
// manager runs behind a fault injector and is restarted mid-run; Machines, AgentMachines and the
// Cluster or the namespace are deleted in a random order. During each run no Agent may be held by two
// AgentMachines nor an AgentMachine hold two Agents; after it, nothing is left claimed, no object
// keeps a finalizer and no reconcile panicked. FAULT_RUNS=n runs n seeds (default 2);
// FAULT_SEED=s starts at seed s. It prints what it injected.
func TestFaults(t *testing.T) { faultRuns(t, false) }

// TestFaultsTwoManagers is TestFaults with a second manager reconciling the same objects without
// leader election (as during a leader hand-over, for longer). Before the AgentMachine recorded
// its chosen Agent under an optimistic lock, both managers claimed an Agent for the same
// AgentMachine in every seed tried.
func TestFaultsTwoManagers(t *testing.T) { faultRuns(t, true) }

func faultRuns(t *testing.T, twoManagers bool) {
	t.Helper()
	t.Parallel() // see suite_test.go
	runs, seed := 2, time.Now().UnixNano()%1000
	if v, err := strconv.Atoi(os.Getenv("FAULT_RUNS")); err == nil && v > 0 {
		runs = v
	}
	if v, err := strconv.ParseInt(os.Getenv("FAULT_SEED"), 10, 64); err == nil {
		seed = v
	}
	for i := range runs {
		s := seed + int64(i)
		t.Run(fmt.Sprintf("seed-%d", s), func(t *testing.T) { faultRun(t, s, twoManagers) })
	}
}

func faultRun(t *testing.T, seed int64, twoManagers bool) {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	rng := rand.New(rand.NewSource(seed)) //nolint:gosec // a seeded run, reproducible
	panicsBefore := reconcilePanics(t)
	f := newFixture(t, ctx, fmt.Sprintf("fault-%d", seed), nil)

	const agents, machines = 8, 6
	for i := range agents {
		createAgent(t, ctx, f.ns, agentName(100+i), nil, 8)
	}
	injectors := []*faults.Injector{faults.New(seed*7 + 1), faults.New(seed*7 + 2)}
	first := isolated(f, 4)
	first.restConfig = faultyConfig(injectors[0])
	stopFirst := startCrashLooping(t, first)
	managers := 1
	if twoManagers {
		// Both providers race on every object; one set of Cluster API controllers.
		second := isolated(f, 4)
		second.restConfig = faultyConfig(injectors[1])
		second.noCAPI = true
		defer startCrashLooping(t, second)()
		managers = 2
	}

	// Sample the invariant while the run goes on.
	var violations []string
	var vmu sync.Mutex
	sampleCtx, stopSampling := context.WithCancel(ctx)
	samples := 0
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for sampleCtx.Err() == nil {
			if v := doubleClaims(ctx, f.ns); v != "" {
				vmu.Lock()
				violations = append(violations, v)
				vmu.Unlock()
			}
			samples++
			time.Sleep(150 * time.Millisecond)
		}
	}()

	names := make([]string, machines)
	for i := range machines {
		names[i] = fmt.Sprintf("m%d", i)
		f.machine(t, ctx, names[i], nil)
	}
	// Restart the first manager at a random point of the claims.
	time.Sleep(time.Duration(rng.Intn(3000)) * time.Millisecond)
	stopFirst()
	restarted := startCrashLooping(t, first)
	defer func() { restarted() }()

	g.Eventually(func(g Gomega) {
		for _, n := range names {
			g.Expect(getAM(g, ctx, f.ns, n).Spec.ProviderID).NotTo(BeEmpty(), "AgentMachine %s has no Agent yet", n)
		}
		assertOneAgentPerMachine(g, ctx, f.ns, machines)
	}, 3*timeout, interval).Should(Succeed())

	// Delete in a random order: some AgentMachines before their Machines, the rest by their
	// Machine; then, by seed, nothing more, the Cluster with whatever is left, or (after half of
	// the Machines) the namespace with everything in it, Agents included.
	rng.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
	mode := seed % 3
	var order []string
	for i, n := range names {
		if mode == 2 && i == len(names)/2 {
			break
		}
		var obj client.Object = &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: n}}
		kind := "Machine"
		if i%3 == 0 {
			obj, kind = &infrav1.AgentMachine{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: n}}, "AgentMachine"
		}
		g.Expect(client.IgnoreNotFound(env.Client.Delete(ctx, obj))).To(Succeed())
		order = append(order, kind+"/"+n)
		if i%3 == 0 {
			g.Expect(client.IgnoreNotFound(env.Client.Delete(ctx, &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: n}}))).To(Succeed())
			order = append(order, "Machine/"+n)
		}
		time.Sleep(time.Duration(rng.Intn(300)) * time.Millisecond)
	}
	switch mode {
	case 1:
		g.Expect(env.Client.Delete(ctx, &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: f.cluster}})).To(Succeed())
		order = append(order, "Cluster/"+f.cluster)
	case 2:
		// What the namespace controller does: everything at once, Agents and ClusterDeployment
		// included; no finalizer may keep the namespace Terminating.
		order = append(order, "Namespace/"+f.ns)
		g.Expect(env.DeleteNamespace(ctx, f.ns, 3*timeout)).To(Succeed(), "deleted in the order %v", order)
	}

	g.Eventually(func(g Gomega) {
		ams := &infrav1.AgentMachineList{}
		g.Expect(env.Client.List(ctx, ams, client.InNamespace(f.ns))).To(Succeed())
		left := []string{}
		for _, am := range ams.Items {
			left = append(left, fmt.Sprintf("%s (finalizers %v)", am.Name, am.Finalizers))
		}
		g.Expect(left).To(BeEmpty(), "AgentMachines left")
		ms := &clusterv1.MachineList{}
		g.Expect(env.Client.List(ctx, ms, client.InNamespace(f.ns))).To(Succeed())
		leftMachines := []string{}
		for _, m := range ms.Items {
			why := ""
			for _, c := range m.Status.Conditions {
				if c.Type == clusterv1.MachineDeletingCondition {
					why = c.Reason + ": " + c.Message
				}
			}
			leftMachines = append(leftMachines, fmt.Sprintf("%s (finalizers %v, deleting %q)", m.Name, m.Finalizers, why))
		}
		g.Expect(leftMachines).To(BeEmpty(), "Machines left")
		g.Expect(claimedAgents(g, ctx, f.ns)).To(BeEmpty(), "Agents left claimed")
		list := &aiv1beta1.AgentList{}
		g.Expect(env.Client.List(ctx, list, client.InNamespace(f.ns))).To(Succeed())
		for _, a := range list.Items {
			g.Expect(a.Annotations).NotTo(HaveKey(infrav1.ClaimOwnerAnnotation), "Agent %s", a.Name)
			g.Expect(a.Spec.ClusterDeploymentName).To(BeNil(), "Agent %s still bound", a.Name)
		}
	}, 3*timeout, interval).Should(Succeed(), "deleted in the order %v", order)
	stopSampling()
	<-sampled

	vmu.Lock()
	defer vmu.Unlock()
	g.Expect(violations).To(BeEmpty(), "double claims seen during the run")
	panics := reconcilePanics(t) - panicsBefore
	g.Expect(panics).To(BeZero(), "reconciles panicked")

	total, kinds := faults.Summary(injectors...)
	t.Log(faults.Report("%s seed %d: %d Agents, %d Machines, %d manager(s) (no leader election), 1 restart; deleted %s; "+
		"faults injected %d (%s); %d invariant samples, 0 double claims, 0 orphans, 0 finalizers left, 0 panics",
		t.Name(), seed, agents, machines, managers, strings.Join(order, " "), total, kinds, samples))
}

// startCrashLooping starts a manager behind a fault injector as the kubelet runs its pod: a
// manager whose setup fails (discovery, a cache that does not sync) exits and is started again.
func startCrashLooping(t *testing.T, mc managerConfig) func() {
	t.Helper()
	var errs []error
	for range 20 {
		stop, err := tryStartManager(t, mc)
		if err == nil {
			return stop
		}
		errs = append(errs, err)
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("the manager did not start in 20 tries: %v", errors.Join(errs...))
	return nil
}

// doubleClaims says which AgentMachines hold an Agent that another one claims, two of them the
// same Agent, or one of them two Agents ("" when none): an AgentMachine's providerID names its Agent for as long as it is not
// deleted, and that Agent's claim label holds its UID (or no claim while it is being released).
func doubleClaims(ctx context.Context, ns string) string {
	ams := &infrav1.AgentMachineList{}
	agents := &aiv1beta1.AgentList{}
	if err := env.Client.List(ctx, ams, client.InNamespace(ns)); err != nil {
		return ""
	}
	if err := env.Client.List(ctx, agents, client.InNamespace(ns)); err != nil {
		return ""
	}
	claim := map[string]string{}
	for _, a := range agents.Items {
		claim[a.Name] = a.Labels[infrav1.AgentClaimedByLabel]
	}
	holder := map[string]string{}
	var out []string
	held := map[string][]string{}
	for _, a := range agents.Items {
		if c := claim[a.Name]; c != "" {
			held[c] = append(held[c], a.Name)
		}
	}
	for uid, names := range held {
		if len(names) > 1 {
			out = append(out, fmt.Sprintf("AgentMachine %s holds Agents %v", uid, names))
		}
	}
	for _, am := range ams.Items {
		name, ok := strings.CutPrefix(am.Spec.ProviderID, "agent://")
		if !ok || name == "" {
			continue
		}
		if other, dup := holder[name]; dup {
			out = append(out, fmt.Sprintf("Agent %s is the providerID of AgentMachines %s and %s", name, other, am.Name))
		}
		holder[name] = am.Name
		if c := claim[name]; c != "" && c != string(am.UID) && am.DeletionTimestamp.IsZero() {
			out = append(out, fmt.Sprintf("AgentMachine %s holds Agent %s, which is claimed by %s", am.Name, name, c))
		}
	}
	return strings.Join(out, "; ")
}
