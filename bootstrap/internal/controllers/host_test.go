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
	"testing"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	capm3v1beta2 "github.com/metal3-io/cluster-api-provider-metal3/api/v1beta2"
	. "github.com/onsi/gomega"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	capoascheme "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/scheme"
)

func TestBMCDriver(t *testing.T) {
	for address, want := range map[string]string{
		"redfish-virtualmedia://192.0.2.1/redfish/v1/Systems/1":       "redfish-virtualmedia",
		"redfish-virtualmedia+https://192.0.2.1/redfish/v1/Systems/1": "redfish-virtualmedia",
		"idrac-virtualmedia+http://192.0.2.1/redfish/v1/Systems/1":    "idrac-virtualmedia",
		"IPMI://192.0.2.1:623":     "ipmi",
		"192.0.2.1:623":            "ipmi",
		"redfish://192.0.2.1/x":    "redfish",
		"redfish-uefihttp://host/": "redfish-uefihttp",
	} {
		if got := bmcDriver(address); got != want {
			t.Errorf("bmcDriver(%q) = %q, want %q", address, got, want)
		}
	}
}

func TestLiveISOProblem(t *testing.T) {
	host := func(address string, mode bmov1alpha1.BootMode, annotations map[string]string) *bmov1alpha1.BareMetalHost {
		return &bmov1alpha1.BareMetalHost{ObjectMeta: metav1.ObjectMeta{Name: "h", Annotations: annotations},
			Spec: bmov1alpha1.BareMetalHostSpec{BootMode: mode, BMC: bmov1alpha1.BMCDetails{Address: address}}}
	}
	diskFirst := map[string]string{bootstrapv1.LegacyBootDiskFirstAnnotation: "true"}
	for _, tc := range []struct {
		name string
		bmh  *bmov1alpha1.BareMetalHost
		want string // a part of the message; "" when the host is accepted
	}{
		{"virtual media, UEFI", host("redfish-virtualmedia://b/1", bmov1alpha1.UEFI, nil), ""},
		{"virtual media, boot mode unset (UEFI)", host("idrac-virtualmedia://b/1", "", nil), ""},
		{"virtual media, secure boot", host("ilo5-virtualmedia://b/1", bmov1alpha1.UEFISecureBoot, nil), ""},
		{"UEFI HTTP", host("redfish-uefihttp://b/1", bmov1alpha1.UEFI, nil), ""},
		{"IPMI", host("ipmi://b", bmov1alpha1.UEFI, nil), "BMC driver ipmi, which cannot boot the discovery ISO"},
		{"Redfish over iPXE", host("redfish://b/1", bmov1alpha1.UEFI, nil), "BMC driver redfish,"},
		{"iDRAC over iPXE", host("idrac-redfish://b/1", bmov1alpha1.UEFI, nil), "BMC driver idrac-redfish,"},
		{"legacy BIOS", host("redfish-virtualmedia://b/1", bmov1alpha1.Legacy, nil), "legacy BIOS mode"},
		{"legacy BIOS, disk first", host("redfish-virtualmedia://b/1", bmov1alpha1.Legacy, diskFirst), ""},
		{"legacy BIOS, annotation not true", host("redfish-virtualmedia://b/1", bmov1alpha1.Legacy,
			map[string]string{bootstrapv1.LegacyBootDiskFirstAnnotation: "yes"}), "annotate it with " + bootstrapv1.LegacyBootDiskFirstAnnotation + "=true"},
		{"IPMI in legacy mode: the driver is said first", host("ipmi://b", bmov1alpha1.Legacy, diskFirst), "BMC driver ipmi"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			got := liveISOProblem(tc.bmh)
			if tc.want == "" {
				g.Expect(got).To(BeEmpty())
				return
			}
			g.Expect(got).To(ContainSubstring(tc.want))
		})
	}
}

func TestFindAgentEvidence(t *testing.T) {
	const ns = "ns"
	agent := func(name string, macs ...string) *aiv1beta1.Agent {
		a := &aiv1beta1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
			Labels: map[string]string{aiv1beta1.InfraEnvNameLabel: "m1"}}}
		for _, mac := range macs {
			a.Status.Inventory.Interfaces = append(a.Status.Inventory.Interfaces, aiv1beta1.HostInterface{MacAddress: mac})
		}
		return a
	}
	claimed := func(a *aiv1beta1.Agent, config string) *aiv1beta1.Agent {
		a.Labels[bootstrapv1.AgentConfigLabel] = config
		return a
	}
	inspected := func(macs ...string) *bmov1alpha1.HardwareDetails {
		hw := &bmov1alpha1.HardwareDetails{}
		for _, mac := range macs {
			hw.NIC = append(hw.NIC, bmov1alpha1.NIC{MAC: mac})
		}
		return hw
	}
	bmh := func(bootMAC string, hw *bmov1alpha1.HardwareDetails) *bmov1alpha1.BareMetalHost {
		return &bmov1alpha1.BareMetalHost{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "host-0"},
			Spec:   bmov1alpha1.BareMetalHostSpec{BootMACAddress: bootMAC},
			Status: bmov1alpha1.BareMetalHostStatus{HardwareDetails: hw}}
	}
	for _, tc := range []struct {
		name   string
		bmh    *bmov1alpha1.BareMetalHost
		agents []*aiv1beta1.Agent
		// diskImage: the host boots an RHCOS disk image with the discovery ignition.
		diskImage bool
		// wantAgent is the Agent found; when empty, wantReason says why none was.
		wantAgent, wantEvidence, wantReason, wantMessage string
	}{
		{name: "boot MAC, case-insensitive",
			bmh:       bmh("52:54:00:AA:00:01", nil),
			agents:    []*aiv1beta1.Agent{agent("other", "52:54:00:aa:00:02"), agent("mine", "52:54:00:aa:00:01")},
			wantAgent: "mine", wantEvidence: "boot MAC 52:54:00:AA:00:01"},
		{name: "boot MAC not registered yet",
			bmh:        bmh("52:54:00:aa:00:01", nil),
			agents:     []*aiv1beta1.Agent{agent("other", "52:54:00:aa:00:02")},
			wantReason: bootstrapv1.WaitingForAgentReason, wantMessage: "(MAC 52:54:00:aa:00:01) to boot the discovery ISO"},
		{name: "no boot MAC: any MAC that inspection found",
			bmh:       bmh("", inspected("52:54:00:aa:00:09", "52:54:00:aa:00:01")),
			agents:    []*aiv1beta1.Agent{agent("other", "52:54:00:aa:00:02"), agent("mine", "52:54:00:aa:00:01")},
			wantAgent: "mine", wantEvidence: "a MAC that inspection found on BareMetalHost host-0"},
		{name: "no boot MAC, not inspected: the only Agent of the InfraEnv",
			bmh:       bmh("", nil),
			agents:    []*aiv1beta1.Agent{agent("mine", "52:54:00:aa:00:01")},
			wantAgent: "mine", wantEvidence: "the only Agent registered through InfraEnv m1, whose discovery ISO only BareMetalHost host-0 was given"},
		{name: "no boot MAC, not inspected, two Agents: ambiguous, never one of them",
			bmh:        bmh("", nil),
			agents:     []*aiv1beta1.Agent{agent("a", "52:54:00:aa:00:01"), agent("b", "52:54:00:aa:00:02")},
			wantReason: bootstrapv1.AmbiguousAgentsReason, wantMessage: "2 Agents registered through InfraEnv m1 could be this Machine's host (Agent a (host"},
		{name: "no boot MAC, not inspected: an Agent claimed by another config does not count",
			bmh:       bmh("", &bmov1alpha1.HardwareDetails{}),
			agents:    []*aiv1beta1.Agent{claimed(agent("theirs", "52:54:00:aa:00:02"), "m2"), agent("mine", "52:54:00:aa:00:01")},
			wantAgent: "mine", wantEvidence: "the only Agent registered through InfraEnv m1"},
		{name: "no boot MAC, not inspected: the Agent recognized earlier wins",
			bmh:       bmh("", nil),
			agents:    []*aiv1beta1.Agent{agent("new", "52:54:00:aa:00:02"), claimed(agent("mine", "52:54:00:aa:00:01"), "m1")},
			wantAgent: "mine"},
		{name: "no boot MAC, nothing registered",
			bmh:        bmh("", nil),
			wantReason: bootstrapv1.WaitingForAgentReason, wantMessage: "(matched by the only Agent registered through InfraEnv m1"},
		{name: "disk image: not registered yet, the image must read the config drive", diskImage: true,
			bmh:         bmh("52:54:00:aa:00:01", nil),
			wantReason:  bootstrapv1.WaitingForAgentReason,
			wantMessage: "(MAC 52:54:00:aa:00:01) to boot disk image https://mirror.example/rhcos-openstack.qcow2 (an RHCOS image whose Ignition reads the config drive"},
		{name: "disk image, no boot MAC, not inspected: the only Agent of the InfraEnv", diskImage: true,
			bmh:       bmh("", nil),
			agents:    []*aiv1beta1.Agent{agent("mine", "52:54:00:aa:00:01")},
			wantAgent: "mine", wantEvidence: "whose discovery ignition only BareMetalHost host-0 was given"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			objs := make([]client.Object, 0, len(tc.agents))
			for _, a := range tc.agents {
				objs = append(objs, a)
			}
			scheme, err := capoascheme.New(bootstrapv1.AddToScheme)
			g.Expect(err).NotTo(HaveOccurred())
			c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build()
			f := newFixture()
			s := &scope{config: f.config, machine: f.machine, bareMetalHost: tc.bmh, diskImage: tc.diskImage,
				infraEnv:      &aiv1beta1.InfraEnv{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m1"}},
				metal3Machine: &capm3v1beta2.Metal3Machine{Spec: capm3v1beta2.Metal3MachineSpec{Image: capm3v1beta2.Image{URL: "https://mirror.example/rhcos-openstack.qcow2"}}}}
			found, err := (&OpenshiftAssistedConfigReconciler{Client: c}).findAgent(context.Background(), s)
			g.Expect(err).NotTo(HaveOccurred())
			if tc.wantAgent == "" {
				g.Expect(found.agent).To(BeNil())
				g.Expect(found.reason).To(Equal(tc.wantReason))
				g.Expect(found.message).To(ContainSubstring(tc.wantMessage))
				return
			}
			g.Expect(found.agent).NotTo(BeNil())
			g.Expect(found.agent.Name).To(Equal(tc.wantAgent))
			g.Expect(found.evidence).To(ContainSubstring(tc.wantEvidence))
		})
	}
}
