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

import (
	"net/netip"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestGenerateIsDeterministicAndUnique(t *testing.T) {
	a, b := Generate("lab", 20, GenerateOptions{}), Generate("lab", 20, GenerateOptions{})
	other := Generate("other", 20, GenerateOptions{})
	seen := map[string]bool{}
	for i := range a {
		if a[i].SystemUUID != b[i].SystemUUID || a[i].BootMAC() != b[i].BootMAC() {
			t.Fatalf("host %d differs between two runs", i)
		}
		for _, v := range []string{a[i].SystemUUID, a[i].BootMAC(), a[i].IPv4(), a[i].SerialNumber, other[i].SystemUUID, other[i].BootMAC()} {
			if seen[v] {
				t.Fatalf("%s is not unique", v)
			}
			seen[v] = true
		}
	}
}

// TestGenerateAddressesAFleet: hundreds of hosts get valid, distinct addresses, going on in the
// next /24 past the 254th.
func TestGenerateAddressesAFleet(t *testing.T) {
	hosts := Generate("fleet", 600, GenerateOptions{})
	seen := map[string]bool{}
	for _, h := range hosts {
		ip, err := netip.ParseAddr(h.IPv4())
		if err != nil || !ip.Is4() || seen[h.IPv4()] {
			t.Fatalf("host %s: address %q invalid or not unique (%v)", h.Name, h.IPv4(), err)
		}
		seen[h.IPv4()] = true
	}
	if got := hosts[0].IPv4(); got != "192.168.111.20" {
		t.Fatalf("the first host's address is %s, want 192.168.111.20 as before", got)
	}
	if got := hosts[235].IPv4(); got != "192.168.112.1" {
		t.Fatalf("the 255th address is %s, want 192.168.112.1", got)
	}
	// Every host also has an address of the lab's IPv6 network, none shared.
	subnet := netip.MustParsePrefix(IPv6Subnet)
	seen6 := map[netip.Addr]bool{}
	for _, h := range hosts {
		p, err := netip.ParsePrefix(h.NICs[0].IPv6)
		if err != nil || !subnet.Contains(p.Addr()) || p.Masked() != subnet || seen6[p.Addr()] {
			t.Fatalf("host %s: IPv6 address %q invalid, outside %s or not unique (%v)", h.Name, h.NICs[0].IPv6, IPv6Subnet, err)
		}
		seen6[p.Addr()] = true
	}
	if got := hosts[0].NICs[0].IPv6; got != "fd2e:6f44:5dd8:c956::14/64" {
		t.Fatalf("the first host's IPv6 address is %s, want fd2e:6f44:5dd8:c956::14/64 (::20 in hex)", got)
	}
}

func TestBareMetalHostAndAgentInventoriesAgree(t *testing.T) {
	h := Generate("agree", 1, GenerateOptions{CPUCount: 4, RAMMebibytes: 16384})[0]
	hw := h.HardwareDetails()
	ai := h.AgentInventory(metav1.Now())
	checks := []struct {
		name       string
		bmo, agent any
	}{
		{"MAC", hw.NIC[0].MAC, ai.Interfaces[0].MacAddress},
		{"IP", hw.NIC[0].IP + "/24", ai.Interfaces[0].IPV4Addresses[0]},
		{"IPv6", hw.NIC[1].IP + "/64", ai.Interfaces[0].IPV6Addresses[0]},
		{"the second entry's MAC", hw.NIC[1].MAC, ai.Interfaces[0].MacAddress},
		{"serial", hw.SystemVendor.SerialNumber, ai.SystemVendor.SerialNumber},
		{"CPUs", int64(hw.CPU.Count), ai.Cpu.Count},
		{"memory", int64(hw.RAMMebibytes) * 1024 * 1024, ai.Memory.PhysicalBytes},
		{"disk size", int64(hw.Storage[0].SizeBytes), ai.Disks[0].SizeBytes},
		{"disk serial", hw.Storage[0].SerialNumber, ai.Disks[0].Serial},
		{"hostname", hw.Hostname, ai.Hostname},
	}
	for _, c := range checks {
		if c.bmo != c.agent {
			t.Errorf("%s: BareMetalHost says %v, Agent says %v", c.name, c.bmo, c.agent)
		}
	}
	if !hw.NIC[0].PXE {
		t.Error("the boot NIC is not marked PXE")
	}
}

func TestLookups(t *testing.T) {
	hosts := Generate("find", 3, GenerateOptions{})
	inv := New(hosts...)
	for _, tc := range []struct {
		name string
		got  *Host
		want *Host
	}{
		{"BMC address", inv.ByBMCAddress(hosts[1].BMCAddress), hosts[1]},
		{"UUID, any case", inv.BySystemUUID(upper(hosts[2].SystemUUID)), hosts[2]},
		{"MAC, any case", inv.ByMAC(upper(hosts[0].BootMAC())), hosts[0]},
		{"unknown", inv.ByBMCAddress("redfish://nowhere"), nil},
		{"empty", inv.BySystemUUID(""), nil},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}

func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			b[i] = c - 32
		}
	}
	return string(b)
}

// TestNodeAddresses: the kubelet reports its address in each machine network, in their order;
// its IPv4 address without them.
func TestNodeAddresses(t *testing.T) {
	h := Generate("node", 1, GenerateOptions{})[0]
	internal := func(addrs []corev1.NodeAddress) []string {
		out := []string{}
		for _, a := range addrs {
			if a.Type == corev1.NodeInternalIP {
				out = append(out, a.Address)
			}
		}
		return out
	}
	for name, tc := range map[string]struct {
		networks []string
		want     []string
	}{
		"no machine network":     {nil, []string{"192.168.111.20"}},
		"IPv6":                   {[]string{IPv6Subnet}, []string{"fd2e:6f44:5dd8:c956::14"}},
		"dual stack, IPv6 first": {[]string{IPv6Subnet, "192.168.111.0/24"}, []string{"fd2e:6f44:5dd8:c956::14", "192.168.111.20"}},
		"another network":        {[]string{"10.0.0.0/24"}, []string{"192.168.111.20"}},
	} {
		t.Run(name, func(t *testing.T) {
			if got := internal(h.NodeAddresses(tc.networks...)); strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestAddNewRefusesASecondServerOfOneIdentity: hosts generated twice from one prefix are the same
// servers, so the second set is refused whole, naming the clash; another prefix is added.
func TestAddNewRefusesASecondServerOfOneIdentity(t *testing.T) {
	inv := New()
	if err := inv.AddNew(Generate("day2", 2, GenerateOptions{})...); err != nil {
		t.Fatal(err)
	}
	err := inv.AddNew(Generate("other", 1, GenerateOptions{FirstIP: 30})[0], Generate("day2", 1, GenerateOptions{FirstIP: 40})[0])
	if err == nil || !strings.Contains(err.Error(), "host day2-0 has the name day2-0 of host day2-0") {
		t.Fatalf("adding day2-0 again: %v, want the clash named", err)
	}
	if n := len(inv.Hosts()); n != 2 {
		t.Errorf("%d hosts after a refused AddNew, want 2: nothing of it is added", n)
	}
	mac := Generate("mac", 1, GenerateOptions{})[0]
	mac.NICs[0].MAC = strings.ToUpper(inv.Hosts()[1].NICs[0].MAC)
	if err := inv.AddNew(mac); err == nil || !strings.Contains(err.Error(), "has the MAC") {
		t.Errorf("a host with day2-1's MAC: %v, want refused", err)
	}
	if err := inv.AddNew(Generate("other", 2, GenerateOptions{FirstIP: 30})...); err != nil {
		t.Errorf("another prefix: %v", err)
	}
}
