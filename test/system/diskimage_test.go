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
	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	capm3v1beta2 "github.com/metal3-io/cluster-api-provider-metal3/api/v1beta2"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/lab"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/inventory"
)

// The image flavor (templates/cluster-template-image.yaml): the hosts boot an RHCOS disk image
// that Ironic writes with the bootstrap data, the InfraEnv's discovery ignition, on a config
// drive; no virtual media, so hosts the live ISO refuses (IPMI, legacy BIOS) install.
//
// The specs run in the lab labOf returns once its BeforeAll ran: the real Describe's, after its
// other clusters, so that the image flow meets the real assisted-service and baremetal-operator.
// The lab's clusters share one workload API server, whose Nodes are every cluster's: the specs
// count this cluster's Machines.
func imageFlavorSpecs(labOf func() *lab.Lab) {
	var (
		l  *lab.Lab
		ns string
	)
	const name = "image"
	o := lab.ClusterOptions{Name: name, ControlPlanes: 3, Workers: 1, Version: "4.17.3", DiskImage: true}
	workers := client.MatchingLabels{clusterv1.MachineDeploymentNameLabel: name + "-worker"}

	BeforeAll(func() {
		l = labOf()
		var err error
		ns, err = l.Mgmt.CreateNamespace(ctx, "image")
		Expect(err).NotTo(HaveOccurred())
		o.Namespace = ns
		ipmi := func(h *inventory.Host, bmh *bmov1alpha1.BareMetalHost) {
			h.BMCAddress = "ipmi://192.168.222.1:623/" + h.Name
			bmh.Spec.BMC.Address = h.BMCAddress
		}
		legacyCDFirst := func(h *inventory.Host, bmh *bmov1alpha1.BareMetalHost) {
			h.LegacyBootDiskFirst = false
			bmh.Spec.BootMode = bmov1alpha1.Legacy
		}
		_, err = l.AddHosts(ctx, ns, "ipmi", 2, ipmi)
		Expect(err).NotTo(HaveOccurred())
		_, err = l.AddHosts(ctx, ns, "legacy", 1, legacyCDFirst)
		Expect(err).NotTo(HaveOccurred())
		_, err = l.AddHosts(ctx, ns, "vmedia", 1)
		Expect(err).NotTo(HaveOccurred())
	})
	BeforeEach(func() { reportOnFailure(l, ns) })

	It("installs 3 control-plane nodes and a worker, over IPMI and in legacy BIOS mode, each host booting its disk image with its own InfraEnv's discovery ignition", func() {
		Expect(l.CreateCluster(ctx, o)).To(Succeed())
		expectAvailableMachines(l, ns, name, 3, 4)
		expectBootedDiskImage(l, ns, o.RHCOSImageURL(), 4)
	})

	It("scales the workers by one, as a day-2 host without a boot MAC", func() {
		_, err := l.AddHosts(ctx, ns, "image-day2", 1, func(_ *inventory.Host, bmh *bmov1alpha1.BareMetalHost) { bmh.Spec.BootMACAddress = "" })
		Expect(err).NotTo(HaveOccurred())
		scaleMachineDeployment(l, ns, name+"-worker", 2)
		Eventually(func(g Gomega) {
			g.Expect(runningMachines(g, l, ns, workers)).To(Equal(2))
		}, timeout, interval).Should(Succeed())
		expectDay2Agents(l, ns, 1, "the new worker installs as a day-2 host")
		expectBootedDiskImage(l, ns, o.RHCOSImageURL(), 5)
	})

	It("leaves nothing behind when the image cluster is deleted: every host deprovisioned and off", func() {
		deleteClusterAndExpectNothingLeft(l, ns, name)
		hosts := &bmov1alpha1.BareMetalHostList{}
		Eventually(func(g Gomega) {
			g.Expect(l.Mgmt.Client.List(ctx, hosts, client.InNamespace(ns))).To(Succeed())
			g.Expect(hosts.Items).To(HaveLen(5))
			for _, bmh := range hosts.Items {
				g.Expect(bmh.Spec.ConsumerRef).To(BeNil(), "BareMetalHost %s still consumed", bmh.Name)
				g.Expect(bmh.Status.Provisioning.State).To(Equal(bmov1alpha1.StateAvailable), "BareMetalHost %s", bmh.Name)
			}
		}, timeout, interval).Should(Succeed())
		mine := map[string]bool{}
		for _, bmh := range hosts.Items {
			mine[bmh.Name] = true
		}
		for _, h := range l.Inventory.Hosts() {
			if mine[h.Name] && (h.RunsDisk() || h.Running() != "") {
				Fail("host " + h.Name + " still runs something after its BareMetalHost was deprovisioned")
			}
		}
	})
}

// expectBootedDiskImage checks the n Machines of ns on Metal3: each Metal3Machine and
// BareMetalHost has the template's disk image (never a discovery ISO), and each bootstrap data
// Secret carries the discovery ignition of its config's own InfraEnv.
func expectBootedDiskImage(l *lab.Lab, ns, image string, n int) {
	GinkgoHelper()
	c := l.Mgmt.Client
	m3ms := &capm3v1beta2.Metal3MachineList{}
	Expect(c.List(ctx, m3ms, client.InNamespace(ns))).To(Succeed())
	Expect(m3ms.Items).To(HaveLen(n))
	for _, m := range m3ms.Items {
		Expect(m.Spec.Image.URL).To(Equal(image), "Metal3Machine %s", m.Name)
		Expect(m.Spec.Image.DiskFormat).To(Equal("qcow2"), "Metal3Machine %s", m.Name)
	}
	hosts := &bmov1alpha1.BareMetalHostList{}
	Expect(c.List(ctx, hosts, client.InNamespace(ns))).To(Succeed())
	provisioned := 0
	for _, bmh := range hosts.Items {
		if bmh.Spec.ConsumerRef == nil {
			continue
		}
		provisioned++
		Expect(bmh.Status.Provisioning.Image.URL).To(Equal(image), "BareMetalHost %s", bmh.Name)
		Expect(bmh.Spec.UserData).NotTo(BeNil(), "BareMetalHost %s has no user data", bmh.Name)
	}
	Expect(provisioned).To(Equal(n))
	configs := &bootstrapv1.OpenshiftAssistedConfigList{}
	Expect(c.List(ctx, configs, client.InNamespace(ns))).To(Succeed())
	Expect(configs.Items).To(HaveLen(n))
	for _, cfg := range configs.Items {
		Expect(cfg.Status.ISODownloadURL).To(BeEmpty(), "config %s shows the ISO URL", cfg.Name)
		ie := &aiv1beta1.InfraEnv{}
		Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: cfg.Name}, ie)).To(Succeed())
		secret := &corev1.Secret{}
		Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: cfg.Status.DataSecretName}, secret)).To(Succeed())
		Expect(secret.Annotations).To(HaveKeyWithValue("openshiftassistedconfig.cluster.x-k8s.io/discovery-infraenv-uid", string(ie.UID)),
			"bootstrap data of config %s", cfg.Name)
	}
}
