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
	"fmt"
	"time"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/lab"
	simetcd "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/etcd"
)

// consumedHost returns the BareMetalHost that m's Metal3Machine consumes.
func consumedHost(g Gomega, l *lab.Lab, ns string, m clusterv1.Machine) *bmov1alpha1.BareMetalHost {
	hosts := &bmov1alpha1.BareMetalHostList{}
	g.Expect(l.Mgmt.Client.List(ctx, hosts, client.InNamespace(ns))).To(Succeed())
	for i, h := range hosts.Items {
		if h.Spec.ConsumerRef != nil && h.Spec.ConsumerRef.Name == m.Spec.InfrastructureRef.Name {
			return &hosts.Items[i]
		}
	}
	g.Expect(false).To(BeTrue(), "no BareMetalHost consumed by Machine %s", m.Name)
	return nil
}

var _ = Describe("Two-node OpenShift with an arbiter", Ordered, func() {
	var (
		l       *lab.Lab
		ns      string
		arbiter clusterv1.Machine
	)
	const name = "tna"
	controlPlanes := client.MatchingLabels{clusterv1.MachineControlPlaneLabel: ""}

	BeforeAll(func() {
		start := time.Now()
		// A hub whose assisted-service supports arbiter clusters (the newest CRDs); two
		// control-plane hosts, a spare for the remediation, and the arbiter's host (labelled as
		// the arbiter flavor expects).
		l, ns = addHosts(startLabWithOptions(lab.Options{NewestCRDs: true}), "tna", "tna", 4)
		host := &bmov1alpha1.BareMetalHost{}
		Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "tna-3"}, host)).To(Succeed())
		patched := host.DeepCopy()
		patched.Labels = map[string]string{lab.ArbiterHostLabel: "true"}
		Expect(l.Mgmt.Client.Patch(ctx, patched, client.MergeFrom(host))).To(Succeed())

		Expect(l.CreateCluster(ctx, lab.ClusterOptions{Namespace: ns, Name: name, ControlPlanes: 2, Arbiter: true, Version: "4.17.3"})).To(Succeed())
		expectAvailable(l, ns, name, 2, 3)
		expectEtcdMembersMatchMachines(l, ns, controlPlanes)
		GinkgoWriter.Printf("install of two nodes and an arbiter: %s\n", time.Since(start).Round(time.Second))
	})
	BeforeEach(func() { reportOnFailure(l, ns) })

	It("installs the arbiter on its own host, with assisted-service's arbiter role, as a voting etcd member", func() {
		ms := machines(Default, l, ns, controlPlanes)
		Expect(ms).To(HaveLen(3))
		var arbiters []clusterv1.Machine
		for _, m := range ms {
			if _, ok := m.Labels[controlplanev1.ArbiterMachineLabel]; ok {
				arbiters = append(arbiters, m)
			}
		}
		Expect(arbiters).To(HaveLen(1))
		arbiter = arbiters[0]
		Expect(consumedHost(Default, l, ns, arbiter).Name).To(Equal("tna-3"), "the arbiter's template selects the labelled host")

		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(hiveextv1beta1.GroupVersion.WithKind("AgentClusterInstall"))
		Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u)).To(Succeed())
		pr, _, _ := unstructured.NestedMap(u.Object, "spec", "provisionRequirements")
		Expect(pr).To(Equal(map[string]any{"controlPlaneAgents": int64(2), "arbiterAgents": int64(1)}))

		agents := &aiv1beta1.AgentList{}
		Expect(l.Mgmt.Client.List(ctx, agents, client.InNamespace(ns))).To(Succeed())
		roles := map[string]string{}
		for _, a := range agents.Items {
			if a.Spec.ClusterDeploymentName != nil {
				roles[a.Spec.Hostname] = string(a.Spec.Role)
			}
		}
		Expect(roles).To(HaveKeyWithValue(arbiter.Status.NodeRef.Name, "arbiter"))
		Expect(roles).To(HaveLen(3))

		node := &corev1.Node{}
		Expect(l.Workload.Client.Get(ctx, client.ObjectKey{Name: arbiter.Status.NodeRef.Name}, node)).To(Succeed())
		Expect(node.Labels).To(HaveKey(simetcd.ArbiterLabel))
		Expect(node.Labels).NotTo(HaveKey(simetcd.MasterLabel))
		Expect(node.Spec.Taints).To(ContainElement(HaveField("Key", simetcd.ArbiterLabel)))

		cp := controlPlane(l, ns, name)(Default)
		Expect(cp.Status.Replicas).To(HaveValue(BeEquivalentTo(2)), "the status counts pair with spec.replicas")
	})

	It("remediates a control-plane host that dies, keeping the arbiter and quorum", func() {
		start := time.Now()
		watchQuorum(l, "remediation of a dead host of two and an arbiter")
		createControlPlaneHealthCheck(l, ns, name)
		var victim clusterv1.Machine
		for _, m := range machines(Default, l, ns, controlPlanes) {
			if m.Name != arbiter.Name {
				victim = m
				break
			}
		}
		failMachineHost(l, ns, victim)

		Eventually(func(g Gomega) {
			ms := machines(g, l, ns, controlPlanes)
			g.Expect(ms).To(HaveLen(3))
			names := []string{}
			for _, m := range ms {
				g.Expect(m.Name).NotTo(Equal(victim.Name), "the dead Machine is not replaced yet")
				g.Expect(m.Status.Phase).To(Equal(string(clusterv1.MachinePhaseRunning)))
				names = append(names, m.Name)
			}
			g.Expect(names).To(ContainElement(arbiter.Name), "the arbiter is kept")
		}, 2*timeout, interval).Should(Succeed())
		expectEtcdMembersMatchMachines(l, ns, controlPlanes)
		// Two healthy members of two tolerate no failure: the replacement joined under
		// cluster-etcd-operator's unsafe scaling override, which the control plane set and removed.
		Eventually(func(g Gomega) {
			cp := controlPlane(l, ns, name)(g)
			g.Expect(cp.Annotations).NotTo(HaveKey(controlplanev1.EtcdUnsafeScalingAnnotation))
			g.Expect(unsafeScalingOverride(g, l)).To(BeNil(), "the override is removed")
		}, timeout, interval).Should(Succeed())
		GinkgoWriter.Printf("remediation of a dead control-plane host of two and an arbiter: %s\n", time.Since(start).Round(time.Second))
	})

	It("leaves nothing behind when the Cluster is deleted", func() {
		deleteClusterAndExpectNothingLeft(l, ns, name)
	})

	// Two-node OpenShift with fencing, on the same hub and hosts once the arbiter's cluster is
	// gone (the lab's clusters share one workload API server and etcd: a new workload cluster
	// replaces the deleted one's).
	It("installs two-node OpenShift with fencing, whose etcd keeps serving when a node loses power", func() {
		const tnf = "tnf"
		const bmcPassword = "lab-bmc-password" // lab.AddHosts's BMC credentials
		start := time.Now()
		Expect(l.NewWorkloadCluster(ctx)).To(Succeed())
		Expect(l.CreateCluster(ctx, lab.ClusterOptions{Namespace: ns, Name: tnf, ControlPlanes: 2, Fencing: true, Version: "4.20.0"})).To(Succeed())
		expectAvailable(l, ns, tnf, 2, 2)
		expectEtcdMembersMatchMachines(l, ns, controlPlanes)
		installed := time.Since(start)

		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(hiveextv1beta1.GroupVersion.WithKind("AgentClusterInstall"))
		Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: tnf}, u)).To(Succeed())
		pr, _, _ := unstructured.NestedMap(u.Object, "spec", "provisionRequirements")
		Expect(pr).To(Equal(map[string]any{"controlPlaneAgents": int64(2)}), "no arbiter: assisted-service installs TNF from the hosts' credentials")

		// Each control-plane host's Agent names a fencing credentials Secret beside it, made from
		// its BareMetalHost and owned by its config; the installed cluster has them per node.
		ms := machines(Default, l, ns, controlPlanes)
		Expect(ms).To(HaveLen(2))
		agents := &unstructured.UnstructuredList{}
		agents.SetGroupVersionKind(aiv1beta1.GroupVersion.WithKind("AgentList"))
		Expect(l.Mgmt.Client.List(ctx, agents, client.InNamespace(ns))).To(Succeed())
		refs := map[string]string{}
		for _, a := range agents.Items {
			host, _, _ := unstructured.NestedString(a.Object, "spec", "hostname")
			ref, _, _ := unstructured.NestedString(a.Object, "spec", "fencingCredentialsSecretRef")
			refs[host] = ref
		}
		for _, m := range ms {
			Expect(m.Labels).To(HaveKey(controlplanev1.FencingMachineLabel))
			bmh := consumedHost(Default, l, ns, m)
			Expect(refs).To(HaveKeyWithValue(m.Status.NodeRef.Name, m.Spec.Bootstrap.ConfigRef.Name+"-fencing-credentials"))
			secret := &corev1.Secret{}
			Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: refs[m.Status.NodeRef.Name]}, secret)).To(Succeed())
			Expect(secret.Data).To(HaveKeyWithValue("address", []byte(bmh.Spec.BMC.Address)))
			Expect(secret.Data).To(HaveKeyWithValue("password", []byte(bmcPassword)))
			Expect(secret.OwnerReferences).To(ContainElement(HaveField("Name", m.Spec.Bootstrap.ConfigRef.Name)))
			installedCopy := &corev1.Secret{}
			Expect(l.Workload.Client.Get(ctx, client.ObjectKey{Namespace: simetcd.FencingNamespace, Name: simetcd.FencingSecretPrefix + m.Status.NodeRef.Name}, installedCopy)).To(Succeed())
			Expect(installedCopy.Data["address"]).To(Equal([]byte(bmh.Spec.BMC.Address)))
		}
		expectNoCredentialsIn(l, ns, bmcPassword)

		// One node loses power: the survivor's pacemaker fences it through its BMC and carries on
		// as a single etcd member; the fenced node comes back and joins again.
		failStart := time.Now()
		victim, survivor := ms[0], ms[1]
		Expect(l.PowerOffHost(ctx, consumedHost(Default, l, ns, victim).Name)).To(Succeed())
		Eventually(func(g Gomega) {
			fencedAt, fenceErr := l.Etcd.Fenced(victim.Status.NodeRef.Name)
			g.Expect(fenceErr).To(BeEmpty())
			g.Expect(fencedAt).To(BeTemporally(">", failStart), "the failed node is fenced")
			members, err := l.Etcd.Members(ctx)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(members).To(ConsistOf(And(HaveField("Name", survivor.Status.NodeRef.Name), HaveField("Healthy", true), HaveField("IsLearner", false))),
				"the survivor serves alone")
		}, timeout, 100*time.Millisecond).Should(Succeed())
		expectEtcdMembersMatchMachines(l, ns, controlPlanes)
		for _, m := range machines(Default, l, ns, controlPlanes) {
			Expect([]string{victim.Name, survivor.Name}).To(ContainElement(m.Name), "no Machine is replaced")
		}
		expectAvailable(l, ns, tnf, 2, 2)
		expectNoCredentialsIn(l, ns, bmcPassword)
		GinkgoWriter.Printf("two-node OpenShift with fencing: install %s, a node's failure to both members again %s\n",
			installed.Round(time.Second), time.Since(failStart).Round(time.Second))
	})

	It("leaves nothing of two-node OpenShift with fencing behind, its fencing credentials included", func() {
		deleteClusterAndExpectNothingLeft(l, ns, "tnf")
	})
})

// expectNoCredentialsIn checks that no status condition of the cluster's objects and no event of
// namespace ns quotes the BMC password.
func expectNoCredentialsIn(l *lab.Lab, ns, password string) {
	GinkgoHelper()
	events := &eventsv1.EventList{}
	Expect(l.Mgmt.Client.List(ctx, events, client.InNamespace(ns))).To(Succeed())
	for _, e := range events.Items {
		Expect(e.Note).NotTo(ContainSubstring(password), "event %s", e.Name)
	}
	coreEvents := &corev1.EventList{}
	Expect(l.Mgmt.Client.List(ctx, coreEvents, client.InNamespace(ns))).To(Succeed())
	for _, e := range coreEvents.Items {
		Expect(e.Message).NotTo(ContainSubstring(password), "event %s", e.Name)
	}
	for _, list := range []*unstructured.UnstructuredList{
		listOf(controlplanev1.GroupVersion.WithKind("OpenshiftAssistedControlPlaneList")),
		listOf(clusterv1.GroupVersion.WithKind("MachineList")),
		listOf(bootstrapv1.GroupVersion.WithKind("OpenshiftAssistedConfigList")),
		listOf(aiv1beta1.GroupVersion.WithKind("AgentList")),
		listOf(hiveextv1beta1.GroupVersion.WithKind("AgentClusterInstallList")),
	} {
		Expect(l.Mgmt.Client.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		for _, o := range list.Items {
			status, _, _ := unstructured.NestedMap(o.Object, "status")
			Expect(fmt.Sprint(status)).NotTo(ContainSubstring(password), "%s %s's status", o.GetKind(), o.GetName())
		}
	}
}

// listOf is an empty list of kind.
func listOf(gvk schema.GroupVersionKind) *unstructured.UnstructuredList {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gvk)
	return list
}
