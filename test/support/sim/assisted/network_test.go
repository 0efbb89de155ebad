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

package assisted

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/inventory"
)

const (
	v4Net, v6Net = "192.168.111.0/24", "fd2e:6f44:5dd8:c956::/64"
	v4VIP, v6VIP = "192.168.111.5", "fd2e:6f44:5dd8:c956::5"
	v4In, v6In   = "192.168.111.4", "fd2e:6f44:5dd8:c956::4"
)

// testACI is an AgentClusterInstall of controlPlanes nodes with pod and service networks of
// families ("4", "6", "46", "64"), machine networks and VIPs.
func testACI(controlPlanes int, families string, machine, api, ingress []string) *hiveextv1beta1.AgentClusterInstall {
	aci := &hiveextv1beta1.AgentClusterInstall{}
	aci.Spec.ProvisionRequirements.ControlPlaneAgents = controlPlanes
	aci.Spec.APIVIPs, aci.Spec.IngressVIPs = api, ingress
	for _, f := range families {
		if f == '4' {
			aci.Spec.Networking.ClusterNetwork = append(aci.Spec.Networking.ClusterNetwork, hiveextv1beta1.ClusterNetworkEntry{CIDR: "10.128.0.0/14", HostPrefix: 23})
			aci.Spec.Networking.ServiceNetwork = append(aci.Spec.Networking.ServiceNetwork, "172.30.0.0/16")
		} else {
			aci.Spec.Networking.ClusterNetwork = append(aci.Spec.Networking.ClusterNetwork, hiveextv1beta1.ClusterNetworkEntry{CIDR: "fd01::/48", HostPrefix: 64})
			aci.Spec.Networking.ServiceNetwork = append(aci.Spec.Networking.ServiceNetwork, "fd02::/112")
		}
	}
	for _, m := range machine {
		aci.Spec.Networking.MachineNetwork = append(aci.Spec.Networking.MachineNetwork, hiveextv1beta1.MachineNetworkEntry{CIDR: m})
	}
	return aci
}

func l(s ...string) []string { return s }

// TestNetworkingSpecError: what assisted-service refuses at registration, with its messages.
func TestNetworkingSpecError(t *testing.T) {
	for name, tc := range map[string]struct {
		aci  *hiveextv1beta1.AgentClusterInstall
		want string
	}{
		"IPv4":                          {testACI(3, "4", l(v4Net), l(v4VIP), l(v4In)), ""},
		"IPv4 without machine networks": {testACI(3, "4", nil, l(v4VIP), l(v4In)), ""},
		"IPv6 without machine networks": {testACI(3, "6", nil, l(v6VIP), l(v6In)), ""},
		"dual stack":                    {testACI(3, "46", l(v4Net, v6Net), l(v4VIP, v6VIP), l(v4In, v6In)), ""},
		"dual stack IPv6 first (OpenShift 4.12+)": {testACI(3, "64", l(v6Net, v4Net), l(v6VIP, v4VIP), l(v6In, v4In)), ""},
		"dual stack without machine networks": {testACI(3, "46", nil, l(v4VIP, v6VIP), l(v4In, v6In)),
			"Dual-stack cluster cannot be created with empty Machine Networks"},
		"dual-stack single node without machine networks": {testACI(1, "46", nil, nil, nil),
			"Dual-stack cluster cannot be created with empty Machine Networks"},
		"dual stack with one machine network": {testACI(3, "46", l(v4Net), l(v4VIP), l(v4In)), "Expected 2 machine networks, found 1"},
		"two IPv4 machine networks": {testACI(3, "4", l(v4Net, "192.168.112.0/24"), l(v4VIP), l(v4In)),
			"Single-stack cluster cannot contain multiple Machine Networks"},
		"primary families differ": {testACI(3, "46", l(v6Net, v4Net), l(v4VIP, v6VIP), l(v4In, v6In)),
			"Inconsistent IP family order: machine_networks first IP is fd2e:6f44:5dd8:c956::/64 but api_vips first IP is 192.168.111.5. All networks must have the same IP family first"},
		"two API VIPs of one family": {testACI(3, "46", l(v4Net, v6Net), l(v4VIP, "192.168.111.6"), l(v4In, v6In)),
			"dual-stack apiVIPs must include exactly one IPv4 address and one IPv6 address"},
		"API VIP outside its machine network": {testACI(3, "4", l("192.168.112.0/24"), l(v4VIP), l("192.168.112.4")),
			"api-vip <192.168.111.5> does not belong to machine-network-cidr <192.168.112.0/24>"},
		"ingress VIP at the broadcast address": {testACI(3, "4", l(v4Net), l(v4VIP), l("192.168.111.255")),
			"ingress-vip <192.168.111.255> is the broadcast address of machine-network-cidr <192.168.111.0/24>"},
	} {
		t.Run(name, func(t *testing.T) {
			if got := networkingSpecError(tc.aci); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// agentsOf are bound Agents of hosts, with the inventories their agents report.
func agentsOf(hosts []*inventory.Host) []aiv1beta1.Agent {
	out := make([]aiv1beta1.Agent, 0, len(hosts))
	for _, h := range hosts {
		out = append(out, aiv1beta1.Agent{Status: aiv1beta1.AgentStatus{Inventory: h.AgentInventory(metav1.Now())}})
	}
	return out
}

// TestMachineNetworksOf: the spec's machine networks, or those assisted-service computes from the
// VIPs and the hosts' inventories for a single-stack cluster, or a single node's only network
// of each family.
func TestMachineNetworksOf(t *testing.T) {
	hosts := agentsOf(inventory.Generate("mn", 3, inventory.GenerateOptions{}))
	other := agentsOf(inventory.Generate("mn-other", 1, inventory.GenerateOptions{Subnet: "10.9.8"}))
	for name, tc := range map[string]struct {
		aci    *hiveextv1beta1.AgentClusterInstall
		agents []aiv1beta1.Agent
		want   []string
	}{
		"the spec's":                              {testACI(3, "46", l(v4Net, v6Net), l(v4VIP, v6VIP), l(v4In, v6In)), hosts, l(v4Net, v6Net)},
		"from the IPv4 VIP":                       {testACI(3, "4", nil, l(v4VIP), l(v4In)), hosts, l(v4Net)},
		"from the IPv6 VIP":                       {testACI(3, "6", nil, l(v6VIP), l(v6In)), hosts, l(v6Net)},
		"no host holds the VIP's network":         {testACI(3, "4", nil, l(v4VIP), l(v4In)), other, nil},
		"single node, IPv4":                       {testACI(1, "4", nil, nil, nil), hosts[:1], l(v4Net)},
		"single node, IPv6":                       {testACI(1, "6", nil, nil, nil), hosts[:1], l(v6Net)},
		"single node, defaults (IPv4)":            {testACI(1, "", nil, nil, nil), hosts[:1], l(v4Net)},
		"single node, hosts of two IPv4 networks": {testACI(1, "4", nil, nil, nil), append(append([]aiv1beta1.Agent(nil), hosts[:1]...), other...), nil},
		"user-managed networking": {func() *hiveextv1beta1.AgentClusterInstall {
			a := testACI(3, "4", nil, nil, nil)
			a.Spec.Networking.UserManagedNetworking = ptr.To(true)
			return a
		}(), hosts, nil},
	} {
		t.Run(name, func(t *testing.T) {
			got := machineNetworksOf(tc.aci, tc.agents, true)
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
	// Once the install started, the assigned networks are kept.
	aci := testACI(3, "4", nil, l(v4VIP), l(v4In))
	aci.Status.MachineNetwork = []hiveextv1beta1.MachineNetworkEntry{{CIDR: v4Net}}
	if got := machineNetworksOf(aci, nil, false); strings.Join(got, ",") != v4Net {
		t.Errorf("after the install started: got %v, want the assigned %s", got, v4Net)
	}
}

// TestClusterNetworkFailures: the cluster validations that keep the cluster insufficient.
func TestClusterNetworkFailures(t *testing.T) {
	hosts := agentsOf(inventory.Generate("cv", 3, inventory.GenerateOptions{}))
	sdn := func(a *hiveextv1beta1.AgentClusterInstall) *hiveextv1beta1.AgentClusterInstall {
		a.Spec.Networking.NetworkType = "OpenShiftSDN"
		return a
	}
	for name, tc := range map[string]struct {
		aci     *hiveextv1beta1.AgentClusterInstall
		machine []string
		want    string
	}{
		"IPv4":       {testACI(3, "4", nil, l(v4VIP), l(v4In)), l(v4Net), ""},
		"IPv6":       {testACI(3, "6", nil, l(v6VIP), l(v6In)), l(v6Net), ""},
		"dual stack": {testACI(3, "46", nil, l(v4VIP, v6VIP), l(v4In, v6In)), l(v4Net, v6Net), ""},
		"no machine network": {testACI(3, "4", nil, l("10.0.0.5"), l("10.0.0.4")), nil,
			"No suitable matching CIDR found for VIP 10.0.0.5 The Machine Network CIDR is undefined; the Machine Network CIDR can be defined by setting either the API or Ingress virtual IPs."},
		"machine network that is not the VIP's": {testACI(3, "4", nil, l(v4VIP), l(v4In)), l("192.168.111.0/25"),
			"The Cluster Machine CIDR 192.168.111.0/25 is different than the calculated CIDR 192.168.111.0/24."},
		"machine network of another family": {testACI(3, "4", nil, nil, nil), l(v6Net),
			"Address families of networks (MachineNetworks, ServiceNetworks, ClusterNetworks) are not the same."},
		"IPv6 with OpenShiftSDN": {sdn(testACI(3, "6", nil, l(v6VIP), l(v6In))), l(v6Net),
			"The cluster is configured with IPv6 which is not supported by OpenShiftSDN; use OVNKubernetes instead"},
		"single node without machine network": {testACI(1, "4", nil, nil, nil), nil,
			"The Machine Network CIDR is undefined; Setting Machine Network CIDR is required for single node cluster"},
	} {
		t.Run(name, func(t *testing.T) {
			if got := clusterNetworkFailures(tc.aci, hosts, tc.machine); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestBelongsToMachineNetworks: a host must have an address in every machine network.
func TestBelongsToMachineNetworks(t *testing.T) {
	h := inventory.Generate("belongs", 1, inventory.GenerateOptions{})[0]
	v4only := inventory.Generate("belongs", 1, inventory.GenerateOptions{})[0]
	v4only.NICs[0].IPv6 = ""
	for name, tc := range map[string]struct {
		aci        *hiveextv1beta1.AgentClusterInstall
		host       *inventory.Host
		wantStatus string
		wantFails  bool
	}{
		"dual-stack host, dual stack":  {testACI(3, "46", l(v4Net, v6Net), nil, nil), h, validationStatusSuccess, false},
		"IPv4-only host, dual stack":   {testACI(3, "46", l(v4Net, v6Net), nil, nil), v4only, validationStatusFailure, true},
		"IPv4-only host, IPv6 cluster": {testACI(3, "6", l(v6Net), nil, nil), v4only, validationStatusFailure, true},
		"no machine network yet":       {testACI(3, "4", nil, nil, nil), h, validationStatusPending, false},
		"user-managed networking": {func() *hiveextv1beta1.AgentClusterInstall {
			a := testACI(3, "4", l("10.0.0.0/24"), nil, nil)
			a.Spec.Networking.UserManagedNetworking = ptr.To(true)
			return a
		}(), h, validationStatusSuccess, false},
	} {
		t.Run(name, func(t *testing.T) {
			status, msg, fails := belongsToMachineNetworks(tc.aci, tc.host.AgentInventory(metav1.Now()))
			if status != tc.wantStatus || fails != tc.wantFails {
				t.Errorf("got %s (%s), fails %v; want %s, fails %v", status, msg, fails, tc.wantStatus, tc.wantFails)
			}
		})
	}
}

// peersOf are the cluster hosts of the lab hosts, named by index ("0", "1", ...), whose
// discovery agent runs unless its index is in off.
func peersOf(hosts []*inventory.Host, off ...int) []clusterHost {
	out := make([]clusterHost, 0, len(hosts))
	for i, h := range hosts {
		out = append(out, clusterHostOf(strconv.Itoa(i), h, !slices.Contains(off, i)))
	}
	return out
}

// TestBelongsToMajorityGroup: the host is in the majority group of its cluster's hosts whose
// discovery agent runs, per machine network (L2) or for every other host (L3, user-managed);
// a failure is pending below 3 bound hosts; single nodes and day-2 hosts need no group.
func TestBelongsToMajorityGroup(t *testing.T) {
	hosts := inventory.Generate("mg", 4, inventory.GenerateOptions{})
	other := inventory.Generate("mg-other", 1, inventory.GenerateOptions{Subnet: "10.9.8"})[0]
	v4only := inventory.Generate("mg-v4", 1, inventory.GenerateOptions{FirstIP: 90})[0]
	v4only.NICs[0].IPv6 = ""
	three := testACI(3, "4", l(v4Net), nil, nil)
	umn := func(a *hiveextv1beta1.AgentClusterInstall) *hiveextv1beta1.AgentClusterInstall {
		a.Spec.Networking.UserManagedNetworking = ptr.To(true)
		return a
	}
	const (
		ok       = "Host has connectivity to the majority of hosts in the cluster"
		noMajor  = "No connectivity to the majority of hosts in the cluster"
		notEnoug = "Not enough hosts in cluster to calculate connectivity groups"
	)
	for name, tc := range map[string]struct {
		aci        *hiveextv1beta1.AgentClusterInstall
		in         string // belongs-to-machine-cidr
		self       string
		peers      []clusterHost
		day2       bool
		wantStatus string
		wantMsg    string
	}{
		"three running":                           {three, validationStatusSuccess, "0", peersOf(hosts[:3]), false, validationStatusSuccess, ok},
		"three, a peer is off":                    {three, validationStatusSuccess, "0", peersOf(hosts[:3], 2), false, validationStatusFailure, noMajor},
		"three, the host itself is off":           {three, validationStatusSuccess, "2", peersOf(hosts[:3], 2), false, validationStatusFailure, noMajor},
		"four, a peer is off: three make a group": {testACI(3, "4", l(v4Net), nil, nil), validationStatusSuccess, "0", peersOf(hosts, 3), false, validationStatusSuccess, ok},
		"four, two are off":                       {three, validationStatusSuccess, "0", peersOf(hosts, 2, 3), false, validationStatusFailure, noMajor},
		"two bound of three wanted":               {three, validationStatusSuccess, "0", peersOf(hosts[:2]), false, validationStatusPending, notEnoug},
		"two bound, one off":                      {three, validationStatusSuccess, "0", peersOf(hosts[:2], 1), false, validationStatusPending, notEnoug},
		"the host outside the machine network": {three, validationStatusFailure, "2",
			peersOf([]*inventory.Host{hosts[0], hosts[1], other}), false, validationStatusFailure, noMajor},
		"a peer outside the machine network: two left": {three, validationStatusSuccess, "0",
			peersOf([]*inventory.Host{hosts[0], hosts[1], other}), false, validationStatusFailure, noMajor},
		"dual stack, an IPv4-only peer": {testACI(3, "46", l(v4Net, v6Net), nil, nil), validationStatusSuccess, "0",
			peersOf([]*inventory.Host{hosts[0], hosts[1], v4only}), false, validationStatusFailure, noMajor},
		"dual stack, three running": {testACI(3, "46", l(v4Net, v6Net), nil, nil), validationStatusSuccess, "0",
			peersOf(hosts[:3]), false, validationStatusSuccess, ok},
		"no machine network yet": {testACI(3, "4", nil, nil, nil), validationStatusPending, "0", peersOf(hosts[:3]), false,
			validationStatusPending, "Machine Network CIDR or Connectivity Majority Groups missing"},
		"single node, alone and off": {testACI(1, "4", nil, nil, nil), validationStatusPending, "0", peersOf(hosts[:1], 0), false, validationStatusSuccess, ok},
		"day 2, its peers installed": {three, validationStatusSuccess, "3", peersOf(hosts, 0, 1, 2), true,
			validationStatusSuccess, "Day2 host is not required to be connected to other hosts in the cluster"},
		"user-managed, three running": {umn(testACI(3, "4", nil, nil, nil)), validationStatusSuccess, "0", peersOf(hosts[:3]), false, validationStatusSuccess, ok},
		"user-managed, a peer is off": {umn(testACI(3, "4", nil, nil, nil)), validationStatusSuccess, "0", peersOf(hosts[:3], 1), false, validationStatusFailure, noMajor},
		"user-managed, two bound":     {umn(testACI(3, "4", nil, nil, nil)), validationStatusSuccess, "0", peersOf(hosts[:2], 1), false, validationStatusPending, notEnoug},
		"user-managed, IPv6 wanted of an IPv4-only peer": {umn(testACI(3, "46", nil, nil, nil)), validationStatusSuccess, "0",
			peersOf([]*inventory.Host{hosts[0], hosts[1], v4only}), false, validationStatusFailure, noMajor},
	} {
		t.Run(name, func(t *testing.T) {
			status, msg, fails := belongsToMajorityGroup(tc.aci, tc.in, tc.self, tc.peers, tc.day2)
			if status != tc.wantStatus || msg != tc.wantMsg || fails != (tc.wantStatus == validationStatusFailure) {
				t.Errorf("got %s (%s), fails %v; want %s (%s)", status, msg, fails, tc.wantStatus, tc.wantMsg)
			}
		})
	}
}

// BenchmarkBelongsToMajorityGroup: one host's validation in a cluster of 100 bound hosts (it
// runs on every validation pass of every host).
func BenchmarkBelongsToMajorityGroup(b *testing.B) {
	peers := peersOf(inventory.Generate("mg-bench", 100, inventory.GenerateOptions{}), 7)
	aci := testACI(3, "46", l(v4Net, v6Net), nil, nil)
	b.ReportAllocs()
	for b.Loop() {
		if status, _, _ := belongsToMajorityGroup(aci, validationStatusSuccess, "0", peers, false); status != validationStatusSuccess {
			b.Fatal(status)
		}
	}
}
