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

// What a host's BMC and boot firmware keep across power cycles, and what the host boots when it
// powers on. Followed:
//   - Ironic's redfish virtual-media boot (drivers/modules/redfish/boot.py prepare_instance): it
//     ejects every medium, inserts the ISO as a CD and sets the boot device to CD, persistent
//     (BootSourceOverrideEnabled=Continuous). BMO passes driver_info.force_persistent_boot_device
//     from LIVE_ISO_FORCE_PERSISTENT_BOOT_DEVICE (BMO pkg/provisioner/ironic, "Default" when
//     unset); "Never" makes it a one-time boot (conductor/utils.py node_set_boot_device).
//     OpenShift's cluster-baremetal-operator runs BMO with "Never".
//   - A live ISO stays inserted after the deploy: Ironic ejects media only in prepare_instance
//     and clean_up_instance (tear-down), and has no detach call (metal3-docs bmh_live_iso.md).
//   - The assisted-installer, after writing the disk, runs efibootmgr -c on UEFI hosts, which puts
//     the installed system first in BootOrder, and skips BIOS hosts (ops.SetBootOrder).
//   - A legacy BIOS boots the first device of its own order that is bootable: an empty disk is
//     passed over.
//   - Ironic's direct deploy of a disk image (qcow2, raw): the ironic-python-agent writes the image
//     to the root disk and, after it, a config drive partition labelled config-2 holding the user
//     data (ironic/conductor/configdrive_utils.py builds it with "-V config-2"); then
//     prepare_instance (redfish/boot.py RedfishVirtualMediaBoot.prepare_instance) ejects every
//     medium and, for a whole-disk image, sets the boot device to DISK, persistent. The host then
//     boots its disk whatever its boot mode and its own boot order. BMO builds the config drive
//     for every image but a live ISO (pkg/provisioner/ironic getConfigDrive).
//   - The assisted-installer installing to the existing root of a disk image it booted
//     (src/ops WriteImageToExistingRoot: ostree container image deploy into a new stateroot) runs
//     no efibootmgr (installer.go InstallNode calls SetBootOrder only when CoreosImage is empty):
//     the boot order stays as Ironic set it.

// BootOverride is a BMC's boot-source override to the virtual CD.
type BootOverride string

const (
	// NoOverride lets the firmware's own boot order apply.
	NoOverride BootOverride = ""
	// OverrideOnce boots the CD at the next power-on only (BootSourceOverrideEnabled=Once).
	OverrideOnce BootOverride = "Once"
	// OverrideContinuous boots the CD at every power-on (BootSourceOverrideEnabled=Continuous).
	OverrideContinuous BootOverride = "Continuous"
)

// firmware is the boot state of a host; Host's methods read and change it under Host.mu.
type firmware struct {
	media        string // URL of the ISO in the virtual CD, "" when empty
	override     BootOverride
	uefi         bool
	diskHasOS    bool // OpenShift, installed by the assisted-installer, is on the disk
	efiDiskFirst bool // BootOrder starts with the installed system's entry
	// diskImage is the URL of the disk image Ironic deployed to the disk ("" when none), and
	// configDrive the user data of the config drive it wrote beside it. The image boots (its
	// Ignition reading the config drive, on images whose platform does) until OpenShift is
	// installed over it (diskHasOS).
	diskImage   string
	configDrive []byte
	on          bool
	running     string // URL of the ISO the host runs, "" when it runs its disk or is off
}

// InsertMedia is Ironic preparing a live-ISO deploy: every medium ejected, isoURL inserted as a
// CD, the boot mode set, and a boot override to the CD, once or continuous.
func (h *Host) InsertMedia(isoURL string, uefi bool, override BootOverride) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.fw.media, h.fw.uefi, h.fw.override = isoURL, uefi, override
}

// DeployImage is Ironic's direct deploy of a disk image, then its prepare_instance: imageURL
// written to the disk with a config drive holding userData (whatever the disk held is gone),
// every medium ejected, the boot override cleared and the disk set to boot, persistent, in the
// boot mode asked: with nothing in the virtual CD and no override, the disk boots, UEFI or
// legacy BIOS alike. The host is left off: PowerOn boots the image.
func (h *Host) DeployImage(imageURL string, uefi bool, userData []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.fw = firmware{uefi: uefi, diskImage: imageURL, configDrive: append([]byte(nil), userData...)}
	h.diskWrites++
}

// EjectMedia empties the virtual CD and clears the override.
func (h *Host) EjectMedia() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.fw.media, h.fw.override = "", NoOverride
}

// WipeDisk is cleaning: nothing bootable is left on the disk.
func (h *Host) WipeDisk() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.fw.diskHasOS, h.fw.efiDiskFirst = false, false
	h.fw.diskImage, h.fw.configDrive = "", nil
	h.diskWrites++
}

// WriteOS is the installer writing the disk; on a UEFI host it also puts the installed system
// first in the boot order (efibootmgr -c), on a BIOS host it cannot.
func (h *Host) WriteOS() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.fw.diskHasOS = true
	h.fw.efiDiskFirst = h.fw.uefi
	h.diskWrites++
}

// InstallToExistingRoot is the installer writing OpenShift into the root filesystem of the disk
// image the host booted (a new ostree stateroot, which replaces the discovery one at its first
// boot): the disk now boots OpenShift; the boot order is left as it was (no efibootmgr).
func (h *Host) InstallToExistingRoot() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.fw.diskHasOS = true
	h.diskWrites++
}

// TearDown is Ironic tearing a deploy down without cleaning (the node's automated_clean false:
// BMO's automatedCleaningMode disabled): the host powered off, the CD ejected and the override
// cleared (ironic/conductor/deployments.py do_node_tear_down: power off, then the boot
// interface's clean_up_instance), and the disk left as it is: whatever was written or installed
// on it boots again at the next power-on unless something else is booted first.
func (h *Host) TearDown() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.fw.media, h.fw.override = "", NoOverride
	h.fw.on, h.fw.running = false, ""
}

// Deprovision is Ironic tearing a deploy down with cleaning (automated_clean true: BMO's
// automatedCleaningMode metadata, its default): the CD ejected, the override cleared, the disk
// (image, config drive, installed system) wiped by the metadata erase of automated cleaning, the
// host off.
func (h *Host) Deprovision() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.fw = firmware{uefi: h.fw.uefi}
	h.diskWrites++
}

// DiskWrites counts the times the host's disk was rewritten: a disk image deployed, cleaning
// (WipeDisk, Deprovision), or the installer writing OpenShift (WriteOS, InstallToExistingRoot).
// What a system kept on the disk (an etcd member's data dir under /var/lib/etcd) is gone once it
// changed: the assisted-installer wipes the installation disk (cleanupInstallDevice: LVM and
// RAID metadata removed, wipefs) and coreos-installer writes the whole image over it
// (writeImageToDisk), openshift/assisted-installer src/installer/installer.go InstallNode; an
// installation into an existing root deploys a new ostree stateroot, whose /var is its own.
// TearDown (cleaning disabled) and power cycles leave it as it is.
func (h *Host) DiskWrites() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.diskWrites
}

// PowerOff turns the host off.
func (h *Host) PowerOff() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.fw.on, h.fw.running = false, ""
}

// Running is the URL of the ISO the host runs, or "" when it is off or runs its disk.
func (h *Host) Running() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.fw.running
}

// RunsDisk tells whether the host is on and runs what is on its disk.
func (h *Host) RunsDisk() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.fw.on && h.fw.running == "" && h.fw.diskHasOS
}

// RunningDiskImage is the disk image the host runs and the user data of its config drive: the
// image Ironic deployed, booted from the disk and not installed over. "" and nil when the host is
// off, runs an ISO, runs an installed system or has no image deployed.
func (h *Host) RunningDiskImage() (imageURL string, userData []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	fw := &h.fw
	if !fw.on || fw.running != "" || fw.diskHasOS || fw.diskImage == "" {
		return "", nil
	}
	return fw.diskImage, append([]byte(nil), fw.configDrive...)
}

// SetLegacyBootDiskFirst changes the BIOS boot order (a person in the BIOS setup).
func (h *Host) SetLegacyBootDiskFirst(diskFirst bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.LegacyBootDiskFirst = diskFirst
}

// PowerOn powers the host on (or resets it) and returns what it boots: the ISO in its virtual CD
// (its URL), or its disk (""); a one-time override is used up.
func (h *Host) PowerOn() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	fw := &h.fw
	fw.on, fw.running = true, fw.media
	switch {
	case fw.media == "":
	case fw.override == OverrideContinuous:
	case fw.override == OverrideOnce:
		fw.override = NoOverride
	case !fw.diskHasOS:
	case fw.uefi && fw.efiDiskFirst, !fw.uefi && h.LegacyBootDiskFirst:
		fw.running = ""
	}
	return fw.running
}
