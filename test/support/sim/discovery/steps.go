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

package discovery

// The discovery agent's replies to the steps assisted-service sends it, read from
// openshift/assisted-service at 780deffb6a35: internal/host/hostcommands/*_cmd.go build each
// step's arguments (the request, JSON, in Args[0]); internal/bminventory/inventory.go
// V2PostStepReply decodes each reply's Output as the step type's response model (filterReply),
// and subsystem/utils_test.go posts the same replies (generateHWPostStepReply,
// generateNTPPostStepReply, generateDomainNameResolutionReply, generateFAPostStepReply,
// generateDiskSpeedChekResponse, generateContainerImageAvailabilityPostStepReply,
// generateConnectivityCheckPostStepReply). The answers come from the host's hardware
// (inventory.Host) and the lab's network, which the agent probes as the real one does with
// nmap, ping, arping, chronyc, dig and fio: another lab host answers when it is on.

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"strings"

	"github.com/go-openapi/strfmt"
	"github.com/openshift/assisted-service/models"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/inventory"
)

// Resolver is the name server the lab's hosts use: the IPv4 and IPv6 addresses of a name, none
// when it does not resolve.
type Resolver func(name string) (ipv4, ipv6 []string)

// LabDNS is the lab's name server as an administrator sets it up for assisted installations
// (assisted-service's domain-resolution validations, internal/host/validator.go
// isAPIDomainNameResolvedCorrectly and isDNSWildcardNotConfigured): api.<cluster>.<domain>,
// api-int.<cluster>.<domain> and *.apps.<cluster>.<domain> of every cluster resolve to the
// lab's load balancer (LoadBalancerIPv4, LoadBalancerIPv6), no wildcard answers for the
// validateNoWildcardDNS probe, and any other name resolves to the lab's gateway (registries).
func LabDNS(name string) (ipv4, ipv6 []string) {
	name = strings.TrimSuffix(name, ".")
	labels := strings.Split(name, ".")
	switch {
	case labels[0] == "validateNoWildcardDNS":
		return nil, nil
	case labels[0] == "api", labels[0] == "api-int", len(labels) > 2 && labels[1] == "apps":
		return []string{LoadBalancerIPv4}, []string{LoadBalancerIPv6}
	}
	return []string{Gateway(LoadBalancerIPv4 + "/24")}, nil
}

// The lab's load balancer, in front of every cluster's API and ingress (the user-managed
// networking of multi-node clusters without VIPs points the names at it).
const (
	LoadBalancerIPv4 = "192.168.111.5"
	LoadBalancerIPv6 = "fd2e:6f44:5dd8:c956::5"
)

// Gateway is the first address of a network (the lab's router), "" for an invalid prefix.
func Gateway(prefix string) string {
	p, err := netip.ParsePrefix(prefix)
	if err != nil {
		return ""
	}
	return p.Masked().Addr().Next().String()
}

// network is what the agent finds around its host: the lab's other hosts and name server.
type network struct {
	inventory *inventory.Inventory
	dns       Resolver
}

// up tells whether a lab host holds addr and is on (it answers ping and ARP).
func (n network) up(addr netip.Addr) bool {
	for _, h := range n.inventory.Hosts() {
		if h.Running() == "" && !h.RunsDisk() {
			if img, _ := h.RunningDiskImage(); img == "" {
				continue
			}
		}
		for _, nic := range h.NICs {
			for _, a := range []string{nic.IPv4, nic.IPv6} {
				if p, err := netip.ParsePrefix(a); err == nil && p.Addr() == addr {
					return true
				}
			}
		}
	}
	return false
}

// hostInventory is the inventory step's reply: the host's hardware as the agent reports it
// (inventory.Host.AgentInventory, in the REST API's model), with a default route through each
// network's gateway (the validator's has-default-route). failMemory reports 1 GiB of memory,
// less than any role needs (has-memory-for-role fails).
func hostInventory(h *inventory.Host, now metav1.Time, failMemory bool) *models.Inventory {
	ai := h.AgentInventory(now)
	inv := &models.Inventory{
		Hostname:     ai.Hostname,
		BmcAddress:   "0.0.0.0",
		BmcV6address: "::/0",
		Boot:         &models.Boot{CurrentBootMode: ai.Boot.CurrentBootMode},
		CPU: &models.CPU{Architecture: ai.Cpu.Architecture, Count: ai.Cpu.Count, Frequency: float64(ai.Cpu.ClockMegahertz),
			ModelName: ai.Cpu.ModelName, Flags: []string{"fpu", "vme", "de", "pse", "tsc", "msr", "pae", "mce", "vmx", "sse4_2", "avx2"}},
		Memory: &models.Memory{PhysicalBytes: ai.Memory.PhysicalBytes, UsableBytes: ai.Memory.UsableBytes,
			PhysicalBytesMethod: models.MemoryMethodDmidecode},
		SystemVendor: &models.SystemVendor{Manufacturer: ai.SystemVendor.Manufacturer, ProductName: ai.SystemVendor.ProductName,
			SerialNumber: ai.SystemVendor.SerialNumber},
		TpmVersion: models.InventoryTpmVersionNr20,
		Disks:      []*models.Disk{},
		Interfaces: []*models.Interface{},
		Routes:     []*models.Route{},
		Gpus:       []*models.Gpu{},
	}
	if failMemory {
		inv.Memory.PhysicalBytes, inv.Memory.UsableBytes = 1<<30, 1<<30
	}
	for _, i := range ai.Interfaces {
		inv.Interfaces = append(inv.Interfaces, &models.Interface{Name: i.Name, MacAddress: i.MacAddress, IPV4Addresses: i.IPV4Addresses,
			IPV6Addresses: i.IPV6Addresses, HasCarrier: i.HasCarrier, Mtu: i.Mtu, SpeedMbps: i.SpeedMbps, Flags: i.Flags,
			Type: "physical", Vendor: "0x1af4", Product: "0x0001"})
		for _, a := range i.IPV4Addresses {
			inv.Routes = append(inv.Routes, &models.Route{Family: 2, Interface: i.Name, Destination: "0.0.0.0", Gateway: Gateway(a), Metric: 100})
		}
		for _, a := range i.IPV6Addresses {
			inv.Routes = append(inv.Routes, &models.Route{Family: 10, Interface: i.Name, Destination: "::", Gateway: Gateway(a), Metric: 100})
		}
	}
	for _, d := range ai.Disks {
		inv.Disks = append(inv.Disks, &models.Disk{ID: d.ID, ByID: d.ByID, Name: d.Name, Path: d.Path, DriveType: models.DriveType(d.DriveType),
			SizeBytes: d.SizeBytes, Vendor: d.Vendor, Model: d.Model, Serial: d.Serial, Wwn: d.Wwn, Hctl: d.Hctl, Bootable: d.Bootable,
			InstallationEligibility: models.DiskInstallationEligibility{Eligible: d.InstallationEligibility.Eligible,
				NotEligibleReasons: d.InstallationEligibility.NotEligibleReasons}})
	}
	return inv
}

// reply answers a step other than install, with its output (JSON) or an error.
func (n network) reply(h *inventory.Host, step *models.Step, now metav1.Time, failMemory bool) (any, error) {
	arg := ""
	if len(step.Args) > 0 {
		arg = step.Args[0]
	}
	decode := func(v any) error {
		if err := json.Unmarshal([]byte(arg), v); err != nil {
			return fmt.Errorf("the %s step's request %q: %w", step.StepType, arg, err)
		}
		return nil
	}
	switch step.StepType {
	case models.StepTypeInventory:
		return hostInventory(h, now, failMemory), nil
	case models.StepTypeNtpSynchronizer:
		req := models.NtpSynchronizationRequest{}
		if err := decode(&req); err != nil {
			return nil, err
		}
		source := "ntp.lab"
		if req.NtpSource != nil && *req.NtpSource != "" {
			source = strings.Split(*req.NtpSource, ",")[0]
		}
		return models.NtpSynchronizationResponse{NtpSources: []*models.NtpSource{{SourceName: source, SourceState: models.SourceStateSynced}}}, nil
	case models.StepTypeDomainResolution:
		req := models.DomainResolutionRequest{}
		if err := decode(&req); err != nil {
			return nil, err
		}
		out := models.DomainResolutionResponse{Resolutions: []*models.DomainResolutionResponseDomain{}}
		for _, d := range req.Domains {
			name := ""
			if d.DomainName != nil {
				name = *d.DomainName
			}
			v4, v6 := n.dns(name)
			r := &models.DomainResolutionResponseDomain{DomainName: d.DomainName, IPV4Addresses: []strfmt.IPv4{}, IPV6Addresses: []strfmt.IPv6{}}
			for _, a := range v4 {
				r.IPV4Addresses = append(r.IPV4Addresses, strfmt.IPv4(a))
			}
			for _, a := range v6 {
				r.IPV6Addresses = append(r.IPV6Addresses, strfmt.IPv6(a))
			}
			out.Resolutions = append(out.Resolutions, r)
		}
		return out, nil
	case models.StepTypeFreeNetworkAddresses:
		req := models.FreeAddressesRequest{}
		if err := decode(&req); err != nil {
			return nil, err
		}
		return n.freeAddresses(req), nil
	case models.StepTypeConnectivityCheck:
		req := models.ConnectivityCheckParams{}
		if err := decode(&req); err != nil {
			return nil, err
		}
		return n.connectivity(h, req), nil
	case models.StepTypeVerifyVips:
		req := models.VerifyVipsRequest{}
		if err := decode(&req); err != nil {
			return nil, err
		}
		out := models.VerifyVipsResponse{}
		for _, v := range req {
			verification := models.VipVerificationSucceeded
			if a, err := netip.ParseAddr(string(v.Vip)); err != nil || n.up(a) {
				verification = models.VipVerificationFailed
			}
			out = append(out, &models.VerifiedVip{Vip: v.Vip, VipType: v.VipType, Verification: &verification})
		}
		return out, nil
	case models.StepTypeInstallationDiskSpeedCheck:
		req := models.DiskSpeedCheckRequest{}
		if err := decode(&req); err != nil {
			return nil, err
		}
		path := ""
		if req.Path != nil {
			path = *req.Path
		}
		// An SSD's fdatasync takes a few milliseconds (the validator wants under 20 ms, etcd's).
		return models.DiskSpeedCheckResponse{Path: path, IoSyncDuration: 2}, nil
	case models.StepTypeContainerImageAvailability:
		req := models.ContainerImageAvailabilityRequest{}
		if err := decode(&req); err != nil {
			return nil, err
		}
		out := models.ContainerImageAvailabilityResponse{Images: []*models.ContainerImageAvailability{}}
		for _, img := range req.Images {
			out.Images = append(out.Images, &models.ContainerImageAvailability{Name: img, Result: models.ContainerImageAvailabilityResultSuccess,
				SizeBytes: 333_000_000, Time: 10, DownloadRate: 33.3})
		}
		return out, nil
	case models.StepTypeAPIVipConnectivityCheck:
		// A day-2 host downloads its worker ignition from the cluster's API (the lab's load
		// balancer answers it).
		return models.APIVipConnectivityResponse{IsSuccess: true}, nil
	}
	return nil, fmt.Errorf("the lab's discovery agent does not run %s steps", step.StepType)
}

// freeAddresses are the addresses of each IPv4 network asked that no lab host that is on holds
// (the agent's nmap ping scan), its gateway and load balancer excluded; at most 254 a network.
func (n network) freeAddresses(req models.FreeAddressesRequest) models.FreeNetworksAddresses {
	out := models.FreeNetworksAddresses{}
	for _, cidr := range req {
		p, err := netip.ParsePrefix(cidr)
		if err != nil || !p.Addr().Is4() {
			continue
		}
		f := &models.FreeNetworkAddresses{Network: cidr, FreeAddresses: []strfmt.IPv4{}}
		for a := p.Masked().Addr().Next().Next(); p.Contains(a) && len(f.FreeAddresses) < 254; a = a.Next() {
			if a.String() == LoadBalancerIPv4 || !p.Contains(a.Next()) || n.up(a) {
				continue // the load balancer, the broadcast address, a host that answers
			}
			f.FreeAddresses = append(f.FreeAddresses, strfmt.IPv4(a.String()))
		}
		out = append(out, f)
	}
	return out
}

// connectivity is the agent's ping and arping of each other host's addresses from its NICs on
// the same network: successful when that host is on.
func (n network) connectivity(h *inventory.Host, req models.ConnectivityCheckParams) models.ConnectivityReport {
	out := models.ConnectivityReport{RemoteHosts: []*models.ConnectivityRemoteHost{}}
	for _, remote := range req {
		rh := &models.ConnectivityRemoteHost{HostID: remote.HostID, L2Connectivity: []*models.L2Connectivity{}, L3Connectivity: []*models.L3Connectivity{}}
		for _, nic := range remote.Nics {
			for _, ip := range nic.IPAddresses {
				rp, err := netip.ParsePrefix(ip)
				if err != nil {
					if a, aerr := netip.ParseAddr(ip); aerr == nil {
						rp = netip.PrefixFrom(a, a.BitLen())
					} else {
						continue
					}
				}
				ok := n.up(rp.Addr())
				for _, own := range h.NICs {
					for _, mine := range []string{own.IPv4, own.IPv6} {
						mp, err := netip.ParsePrefix(mine)
						if err != nil || !mp.Masked().Contains(rp.Addr()) {
							continue
						}
						rh.L2Connectivity = append(rh.L2Connectivity, &models.L2Connectivity{OutgoingNic: own.Name, OutgoingIPAddress: mp.Addr().String(),
							RemoteIPAddress: rp.Addr().String(), RemoteMac: string(nic.Mac), Successful: ok})
						rh.L3Connectivity = append(rh.L3Connectivity, &models.L3Connectivity{OutgoingNic: own.Name,
							RemoteIPAddress: rp.Addr().String(), Successful: ok, AverageRTTMs: 0.4})
					}
				}
			}
		}
		out.RemoteHosts = append(out.RemoteHosts, rh)
	}
	return out
}
