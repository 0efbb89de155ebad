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
	"encoding/json"
	"testing"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	. "github.com/onsi/gomega"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	"github.com/openshift/assisted-service/models"
	conditionsv1 "github.com/openshift/custom-resource-status/conditions/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/baremetal"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/inventory"
)

func bmhState(b *bmov1alpha1.BareMetalHost) string { return string(b.Status.Provisioning.State) }
func agentState(a *aiv1beta1.Agent) string         { return a.Status.DebugInfo.State }

func createInfraEnv(t *testing.T, g Gomega, ns, name string, clusterRef *aiv1beta1.ClusterReference) *aiv1beta1.InfraEnv {
	t.Helper()
	ie := &aiv1beta1.InfraEnv{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: aiv1beta1.InfraEnvSpec{
			PullSecretRef: &corev1.LocalObjectReference{Name: "pull-secret"},
			ClusterRef:    clusterRef,
		},
	}
	g.Expect(mgmt.Client.Create(ctx, ie)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(mgmt.Client.Get(ctx, client.ObjectKeyFromObject(ie), ie)).To(Succeed())
		g.Expect(ie.Status.ISODownloadURL).NotTo(BeEmpty())
		c := conditionsv1.FindStatusCondition(ie.Status.Conditions, aiv1beta1.ImageCreatedCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(corev1.ConditionTrue))
		g.Expect(c.Reason).To(Equal(aiv1beta1.ImageCreatedReason))
	}, timeout).Should(Succeed())
	return ie
}

// TestBareMetalHostLifecycle drives a BareMetalHost as CAPM3 would (image with a live ISO, then
// none) and checks BMO's state sequence, the inspected hardware, the boot into the discovery ISO
// registering an Agent that matches the host, and the release on deletion.
func TestBareMetalHostLifecycle(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t, "bmh")
	host := inventory.Generate("bmh-"+ns, 1, inventory.GenerateOptions{})[0]
	inv.Add(host)
	ie := createInfraEnv(t, g, ns, "discovery", nil)

	wc := watchClient(t, mgmt)
	states := recordStates(t, wc, &bmov1alpha1.BareMetalHostList{}, ns, host.Name, bmhState)
	agentStates := recordStates(t, wc, &aiv1beta1.AgentList{}, ns, host.SystemUUID, agentState)

	bmh := host.BareMetalHost(ns, "bmc-credentials")
	g.Expect(mgmt.Client.Create(ctx, bmh)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(mgmt.Client.Get(ctx, client.ObjectKeyFromObject(bmh), bmh)).To(Succeed())
		g.Expect(bmh.Status.Provisioning.State).To(Equal(bmov1alpha1.StateAvailable))
	}, timeout).Should(Succeed())
	g.Eventually(states.States, timeout).Should(Equal([]string{"registering", "inspecting", "preparing", "available"}))
	g.Expect(bmh.Finalizers).To(ContainElement(bmov1alpha1.BareMetalHostFinalizer))
	g.Expect(bmh.Status.OperationalStatus).To(Equal(bmov1alpha1.OperationalStatusOK))
	hw := bmh.Status.HardwareDetails
	g.Expect(hw).NotTo(BeNil())
	g.Expect(hw.SystemVendor.SerialNumber).To(Equal(host.SerialNumber))
	g.Expect(hw.CPU.Count).To(Equal(host.CPUCount))
	g.Expect(hw.RAMMebibytes).To(Equal(host.RAMMebibytes))
	// The dual-stack NIC is listed once per family, as the bare-metal operator lists it.
	g.Expect(hw.NIC).To(HaveLen(2))
	g.Expect(hw.NIC[0].MAC).To(Equal(bmh.Spec.BootMACAddress))
	g.Expect(hw.NIC[0].IP).To(Equal(host.IPv4()))
	g.Expect(hw.NIC[1].MAC).To(Equal(bmh.Spec.BootMACAddress))
	g.Expect(hw.NIC[1].IP + "/64").To(Equal(host.NICs[0].IPv6))
	g.Expect(hw.Storage).To(HaveLen(1))
	g.Expect(int64(hw.Storage[0].SizeBytes)).To(Equal(host.Disks[0].SizeBytes))

	// CAPM3 sets a live ISO image: the host provisions, boots it and registers an Agent.
	base := bmh.DeepCopy()
	bmh.Spec.Image = &bmov1alpha1.Image{URL: ie.Status.ISODownloadURL, DiskFormat: ptr.To("live-iso")}
	g.Expect(mgmt.Client.Patch(ctx, bmh, client.MergeFrom(base))).To(Succeed())
	agent := &aiv1beta1.Agent{}
	g.Eventually(func(g Gomega) {
		g.Expect(mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: host.SystemUUID}, agent)).To(Succeed())
		g.Expect(agent.Status.DebugInfo.State).To(Equal(models.HostStatusKnownUnbound))
	}, timeout).Should(Succeed())
	g.Expect(mgmt.Client.Get(ctx, client.ObjectKeyFromObject(bmh), bmh)).To(Succeed())
	g.Eventually(states.States, timeout).Should(Equal([]string{"registering", "inspecting", "preparing", "available", "provisioning", "provisioned"}))
	g.Expect(bmh.Status.PoweredOn).To(BeTrue())
	g.Eventually(agentStates.States, timeout).Should(Equal([]string{models.HostStatusDiscoveringUnbound, models.HostStatusKnownUnbound}))
	g.Expect(agent.Labels).To(HaveKeyWithValue(aiv1beta1.InfraEnvNameLabel, ie.Name))
	inventoryMatches(g, agent, host)

	// The image is removed: the host is cleaned, available again, and its agent disconnects.
	base = bmh.DeepCopy()
	bmh.Spec.Image = nil
	g.Expect(mgmt.Client.Patch(ctx, bmh, client.MergeFrom(base))).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: host.SystemUUID}, agent)).To(Succeed())
		g.Expect(agent.Status.DebugInfo.State).To(Equal(models.HostStatusDisconnectedUnbound))
		g.Expect(conditionsv1.IsStatusConditionFalse(agent.Status.Conditions, aiv1beta1.ConnectedCondition)).To(BeTrue())
		g.Expect(mgmt.Client.Get(ctx, client.ObjectKeyFromObject(bmh), bmh)).To(Succeed())
		g.Expect(bmh.Status.Provisioning.State).To(Equal(bmov1alpha1.StateAvailable))
	}, timeout).Should(Succeed())
	g.Eventually(states.States, timeout).Should(Equal([]string{"registering", "inspecting", "preparing", "available", "provisioning", "provisioned",
		"deprovisioning", "available"}))
	g.Expect(bmh.Status.Provisioning.Image.URL).To(BeEmpty())

	// Detached: BMO stops managing the host.
	base = bmh.DeepCopy()
	bmh.Annotations = map[string]string{bmov1alpha1.DetachedAnnotation: ""}
	g.Expect(mgmt.Client.Patch(ctx, bmh, client.MergeFrom(base))).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(mgmt.Client.Get(ctx, client.ObjectKeyFromObject(bmh), bmh)).To(Succeed())
		g.Expect(bmh.Status.OperationalStatus).To(Equal(bmov1alpha1.OperationalStatusDetached))
	}, timeout).Should(Succeed())

	// Deleted: released (finalizer removed) without leaving anything behind.
	g.Expect(mgmt.Client.Delete(ctx, bmh)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(mgmt.Client.Get(ctx, client.ObjectKeyFromObject(bmh), bmh))
	}, timeout).Should(BeTrue())
}

// TestBareMetalHostUnknownBMC: a BMC that answers nowhere is a registration error.
func TestBareMetalHostUnknownBMC(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t, "bmh-unknown")
	bmh := (&inventory.Host{Name: "ghost", BMCAddress: "redfish://192.0.2.1/nowhere"}).BareMetalHost(ns, "bmc-credentials")
	g.Expect(mgmt.Client.Create(ctx, bmh)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(mgmt.Client.Get(ctx, client.ObjectKeyFromObject(bmh), bmh)).To(Succeed())
		g.Expect(bmh.Status.ErrorType).To(Equal(bmov1alpha1.RegistrationError))
		g.Expect(bmh.Status.OperationalStatus).To(Equal(bmov1alpha1.OperationalStatusError))
		g.Expect(bmh.Status.Provisioning.State).To(Equal(bmov1alpha1.StateRegistering))
	}, timeout).Should(Succeed())
}

func inventoryMatches(g Gomega, a *aiv1beta1.Agent, h *inventory.Host) {
	inv := a.Status.Inventory
	g.Expect(inv.Hostname).To(Equal(h.Hostname))
	g.Expect(inv.SystemVendor.SerialNumber).To(Equal(h.SerialNumber))
	g.Expect(inv.SystemVendor.Manufacturer).To(Equal(h.Manufacturer))
	g.Expect(inv.Cpu.Count).To(Equal(int64(h.CPUCount)))
	g.Expect(inv.Memory.PhysicalBytes).To(Equal(int64(h.RAMMebibytes) * 1024 * 1024))
	g.Expect(inv.Interfaces).To(HaveLen(len(h.NICs)))
	g.Expect(inv.Interfaces[0].MacAddress).To(Equal(h.BootMAC()))
	g.Expect(inv.Interfaces[0].IPV4Addresses).To(Equal([]string{h.NICs[0].IPv4}))
	g.Expect(inv.Disks).To(HaveLen(len(h.Disks)))
	g.Expect(inv.Disks[0].SizeBytes).To(Equal(h.Disks[0].SizeBytes))
	g.Expect(inv.Disks[0].Serial).To(Equal(h.Disks[0].Serial))
	g.Expect(a.Status.InstallationDiskID).To(Equal(inv.Disks[0].ID))
}

// TestBareMetalHostDeleteProvisioned deletes a provisioned host: BMO cleans and powers it off first.
func TestBareMetalHostDeleteProvisioned(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t, "bmh-delete")
	host := inventory.Generate("bmh-delete-"+ns, 1, inventory.GenerateOptions{})[0]
	inv.Add(host)
	states := recordStates(t, watchClient(t, mgmt), &bmov1alpha1.BareMetalHostList{}, ns, host.Name, bmhState)
	bmh := host.BareMetalHost(ns, "bmc-credentials")
	bmh.Spec.Image = &bmov1alpha1.Image{URL: "http://images.lab.sim/rhcos.qcow2", Checksum: "abc", DiskFormat: ptr.To("qcow2")}
	g.Expect(mgmt.Client.Create(ctx, bmh)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(mgmt.Client.Get(ctx, client.ObjectKeyFromObject(bmh), bmh)).To(Succeed())
		g.Expect(bmh.Status.Provisioning.State).To(Equal(bmov1alpha1.StateProvisioned))
	}, timeout).Should(Succeed())
	g.Expect(mgmt.Client.Delete(ctx, bmh)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(mgmt.Client.Get(ctx, client.ObjectKeyFromObject(bmh), bmh))
	}, timeout).Should(BeTrue())
	g.Eventually(states.States, timeout).Should(Equal([]string{"registering", "inspecting", "preparing", "provisioning",
		"provisioned", "deprovisioning", "powering off before delete", "deleting"}))
}

// TestBareMetalHostMoved checks what BMO does with a host moved from another management cluster
// (clusterctl move: no status): paused, it waits; unpaused, it takes its status from the status
// annotation CAPM3 wrote when pausing it, without going through registration again, then drops
// the annotation. It also checks that a host owns its BMC credentials Secret.
func TestBareMetalHostMoved(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t, "moved")
	host := inventory.Generate("moved-"+ns, 1, inventory.GenerateOptions{})[0]
	inv.Add(host)
	creds := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bmc"}, StringData: map[string]string{"username": "u", "password": "p"}}
	g.Expect(mgmt.Client.Create(ctx, creds)).To(Succeed())

	// The host as it was on the other management cluster: provisioned.
	saved := bmov1alpha1.BareMetalHostStatus{
		OperationalStatus: bmov1alpha1.OperationalStatusOK, PoweredOn: true,
		Provisioning: bmov1alpha1.ProvisionStatus{State: bmov1alpha1.StateProvisioned, BootMode: bmov1alpha1.DefaultBootMode,
			Image: bmov1alpha1.Image{URL: "https://iso.example.com/discovery.iso", DiskFormat: ptr.To("live-iso")}},
	}
	raw, err := json.Marshal(saved)
	g.Expect(err).NotTo(HaveOccurred())
	wc := watchClient(t, mgmt)
	states := recordStates(t, wc, &bmov1alpha1.BareMetalHostList{}, ns, host.Name, bmhState)
	bmh := host.BareMetalHost(ns, creds.Name)
	bmh.Spec.Image = &bmov1alpha1.Image{URL: saved.Provisioning.Image.URL, DiskFormat: ptr.To("live-iso")}
	bmh.Annotations = map[string]string{bmov1alpha1.PausedAnnotation: "metal3.io/capm3", bmov1alpha1.StatusAnnotation: string(raw)}
	g.Expect(mgmt.Client.Create(ctx, bmh)).To(Succeed())

	base := bmh.DeepCopy()
	delete(bmh.Annotations, bmov1alpha1.PausedAnnotation)
	g.Expect(mgmt.Client.Patch(ctx, bmh, client.MergeFrom(base))).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(mgmt.Client.Get(ctx, client.ObjectKeyFromObject(bmh), bmh)).To(Succeed())
		g.Expect(bmh.Status.Provisioning.State).To(Equal(bmov1alpha1.StateProvisioned))
		g.Expect(bmh.Status.PoweredOn).To(BeTrue())
		g.Expect(bmh.Annotations).NotTo(HaveKey(bmov1alpha1.StatusAnnotation))
	}, timeout).Should(Succeed())
	g.Expect(states.States()).To(Equal([]string{"provisioned"}), "the host never registers again")

	// A new host owns its BMC credentials, as with BMO's secret manager.
	other := inventory.Generate("owner-"+ns, 1, inventory.GenerateOptions{FirstIP: 200})[0]
	inv.Add(other)
	fresh := other.BareMetalHost(ns, creds.Name)
	g.Expect(mgmt.Client.Create(ctx, fresh)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(mgmt.Client.Get(ctx, client.ObjectKeyFromObject(creds), creds)).To(Succeed())
		g.Expect(creds.OwnerReferences).To(ContainElement(HaveField("UID", fresh.UID)))
		g.Expect(creds.Labels).To(HaveKeyWithValue(baremetal.SecretEnvironmentLabel, baremetal.SecretEnvironment))
	}, timeout).Should(Succeed())
}
