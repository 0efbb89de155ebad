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

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/go-openapi/strfmt"
	"github.com/openshift/assisted-service/models"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/inventory"
)

func step(t *testing.T, typ models.StepType, req any) *models.Step {
	t.Helper()
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	return &models.Step{StepType: typ, Args: []string{string(b)}}
}

// TestReplies: each step's reply from the host and the lab's network: DNS as the lab's name
// server answers it, free addresses and VIPs taken by hosts that are on, connectivity to them.
func TestReplies(t *testing.T) {
	hosts := inventory.Generate("s", 2, inventory.GenerateOptions{})
	me, other := hosts[0], hosts[1]
	n := network{inventory: inventory.New(hosts...), dns: LabDNS}
	now := metav1.Now()
	// A host answers once it runs something: the discovery ISO here.
	me.InsertMedia("http://images.lab/byid/i/4.17/x86_64/minimal.iso", true, inventory.OverrideContinuous)
	me.PowerOn()
	reply := func(s *models.Step) any {
		t.Helper()
		out, err := n.reply(me, s, now, false)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}

	api, wildcard := "api.c.lab", "validateNoWildcardDNS.c.lab."
	dns := reply(step(t, models.StepTypeDomainResolution, models.DomainResolutionRequest{Domains: []models.DomainResolutionRequestDomain{
		{DomainName: &api}, {DomainName: &wildcard}}})).(models.DomainResolutionResponse)
	if len(dns.Resolutions) != 2 || dns.Resolutions[0].IPV4Addresses[0] != LoadBalancerIPv4 || len(dns.Resolutions[1].IPV4Addresses) != 0 {
		t.Fatalf("resolutions %+v %+v", dns.Resolutions[0], dns.Resolutions[1])
	}

	free := reply(step(t, models.StepTypeFreeNetworkAddresses, models.FreeAddressesRequest{"192.168.111.0/24"})).(models.FreeNetworksAddresses)
	has := func(a string) bool {
		for _, f := range free[0].FreeAddresses {
			if string(f) == a {
				return true
			}
		}
		return false
	}
	if has(me.IPv4()) || has(LoadBalancerIPv4) || has("192.168.111.1") || !has(other.IPv4()) || has("192.168.111.255") {
		t.Fatalf("free addresses %v: the host that is on and the gateway are taken, the one that is off is free", free[0].FreeAddresses)
	}

	vip := strfmt.IPv4(me.IPv4())
	vips := reply(step(t, models.StepTypeVerifyVips, models.VerifyVipsRequest{{Vip: models.IP(vip), VipType: models.VipTypeAPI},
		{Vip: "192.168.111.200", VipType: models.VipTypeIngress}})).(models.VerifyVipsResponse)
	if *vips[0].Verification != models.VipVerificationFailed || *vips[1].Verification != models.VipVerificationSucceeded {
		t.Fatalf("VIP verification %s %s", *vips[0].Verification, *vips[1].Verification)
	}

	check := models.ConnectivityCheckParams{{HostID: "o", Nics: []*models.ConnectivityCheckNic{{Name: "enp1s0", Mac: strfmt.MAC(other.BootMAC()),
		IPAddresses: []string{other.NICs[0].IPv4}}}}}
	conn := reply(step(t, models.StepTypeConnectivityCheck, check)).(models.ConnectivityReport)
	if len(conn.RemoteHosts[0].L3Connectivity) != 1 || conn.RemoteHosts[0].L3Connectivity[0].Successful {
		t.Fatalf("connectivity to a host that is off: %+v", conn.RemoteHosts[0].L3Connectivity)
	}
	other.InsertMedia("http://images.lab/byid/i/4.17/x86_64/minimal.iso", true, inventory.OverrideContinuous)
	other.PowerOn()
	conn = reply(step(t, models.StepTypeConnectivityCheck, check)).(models.ConnectivityReport)
	if !conn.RemoteHosts[0].L2Connectivity[0].Successful || !conn.RemoteHosts[0].L3Connectivity[0].Successful {
		t.Fatalf("connectivity to a host that is on: %+v", conn.RemoteHosts[0])
	}

	path := "/dev/sda"
	if d := reply(step(t, models.StepTypeInstallationDiskSpeedCheck, models.DiskSpeedCheckRequest{Path: &path})).(models.DiskSpeedCheckResponse); d.Path != path || d.IoSyncDuration > 20 {
		t.Fatalf("disk speed %+v", d)
	}
	img := reply(step(t, models.StepTypeContainerImageAvailability, models.ContainerImageAvailabilityRequest{Images: []string{"quay.io/a"}})).(models.ContainerImageAvailabilityResponse)
	if img.Images[0].Result != models.ContainerImageAvailabilityResultSuccess {
		t.Fatalf("images %+v", img.Images[0])
	}
	source := "ntp.example.com"
	if ntp := reply(step(t, models.StepTypeNtpSynchronizer, models.NtpSynchronizationRequest{NtpSource: &source})).(models.NtpSynchronizationResponse); ntp.NtpSources[0].SourceName != source {
		t.Fatalf("ntp %+v", ntp.NtpSources[0])
	}

	inv := hostInventory(me, now, true)
	if inv.Memory.PhysicalBytes != 1<<30 || inv.Disks[0].ID == "" || inv.Routes[0].Gateway != "192.168.111.1" {
		t.Fatalf("inventory %+v %+v %+v", inv.Memory, inv.Disks[0], inv.Routes[0])
	}
	if _, err := n.reply(me, &models.Step{StepType: models.StepTypeTangConnectivityCheck}, now, false); err == nil ||
		!strings.Contains(err.Error(), "does not run") {
		t.Fatalf("an unsupported step: %v", err)
	}
	if _, err := n.reply(me, &models.Step{StepType: models.StepTypeNtpSynchronizer, Args: []string{"{"}}, now, false); err == nil {
		t.Fatal("a malformed request was answered")
	}
}

// TestLabDNS: the records an administrator sets up for an assisted installation.
func TestLabDNS(t *testing.T) {
	for name, want := range map[string]string{"api.c.lab": LoadBalancerIPv4, "api-int.c.lab.": LoadBalancerIPv4,
		"console-openshift-console.apps.c.lab": LoadBalancerIPv4, "quay.io": "192.168.111.1", "validateNoWildcardDNS.c.lab": ""} {
		v4, _ := LabDNS(name)
		if got := strings.Join(v4, ","); got != want {
			t.Errorf("LabDNS(%s) = %s, want %s", name, got, want)
		}
	}
	if Gateway("fd2e:6f44:5dd8:c956::14/64") != "fd2e:6f44:5dd8:c956::1" || Gateway("x") != "" {
		t.Error("Gateway")
	}
}
