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
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"

	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
)

// The machine networks are the networks of the cluster's hosts. assisted-service (at 063b2579,
// the API this project pins; docs/research/dual-stack.md) takes them from the
// AgentClusterInstall's spec.networking.machineNetwork and refuses the cluster's registration
// (the AgentClusterInstall's SpecSynced condition False, an input error) when
//   - the networks are dual stack and there are none ("Dual-stack cluster cannot be created with
//     empty Machine Networks", validateVIPAddresses in internal/cluster/validations);
//   - a dual-stack cluster has not exactly one IPv4 and one IPv6 machine network, or a
//     single-stack one has more than one (ValidateDualStackNetworks);
//   - the first machine network, VIP, service and cluster network are not all of one family
//     (ComputePrimaryIPStack, internal/network/dual_stack_validations.go);
//   - the i-th API or ingress VIP is outside the i-th machine network
//     (VerifyVipsForClusterManagedLoadBalancer).
// Its cluster validation "networks-same-address-families" keeps the cluster insufficient when the
// machine networks' families differ from the service networks'. The installer refuses machine
// networks that overlap the cluster or service networks (validateClusterNetwork and
// validateServiceNetwork in pkg/types/validation/installconfig.go). Without machine networks, a
// single-stack cluster gets one from assisted-service: the hosts' network that holds the API VIP,
// or, for single-node OpenShift, the hosts' only network of the cluster's family
// (autoAssignMachineNetworkCidr, internal/cluster/cluster.go).
//
// Upstream's provider has no machine network field: its documentation sets them in the
// install-config override annotation (networking.machineNetwork), which assisted-service merges
// into the install-config after its validations ran without them. Such an object's machine
// networks are written to the AgentClusterInstall as well, so that the validations see them.

// machineNetworks returns the AgentClusterInstall's machine networks of the control plane, for
// the Cluster's networks n, or why they cannot be installed, saying what to change ("" when they
// can).
func machineNetworks(oacp *controlplanev1.OpenshiftAssistedControlPlane, n hiveextv1beta1.Networking) ([]hiveextv1beta1.MachineNetworkEntry, string) {
	field := "spec.config.machineNetworks"
	cidrs := oacp.Spec.Config.MachineNetworks
	fromOverride, err := overrideMachineNetworks(oacp)
	if err != nil {
		return nil, err.Error()
	}
	switch {
	case len(cidrs) == 0 && len(fromOverride) > 0:
		cidrs, field = fromOverride, "networking.machineNetwork of annotation "+controlplanev1.InstallConfigOverrideAnnotation
	case len(cidrs) > 0 && len(fromOverride) > 0 && !sameNetworks(cidrs, fromOverride):
		return nil, fmt.Sprintf("spec.config.machineNetworks %v and networking.machineNetwork %v of annotation %s differ: the installer would "+
			"install the annotation's while assisted-service validates the spec's; remove networking.machineNetwork from the annotation",
			cidrs, fromOverride, controlplanev1.InstallConfigOverrideAnnotation)
	}
	families := make([]string, 0, len(n.ClusterNetwork))
	for _, cn := range n.ClusterNetwork {
		families = append(families, family(netip.MustParsePrefix(cn.CIDR).Addr()))
	}
	if len(cidrs) == 0 {
		if len(families) == 2 {
			return nil, fmt.Sprintf("the Cluster's networks are dual stack (%s first) and assisted-service refuses a dual-stack cluster "+
				"without machine networks: set spec.config.machineNetworks to the hosts' %s and %s networks, in that order",
				families[0], families[0], families[1])
		}
		return nil, ""
	}
	prefixes := make([]netip.Prefix, 0, len(cidrs))
	for i, c := range cidrs {
		p, err := netip.ParsePrefix(c)
		if err != nil {
			return nil, fmt.Sprintf("%s[%d] %q is not a network: write a CIDR such as 192.168.111.0/24 or fd2e:6f44:5dd8:c956::/64", field, i, c)
		}
		prefixes = append(prefixes, p.Masked())
	}
	switch {
	case len(prefixes) == 2 && len(families) == 1:
		return nil, fmt.Sprintf("%s %v are dual stack but the Cluster's networks are %s only: give one machine network of that family, "+
			"or add a pod and a service network of the other family to the Cluster", field, cidrs, families[0])
	case len(prefixes) == 1 && len(families) == 2:
		return nil, fmt.Sprintf("the Cluster's networks are dual stack: %s needs a %s and a %s network, in that order; add the %s one",
			field, families[0], families[1], families[1])
	}
	for i, p := range prefixes {
		if f := family(p.Addr()); f != families[i] {
			return nil, fmt.Sprintf("%s[%d] %s is %s but the Cluster's network %d (%s) is %s: list the machine networks in the IP families "+
				"and order of the Cluster's spec.clusterNetwork (assisted-service requires one primary family for machine, pod and service networks)",
				field, i, cidrs[i], f, i+1, n.ClusterNetwork[i].CIDR, families[i])
		}
		for _, other := range clusterNetworkCIDRs(n) {
			if o := netip.MustParsePrefix(other.cidr); o.Overlaps(p) {
				return nil, fmt.Sprintf("%s[%d] %s overlaps the Cluster's %s network %s, which the installer refuses: "+
					"give the hosts' network, or change the Cluster's spec.clusterNetwork", field, i, cidrs[i], other.kind, other.cidr)
			}
		}
	}
	for _, list := range []struct {
		name string
		vips []string
	}{{"apiVIPs", oacp.Spec.Config.APIVIPs}, {"ingressVIPs", oacp.Spec.Config.IngressVIPs}} {
		for i, vip := range list.vips {
			addr, err := netip.ParseAddr(vip)
			if err != nil || i >= len(prefixes) {
				continue // the CRD schema refuses both
			}
			if !prefixes[i].Contains(addr) {
				return nil, fmt.Sprintf("spec.config.%s[%d] %s is not inside the machine network %s (%s[%d]), as assisted-service requires: "+
					"correct the VIP or the machine network", list.name, i, vip, prefixes[i], field, i)
			}
		}
	}
	entries := make([]hiveextv1beta1.MachineNetworkEntry, 0, len(prefixes))
	for _, p := range prefixes {
		entries = append(entries, hiveextv1beta1.MachineNetworkEntry{CIDR: p.String()})
	}
	return entries, ""
}

type kindCIDR struct{ kind, cidr string }

// clusterNetworkCIDRs are the pod and service networks of n.
func clusterNetworkCIDRs(n hiveextv1beta1.Networking) []kindCIDR {
	out := make([]kindCIDR, 0, len(n.ClusterNetwork)+len(n.ServiceNetwork))
	for _, cn := range n.ClusterNetwork {
		out = append(out, kindCIDR{"pod", cn.CIDR})
	}
	for _, sn := range n.ServiceNetwork {
		out = append(out, kindCIDR{"service", sn})
	}
	return out
}

// overrideMachineNetworks are the CIDRs of networking.machineNetwork in the control plane's
// install-config override annotation, where upstream's provider documents them.
func overrideMachineNetworks(oacp *controlplanev1.OpenshiftAssistedControlPlane) ([]string, error) {
	raw := oacp.Annotations[controlplanev1.InstallConfigOverrideAnnotation]
	if raw == "" {
		return nil, nil
	}
	var o struct {
		Networking struct {
			MachineNetwork []struct {
				CIDR string `json:"cidr"`
			} `json:"machineNetwork"`
		} `json:"networking"`
	}
	if err := json.Unmarshal([]byte(raw), &o); err != nil {
		return nil, fmt.Errorf("annotation %s is not an install-config override (networking.machineNetwork is a list of {\"cidr\": ...}): %w; correct it",
			controlplanev1.InstallConfigOverrideAnnotation, err)
	}
	out := make([]string, 0, len(o.Networking.MachineNetwork))
	for _, mn := range o.Networking.MachineNetwork {
		out = append(out, mn.CIDR)
	}
	return out, nil
}

// sameNetworks tells whether a and b list the same networks in the same order.
func sameNetworks(a, b []string) bool {
	norm := func(l []string) []string {
		out := make([]string, 0, len(l))
		for _, c := range l {
			if p, err := netip.ParsePrefix(c); err == nil {
				c = p.Masked().String()
			}
			out = append(out, c)
		}
		return out
	}
	return slices.Equal(norm(a), norm(b))
}

// networkTypeRefusal says why the network plug-in cannot install the Cluster's networks n ("" when
// it can): OpenShiftSDN has no IPv6 (assisted-service's cluster validation network-type-valid: "The
// cluster is configured with IPv6 which is not supported by OpenShiftSDN; use OVNKubernetes
// instead"; the installer's validateNetworkingIPVersion).
func networkTypeRefusal(n hiveextv1beta1.Networking) string {
	if n.NetworkType != "OpenShiftSDN" {
		return ""
	}
	for _, cn := range n.ClusterNetwork {
		if p := netip.MustParsePrefix(cn.CIDR); p.Addr().Is6() {
			return fmt.Sprintf("spec.config.networkType OpenShiftSDN does not support IPv6 and the Cluster's pod network %s is IPv6: "+
				"use OVNKubernetes (the default), or IPv4 pod and service networks", cn.CIDR)
		}
	}
	return ""
}
