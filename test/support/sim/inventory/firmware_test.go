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

package inventory

import "testing"

// TestBootAfterInstall: what a live-ISO host boots at its first power-on and at the reboot after
// the installer wrote its disk, for each boot mode, BMO boot override and BIOS boot order.
func TestBootAfterInstall(t *testing.T) {
	const iso = "https://images.lab.sim/discovery.iso"
	for _, tc := range []struct {
		name          string
		uefi          bool
		override      BootOverride
		biosDiskFirst bool
		// afterInstall is what the host boots when the installer reboots it: iso or "" (disk).
		afterInstall string
	}{
		{name: "UEFI, one-time CD boot (OpenShift's BMO)", uefi: true, override: OverrideOnce, afterInstall: ""},
		{name: "UEFI, persistent CD boot (upstream BMO's default)", uefi: true, override: OverrideContinuous, afterInstall: iso},
		{name: "legacy BIOS, CD before disk", override: OverrideOnce, afterInstall: iso},
		{name: "legacy BIOS, disk before CD", override: OverrideOnce, biosDiskFirst: true, afterInstall: ""},
		{name: "legacy BIOS, disk first but persistent CD boot", override: OverrideContinuous, biosDiskFirst: true, afterInstall: iso},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &Host{Name: "h", LegacyBootDiskFirst: tc.biosDiskFirst}
			h.InsertMedia(iso, tc.uefi, tc.override)
			if got := h.PowerOn(); got != iso {
				t.Fatalf("first boot: got %q, want the ISO (the disk is empty)", got)
			}
			// Rebooted before the install (an agent restart, a power cycle): still the ISO.
			if got := h.PowerOn(); got != iso {
				t.Fatalf("reboot before the install: got %q, want the ISO", got)
			}
			h.WriteOS()
			if got := h.PowerOn(); got != tc.afterInstall {
				t.Fatalf("reboot after the install: got %q, want %q", got, tc.afterInstall)
			}
			if got := h.Running(); got != tc.afterInstall {
				t.Fatalf("Running() = %q, want %q", got, tc.afterInstall)
			}
			h.PowerOff()
			if got := h.Running(); got != "" {
				t.Fatalf("Running() after power-off = %q", got)
			}
			// Torn down with cleaning: nothing attached, nothing on the disk.
			h.Deprovision()
			if got := h.PowerOn(); got != "" {
				t.Fatalf("boot after deprovisioning: got %q, want no ISO", got)
			}
		})
	}
}

// TestDiskImageDeploy: what a host boots after Ironic deployed a disk image (the disk, first,
// whatever its boot mode, BIOS order or earlier live ISO), what RunningDiskImage reports, and
// that the installed system, once the installer wrote it to the image's root, replaces it.
func TestDiskImageDeploy(t *testing.T) {
	const (
		iso   = "https://images.lab.sim/discovery.iso"
		image = "https://mirror.lab.sim/rhcos-4.20.0-x86_64-openstack.x86_64.qcow2"
	)
	userData := []byte(`{"ignition":{"version":"3.1.0"}}`)
	for _, tc := range []struct {
		name string
		uefi bool
		// biosCDFirst: a legacy BIOS that tries its CD before its disk.
		biosCDFirst bool
		// isoBefore: a live ISO was attached (continuous override) before the image was deployed.
		isoBefore bool
		// installed: the installer wrote OpenShift into the image's root.
		installed bool
	}{
		{name: "UEFI", uefi: true},
		{name: "legacy BIOS, CD before disk", biosCDFirst: true},
		{name: "UEFI, live ISO attached before", uefi: true, isoBefore: true},
		{name: "UEFI, installed", uefi: true, installed: true},
		{name: "legacy BIOS, installed", biosCDFirst: true, installed: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &Host{Name: "h", LegacyBootDiskFirst: !tc.biosCDFirst}
			if tc.isoBefore {
				h.InsertMedia(iso, tc.uefi, OverrideContinuous)
				if got := h.PowerOn(); got != iso {
					t.Fatalf("boot before the deploy: got %q, want the ISO", got)
				}
			}
			h.DeployImage(image, tc.uefi, userData)
			if got, _ := h.RunningDiskImage(); got != "" {
				t.Fatalf("RunningDiskImage() before the power-on = %q, want nothing (Ironic leaves it to BMO's power-on)", got)
			}
			for range 2 { // the first boot and a reboot
				if got := h.PowerOn(); got != "" {
					t.Fatalf("boot after the deploy: got %q, want the disk", got)
				}
				got, data := h.RunningDiskImage()
				if got != image || string(data) != string(userData) {
					t.Fatalf("RunningDiskImage() = %q, %q; want %q, %q", got, data, image, userData)
				}
				if h.RunsDisk() {
					t.Fatal("RunsDisk() = true before OpenShift is installed")
				}
			}
			if !tc.installed {
				return
			}
			h.InstallToExistingRoot()
			if got := h.PowerOn(); got != "" {
				t.Fatalf("boot after the install: got %q, want the disk", got)
			}
			if got, _ := h.RunningDiskImage(); got != "" {
				t.Fatalf("RunningDiskImage() after the install = %q, want nothing (OpenShift runs)", got)
			}
			if !h.RunsDisk() {
				t.Fatal("RunsDisk() = false after the install")
			}
			h.Deprovision()
			if got := h.PowerOn(); got != "" {
				t.Fatalf("boot after deprovisioning: got %q", got)
			}
			if got, _ := h.RunningDiskImage(); got != "" || h.RunsDisk() {
				t.Fatalf("after deprovisioning the disk still runs something (image %q, installed %t)", got, h.RunsDisk())
			}
		})
	}
}

// TestDiskImageUserDataIsCopied: the config drive keeps the user data as deployed, whatever the
// caller does with its slice afterwards.
func TestDiskImageUserDataIsCopied(t *testing.T) {
	h := &Host{Name: "h"}
	data := []byte("abc")
	h.DeployImage("https://mirror.lab.sim/image.qcow2", true, data)
	data[0] = 'x'
	h.PowerOn()
	if _, got := h.RunningDiskImage(); string(got) != "abc" {
		t.Fatalf("config drive = %q, want abc", got)
	}
}

// TestLiveISOAfterDiskImage: a live ISO deployed over a disk image boots the ISO: Ironic's
// prepare_instance for it sets the boot device to CD, not disk.
func TestLiveISOAfterDiskImage(t *testing.T) {
	const iso = "https://images.lab.sim/discovery.iso"
	h := &Host{Name: "h"}
	h.DeployImage("https://mirror.lab.sim/image.qcow2", true, nil)
	h.PowerOn()
	h.PowerOff()
	h.InsertMedia(iso, true, OverrideOnce)
	if got := h.PowerOn(); got != iso {
		t.Fatalf("boot: got %q, want the ISO", got)
	}
	if got, _ := h.RunningDiskImage(); got != "" {
		t.Fatalf("RunningDiskImage() = %q while the ISO runs", got)
	}
}

// TestTearDownKeepsTheDisk: a deploy torn down without cleaning (automatedCleaningMode disabled)
// leaves the installed system on the disk: with nothing attached the host boots it again; a live
// ISO attached for the next deploy boots first (the override), and the disk still holds OpenShift
// when the installer reboots the host. Torn down with cleaning, nothing is left to boot.
func TestTearDownKeepsTheDisk(t *testing.T) {
	const iso = "https://images.lab.sim/discovery.iso"
	h := &Host{Name: "h"}
	h.InsertMedia(iso, true, OverrideOnce)
	h.PowerOn()
	h.WriteOS()
	if got := h.PowerOn(); got != "" || !h.RunsDisk() {
		t.Fatalf("reboot after the install: got %q, RunsDisk() = %t; want the disk", got, h.RunsDisk())
	}
	h.TearDown()
	if h.Running() != "" || h.RunsDisk() {
		t.Fatal("the host still runs something after the tear-down")
	}
	if got := h.PowerOn(); got != "" || !h.RunsDisk() {
		t.Fatalf("boot after a tear-down without cleaning: got %q, RunsDisk() = %t; want the installed system", got, h.RunsDisk())
	}
	h.TearDown()
	h.InsertMedia(iso, true, OverrideOnce)
	if got := h.PowerOn(); got != iso {
		t.Fatalf("boot of the next live ISO: got %q, want the ISO", got)
	}
	if got := h.PowerOn(); got != "" || !h.RunsDisk() {
		t.Fatalf("reboot after the next live ISO: got %q, want the installed system (the disk was kept)", got)
	}
	h.Deprovision()
	if got := h.PowerOn(); got != "" || h.RunsDisk() {
		t.Fatalf("boot after a tear-down with cleaning: got %q, RunsDisk() = %t; want nothing", got, h.RunsDisk())
	}
}

// TestDiskWrites: what rewrites the disk counts (deploys, cleaning, the installer), what keeps
// it does not (power cycles, a tear-down without cleaning, virtual media).
func TestDiskWrites(t *testing.T) {
	h := &Host{Name: "h"}
	steps := []struct {
		name    string
		do      func()
		written bool
	}{
		{"live ISO inserted and booted", func() { h.InsertMedia("https://images.lab.sim/d.iso", true, OverrideOnce); h.PowerOn() }, false},
		{"installer writes the disk", h.WriteOS, true},
		{"reboot", func() { h.PowerOff(); h.PowerOn() }, false},
		{"tear-down without cleaning", h.TearDown, false},
		{"installer writes it again (reinstall)", h.WriteOS, true},
		{"cleaning", h.Deprovision, true},
		{"disk image deployed", func() { h.DeployImage("https://images.lab.sim/d.qcow2", true, nil) }, true},
		{"installed into the image's root", h.InstallToExistingRoot, true},
		{"disk wiped", h.WipeDisk, true},
		{"media ejected", h.EjectMedia, false},
	}
	for _, st := range steps {
		before := h.DiskWrites()
		st.do()
		if written := h.DiskWrites() != before; written != st.written {
			t.Errorf("%s: disk written %v, want %v", st.name, written, st.written)
		}
	}
}
