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
	"time"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
})
