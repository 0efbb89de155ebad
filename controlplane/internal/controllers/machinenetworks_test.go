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
	"reflect"
	"strings"
	"testing"

	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
)

func TestMachineNetworks(t *testing.T) {
	v4 := []string{"10.128.0.0/14"}
	v6 := []string{"fd01::/48"}
	dual := []string{"10.128.0.0/14", "fd01::/48"}
	dualV6First := []string{"fd01::/48", "10.128.0.0/14"}
	services := map[string][]string{"v4": {"172.30.0.0/16"}, "v6": {"fd02::/112"}, "dual": {"172.30.0.0/16", "fd02::/112"}, "dual6": {"fd02::/112", "172.30.0.0/16"}}
	const override = `{"networking":{"machineNetwork":[{"cidr":"192.168.111.0/24"},{"cidr":"fd2e:6f44:5dd8:c956::/64"}]}}`
	for name, tc := range map[string]struct {
		pods      []string
		services  string
		vips      []string
		networks  []string
		annotated string
		want      []string
		wantWhy   string
	}{
		"IPv4 without machine networks":  {pods: v4, services: "v4", vips: []string{"192.168.111.5"}},
		"IPv6 without machine networks":  {pods: v6, services: "v6", vips: []string{"fd2e:6f44:5dd8:c956::5"}},
		"IPv4":                           {pods: v4, services: "v4", vips: []string{"192.168.111.5"}, networks: []string{"192.168.111.0/24"}, want: []string{"192.168.111.0/24"}},
		"IPv6, written masked":           {pods: v6, services: "v6", vips: []string{"fd2e:6f44:5dd8:c956::5"}, networks: []string{"fd2e:6f44:5dd8:c956::1/64"}, want: []string{"fd2e:6f44:5dd8:c956::/64"}},
		"dual stack":                     {pods: dual, services: "dual", vips: []string{"192.168.111.5", "fd2e:6f44:5dd8:c956::5"}, networks: []string{"192.168.111.0/24", "fd2e:6f44:5dd8:c956::/64"}, want: []string{"192.168.111.0/24", "fd2e:6f44:5dd8:c956::/64"}},
		"dual stack IPv6 first":          {pods: dualV6First, services: "dual6", vips: []string{"fd2e:6f44:5dd8:c956::5"}, networks: []string{"fd2e:6f44:5dd8:c956::/64", "192.168.111.0/24"}, want: []string{"fd2e:6f44:5dd8:c956::/64", "192.168.111.0/24"}},
		"upstream's override annotation": {pods: dual, services: "dual", vips: []string{"192.168.111.5"}, annotated: override, want: []string{"192.168.111.0/24", "fd2e:6f44:5dd8:c956::/64"}},
		"the spec and the same override": {pods: dual, services: "dual", vips: []string{"192.168.111.5"}, annotated: override, networks: []string{"192.168.111.0/24", "fd2e:6f44:5dd8:c956::/64"}, want: []string{"192.168.111.0/24", "fd2e:6f44:5dd8:c956::/64"}},
		"the spec and another override": {pods: dual, services: "dual", vips: []string{"192.168.111.5"}, annotated: override, networks: []string{"192.168.112.0/24", "fd2e:6f44:5dd8:c956::/64"},
			wantWhy: "spec.config.machineNetworks [192.168.112.0/24 fd2e:6f44:5dd8:c956::/64] and networking.machineNetwork [192.168.111.0/24 fd2e:6f44:5dd8:c956::/64] of annotation controlplane.cluster.x-k8s.io/install-config-override differ: the installer would install the annotation's while assisted-service validates the spec's; remove networking.machineNetwork from the annotation"},
		"dual stack without machine networks": {pods: dual, services: "dual", vips: []string{"192.168.111.5"},
			wantWhy: "the Cluster's networks are dual stack (IPv4 first) and assisted-service refuses a dual-stack cluster without machine networks: set spec.config.machineNetworks to the hosts' IPv4 and IPv6 networks, in that order"},
		"dual stack with one machine network": {pods: dual, services: "dual", vips: []string{"192.168.111.5"}, networks: []string{"192.168.111.0/24"},
			wantWhy: "the Cluster's networks are dual stack: spec.config.machineNetworks needs a IPv4 and a IPv6 network, in that order; add the IPv6 one"},
		"dual-stack machine networks on an IPv4 cluster": {pods: v4, services: "v4", vips: []string{"192.168.111.5"}, networks: []string{"192.168.111.0/24", "fd2e:6f44:5dd8:c956::/64"},
			wantWhy: "spec.config.machineNetworks [192.168.111.0/24 fd2e:6f44:5dd8:c956::/64] are dual stack but the Cluster's networks are IPv4 only: give one machine network of that family, or add a pod and a service network of the other family to the Cluster"},
		"order differs from the Cluster's": {pods: dualV6First, services: "dual6", networks: []string{"192.168.111.0/24", "fd2e:6f44:5dd8:c956::/64"},
			wantWhy: "spec.config.machineNetworks[0] 192.168.111.0/24 is IPv4 but the Cluster's network 1 (fd01::/48) is IPv6: list the machine networks in the IP families and order of the Cluster's spec.clusterNetwork (assisted-service requires one primary family for machine, pod and service networks)"},
		"IPv6 machine network on an IPv4 cluster": {pods: v4, services: "v4", networks: []string{"fd2e:6f44:5dd8:c956::/64"},
			wantWhy: "spec.config.machineNetworks[0] fd2e:6f44:5dd8:c956::/64 is IPv6 but the Cluster's network 1 (10.128.0.0/14) is IPv4"},
		"overlaps the service network": {pods: v4, services: "v4", networks: []string{"172.30.0.0/24"},
			wantWhy: "spec.config.machineNetworks[0] 172.30.0.0/24 overlaps the Cluster's service network 172.30.0.0/16, which the installer refuses: give the hosts' network, or change the Cluster's spec.clusterNetwork"},
		"VIP of the override outside its network": {pods: v4, services: "v4", vips: []string{"192.168.222.40"}, annotated: `{"networking":{"machineNetwork":[{"cidr":"10.0.0.0/16"}]}}`,
			wantWhy: "spec.config.apiVIPs[0] 192.168.222.40 is not inside the machine network 10.0.0.0/16 (networking.machineNetwork of annotation controlplane.cluster.x-k8s.io/install-config-override[0]), as assisted-service requires: correct the VIP or the machine network"},
		"override that is not a network": {pods: v4, services: "v4", annotated: `{"networking":{"machineNetwork":[{"cidr":"10.0.0.1"}]}}`,
			wantWhy: `networking.machineNetwork of annotation controlplane.cluster.x-k8s.io/install-config-override[0] "10.0.0.1" is not a network`},
		"override of another shape": {pods: v4, services: "v4", annotated: `{"networking":{"machineNetwork":"10.0.0.0/16"}}`,
			wantWhy: "annotation controlplane.cluster.x-k8s.io/install-config-override is not an install-config override (networking.machineNetwork is a list of {\"cidr\": ...})"},
	} {
		t.Run(name, func(t *testing.T) {
			oacp := testOACP(3, tc.vips...)
			oacp.Spec.Config.MachineNetworks = tc.networks
			if tc.annotated != "" {
				oacp.Annotations = map[string]string{controlplanev1.InstallConfigOverrideAnnotation: tc.annotated}
			}
			n, err := networking(oacp, testCluster(tc.pods, services[tc.services]))
			if err != nil {
				t.Fatal(err)
			}
			got, why := machineNetworks(oacp, n)
			if tc.wantWhy != "" {
				if !strings.HasPrefix(why, tc.wantWhy) || got != nil {
					t.Fatalf("got %v, %q\nwant the refusal %q", got, why, tc.wantWhy)
				}
				return
			}
			if why != "" {
				t.Fatalf("refused: %s", why)
			}
			var cidrs []string
			for _, e := range got {
				cidrs = append(cidrs, e.CIDR)
			}
			if !reflect.DeepEqual(cidrs, tc.want) {
				t.Errorf("got %v, want %v", cidrs, tc.want)
			}
		})
	}
}

// TestMachineNetworksReachTheAgentClusterInstall: desiredAgentClusterInstall writes the machine
// networks to spec.networking.machineNetwork, and refuses what assisted-service refuses as the
// control plane's InvalidSpec problem.
func TestMachineNetworksReachTheAgentClusterInstall(t *testing.T) {
	oacp := testOACP(3, "192.168.111.5", "fd2e:6f44:5dd8:c956::5")
	oacp.Spec.Config.MachineNetworks = []string{"192.168.111.0/24", "fd2e:6f44:5dd8:c956::/64"}
	cluster := testCluster([]string{"10.128.0.0/14", "fd01::/48"}, []string{"172.30.0.0/16", "fd02::/112"})
	aci := &hiveextv1beta1.AgentClusterInstall{}
	if err := desiredAgentClusterInstall(aci, oacp, cluster, 0); err != nil {
		t.Fatal(err)
	}
	want := []hiveextv1beta1.MachineNetworkEntry{{CIDR: "192.168.111.0/24"}, {CIDR: "fd2e:6f44:5dd8:c956::/64"}}
	if !reflect.DeepEqual(aci.Spec.Networking.MachineNetwork, want) {
		t.Errorf("machineNetwork = %+v, want %+v", aci.Spec.Networking.MachineNetwork, want)
	}
	oacp.Spec.Config.MachineNetworks = nil
	err := desiredAgentClusterInstall(aci, oacp, cluster, 0)
	if err == nil || !strings.Contains(err.Error(), "assisted-service refuses a dual-stack cluster without machine networks") {
		t.Errorf("error = %v, want the refusal of a dual-stack cluster without machine networks", err)
	}
	oacp = testOACP(3, "fd2e:6f44:5dd8:c956::5")
	oacp.Spec.Config.NetworkType = "OpenShiftSDN"
	err = desiredAgentClusterInstall(aci, oacp, testCluster([]string{"fd01::/48"}, []string{"fd02::/112"}), 0)
	if err == nil || !strings.Contains(err.Error(), "spec.config.networkType OpenShiftSDN does not support IPv6 and the Cluster's pod network fd01::/48 is IPv6") {
		t.Errorf("error = %v, want the refusal of IPv6 with OpenShiftSDN", err)
	}
}

func TestNetworkTypeRefusal(t *testing.T) {
	for name, tc := range map[string]struct {
		networkType string
		pods        []string
		want        bool
	}{
		"OVN-Kubernetes, IPv6": {"OVNKubernetes", []string{"fd01::/48"}, false},
		"OpenShiftSDN, IPv4":   {"OpenShiftSDN", []string{"10.128.0.0/14"}, false},
		"OpenShiftSDN, IPv6":   {"OpenShiftSDN", []string{"fd01::/48"}, true},
		"OpenShiftSDN, dual":   {"OpenShiftSDN", []string{"10.128.0.0/14", "fd01::/48"}, true},
		"the default, IPv6":    {"", []string{"fd01::/48"}, false},
	} {
		t.Run(name, func(t *testing.T) {
			oacp := testOACP(3)
			oacp.Spec.Config.NetworkType = tc.networkType
			services := map[int][]string{1: {"172.30.0.0/16"}, 2: {"172.30.0.0/16", "fd02::/112"}}[len(tc.pods)]
			if tc.pods[0] == "fd01::/48" {
				services = []string{"fd02::/112"}
			}
			n, err := networking(oacp, testCluster(tc.pods, services))
			if err != nil {
				t.Fatal(err)
			}
			if got := networkTypeRefusal(n) != ""; got != tc.want {
				t.Errorf("refused = %v, want %v", got, tc.want)
			}
		})
	}
}
