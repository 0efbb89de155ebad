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
	"testing"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/types"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	"github.com/openshift/assisted-service/models"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
)

// TestStaticHostname: the hostname the hub knows before the host is chosen is
// nodeRegistration.name, else the Machine's name, and none while the name is a host metadata
// variable (resolved once the host is known).
func TestStaticHostname(t *testing.T) {
	for _, tc := range []struct {
		name, nodeName, want string
	}{
		{name: "unset: the Machine's name", want: "machine-0"},
		{name: "set", nodeName: "worker-a.example.com", want: "worker-a.example.com"},
		{name: "a host metadata variable", nodeName: "$METADATA_NAME", want: ""},
		{name: "a host metadata variable in braces", nodeName: "${METADATA_NAME}", want: ""},
		{name: "a variable inside a value is no whole variable", nodeName: "host-$METADATA_NAME", want: "host-$METADATA_NAME"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			config := &bootstrapv1.OpenshiftAssistedConfig{Spec: bootstrapv1.OpenshiftAssistedConfigSpec{
				NodeRegistration: bootstrapv1.NodeRegistrationOptions{Name: tc.nodeName}}}
			machine := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "machine-0"}}
			g.Expect(staticHostname(config, machine)).To(Equal(tc.want))
		})
	}
}

// TestRole: master for a control-plane Machine, arbiter for the control plane's arbiter Machine,
// worker otherwise (an arbiter label on a worker Machine included).
func TestRole(t *testing.T) {
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   models.HostRole
	}{
		{name: "no labels", want: models.HostRoleWorker},
		{name: "control plane", labels: map[string]string{clusterv1.MachineControlPlaneLabel: ""}, want: models.HostRoleMaster},
		{name: "arbiter of the control plane", labels: map[string]string{clusterv1.MachineControlPlaneLabel: "", controlplanev1.ArbiterMachineLabel: ""},
			want: "arbiter"},
		{name: "arbiter label alone", labels: map[string]string{controlplanev1.ArbiterMachineLabel: ""}, want: models.HostRoleWorker},
		{name: "other labels", labels: map[string]string{"node-role.kubernetes.io/master": ""}, want: models.HostRoleWorker},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(role(&clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Labels: tc.labels}})).To(Equal(tc.want))
		})
	}
}

// TestDesiredAgentSettings: the settings of a Machine's Agent, exactly, from the config, the
// Machine, the BareMetalHost and the host's metadata; and each error that holds the approval back,
// with its message.
func TestDesiredAgentSettings(t *testing.T) {
	env := map[string]string{"METADATA_NAME": "host-7", "METADATA_UUID": "8f0c"}
	providerIDOverride, err := installIgnitionOverride(&bootstrapv1.OpenshiftAssistedConfig{}, "metal3://8f0c")
	if err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{bootstrapv1.AgentConfigLabel: "cfg", clusterv1.ClusterNameLabel: "c1"}
	for _, tc := range []struct {
		name string
		set  func(*mappingInput)
		want agentSettings
		// wantErr matches the error's message.
		wantErr types.GomegaMatcher
	}{
		{
			name: "worker without BareMetalHost",
			set:  func(*mappingInput) {},
			want: agentSettings{Role: models.HostRoleWorker, Hostname: "machine-0", NodeLabels: map[string]string{}, Labels: labels},
		},
		{
			name: "control plane with a hostname",
			set: func(in *mappingInput) {
				in.machine.Labels = map[string]string{clusterv1.MachineControlPlaneLabel: ""}
				in.config.Spec.NodeRegistration.Name = "cp-0.example.com"
			},
			want: agentSettings{Role: models.HostRoleMaster, Hostname: "cp-0.example.com", NodeLabels: map[string]string{}, Labels: labels},
		},
		{
			name: "kubelet labels: key=value, a key alone, a quoted value, a variable",
			set: func(in *mappingInput) {
				in.config.Spec.NodeRegistration.KubeletExtraLabels = []string{"rack=r1", "node-role.kubernetes.io/infra", `zone="z1"`, "host=${METADATA_NAME}"}
				in.env = env
			},
			want: agentSettings{Role: models.HostRoleWorker, Hostname: "machine-0", Labels: labels,
				NodeLabels: map[string]string{"rack": "r1", "node-role.kubernetes.io/infra": "", "zone": "z1", "host": "host-7"}},
		},
		{
			name: "BareMetalHost: its UID labels the Node, over a kubelet label of the same key",
			set: func(in *mappingInput) {
				in.config.Spec.NodeRegistration.KubeletExtraLabels = []string{metal3ProviderIDLabel + "=other"}
				in.bmh = &bmov1alpha1.BareMetalHost{ObjectMeta: metav1.ObjectMeta{Name: "bmh-0", UID: "bmh-uid"}}
				in.env = env
			},
			want: agentSettings{Role: models.HostRoleWorker, Hostname: "machine-0", Labels: labels,
				NodeLabels: map[string]string{metal3ProviderIDLabel: "bmh-uid"}},
		},
		{
			name: "BareMetalHost with rootDeviceHints: the installation disk",
			set: func(in *mappingInput) {
				in.bmh = &bmov1alpha1.BareMetalHost{ObjectMeta: metav1.ObjectMeta{Name: "bmh-0", UID: "bmh-uid"},
					Spec: bmov1alpha1.BareMetalHostSpec{RootDeviceHints: &bmov1alpha1.RootDeviceHints{Model: "fast"}}}
				in.env = env
			},
			want: agentSettings{Role: models.HostRoleWorker, Hostname: "machine-0", Labels: labels, InstallationDiskID: "/dev/disk/by-id/nvme0n1",
				NodeLabels: map[string]string{metal3ProviderIDLabel: "bmh-uid"}},
		},
		{
			name: "hostname and providerID from the host's metadata",
			set: func(in *mappingInput) {
				in.config.Spec.NodeRegistration.Name = "$METADATA_NAME"
				in.config.Spec.NodeRegistration.ProviderID = "metal3://$METADATA_UUID"
				in.env = env
			},
			want: agentSettings{Role: models.HostRoleWorker, Hostname: "host-7", Labels: labels, NodeLabels: map[string]string{},
				IgnitionConfigOverrides: providerIDOverride},
		},
		{
			name: "hostname from an unknown variable",
			set: func(in *mappingInput) {
				in.config.Spec.NodeRegistration.Name = "$METADATA_RACK"
				in.env = env
			},
			wantErr: Equal("nodeRegistration.name: $METADATA_RACK names no metadata of the host (it has METADATA_NAME, METADATA_UUID): " +
				"correct the variable or add the key to the Metal3DataTemplate's metaData"),
		},
		{
			name: "providerID other than the infrastructure provider's",
			set: func(in *mappingInput) {
				in.config.Spec.NodeRegistration.ProviderID = "metal3://fixed"
				in.machine.Spec.ProviderID = "metal3://other"
			},
			wantErr: Equal(`nodeRegistration.providerID resolves to "metal3://fixed", but the infrastructure provider reports "metal3://other" for Machine machine-0: ` +
				"Cluster API would never find the Machine's Node; remove providerID or make it resolve to the infrastructure provider's"),
		},
		{
			name: "kubelet label without a key",
			set: func(in *mappingInput) {
				in.config.Spec.NodeRegistration.KubeletExtraLabels = []string{"rack=r1", "=value"}
			},
			wantErr: Equal(`nodeRegistration.kubeletExtraLabels entry "=value" has no key (want key=value)`),
		},
		{
			name: "kubelet label from a variable without Metal3 metadata",
			set: func(in *mappingInput) {
				in.config.Spec.NodeRegistration.KubeletExtraLabels = []string{"host=$METADATA_NAME"}
			},
			wantErr: Equal(`nodeRegistration.kubeletExtraLabels entry "host=$METADATA_NAME": $METADATA_NAME names a host metadata variable, ` +
				"which only a Metal3 host (a BareMetalHost's metadata) provides; this Machine has none: write the value itself"),
		},
		{
			name: "kubelet label that resolves to no label value",
			set: func(in *mappingInput) {
				in.config.Spec.NodeRegistration.KubeletExtraLabels = []string{"host=$METADATA_NAME"}
				in.env = map[string]string{"METADATA_NAME": "not a label"}
			},
			wantErr: HavePrefix(`nodeRegistration.kubeletExtraLabels entry "host=$METADATA_NAME" resolves to "not a label", which is not a label value: `),
		},
		{
			name: "rootDeviceHints that match no disk",
			set: func(in *mappingInput) {
				in.bmh = &bmov1alpha1.BareMetalHost{ObjectMeta: metav1.ObjectMeta{Name: "bmh-0"},
					Spec: bmov1alpha1.BareMetalHostSpec{RootDeviceHints: &bmov1alpha1.RootDeviceHints{Model: "none"}}}
			},
			wantErr: Equal(`BareMetalHost bmh-0 rootDeviceHints: no disk of the Agent's inventory matches {"model":"none"}`),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			in := baseInput()
			tc.set(&in)
			got, err := desiredAgentSettings(in.config, in.machine, in.bmh, in.env, in.agent)
			if tc.wantErr != nil {
				g.Expect(err).To(MatchError(tc.wantErr))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(tc.want))
		})
	}
}

// TestApplyAgentSettings: the settings are set on the Agent and it is approved; the labels and
// node labels are merged into the Agent's (others are kept), and an empty installation disk
// leaves the Agent's as it is.
func TestApplyAgentSettings(t *testing.T) {
	t.Run("onto an Agent with settings", func(t *testing.T) {
		g := NewWithT(t)
		agent := &aiv1beta1.Agent{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"keep": "me", clusterv1.ClusterNameLabel: "old"}},
			Spec: aiv1beta1.AgentSpec{Role: models.HostRoleWorker, Hostname: "old", InstallationDiskID: "/dev/sda",
				IgnitionConfigOverrides: `{"old":true}`, NodeLabels: map[string]string{"kept": "label", "rack": "r0"}},
		}
		applyAgentSettings(agent, agentSettings{Role: models.HostRoleMaster, Hostname: "cp-0", IgnitionConfigOverrides: "",
			NodeLabels: map[string]string{"rack": "r1"}, Labels: map[string]string{bootstrapv1.AgentConfigLabel: "cfg", clusterv1.ClusterNameLabel: "c1"}})
		g.Expect(agent.Labels).To(Equal(map[string]string{"keep": "me", bootstrapv1.AgentConfigLabel: "cfg", clusterv1.ClusterNameLabel: "c1"}))
		g.Expect(agent.Spec).To(Equal(aiv1beta1.AgentSpec{Role: models.HostRoleMaster, Hostname: "cp-0", InstallationDiskID: "/dev/sda",
			NodeLabels: map[string]string{"kept": "label", "rack": "r1"}, Approved: true}))
	})
	t.Run("onto an Agent without labels", func(t *testing.T) {
		g := NewWithT(t)
		agent := &aiv1beta1.Agent{}
		applyAgentSettings(agent, agentSettings{Role: models.HostRoleWorker, Hostname: "w-0", InstallationDiskID: "/dev/disk/by-id/nvme0n1",
			IgnitionConfigOverrides: `{"ignition":{"version":"3.2.0"}}`, NodeLabels: map[string]string{}, Labels: map[string]string{bootstrapv1.AgentConfigLabel: "cfg"}})
		g.Expect(agent.Labels).To(Equal(map[string]string{bootstrapv1.AgentConfigLabel: "cfg"}))
		g.Expect(agent.Spec).To(Equal(aiv1beta1.AgentSpec{Role: models.HostRoleWorker, Hostname: "w-0", InstallationDiskID: "/dev/disk/by-id/nvme0n1",
			IgnitionConfigOverrides: `{"ignition":{"version":"3.2.0"}}`, Approved: true}), "no node labels to set: none added")
	})
}

// TestReleaseAgent: the Agent is unapproved and loses the labels this provider set, and only
// those.
func TestReleaseAgent(t *testing.T) {
	g := NewWithT(t)
	agent := &aiv1beta1.Agent{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"keep": "me", aiv1beta1.InfraEnvNameLabel: "cfg",
			bootstrapv1.AgentConfigLabel: "cfg", clusterv1.ClusterNameLabel: "c1"}},
		Spec: aiv1beta1.AgentSpec{Approved: true, Role: models.HostRoleWorker, Hostname: "w-0"},
	}
	releaseAgent(agent)
	g.Expect(agent.Labels).To(Equal(map[string]string{"keep": "me", aiv1beta1.InfraEnvNameLabel: "cfg"}))
	g.Expect(agent.Spec).To(Equal(aiv1beta1.AgentSpec{Role: models.HostRoleWorker, Hostname: "w-0"}))

	unlabelled := &aiv1beta1.Agent{Spec: aiv1beta1.AgentSpec{Approved: true}}
	releaseAgent(unlabelled)
	g.Expect(unlabelled.Spec.Approved).To(BeFalse())
	g.Expect(unlabelled.Labels).To(BeNil())
}

// TestDiskMatchingHints: the first installation-eligible disk of the inventory that matches every
// set hint, as Ironic matches them (a device name by any of the disk's paths, exact values, a
// minimum size); an error that names the hints when none does.
func TestDiskMatchingHints(t *testing.T) {
	eligible := aiv1beta1.HostInstallationEligibility{Eligible: true}
	disks := []aiv1beta1.HostDisk{
		{ID: "usb", Name: "sdc", Path: "/dev/sdc", SizeBytes: 900e9, DriveType: "SSD", Model: "fast", Serial: "s-c",
			InstallationEligibility: aiv1beta1.HostInstallationEligibility{NotEligibleReasons: []string{"removable"}}},
		{ID: "sda", Name: "sda", Path: "/dev/sda", ByPath: "/dev/disk/by-path/pci-0000:00:1f.2-ata-1", ByID: "/dev/disk/by-id/wwn-0x5000a",
			SizeBytes: 100e9, DriveType: "HDD", Model: "slow", Vendor: "seagate", Serial: "s-a", Wwn: "0x5000a", Hctl: "0:0:0:0",
			InstallationEligibility: eligible},
		{ID: "nvme", Name: "nvme0n1", Path: "/dev/nvme0n1", ByPath: "/dev/disk/by-path/pci-0000:01:00.0-nvme-1", ByID: "/dev/disk/by-id/nvme-eui.1",
			SizeBytes: 500e9, DriveType: "SSD", Model: "fast", Vendor: "acme", Serial: "s-b", Wwn: "0x5000b", Hctl: "1:0:0:0",
			InstallationEligibility: eligible},
	}
	for _, tc := range []struct {
		name  string
		hints bmov1alpha1.RootDeviceHints
		want  string
	}{
		{name: "no hint: the first eligible disk", want: "sda"},
		{name: "deviceName as the path", hints: bmov1alpha1.RootDeviceHints{DeviceName: "/dev/nvme0n1"}, want: "nvme"},
		{name: "deviceName as the by-path link", hints: bmov1alpha1.RootDeviceHints{DeviceName: "/dev/disk/by-path/pci-0000:01:00.0-nvme-1"}, want: "nvme"},
		{name: "deviceName as the by-id link", hints: bmov1alpha1.RootDeviceHints{DeviceName: "/dev/disk/by-id/nvme-eui.1"}, want: "nvme"},
		{name: "deviceName unknown", hints: bmov1alpha1.RootDeviceHints{DeviceName: "/dev/sdz"}},
		{name: "hctl", hints: bmov1alpha1.RootDeviceHints{HCTL: "1:0:0:0"}, want: "nvme"},
		{name: "model", hints: bmov1alpha1.RootDeviceHints{Model: "slow"}, want: "sda"},
		{name: "vendor", hints: bmov1alpha1.RootDeviceHints{Vendor: "acme"}, want: "nvme"},
		{name: "serialNumber", hints: bmov1alpha1.RootDeviceHints{SerialNumber: "s-b"}, want: "nvme"},
		{name: "wwn", hints: bmov1alpha1.RootDeviceHints{WWN: "0x5000b"}, want: "nvme"},
		{name: "wwnWithExtension", hints: bmov1alpha1.RootDeviceHints{WWNWithExtension: "0x5000a"}, want: "sda"},
		{name: "wwnVendorExtension is not checked", hints: bmov1alpha1.RootDeviceHints{WWNVendorExtension: "0x1"}, want: "sda"},
		{name: "minSizeGigabytes equal to a disk's size", hints: bmov1alpha1.RootDeviceHints{MinSizeGigabytes: 100}, want: "sda"},
		{name: "minSizeGigabytes above a disk's size", hints: bmov1alpha1.RootDeviceHints{MinSizeGigabytes: 101}, want: "nvme"},
		{name: "minSizeGigabytes above every disk's size", hints: bmov1alpha1.RootDeviceHints{MinSizeGigabytes: 501}},
		{name: "rotational", hints: bmov1alpha1.RootDeviceHints{Rotational: ptr.To(true)}, want: "sda"},
		{name: "not rotational", hints: bmov1alpha1.RootDeviceHints{Rotational: ptr.To(false)}, want: "nvme"},
		{name: "every hint must match", hints: bmov1alpha1.RootDeviceHints{Model: "fast", Vendor: "seagate"}},
		{name: "an ineligible disk that matches is passed over", hints: bmov1alpha1.RootDeviceHints{Model: "fast"}, want: "nvme"},
		{name: "only an ineligible disk matches", hints: bmov1alpha1.RootDeviceHints{SerialNumber: "s-c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			got, err := diskMatchingHints(disks, &tc.hints)
			if tc.want == "" {
				g.Expect(err).To(MatchError(HavePrefix("no disk of the Agent's inventory matches {")))
				g.Expect(got).To(BeEmpty())
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(tc.want))
		})
	}

	g := NewWithT(t)
	_, err := diskMatchingHints(nil, &bmov1alpha1.RootDeviceHints{Model: "fast", MinSizeGigabytes: 200, Rotational: ptr.To(false)})
	g.Expect(err).To(MatchError(`no disk of the Agent's inventory matches {"model":"fast","minSizeGigabytes":200,"rotational":false}`))
}

// TestUnmatchedHintsSayTheSameEachTime: the message of hints that match no disk is the same in
// every reconcile, where the BareMetalHost is a new copy from the cache each time: it becomes the
// AgentRegistered condition's message, and a message that changed each time would write the
// config's status, and so reconcile it again, without end.
func TestUnmatchedHintsSayTheSameEachTime(t *testing.T) {
	g := NewWithT(t)
	in := baseInput()
	bmh := &bmov1alpha1.BareMetalHost{ObjectMeta: metav1.ObjectMeta{Name: "bmh-0"},
		Spec: bmov1alpha1.BareMetalHostSpec{RootDeviceHints: &bmov1alpha1.RootDeviceHints{Rotational: ptr.To(true), MinSizeGigabytes: 1000}}}
	_, first := desiredAgentSettings(in.config, in.machine, bmh.DeepCopy(), nil, in.agent)
	_, second := desiredAgentSettings(in.config, in.machine, bmh.DeepCopy(), nil, in.agent)
	g.Expect(first).To(MatchError(`BareMetalHost bmh-0 rootDeviceHints: no disk of the Agent's inventory matches {"minSizeGigabytes":1000,"rotational":true}`))
	g.Expect(second).To(MatchError(first.Error()))
}

// TestHasMAC: an inventory interface has the MAC address, compared without case; an empty MAC
// address matches no interface, not even one without an address.
func TestHasMAC(t *testing.T) {
	agent := &aiv1beta1.Agent{Status: aiv1beta1.AgentStatus{Inventory: aiv1beta1.HostInventory{Interfaces: []aiv1beta1.HostInterface{
		{Name: "eth0", MacAddress: "52:54:00:AA:00:01"}, {Name: "lo"}, {Name: "eth1", MacAddress: "52:54:00:aa:00:02"},
	}}}}
	for _, tc := range []struct {
		mac  string
		want bool
	}{
		{mac: "52:54:00:aa:00:01", want: true},
		{mac: "52:54:00:AA:00:02", want: true},
		{mac: "52:54:00:aa:00:03", want: false},
		{mac: "", want: false},
	} {
		t.Run(tc.mac, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(hasMAC(agent, tc.mac)).To(Equal(tc.want))
		})
	}
	NewWithT(t).Expect(hasMAC(&aiv1beta1.Agent{}, "52:54:00:aa:00:01")).To(BeFalse(), "an Agent without inventory")
}

// TestRootDeviceHints checks that each hint of the BareMetalHost selects the disk the Agent is
// installed on.
func TestRootDeviceHints(t *testing.T) {
	for _, tc := range []struct {
		name  string
		hints bmov1alpha1.RootDeviceHints
		want  string
	}{
		{"deviceName", bmov1alpha1.RootDeviceHints{DeviceName: "/dev/nvme0n1"}, "/dev/disk/by-id/nvme0n1"},
		{"hctl", bmov1alpha1.RootDeviceHints{HCTL: "1:0:0:0"}, "/dev/disk/by-id/nvme0n1"},
		{"model", bmov1alpha1.RootDeviceHints{Model: "slow"}, "/dev/disk/by-id/sda"},
		{"vendor", bmov1alpha1.RootDeviceHints{Vendor: "acme"}, "/dev/disk/by-id/nvme0n1"},
		{"serialNumber", bmov1alpha1.RootDeviceHints{SerialNumber: "s-a"}, "/dev/disk/by-id/sda"},
		{"minSizeGigabytes", bmov1alpha1.RootDeviceHints{MinSizeGigabytes: 200}, "/dev/disk/by-id/nvme0n1"},
		{"wwn", bmov1alpha1.RootDeviceHints{WWN: "0x5000"}, "/dev/disk/by-id/nvme0n1"},
		{"rotational", bmov1alpha1.RootDeviceHints{Rotational: ptr.To(true)}, "/dev/disk/by-id/sda"},
		{"not rotational", bmov1alpha1.RootDeviceHints{Rotational: ptr.To(false)}, "/dev/disk/by-id/nvme0n1"},
		{"several hints", bmov1alpha1.RootDeviceHints{Model: "fast", MinSizeGigabytes: 100}, "/dev/disk/by-id/nvme0n1"},
		{"no match", bmov1alpha1.RootDeviceHints{Model: "none"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			in := baseInput()
			hints := tc.hints
			in.bmh = &bmov1alpha1.BareMetalHost{ObjectMeta: metav1.ObjectMeta{Name: "bmh-0"},
				Spec: bmov1alpha1.BareMetalHostSpec{RootDeviceHints: &hints}}
			settings, err := desiredAgentSettings(in.config, in.machine, in.bmh, in.env, in.agent)
			if tc.want == "" {
				g.Expect(err).To(MatchError(ContainSubstring("no disk")))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(settings.InstallationDiskID).To(Equal(tc.want))
		})
	}
}

// TestInvalidKubeletExtraLabel checks that an entry without a key is refused (and the Agent so
// not approved) rather than turned into a Node label.
func TestInvalidKubeletExtraLabel(t *testing.T) {
	g := NewWithT(t)
	in := baseInput()
	in.config.Spec.NodeRegistration.KubeletExtraLabels = []string{"=value"}
	_, err := desiredAgentSettings(in.config, in.machine, nil, nil, in.agent)
	g.Expect(err).To(MatchError(ContainSubstring("has no key")))
}

// TestMetadataVariablesThatCannotBeResolved: a variable without Metal3 metadata, one the host's
// metadata lacks, and one whose value is no hostname or label value each hold the approval back
// with what to do.
func TestMetadataVariablesThatCannotBeResolved(t *testing.T) {
	env := map[string]string{"METADATA_NAME": "Host_7", "METADATA_UUID": "8f0c"}
	for _, tc := range []struct {
		name, hostname string
		labels         []string
		env            map[string]string
		want           string
	}{
		{"no Metal3 host", "$METADATA_NAME", nil, nil, "only a Metal3 host"},
		{"unknown key", "$METADATA_RACK", nil, env, "names no metadata of the host (it has METADATA_NAME, METADATA_UUID)"},
		{"not a hostname", "$METADATA_NAME", nil, env, `resolves to "Host_7", which is not a hostname`},
		{"label from an unknown key", "", []string{"rack=$METADATA_RACK"}, env, "names no metadata of the host"},
		{"not a label value", "", []string{"id=${METADATA_NAME}x"}, env, "not a label value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			in := baseInput()
			in.config.Spec.NodeRegistration.Name = tc.hostname
			in.config.Spec.NodeRegistration.KubeletExtraLabels = tc.labels
			_, err := desiredAgentSettings(in.config, in.machine, nil, tc.env, in.agent)
			g.Expect(err).To(MatchError(ContainSubstring(tc.want)))
		})
	}
}
