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

package bmoprovisioner

import (
	"context"
	"errors"
	"testing"
	"time"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	"github.com/metal3-io/baremetal-operator/pkg/hardwareutils/bmc"
	"github.com/metal3-io/baremetal-operator/pkg/provisioner"
	"github.com/metal3-io/baremetal-operator/pkg/provisioner/fixture"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/inventory"
)

// hostEvents records what the lab is told.
type hostEvents struct {
	booted, off, cleaned []string
	boots                []inventory.Boot
	fail                 error
}

func (h *hostEvents) Booted(_ context.Context, b inventory.Boot) error {
	if h.fail != nil {
		return h.fail
	}
	h.booted = append(h.booted, b.ISOURL+b.DiskImageURL)
	h.boots = append(h.boots, b)
	return nil
}

func (h *hostEvents) PoweredOff(_ context.Context, host *inventory.Host) error {
	h.off = append(h.off, host.Name)
	return nil
}

func (h *hostEvents) Deprovisioned(_ context.Context, host *inventory.Host) error {
	h.cleaned = append(h.cleaned, host.Name)
	return nil
}

// bench is one host, its factory, and what BMO would see: the events published and the
// provisioner ID of the host's status.
type bench struct {
	g      Gomega
	clock  *clocktesting.FakePassiveClock
	f      *Factory
	host   *inventory.Host
	events *hostEvents
	data   provisioner.HostData
	// published are the events' reasons, in order.
	published []string
}

const step = 100 * time.Millisecond

func newBench(t *testing.T, mutate ...func(*inventory.Host)) *bench {
	t.Helper()
	host := inventory.Generate("unit", 1, inventory.GenerateOptions{})[0]
	host.BMCUsername, host.BMCPassword = "admin", "secret"
	for _, m := range mutate {
		m(host)
	}
	b := &bench{g: NewWithT(t), clock: clocktesting.NewFakePassiveClock(time.Now()), host: host, events: &hostEvents{}}
	b.f = &Factory{Inventory: inventory.New(host), Hosts: b.events, Step: step, Clock: b.clock}
	b.data = provisioner.HostData{
		ObjectMeta:     metav1.ObjectMeta{Namespace: "ns", Name: host.Name},
		BMCAddress:     host.BMCAddress,
		BMCCredentials: bmc.Credentials{Username: "admin", Password: "secret"},
		BootMACAddress: host.BootMAC(),
	}
	return b
}

// prov is BMO's provisioner for the next reconcile.
func (b *bench) prov() provisioner.Provisioner {
	p, err := b.f.NewProvisioner(context.Background(), b.data, func(reason, _ string) { b.published = append(b.published, reason) })
	b.g.Expect(err).NotTo(HaveOccurred())
	return p
}

// wait lets n steps pass.
func (b *bench) wait(n int) { b.clock.SetTime(b.clock.Now().Add(time.Duration(n) * step)) }

// register registers the host until its node is manageable.
func (b *bench) register() {
	ctx := context.Background()
	r, id, err := b.prov().Register(ctx, provisioner.ManagementAccessData{BootMode: bmov1alpha1.UEFI}, true, false)
	b.g.Expect(err).NotTo(HaveOccurred())
	b.g.Expect(r.Dirty).To(BeTrue())
	b.g.Expect(id).NotTo(BeEmpty())
	b.data.ProvisionerID = id
	b.wait(1)
	r, _, err = b.prov().Register(ctx, provisioner.ManagementAccessData{BootMode: bmov1alpha1.UEFI}, false, false)
	b.g.Expect(err).NotTo(HaveOccurred())
	b.g.Expect(r).To(Equal(provisioner.Result{}))
}

// until calls op, a step apart, until it reports done (not dirty), at most n times.
func (b *bench) until(n int, op func() (provisioner.Result, error)) provisioner.Result {
	for range n {
		r, err := op()
		b.g.Expect(err).NotTo(HaveOccurred())
		if !r.Dirty {
			return r
		}
		b.wait(1)
	}
	b.g.Expect(false).To(BeTrue(), "the operation never completed")
	return provisioner.Result{}
}

// TestRegisterVerifiesTheBMC: enrolled ("Registered"), verifying for a step, then manageable.
func TestRegisterVerifiesTheBMC(t *testing.T) {
	b := newBench(t)
	b.register()
	b.g.Expect(b.published).To(Equal([]string{"Registered"}))
	b.g.Expect(b.f.byID(b.data.ProvisionerID).provisionState).To(BeEquivalentTo("manageable"))
}

// TestRegisterFailsAsIronicDoes: a BMC that refuses the credentials, or no BMC at the address,
// leaves the node in enroll with Ironic's error, which Register reports; new credentials are
// tried again.
func TestRegisterFailsAsIronicDoes(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		mutate  func(*bench)
		message string
	}{
		{"wrong password", func(b *bench) { b.data.BMCCredentials.Password = "wrong" }, "returned code 401"},
		{"no BMC", func(b *bench) { b.data.BMCAddress = "redfish-virtualmedia://192.0.2.1/redfish/v1/Systems/none" }, "connection refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newBench(t)
			tc.mutate(b)
			_, id, err := b.prov().Register(ctx, provisioner.ManagementAccessData{}, true, false)
			b.g.Expect(err).NotTo(HaveOccurred())
			b.data.ProvisionerID = id
			b.wait(1)
			r, _, err := b.prov().Register(ctx, provisioner.ManagementAccessData{}, false, false)
			b.g.Expect(err).NotTo(HaveOccurred())
			b.g.Expect(r.ErrorMessage).To(ContainSubstring(tc.message))
			b.g.Expect(r.ErrorMessage).To(HavePrefix("Failed to get power state for node " + id))

			// BMO retries a registration error (restartOnFailure): verification starts again.
			r, _, err = b.prov().Register(ctx, provisioner.ManagementAccessData{}, false, true)
			b.g.Expect(err).NotTo(HaveOccurred())
			b.g.Expect(r.Dirty).To(BeTrue())
			b.g.Expect(b.f.byID(id).provisionState).To(BeEquivalentTo("verifying"))
		})
	}
	t.Run("credentials fixed", func(t *testing.T) {
		b := newBench(t)
		b.data.BMCCredentials.Password = "wrong"
		_, id, _ := b.prov().Register(ctx, provisioner.ManagementAccessData{}, true, false)
		b.data.ProvisionerID = id
		b.wait(1)
		r, _, _ := b.prov().Register(ctx, provisioner.ManagementAccessData{}, false, false)
		b.g.Expect(r.ErrorMessage).NotTo(BeEmpty())
		b.data.BMCCredentials.Password = "secret"
		b.g.Expect(b.until(3, func() (provisioner.Result, error) {
			r, _, err := b.prov().Register(ctx, provisioner.ManagementAccessData{}, true, false)
			return r, err
		})).To(Equal(provisioner.Result{}))
	})
}

// TestRegisterRefusals: BMO's own checks of the BMC (register.go).
func TestRegisterRefusals(t *testing.T) {
	ctx := context.Background()
	t.Run("libvirt needs a boot MAC", func(t *testing.T) {
		b := newBench(t)
		b.data.BMCAddress, b.data.BootMACAddress = "libvirt://192.168.122.1/", ""
		r, _, err := b.prov().Register(ctx, provisioner.ManagementAccessData{}, true, false)
		b.g.Expect(err).NotTo(HaveOccurred())
		b.g.Expect(r.ErrorMessage).To(Equal("BMC driver libvirt requires a BootMACAddress value"))
	})
	t.Run("IPMI has no secure boot", func(t *testing.T) {
		b := newBench(t)
		b.data.BMCAddress = "ipmi://192.168.122.1"
		r, _, err := b.prov().Register(ctx, provisioner.ManagementAccessData{BootMode: bmov1alpha1.UEFISecureBoot}, true, false)
		b.g.Expect(err).NotTo(HaveOccurred())
		b.g.Expect(r.ErrorMessage).To(Equal("BMC driver ipmi does not support secure boot"))
	})
	t.Run("a MAC another host's node has", func(t *testing.T) {
		b := newBench(t)
		b.register()
		b.data.ObjectMeta.Name, b.data.ProvisionerID = "other", ""
		r, _, err := b.prov().Register(ctx, provisioner.ManagementAccessData{}, true, false)
		b.g.Expect(err).NotTo(HaveOccurred())
		b.g.Expect(r.ErrorMessage).To(Equal("MAC address " + b.host.BootMAC() + " conflicts with existing node ns~" + b.host.Name))
	})
}

// TestInspectionReportsTheHostsHardware: inspection boots the ramdisk, takes two steps, and
// returns the host's hardware; the host is off afterwards.
func TestInspectionReportsTheHostsHardware(t *testing.T) {
	ctx := context.Background()
	b := newBench(t)
	b.register()
	r, started, details, err := b.prov().InspectHardware(ctx, provisioner.InspectData{}, false, false, false)
	b.g.Expect(err).NotTo(HaveOccurred())
	b.g.Expect(r.Dirty).To(BeTrue())
	b.g.Expect(started).To(BeTrue())
	b.g.Expect(details).To(BeNil())
	b.wait(1)
	r, _, details, err = b.prov().InspectHardware(ctx, provisioner.InspectData{}, false, false, false)
	b.g.Expect(err).NotTo(HaveOccurred())
	b.g.Expect(r.Dirty).To(BeTrue())
	b.g.Expect(details).To(BeNil(), "the ramdisk has not reported yet (inspect wait)")
	b.g.Expect(b.host.Running()).To(Equal(deployISO))
	b.wait(1)
	r, started, details, err = b.prov().InspectHardware(ctx, provisioner.InspectData{}, false, false, false)
	b.g.Expect(err).NotTo(HaveOccurred())
	b.g.Expect(r.Dirty).To(BeFalse())
	b.g.Expect(started).To(BeFalse())
	b.g.Expect(details).To(Equal(b.host.HardwareDetails()))
	b.g.Expect(b.host.Running()).To(BeEmpty())
	b.g.Expect(b.published).To(Equal([]string{"Registered", "InspectionStarted", "InspectionComplete"}))
	hw, err := b.prov().UpdateHardwareState(ctx)
	b.g.Expect(err).NotTo(HaveOccurred())
	b.g.Expect(hw.PoweredOn).To(HaveValue(BeFalse()))
}

// provision runs Provision until the node is active.
func (b *bench) provision(data provisioner.ProvisionData) {
	b.until(10, func() (provisioner.Result, error) { return b.prov().Provision(context.Background(), data, false) })
}

// TestProvisionLiveISO: a live ISO is inserted as virtual media and booted; the lab hears of it
// from UpdateHardwareState. Automated cleaning wipes the disk first.
func TestProvisionLiveISO(t *testing.T) {
	ctx := context.Background()
	iso := bmov1alpha1.Image{URL: "https://image/discovery.iso", DiskFormat: ptr.To("live-iso")}
	for _, tc := range []struct {
		name       string
		persistent string
		address    string
		cleaning   bmov1alpha1.AutomatedCleaningMode
		boots      bool
		cleaned    []string
	}{
		{name: "virtual media", persistent: "Never", cleaning: bmov1alpha1.CleaningModeMetadata, boots: true, cleaned: []string{"unit-0"}},
		{name: "virtual media without cleaning", cleaning: bmov1alpha1.CleaningModeDisabled, boots: true},
		{name: "IPMI boots the ISO's kernel only", address: "ipmi://192.168.122.1", cleaning: bmov1alpha1.CleaningModeDisabled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newBench(t, func(h *inventory.Host) {
				if tc.address != "" {
					h.BMCAddress = tc.address
				}
			})
			b.data.BMCAddress = b.host.BMCAddress
			b.f.LiveISOForcePersistentBootDevice = tc.persistent
			b.register()
			_, _, err := b.prov().Register(ctx, provisioner.ManagementAccessData{AutomatedCleaningMode: tc.cleaning, BootMode: bmov1alpha1.UEFI}, false, false)
			b.g.Expect(err).NotTo(HaveOccurred())
			b.provision(provisioner.ProvisionData{Image: iso, BootMode: bmov1alpha1.UEFI})
			b.g.Expect(b.published).To(ContainElements("ProvisioningStarted", "ProvisioningComplete"))
			b.g.Expect(b.events.cleaned).To(Equal(tc.cleaned))
			hw, err := b.prov().UpdateHardwareState(ctx)
			b.g.Expect(err).NotTo(HaveOccurred())
			b.g.Expect(hw.PoweredOn).To(HaveValue(BeTrue()))
			if !tc.boots {
				b.g.Expect(b.events.booted).To(BeEmpty())
				return
			}
			b.g.Expect(b.events.booted).To(Equal([]string{iso.URL}))
			// The boot override: once with "Never", at every power-on otherwise (once the disk
			// holds the installed system, which a UEFI host puts first).
			b.host.WriteOS()
			b.host.PowerOff()
			b.g.Expect(b.host.PowerOn()).To(Equal(map[bool]string{true: "", false: iso.URL}[tc.persistent == "Never"]))
		})
	}
}

// TestProvisionDiskImage: a disk image is written with a config drive holding the user data BMO
// reads, and the host boots it.
func TestProvisionDiskImage(t *testing.T) {
	ctx := context.Background()
	b := newBench(t)
	b.register()
	image := bmov1alpha1.Image{URL: "https://image/rhcos.qcow2", Checksum: "abc", ChecksumType: bmov1alpha1.SHA256}
	data := provisioner.ProvisionData{Image: image, BootMode: bmov1alpha1.UEFI, HostConfig: fixture.NewHostConfigData("ignition", "", "")}
	b.provision(data)
	_, err := b.prov().UpdateHardwareState(ctx)
	b.g.Expect(err).NotTo(HaveOccurred())
	b.g.Expect(b.events.boots).To(HaveLen(1))
	b.g.Expect(b.events.boots[0].DiskImageURL).To(Equal(image.URL))
	b.g.Expect(string(b.events.boots[0].UserData)).To(Equal("ignition"))
}

// TestProvisionRefusesAnImageWithoutChecksum: provision.go validateProvisionData.
func TestProvisionRefusesAnImageWithoutChecksum(t *testing.T) {
	b := newBench(t)
	b.register()
	r, err := b.prov().Provision(context.Background(), provisioner.ProvisionData{Image: bmov1alpha1.Image{URL: "https://image/rhcos.qcow2"}}, false)
	b.g.Expect(err).NotTo(HaveOccurred())
	b.g.Expect(r.ErrorMessage).To(HavePrefix("Validation failed: "))
}

// TestProvisionNeedsTheUserData: without its user data a deploy does not start (a transient
// error, as getConfigDrive's).
func TestProvisionNeedsTheUserData(t *testing.T) {
	b := newBench(t)
	b.register()
	b.f.byID(b.data.ProvisionerID).provisionState = "available"
	data := provisioner.ProvisionData{Image: bmov1alpha1.Image{URL: "https://image/rhcos.qcow2", Checksum: "abc"}, HostConfig: failingConfig{}}
	_, err := b.prov().Provision(context.Background(), data, false)
	b.g.Expect(err).To(MatchError(ContainSubstring("could not retrieve user data")))
}

type failingConfig struct{ provisioner.HostConfigData }

func (failingConfig) UserData(context.Context) (string, error) { return "", errors.New("no secret") }

// TestDeprovisionTearsDownAndCleans: the host is powered off, its media ejected and its disk
// wiped; the node is available again.
func TestDeprovisionTearsDownAndCleans(t *testing.T) {
	ctx := context.Background()
	b := newBench(t)
	b.register()
	image := bmov1alpha1.Image{URL: "https://image/rhcos.qcow2", Checksum: "abc"}
	b.provision(provisioner.ProvisionData{Image: image, HostConfig: fixture.NewHostConfigData("", "", "")})
	b.g.Expect(b.events.cleaned).To(Equal([]string{b.host.Name}), "automated cleaning before the first deploy")
	_, _, err := b.prov().Register(ctx, provisioner.ManagementAccessData{AutomatedCleaningMode: bmov1alpha1.CleaningModeMetadata}, false, false)
	b.g.Expect(err).NotTo(HaveOccurred())
	b.published, b.events.cleaned = nil, nil
	b.until(10, func() (provisioner.Result, error) {
		return b.prov().Deprovision(ctx, false, bmov1alpha1.CleaningModeMetadata)
	})
	b.g.Expect(b.published).To(Equal([]string{"DeprovisioningStarted", "DeprovisioningComplete"}))
	b.g.Expect(b.events.off).To(Equal([]string{b.host.Name}))
	b.g.Expect(b.events.cleaned).To(Equal([]string{b.host.Name}))
	image2, _ := b.host.RunningDiskImage()
	b.g.Expect(image2).To(BeEmpty())
	b.g.Expect(b.f.byID(b.data.ProvisionerID).provisionState).To(BeEquivalentTo("available"))
}

// TestDeprovisionWithoutCleaningKeepsTheDisk: with automatedCleaningMode disabled (Ironic's
// automated_clean false) the tear-down powers the host off and ejects its media, and nothing wipes
// its disk: the system installed from the live ISO boots again at the next power-on.
func TestDeprovisionWithoutCleaningKeepsTheDisk(t *testing.T) {
	ctx := context.Background()
	b := newBench(t)
	b.register()
	access := provisioner.ManagementAccessData{AutomatedCleaningMode: bmov1alpha1.CleaningModeDisabled, BootMode: bmov1alpha1.UEFI}
	_, _, err := b.prov().Register(ctx, access, false, false)
	b.g.Expect(err).NotTo(HaveOccurred())
	iso := bmov1alpha1.Image{URL: "https://image/discovery.iso", DiskFormat: ptr.To("live-iso")}
	b.provision(provisioner.ProvisionData{Image: iso, BootMode: bmov1alpha1.UEFI})
	b.host.WriteOS()
	b.until(10, func() (provisioner.Result, error) {
		return b.prov().Deprovision(ctx, false, bmov1alpha1.CleaningModeDisabled)
	})
	b.g.Expect(b.published).To(ContainElement("DeprovisioningComplete"))
	b.g.Expect(b.events.cleaned).To(BeEmpty())
	b.g.Expect(b.events.off).To(Equal([]string{b.host.Name}))
	b.g.Expect(b.host.Running()).To(BeEmpty())
	b.g.Expect(b.host.PowerOn()).To(BeEmpty(), "no ISO is attached any more")
	b.g.Expect(b.host.RunsDisk()).To(BeTrue(), "the installed system is still on the disk")
}

// TestPowerOffAndOn: the lab hears of both; a powered-on host's live ISO boots again.
func TestPowerOffAndOn(t *testing.T) {
	ctx := context.Background()
	b := newBench(t)
	b.register()
	iso := bmov1alpha1.Image{URL: "https://image/discovery.iso", DiskFormat: ptr.To("live-iso")}
	b.provision(provisioner.ProvisionData{Image: iso})
	b.until(3, func() (provisioner.Result, error) {
		return b.prov().PowerOff(ctx, bmov1alpha1.RebootModeSoft, false, "")
	})
	b.g.Expect(b.events.off).To(Equal([]string{b.host.Name}))
	b.g.Expect(b.host.Running()).To(BeEmpty())
	b.until(3, func() (provisioner.Result, error) { return b.prov().PowerOn(ctx, false) })
	b.g.Expect(b.events.booted).To(Equal([]string{iso.URL}))
	b.g.Expect(b.published).To(ContainElements("PowerOff", "PowerOn"))
}

// TestDeleteRemovesTheNode: an active node is put in maintenance and removed; BMO's next Delete
// finds nothing.
func TestDeleteRemovesTheNode(t *testing.T) {
	ctx := context.Background()
	b := newBench(t)
	b.register()
	b.provision(provisioner.ProvisionData{Image: bmov1alpha1.Image{URL: "https://image/discovery.iso", DiskFormat: ptr.To("live-iso")}})
	b.until(3, func() (provisioner.Result, error) { return b.prov().Delete(ctx) })
	b.g.Expect(b.f.byID(b.data.ProvisionerID)).To(BeNil())
	_, err := b.prov().UpdateHardwareState(ctx)
	b.g.Expect(err).To(MatchError(provisioner.ErrNeedsRegistration))
	b.g.Expect(b.host.Running()).NotTo(BeEmpty(), "Ironic removes a node in maintenance without touching the host")
}

// TestAdoptTakesAProvisionedHostBack: a host registered again while provisioned (moved,
// detached) is adopted without being touched.
func TestAdoptTakesAProvisionedHostBack(t *testing.T) {
	ctx := context.Background()
	b := newBench(t)
	b.register()
	b.until(3, func() (provisioner.Result, error) {
		return b.prov().Adopt(ctx, provisioner.AdoptData{State: bmov1alpha1.StateProvisioned}, false)
	})
	b.g.Expect(b.f.byID(b.data.ProvisionerID).provisionState).To(BeEquivalentTo("active"))
	b.g.Expect(b.events.booted).To(BeEmpty())
}

// TestALabThatFailsToHearIsToldAgain: a message the lab fails to take stays queued.
func TestALabThatFailsToHearIsToldAgain(t *testing.T) {
	ctx := context.Background()
	b := newBench(t)
	b.register()
	iso := bmov1alpha1.Image{URL: "https://image/discovery.iso", DiskFormat: ptr.To("live-iso")}
	b.provision(provisioner.ProvisionData{Image: iso})
	b.events.fail = errors.New("assisted-service is unavailable")
	_, err := b.prov().UpdateHardwareState(ctx)
	b.g.Expect(err).To(MatchError(ContainSubstring("assisted-service is unavailable")))
	b.events.fail = nil
	_, err = b.prov().UpdateHardwareState(ctx)
	b.g.Expect(err).NotTo(HaveOccurred())
	b.g.Expect(b.events.booted).To(Equal([]string{iso.URL, iso.URL}), "the queued news, then this pass's")
}

// TestHasCapacity: hosts that boot ISOs always have a slot; IPMI hosts share
// PROVISIONING_LIMIT.
func TestHasCapacity(t *testing.T) {
	b := newBench(t)
	ok, err := b.prov().HasCapacity(context.Background())
	b.g.Expect(err).NotTo(HaveOccurred())
	b.g.Expect(ok).To(BeTrue())
	for i := range maxBusyHosts {
		n := b.f.enroll(string(rune('a'+i)), "ipmi://192.168.122.1", "", bmc.Credentials{})
		n.provisionState = "cleaning"
	}
	b.data.BMCAddress = "ipmi://192.168.122.2"
	ok, err = b.prov().HasCapacity(context.Background())
	b.g.Expect(err).NotTo(HaveOccurred())
	b.g.Expect(ok).To(BeFalse())
}

// TestFirmware: Redfish hosts list no settings or components; IPMI ones support no component
// updates.
func TestFirmware(t *testing.T) {
	ctx := context.Background()
	b := newBench(t)
	b.register()
	settings, _, err := b.prov().GetFirmwareSettings(ctx, true)
	b.g.Expect(err).NotTo(HaveOccurred())
	b.g.Expect(settings).To(BeEmpty())
	_, err = b.prov().GetFirmwareComponents(ctx)
	b.g.Expect(err).NotTo(HaveOccurred())
	b.f.byID(b.data.ProvisionerID).bmcAddress = "ipmi://192.168.122.1"
	_, err = b.prov().GetFirmwareComponents(ctx)
	b.g.Expect(err).To(MatchError(provisioner.ErrFirmwareUpdateUnsupported))
}
