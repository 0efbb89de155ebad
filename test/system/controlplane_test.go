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

package system

import (
	"slices"
	"sync"
	"time"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	configv1 "github.com/openshift/api/config/v1"
	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/lab"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/cvo"
	simetcd "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/etcd"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/machineapi"
)

// watchQuorum samples the lab's etcd until the spec ends, prints what it saw and fails the spec
// if quorum was ever lost: too few voting members running, or no leader for longer than an
// election takes (etcd.LeaderlessLimit).
func watchQuorum(l *lab.Lab, what string) {
	start := time.Now()
	w := l.Etcd.Watch(200 * time.Millisecond)
	DeferCleanup(func() {
		r := w.Stop()
		GinkgoWriter.Printf("etcd during %q (%s): %d samples, at least %d healthy of %d voting members, longest without a leader %s, quorum lost: %v\n",
			what, time.Since(start).Round(time.Second), r.Samples, r.MinHealthy, r.VotingAtMin, r.LongestLeaderless.Round(time.Millisecond), r.Lost)
		AddReportEntry("etcd: "+what, r)
		Expect(r.Lost).To(BeFalse(), "etcd lost quorum at %s", r.FirstLoss)
	})
}

// sampleMachines lists the Machines that match selector every 100ms and hands each list to fn,
// until the returned stop is called (it returns once sampling has ended).
func sampleMachines(l *lab.Lab, ns string, selector client.MatchingLabels, fn func([]clusterv1.Machine)) (stop func()) {
	stopCh, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			list := &clusterv1.MachineList{}
			if err := l.Mgmt.Client.List(ctx, list, client.InNamespace(ns), selector); err == nil {
				fn(list.Items)
			}
			select {
			case <-stopCh:
				return
			case <-t.C:
			}
		}
	}()
	return func() {
		close(stopCh)
		<-done
	}
}

// maxMachinesWatcher records the largest number of control-plane Machines seen, and of those
// seen being deleted at once, until stopped.
type maxMachinesWatcher struct {
	mu                sync.Mutex
	maxMachines       int
	maxDeletingAtOnce int
	stop              func()
}

func watchMachines(l *lab.Lab, ns string, selector client.MatchingLabels) *maxMachinesWatcher {
	w := &maxMachinesWatcher{}
	w.stop = sampleMachines(l, ns, selector, func(ms []clusterv1.Machine) {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.maxMachines = max(w.maxMachines, len(ms))
		w.maxDeletingAtOnce = max(w.maxDeletingAtOnce, deleting(ms))
	})
	return w
}

func (w *maxMachinesWatcher) Stop() (maxMachines, maxDeleting int) {
	w.stop()
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.maxMachines, w.maxDeletingAtOnce
}

func deleting(ms []clusterv1.Machine) int {
	n := 0
	for _, m := range ms {
		if !m.DeletionTimestamp.IsZero() {
			n++
		}
	}
	return n
}

// createControlPlaneHealthCheck creates a MachineHealthCheck of the cluster's control-plane
// Machines that finds a Node unhealthy 5 seconds after it stops being Ready.
func createControlPlaneHealthCheck(l *lab.Lab, ns, cluster string) {
	GinkgoHelper()
	mhc := &clusterv1.MachineHealthCheck{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cluster + "-control-plane"},
		Spec: clusterv1.MachineHealthCheckSpec{
			ClusterName: cluster,
			Selector:    metav1.LabelSelector{MatchLabels: map[string]string{clusterv1.MachineControlPlaneLabel: ""}},
			Checks: clusterv1.MachineHealthCheckChecks{UnhealthyNodeConditions: []clusterv1.UnhealthyNodeCondition{
				{Type: "Ready", Status: "Unknown", TimeoutSeconds: ptr.To[int32](5)},
				{Type: "Ready", Status: "False", TimeoutSeconds: ptr.To[int32](5)},
			}},
		},
	}
	Expect(l.Mgmt.Client.Create(ctx, mhc)).To(Succeed())
}

// failMachineHost kills the host under a Machine: the BareMetalHost its Metal3Machine consumes.
func failMachineHost(l *lab.Lab, ns string, m clusterv1.Machine) {
	GinkgoHelper()
	hosts := &bmov1alpha1.BareMetalHostList{}
	Expect(l.Mgmt.Client.List(ctx, hosts, client.InNamespace(ns))).To(Succeed())
	hostName := ""
	for _, h := range hosts.Items {
		if h.Spec.ConsumerRef != nil && h.Spec.ConsumerRef.Name == m.Spec.InfrastructureRef.Name {
			hostName = h.Name
		}
	}
	Expect(hostName).NotTo(BeEmpty(), "no BareMetalHost consumed by Machine %s", m.Name)
	Expect(l.FailHost(ctx, hostName)).To(Succeed())
}

// expectNoMachineAPI checks that the workload cluster of a control plane installed on platform
// baremetal with the control plane's default capabilities runs without Machine API: its
// ClusterVersion lists baremetal and Ingress (which the installer requires there) but not
// MachineAPI, and no master machine.openshift.io Machine exists, so cluster-etcd-operator adds the
// member of every control-plane node (the lab's etcd simulator plays its Machine API rule).
func expectNoMachineAPI(l *lab.Lab) {
	GinkgoHelper()
	cv := &configv1.ClusterVersion{}
	Expect(l.Workload.Client.Get(ctx, client.ObjectKey{Name: cvo.ClusterVersionName}, cv)).To(Succeed())
	Expect(cv.Spec.Capabilities).NotTo(BeNil())
	Expect(cv.Spec.Capabilities.BaselineCapabilitySet).To(BeEquivalentTo("None"))
	Expect(cv.Status.Capabilities.EnabledCapabilities).To(ContainElements(BeEquivalentTo("baremetal"), BeEquivalentTo("Ingress")))
	Expect(cv.Status.Capabilities.EnabledCapabilities).NotTo(ContainElement(BeEquivalentTo(machineapi.Capability)))
	functional, err := machineapi.Functional(ctx, l.Workload.Client)
	Expect(err).NotTo(HaveOccurred())
	Expect(functional).To(BeFalse(), "Machine API is functional in the workload cluster")
}

// The cluster is dual stack (IPv4 first, VIPs and machine networks of both families): its
// rollout and remediation run on hosts of both families, at no cost of a lab of its own.
var _ = Describe("A dual-stack control plane of 3 that never loses etcd", Ordered, startsFirst, func() {
	var (
		l  *lab.Lab
		ns string
	)
	const name = "etcd"
	controlPlanes := client.MatchingLabels{clusterv1.MachineControlPlaneLabel: ""}

	BeforeAll(func() {
		// 3 control-plane nodes and one spare host for the rollout's surge and the remediation.
		l, ns = startLabWithHosts("etcd", "cp", 4)
		Expect(l.CreateCluster(ctx, lab.ClusterOptions{Namespace: ns, Name: name, ControlPlanes: 3, Workers: 0, Version: "4.17.3",
			IPStack: lab.DualStack})).To(Succeed())
		expectAvailable(l, ns, name, 3, 3)
		expectEtcdMembersMatchMachines(l, ns, controlPlanes)
		// Platform baremetal (the default flavor's VIPs) with the control plane's default
		// capabilities: no Machine API, so the rollout's and the remediation's members join.
		expectNoMachineAPI(l)
	})
	BeforeEach(func() { reportOnFailure(l, ns) })

	It("installed dual stack: both families' pod networks, VIPs and machine networks reach the AgentClusterInstall", func() {
		both := []string{"192.168.111.0/24", "fd2e:6f44:5dd8:c956::/64"}
		expectNetworks(l, ns, name, []hiveextv1beta1.ClusterNetworkEntry{{CIDR: "10.128.0.0/14", HostPrefix: 23}, {CIDR: "fd01::/48", HostPrefix: 64}},
			[]string{"192.168.111.5", "fd2e:6f44:5dd8:c956::5"}, both, both)
	})

	It("rolls out a new infrastructure template one Machine at a time, a new member joining before an old one leaves", func() {
		start := time.Now()
		watchQuorum(l, "rollout of 3")
		before := sets.New[string]()
		for _, m := range machines(Default, l, ns, controlPlanes) {
			before.Insert(m.Name)
		}
		// A new template, as a user makes one to change the hosts' image or data.
		tmpl := &unstructured.Unstructured{}
		tmpl.SetAPIVersion("infrastructure.cluster.x-k8s.io/v1beta2")
		tmpl.SetKind("Metal3MachineTemplate")
		Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name + "-control-plane"}, tmpl)).To(Succeed())
		next := &unstructured.Unstructured{Object: map[string]any{"apiVersion": tmpl.GetAPIVersion(), "kind": tmpl.GetKind(), "spec": tmpl.Object["spec"]}}
		next.SetNamespace(ns)
		next.SetName(name + "-control-plane-v2")
		Expect(l.Mgmt.Client.Create(ctx, next)).To(Succeed())

		w := watchMachines(l, ns, controlPlanes)
		cp := controlPlane(l, ns, name)(Default)
		patched := cp.DeepCopy()
		patched.Spec.MachineTemplate.Spec.InfrastructureRef.Name = next.GetName()
		Expect(l.Mgmt.Client.Patch(ctx, patched, client.MergeFrom(cp))).To(Succeed())

		Eventually(func(g Gomega) {
			ms := machines(g, l, ns, controlPlanes)
			g.Expect(ms).To(HaveLen(3))
			for _, m := range ms {
				g.Expect(before.Has(m.Name)).To(BeFalse(), "Machine %s is not replaced yet", m.Name)
				g.Expect(m.Status.Phase).To(Equal(string(clusterv1.MachinePhaseRunning)))
				g.Expect(conditions.IsTrue(&m, clusterv1.MachineUpToDateCondition)).To(BeTrue(), "Machine %s is not up to date", m.Name)
			}
			cp := controlPlane(l, ns, name)(g)
			g.Expect(conditionTrue(cp.Status.Conditions, "Available")).To(BeTrue())
			g.Expect(cp.Status.UpToDateReplicas).To(HaveValue(BeEquivalentTo(3)))
		}, 2*timeout, interval).Should(Succeed())
		maxMachines, maxDeleting := w.Stop()
		expectEtcdMembersMatchMachines(l, ns, controlPlanes)
		GinkgoWriter.Printf("rollout of 3 control-plane Machines: %s, at most %d Machines and %d being deleted at once\n",
			time.Since(start).Round(time.Second), maxMachines, maxDeleting)
		Expect(maxMachines).To(Equal(4), "a surge of one: never more than 4 Machines")
		Expect(maxDeleting).To(Equal(1), "one Machine deleted at a time")
	})

	It("remediates a control-plane host that dies: its dead member is removed and a new one joins", func() {
		start := time.Now()
		watchQuorum(l, "remediation of a dead host")
		createControlPlaneHealthCheck(l, ns, name)
		ms := machines(Default, l, ns, controlPlanes)
		Expect(ms).To(HaveLen(3))
		victim := ms[0]
		failMachineHost(l, ns, victim)

		Eventually(func(g Gomega) {
			ms := machines(g, l, ns, controlPlanes)
			g.Expect(ms).To(HaveLen(3))
			for _, m := range ms {
				g.Expect(m.Name).NotTo(Equal(victim.Name), "the dead Machine is not replaced yet")
				g.Expect(m.Status.Phase).To(Equal(string(clusterv1.MachinePhaseRunning)))
			}
		}, 2*timeout, interval).Should(Succeed())
		expectEtcdMembersMatchMachines(l, ns, controlPlanes)
		members, err := l.Etcd.Members(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(members).NotTo(ContainElement(HaveField("Name", victim.Status.NodeRef.Name)), "the dead member is removed")
		// Two healthy members of two tolerate no failure: cluster-etcd-operator adds the
		// replacement only under its unsafe scaling override, which the control plane set and,
		// with three healthy members again, removed.
		Eventually(func(g Gomega) {
			cp := controlPlane(l, ns, name)(g)
			g.Expect(cp.Annotations).NotTo(HaveKey(controlplanev1.EtcdUnsafeScalingAnnotation))
			g.Expect(unsafeScalingOverride(g, l)).To(BeNil(), "the override is removed")
		}, timeout, interval).Should(Succeed())
		Expect(eventReasons(l, ns)).To(ContainElements("EtcdUnsafeScalingSet", "EtcdUnsafeScalingRemoved"))
		GinkgoWriter.Printf("remediation of a dead control-plane host: %s\n", time.Since(start).Round(time.Second))
	})

	It("leaves nothing behind when the Cluster is deleted", func() {
		deleteClusterAndExpectNothingLeft(l, ns, name)
	})
})

// The cluster is single-stack IPv6 (IPv6 pod and service networks and VIPs, no machine network:
// assisted-service takes the hosts' IPv6 network that holds the API VIP).
var _ = Describe("An IPv6 control plane of 5 that loses two hosts at once", Ordered, startsFirst, func() {
	var (
		l  *lab.Lab
		ns string
	)
	const name = "etcd5"
	controlPlanes := client.MatchingLabels{clusterv1.MachineControlPlaneLabel: ""}

	BeforeAll(func() {
		// 5 control-plane nodes and a spare host for each replacement.
		l, ns = startLabWithHosts("etcd5", "cp", 7)
		Expect(l.CreateCluster(ctx, lab.ClusterOptions{Namespace: ns, Name: name, ControlPlanes: 5, Workers: 0, Version: "4.17.3",
			IPStack: lab.IPv6})).To(Succeed())
		expectAvailable(l, ns, name, 5, 5)
		expectEtcdMembersMatchMachines(l, ns, controlPlanes)
	})
	BeforeEach(func() { reportOnFailure(l, ns) })

	It("installed IPv6: a /64 per node, IPv6 VIPs, and the machine network assisted-service took from the hosts' network of the API VIP", func() {
		expectNetworks(l, ns, name, []hiveextv1beta1.ClusterNetworkEntry{{CIDR: "fd01::/48", HostPrefix: 64}},
			[]string{"fd2e:6f44:5dd8:c956::5"}, []string{}, []string{"fd2e:6f44:5dd8:c956::/64"})
	})

	It("remediates two hosts that die together one at a time, the second once the first one's replacement is provisioned, keeping quorum", func() {
		start := time.Now()
		watchQuorum(l, "two dead hosts of 5")
		createControlPlaneHealthCheck(l, ns, name)
		ms := machines(Default, l, ns, controlPlanes)
		Expect(ms).To(HaveLen(5))
		dead := sets.New(ms[0].Name, ms[1].Name)

		// What the dead Machines go through: the reasons of their OwnerRemediated conditions,
		// the order in which their deletions are first seen, and which other Machines had no
		// Node at that moment.
		var (
			mu                sync.Mutex
			reasons           = map[string]sets.Set[string]{ms[0].Name: sets.New[string](), ms[1].Name: sets.New[string]()}
			deletedOrder      []string
			withoutNode       = map[string][]string{}
			maxDeletingAtOnce int
		)
		stop := sampleMachines(l, ns, controlPlanes, func(ms []clusterv1.Machine) {
			mu.Lock()
			defer mu.Unlock()
			maxDeletingAtOnce = max(maxDeletingAtOnce, deleting(ms))
			for _, m := range ms {
				if !dead.Has(m.Name) {
					continue
				}
				if c := conditions.Get(&m, clusterv1.MachineOwnerRemediatedCondition); c != nil {
					reasons[m.Name].Insert(c.Reason)
				}
				if m.DeletionTimestamp.IsZero() || slices.Contains(deletedOrder, m.Name) {
					continue
				}
				deletedOrder = append(deletedOrder, m.Name)
				for _, o := range ms {
					if o.Name != m.Name && o.DeletionTimestamp.IsZero() && !o.Status.NodeRef.IsDefined() {
						withoutNode[m.Name] = append(withoutNode[m.Name], o.Name)
					}
				}
			}
		})
		failMachineHost(l, ns, ms[0])
		failMachineHost(l, ns, ms[1])

		Eventually(func(g Gomega) {
			ms := machines(g, l, ns, controlPlanes)
			g.Expect(ms).To(HaveLen(5))
			for _, m := range ms {
				g.Expect(dead.Has(m.Name)).To(BeFalse(), "the dead Machines are not replaced yet")
				g.Expect(m.Status.Phase).To(Equal(string(clusterv1.MachinePhaseRunning)))
			}
		}, 3*timeout, interval).Should(Succeed())
		stop()
		expectEtcdMembersMatchMachines(l, ns, controlPlanes)
		members, err := l.Etcd.Members(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(members).NotTo(ContainElement(HaveField("Name", BeElementOf(ms[0].Status.NodeRef.Name, ms[1].Status.NodeRef.Name))), "the dead members are removed")

		mu.Lock()
		defer mu.Unlock()
		Expect(deletedOrder).To(HaveLen(2))
		first, second := deletedOrder[0], deletedOrder[1]
		GinkgoWriter.Printf("two dead control-plane hosts of 5 replaced: %s; OwnerRemediated reasons seen: %s %v, then %s %v; at most %d Machines deleting at once\n",
			time.Since(start).Round(time.Second), first, sets.List(reasons[first]), second, sets.List(reasons[second]), maxDeletingAtOnce)
		Expect(reasons[second].Has(controlplanev1.RemediationDeferredReason)).To(BeTrue(), "the second remediation never said it waits")
		Expect(withoutNode[second]).To(BeEmpty(), "the second Machine was deleted while a replacement had no Node")
		Expect(maxDeletingAtOnce).To(Equal(1), "one Machine deleted at a time")
	})

	It("leaves nothing behind when the Cluster is deleted", func() {
		deleteClusterAndExpectNothingLeft(l, ns, name)
	})
})

// unsafeScalingOverride returns cluster-etcd-operator's unsafe scaling override in the workload
// cluster (nil when unset).
func unsafeScalingOverride(g Gomega, l *lab.Lab) any {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(simetcd.OperatorConfigGVK)
	g.Expect(l.Workload.Client.Get(ctx, client.ObjectKey{Name: simetcd.OperatorConfigName}, u)).To(Succeed())
	v, _, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "unsupportedConfigOverrides", simetcd.UnsafeScalingOverride)
	return v
}

// eventReasons lists the reasons of the events recorded in ns.
func eventReasons(l *lab.Lab, ns string) []string {
	list := &eventsv1.EventList{}
	Expect(l.Mgmt.Client.List(ctx, list, client.InNamespace(ns))).To(Succeed())
	out := make([]string, 0, len(list.Items))
	for _, e := range list.Items {
		out = append(out, e.Reason)
	}
	return out
}
