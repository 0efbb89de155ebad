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
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	corev1 "k8s.io/api/core/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/lab"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/testenv"
)

// hostsOf maps each Machine of ns to its providerID, and each BareMetalHost to the Metal3Machine
// that consumes it: what must not change when a cluster moves.
func hostsOf(g Gomega, c client.Client, ns string) (map[string]string, map[string]string) {
	machines := &clusterv1.MachineList{}
	g.Expect(c.List(ctx, machines, client.InNamespace(ns))).To(Succeed())
	providerIDs := map[string]string{}
	for _, m := range machines.Items {
		providerIDs[m.Name] = m.Spec.ProviderID
	}
	bmhs := &bmov1alpha1.BareMetalHostList{}
	g.Expect(c.List(ctx, bmhs, client.InNamespace(ns))).To(Succeed())
	consumers := map[string]string{}
	for _, h := range bmhs.Items {
		consumer := ""
		if h.Spec.ConsumerRef != nil {
			consumer = h.Spec.ConsumerRef.Name
		}
		consumers[h.Name] = consumer
	}
	return providerIDs, consumers
}

var _ = Describe("clusterctl move to another management cluster", Ordered, startsFirst, func() {
	var (
		l    *lab.Lab
		ns   string
		from *testenv.Environment
	)
	const name = "pivot"

	BeforeAll(func() {
		l, ns = startLabWithHosts("pivot", "host", 4)
	})
	BeforeEach(func() { reportOnFailure(l, ns) })

	It("moves an installed cluster: the new management cluster rebuilds its status without touching a host", func() {
		Expect(l.CreateCluster(ctx, lab.ClusterOptions{Namespace: ns, Name: name, ControlPlanes: 3, Workers: 1, Version: "4.17.3"})).To(Succeed())
		expectAvailable(l, ns, name, 3, 4)
		providerIDs, consumers := hostsOf(Default, l.Mgmt.Client, ns)
		Expect(providerIDs).To(HaveLen(4))

		start := time.Now()
		var err error
		from, err = l.Move(ctx, ns)
		Expect(err).NotTo(HaveOccurred())
		moved := time.Since(start)

		By("leaving nothing of the cluster on the management cluster it left")
		expectNoneLeft(Default, from.Client, ns, "on the old management cluster",
			&clusterv1.ClusterList{}, &clusterv1.MachineList{}, &clusterv1.MachineDeploymentList{}, &clusterv1.MachineSetList{},
			&controlplanev1.OpenshiftAssistedControlPlaneList{}, &bootstrapv1.OpenshiftAssistedConfigList{},
			&aiv1beta1.InfraEnvList{}, &aiv1beta1.AgentList{}, &hivev1.ClusterDeploymentList{},
			&hiveextv1beta1.AgentClusterInstallList{}, &bmov1alpha1.BareMetalHostList{}, &corev1.SecretList{})

		By("rebuilding the status on the new one: the same Machines on the same hosts, Available")
		expectAvailable(l, ns, name, 3, 4)
		fmt.Fprintf(GinkgoWriter, "clusterctl move took %s; the control plane was Available again %s later\n",
			moved.Round(time.Millisecond), (time.Since(start) - moved).Round(time.Millisecond))
		Eventually(func(g Gomega) {
			ids, hosts := hostsOf(g, l.Mgmt.Client, ns)
			g.Expect(ids).To(Equal(providerIDs))
			g.Expect(hosts).To(Equal(consumers))
			machines := &clusterv1.MachineList{}
			g.Expect(l.Mgmt.Client.List(ctx, machines, client.InNamespace(ns))).To(Succeed())
			for _, m := range machines.Items {
				g.Expect(m.Status.Phase).To(Equal(string(clusterv1.MachinePhaseRunning)), "Machine %s", m.Name)
				g.Expect(m.Status.NodeRef.IsDefined()).To(BeTrue(), "Machine %s has no Node", m.Name)
			}
			configs := &bootstrapv1.OpenshiftAssistedConfigList{}
			g.Expect(l.Mgmt.Client.List(ctx, configs, client.InNamespace(ns))).To(Succeed())
			for _, c := range configs.Items {
				g.Expect(conditionTrue(c.Status.Conditions, bootstrapv1.ReadyCondition)).To(BeTrue(), "OpenshiftAssistedConfig %s not Ready", c.Name)
				g.Expect(c.Status.DataSecretName).To(Equal(c.Name))
			}
			bmhs := &bmov1alpha1.BareMetalHostList{}
			g.Expect(l.Mgmt.Client.List(ctx, bmhs, client.InNamespace(ns))).To(Succeed())
			for _, h := range bmhs.Items {
				g.Expect(h.Status.Provisioning.State).To(Equal(bmov1alpha1.StateProvisioned), "BareMetalHost %s", h.Name)
				g.Expect(h.Annotations).NotTo(HaveKey(bmov1alpha1.StatusAnnotation))
				g.Expect(h.Annotations).NotTo(HaveKey(bmov1alpha1.PausedAnnotation))
			}
			aci := &hiveextv1beta1.AgentClusterInstall{}
			g.Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, aci)).To(Succeed())
			g.Expect(aci.Status.DebugInfo.State).To(Equal("adding-hosts"), "assisted-service imports the installed cluster")
			// The new hub's assisted-service deletes the Agents it holds no host for.
			agents := &aiv1beta1.AgentList{}
			g.Expect(l.Mgmt.Client.List(ctx, agents, client.InNamespace(ns))).To(Succeed())
			g.Expect(agents.Items).To(BeEmpty())
		}, timeout, interval).Should(Succeed())
	})

	It("grows the moved cluster from the new management cluster", func() {
		_, err := l.AddHosts(ctx, ns, "day2", 1)
		Expect(err).NotTo(HaveOccurred())
		scaleWorkersUp(l, ns, name, 2, 5)
		agents := &aiv1beta1.AgentList{}
		Expect(l.Mgmt.Client.List(ctx, agents, client.InNamespace(ns))).To(Succeed())
		Expect(agents.Items).To(HaveLen(1))
		Expect(agents.Items[0].Status.DebugInfo.State).To(Equal("added-to-existing-cluster"))
	})

	It("leaves nothing behind when the moved Cluster is deleted", func() {
		deleteClusterAndExpectNothingLeft(l, ns, name)
	})
})
