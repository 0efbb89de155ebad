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

package controllers

import (
	"context"
	"fmt"
	"slices"
	"strings"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	capm3v1beta2 "github.com/metal3-io/cluster-api-provider-metal3/api/v1beta2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
)

const (
	// metal3HostAnnotation is the annotation, `<namespace>/<name>`, through which CAPM3 names the
	// BareMetalHost of a Metal3Machine (baremetal.HostAnnotation in CAPM3).
	metal3HostAnnotation = "metal3.io/BareMetalHost"
)

// isMetal3Machine tells whether the Machine's infrastructure is a CAPM3 Metal3Machine.
func isMetal3Machine(machine *clusterv1.Machine) bool {
	ref := machine.Spec.InfrastructureRef
	return ref.Kind == "Metal3Machine" && ref.APIGroup == capm3v1beta2.GroupVersion.Group
}

// metal3MachineFor returns the Machine's Metal3Machine, or nil while it does not exist.
func metal3MachineFor(ctx context.Context, c client.Reader, machine *clusterv1.Machine) (*capm3v1beta2.Metal3Machine, error) {
	m3m := &capm3v1beta2.Metal3Machine{}
	key := client.ObjectKey{Namespace: machine.Namespace, Name: machine.Spec.InfrastructureRef.Name}
	if err := c.Get(ctx, key, m3m); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("getting Metal3Machine %s: %w", key, err)
	}
	return m3m, nil
}

// bareMetalHostFor returns the BareMetalHost CAPM3 associated with m3m, or nil while there is none.
// The annotation is writable by whoever may edit the Metal3Machine, and CAPM3 only ever associates
// a host of the Metal3Machine's own namespace (it lists hosts in m3m.Namespace), so a name in
// another namespace is refused without reading it: a problem to report, not a host.
func bareMetalHostFor(ctx context.Context, c client.Reader, m3m *capm3v1beta2.Metal3Machine) (*bmov1alpha1.BareMetalHost, string, error) {
	value := m3m.Annotations[metal3HostAnnotation]
	if value == "" {
		return nil, "", nil
	}
	ns, name, ok := strings.Cut(value, "/")
	if !ok || name == "" {
		return nil, fmt.Sprintf("The %s annotation of Metal3Machine %s is not <namespace>/<name>: remove it, and CAPM3 associates a host again",
			metal3HostAnnotation, m3m.Name), nil
	}
	if ns != m3m.Namespace {
		return nil, fmt.Sprintf("The %s annotation of Metal3Machine %s names a BareMetalHost in another namespace, which is never read: "+
			"CAPM3 associates only hosts of the Metal3Machine's namespace %s; remove the annotation, and CAPM3 associates one of them",
			metal3HostAnnotation, m3m.Name, m3m.Namespace), nil
	}
	bmh := &bmov1alpha1.BareMetalHost{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, bmh); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, "", nil
		}
		return nil, "", fmt.Errorf("getting BareMetalHost %s: %w", value, err)
	}
	return bmh, "", nil
}

// hostTaken says why bmh, which m3m's metal3.io/BareMetalHost annotation names, is not m3m's
// host, or "" when it is: its consumerRef names another object. CAPM3 up to v1.13 claims a host
// it chose from its cache with a merge patch that does not check what it read, so two
// Metal3Machines associated at once can both choose the same free host, and the last claim wins
// (metal3-io/cluster-api-provider-metal3#1004, fixed by #3432): m3m keeps the annotation while
// the host provisions for the other one, and this Machine's host would never register. Deleting
// the Machine is safe (CAPM3 leaves a host that another consumer claims alone), and the
// Machine's owner creates one that chooses a free host.
func hostTaken(bmh *bmov1alpha1.BareMetalHost, m3m *capm3v1beta2.Metal3Machine) string {
	ref := bmh.Spec.ConsumerRef
	if ref == nil || (ref.Kind == "Metal3Machine" && ref.Namespace == m3m.Namespace && ref.Name == m3m.Name) {
		return ""
	}
	return fmt.Sprintf("BareMetalHost %s, which CAPM3 associated with Metal3Machine %s (its %s annotation), is claimed by %s %s/%s: "+
		"CAPM3 claimed it twice (metal3-io/cluster-api-provider-metal3#1004; upgrade CAPM3 to a release with #3432). "+
		"Delete this Machine: its owner creates one that claims a free host, and the other consumer keeps this one",
		bmh.Name, m3m.Name, metal3HostAnnotation, ref.Kind, ref.Namespace, ref.Name)
}

// hasISO tells whether m3m boots exactly the live ISO at isoURL.
func hasISO(m3m *capm3v1beta2.Metal3Machine, isoURL string) bool {
	return m3m.Spec.Image.URL == isoURL && m3m.Spec.Image.DiskFormat == capm3v1beta2.LiveIsoDiskFormat
}

// bootsDiskImage tells whether m3m's host boots discovery from an RHCOS disk image that its
// Metal3MachineTemplate names (the image-based flow): an image of any other format than live-iso
// (CAPM3's enum: raw, qcow2, vdi, vmdk; empty lets Ironic detect it). Ironic's direct deploy
// writes it to the root disk with a config drive holding the bootstrap data, and boots the disk
// (persistent): any BMC driver and boot mode works. A live-iso image, or none, is the discovery
// ISO, which reconcileMetal3Machine sets.
func bootsDiskImage(m3m *capm3v1beta2.Metal3Machine) bool {
	return m3m.Spec.Image.URL != "" && m3m.Spec.Image.DiskFormat != capm3v1beta2.LiveIsoDiskFormat
}

// liveISODrivers are BMO's BMC drivers that can boot a live ISO whole: the virtual-media ones
// (redfish-virtualmedia, idrac-virtualmedia and its alias ilo5-virtualmedia, in BMO's
// pkg/hardwareutils/bmc) attach it as a virtual CD, and redfish-uefihttp boots it over UEFI HTTP
// (Ironic's RedfishHttpsBoot implements ramdisk boot). Every other driver boots a live ISO over
// iPXE sanboot, which reaches only its kernel and initramfs (Ironic's ramdisk-boot guide,
// metal3-docs live-iso.md): the discovery ISO's root filesystem and ignition are in the ISO.
var liveISODrivers = []string{"redfish-virtualmedia", "idrac-virtualmedia", "ilo5-virtualmedia", "redfish-uefihttp"}

// bmcDriver is the BMC driver of a BareMetalHost's address: the scheme without its transport
// ("redfish-virtualmedia+https://..." is redfish-virtualmedia); an address without a scheme is
// IPMI's, as BMO reads it.
func bmcDriver(address string) string {
	scheme, _, ok := strings.Cut(address, "://")
	if !ok {
		return "ipmi"
	}
	driver, _, _ := strings.Cut(scheme, "+")
	return strings.ToLower(driver)
}

// liveISOProblem says why bmh cannot install from the discovery ISO, or "" when it can.
//   - Its BMC driver must boot the ISO whole (liveISODrivers).
//   - In legacy BIOS mode the host must boot its disk before the CD, which only its owner knows
//     (LegacyBootDiskFirstAnnotation): the ISO stays attached after the install (Ironic's ramdisk
//     deploy ejects media only when the host is torn down; metal3-docs bmh_live_iso.md: "no
//     detachment API"), and the installer puts the installed system first in the boot order on
//     UEFI only (assisted-installer ops.SetBootOrder skips BIOS systems). A host that boots the
//     ISO again waits in installing-pending-user-action.
func liveISOProblem(bmh *bmov1alpha1.BareMetalHost) string {
	if driver := bmcDriver(bmh.Spec.BMC.Address); !slices.Contains(liveISODrivers, driver) {
		return fmt.Sprintf("BareMetalHost %s has BMC driver %s, which cannot boot the discovery ISO: a live ISO boots whole only as virtual media "+
			"(redfish-virtualmedia, idrac-virtualmedia, ilo5-virtualmedia) or over UEFI HTTP (redfish-uefihttp); over iPXE only its kernel and initramfs are reached. "+
			"Give the host's BMC one of those addresses, or keep the host out of the Metal3MachineTemplate's hostSelector, then delete the Machine", bmh.Name, driver)
	}
	if bmh.Spec.BootMode == bmov1alpha1.Legacy && bmh.Annotations[bootstrapv1.LegacyBootDiskFirstAnnotation] != "true" {
		return fmt.Sprintf("BareMetalHost %s boots in legacy BIOS mode: after the install the discovery ISO is still attached and the installer sets the boot order on UEFI hosts only, "+
			"so the host would boot the ISO again. Set the host's spec.bootMode to UEFI, or, if its BIOS boots the disk before the CD, annotate it with %s=true",
			bmh.Name, bootstrapv1.LegacyBootDiskFirstAnnotation)
	}
	return ""
}

// hostMACs are the MAC addresses that identify bmh's host, and what they are: its boot MAC when
// it has one; otherwise the NICs that inspection found (BMO requires a boot MAC only for drivers
// that need one and for hosts it does not inspect, so a virtual-media host may have none).
func hostMACs(bmh *bmov1alpha1.BareMetalHost) ([]string, string) {
	if bmh.Spec.BootMACAddress != "" {
		return []string{bmh.Spec.BootMACAddress}, "boot MAC " + bmh.Spec.BootMACAddress
	}
	if bmh.Status.HardwareDetails == nil || len(bmh.Status.HardwareDetails.NIC) == 0 {
		return nil, ""
	}
	macs := make([]string, 0, len(bmh.Status.HardwareDetails.NIC))
	for _, nic := range bmh.Status.HardwareDetails.NIC {
		if nic.MAC != "" {
			macs = append(macs, nic.MAC)
		}
	}
	return macs, "a MAC that inspection found on BareMetalHost " + bmh.Name
}
