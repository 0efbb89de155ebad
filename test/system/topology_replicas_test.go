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
	capm3v1beta2 "github.com/metal3-io/cluster-api-provider-metal3/api/v1beta2"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	infrav1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/infrastructure/v1beta1"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/lab"
)

// The ClusterClasses serve every control plane OpenShift supports, chosen by the Cluster's
// spec.topology.controlPlane.replicas as with KubeadmControlPlane: here one node (the sno-topology
// and agent-sno-topology flavors, without the VIP variables) and two nodes with an arbiter
// (arbiter-topology), whose topologies the control plane's own rules keep.

// expectTopologyControlPlaneAvailable waits until the control plane of topology cluster name is
// Available with controlPlanes ready replicas, the Cluster initialized and its topology
// reconciled, and each of its control-plane Machines (arbiter included) a Node of the workload API
// server, which the lab's clusters share.
func expectTopologyControlPlaneAvailable(l *lab.Lab, ns, name string, controlPlanes int) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		cp := controlPlane(l, ns, name)(g)
		g.Expect(conditionTrue(cp.Status.Conditions, controlplanev1.AvailableCondition)).To(BeTrue(), "control plane %s/%s not Available", ns, name)
		g.Expect(cp.Status.ReadyReplicas).To(HaveValue(BeEquivalentTo(controlPlanes)))
		cluster := &clusterv1.Cluster{}
		g.Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cluster)).To(Succeed())
		g.Expect(cluster.Status.Initialization.ControlPlaneInitialized).To(Equal(ptr.To(true)))
		g.Expect(conditionTrue(cluster.Status.Conditions, clusterv1.ClusterTopologyReconciledCondition)).To(BeTrue())
		nodes := workloadNodes(g, l, ns, name)
		for _, m := range machines(g, l, ns, client.MatchingLabels{clusterv1.ClusterNameLabel: name, clusterv1.MachineControlPlaneLabel: ""}) {
			g.Expect(m.Status.NodeRef.IsDefined()).To(BeTrue(), "Machine %s is no Node yet", m.Name)
			g.Expect(nodes).To(ContainElement(m.Status.NodeRef.Name))
		}
	}, timeout, interval).Should(Succeed())
}

// setTopologyReplicas sets the Cluster's spec.topology.controlPlane.replicas, as a user does.
func setTopologyReplicas(l *lab.Lab, ns, name string, replicas int32) {
	GinkgoHelper()
	cluster := &clusterv1.Cluster{}
	Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cluster)).To(Succeed())
	patch := client.MergeFrom(cluster.DeepCopy())
	cluster.Spec.Topology.ControlPlane.Replicas = ptr.To(replicas)
	Expect(l.Mgmt.Client.Patch(ctx, cluster, patch)).To(Succeed())
}

// expectReplicasRefused changes the topology's control-plane replicas of cluster name from
// replicas to next, expects the Cluster's TopologyReconciled condition to carry the control
// plane's own refusal (containing message) while the control plane and its Machines stay as they
// are, then sets them back and expects the topology reconciled again.
func expectReplicasRefused(l *lab.Lab, ns, name string, replicas, next int32, message string) {
	GinkgoHelper()
	before := controlPlane(l, ns, name)(Default)
	controlPlanes := client.MatchingLabels{clusterv1.ClusterNameLabel: name, clusterv1.MachineControlPlaneLabel: ""}
	machinesBefore := len(machines(Default, l, ns, controlPlanes))
	setTopologyReplicas(l, ns, name, next)
	Eventually(func(g Gomega) {
		cluster := &clusterv1.Cluster{}
		g.Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cluster)).To(Succeed())
		c := meta.FindStatusCondition(cluster.Status.Conditions, clusterv1.ClusterTopologyReconciledCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(BeEquivalentTo("False"))
		g.Expect(c.Message).To(ContainSubstring(message))
	}, timeout, interval).Should(Succeed())
	cp := controlPlane(l, ns, name)(Default)
	Expect(cp.Spec.Replicas).To(HaveValue(Equal(replicas)), "the control plane kept its replicas")
	Expect(cp.Spec.Arbiter).To(Equal(before.Spec.Arbiter), "and its arbiter")
	Expect(cp.Spec.MachineTemplate.Spec.InfrastructureRef).To(Equal(before.Spec.MachineTemplate.Spec.InfrastructureRef), "and its machine template")
	Expect(machines(Default, l, ns, controlPlanes)).To(HaveLen(machinesBefore))

	setTopologyReplicas(l, ns, name, replicas)
	Eventually(func(g Gomega) {
		cluster := &clusterv1.Cluster{}
		g.Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cluster)).To(Succeed())
		g.Expect(conditionTrue(cluster.Status.Conditions, clusterv1.ClusterTopologyReconciledCondition)).To(BeTrue())
	}, timeout, interval).Should(Succeed())
}

// One lab for both topologies, a hub whose assisted-service supports arbiter clusters (the
// newest CRDs): three clusters install side by side, as three teams' would, and a lab's start costs
// as much CPU as an install.
var _ = Describe("Single-node and two-node OpenShift as topologies of ClusterClass openshift-metal3 and openshift-agent", Ordered, startsFirst, func() {
	var (
		l                  *lab.Lab
		ns, agentNS, tnaNS string
		start              time.Time
	)
	const metal3, agent, tna = "snotopo", "agentsnotopo", "tnatopo"
	workers := client.MatchingLabels{clusterv1.ClusterTopologyMachineDeploymentNameLabel: "md-0"}
	tnaControlPlanes := client.MatchingLabels{clusterv1.ClusterNameLabel: tna, clusterv1.MachineControlPlaneLabel: ""}

	BeforeAll(func() {
		start = time.Now()
		l, ns = addHosts(startLabWithOptions(lab.Options{Topology: true, NewestCRDs: true}), metal3, metal3, 2)
		var err error
		agentNS, err = l.Mgmt.CreateNamespace(ctx, agent)
		Expect(err).NotTo(HaveOccurred())
		Expect(l.AddSelfBootedHosts(agent, 1)).To(Succeed())
		// Two control-plane hosts and the arbiter's, labelled as the arbiter-topology flavor expects.
		_, tnaNS = addHosts(l, tna, tna, 3)
		host := &bmov1alpha1.BareMetalHost{}
		Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: tnaNS, Name: tna + "-0"}, host)).To(Succeed())
		patched := host.DeepCopy()
		patched.Labels = map[string]string{lab.ArbiterHostLabel: "true"}
		Expect(l.Mgmt.Client.Patch(ctx, patched, client.MergeFrom(host))).To(Succeed())

		// All at once, as three users would: one BareMetalHost and a worker's, one self-booted
		// host, two hosts and an arbiter.
		Expect(l.CreateCluster(ctx, lab.ClusterOptions{Namespace: ns, Name: metal3, ControlPlanes: 1, Workers: 1, Version: "4.17.3", Topology: true})).To(Succeed())
		Expect(l.CreateCluster(ctx, lab.ClusterOptions{Namespace: agentNS, Name: agent, ControlPlanes: 1, Version: "4.17.3",
			Infrastructure: lab.Agent, Topology: true})).To(Succeed())
		Expect(l.CreateCluster(ctx, lab.ClusterOptions{Namespace: tnaNS, Name: tna, ControlPlanes: 2, Arbiter: true, Version: "4.17.3", Topology: true})).To(Succeed())
	})
	BeforeEach(func() {
		reportOnFailure(l, ns)
		reportOnFailure(l, agentNS)
		reportOnFailure(l, tnaNS)
	})

	It("installs one node on a BareMetalHost, platform None, at api.<name>.<baseDomain>, then its worker as a day-2 host", func() {
		expectTopologyControlPlaneAvailable(l, ns, metal3, 1)
		GinkgoWriter.Printf("install of single-node OpenShift through topology: %s\n", time.Since(start).Round(time.Second))
		cp := controlPlane(l, ns, metal3)(Default)
		Expect(cp.Spec.Replicas).To(HaveValue(BeEquivalentTo(1)))
		Expect(cp.Spec.Config.APIVIPs).To(BeEmpty(), "the class writes no VIPs without the variables")
		Expect(cp.Spec.Config.IngressVIPs).To(BeEmpty())
		Expect(cp.Spec.Arbiter).To(BeNil())
		Expect(cp.Spec.DistributionVersion).To(Equal("4.17.3"))
		tmpl := &capm3v1beta2.Metal3MachineTemplate{}
		Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: cp.Spec.MachineTemplate.Spec.InfrastructureRef.Name}, tmpl)).To(Succeed())
		Expect(tmpl.Spec.Template.Spec.HostSelector).To(BeNil(), "no arbiter's host to keep clear of")
		cluster := &clusterv1.Cluster{}
		Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: metal3}, cluster)).To(Succeed())
		Expect(cluster.Spec.ControlPlaneEndpoint.Host).To(Equal("api." + metal3 + ".lab.example.com"))
		aci := &hiveextv1beta1.AgentClusterInstall{}
		Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: metal3}, aci)).To(Succeed())
		Expect(aci.Spec.PlatformType).To(Equal(hiveextv1beta1.NonePlatformType))
		Expect(aci.Spec.APIVIPs).To(BeEmpty())
		Expect(aci.Spec.ProvisionRequirements.ControlPlaneAgents).To(Equal(1))
		Expect(aci.Spec.ProvisionRequirements.WorkerAgents).To(Equal(0), "day 1 is the node alone")

		Eventually(func(g Gomega) {
			g.Expect(runningMachines(g, l, ns, workers)).To(Equal(1))
			ws := machines(g, l, ns, workers)
			g.Expect(ws).To(HaveLen(1))
			g.Expect(ws[0].Status.NodeRef.IsDefined()).To(BeTrue())
			g.Expect(workloadNodes(g, l, ns, metal3)).To(ContainElement(ws[0].Status.NodeRef.Name))
		}, timeout, interval).Should(Succeed())
		expectDay2Agents(l, ns, 1, "the worker installs as a day-2 host")
		GinkgoWriter.Printf("and of its worker: %s\n", time.Since(start).Round(time.Second))
	})

	It("installs one node on a self-booted host through ClusterClass openshift-agent", func() {
		expectTopologyControlPlaneAvailable(l, agentNS, agent, 1)
		cp := controlPlane(l, agentNS, agent)(Default)
		Expect(cp.Spec.Config.APIVIPs).To(BeEmpty())
		Expect(cp.Spec.MachineTemplate.Spec.InfrastructureRef.Kind).To(Equal("AgentMachineTemplate"))
		aci := &hiveextv1beta1.AgentClusterInstall{}
		Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: agentNS, Name: agent}, aci)).To(Succeed())
		Expect(aci.Spec.PlatformType).To(Equal(hiveextv1beta1.NonePlatformType))
		ac := &infrav1.AgentClusterList{}
		Expect(l.Mgmt.Client.List(ctx, ac, client.InNamespace(agentNS))).To(Succeed())
		Expect(ac.Items).To(HaveLen(1))
		Expect(ac.Items[0].Spec.ControlPlaneEndpoint.Host).To(Equal("api." + agent + ".lab.example.com"))
	})

	It("refuses to grow to 3 control-plane nodes, with the control plane's message, and keeps the node", func() {
		expectReplicasRefused(l, ns, metal3, 1, 3, "single-node OpenShift cannot be grown to a highly available control plane")
	})

	It("gives the control plane of 2 replicas its arbiter, on the labelled host, and keeps the others off it", func() {
		expectTopologyControlPlaneAvailable(l, tnaNS, tna, 2)
		GinkgoWriter.Printf("install of two nodes and an arbiter through topology: %s\n", time.Since(start).Round(time.Second))
		cp := controlPlane(l, tnaNS, tna)(Default)
		Expect(cp.Spec.Replicas).To(HaveValue(BeEquivalentTo(2)))
		Expect(cp.Spec.Config.APIVIPs).To(HaveLen(1))
		Expect(cp.Spec.Arbiter).NotTo(BeNil(), "the class's patch")
		ref := cp.Spec.Arbiter.MachineTemplate.Spec.InfrastructureRef
		Expect(ref.Kind).To(Equal("Metal3MachineTemplate"))
		Expect(ref.Name).To(Equal(tna+"-arbiter"), "the flavor's own template")
		arbiterTemplate := &capm3v1beta2.Metal3MachineTemplate{}
		Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: tnaNS, Name: ref.Name}, arbiterTemplate)).To(Succeed())
		Expect(arbiterTemplate.OwnerReferences).To(ContainElement(And(HaveField("Kind", "Cluster"), HaveField("Name", tna))),
			"the control plane makes the Cluster its owner: deleted and moved with it")
		cpTemplate := &capm3v1beta2.Metal3MachineTemplate{}
		Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: tnaNS, Name: cp.Spec.MachineTemplate.Spec.InfrastructureRef.Name}, cpTemplate)).To(Succeed())
		Expect(cpTemplate.Spec.Template.Spec.HostSelector).NotTo(BeNil(), "the control-plane hosts are chosen without the arbiter's")
		Expect(cpTemplate.Spec.Template.Spec.HostSelector.MatchExpressions).To(ConsistOf(
			And(HaveField("Key", lab.ArbiterHostLabel), HaveField("Operator", BeEquivalentTo("notin")), HaveField("Values", ConsistOf("true")))))

		ms := machines(Default, l, tnaNS, tnaControlPlanes)
		Expect(ms).To(HaveLen(3))
		var arbiters []clusterv1.Machine
		for _, m := range ms {
			if _, ok := m.Labels[controlplanev1.ArbiterMachineLabel]; ok {
				arbiters = append(arbiters, m)
			}
		}
		Expect(arbiters).To(HaveLen(1))
		Expect(consumedHost(Default, l, tnaNS, arbiters[0]).Name).To(Equal(tna+"-0"), "the arbiter's template selects the labelled host")

		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(hiveextv1beta1.GroupVersion.WithKind("AgentClusterInstall"))
		Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: tnaNS, Name: tna}, u)).To(Succeed())
		pr, _, _ := unstructured.NestedMap(u.Object, "spec", "provisionRequirements")
		Expect(pr).To(Equal(map[string]any{"controlPlaneAgents": int64(2), "arbiterAgents": int64(1)}))
		platform, _, _ := unstructured.NestedString(u.Object, "spec", "platformType")
		Expect(platform).To(Equal(string(hiveextv1beta1.BareMetalPlatformType)))
	})

	It("refuses to grow to 3 control-plane nodes, with the control plane's message, and keeps the arbiter", func() {
		expectReplicasRefused(l, tnaNS, tna, 2, 3, "two-node OpenShift (with an arbiter or with fencing) cannot grow its control plane")
	})

	It("leaves nothing behind when the Clusters are deleted", func() {
		// All at once, as their owners would.
		deleteCluster(l, ns, metal3)
		deleteCluster(l, agentNS, agent)
		deleteCluster(l, tnaNS, tna)
		expectNothingLeft(l, ns, metal3)
		expectNothingLeft(l, agentNS, agent)
		expectNothingLeft(l, tnaNS, tna)
	})
})
