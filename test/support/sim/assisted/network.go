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
	"fmt"
	"net/netip"
	"sort"

	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	"k8s.io/utils/ptr"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/inventory"
)

// The networks of a cluster as assisted-service checks them. Read at openshift/assisted-service
// 063b2579 (the API this project pins; docs/research/dual-stack.md lists every rule):
//   - internal/cluster/validations/validations.go: ValidateClusterCreateIPAddresses and
//     validateVIPAddresses (VIP order, "Dual-stack cluster cannot be created with empty Machine
//     Networks", each VIP inside the machine network at its position), ValidateDualStackNetworks
//     (one IPv4 and one IPv6 network of each kind for dual stack, one machine network for single
//     stack); internal/network/dual_stack_validations.go: ComputePrimaryIPStack (one primary
//     family). These refuse the cluster's registration: the ClusterDeployments controller reports
//     them as an input error in the AgentClusterInstall's SpecSynced condition.
//   - internal/cluster/validator.go: isMachineCidrDefined, isMachineCidrEqualsToCalculatedCidr,
//     areVipsValid, isNetworksSameAddressFamilies, isNetworkTypeValid: cluster validations that
//     keep the cluster insufficient.
//   - internal/cluster/cluster.go autoAssignMachineNetworkCidr: without machine networks,
//     assisted-service takes the hosts' network that holds the i-th VIP
//     (internal/network/machine_network_cidr.go CalculateMachineNetworkCIDR), or for single-node
//     OpenShift the hosts' only network of each of the cluster's families.
//   - internal/host/validator.go belongsToMachineCidr: a host must have an address in every
//     machine network.
// The sim takes OpenShift 4.12 or later, where a dual-stack cluster may be IPv6-primary
// (MinimalVersionForIPV6PrimaryWithDualStack, internal/common/common.go), and assisted-service's
// default IPV6_SUPPORT=true. It does not model VIP DHCP allocation, user-managed load balancers,
// or the check that a VIP is free. Connectivity groups: belongsToMajorityGroup.

// clusterNetworks are the networks and VIPs of an AgentClusterInstall.
type clusterNetworks struct {
	machine, service, cluster, api, ingress []string
}

func networksOf(aci *hiveextv1beta1.AgentClusterInstall) clusterNetworks {
	n := clusterNetworks{service: aci.Spec.Networking.ServiceNetwork, api: aci.Spec.APIVIPs, ingress: aci.Spec.IngressVIPs}
	for _, m := range aci.Spec.Networking.MachineNetwork {
		n.machine = append(n.machine, m.CIDR)
	}
	for _, c := range aci.Spec.Networking.ClusterNetwork {
		n.cluster = append(n.cluster, c.CIDR)
	}
	// The ClusterDeployments controller takes the singular, deprecated fields when the lists are
	// empty (ApiVipsEntriesToArray and its callers).
	if len(n.api) == 0 && aci.Spec.APIVIP != "" {
		n.api = []string{aci.Spec.APIVIP}
	}
	if len(n.ingress) == 0 && aci.Spec.IngressVIP != "" {
		n.ingress = []string{aci.Spec.IngressVIP}
	}
	return n
}

// familyOf is 4 or 6 for an address or CIDR, 0 for neither.
func familyOf(s string) int {
	if p, err := netip.ParsePrefix(s); err == nil {
		s = p.Addr().String()
	}
	a, err := netip.ParseAddr(s)
	switch {
	case err != nil:
		return 0
	case a.Is4():
		return 4
	}
	return 6
}

// families are the families of l, in order.
func families(l []string) []int {
	out := make([]int, 0, len(l))
	for _, s := range l {
		out = append(out, familyOf(s))
	}
	return out
}

// canonical is families without repeats, in order of first appearance (CanonizeAddressFamilies).
func canonical(f []int) []int {
	out := []int{}
	for _, x := range f {
		if len(out) == 0 || (out[0] != x && (len(out) < 2 || out[1] != x)) {
			out = append(out, x)
		}
	}
	return out
}

func isDual(l []string) bool {
	has := map[int]bool{}
	for _, f := range families(l) {
		has[f] = true
	}
	return has[4] && has[6]
}

// registered are the networks as assisted-service stores them: an empty list of pod (cluster)
// or service networks gets its default, after the registration's validations
// (setDefaultRegisterClusterParams, internal/bminventory/inventory.go, defaults
// CLUSTER_NETWORK_CIDR 10.128.0.0/14 and SERVICE_NETWORK_CIDR 172.30.0.0/16).
func (n clusterNetworks) registered() clusterNetworks {
	if len(n.cluster) == 0 {
		n.cluster = []string{"10.128.0.0/14"}
	}
	if len(n.service) == 0 {
		n.service = []string{"172.30.0.0/16"}
	}
	return n
}

func (n clusterNetworks) dualStack() bool {
	return isDual(n.machine) || isDual(n.service) || isDual(n.cluster)
}

// networkingSpecError is assisted-service's refusal to register the cluster's networks, or "".
func networkingSpecError(aci *hiveextv1beta1.AgentClusterInstall) string {
	n := networksOf(aci)
	dual := n.dualStack()
	if dual { // ComputePrimaryIPStack
		var firstKind, firstValue string
		for _, l := range []struct{ kind, first string }{
			{"machine_networks", first(n.machine)}, {"api_vips", first(n.api)}, {"ingress_vips", first(n.ingress)},
			{"service_networks", first(n.service)}, {"cluster_networks", first(n.cluster)},
		} {
			switch {
			case familyOf(l.first) == 0:
			case firstValue == "":
				firstKind, firstValue = l.kind, l.first
			case familyOf(l.first) != familyOf(firstValue):
				return fmt.Sprintf("Inconsistent IP family order: %s first IP is %s but %s first IP is %s. All networks must have the same IP family first",
					firstKind, firstValue, l.kind, l.first)
			}
		}
	}
	for _, vips := range []struct {
		name string
		l    []string
	}{{"apiVIPs", n.api}, {"ingressVips", n.ingress}} { // validateVIPAddressFamily
		if len(vips.l) == 2 && !isDual(vips.l) {
			return fmt.Sprintf("dual-stack %s must include exactly one IPv4 address and one IPv6 address", vips.name)
		}
	}
	if dual { // ValidateDualStackNetworks
		for _, l := range []struct {
			name string
			l    []string
		}{{"machine networks", n.machine}, {"service networks", n.service}, {"cluster networks", n.cluster}} {
			if len(l.l) == 0 {
				continue
			}
			if len(l.l) != 2 {
				return fmt.Sprintf("Expected 2 %s, found %d", l.name, len(l.l))
			}
			if !isDual(l.l) {
				return fmt.Sprintf("dual-stack %s must include exactly one IPv4 subnet and one IPv6 subnet", l.name)
			}
		}
	} else if len(n.machine) > 1 {
		return "Single-stack cluster cannot contain multiple Machine Networks"
	}
	if len(n.machine) == 0 { // validateVIPAddresses, cluster-managed load balancer
		if dual {
			return "Dual-stack cluster cannot be created with empty Machine Networks"
		}
		return ""
	}
	for i := range n.api {
		if i >= len(n.machine) {
			return fmt.Sprintf("api-vip <%s> cannot be set if Machine Network CIDR is empty", n.api[i])
		}
		for _, v := range []struct{ name, vip string }{{"api-vip", n.api[i]}, {"ingress-vip", at(n.ingress, i)}} {
			if v.vip == "" {
				continue
			}
			if !inNetwork(v.vip, n.machine[i]) {
				return fmt.Sprintf("%s <%s> does not belong to machine-network-cidr <%s>", v.name, v.vip, n.machine[i])
			}
			if isBroadcast(v.vip, n.machine[i]) {
				return fmt.Sprintf("%s <%s> is the broadcast address of machine-network-cidr <%s>", v.name, v.vip, n.machine[i])
			}
		}
	}
	return ""
}

func first(l []string) string { return at(l, 0) }

func at(l []string, i int) string {
	if i < len(l) {
		return l[i]
	}
	return ""
}

func inNetwork(ip, cidr string) bool {
	a, err := netip.ParseAddr(ip)
	p, perr := netip.ParsePrefix(cidr)
	return err == nil && perr == nil && p.Contains(a)
}

func isBroadcast(ip, cidr string) bool {
	a, err := netip.ParseAddr(ip)
	p, perr := netip.ParsePrefix(cidr)
	if err != nil || perr != nil || !a.Is4() || !p.Contains(a) {
		return false
	}
	b := a.As4()
	for i := p.Bits(); i < 32; i++ {
		if b[i/8]&(0x80>>(i%8)) == 0 {
			return false
		}
	}
	return true
}

// hostNetworks are the networks of the agents' interfaces, as assisted-service reads them from
// their inventories (both families).
func hostNetworks(agents []aiv1beta1.Agent) [][]string {
	out := make([][]string, 0, len(agents))
	for i := range agents {
		var nets []string
		for _, intf := range agents[i].Status.Inventory.Interfaces {
			for _, a := range append(append([]string(nil), intf.IPV4Addresses...), intf.IPV6Addresses...) {
				if p, err := netip.ParsePrefix(a); err == nil {
					nets = append(nets, p.Masked().String())
				}
			}
		}
		out = append(out, nets)
	}
	return out
}

// calculateMachineNetwork is the first host network holding the VIP ("" for none):
// CalculateMachineNetworkCIDR.
func calculateMachineNetwork(vip string, hosts [][]string) string {
	for _, nets := range hosts {
		for _, c := range nets {
			if inNetwork(vip, c) {
				return c
			}
		}
	}
	return ""
}

// userManaged tells whether the cluster has user-managed networking: set, or single-node
// OpenShift (whose platform is None).
func userManaged(aci *hiveextv1beta1.AgentClusterInstall) bool {
	return ptr.Deref(aci.Spec.Networking.UserManagedNetworking, false) || isSNO(aci)
}

// machineNetworksOf are the cluster's machine networks: the spec's, or those assisted-service
// assigned (autoAssignMachineNetworkCidr, in the pending-for-input and insufficient states only:
// kept afterwards, as the status holds them).
func machineNetworksOf(aci *hiveextv1beta1.AgentClusterInstall, agents []aiv1beta1.Agent, preInstall bool) []string {
	n := networksOf(aci).registered()
	if len(n.machine) > 0 {
		return n.machine
	}
	if !preInstall {
		var kept []string
		for _, m := range aci.Status.MachineNetwork {
			kept = append(kept, m.CIDR)
		}
		return kept
	}
	hosts := hostNetworks(agents)
	switch {
	case isSNO(aci): // tryAssignMachineCidrSNO
		cf, sf := canonical(families(n.cluster)), canonical(families(n.service))
		if fmt.Sprint(cf) != fmt.Sprint(sf) {
			return nil
		}
		var out []string
		for _, f := range cf {
			seen := map[string]bool{}
			for _, nets := range hosts {
				for _, c := range nets {
					if familyOf(c) == f {
						seen[c] = true
					}
				}
			}
			if len(seen) != 1 {
				// None, or several: assisted-service then takes the one of the default route,
				// which the lab's inventory does not report.
				return nil
			}
			for c := range seen {
				out = append(out, c)
			}
		}
		return out
	case ptr.Deref(aci.Spec.Networking.UserManagedNetworking, false):
		return nil
	}
	// tryAssignMachineCidrNonDHCPMode
	primary := calculateMachineNetwork(firstNonEmpty(at(n.api, 0), at(n.ingress, 0)), hosts)
	if primary == "" {
		return nil
	}
	out := []string{primary}
	if secondary := calculateMachineNetwork(firstNonEmpty(at(n.api, 1), at(n.ingress, 1)), hosts); secondary != "" {
		out = append(out, secondary)
	}
	return out
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// clusterNetworkFailures are the failing messages of the cluster's network validations, sorted
// ("" when they pass), with the cluster's machine networks machine.
func clusterNetworkFailures(aci *hiveextv1beta1.AgentClusterInstall, agents []aiv1beta1.Agent, machine []string) string {
	n := networksOf(aci).registered()
	n.machine = machine
	umn := userManaged(aci)
	var failing []string
	required := !umn || isSNO(aci) // IsMachineNetworkRequired
	if required && len(machine) == 0 {
		if isSNO(aci) {
			failing = append(failing, "The Machine Network CIDR is undefined; Setting Machine Network CIDR is required for single node cluster")
		} else {
			failing = append(failing, "The Machine Network CIDR is undefined; the Machine Network CIDR can be defined by setting either the API or Ingress virtual IPs.")
		}
	}
	if !umn && len(n.api) > 0 { // isMachineCidrEqualsToCalculatedCidr, areVipsValid
		hosts := hostNetworks(agents)
		for i := range n.api {
			calc := calculateMachineNetwork(firstNonEmpty(at(n.api, i), at(n.ingress, i)), hosts)
			switch {
			case calc == "":
				failing = append(failing, fmt.Sprintf("No suitable matching CIDR found for VIP %s", firstNonEmpty(at(n.api, i), at(n.ingress, i))))
			case i < len(machine) && normalized(machine[i]) != calc:
				failing = append(failing, fmt.Sprintf("The Cluster Machine CIDR %s is different than the calculated CIDR %s.", machine[i], calc))
			}
		}
	}
	sf, cf := families(n.service), canonical(families(n.cluster))
	switch { // isNetworksSameAddressFamilies
	case fmt.Sprint(sf) != fmt.Sprint(cf):
		failing = append(failing, "Address families of networks (ServiceNetworks, ClusterNetworks) are not the same.")
	case required && len(machine) > 0 && fmt.Sprint(canonical(families(machine))) != fmt.Sprint(sf):
		failing = append(failing, "Address families of networks (MachineNetworks, ServiceNetworks, ClusterNetworks) are not the same.")
	}
	if aci.Spec.Networking.NetworkType == "OpenShiftSDN" { // isNetworkTypeValid
		for _, c := range append(append(append([]string(nil), n.cluster...), n.service...), machine...) {
			if familyOf(c) == 6 {
				failing = append(failing, "The cluster is configured with IPv6 which is not supported by OpenShiftSDN; use OVNKubernetes instead")
				break
			}
		}
	}
	sort.Strings(failing)
	out := ""
	for i, f := range failing {
		if i > 0 {
			out += " "
		}
		out += f
	}
	return out
}

func normalized(cidr string) string {
	if p, err := netip.ParsePrefix(cidr); err == nil {
		return p.Masked().String()
	}
	return cidr
}

// belongsToMachineNetworks is the host validation belongs-to-machine-cidr: its status and
// message, and whether it fails.
func belongsToMachineNetworks(aci *hiveextv1beta1.AgentClusterInstall, inv aiv1beta1.HostInventory) (string, string, bool) {
	if userManaged(aci) && !isSNO(aci) {
		return validationStatusSuccess, "No machine network CIDR validation needed: User Managed Networking", false
	}
	machine := networksOf(aci).machine
	if len(machine) == 0 {
		for _, m := range aci.Status.MachineNetwork {
			machine = append(machine, m.CIDR)
		}
	}
	if len(machine) == 0 || len(inv.Interfaces) == 0 {
		return validationStatusPending, "Missing inventory or machine network CIDR", false
	}
	for _, m := range machine {
		found := false
		for _, intf := range inv.Interfaces { // belongsToNetwork: an address of the family inside it
			for _, a := range append(append([]string(nil), intf.IPV4Addresses...), intf.IPV6Addresses...) {
				if p, err := netip.ParsePrefix(a); err == nil && inNetwork(p.Addr().String(), m) {
					found = true
				}
			}
		}
		if !found {
			return validationStatusFailure, "Host does not belong to machine network CIDRs. Verify that the host belongs to every CIDR listed under machine networks", true
		}
	}
	return validationStatusSuccess, "Host belongs to all machine network CIDRs", false
}

// clusterHost is a host of a cluster (an Agent bound to it) as its peers' connectivity checks
// see it: its agent's name, whether its discovery agent runs (the host is on and booted the
// discovery ISO or a disk image that starts the agent, and registered), and its addresses.
type clusterHost struct {
	name    string
	running bool
	addrs   []netip.Prefix
}

// clusterHostOf is the clusterHost of the lab host h, registered as the Agent name.
func clusterHostOf(name string, h *inventory.Host, running bool) clusterHost {
	c := clusterHost{name: name, running: running}
	if h == nil {
		return c
	}
	for _, nic := range h.NICs {
		for _, a := range []string{nic.IPv4, nic.IPv6} {
			if p, err := netip.ParsePrefix(a); err == nil {
				c.addrs = append(c.addrs, p)
			}
		}
	}
	return c
}

// inNet tells whether the host has an address inside the network p.
func (c clusterHost) inNet(p netip.Prefix) bool {
	for _, a := range c.addrs {
		if p.Contains(a.Addr()) {
			return true
		}
	}
	return false
}

// hasFamily tells whether the host has an address of the family of a.
func (c clusterHost) hasFamily(a netip.Addr) bool {
	for _, b := range c.addrs {
		if b.Addr().Is4() == a.Is4() {
			return true
		}
	}
	return false
}

// minMajorityGroup is the smallest majority group: internal/network/connectivity_groups.go
// createMajorityGroup keeps the candidates of 3 hosts or more, and
// connectivityGroupList.largestGroup returns none below 3.
const minMajorityGroup = 3

// belongsToMajorityGroup is the host validation belongs-to-majority-group of the host self of
// the cluster's hosts (its bound Agents, self among them), whose belongs-to-machine-cidr status
// is inMachineNetworks; day2 says the host joins an installed cluster. It returns the status,
// its message, and whether it fails. Read at openshift/assisted-service 780deffb6a35:
//   - internal/host/validator.go belongsToMajorityGroup: a day-2 host and a single node succeed;
//     user-managed networking checks L3 (belongsToL3MajorityGroup), otherwise L2 per machine
//     network (belongsToL2MajorityGroup, pending without machine networks); a failure is
//     pending while the cluster has fewer than 3 hosts (len(cluster.Hosts): the hosts bound,
//     whatever their state, not the provision requirements).
//   - internal/cluster/cluster.go setConnectivityMajorityGroupsForClusterInternal computes the
//     groups from every host's last connectivity report (host.Connectivity), in the cluster's
//     pre-install states, per host network (CreateL2MajorityGroup) and per family
//     (GatherL3ConnectedAddresses).
//   - internal/network/connectivity_groups.go: two hosts are connected on a network when each
//     one's report has a successful L2 check to an address of the other inside it
//     (connectivityMap.isConnected, l2Query); the majority group is the largest full mesh of at
//     least 3 hosts. An L3 address of a host counts when every other host of the cluster
//     reached it (count == len(hosts)-1).
//   - The connectivity-check step (internal/host/hostcommands/connectivity_check_cmd.go) makes
//     each agent ping and arping the other hosts' addresses: a peer that is off, or runs no
//     discovery agent, does not answer, and posts no report of its own.
//
// In the lab every host's NICs are on the networks of the inventory, so the connectivity
// graph is a full mesh of the hosts whose agent runs (and holds an address in the network),
// and every other host is alone: the L2 majority group of a network is exactly those running
// hosts, when they are at least 3. The sim does not keep a stopped host's last report: a peer
// that stopped counts as reaching no one (the real service may still count its stale report
// toward an L3 address; it never makes an L2 pair, as the running host's own report fails).
func belongsToMajorityGroup(aci *hiveextv1beta1.AgentClusterInstall, inMachineNetworks string, self string, hosts []clusterHost, day2 bool) (string, string, bool) {
	const ok = "Host has connectivity to the majority of hosts in the cluster"
	switch {
	case day2:
		return validationStatusSuccess, "Day2 host is not required to be connected to other hosts in the cluster", false
	case isSNO(aci):
		return validationStatusSuccess, ok, false
	}
	var me clusterHost
	for _, h := range hosts {
		if h.name == self {
			me = h
		}
	}
	var status string
	if ptr.Deref(aci.Spec.Networking.UserManagedNetworking, false) {
		status = belongsToL3MajorityGroup(aci, me, hosts)
	} else {
		if inMachineNetworks == validationStatusPending {
			return validationStatusPending, "Machine Network CIDR or Connectivity Majority Groups missing", false
		}
		machine := networksOf(aci).machine
		if len(machine) == 0 {
			machine = statusMachineNetworks(aci)
		}
		status = belongsToL2MajorityGroup(machine, me, hosts)
	}
	switch {
	case status == validationStatusSuccess:
		return validationStatusSuccess, ok, false
	case len(hosts) < 3:
		return validationStatusPending, "Not enough hosts in cluster to calculate connectivity groups", false
	}
	return validationStatusFailure, "No connectivity to the majority of hosts in the cluster", true
}

// belongsToL2MajorityGroup: the host is in the majority group of every machine network (the
// running hosts with an address inside it, when they are minMajorityGroup or more).
func belongsToL2MajorityGroup(machine []string, me clusterHost, hosts []clusterHost) string {
	for _, m := range machine {
		p, err := netip.ParsePrefix(m)
		if err != nil {
			return validationStatusFailure
		}
		p = p.Masked()
		if !me.running || !me.inNet(p) {
			return validationStatusFailure
		}
		n := 0
		for _, h := range hosts {
			if h.running && h.inNet(p) {
				n++
			}
		}
		if n < minMajorityGroup {
			return validationStatusFailure
		}
	}
	return validationStatusSuccess
}

// belongsToL3MajorityGroup: for each family of the cluster's networks
// (network.GetConfiguredAddressFamilies: machine, service and cluster networks), an address of
// the host that every other host of the cluster reached (GatherL3ConnectedAddresses): the host
// and every other host run their agent, the others with an address of that family.
func belongsToL3MajorityGroup(aci *hiveextv1beta1.AgentClusterInstall, me clusterHost, hosts []clusterHost) string {
	n := networksOf(aci).registered()
	want := map[bool]bool{} // is IPv4 → configured
	for _, c := range append(append(append([]string(nil), n.cluster...), n.service...), statusMachineNetworks(aci)...) {
		switch familyOf(c) {
		case 4:
			want[true] = true
		case 6:
			want[false] = true
		}
	}
	if len(want) == 0 || !me.running || len(hosts) < 2 {
		return validationStatusFailure // no report names the host: it has no connected address
	}
	for is4 := range want {
		found := false
		for _, a := range me.addrs {
			if a.Addr().Is4() != is4 {
				continue
			}
			all := true
			for _, h := range hosts {
				if h.name != me.name && (!h.running || !h.hasFamily(a.Addr())) {
					all = false
					break
				}
			}
			if all {
				found = true
				break
			}
		}
		if !found {
			return validationStatusFailure
		}
	}
	return validationStatusSuccess
}

// statusMachineNetworks are the machine networks assisted-service took for the cluster (its
// status), the spec's until it reported them.
func statusMachineNetworks(aci *hiveextv1beta1.AgentClusterInstall) []string {
	var out []string
	for _, m := range aci.Status.MachineNetwork {
		out = append(out, m.CIDR)
	}
	if len(out) == 0 {
		out = networksOf(aci).machine
	}
	return out
}
