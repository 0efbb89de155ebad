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
	"encoding/base64"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	. "github.com/onsi/gomega"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	"github.com/openshift/assisted-service/models"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
)

// mappingInput is what the InfraEnv and the Agent are derived from.
type mappingInput struct {
	config  *bootstrapv1.OpenshiftAssistedConfig
	machine *clusterv1.Machine
	cd      *hivev1.ClusterDeployment
	bmh     *bmov1alpha1.BareMetalHost
	// env are the host's metadata variables (Metal3 hosts only).
	env   map[string]string
	agent *aiv1beta1.Agent
}

func baseInput() mappingInput {
	return mappingInput{
		config: &bootstrapv1.OpenshiftAssistedConfig{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cfg"}},
		machine: &clusterv1.Machine{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "machine-0"},
			Spec:       clusterv1.MachineSpec{ClusterName: "c1"},
		},
		cd: &hivev1.ClusterDeployment{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c1"},
			Spec:       hivev1.ClusterDeploymentSpec{PullSecretRef: &corev1.LocalObjectReference{Name: "cd-pull-secret"}},
		},
		agent: &aiv1beta1.Agent{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "agent-0", Labels: map[string]string{"keep": "me"}},
			Spec:       aiv1beta1.AgentSpec{NodeLabels: map[string]string{"kept": "label"}},
			Status: aiv1beta1.AgentStatus{Inventory: aiv1beta1.HostInventory{Disks: []aiv1beta1.HostDisk{
				{ID: "/dev/disk/by-id/sda", Name: "sda", Path: "/dev/sda", SizeBytes: 100e9, DriveType: "HDD", Model: "slow", Serial: "s-a",
					InstallationEligibility: aiv1beta1.HostInstallationEligibility{Eligible: true}},
				{ID: "/dev/disk/by-id/nvme0n1", Name: "nvme0n1", Path: "/dev/nvme0n1", SizeBytes: 500e9, DriveType: "SSD", Model: "fast", Serial: "s-b", Wwn: "0x5000", Hctl: "1:0:0:0", Vendor: "acme",
					InstallationEligibility: aiv1beta1.HostInstallationEligibility{Eligible: true}},
			}}},
		},
	}
}

// TestMapping checks every OpenshiftAssistedConfig field (and annotation) that reaches the
// InfraEnv or the Agent, one row per field; TestEveryFieldHasAMappingRow makes sure a new spec
// field cannot be added without a row.
func TestMapping(t *testing.T) {
	for _, tc := range mappingCases {
		t.Run(tc.field, func(t *testing.T) {
			g := NewWithT(t)
			in := baseInput()
			tc.set(&in)
			ie := desiredInfraEnvSpec(in.config, in.cd, pullSecretRef(in.config, in.cd))
			settings, err := desiredAgentSettings(in.config, in.machine, in.bmh, in.env, in.agent)
			g.Expect(err).NotTo(HaveOccurred())
			agent := in.agent.DeepCopy()
			applyAgentSettings(agent, settings)
			tc.check(g, ie, agent)
		})
	}
}

type mappingCase struct {
	// field is the spec field path (for spec fields) or a description.
	field string
	set   func(*mappingInput)
	check func(Gomega, aiv1beta1.InfraEnvSpec, *aiv1beta1.Agent)
}

var mappingCases = []mappingCase{
	{
		field: "defaults",
		set:   func(*mappingInput) {},
		check: func(g Gomega, ie aiv1beta1.InfraEnvSpec, a *aiv1beta1.Agent) {
			g.Expect(ie.ClusterRef).To(Equal(&aiv1beta1.ClusterReference{Namespace: "ns", Name: "c1"}))
			g.Expect(ie.PullSecretRef).To(Equal(&corev1.LocalObjectReference{Name: "cd-pull-secret"}))
			g.Expect(ie.IPXEScriptType).To(Equal(aiv1beta1.DiscoveryImageAlways))
			g.Expect(ie.Proxy).To(BeNil())
			g.Expect(a.Spec.Approved).To(BeTrue())
			g.Expect(a.Spec.Role).To(Equal(models.HostRoleWorker))
			g.Expect(a.Spec.Hostname).To(Equal("machine-0"))
			g.Expect(a.Spec.InstallationDiskID).To(BeEmpty())
			g.Expect(a.Labels).To(Equal(map[string]string{"keep": "me", bootstrapv1.AgentConfigLabel: "cfg", clusterv1.ClusterNameLabel: "c1"}))
			g.Expect(a.Spec.NodeLabels).To(Equal(map[string]string{"kept": "label"}))
		},
	},
	{
		field: "Proxy",
		set: func(in *mappingInput) {
			in.config.Spec.Proxy = &aiv1beta1.Proxy{HTTPProxy: "http://p:3128", HTTPSProxy: "http://p:3129", NoProxy: ".local"}
		},
		check: func(g Gomega, ie aiv1beta1.InfraEnvSpec, _ *aiv1beta1.Agent) {
			g.Expect(ie.Proxy).To(Equal(&aiv1beta1.Proxy{HTTPProxy: "http://p:3128", HTTPSProxy: "http://p:3129", NoProxy: ".local"}))
		},
	},
	{
		field: "PullSecretRef",
		set:   func(in *mappingInput) { in.config.Spec.PullSecretRef = &corev1.LocalObjectReference{Name: "own"} },
		check: func(g Gomega, ie aiv1beta1.InfraEnvSpec, _ *aiv1beta1.Agent) {
			g.Expect(ie.PullSecretRef).To(Equal(&corev1.LocalObjectReference{Name: "own"}))
		},
	},
	{
		field: "AdditionalNTPSources",
		set:   func(in *mappingInput) { in.config.Spec.AdditionalNTPSources = []string{"ntp.example.com", "10.0.0.1"} },
		check: func(g Gomega, ie aiv1beta1.InfraEnvSpec, _ *aiv1beta1.Agent) {
			g.Expect(ie.AdditionalNTPSources).To(Equal([]string{"ntp.example.com", "10.0.0.1"}))
		},
	},
	{
		field: "SSHAuthorizedKey",
		set:   func(in *mappingInput) { in.config.Spec.SSHAuthorizedKey = "ssh-ed25519 AAAA" },
		check: func(g Gomega, ie aiv1beta1.InfraEnvSpec, _ *aiv1beta1.Agent) {
			g.Expect(ie.SSHAuthorizedKey).To(Equal("ssh-ed25519 AAAA"))
		},
	},
	{
		field: "NMStateConfigLabelSelector",
		set: func(in *mappingInput) {
			in.config.Spec.NMStateConfigLabelSelector = metav1.LabelSelector{MatchLabels: map[string]string{"net": "static"}}
		},
		check: func(g Gomega, ie aiv1beta1.InfraEnvSpec, _ *aiv1beta1.Agent) {
			g.Expect(ie.NMStateConfigLabelSelector).To(Equal(metav1.LabelSelector{MatchLabels: map[string]string{"net": "static"}}))
		},
	},
	{
		field: "CpuArchitecture",
		set:   func(in *mappingInput) { in.config.Spec.CpuArchitecture = "aarch64" },
		check: func(g Gomega, ie aiv1beta1.InfraEnvSpec, _ *aiv1beta1.Agent) {
			g.Expect(ie.CpuArchitecture).To(Equal("aarch64"))
		},
	},
	{
		field: "KernelArguments",
		set: func(in *mappingInput) {
			in.config.Spec.KernelArguments = []aiv1beta1.KernelArgument{{Operation: "append", Value: "console=ttyS0"}}
		},
		check: func(g Gomega, ie aiv1beta1.InfraEnvSpec, _ *aiv1beta1.Agent) {
			g.Expect(ie.KernelArguments).To(Equal([]aiv1beta1.KernelArgument{{Operation: "append", Value: "console=ttyS0"}}))
		},
	},
	{
		field: "AdditionalTrustBundle",
		set:   func(in *mappingInput) { in.config.Spec.AdditionalTrustBundle = "-----BEGIN CERTIFICATE-----" },
		check: func(g Gomega, ie aiv1beta1.InfraEnvSpec, _ *aiv1beta1.Agent) {
			g.Expect(ie.AdditionalTrustBundle).To(Equal("-----BEGIN CERTIFICATE-----"))
		},
	},
	{
		field: "OSImageVersion",
		set:   func(in *mappingInput) { in.config.Spec.OSImageVersion = "4.17" },
		check: func(g Gomega, ie aiv1beta1.InfraEnvSpec, _ *aiv1beta1.Agent) {
			g.Expect(ie.OSImageVersion).To(Equal("4.17"))
		},
	},
	{
		field: "NodeRegistration.Name",
		set:   func(in *mappingInput) { in.config.Spec.NodeRegistration.Name = "worker-a.example.com" },
		check: func(g Gomega, _ aiv1beta1.InfraEnvSpec, a *aiv1beta1.Agent) {
			g.Expect(a.Spec.Hostname).To(Equal("worker-a.example.com"))
		},
	},
	{
		field: "NodeRegistration.KubeletExtraLabels",
		set: func(in *mappingInput) {
			in.config.Spec.NodeRegistration.KubeletExtraLabels = []string{"rack=r1", "node-role.kubernetes.io/infra="}
		},
		check: func(g Gomega, _ aiv1beta1.InfraEnvSpec, a *aiv1beta1.Agent) {
			g.Expect(a.Spec.NodeLabels).To(Equal(map[string]string{"kept": "label", "rack": "r1", "node-role.kubernetes.io/infra": ""}))
		},
	},
	{
		field: "annotation " + bootstrapv1.DiscoveryIgnitionOverrideAnnotation,
		set: func(in *mappingInput) {
			in.config.Annotations = map[string]string{bootstrapv1.DiscoveryIgnitionOverrideAnnotation: `{"ignition":{"version":"3.2.0"}}`}
		},
		check: func(g Gomega, ie aiv1beta1.InfraEnvSpec, a *aiv1beta1.Agent) {
			g.Expect(ie.IgnitionConfigOverride).To(Equal(`{"ignition":{"version":"3.2.0"}}`))
			g.Expect(a.Spec.IgnitionConfigOverrides).To(BeEmpty())
		},
	},
	{
		field: "annotation " + bootstrapv1.IgnitionOverrideAnnotation,
		set: func(in *mappingInput) {
			in.config.Annotations = map[string]string{bootstrapv1.IgnitionOverrideAnnotation: `{"ignition":{"version":"3.1.0"}}`}
		},
		check: func(g Gomega, ie aiv1beta1.InfraEnvSpec, a *aiv1beta1.Agent) {
			g.Expect(a.Spec.IgnitionConfigOverrides).To(Equal(`{"ignition":{"version":"3.1.0"}}`))
			g.Expect(ie.IgnitionConfigOverride).To(BeEmpty())
		},
	},
	{
		field: "control-plane Machine",
		set: func(in *mappingInput) {
			in.machine.Labels = map[string]string{clusterv1.MachineControlPlaneLabel: ""}
		},
		check: func(g Gomega, _ aiv1beta1.InfraEnvSpec, a *aiv1beta1.Agent) {
			g.Expect(a.Spec.Role).To(Equal(models.HostRoleMaster))
		},
	},
	{
		field: "PreBootstrapCommands",
		set: func(in *mappingInput) {
			in.config.Spec.PreBootstrapCommands = []string{"echo pre"}
			in.config.Annotations = map[string]string{bootstrapv1.IgnitionOverrideAnnotation: `{"ignition":{"version":"3.1.0"}}`}
		},
		check: func(g Gomega, _ aiv1beta1.InfraEnvSpec, a *aiv1beta1.Agent) {
			ign := installIgnition(g, a)
			g.Expect(ign.Systemd.Units).To(ConsistOf(HaveField("Name", "capoa-pre-bootstrap.service")))
			g.Expect(ign.Systemd.Units[0].Contents).To(ContainSubstring("ConditionPathExists=!/var/lib/capoa/pre-bootstrap.done"))
			g.Expect(ign.Ignition.Config.Merge).To(HaveLen(1), "the annotation's Ignition is merged")
			g.Expect(scriptOf(g, ign, preBootstrapScript)).To(ContainSubstring("set -euo pipefail\necho pre\n"))
		},
	},
	{
		field: "PostBootstrapCommands",
		set:   func(in *mappingInput) { in.config.Spec.PostBootstrapCommands = []string{"echo post"} },
		check: func(g Gomega, _ aiv1beta1.InfraEnvSpec, a *aiv1beta1.Agent) {
			ign := installIgnition(g, a)
			g.Expect(ign.Systemd.Units).To(ConsistOf(HaveField("Name", "capoa-post-bootstrap.service")))
			g.Expect(scriptOf(g, ign, postBootstrapScript)).To(ContainSubstring("kubeconfig='/var/lib/kubelet/kubeconfig'"))
			g.Expect(ign.Ignition.Config).To(BeNil())
		},
	},
	{
		field: "BootstrapCommandSentinelDir",
		set: func(in *mappingInput) {
			in.config.Spec.PostBootstrapCommands = []string{"echo post"}
			in.config.Spec.BootstrapCommandSentinelDir = "/var/lib/example/"
		},
		check: func(g Gomega, _ aiv1beta1.InfraEnvSpec, a *aiv1beta1.Agent) {
			ign := installIgnition(g, a)
			g.Expect(ign.Systemd.Units[0].Contents).To(ContainSubstring("ConditionPathExists=!/var/lib/example/post-bootstrap.done"))
			g.Expect(scriptOf(g, ign, postBootstrapScript)).To(ContainSubstring("touch '/var/lib/example/post-bootstrap.done'"))
		},
	},
	{
		field: "PostBootstrapKubeconfigPath",
		set: func(in *mappingInput) {
			in.config.Spec.PostBootstrapCommands = []string{"echo post"}
			in.config.Spec.PostBootstrapKubeconfigPath = "/etc/kubernetes/kubeconfig"
		},
		check: func(g Gomega, _ aiv1beta1.InfraEnvSpec, a *aiv1beta1.Agent) {
			g.Expect(scriptOf(g, installIgnition(g, a), postBootstrapScript)).To(ContainSubstring("kubeconfig='/etc/kubernetes/kubeconfig'"))
		},
	},
	{
		field: "NodeRegistration.Name as a host metadata variable",
		set: func(in *mappingInput) {
			in.config.Spec.NodeRegistration.Name = "${METADATA_NAME}"
			in.env = map[string]string{"METADATA_NAME": "rack1-host7", "METADATA_UUID": "8f0c"}
		},
		check: func(g Gomega, _ aiv1beta1.InfraEnvSpec, a *aiv1beta1.Agent) {
			g.Expect(a.Spec.Hostname).To(Equal("rack1-host7"))
		},
	},
	{
		field: "NodeRegistration.KubeletExtraLabels with a host metadata variable",
		set: func(in *mappingInput) {
			// Upstream's multinode example quotes its variable: metal3.io/uuid="${METADATA_UUID}".
			in.config.Spec.NodeRegistration.KubeletExtraLabels = []string{"example.com/host=$METADATA_UUID", "tier=db",
				`metal3.io/uuid="${METADATA_UUID}"`, `rack="r1"`}
			in.env = map[string]string{"METADATA_NAME": "rack1-host7", "METADATA_UUID": "8f0c"}
		},
		check: func(g Gomega, _ aiv1beta1.InfraEnvSpec, a *aiv1beta1.Agent) {
			g.Expect(a.Spec.NodeLabels).To(HaveKeyWithValue("example.com/host", "8f0c"))
			g.Expect(a.Spec.NodeLabels).To(HaveKeyWithValue("metal3.io/uuid", "8f0c"))
			g.Expect(a.Spec.NodeLabels).To(HaveKeyWithValue("rack", "r1"))
			g.Expect(a.Spec.NodeLabels).To(HaveKeyWithValue("tier", "db"))
			g.Expect(a.Spec.Hostname).To(Equal("machine-0"))
		},
	},
	{
		field: "arbiter Machine of two-node OpenShift",
		set: func(in *mappingInput) {
			in.machine.Labels = map[string]string{clusterv1.MachineControlPlaneLabel: "", controlplanev1.ArbiterMachineLabel: ""}
		},
		check: func(g Gomega, _ aiv1beta1.InfraEnvSpec, a *aiv1beta1.Agent) {
			g.Expect(a.Spec.Role).To(BeEquivalentTo("arbiter"))
		},
	},
	{
		field: "arbiter label on a worker Machine (not the control plane's: ignored)",
		set: func(in *mappingInput) {
			in.machine.Labels = map[string]string{controlplanev1.ArbiterMachineLabel: ""}
		},
		check: func(g Gomega, _ aiv1beta1.InfraEnvSpec, a *aiv1beta1.Agent) {
			g.Expect(a.Spec.Role).To(Equal(models.HostRoleWorker))
		},
	},
	{
		field: "BareMetalHost without rootDeviceHints",
		set: func(in *mappingInput) {
			in.bmh = &bmov1alpha1.BareMetalHost{ObjectMeta: metav1.ObjectMeta{Name: "bmh-0", UID: "bmh-uid"}}
		},
		check: func(g Gomega, _ aiv1beta1.InfraEnvSpec, a *aiv1beta1.Agent) {
			g.Expect(a.Spec.NodeLabels).To(HaveKeyWithValue(metal3ProviderIDLabel, "bmh-uid"))
			g.Expect(a.Spec.InstallationDiskID).To(BeEmpty())
		},
	},
}

// unmappedFields are the spec fields that reach neither the InfraEnv nor the Agent, and why.
var unmappedFields = map[string]string{
	// The assisted installer's Agent API has no kubelet provider ID: the infrastructure provider
	// sets the Node's providerID (AgentMachine: agent://<id>; CAPM3: from the metal3.io/uuid label).
	"NodeRegistration.ProviderID": "not settable through assisted-service",
}

// TestEveryFieldHasAMappingRow fails when a spec field has neither a row in mappingCases nor an
// entry in unmappedFields.
func TestEveryFieldHasAMappingRow(t *testing.T) {
	rows := map[string]bool{}
	for _, tc := range mappingCases {
		rows[tc.field] = true
	}
	var walk func(prefix string, typ reflect.Type)
	walk = func(prefix string, typ reflect.Type) {
		for i := range typ.NumField() {
			f := typ.Field(i)
			path := prefix + f.Name
			if f.Type.Kind() == reflect.Struct && f.Type.PkgPath() == reflect.TypeFor[bootstrapv1.OpenshiftAssistedConfigSpec]().PkgPath() {
				walk(path+".", f.Type)
				continue
			}
			if !rows[path] && unmappedFields[path] == "" {
				t.Errorf("spec field %s has no row in mappingCases (nor an entry in unmappedFields)", path)
			}
		}
	}
	walk("", reflect.TypeFor[bootstrapv1.OpenshiftAssistedConfigSpec]())
}

// installIgnition decodes the Agent's ignitionConfigOverrides.
func installIgnition(g Gomega, a *aiv1beta1.Agent) ignitionConfig {
	var ign ignitionConfig
	g.Expect(json.Unmarshal([]byte(a.Spec.IgnitionConfigOverrides), &ign)).To(Succeed())
	g.Expect(ign.Ignition.Version).To(Equal("3.2.0"))
	return ign
}

// scriptOf returns the contents of the file at path in ign.
func scriptOf(g Gomega, ign ignitionConfig, path string) string {
	for _, f := range ign.Storage.Files {
		if f.Path == path {
			g.Expect(f.Mode).To(Equal(0o755))
			raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(f.Contents.Source, "data:;base64,"))
			g.Expect(err).NotTo(HaveOccurred())
			return string(raw)
		}
	}
	g.Expect(path).To(BeEmpty(), "no file %s in the Ignition", path)
	return ""
}
