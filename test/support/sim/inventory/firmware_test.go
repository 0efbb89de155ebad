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
