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
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	"github.com/openshift/assisted-service/models"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/lab"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/inventory"
)

// configOf returns the one OpenshiftAssistedConfig of ns (a single-node cluster's).
func configOf(g Gomega, l *lab.Lab, ns string) *bootstrapv1.OpenshiftAssistedConfig {
	list := &bootstrapv1.OpenshiftAssistedConfigList{}
	g.Expect(l.Mgmt.Client.List(ctx, list, client.InNamespace(ns))).To(Succeed())
	g.Expect(list.Items).To(HaveLen(1))
	return &list.Items[0]
}

// expectSingleNodeAvailable waits until the single-node cluster name of ns is Available and its
// Machine a Node. (The lab's clusters share one workload API server: its Nodes are all of theirs.)
func expectSingleNodeAvailable(l *lab.Lab, ns, name string) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		cp := controlPlane(l, ns, name)(g)
		g.Expect(conditionTrue(cp.Status.Conditions, "Available")).To(BeTrue(), "control plane not Available")
		ms := machines(g, l, ns, client.MatchingLabels{clusterv1.ClusterNameLabel: name})
		g.Expect(ms).To(HaveLen(1))
		g.Expect(ms[0].Status.NodeRef.IsDefined()).To(BeTrue(), "Machine %s is no Node yet", ms[0].Name)
	}, timeout, interval).Should(Succeed())
}

// bmcAddress is the BMC address of BareMetalHost name of ns.
func bmcAddress(l *lab.Lab, ns, name string) string {
	GinkgoHelper()
	bmh := &bmov1alpha1.BareMetalHost{}
	Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, bmh)).To(Succeed())
	return bmh.Spec.BMC.Address
}

// The live-ISO flow on hosts as the bare-metal operator accepts them: BMO needs no boot MAC
// for an inspected virtual-media host, the discovery ISO stays attached after the install, and
// what such a host boots when the installer reboots it depends on its boot mode and order
// (test/support/sim/inventory/firmware.go follows Ironic, BMO and the assisted-installer).
var _ = Describe("Bare-metal hosts booting the discovery ISO as virtual media", Ordered, func() {
	var l *lab.Lab
	namespaces := map[string]string{}
	BeforeAll(func() {
		l = startLab()
		for _, name := range []string{"nomac", "legacy", "misordered", "ipmi"} {
			ns, err := l.Mgmt.CreateNamespace(ctx, "bm-"+name)
			Expect(err).NotTo(HaveOccurred())
			namespaces[name] = ns
			reportOnFailure(l, ns)
		}
		withoutMAC := func(_ *inventory.Host, bmh *bmov1alpha1.BareMetalHost) { bmh.Spec.BootMACAddress = "" }
		legacy := func(diskFirst bool) func(*inventory.Host, *bmov1alpha1.BareMetalHost) {
			return func(h *inventory.Host, bmh *bmov1alpha1.BareMetalHost) {
				h.LegacyBootDiskFirst = diskFirst
				bmh.Spec.BootMode = bmov1alpha1.Legacy
			}
		}
		annotatedDiskFirst := func(_ *inventory.Host, bmh *bmov1alpha1.BareMetalHost) {
			bmh.Annotations = map[string]string{bootstrapv1.LegacyBootDiskFirstAnnotation: "true"}
		}
		ipmi := func(h *inventory.Host, bmh *bmov1alpha1.BareMetalHost) {
			h.BMCAddress = "ipmi://192.168.222.1:623/" + h.Name
			bmh.Spec.BMC.Address = h.BMCAddress
		}
		for name, mutate := range map[string][]func(*inventory.Host, *bmov1alpha1.BareMetalHost){
			"nomac":      {withoutMAC},
			"legacy":     {legacy(true)},
			"misordered": {legacy(false), annotatedDiskFirst},
			"ipmi":       {ipmi},
		} {
			_, err := l.AddHosts(ctx, namespaces[name], "bm-"+name, 1, mutate...)
			Expect(err).NotTo(HaveOccurred())
			Expect(l.CreateCluster(ctx, lab.ClusterOptions{Namespace: namespaces[name], Name: name, ControlPlanes: 1, Version: "4.17.3"})).To(Succeed())
		}
		// An installation that fails, in this lab too: a lab costs about as much as an install.
		ns, err := l.Mgmt.CreateNamespace(ctx, "bm-fail")
		Expect(err).NotTo(HaveOccurred())
		namespaces["broken"] = ns
		reportOnFailure(l, ns)
		_, err = l.AddHosts(ctx, ns, "bm-fail", 1)
		Expect(err).NotTo(HaveOccurred())
		l.Assisted.FailInstall(ctx, types.NamespacedName{Namespace: ns, Name: "broken"}, true)
		Expect(l.CreateCluster(ctx, lab.ClusterOptions{Namespace: ns, Name: "broken", ControlPlanes: 1, Version: "4.17.3"})).To(Succeed())
	})

	It("surfaces assisted-service's error of an installation that fails on the control plane and the Cluster", func() {
		ns := namespaces["broken"]
		Eventually(func(g Gomega) {
			cp := controlPlane(l, ns, "broken")(g)
			available := meta.FindStatusCondition(cp.Status.Conditions, "Available")
			g.Expect(available).NotTo(BeNil())
			g.Expect(available.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(available.Message).To(ContainSubstring("installation error"))
			cluster := &clusterv1.Cluster{}
			g.Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "broken"}, cluster)).To(Succeed())
			cpAvailable := meta.FindStatusCondition(cluster.Status.Conditions, clusterv1.ClusterControlPlaneAvailableCondition)
			g.Expect(cpAvailable).NotTo(BeNil())
			g.Expect(cpAvailable.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(cpAvailable.Message).To(ContainSubstring("installation error"))
		}, timeout, interval).Should(Succeed())
	})

	It("installs a host that has no boot MAC, recognizing its Agent by a MAC that inspection found", func() {
		ns := namespaces["nomac"]
		expectSingleNodeAvailable(l, ns, "nomac")
		cond := meta.FindStatusCondition(configOf(Default, l, ns).Status.Conditions, bootstrapv1.AgentRegisteredCondition)
		Expect(cond).NotTo(BeNil())
		Expect(cond.Message).To(ContainSubstring("matched by a MAC that inspection found on BareMetalHost bm-nomac-0"))
	})

	It("refuses a live-ISO host on a BMC without virtual media before anything installs", func() {
		ns := namespaces["ipmi"]
		Eventually(func(g Gomega) {
			cond := meta.FindStatusCondition(configOf(g, l, ns).Status.Conditions, bootstrapv1.AgentRegisteredCondition)
			g.Expect(cond).NotTo(BeNil())
			g.Expect(cond.Reason).To(Equal(bootstrapv1.HostNotSupportedReason))
			g.Expect(cond.Message).To(ContainSubstring("BareMetalHost bm-ipmi-0 has BMC driver ipmi, which cannot boot the discovery ISO"))
			g.Expect(eventNote(g, l, ns, corev1.EventTypeWarning, bootstrapv1.HostNotSupportedReason, "OpenshiftAssistedConfig", "")).To(Equal(cond.Message))
		}, timeout, interval).Should(Succeed())
		// Over iPXE the ISO's root filesystem is out of reach: no agent starts, nothing registers.
		agents := &aiv1beta1.AgentList{}
		Expect(l.Mgmt.Client.List(ctx, agents, client.InNamespace(ns))).To(Succeed())
		Expect(agents.Items).To(BeEmpty())
	})

	It("refuses a legacy-BIOS host whose boot order nobody vouched for, and installs it once its owner annotates it disk-first", func() {
		ns := namespaces["legacy"]
		Eventually(func(g Gomega) {
			cond := meta.FindStatusCondition(configOf(g, l, ns).Status.Conditions, bootstrapv1.AgentRegisteredCondition)
			g.Expect(cond).NotTo(BeNil())
			g.Expect(cond.Reason).To(Equal(bootstrapv1.HostNotSupportedReason))
			g.Expect(cond.Message).To(ContainSubstring("BareMetalHost bm-legacy-0 boots in legacy BIOS mode"))
			g.Expect(eventNote(g, l, ns, corev1.EventTypeWarning, bootstrapv1.HostNotSupportedReason, "OpenshiftAssistedConfig", "")).NotTo(BeEmpty())
			// Its host booted the ISO and registered, and stays unapproved: nothing installs.
			agents := &aiv1beta1.AgentList{}
			g.Expect(l.Mgmt.Client.List(ctx, agents, client.InNamespace(ns))).To(Succeed())
			g.Expect(agents.Items).To(HaveLen(1))
			g.Expect(agents.Items[0].Spec.Approved).To(BeFalse())
		}, timeout, interval).Should(Succeed())

		bmh := &bmov1alpha1.BareMetalHost{}
		Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "bm-legacy-0"}, bmh)).To(Succeed())
		updateObject(l.Mgmt.Client, bmh, func() error {
			metav1.SetMetaDataAnnotation(&bmh.ObjectMeta, bootstrapv1.LegacyBootDiskFirstAnnotation, "true")
			return nil
		})
		expectSingleNodeAvailable(l, ns, "legacy")
	})

	It("says what to do when a host boots the ISO again after writing its disk, and installs once that is done", func() {
		ns := namespaces["misordered"]
		Eventually(func(g Gomega) {
			cond := meta.FindStatusCondition(configOf(g, l, ns).Status.Conditions, bootstrapv1.InstallingCondition)
			g.Expect(cond).NotTo(BeNil())
			g.Expect(cond.Reason).To(Equal(bootstrapv1.InstallationPendingUserActionReason))
			g.Expect(cond.Message).To(And(ContainSubstring(models.HostStatusInstallingPendingUserAction),
				ContainSubstring("Expected the host to boot from disk, but it booted the installation image"),
				ContainSubstring("a legacy BIOS must boot the disk before the CD")))
			g.Expect(eventNote(g, l, ns, corev1.EventTypeWarning, bootstrapv1.InstallationPendingUserActionReason, "OpenshiftAssistedConfig", "")).To(Equal(cond.Message))
			// Cluster API shows it on the Machine (its BootstrapConfigReady mirrors the config's Ready).
			ms := machines(g, l, ns, client.MatchingLabels{clusterv1.ClusterNameLabel: "misordered"})
			g.Expect(ms).To(HaveLen(1))
			bootstrapReady := meta.FindStatusCondition(ms[0].Status.Conditions, clusterv1.MachineBootstrapConfigReadyCondition)
			g.Expect(bootstrapReady).NotTo(BeNil())
			g.Expect(bootstrapReady.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(bootstrapReady.Message).To(ContainSubstring("booted the installation image"))
		}, timeout, interval).Should(Succeed())
		Consistently(func(g Gomega) {
			ms := machines(g, l, ns, client.MatchingLabels{clusterv1.ClusterNameLabel: "misordered"})
			g.Expect(ms).To(HaveLen(1))
			g.Expect(ms[0].Status.NodeRef.IsDefined()).To(BeFalse(), "the host runs the discovery ISO, not OpenShift")
		}, 3*time.Second, interval).Should(Succeed())

		// What the message says: boot the disk first, power-cycle the host through BMO.
		l.Inventory.ByBMCAddress(bmcAddress(l, ns, "bm-misordered-0")).SetLegacyBootDiskFirst(true)
		bmh := &bmov1alpha1.BareMetalHost{}
		Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "bm-misordered-0"}, bmh)).To(Succeed())
		updateObject(l.Mgmt.Client, bmh, func() error {
			metav1.SetMetaDataAnnotation(&bmh.ObjectMeta, bmov1alpha1.RebootAnnotationPrefix, "")
			return nil
		})
		expectSingleNodeAvailable(l, ns, "misordered")
		Eventually(func(g Gomega) {
			cond := meta.FindStatusCondition(configOf(g, l, ns).Status.Conditions, bootstrapv1.InstalledCondition)
			g.Expect(cond).NotTo(BeNil())
			g.Expect(cond.Status).To(Equal(metav1.ConditionTrue))
		}, timeout, interval).Should(Succeed())
	})

	It("leaves nothing behind when the clusters are deleted, the one whose installation failed too", func() {
		for _, name := range []string{"nomac", "legacy", "misordered", "ipmi", "broken"} {
			deleteClusterAndExpectNothingLeft(l, namespaces[name], name)
		}
	})
})
