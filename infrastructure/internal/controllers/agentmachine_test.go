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
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/infrastructure/v1beta1"
	infracontroller "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/infrastructure/internal/controllers"
	setup "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/infrastructure/setup"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/manager"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/pause"
)

// isolated runs the provider for the fixture's namespace only, so that the AgentMachines other
// tests leave waiting do not take this test's Agents.
func isolated(f fixture, concurrency int) managerConfig {
	return managerConfig{
		opts:  manager.Options{WatchNamespace: f.ns, Concurrency: concurrency},
		infra: setup.Options{AgentNamespace: f.ns},
	}
}

func agentName(i int) string { return fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i) }

func getAM(g Gomega, ctx context.Context, ns, name string) *infrav1.AgentMachine {
	am := &infrav1.AgentMachine{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, am)).To(Succeed())
	return am
}

func reservedReason(am *infrav1.AgentMachine) string {
	if c := conditions.Get(am, infrav1.AgentReservedCondition); c != nil {
		return c.Reason
	}
	return ""
}

// claimedAgents returns, per claim value, the Agents in ns carrying it.
func claimedAgents(g Gomega, ctx context.Context, ns string) map[string][]string {
	list := &aiv1beta1.AgentList{}
	g.Expect(env.Client.List(ctx, list, client.InNamespace(ns), client.HasLabels{infrav1.AgentClaimedByLabel})).To(Succeed())
	out := map[string][]string{}
	for _, a := range list.Items {
		out[a.Labels[infrav1.AgentClaimedByLabel]] = append(out[a.Labels[infrav1.AgentClaimedByLabel]], a.Name)
	}
	return out
}

// TestClaimAndInstall: an AgentMachine claims the Agent, binds it with the token Secret, sets
// providerID and addresses, reports provisioned once the Agent is installed (which the real
// Machine controller picks up), and keeps reflecting the Agent afterwards.
func TestClaimAndInstall(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	startManager(t, managerConfig{})
	f := newFixture(t, ctx, "claim", nil)
	// Waits for an Agent first, with a reason a person can act on.
	// Agents are read in every namespace here: a selector keeps other tests' Agents out.
	only := map[string]string{"test": f.ns}
	f.machine(t, ctx, "m1", func(_ *clusterv1.Machine, am *infrav1.AgentMachine) {
		am.Spec.AgentLabelSelector = &metav1.LabelSelector{MatchLabels: only}
	})
	g.Eventually(func(g Gomega) {
		am := getAM(g, ctx, f.ns, "m1")
		c := conditions.Get(am, infrav1.AgentReservedCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(infrav1.NoSuitableAgentsReason))
		g.Expect(c.Message).To(MatchRegexp(`^0 of \d+ agents fit`))
	}, timeout, interval).Should(Succeed())

	name := agentName(1)
	createAgent(t, ctx, f.ns, name, only, 8)
	agentKey := client.ObjectKey{Namespace: f.ns, Name: name}
	var am *infrav1.AgentMachine
	g.Eventually(func(g Gomega) {
		am = getAM(g, ctx, f.ns, "m1")
		g.Expect(am.Spec.ProviderID).To(Equal("agent://" + name))
		g.Expect(am.Labels).To(HaveKeyWithValue(infrav1.BackupLabel, "true"), "in ACM's hub backups, as cluster-api-provider-agent labels it")
		g.Expect(am.Status.AgentRef).To(Equal(&infrav1.AgentReference{Namespace: f.ns, Name: name}))
		g.Expect(conditions.IsTrue(am, infrav1.AgentReservedCondition)).To(BeTrue())
		g.Expect(am.Status.Addresses).To(ContainElements(
			clusterv1.MachineAddress{Type: clusterv1.MachineInternalIP, Address: fmt.Sprintf("192.168.111.%d", agentIndex(name)+1)},
			clusterv1.MachineAddress{Type: clusterv1.MachineInternalIP, Address: fmt.Sprintf("fd00::%x", agentIndex(name)+1)},
			clusterv1.MachineAddress{Type: clusterv1.MachineHostName, Address: "host-" + name},
			clusterv1.MachineAddress{Type: clusterv1.MachineInternalDNS, Address: "host-" + name},
		))
		g.Expect(am.Status.Initialization.Provisioned).To(BeNil())
	}, timeout, interval).Should(Succeed())

	agent := &aiv1beta1.Agent{}
	g.Expect(env.Client.Get(ctx, agentKey, agent)).To(Succeed())
	g.Expect(agent.Labels[infrav1.AgentClaimedByLabel]).To(Equal(string(am.UID)))
	g.Expect(agent.Spec.ClusterDeploymentName).To(Equal(&aiv1beta1.ClusterReference{Namespace: f.ns, Name: f.cd}))
	g.Expect(agent.Spec.IgnitionEndpointHTTPHeaders).To(Equal(map[string]string{"X-Cluster": "c1"}))
	// The last segment of the Machine's ignition URL, .../config/worker, which assisted-service
	// appends to the AgentClusterInstall's endpoint.
	g.Expect(agent.Spec.MachineConfigPool).To(Equal("worker"))
	g.Expect(agent.Spec.IgnitionEndpointTokenReference).NotTo(BeNil())
	token := &corev1.Secret{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: agent.Spec.IgnitionEndpointTokenReference.Namespace,
		Name: agent.Spec.IgnitionEndpointTokenReference.Name}, token)).To(Succeed())
	g.Expect(string(token.Data[infracontroller.IgnitionTokenSecretKey])).To(Equal("tok3n"))
	g.Expect(token.OwnerReferences).To(ContainElement(HaveField("UID", am.UID)))
	g.Expect(token.Labels).To(And(HaveKeyWithValue(infrav1.AssistedWatchLabel, "true"), HaveKeyWithValue(infrav1.BackupLabel, "true")))

	machine := &clusterv1.Machine{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "m1"}, machine)).To(Succeed())
	g.Expect(machine.Annotations).To(HaveKey(infrav1.PreTerminateHookAnnotation))

	// assisted-service installs the host.
	setAgentCondition(t, ctx, agentKey, aiv1beta1.InstalledCondition, corev1.ConditionTrue, aiv1beta1.InstalledReason)
	g.Eventually(func(g Gomega) {
		am := getAM(g, ctx, f.ns, "m1")
		g.Expect(am.Status.Initialization.Provisioned).To(Equal(ptr.To(true)))
		g.Expect(conditions.IsTrue(am, clusterv1.ReadyCondition)).To(BeTrue())
		// Healthy: Ready in a word, nothing that would flow into the Machine's conditions.
		g.Expect(conditions.Get(am, clusterv1.ReadyCondition).Reason).To(Equal(clusterv1.ReadyReason))
		g.Expect(conditions.Get(am, clusterv1.ReadyCondition).Message).To(BeEmpty())
		m := &clusterv1.Machine{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "m1"}, m)).To(Succeed())
		g.Expect(m.Status.Initialization.InfrastructureProvisioned).To(Equal(ptr.To(true)))
		g.Expect(m.Spec.ProviderID).To(Equal("agent://" + name))
	}, timeout, interval).Should(Succeed())

	// A host that loses its connection shows up after it is ready.
	setAgentCondition(t, ctx, agentKey, aiv1beta1.ConnectedCondition, corev1.ConditionFalse, aiv1beta1.AgentDisconnectedReason)
	g.Eventually(func(g Gomega) {
		am := getAM(g, ctx, f.ns, "m1")
		c := conditions.Get(am, infrav1.AgentConnectedCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Reason).To(Equal(aiv1beta1.AgentDisconnectedReason))
		g.Expect(conditions.IsTrue(am, clusterv1.ReadyCondition)).To(BeFalse())
	}, timeout, interval).Should(Succeed())
}

// TestIgnitionTokenFollowsRotation: HyperShift rotates the ignition token (and the NodePool's
// config changes the headers) in the Machine's bootstrap data Secret after the claim. Until the
// host is installed, the token Secret and the Agent's headers follow, with an event; afterwards
// they are left alone. Before, the token was written once, at the claim, and a host that fetched
// its ignition after a rotation was refused.
func TestIgnitionTokenFollowsRotation(t *testing.T) {
	t.Parallel() // see suite_test.go
	g := NewWithT(t)
	ctx := context.Background()
	f := newFixture(t, ctx, "rotate", nil)
	mc := isolated(f, 0)
	mc.infra.IgnitionTokenRefreshPeriod = 200 * time.Millisecond
	startManager(t, mc)
	name := agentName(1)
	createAgent(t, ctx, f.ns, name, nil, 8)
	f.machine(t, ctx, "m1", nil)
	agentKey := client.ObjectKey{Namespace: f.ns, Name: name}
	var tokenKey client.ObjectKey
	g.Eventually(func(g Gomega) {
		a := &aiv1beta1.Agent{}
		g.Expect(env.Client.Get(ctx, agentKey, a)).To(Succeed())
		g.Expect(a.Spec.IgnitionEndpointTokenReference).NotTo(BeNil())
		tokenKey = client.ObjectKey{Namespace: a.Spec.IgnitionEndpointTokenReference.Namespace, Name: a.Spec.IgnitionEndpointTokenReference.Name}
	}, timeout, interval).Should(Succeed())
	token := func(g Gomega) string {
		s := &corev1.Secret{}
		g.Expect(env.Client.Get(ctx, tokenKey, s)).To(Succeed())
		return string(s.Data[infracontroller.IgnitionTokenSecretKey])
	}
	rotate := func(tok, cluster string) {
		s := &corev1.Secret{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "bootstrap-data"}, s)).To(Succeed())
		s.Data["value"] = []byte(`{"ignition":{"version":"3.1.0","config":{"merge":[{"source":"https://api.c1.example.com:22623/config/worker",` +
			`"httpHeaders":[{"name":"Authorization","value":"Bearer ` + tok + `"},{"name":"X-Cluster","value":"` + cluster + `"}]}]}}}`)
		g.Expect(env.Client.Update(ctx, s)).To(Succeed())
	}
	g.Eventually(token, timeout, interval).Should(Equal("tok3n"))

	// What others add to the Secret stays through a rotation: the token is patched, not the
	// whole Secret replaced.
	g.Expect(env.Client.Patch(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: tokenKey.Namespace, Name: tokenKey.Name}},
		client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"backup.example.com/policy":"daily"}},"data":{"other":"eA=="}}`)))).To(Succeed())
	rotate("r0tated", "c2")
	g.Eventually(func(g Gomega) {
		g.Expect(token(g)).To(Equal("r0tated"))
		s := &corev1.Secret{}
		g.Expect(env.Client.Get(ctx, tokenKey, s)).To(Succeed())
		g.Expect(s.Data).To(HaveKeyWithValue("other", []byte("x")))
		g.Expect(s.Annotations).To(HaveKeyWithValue("backup.example.com/policy", "daily"))
		a := &aiv1beta1.Agent{}
		g.Expect(env.Client.Get(ctx, agentKey, a)).To(Succeed())
		g.Expect(a.Spec.IgnitionEndpointHTTPHeaders).To(Equal(map[string]string{"X-Cluster": "c2"}))
		list := &eventsv1.EventList{}
		g.Expect(env.Client.List(ctx, list, client.InNamespace(f.ns))).To(Succeed())
		g.Expect(list.Items).To(ContainElement(And(HaveField("Reason", "IgnitionTokenRefreshed"), HaveField("Regarding.Name", "m1"))))
	}, timeout, interval).Should(Succeed())

	// Installed: the host has fetched its ignition; a later rotation is not followed.
	setAgentCondition(t, ctx, agentKey, aiv1beta1.InstalledCondition, corev1.ConditionTrue, aiv1beta1.InstalledReason)
	g.Eventually(func(g Gomega) {
		g.Expect(getAM(g, ctx, f.ns, "m1").Status.Initialization.Provisioned).To(Equal(ptr.To(true)))
	}, timeout, interval).Should(Succeed())
	rotate("after-install", "c3")
	g.Consistently(token, 2*time.Second, interval).Should(Equal("r0tated"))
}

// TestSelectorAndFailureDomain: only Agents matching agentLabelSelector, the Machine's failure
// domain and architecture are claimed; the smallest fit wins; no fit is explained.
func TestSelectorAndFailureDomain(t *testing.T) {
	t.Parallel() // see suite_test.go
	g := NewWithT(t)
	ctx := context.Background()
	f := newFixture(t, ctx, "select", nil)
	startManager(t, isolated(f, 0))
	fd := infrav1.FailureDomainLabel
	createAgent(t, ctx, f.ns, agentName(1), map[string]string{"rack": "r1", fd: "fd1"}, 8)
	createAgent(t, ctx, f.ns, agentName(2), map[string]string{"rack": "r2", fd: "fd1"}, 8)
	createAgent(t, ctx, f.ns, agentName(3), map[string]string{"rack": "r1", fd: "fd2"}, 16)
	createAgent(t, ctx, f.ns, agentName(4), map[string]string{"rack": "r1", fd: "fd2"}, 4)
	selector := func(rack string) func(*clusterv1.Machine, *infrav1.AgentMachine) {
		return func(_ *clusterv1.Machine, am *infrav1.AgentMachine) {
			am.Spec.AgentLabelSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"rack": rack}}
		}
	}
	// The Machines nothing fits come first, and say why; the claims of the others then change
	// their counts, which they follow: an Agent's claim wakes the AgentMachines that explained
	// why nothing fits (clean-clone run 25 saw them keep counts from before the claims).
	f.machine(t, ctx, "r3", selector("r3"))
	f.machine(t, ctx, "arm", func(m *clusterv1.Machine, _ *infrav1.AgentMachine) {
		m.Labels[infrav1.ArchitectureLabel] = "arm64"
	})
	g.Eventually(func(g Gomega) {
		g.Expect(conditions.GetMessage(getAM(g, ctx, f.ns, "r3"), infrav1.AgentReservedCondition)).To(
			Equal("0 of 4 agents fit: 4 not matching agentLabelSelector"))
		g.Expect(conditions.GetMessage(getAM(g, ctx, f.ns, "arm"), infrav1.AgentReservedCondition)).To(
			Equal("0 of 4 agents fit: 4 of another CPU architecture"))
	}, timeout, interval).Should(Succeed())
	f.machine(t, ctx, "fd2-r1", func(m *clusterv1.Machine, am *infrav1.AgentMachine) {
		selector("r1")(m, am)
		m.Spec.FailureDomain = "fd2"
	})
	f.machine(t, ctx, "r2", selector("r2"))
	g.Eventually(func(g Gomega) {
		// The smallest host of fd2 with rack r1.
		g.Expect(getAM(g, ctx, f.ns, "fd2-r1").Spec.ProviderID).To(Equal("agent://" + agentName(4)))
		g.Expect(getAM(g, ctx, f.ns, "fd2-r1").Status.FailureDomain).To(Equal("fd2"))
		g.Expect(getAM(g, ctx, f.ns, "r2").Spec.ProviderID).To(Equal("agent://" + agentName(2)))
	}, timeout, interval).Should(Succeed())
	g.Eventually(func(g Gomega) {
		r3 := getAM(g, ctx, f.ns, "r3")
		g.Expect(reservedReason(r3)).To(Equal(infrav1.NoSuitableAgentsReason))
		g.Expect(conditions.Get(r3, infrav1.AgentReservedCondition).Message).To(
			Equal("0 of 4 agents fit: 2 claimed, 2 not matching agentLabelSelector"))
		arm := getAM(g, ctx, f.ns, "arm")
		g.Expect(reservedReason(arm)).To(Equal(infrav1.NoSuitableAgentsReason))
		g.Expect(conditions.Get(arm, infrav1.AgentReservedCondition).Message).To(
			Equal("0 of 4 agents fit: 2 claimed, 2 of another CPU architecture"))
	}, timeout, interval).Should(Succeed())
}

// TestRace: 30 AgentMachines race for 20 Agents with 10 workers: exactly 20 are claimed, each by
// one AgentMachine, and the other 10 wait with NoSuitableAgents.
func TestRace(t *testing.T) {
	t.Parallel() // see suite_test.go
	g := NewWithT(t)
	ctx := context.Background()
	f := newFixture(t, ctx, "race", nil)
	for i := range 20 {
		createAgent(t, ctx, f.ns, agentName(i), nil, 8)
	}
	startManager(t, isolated(f, 10))
	for i := range 30 {
		f.machine(t, ctx, fmt.Sprintf("m%02d", i), nil)
	}
	g.Eventually(func(g Gomega) {
		list := &infrav1.AgentMachineList{}
		g.Expect(env.Client.List(ctx, list, client.InNamespace(f.ns))).To(Succeed())
		reserved, waiting := 0, 0
		for i := range list.Items {
			switch reservedReason(&list.Items[i]) {
			case infrav1.AgentReservedReason:
				reserved++
			case infrav1.NoSuitableAgentsReason:
				g.Expect(conditions.Get(&list.Items[i], infrav1.AgentReservedCondition).Message).To(
					Equal("0 of 20 agents fit: 20 claimed"))
				waiting++
			}
		}
		g.Expect(reserved).To(Equal(20))
		g.Expect(waiting).To(Equal(10))
	}, timeout, interval).Should(Succeed())
	assertOneAgentPerMachine(g, ctx, f.ns, 20)
}

// assertOneAgentPerMachine checks that want Agents are claimed, each by a different AgentMachine
// whose agentRef names it.
func assertOneAgentPerMachine(g Gomega, ctx context.Context, ns string, want int) {
	claims := claimedAgents(g, ctx, ns)
	g.Expect(claims).To(HaveLen(want))
	list := &infrav1.AgentMachineList{}
	g.Expect(env.Client.List(ctx, list, client.InNamespace(ns))).To(Succeed())
	byUID := map[string]*infrav1.AgentMachine{}
	for i := range list.Items {
		byUID[string(list.Items[i].UID)] = &list.Items[i]
	}
	for uid, agents := range claims {
		g.Expect(agents).To(HaveLen(1), "AgentMachine %s holds more than one Agent (claims: %v)", uid, claims)
		am, ok := byUID[uid]
		g.Expect(ok).To(BeTrue(), "Agent %s is claimed by no AgentMachine", agents[0])
		g.Expect(am.Status.AgentRef).NotTo(BeNil())
		g.Expect(am.Status.AgentRef.Name).To(Equal(agents[0]))
	}
}

// TestRestartInTheMiddle: the controller stops while claims are under way; the next one
// re-discovers the claims from the Agents and claims no second Agent for any AgentMachine.
func TestRestartInTheMiddle(t *testing.T) {
	t.Parallel() // see suite_test.go
	g := NewWithT(t)
	ctx := context.Background()
	f := newFixture(t, ctx, "restart", nil)
	for i := range 15 {
		createAgent(t, ctx, f.ns, agentName(i), nil, 8)
	}
	stop := startManager(t, isolated(f, 4))
	for i := range 10 {
		f.machine(t, ctx, fmt.Sprintf("m%02d", i), nil)
	}
	g.Eventually(func(g Gomega) {
		g.Expect(claimedAgents(g, ctx, f.ns)).ToNot(BeEmpty())
	}, timeout, interval).Should(Succeed())
	stop()
	// A claim may have landed on an Agent without the AgentMachine recording it: the index
	// finds it after the restart.
	startManager(t, isolated(f, 4))
	g.Eventually(func(g Gomega) {
		list := &infrav1.AgentMachineList{}
		g.Expect(env.Client.List(ctx, list, client.InNamespace(f.ns))).To(Succeed())
		for i := range list.Items {
			g.Expect(list.Items[i].Status.AgentRef).NotTo(BeNil(), "AgentMachine %s: %+v %v", list.Items[i].Name,
				list.Items[i].Status.Conditions, list.Items[i].OwnerReferences)
		}
		assertOneAgentPerMachine(g, ctx, f.ns, 10)
	}, timeout, interval).Should(Succeed())
}

// TestDeletionUnbinds: deleting the Machine unbinds the Agent through the pre-terminate hook,
// waits for assisted-service to report it unbound, then releases it and lets the Machine go.
func TestDeletionUnbinds(t *testing.T) {
	t.Parallel() // see suite_test.go
	g := NewWithT(t)
	ctx := context.Background()
	f := newFixture(t, ctx, "delete", nil)
	startManager(t, isolated(f, 0))
	name := agentName(7)
	key := client.ObjectKey{Namespace: f.ns, Name: name}
	createAgent(t, ctx, f.ns, name, nil, 8)
	f.machine(t, ctx, "m1", nil)
	g.Eventually(func(g Gomega) {
		g.Expect(getAM(g, ctx, f.ns, "m1").Spec.ProviderID).NotTo(BeEmpty())
	}, timeout, interval).Should(Succeed())
	setAgentCondition(t, ctx, key, aiv1beta1.BoundCondition, corev1.ConditionTrue, aiv1beta1.BoundReason)

	g.Expect(env.Client.Delete(ctx, &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "m1"}})).To(Succeed())
	g.Eventually(func(g Gomega) {
		a := &aiv1beta1.Agent{}
		g.Expect(env.Client.Get(ctx, key, a)).To(Succeed())
		g.Expect(a.Spec.ClusterDeploymentName).To(BeNil())
		g.Expect(a.Spec.IgnitionEndpointTokenReference).To(BeNil())
		g.Expect(a.Spec.IgnitionEndpointHTTPHeaders).To(BeEmpty())
		g.Expect(a.Spec.MachineConfigPool).To(BeEmpty(), "the claim's pool is restored")
		g.Expect(a.Annotations).To(HaveKey(infrav1.UnbindRequestedAnnotation))
		// Still claimed, and the Machine waits, until assisted-service reports the unbind.
		g.Expect(a.Labels).To(HaveKey(infrav1.AgentClaimedByLabel))
		g.Expect(reservedReason(getAM(g, ctx, f.ns, "m1"))).To(Equal(infrav1.UnbindingReason))
	}, timeout, interval).Should(Succeed())
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "m1"}, &clusterv1.Machine{})).To(Succeed())

	setAgentCondition(t, ctx, key, aiv1beta1.BoundCondition, corev1.ConditionFalse, aiv1beta1.UnboundReason)
	g.Eventually(func(g Gomega) {
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "m1"}, &clusterv1.Machine{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue())
		err = env.Client.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "m1"}, &infrav1.AgentMachine{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue())
		a := &aiv1beta1.Agent{}
		g.Expect(env.Client.Get(ctx, key, a)).To(Succeed())
		g.Expect(a.Labels).NotTo(HaveKey(infrav1.AgentClaimedByLabel))
		g.Expect(a.Annotations).NotTo(HaveKey(infrav1.ClaimOwnerAnnotation))
		g.Expect(a.Annotations).NotTo(HaveKey(infrav1.PreviousSpecAnnotation))
	}, timeout, interval).Should(Succeed())
}

// TestReleaseDoesNotRebindToADeletedCluster: an Agent that was bound to the cluster's own
// ClusterDeployment before its claim (a host booted from that cluster's InfraEnv) is unbound to
// none, not bound back, when the ClusterDeployment is being deleted by the time the Machine goes.
func TestReleaseDoesNotRebindToADeletedCluster(t *testing.T) {
	t.Parallel() // see suite_test.go
	g := NewWithT(t)
	ctx := context.Background()
	f := newFixture(t, ctx, "delete-cd", nil)
	startManager(t, isolated(f, 0))
	name := agentName(3)
	key := client.ObjectKey{Namespace: f.ns, Name: name}
	createAgent(t, ctx, f.ns, name, nil, 8)
	a := &aiv1beta1.Agent{}
	g.Expect(env.Client.Get(ctx, key, a)).To(Succeed())
	before := a.DeepCopy()
	a.Spec.ClusterDeploymentName = &aiv1beta1.ClusterReference{Namespace: f.ns, Name: f.cd}
	g.Expect(env.Client.Patch(ctx, a, client.MergeFrom(before))).To(Succeed())
	f.machine(t, ctx, "m1", nil)
	g.Eventually(func(g Gomega) {
		g.Expect(getAM(g, ctx, f.ns, "m1").Spec.ProviderID).NotTo(BeEmpty())
	}, timeout, interval).Should(Succeed())

	// The cluster goes: its ClusterDeployment first, held by a finalizer, then the Machine.
	cd := &hivev1.ClusterDeployment{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: f.cd}, cd)).To(Succeed())
	cdBefore := cd.DeepCopy()
	cd.Finalizers = append(cd.Finalizers, "test.example.com/hold")
	g.Expect(env.Client.Patch(ctx, cd, client.MergeFrom(cdBefore))).To(Succeed())
	g.Expect(env.Client.Delete(ctx, cd)).To(Succeed())
	t.Cleanup(func() {
		cd := &hivev1.ClusterDeployment{}
		if env.Client.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: f.cd}, cd) == nil {
			before := cd.DeepCopy()
			cd.Finalizers = nil
			_ = env.Client.Patch(ctx, cd, client.MergeFrom(before))
		}
	})
	g.Expect(env.Client.Delete(ctx, &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "m1"}})).To(Succeed())
	// The Agent reports itself unbound (Bound False, Unbound), which is what an unbind to none
	// waits for: bound back to the ClusterDeployment, it would wait for Bound True instead.
	g.Eventually(func(g Gomega) {
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "m1"}, &clusterv1.Machine{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the Machine is gone")
		a := &aiv1beta1.Agent{}
		g.Expect(env.Client.Get(ctx, key, a)).To(Succeed())
		g.Expect(a.Spec.ClusterDeploymentName).To(BeNil(), "not bound back to the ClusterDeployment being deleted")
		g.Expect(a.Labels).NotTo(HaveKey(infrav1.AgentClaimedByLabel))
	}, timeout, interval).Should(Succeed())
}

// claimedOne starts the provider for a fixture of its own, with one Agent and a Machine m1 whose
// AgentMachine has claimed it.
func claimedOne(t *testing.T, g Gomega, ctx context.Context, name string) fixture {
	t.Helper()
	f := newFixture(t, ctx, name, nil)
	startManager(t, isolated(f, 0))
	createAgent(t, ctx, f.ns, agentName(1), nil, 8)
	f.machine(t, ctx, "m1", nil)
	g.Eventually(func(g Gomega) {
		g.Expect(getAM(g, ctx, f.ns, "m1").Spec.ProviderID).To(Equal("agent://" + agentName(1)))
	}, timeout, interval).Should(Succeed())
	// Play assisted-service binding the claimed Agent to its ClusterDeployment: an Agent still
	// reported unbound would be released the moment its unbind is requested, and a test could
	// never see the unbind wait.
	setAgentCondition(t, ctx, client.ObjectKey{Namespace: f.ns, Name: agentName(1)}, aiv1beta1.BoundCondition, corev1.ConditionTrue, aiv1beta1.BoundReason)
	return f
}

// playUnbind waits until the Agent's release has asked for its unbind (bound to no
// ClusterDeployment) and plays assisted-service reporting the Agent unbound.
func playUnbind(t *testing.T, g Gomega, ctx context.Context, key client.ObjectKey) {
	t.Helper()
	g.Eventually(func(g Gomega) {
		a := &aiv1beta1.Agent{}
		g.Expect(env.Client.Get(ctx, key, a)).To(Succeed())
		g.Expect(a.Annotations).To(HaveKey(infrav1.UnbindRequestedAnnotation))
		g.Expect(a.Spec.ClusterDeploymentName).To(BeNil())
	}, timeout, interval).Should(Succeed())
	setAgentCondition(t, ctx, key, aiv1beta1.BoundCondition, corev1.ConditionFalse, aiv1beta1.UnboundReason)
}

// TestVanishedAgent: an AgentMachine whose Agent is deleted reports it and never claims another;
// deleting it does not hang.
func TestVanishedAgent(t *testing.T) {
	t.Parallel() // see suite_test.go
	g := NewWithT(t)
	ctx := context.Background()
	f := claimedOne(t, g, ctx, "vanish")
	g.Expect(env.Client.Delete(ctx, &aiv1beta1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: agentName(1)}})).To(Succeed())
	createAgent(t, ctx, f.ns, agentName(2), nil, 8)
	g.Eventually(func(g Gomega) {
		am := getAM(g, ctx, f.ns, "m1")
		g.Expect(reservedReason(am)).To(Equal(infrav1.AgentNotFoundReason))
		g.Expect(am.Spec.ProviderID).To(Equal("agent://" + agentName(1)))
	}, timeout, interval).Should(Succeed())
	g.Expect(claimedAgents(g, ctx, f.ns)).To(BeEmpty())

	g.Expect(env.Client.Delete(ctx, &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "m1"}})).To(Succeed())
	g.Eventually(func(g Gomega) {
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "m1"}, &clusterv1.Machine{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue())
		err = env.Client.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "m1"}, &infrav1.AgentMachine{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue())
	}, timeout, interval).Should(Succeed())
}

// TestAgentGoneAfterTheNodeJoined: an AgentMachine whose Machine is a Node stays provisioned and
// ready when its Agent is deleted (as after a clusterctl move: the new hub's assisted-service
// deletes the Agents of hosts that registered elsewhere), and claims no other.
func TestAgentGoneAfterTheNodeJoined(t *testing.T) {
	t.Parallel() // see suite_test.go
	g := NewWithT(t)
	ctx := context.Background()
	f := claimedOne(t, g, ctx, "joined")
	nodeJoinedAgentGone(g, ctx, f, "worker-1")
	createAgent(t, ctx, f.ns, agentName(2), nil, 8)
	g.Eventually(func(g Gomega) {
		am := getAM(g, ctx, f.ns, "m1")
		g.Expect(reservedReason(am)).To(Equal(infrav1.NodeJoinedReason))
		g.Expect(am.Spec.ProviderID).To(Equal("agent://" + agentName(1)))
		g.Expect(am.Status.Initialization.Provisioned).To(Equal(ptr.To(true)))
		g.Expect(conditions.IsTrue(am, clusterv1.ReadyCondition)).To(BeTrue())
	}, timeout, interval).Should(Succeed())
	g.Expect(claimedAgents(g, ctx, f.ns)).To(BeEmpty())
}

// nodeJoinedAgentGone makes the Machine m1 of claimedOne's fixture the Node node, then deletes
// its Agent, as the new hub's assisted-service does after a clusterctl move.
func nodeJoinedAgentGone(g Gomega, ctx context.Context, f fixture, node string) {
	m := &clusterv1.Machine{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "m1"}, m)).To(Succeed())
	base := m.DeepCopy()
	m.Status.NodeRef = clusterv1.MachineNodeReference{Name: node}
	g.Expect(env.Client.Status().Patch(ctx, m, client.MergeFrom(base))).To(Succeed())
	g.Expect(env.Client.Delete(ctx, &aiv1beta1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: agentName(1)}})).To(Succeed())
}

// TestPause: while the Cluster is paused the AgentMachine says so and claims nothing, even when
// an Agent appears; unpaused, it claims.
func TestPause(t *testing.T) {
	t.Parallel() // see suite_test.go
	g := NewWithT(t)
	ctx := context.Background()
	f := newFixture(t, ctx, "pause", nil)
	startManager(t, isolated(f, 0))
	f.machine(t, ctx, "m1", nil)
	g.Eventually(func(g Gomega) {
		g.Expect(reservedReason(getAM(g, ctx, f.ns, "m1"))).To(Equal(infrav1.NoSuitableAgentsReason))
	}, timeout, interval).Should(Succeed())

	clusterKey := client.ObjectKey{Namespace: f.ns, Name: f.cluster}
	g.Expect(pause.SetCluster(ctx, env.Client, clusterKey, true)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(conditions.IsTrue(getAM(g, ctx, f.ns, "m1"), clusterv1.PausedCondition)).To(BeTrue())
	}, timeout, interval).Should(Succeed())

	createAgent(t, ctx, f.ns, agentName(1), nil, 8)
	// The new Agent wakes the waiting AgentMachine; that reconcile must not claim it. (Counting
	// the controller's reconciles cannot tell this manager's from those of the tests running
	// beside it: controller-runtime's metrics are the process's. Unpaused, the same AgentMachine
	// claims the Agent below.)
	g.Consistently(func(g Gomega) {
		g.Expect(claimedAgents(g, ctx, f.ns)).To(BeEmpty())
		g.Expect(getAM(g, ctx, f.ns, "m1").Spec.ProviderID).To(BeEmpty())
	}, 3*time.Second, interval).Should(Succeed())

	g.Expect(pause.SetCluster(ctx, env.Client, clusterKey, false)).To(Succeed())
	g.Eventually(func(g Gomega) {
		am := getAM(g, ctx, f.ns, "m1")
		g.Expect(conditions.IsFalse(am, clusterv1.PausedCondition)).To(BeTrue())
		g.Expect(am.Spec.ProviderID).To(Equal("agent://" + agentName(1)))
	}, timeout, interval).Should(Succeed())

	// The paused annotation on the AgentMachine pauses it too.
	am := getAM(g, ctx, f.ns, "m1")
	base := am.DeepCopy()
	am.Annotations = map[string]string{clusterv1.PausedAnnotation: ""}
	g.Expect(env.Client.Patch(ctx, am, client.MergeFrom(base))).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(conditions.IsTrue(getAM(g, ctx, f.ns, "m1"), clusterv1.PausedCondition)).To(BeTrue())
	}, timeout, interval).Should(Succeed())
}

// TestNamespaceScoped: with --namespace and --agent-namespace the provider reconciles only
// AgentMachines of its namespace and claims only Agents of the agent namespace.
func TestNamespaceScoped(t *testing.T) {
	t.Parallel() // see suite_test.go
	g := NewWithT(t)
	ctx := context.Background()
	f := newFixture(t, ctx, "scoped", nil)
	other := newFixture(t, ctx, "scoped-other", nil)
	agentsNS, err := env.CreateNamespace(ctx, "scoped-agents")
	g.Expect(err).NotTo(HaveOccurred())
	decoyNS, err := env.CreateNamespace(ctx, "scoped-decoy")
	g.Expect(err).NotTo(HaveOccurred())
	// The decoy is a better fit (fewer CPUs) but lives outside the agent namespace.
	createAgent(t, ctx, decoyNS, agentName(1), nil, 2)
	createAgent(t, ctx, f.ns, agentName(2), nil, 2)
	createAgent(t, ctx, agentsNS, agentName(3), nil, 8)
	startManager(t, managerConfig{
		opts:  manager.Options{WatchNamespace: f.ns},
		infra: setup.Options{AgentNamespace: agentsNS},
	})
	other.machine(t, ctx, "outside", nil)
	f.machine(t, ctx, "m1", nil)
	g.Eventually(func(g Gomega) {
		am := getAM(g, ctx, f.ns, "m1")
		g.Expect(am.Status.AgentRef).To(Equal(&infrav1.AgentReference{Namespace: agentsNS, Name: agentName(3)}))
	}, timeout, interval).Should(Succeed())
	g.Expect(claimedAgents(g, ctx, decoyNS)).To(BeEmpty())
	g.Expect(claimedAgents(g, ctx, f.ns)).To(BeEmpty())
	g.Expect(getAM(g, ctx, other.ns, "outside").Finalizers).To(BeEmpty())
}

// TestWatchFilter: with --watch-filter only labelled AgentMachines are reconciled.
func TestWatchFilter(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	filter := map[string]string{clusterv1.WatchLabel: "team-a"}
	f := newFixture(t, ctx, "filter", filter)
	createAgent(t, ctx, f.ns, agentName(1), nil, 8)
	createAgent(t, ctx, f.ns, agentName(2), nil, 8)
	startManager(t, managerConfig{opts: manager.Options{WatchFilterValue: "team-a"}, infra: setup.Options{AgentNamespace: f.ns}})
	f.machine(t, ctx, "unlabelled", nil)
	f.machine(t, ctx, "labelled", func(m *clusterv1.Machine, am *infrav1.AgentMachine) {
		m.Labels = merge(m.Labels, filter)
		am.Labels = merge(am.Labels, filter)
	})
	g.Eventually(func(g Gomega) {
		g.Expect(getAM(g, ctx, f.ns, "labelled").Spec.ProviderID).NotTo(BeEmpty())
	}, timeout, interval).Should(Succeed())
	g.Expect(getAM(g, ctx, f.ns, "unlabelled").Finalizers).To(BeEmpty())
	g.Expect(claimedAgents(g, ctx, f.ns)).To(HaveLen(1))
}

// TestClaimedAgentWithoutAnnotations: a claimed Agent whose annotations someone removed (the
// claim label alone names the AgentMachine) is unbound and released on deletion, no panic.
func TestClaimedAgentWithoutAnnotations(t *testing.T) {
	t.Parallel() // see suite_test.go
	g := NewWithT(t)
	ctx := context.Background()
	f := claimedOne(t, g, ctx, "noannotations")
	key := client.ObjectKey{Namespace: f.ns, Name: agentName(1)}
	a := &aiv1beta1.Agent{}
	g.Expect(env.Client.Get(ctx, key, a)).To(Succeed())
	g.Expect(env.Client.Patch(ctx, a, client.RawPatch(types.JSONPatchType, []byte(`[{"op":"remove","path":"/metadata/annotations"}]`)))).To(Succeed())

	g.Expect(env.Client.Delete(ctx, &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "m1"}})).To(Succeed())
	playUnbind(t, g, ctx, key)
	g.Eventually(func(g Gomega) {
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "m1"}, &infrav1.AgentMachine{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue())
		a := &aiv1beta1.Agent{}
		g.Expect(env.Client.Get(ctx, key, a)).To(Succeed())
		g.Expect(a.Labels).NotTo(HaveKey(infrav1.AgentClaimedByLabel))
	}, timeout, interval).Should(Succeed())
}

// TestAgentMachineDeletedBeforeItsMachine: an AgentMachine deleted on its own releases its
// Agent and removes its hook from the Machine, whose deletion then finishes (it waited on the
// pre-terminate hook forever).
func TestAgentMachineDeletedBeforeItsMachine(t *testing.T) {
	t.Parallel() // see suite_test.go
	g := NewWithT(t)
	ctx := context.Background()
	f := claimedOne(t, g, ctx, "amfirst")
	key := client.ObjectKey{Namespace: f.ns, Name: agentName(1)}
	g.Expect(env.Client.Delete(ctx, &infrav1.AgentMachine{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "m1"}})).To(Succeed())
	playUnbind(t, g, ctx, key)
	g.Eventually(func(g Gomega) {
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "m1"}, &infrav1.AgentMachine{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue())
		m := &clusterv1.Machine{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "m1"}, m)).To(Succeed())
		g.Expect(m.Annotations).NotTo(HaveKey(infrav1.PreTerminateHookAnnotation))
	}, timeout, interval).Should(Succeed())

	g.Expect(env.Client.Delete(ctx, &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "m1"}})).To(Succeed())
	g.Eventually(func(g Gomega) {
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "m1"}, &clusterv1.Machine{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the Machine is not gone")
	}, timeout, interval).Should(Succeed())
}

// TestOrphanedPreTerminateHookIsRemoved: a Machine being deleted that carries our pre-terminate
// hook while its AgentMachine is gone (the hook was added after the AgentMachine's deletion
// removed it: a reconcile that had read the AgentMachine before, or a second manager) loses the
// hook, and Cluster API deletes it; a paused one keeps it. The fault suite's two managers left
// such a Machine behind (its deletion waited for the hook forever).
func TestOrphanedPreTerminateHookIsRemoved(t *testing.T) {
	t.Parallel() // see suite_test.go
	g := NewWithT(t)
	ctx := context.Background()
	f := newFixture(t, ctx, "orphanhook", nil)
	startManager(t, isolated(f, 0))
	hooked := func(name string, extra map[string]string) *clusterv1.Machine {
		m := &clusterv1.Machine{
			ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name,
				Labels:      map[string]string{clusterv1.ClusterNameLabel: f.cluster},
				Annotations: merge(extra, map[string]string{infrav1.PreTerminateHookAnnotation: ""}),
				Finalizers:  []string{clusterv1.MachineFinalizer}},
			Spec: clusterv1.MachineSpec{
				ClusterName: f.cluster,
				Bootstrap:   clusterv1.Bootstrap{DataSecretName: ptr.To("bootstrap-data")},
				InfrastructureRef: clusterv1.ContractVersionedObjectReference{
					APIGroup: infrav1.GroupVersion.Group, Kind: "AgentMachine", Name: name + "-gone",
				},
			},
		}
		g.Expect(env.Client.Create(ctx, m)).To(Succeed())
		g.Expect(env.Client.Delete(ctx, m)).To(Succeed())
		return m
	}
	paused := hooked("paused", map[string]string{clusterv1.PausedAnnotation: ""})
	hooked("orphan", nil)
	g.Eventually(func(g Gomega) {
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "orphan"}, &clusterv1.Machine{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the Machine is still there: %v", err)
	}, timeout, interval).Should(Succeed())
	m := &clusterv1.Machine{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(paused), m)).To(Succeed())
	g.Expect(m.Annotations).To(HaveKey(infrav1.PreTerminateHookAnnotation), "a paused Machine was changed")
}

// TestStaleClaimIsReleased: an AgentMachine removed without its release (its finalizers taken off
// by hand) leaves its Agent claimed; the Agent's next event finds the claim stale, and the Agent
// is unbound, then released once assisted-service reports it unbound, so that another Machine can
// claim the host. Before, the host stayed claimed for an AgentMachine that no longer existed.
func TestStaleClaimIsReleased(t *testing.T) {
	t.Parallel() // see suite_test.go
	g := NewWithT(t)
	ctx := context.Background()
	f := claimedOne(t, g, ctx, "stale")
	am := getAM(g, ctx, f.ns, "m1")
	g.Expect(env.Client.Patch(ctx, am, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`)))).To(Succeed())
	g.Expect(env.Client.Delete(ctx, am)).To(Succeed())
	key := client.ObjectKey{Namespace: f.ns, Name: agentName(1)}
	playUnbind(t, g, ctx, key)
	g.Eventually(func(g Gomega) {
		g.Expect(claimedAgents(g, ctx, f.ns)).To(BeEmpty())
	}, timeout, interval).Should(Succeed())
	f.machine(t, ctx, "m2", nil)
	g.Eventually(func(g Gomega) {
		am := getAM(g, ctx, f.ns, "m2")
		g.Expect(am.Spec.ProviderID).To(Equal("agent://"+agentName(1)), "%+v", conditions.Get(am, infrav1.AgentReservedCondition))
	}, timeout, interval).Should(Succeed())
}

// TestAdoptsUpstreamClaim: an AgentMachine and Agent as openshift/cluster-api-provider-agent left
// them (its claim label and namespace annotation on the Agent, its finalizers on the AgentMachine
// and AgentCluster) are adopted: the host stays with its Machine, no other Machine takes it, the
// finalizers become ours, deleting the Machine unbinds the Agent and lets the AgentMachine go,
// and the AgentCluster goes when deleted. Upstream's claim label holds the AgentMachine's UID in
// its v1alpha1 releases and its name in the later ones (getAgentMachineRefLabel); with the name,
// the AgentMachine's status.agentRef is lost too, so that only the claim finds the host.
func TestAdoptsUpstreamClaim(t *testing.T) {
	t.Parallel() // see suite_test.go
	for name, label := range map[string]func(am *infrav1.AgentMachine) string{
		"upstream-uid":  func(am *infrav1.AgentMachine) string { return string(am.UID) },
		"upstream-name": func(am *infrav1.AgentMachine) string { return am.Name },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			testAdoptsUpstreamClaim(t, name, label)
		})
	}
}

func testAdoptsUpstreamClaim(t *testing.T, name string, label func(am *infrav1.AgentMachine) string) {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	f := claimedOne(t, g, ctx, name)
	key := client.ObjectKey{Namespace: f.ns, Name: agentName(1)}
	m1 := getAM(g, ctx, f.ns, "m1")

	upstreamShape := fmt.Sprintf(`{"metadata":{"labels":{%q:null,%q:%q},"annotations":{%q:null,%q:null,%q:%q}}}`,
		infrav1.AgentClaimedByLabel, infrav1.UpstreamAgentClaimLabel, label(m1),
		infrav1.ClaimOwnerAnnotation, infrav1.PreviousSpecAnnotation, infrav1.UpstreamAgentClaimNamespaceAnnotation, f.ns)
	g.Expect(env.Client.Patch(ctx, &aiv1beta1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: agentName(1)}},
		client.RawPatch(types.MergePatchType, []byte(upstreamShape)))).To(Succeed())
	if name == "upstream-name" {
		// Nothing on the AgentMachine names the host: only upstream's claim, by name, finds it.
		g.Expect(env.Client.Patch(ctx, m1, client.RawPatch(types.MergePatchType,
			[]byte(fmt.Sprintf(`{"metadata":{"annotations":{%q:null}}}`, infrav1.ChosenAgentAnnotation))))).To(Succeed())
		g.Expect(env.Client.Status().Patch(ctx, m1, client.RawPatch(types.MergePatchType,
			[]byte(`{"status":{"agentRef":null}}`)))).To(Succeed())
	}
	g.Expect(env.Client.Patch(ctx, m1, client.RawPatch(types.MergePatchType,
		[]byte(fmt.Sprintf(`{"metadata":{"finalizers":[%q]}}`, infrav1.UpstreamAgentMachineFinalizer))))).To(Succeed())
	ac := &infrav1.AgentCluster{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: f.cluster}}
	g.Expect(env.Client.Patch(ctx, ac, client.RawPatch(types.MergePatchType,
		[]byte(fmt.Sprintf(`{"metadata":{"finalizers":[%q]}}`, infrav1.UpstreamAgentClusterFinalizer))))).To(Succeed())

	g.Eventually(func(g Gomega) {
		a := &aiv1beta1.Agent{}
		g.Expect(env.Client.Get(ctx, key, a)).To(Succeed())
		g.Expect(a.Labels).To(HaveKeyWithValue(infrav1.AgentClaimedByLabel, string(m1.UID)))
		g.Expect(a.Labels).NotTo(HaveKey(infrav1.UpstreamAgentClaimLabel))
		g.Expect(a.Annotations).NotTo(HaveKey(infrav1.UpstreamAgentClaimNamespaceAnnotation))
		g.Expect(a.Spec.ClusterDeploymentName).NotTo(BeNil(), "the host stays bound")
		g.Expect(getAM(g, ctx, f.ns, "m1").Finalizers).To(ConsistOf(infrav1.AgentMachineFinalizer))
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(ac), ac)).To(Succeed())
		g.Expect(ac.Finalizers).To(ConsistOf(infrav1.AgentClusterFinalizer))
	}, timeout, interval).Should(Succeed())

	// A second Machine of the cluster never takes the adopted host, and takes a free one.
	f.machine(t, ctx, "m2", nil)
	g.Consistently(func(g Gomega) {
		g.Expect(getAM(g, ctx, f.ns, "m2").Spec.ProviderID).To(BeEmpty())
	}, 3*time.Second, interval).Should(Succeed())
	createAgent(t, ctx, f.ns, agentName(2), nil, 8)
	g.Eventually(func(g Gomega) {
		g.Expect(getAM(g, ctx, f.ns, "m2").Spec.ProviderID).To(Equal("agent://" + agentName(2)))
	}, timeout, interval).Should(Succeed())
	g.Expect(getAM(g, ctx, f.ns, "m1").Spec.ProviderID).To(Equal("agent://" + agentName(1)))

	g.Expect(env.Client.Delete(ctx, &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "m1"}})).To(Succeed())
	g.Eventually(func(g Gomega) {
		a := &aiv1beta1.Agent{}
		g.Expect(env.Client.Get(ctx, key, a)).To(Succeed())
		g.Expect(a.Spec.ClusterDeploymentName).To(BeNil(), "unbound")
	}, timeout, interval).Should(Succeed())
	setAgentCondition(t, ctx, key, aiv1beta1.BoundCondition, corev1.ConditionFalse, aiv1beta1.UnboundReason)
	g.Eventually(func(g Gomega) {
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "m1"}, &infrav1.AgentMachine{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue())
	}, timeout, interval).Should(Succeed())

	// The AgentCluster, whose finalizer upstream set, goes when it is deleted.
	g.Expect(env.Client.Delete(ctx, ac)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(ac), &infrav1.AgentCluster{}))).To(BeTrue())
	}, timeout, interval).Should(Succeed())
}
