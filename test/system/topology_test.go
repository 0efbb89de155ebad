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
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	capm3v1beta2 "github.com/metal3-io/cluster-api-provider-metal3/api/v1beta2"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	configv1 "github.com/openshift/api/config/v1"
	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/infrastructure/v1beta1"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/lab"
)

// A Cluster API managed topology of ClusterClass openshift-metal3 (the topology flavor, with the
// class clusterctl adds), run by Cluster API's own topology controllers in the lab.
var _ = Describe("A topology cluster of ClusterClass openshift-metal3", Ordered, startsFirst, func() {
	var (
		l  *lab.Lab
		ns string
	)
	const name = "topo"
	workers := client.MatchingLabels{clusterv1.ClusterTopologyMachineDeploymentNameLabel: "md-0"}

	BeforeAll(func() {
		var err error
		l, err = lab.Start(ctx, lab.Options{Topology: true, InPlaceUpdates: true})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { Expect(l.Stop()).To(Succeed()) })
		ns, err = l.Mgmt.CreateNamespace(ctx, "topology")
		Expect(err).NotTo(HaveOccurred())
		// 3 control-plane nodes, 1 worker, and spare hosts (the class's rollout needs none).
		_, err = l.AddHosts(ctx, ns, "host", 5)
		Expect(err).NotTo(HaveOccurred())
	})
	BeforeEach(func() { reportOnFailure(l, ns) })

	It("installs the control plane that topology creates from the class, then the workers as day-2 hosts", func() {
		Expect(l.CreateCluster(ctx, lab.ClusterOptions{Namespace: ns, Name: name, ControlPlanes: 3, Workers: 1, Version: "4.17.3", Topology: true})).To(Succeed())

		// Topology writes the control plane on the contract's paths, its version mapped to
		// distributionVersion by the class's openshiftVersions variable.
		Eventually(func(g Gomega) {
			cp := controlPlane(l, ns, name)(g)
			g.Expect(cp.Spec.Version).To(Equal("v" + lab.Releases["4.17.3"]))
			g.Expect(cp.Spec.DistributionVersion).To(Equal("4.17.3"))
			g.Expect(cp.Spec.Replicas).To(HaveValue(BeEquivalentTo(3)))
			g.Expect(cp.Spec.Config.BaseDomain).To(Equal("lab.example.com"))
			ref := cp.Spec.MachineTemplate.Spec.InfrastructureRef
			g.Expect(ref.Kind).To(Equal("Metal3MachineTemplate"))
			g.Expect(ref.Name).NotTo(Equal("openshift-metal3-control-plane"), "a clone of the class's template")
			tmpl := &capm3v1beta2.Metal3MachineTemplate{}
			g.Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: ref.Name}, tmpl)).To(Succeed())
			g.Expect(tmpl.Spec.Template.Spec.DataTemplate).NotTo(BeNil())
			g.Expect(tmpl.Spec.Template.Spec.DataTemplate.Name).To(Equal(name), "the class's patch")
		}, timeout, interval).Should(Succeed())

		// Day 1 is the control plane alone: assisted-service waits for no worker.
		Eventually(func(g Gomega) {
			aci := &hiveextv1beta1.AgentClusterInstall{}
			g.Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, aci)).To(Succeed())
			g.Expect(aci.Spec.ProvisionRequirements.ControlPlaneAgents).To(Equal(3))
			g.Expect(aci.Spec.ProvisionRequirements.WorkerAgents).To(Equal(0))
		}, timeout, interval).Should(Succeed())
		// Cluster API creates the MachineDeployment at once, but its MachineSet's preflight check
		// holds the worker's Machine until the control plane reports its version.
		if cp := controlPlane(l, ns, name)(Default); cp.Status.Version == "" {
			Expect(machines(Default, l, ns, workers)).To(BeEmpty(), "no worker Machine before the control plane reports a version")
		}

		expectAvailable(l, ns, name, 3, 4)
		Eventually(func(g Gomega) {
			g.Expect(runningMachines(g, l, ns, workers)).To(Equal(1))
			cluster := &clusterv1.Cluster{}
			g.Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cluster)).To(Succeed())
			g.Expect(conditionTrue(cluster.Status.Conditions, clusterv1.ClusterTopologyReconciledCondition)).To(BeTrue())
		}, timeout, interval).Should(Succeed())
		expectDay2Agents(l, ns, 1, "the worker installs as a day-2 host")
	})

	It("makes no change on a second reconcile", func() {
		before := topologyGenerations(l, ns)
		cluster := &clusterv1.Cluster{}
		Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cluster)).To(Succeed())
		patch := client.MergeFrom(cluster.DeepCopy())
		cluster.Labels["example.com/touched"] = "true" // an update event: the topology is reconciled again
		Expect(l.Mgmt.Client.Patch(ctx, cluster, patch)).To(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(topologyGenerations(l, ns)).To(Equal(before))
		}, 5*time.Second, interval).Should(Succeed())
	})

	It("upgrades the control plane first, then the workers in place, when the Cluster's version moves", func() {
		from, to := "v"+lab.Releases["4.17.3"], "v"+lab.Releases["4.17.5"]
		before := workerUIDs(l, ns, workers)
		setTopologyVersion(l, ns, name, to, map[string]string{from: "4.17.3", to: "4.17.5"})

		Eventually(func(g Gomega) {
			cp := controlPlane(l, ns, name)(g)
			g.Expect(cp.Spec.Version).To(Equal(to))
			g.Expect(cp.Spec.DistributionVersion).To(Equal("4.17.5"))
			// While the control plane upgrades, the workers keep their version.
			if cp.Status.Version != to {
				for _, m := range machines(g, l, ns, workers) {
					g.Expect(m.Spec.Version).To(Equal(from), "a worker moved before the control plane")
				}
			}
		}, timeout, interval).Should(Succeed())
		Eventually(func(g Gomega) {
			cv := &configv1.ClusterVersion{}
			g.Expect(l.Workload.Client.Get(ctx, types.NamespacedName{Name: "version"}, cv)).To(Succeed())
			g.Expect(cv.Status.History).NotTo(BeEmpty())
			g.Expect(cv.Status.History[0].Version).To(Equal("4.17.5"))
			cp := controlPlane(l, ns, name)(g)
			g.Expect(cp.Status.DistributionVersion).To(Equal("4.17.5"))
			g.Expect(cp.Status.Version).To(Equal(to))
		}, timeout, interval).Should(Succeed())
		Eventually(func(g Gomega) {
			expectUpdatedInPlace(g, l, ns, workers, before, to)
		}, timeout, interval).Should(Succeed())
		// Cluster API's runtime client, with its client certificate, was answered; a caller
		// without one, though it reaches the webhook port, is not.
		status, err := l.RuntimeExtensionDiscoveryStatus(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(status).To(Equal(http.StatusForbidden), "the hooks answer a caller without Cluster API's client certificate")
	})

	It("refuses a Kubernetes version its release does not carry, with a condition, until the map names the right release", func() {
		// The user moves to Kubernetes 1.31 but leaves the map on OpenShift 4.17.5 (Kubernetes 1.30).
		next := "v" + lab.Releases["4.18.0"]
		setTopologyVersion(l, ns, name, next, map[string]string{next: "4.17.5"})
		Eventually(func(g Gomega) {
			cp := controlPlane(l, ns, name)(g)
			g.Expect(cp.Spec.Version).To(Equal(next))
			c := meta.FindStatusCondition(cp.Status.Conditions, "ReleaseImageResolved")
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Reason).To(Equal("VersionMismatch"))
			g.Expect(c.Message).To(ContainSubstring("carries Kubernetes v" + lab.Releases["4.17.5"] + ", but spec.version is " + next))
			g.Expect(cp.Status.DistributionVersion).To(Equal("4.17.5"), "nothing is upgraded")
		}, timeout, interval).Should(Succeed())

		// The map put right: the control plane upgrades to OpenShift 4.18.0, then the workers follow.
		before := workerUIDs(l, ns, workers)
		setTopologyVersion(l, ns, name, next, map[string]string{next: "4.18.0"})
		Eventually(func(g Gomega) {
			cp := controlPlane(l, ns, name)(g)
			c := meta.FindStatusCondition(cp.Status.Conditions, "ReleaseImageResolved")
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Reason).To(Equal("Resolved"))
			g.Expect(cp.Status.DistributionVersion).To(Equal("4.18.0"))
			g.Expect(cp.Status.Version).To(Equal(next))
			expectUpdatedInPlace(g, l, ns, workers, before, next)
		}, timeout, interval).Should(Succeed())
	})

	It("rotates the workers' templates when the class changes", func() {
		class := &clusterv1.ClusterClass{}
		Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "openshift-metal3"}, class)).To(Succeed())
		old := &capm3v1beta2.Metal3MachineTemplate{}
		Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "openshift-metal3-worker"}, old)).To(Succeed())
		next := &capm3v1beta2.Metal3MachineTemplate{}
		next.Namespace, next.Name = ns, "openshift-metal3-worker-v2"
		next.Spec = *old.Spec.DeepCopy()
		next.Spec.Template.Spec.AutomatedCleaningMode = capm3v1beta2.CleaningModeMetadata
		Expect(l.Mgmt.Client.Create(ctx, next)).To(Succeed())
		md := &clusterv1.MachineDeploymentList{}
		Expect(l.Mgmt.Client.List(ctx, md, client.InNamespace(ns), workers)).To(Succeed())
		Expect(md.Items).To(HaveLen(1))
		before := md.Items[0].Spec.Template.Spec.InfrastructureRef.Name

		patch := client.MergeFrom(class.DeepCopy())
		class.Spec.Workers.MachineDeployments[0].Infrastructure.TemplateRef.Name = next.Name
		Expect(l.Mgmt.Client.Patch(ctx, class, patch)).To(Succeed())

		Eventually(func(g Gomega) {
			md := &clusterv1.MachineDeploymentList{}
			g.Expect(l.Mgmt.Client.List(ctx, md, client.InNamespace(ns), workers)).To(Succeed())
			g.Expect(md.Items).To(HaveLen(1))
			ref := md.Items[0].Spec.Template.Spec.InfrastructureRef.Name
			g.Expect(ref).NotTo(Equal(before), "the MachineDeployment names a new clone")
			tmpl := &capm3v1beta2.Metal3MachineTemplate{}
			g.Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: ref}, tmpl)).To(Succeed())
			g.Expect(tmpl.Spec.Template.Spec.AutomatedCleaningMode).To(Equal(capm3v1beta2.CleaningModeMetadata))
			expectWorkerFrom(g, l, ns, workers, ref)
		}, timeout, interval).Should(Succeed())
	})

	It("leaves nothing behind when the Cluster is deleted", func() {
		deleteClusterAndExpectNothingLeft(l, ns, name)
	})
})

// topologyGenerations are the generations of the objects topology writes in ns, by kind and name.
func topologyGenerations(l *lab.Lab, ns string) map[string]int64 {
	out := map[string]int64{}
	for _, list := range []client.ObjectList{&clusterv1.MachineDeploymentList{}, &capm3v1beta2.Metal3MachineTemplateList{},
		&capm3v1beta2.Metal3ClusterList{}} {
		Expect(l.Mgmt.Client.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		items, err := meta.ExtractList(list)
		Expect(err).NotTo(HaveOccurred())
		for _, item := range items {
			o := item.(client.Object)
			out[fmt.Sprintf("%T/%s", o, o.GetName())] = o.GetGeneration()
		}
	}
	cp := controlPlane(l, ns, "topo")(Default)
	out["OpenshiftAssistedControlPlane/"+cp.Name] = cp.Generation
	return out
}

// setTopologyVersion sets the Cluster's spec.topology.version and its openshiftVersions variable
// in one write, as a user upgrading a topology cluster does.
func setTopologyVersion(l *lab.Lab, ns, name, version string, openshiftVersions map[string]string) {
	cluster := &clusterv1.Cluster{}
	Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cluster)).To(Succeed())
	patch := client.MergeFrom(cluster.DeepCopy())
	cluster.Spec.Topology.Version = version
	raw, err := json.Marshal(openshiftVersions)
	Expect(err).NotTo(HaveOccurred())
	for i, v := range cluster.Spec.Topology.Variables {
		if v.Name == "openshiftVersions" {
			cluster.Spec.Topology.Variables[i].Value = apiextensionsv1.JSON{Raw: raw}
		}
	}
	Expect(l.Mgmt.Client.Patch(ctx, cluster, patch)).To(Succeed())
}

// The same on self-booted hosts: ClusterClass openshift-agent, whose AgentMachineTemplates topology
// clones and, on a class change, rotates (their immutability lets its dry run through).
var _ = Describe("A topology cluster of ClusterClass openshift-agent", Ordered, startsFirst, func() {
	var (
		l  *lab.Lab
		ns string
	)
	const name = "agenttopo"
	workers := client.MatchingLabels{clusterv1.ClusterTopologyMachineDeploymentNameLabel: "md-0"}

	BeforeAll(func() {
		var err error
		l, err = lab.Start(ctx, lab.Options{Topology: true, InPlaceUpdates: true})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { Expect(l.Stop()).To(Succeed()) })
		ns, err = l.Mgmt.CreateNamespace(ctx, "agenttopo")
		Expect(err).NotTo(HaveOccurred())
		Expect(l.AddSelfBootedHosts("agenttopo", 5)).To(Succeed())
	})
	BeforeEach(func() { reportOnFailure(l, ns) })

	It("installs the control plane, then the worker on a claimed Agent", func() {
		Expect(l.CreateCluster(ctx, lab.ClusterOptions{Namespace: ns, Name: name, ControlPlanes: 3, Workers: 1, Version: "4.17.3",
			Infrastructure: lab.Agent, Topology: true})).To(Succeed())
		expectAvailable(l, ns, name, 3, 4)
		Eventually(func(g Gomega) {
			g.Expect(runningMachines(g, l, ns, workers)).To(Equal(1))
		}, timeout, interval).Should(Succeed())
		expectDay2Agents(l, ns, 1, "the worker installs as a day-2 host")
	})

	It("upgrades the worker in place, on the Agent it runs on", func() {
		from, to := "v"+lab.Releases["4.17.3"], "v"+lab.Releases["4.17.5"]
		before := workerUIDs(l, ns, workers)
		setTopologyVersion(l, ns, name, to, map[string]string{from: "4.17.3", to: "4.17.5"})
		Eventually(func(g Gomega) {
			cp := controlPlane(l, ns, name)(g)
			g.Expect(cp.Status.Version).To(Equal(to))
			expectUpdatedInPlace(g, l, ns, workers, before, to)
		}, timeout, interval).Should(Succeed())
	})

	It("rotates the workers' AgentMachineTemplate when the class changes", func() {
		class := &clusterv1.ClusterClass{}
		Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "openshift-agent"}, class)).To(Succeed())
		old := &infrav1.AgentMachineTemplate{}
		Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "openshift-agent-worker"}, old)).To(Succeed())
		next := &infrav1.AgentMachineTemplate{}
		next.Namespace, next.Name = ns, "openshift-agent-worker-v2"
		next.Spec = *old.Spec.DeepCopy()
		next.Spec.Template.Spec.AgentLabelSelector = &metav1.LabelSelector{} // every Agent, as before, but a different spec
		Expect(l.Mgmt.Client.Create(ctx, next)).To(Succeed())
		before := workerInfrastructureRef(l, ns, workers)

		patch := client.MergeFrom(class.DeepCopy())
		class.Spec.Workers.MachineDeployments[0].Infrastructure.TemplateRef.Name = next.Name
		Expect(l.Mgmt.Client.Patch(ctx, class, patch)).To(Succeed())

		Eventually(func(g Gomega) {
			ref := workerInfrastructureRef(l, ns, workers)
			g.Expect(ref).NotTo(Equal(before), "the MachineDeployment names a new clone")
			expectWorkerFrom(g, l, ns, workers, ref)
		}, timeout, interval).Should(Succeed())
	})

	It("leaves nothing behind when the Cluster is deleted", func() {
		deleteClusterAndExpectNothingLeft(l, ns, name)
	})
})

// workerUIDs are the UIDs of the worker Machines matching workers, by name.
func workerUIDs(l *lab.Lab, ns string, workers client.MatchingLabels) map[string]types.UID {
	out := map[string]types.UID{}
	for _, m := range machines(Default, l, ns, workers) {
		out[m.Name] = m.UID
	}
	Expect(out).NotTo(BeEmpty())
	return out
}

// expectUpdatedInPlace expects the worker Machines of before (their UIDs by name) to be the same
// Machines, on the same hosts, now at version and running: Cluster API moved them to the new
// MachineSet and the control plane's runtime extension reported them updated once
// OpenShift's machine-config operator had moved their Nodes' kubelet to version. Nothing was
// re-provisioned.
func expectUpdatedInPlace(g Gomega, l *lab.Lab, ns string, workers client.MatchingLabels, before map[string]types.UID, version string) {
	ms := machines(g, l, ns, workers)
	g.Expect(ms).To(HaveLen(len(before)))
	events := &corev1.EventList{}
	g.Expect(l.Mgmt.Client.List(ctx, events, client.InNamespace(ns))).To(Succeed())
	for _, m := range ms {
		g.Expect(before).To(HaveKeyWithValue(m.Name, m.UID), "the same Machine, not a replacement")
		g.Expect(m.Spec.Version).To(Equal(version))
		g.Expect(m.Annotations).NotTo(HaveKey(clusterv1.UpdateInProgressAnnotation), "the in-place update is over")
		g.Expect(m.Status.NodeRef.IsDefined()).To(BeTrue())
		node := &corev1.Node{}
		g.Expect(l.Workload.Client.Get(ctx, client.ObjectKey{Name: m.Status.NodeRef.Name}, node)).To(Succeed())
		g.Expect("v"+strings.TrimPrefix(node.Status.NodeInfo.KubeletVersion, "v")).To(Equal(version), "OpenShift updated the node")
		started := 0
		for _, e := range events.Items {
			if e.InvolvedObject.UID == m.UID && e.Reason == "SuccessfulStartInPlaceUpdate" {
				started++
			}
		}
		g.Expect(started).To(BeNumerically(">", 0), "Cluster API started an in-place update of Machine %s", m.Name)
	}
	g.Expect(runningMachines(g, l, ns, workers)).To(Equal(len(before)))
}

// workerInfrastructureRef is the infrastructure template the MachineDeployment matching workers names.
func workerInfrastructureRef(l *lab.Lab, ns string, workers client.MatchingLabels) string {
	mds := &clusterv1.MachineDeploymentList{}
	Expect(l.Mgmt.Client.List(ctx, mds, client.InNamespace(ns), workers)).To(Succeed())
	Expect(mds.Items).To(HaveLen(1))
	return mds.Items[0].Spec.Template.Spec.InfrastructureRef.Name
}

// expectWorkerFrom expects one running worker Machine, whose infrastructure was cloned from the
// template named template: the rollout to a rotated template is over.
func expectWorkerFrom(g Gomega, l *lab.Lab, ns string, workers client.MatchingLabels, template string) {
	ms := machines(g, l, ns, workers)
	g.Expect(ms).To(HaveLen(1))
	infra := &metav1.PartialObjectMetadata{}
	infra.SetGroupVersionKind(schema.GroupVersionKind{Group: ms[0].Spec.InfrastructureRef.APIGroup, Version: "v1beta2", Kind: ms[0].Spec.InfrastructureRef.Kind})
	if ms[0].Spec.InfrastructureRef.Kind == "AgentMachine" {
		infra.SetGroupVersionKind(infrav1.GroupVersion.WithKind("AgentMachine"))
	}
	g.Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: ms[0].Spec.InfrastructureRef.Name}, infra)).To(Succeed())
	g.Expect(infra.GetAnnotations()).To(HaveKeyWithValue(clusterv1.TemplateClonedFromNameAnnotation, template))
	g.Expect(runningMachines(g, l, ns, workers)).To(Equal(1))
}
