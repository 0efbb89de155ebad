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

package simtest

import (
	"testing"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	. "github.com/onsi/gomega"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	"github.com/openshift/assisted-service/models"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/inventory"
)

// TestLiveISOBootOrder installs single-node clusters on BareMetalHosts that boot the discovery
// ISO as virtual media (BMO forcing a one-time CD boot, as OpenShift runs it), and checks what
// each host boots when the installer reboots it: a UEFI host its disk (the installer put it first),
// a legacy BIOS host the ISO again when its BIOS tries the CD first (the ISO is still attached:
// assisted-service's wrong-boot-order state, until a person fixes the order and power-cycles it),
// its disk when the BIOS tries the disk first.
func TestLiveISOBootOrder(t *testing.T) {
	ns := newNamespace(t, "bootorder")
	for _, tc := range []struct {
		name      string
		mode      bmov1alpha1.BootMode
		diskFirst bool
		// pending: the host ends in installing-pending-user-action instead of installed.
		pending bool
	}{
		{name: "uefi", mode: bmov1alpha1.UEFI},
		{name: "legacy-cd-first", mode: bmov1alpha1.Legacy, pending: true},
		{name: "legacy-disk-first", mode: bmov1alpha1.Legacy, diskFirst: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			host := inventory.Generate("bootorder-"+tc.name+"-"+ns, 1, inventory.GenerateOptions{})[0]
			host.LegacyBootDiskFirst = tc.diskFirst
			inv.Add(host)
			cd, _ := createCluster(g, ns, tc.name, 1, 0)
			ie := createInfraEnv(t, g, ns, tc.name, &aiv1beta1.ClusterReference{Name: cd.Name, Namespace: ns})
			bmh := host.BareMetalHost(ns, "bmc-credentials")
			bmh.Spec.BootMode = tc.mode
			bmh.Spec.Image = &bmov1alpha1.Image{URL: ie.Status.ISODownloadURL, DiskFormat: ptr.To("live-iso")}
			g.Expect(mgmt.Client.Create(ctx, bmh)).To(Succeed())
			approve(g, ns, []*inventory.Host{host}, models.HostRoleMaster)

			if !tc.pending {
				g.Eventually(func(g Gomega) {
					g.Expect(agentOf(g, ns, host).Status.DebugInfo.State).To(Equal(models.HostStatusInstalled))
				}, timeout).Should(Succeed())
				g.Expect(host.Running()).To(BeEmpty(), "the installed host runs its disk")
				return
			}
			g.Eventually(func(g Gomega) {
				a := agentOf(g, ns, host)
				g.Expect(a.Status.DebugInfo.State).To(Equal(models.HostStatusInstallingPendingUserAction))
				g.Expect(a.Status.Progress.CurrentStage).To(Equal(models.HostStageRebooting))
				g.Expect(a.Status.DebugInfo.StateInfo).To(Equal("Expected the host to boot from disk, but it booted the installation image - " +
					"please reboot and fix boot order to boot from disk SimDisk " + host.Disks[0].Serial + " (sda, " + host.InstallationDiskID() + ")"))
				c := agentCondition(a, aiv1beta1.InstalledCondition)
				g.Expect(c.Reason).To(Equal(aiv1beta1.InstallationInProgressReason))
			}, timeout).Should(Succeed())
			g.Expect(host.Running()).To(Equal(ie.Status.ISODownloadURL))
			// It stays there: nothing installs until the host boots its disk.
			g.Consistently(func(g Gomega) {
				g.Expect(agentOf(g, ns, host).Status.DebugInfo.State).To(Equal(models.HostStatusInstallingPendingUserAction))
			}, "2s").Should(Succeed())

			// A person puts the disk first in the BIOS and power-cycles the host through BMO: it
			// boots the installed system and the installation goes on.
			host.SetLegacyBootDiskFirst(true)
			g.Eventually(func() error {
				if err := mgmt.Client.Get(ctx, client.ObjectKeyFromObject(bmh), bmh); err != nil {
					return err
				}
				base := bmh.DeepCopy()
				metav1.SetMetaDataAnnotation(&bmh.ObjectMeta, bmov1alpha1.RebootAnnotationPrefix, "")
				return mgmt.Client.Patch(ctx, bmh, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
			}, timeout).Should(Succeed())
			g.Eventually(func(g Gomega) {
				g.Expect(agentOf(g, ns, host).Status.DebugInfo.State).To(Equal(models.HostStatusInstalled))
				g.Expect(mgmt.Client.Get(ctx, client.ObjectKeyFromObject(bmh), bmh)).To(Succeed())
				g.Expect(bmh.Annotations).NotTo(HaveKey(bmov1alpha1.RebootAnnotationPrefix), "BMO clears the reboot annotation")
			}, timeout).Should(Succeed())
			g.Expect(host.RunsDisk()).To(BeTrue())
		})
	}
}

// TestBareMetalHostWithoutBootMAC: BMO needs a boot MAC only where it cannot find the NICs itself
// (inspection disabled, or the libvirt driver); an inspected host without one registers, and
// inspection reports its NICs.
func TestBareMetalHostWithoutBootMAC(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t, "bmh-nomac")
	hosts := inventory.Generate("nomac-"+ns, 2, inventory.GenerateOptions{})
	for _, h := range hosts {
		inv.Add(h)
	}
	inspected := hosts[0].BareMetalHost(ns, "bmc-credentials")
	inspected.Spec.BootMACAddress = ""
	notInspected := hosts[1].BareMetalHost(ns, "bmc-credentials")
	notInspected.Spec.BootMACAddress = ""
	notInspected.Annotations = map[string]string{bmov1alpha1.InspectAnnotationPrefix: "disabled"}
	g.Expect(mgmt.Client.Create(ctx, inspected)).To(Succeed())
	g.Expect(mgmt.Client.Create(ctx, notInspected)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(mgmt.Client.Get(ctx, client.ObjectKeyFromObject(inspected), inspected)).To(Succeed())
		g.Expect(inspected.Status.Provisioning.State).To(Equal(bmov1alpha1.StateAvailable))
		g.Expect(inspected.Status.HardwareDetails.NIC[0].MAC).To(Equal(hosts[0].BootMAC()))
		g.Expect(mgmt.Client.Get(ctx, client.ObjectKeyFromObject(notInspected), notInspected)).To(Succeed())
		g.Expect(notInspected.Status.ErrorType).To(Equal(bmov1alpha1.RegistrationError))
		g.Expect(notInspected.Status.ErrorMessage).To(Equal("BMC driver redfish-virtualmedia requires a BootMACAddress value"))
	}, timeout).Should(Succeed())
}

// TestReprovisionAfterInstall installs a single-node cluster on a BareMetalHost, lets the host go
// (its Agent unbound, its image removed, as CAPM3 and the providers do when its Machine is
// deleted) and provisions the discovery ISO on it again: with automatedCleaningMode metadata BMO
// wipes the disk when deprovisioning, with disabled the installed system stays on it. Either way
// the firmware boots the ISO (the one-time override) and the discovery agent registers again:
// assisted-service starts the unbound host over.
func TestReprovisionAfterInstall(t *testing.T) {
	ns := newNamespace(t, "reprovision")
	for _, cleaning := range []bmov1alpha1.AutomatedCleaningMode{bmov1alpha1.CleaningModeMetadata, bmov1alpha1.CleaningModeDisabled} {
		t.Run(string(cleaning), func(t *testing.T) {
			g := NewWithT(t)
			name := "reprovision-" + string(cleaning)
			host := inventory.Generate(name+"-"+ns, 1, inventory.GenerateOptions{})[0]
			inv.Add(host)
			cd, _ := createCluster(g, ns, name, 1, 0)
			ie := createInfraEnv(t, g, ns, name, &aiv1beta1.ClusterReference{Name: cd.Name, Namespace: ns})
			iso := &bmov1alpha1.Image{URL: ie.Status.ISODownloadURL, DiskFormat: ptr.To("live-iso")}
			bmh := host.BareMetalHost(ns, "bmc-credentials")
			bmh.Spec.BootMode = bmov1alpha1.UEFI
			bmh.Spec.AutomatedCleaningMode = cleaning
			bmh.Spec.Image = iso
			g.Expect(mgmt.Client.Create(ctx, bmh)).To(Succeed())
			approve(g, ns, []*inventory.Host{host}, models.HostRoleMaster)
			g.Eventually(func(g Gomega) {
				g.Expect(agentOf(g, ns, host).Status.DebugInfo.State).To(Equal(models.HostStatusInstalled))
			}, timeout).Should(Succeed())
			g.Expect(host.RunsDisk()).To(BeTrue())

			// The host's Machine is deleted: its Agent is unbound, its image removed.
			g.Eventually(func() error {
				a := &aiv1beta1.Agent{}
				if err := mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: host.SystemUUID}, a); err != nil {
					return err
				}
				base := a.DeepCopy()
				a.Spec.ClusterDeploymentName = nil
				return mgmt.Client.Patch(ctx, a, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
			}, timeout).Should(Succeed())
			g.Eventually(func(g Gomega) {
				g.Expect(agentOf(g, ns, host).Status.DebugInfo.State).To(Equal(models.HostStatusUnbindingPendingUserAction))
			}, timeout).Should(Succeed())
			setImage := func(image *bmov1alpha1.Image, want bmov1alpha1.ProvisioningState) {
				g.Eventually(func() error {
					if err := mgmt.Client.Get(ctx, client.ObjectKeyFromObject(bmh), bmh); err != nil {
						return err
					}
					base := bmh.DeepCopy()
					bmh.Spec.Image = image
					return mgmt.Client.Patch(ctx, bmh, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
				}, timeout).Should(Succeed())
				g.Eventually(func(g Gomega) {
					g.Expect(mgmt.Client.Get(ctx, client.ObjectKeyFromObject(bmh), bmh)).To(Succeed())
					g.Expect(bmh.Status.Provisioning.State).To(Equal(want))
					g.Expect(bmh.Status.Provisioning.Image.URL).To(Equal(ptr.Deref(image, bmov1alpha1.Image{}).URL))
				}, timeout).Should(Succeed())
			}
			setImage(nil, bmov1alpha1.StateAvailable)
			g.Expect(host.Running()).To(BeEmpty())
			g.Expect(agentOf(g, ns, host).Status.DebugInfo.State).To(Equal(models.HostStatusUnbindingPendingUserAction))

			// Provisioned again with the discovery ISO: the host boots it and registers.
			setImage(iso, bmov1alpha1.StateProvisioned)
			g.Eventually(func(g Gomega) {
				g.Expect(agentOf(g, ns, host).Status.DebugInfo.State).To(Equal(models.HostStatusKnownUnbound))
			}, timeout).Should(Succeed())
			g.Expect(host.Running()).To(Equal(iso.URL))
		})
	}
}
