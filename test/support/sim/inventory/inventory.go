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

// Package inventory describes the hosts of the simulated lab: what the bare-metal operator finds
// when it inspects a host and what the assisted-service agent reports when the host boots the
// discovery ISO. Both simulators read the same Host, so a BareMetalHost's status.hardware and its
// Agent's inventory always agree.
package inventory

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NIC is a network interface of a host.
type NIC struct {
	Name string
	MAC  string
	// IPv4 is the interface's address in CIDR notation (for example 192.168.111.20/24).
	IPv4 string
	// IPv6 is the interface's global IPv6 address in CIDR notation (for example
	// fd2e:6f44:5dd8:c956::14/64), "" on an IPv4-only network. The agent reports both families'
	// addresses of an interface (models.Interface's ipv4_addresses and ipv6_addresses), from
	// which assisted-service computes the machine networks and checks that each host belongs to
	// them.
	IPv6      string
	SpeedGbps int
}

// Disk is a block device of a host.
type Disk struct {
	Name      string // for example /dev/sda
	SizeBytes int64
	Type      bmov1alpha1.DiskType
	Model     string
	Vendor    string
	Serial    string
	WWN       string
	HCTL      string
}

// Host is one machine of the lab.
type Host struct {
	// Name identifies the host in the lab (and names its BareMetalHost).
	Name string
	// Hostname is what the host reports (and names its Node).
	Hostname string
	// BMCAddress is the address of its BMC, as in BareMetalHost.spec.bmc.address.
	BMCAddress string
	// BMCUsername and BMCPassword are the credentials its BMC accepts (none: it accepts none).
	BMCUsername, BMCPassword string
	// SystemUUID is the SMBIOS system UUID: assisted-service names the host's Agent after it,
	// and the kubelet reports it in Node.status.nodeInfo.systemUUID.
	SystemUUID   string
	SerialNumber string
	Manufacturer string
	ProductName  string
	CPUArch      string
	CPUModel     string
	CPUCount     int
	CPUMHz       float64
	RAMMebibytes int
	// NICs: the first is the boot (provisioning) NIC.
	NICs  []NIC
	Disks []Disk
	// LegacyBootDiskFirst: in legacy BIOS mode the host boots its disk before its CD.
	LegacyBootDiskFirst bool

	mu sync.Mutex
	fw firmware
	// diskWrites counts what rewrote the disk (DiskWrites).
	diskWrites uint64
}

// BootMAC is the MAC address of the host's boot NIC.
func (h *Host) BootMAC() string {
	if len(h.NICs) == 0 {
		return ""
	}
	return h.NICs[0].MAC
}

// IPv4 is the address (without prefix length) of the host's boot NIC.
func (h *Host) IPv4() string {
	if len(h.NICs) == 0 {
		return ""
	}
	ip, _, _ := strings.Cut(h.NICs[0].IPv4, "/")
	return ip
}

// HardwareDetails is what the bare-metal operator reports in BareMetalHost.status.hardware
// after inspection.
func (h *Host) HardwareDetails() *bmov1alpha1.HardwareDetails {
	d := &bmov1alpha1.HardwareDetails{
		SystemVendor: bmov1alpha1.HardwareSystemVendor{
			Manufacturer: h.Manufacturer,
			ProductName:  h.ProductName,
			SerialNumber: h.SerialNumber,
		},
		RAMMebibytes: h.RAMMebibytes,
		CPU: bmov1alpha1.CPU{
			Arch:           h.CPUArch,
			Model:          h.CPUModel,
			ClockMegahertz: bmov1alpha1.ClockSpeed(h.CPUMHz),
			Count:          h.CPUCount,
		},
		Hostname: h.Hostname,
	}
	// The bare-metal operator lists an interface once per address family it has an address of,
	// IPv4 first, and once when it has none (getNICDetails in metal3-io/baremetal-operator's
	// pkg/provisioner/ironic/hardwaredetails: "if both are set, we store two nics with each ip").
	for i, n := range h.NICs {
		ip4, _, _ := strings.Cut(n.IPv4, "/")
		ip6, _, _ := strings.Cut(n.IPv6, "/")
		if ip4 != "" || ip6 == "" {
			d.NIC = append(d.NIC, bmov1alpha1.NIC{Name: n.Name, MAC: n.MAC, IP: ip4, SpeedGbps: n.SpeedGbps, PXE: i == 0})
		}
		if ip6 != "" {
			d.NIC = append(d.NIC, bmov1alpha1.NIC{Name: n.Name, MAC: n.MAC, IP: ip6, SpeedGbps: n.SpeedGbps, PXE: i == 0})
		}
	}
	for _, s := range h.Disks {
		d.Storage = append(d.Storage, bmov1alpha1.Storage{
			Name: s.Name, Type: s.Type, SizeBytes: bmov1alpha1.Capacity(s.SizeBytes), Rotational: s.Type == bmov1alpha1.HDD,
			Vendor: s.Vendor, Model: s.Model, SerialNumber: s.Serial, WWN: s.WWN, HCTL: s.HCTL,
		})
	}
	return d
}

// AgentInventory is what the assisted-service agent reports in Agent.status.inventory.
func (h *Host) AgentInventory(now metav1.Time) aiv1beta1.HostInventory {
	inv := aiv1beta1.HostInventory{
		ReportTime: &now,
		Hostname:   h.Hostname,
		Memory: aiv1beta1.HostMemory{
			PhysicalBytes: int64(h.RAMMebibytes) * 1024 * 1024,
			UsableBytes:   int64(h.RAMMebibytes) * 1024 * 1024,
		},
		Cpu: aiv1beta1.HostCPU{
			Count: int64(h.CPUCount), ClockMegahertz: int64(h.CPUMHz), ModelName: h.CPUModel, Architecture: h.CPUArch,
		},
		SystemVendor: aiv1beta1.HostSystemVendor{
			SerialNumber: h.SerialNumber, ProductName: h.ProductName, Manufacturer: h.Manufacturer,
		},
		Boot: aiv1beta1.HostBoot{CurrentBootMode: "uefi"},
	}
	for _, n := range h.NICs {
		inv.Interfaces = append(inv.Interfaces, aiv1beta1.HostInterface{
			Name: n.Name, MacAddress: n.MAC, IPV4Addresses: nonEmpty(n.IPv4), IPV6Addresses: nonEmpty(n.IPv6),
			HasCarrier: true, Mtu: 1500, SpeedMbps: int64(n.SpeedGbps) * 1000, Flags: []string{"up", "broadcast", "multicast"},
		})
	}
	for _, s := range h.Disks {
		inv.Disks = append(inv.Disks, aiv1beta1.HostDisk{
			ID: diskID(s), Name: strings.TrimPrefix(s.Name, "/dev/"), Path: s.Name, DriveType: string(s.Type),
			SizeBytes: s.SizeBytes, Vendor: s.Vendor, Model: s.Model, Serial: s.Serial, Wwn: s.WWN, Hctl: s.HCTL,
			ByID:                    diskID(s),
			Bootable:                true,
			InstallationEligibility: aiv1beta1.HostInstallationEligibility{Eligible: true, NotEligibleReasons: []string{}},
		})
	}
	return inv
}

// InstallationDiskID is the disk assisted-service picks to install on: the first one.
func (h *Host) InstallationDiskID() string {
	if len(h.Disks) == 0 {
		return ""
	}
	return diskID(h.Disks[0])
}

// NodeAddresses are the addresses the kubelet reports: its address in each of the cluster's
// machine networks, in their order (the primary family first, as OpenShift's node IP selection
// takes the node IPs of a dual-stack node from its machine networks), or its IPv4 address when
// none is given or none holds it.
func (h *Host) NodeAddresses(machineNetworks ...string) []corev1.NodeAddress {
	addrs := []corev1.NodeAddress{}
	for _, m := range machineNetworks {
		p, err := netip.ParsePrefix(m)
		if err != nil {
			continue
		}
		for _, n := range h.NICs {
			for _, a := range []string{n.IPv4, n.IPv6} {
				if ap, err := netip.ParsePrefix(a); err == nil && p.Contains(ap.Addr()) {
					addrs = append(addrs, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: ap.Addr().String()})
				}
			}
		}
	}
	if ip := h.IPv4(); len(addrs) == 0 && ip != "" {
		addrs = append(addrs, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: ip})
	}
	return append(addrs, corev1.NodeAddress{Type: corev1.NodeHostName, Address: h.Hostname})
}

// BareMetalHost returns the BareMetalHost a lab administrator would create for the host: its BMC
// address, boot MAC and credentials Secret name, online, in namespace.
func (h *Host) BareMetalHost(namespace, credentialsName string) *bmov1alpha1.BareMetalHost {
	return &bmov1alpha1.BareMetalHost{
		ObjectMeta: metav1.ObjectMeta{Name: h.Name, Namespace: namespace},
		Spec: bmov1alpha1.BareMetalHostSpec{
			Online:         true,
			BootMACAddress: h.BootMAC(),
			BootMode:       bmov1alpha1.UEFI,
			BMC:            bmov1alpha1.BMCDetails{Address: h.BMCAddress, CredentialsName: credentialsName},
		},
	}
}

func diskID(d Disk) string {
	if d.WWN != "" {
		return "/dev/disk/by-id/wwn-" + d.WWN
	}
	return d.Name
}

func nonEmpty(s string) []string {
	if s == "" {
		return []string{}
	}
	return []string{s}
}

// Inventory is the set of hosts of a lab. It is safe for concurrent use.
type Inventory struct {
	mu    sync.RWMutex
	hosts []*Host
}

// New returns an Inventory of hosts.
func New(hosts ...*Host) *Inventory {
	inv := &Inventory{}
	for _, h := range hosts {
		inv.Add(h)
	}
	return inv
}

// Add adds a host.
func (i *Inventory) Add(h *Host) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.hosts = append(i.hosts, h)
}

// AddNew adds hosts unless one of them is a host the inventory has, or shares its name, BMC
// address, system UUID or a MAC with one (or with another of hosts): no two servers answer at one
// BMC address or have one MAC. Generate gives a prefix the same hosts each time, so a lab that
// generates from a prefix twice gets this error instead of two BareMetalHosts driving one server.
// Nothing is added then.
func (i *Inventory) AddNew(hosts ...*Host) error {
	i.mu.Lock()
	defer i.mu.Unlock()
	seen := map[string]string{}
	key := func(h *Host, what, v string) error {
		if v == "" {
			return nil
		}
		k := what + " " + v
		if other, ok := seen[k]; ok {
			return fmt.Errorf("host %s has the %s of host %s: give each set of hosts a prefix of its own", h.Name, k, other)
		}
		seen[k] = h.Name
		return nil
	}
	for _, h := range append(slices.Clone(i.hosts), hosts...) {
		if err := key(h, "name", h.Name); err != nil {
			return err
		}
		if err := key(h, "BMC address", h.BMCAddress); err != nil {
			return err
		}
		if err := key(h, "system UUID", strings.ToLower(h.SystemUUID)); err != nil {
			return err
		}
		for _, n := range h.NICs {
			if err := key(h, "MAC", strings.ToLower(n.MAC)); err != nil {
				return err
			}
		}
	}
	i.hosts = append(i.hosts, hosts...)
	return nil
}

// Hosts returns the hosts, in the order they were added.
func (i *Inventory) Hosts() []*Host {
	i.mu.RLock()
	defer i.mu.RUnlock()
	return append([]*Host(nil), i.hosts...)
}

func (i *Inventory) find(match func(*Host) bool) *Host {
	i.mu.RLock()
	defer i.mu.RUnlock()
	for _, h := range i.hosts {
		if match(h) {
			return h
		}
	}
	return nil
}

// ByBMCAddress returns the host whose BMC answers at addr, or nil.
func (i *Inventory) ByBMCAddress(addr string) *Host {
	return i.find(func(h *Host) bool { return addr != "" && h.BMCAddress == addr })
}

// BySystemUUID returns the host with that system UUID, or nil.
func (i *Inventory) BySystemUUID(uuid string) *Host {
	return i.find(func(h *Host) bool { return uuid != "" && strings.EqualFold(h.SystemUUID, uuid) })
}

// ByMAC returns the host with a NIC of that MAC address, or nil.
func (i *Inventory) ByMAC(mac string) *Host {
	return i.find(func(h *Host) bool {
		for _, n := range h.NICs {
			if mac != "" && strings.EqualFold(n.MAC, mac) {
				return true
			}
		}
		return false
	})
}

// IPv6Subnet is the IPv6 network of the lab's hosts: each generated host has an address in it
// beside its IPv4 one, as on a dual-stack lab network (dev-scripts' IP_STACK=v4v6), so that the
// same hosts install IPv4, IPv6 and dual-stack clusters.
const IPv6Subnet = "fd2e:6f44:5dd8:c956::/64"

// GenerateOptions shape the hosts Generate makes.
type GenerateOptions struct {
	// Subnet is the first three octets of the hosts' IPv4 network (default 192.168.111).
	Subnet string
	// FirstIP is the last octet of the first host's address (default 20).
	FirstIP int
	// CPUCount, RAMMebibytes and DiskBytes default to what an OpenShift control-plane node needs
	// (8 cores, 32 GiB, 120 GB).
	CPUCount     int
	RAMMebibytes int
	DiskBytes    int64
}

// hostIP returns the n-th address (1-254) of subnet (the first three octets); past 254 it goes
// on in the next /24s (a fleet of hundreds of hosts).
func hostIP(subnet string, n int) string {
	i := strings.LastIndexByte(subnet, '.')
	c, err := strconv.Atoi(subnet[i+1:])
	if n <= 254 || i < 0 || err != nil {
		return fmt.Sprintf("%s.%d", subnet, n)
	}
	return fmt.Sprintf("%s.%d.%d", subnet[:i], c+(n-1)/254, (n-1)%254+1)
}

// hostIPv6 returns the n-th address of IPv6Subnet.
func hostIPv6(n int) string {
	return fmt.Sprintf("%s%x", strings.TrimSuffix(IPv6Subnet, "/64"), n)
}

// Generate makes n hosts named <prefix>-<i>, with deterministic MACs, system UUIDs, serial numbers
// and addresses (the same prefix always gives the same hosts; different prefixes differ).
func Generate(prefix string, n int, o GenerateOptions) []*Host {
	if o.Subnet == "" {
		o.Subnet = "192.168.111"
	}
	if o.FirstIP == 0 {
		o.FirstIP = 20
	}
	if o.CPUCount == 0 {
		o.CPUCount = 8
	}
	if o.RAMMebibytes == 0 {
		o.RAMMebibytes = 32 * 1024
	}
	if o.DiskBytes == 0 {
		o.DiskBytes = 120_000_000_000
	}
	seed := uint32(0)
	for _, c := range prefix {
		seed = seed*31 + uint32(c)
	}
	hosts := make([]*Host, 0, n)
	for i := range n {
		name := fmt.Sprintf("%s-%d", prefix, i)
		a, b := byte(seed>>8), byte(seed)
		hosts = append(hosts, &Host{
			Name:         name,
			Hostname:     name,
			BMCAddress:   fmt.Sprintf("redfish-virtualmedia://192.168.222.1:8000/redfish/v1/Systems/%s", name),
			SystemUUID:   fmt.Sprintf("%08x-%04x-4000-8000-%012x", seed, i, i),
			SerialNumber: fmt.Sprintf("SIM%04X%04d", seed&0xffff, i),
			Manufacturer: "Simulated",
			ProductName:  "Lab Server",
			CPUArch:      "x86_64",
			CPUModel:     "Simulated CPU @ 2.40GHz",
			CPUCount:     o.CPUCount,
			CPUMHz:       2400,
			RAMMebibytes: o.RAMMebibytes,
			NICs: []NIC{{
				Name: "enp1s0", MAC: fmt.Sprintf("52:54:%02x:%02x:%02x:%02x", a, b, byte(i>>8), byte(i)),
				IPv4: hostIP(o.Subnet, o.FirstIP+i) + "/24", IPv6: hostIPv6(o.FirstIP+i) + "/64", SpeedGbps: 10,
			}},
			Disks: []Disk{{
				Name: "/dev/sda", SizeBytes: o.DiskBytes, Type: bmov1alpha1.SSD, Model: "SimDisk", Vendor: "Simulated",
				Serial: fmt.Sprintf("DISK%04X%04d", seed&0xffff, i), WWN: fmt.Sprintf("0x5000c500%04x%04x", seed&0xffff, i), HCTL: "0:0:0:0",
			}},
		})
	}
	return hosts
}

// Boot is a host running what it booted: a live ISO (ISOURL), or a disk image that Ironic
// deployed to its disk (DiskImageURL) with a config drive holding UserData.
type Boot struct {
	Host *Host
	// ISOURL is the URL of the live ISO the host booted ("" when it booted its disk).
	ISOURL string
	// DiskImageURL is the URL of the disk image (qcow2, raw) the host booted from its disk, ""
	// for a live ISO.
	DiskImageURL string
	// UserData is what the config drive (config-2) deployed with the disk image holds: the
	// BareMetalHost's user data (an Ignition config for RHCOS), empty when it has none.
	UserData []byte
}

// HostEvents is told what happens to a host's power and disks; the assisted-service simulator
// implements it (a host that boots a discovery ISO, or a disk image whose Ignition config starts
// the discovery agent, registers an Agent).
type HostEvents interface {
	// Booted: the host runs the live ISO at b.ISOURL, or the disk image b.DiskImageURL with its
	// config drive b.UserData. Called again while it keeps running it: implementations are
	// idempotent.
	Booted(ctx context.Context, b Boot) error
	// PoweredOff: the host is off.
	PoweredOff(ctx context.Context, h *Host) error
	// Deprovisioned: the host's disks were cleaned; whatever was installed on them is gone.
	Deprovisioned(ctx context.Context, h *Host) error
}
