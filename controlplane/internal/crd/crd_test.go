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

package crd_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	capoascheme "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/scheme"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/testenv"
)

var env *testenv.Environment

func TestMain(m *testing.M) {
	s, err := capoascheme.New(bootstrapv1.AddToScheme, controlplanev1.AddToScheme)
	if err != nil {
		panic(err)
	}
	os.Exit(testenv.MainWithOptions(m, testenv.Options{Scheme: s, CRDPaths: []string{"controlplane/config/crd/bases"}}, &env))
}

func controlPlane(ns, name string) *controlplanev1.OpenshiftAssistedControlPlane {
	return &controlplanev1.OpenshiftAssistedControlPlane{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: controlplanev1.OpenshiftAssistedControlPlaneSpec{
			DistributionVersion: "4.17.3",
			Replicas:            ptr.To[int32](3),
			Config: controlplanev1.OpenshiftAssistedControlPlaneConfigSpec{
				BaseDomain:  "example.com",
				ClusterName: "prod",
				APIVIPs:     []string{"192.168.111.5"},
				IngressVIPs: []string{"192.168.111.4"},
			},
			MachineTemplate: controlplanev1.OpenshiftAssistedControlPlaneMachineTemplate{
				Spec: controlplanev1.OpenshiftAssistedControlPlaneMachineTemplateSpec{InfrastructureRef: clusterv1.ContractVersionedObjectReference{
					APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "Metal3MachineTemplate", Name: "cp",
				}},
			},
		},
	}
}

// TestRoundTrip creates a control plane with every setting and reads it back unchanged.
func TestRoundTrip(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns, err := env.CreateNamespace(ctx, "roundtrip")
	g.Expect(err).NotTo(HaveOccurred())

	cp := controlPlane(ns, "full")
	cp.Spec.Replicas = ptr.To[int32](3)
	cp.Spec.MachineTemplate.ObjectMeta = clusterv1.ObjectMeta{Labels: map[string]string{"tier": "cp"}}
	cp.Spec.MachineTemplate.Spec.Deletion = clusterv1.MachineDeletionSpec{NodeDrainTimeoutSeconds: ptr.To[int32](30)}
	cp.Spec.OpenshiftAssistedConfigSpec = bootstrapv1.OpenshiftAssistedConfigSpec{
		CpuArchitecture: "x86_64", SSHAuthorizedKey: "ssh-ed25519 AAAA",
	}
	cp.Spec.Config.PullSecretRef = &corev1.LocalObjectReference{Name: "pull-secret"}
	cp.Spec.Config.ImageRegistryRef = &corev1.LocalObjectReference{Name: "mirrors"}
	cp.Spec.Config.ManifestsConfigMapRefs = []hiveextv1beta1.ManifestsConfigMapReference{{Name: "extra"}}
	cp.Spec.Config.Proxy = &hiveextv1beta1.Proxy{HTTPSProxy: "http://proxy:3128"}
	cp.Spec.Config.MastersSchedulable = true
	cp.Spec.Config.NetworkType = "OVNKubernetes"
	cp.Spec.Config.SSHAuthorizedKey = "ssh-ed25519 BBBB"
	cp.Spec.Config.Capabilities = controlplanev1.Capabilities{
		BaselineCapability: "None", AdditionalEnabledCapabilities: []string{"marketplace"},
	}
	want := cp.Spec.DeepCopy()
	g.Expect(env.Client.Create(ctx, cp)).To(Succeed())

	got := &controlplanev1.OpenshiftAssistedControlPlane{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(cp), got)).To(Succeed())
	g.Expect(got.Spec).To(Equal(*want))

	// Defaults: one replica (single-node OpenShift).
	sno := controlPlane(ns, "sno")
	sno.Spec.Replicas = nil
	sno.Spec.Config.APIVIPs, sno.Spec.Config.IngressVIPs = nil, nil
	g.Expect(env.Client.Create(ctx, sno)).To(Succeed())
	g.Expect(sno.Spec.Replicas).To(HaveValue(BeEquivalentTo(1)))

	// Every contract field of the status is served through the status subresource.
	got.Status = controlplanev1.OpenshiftAssistedControlPlaneStatus{
		Initialization:      controlplanev1.OpenshiftAssistedControlPlaneInitializationStatus{ControlPlaneInitialized: ptr.To(true)},
		Selector:            "cluster.x-k8s.io/cluster-name=prod,cluster.x-k8s.io/control-plane",
		Replicas:            ptr.To[int32](3),
		ReadyReplicas:       ptr.To[int32](3),
		AvailableReplicas:   ptr.To[int32](3),
		UpToDateReplicas:    ptr.To[int32](3),
		Version:             "v1.30.4",
		DistributionVersion: "4.17.3",
		Conditions: []metav1.Condition{{Type: "Available", Status: metav1.ConditionTrue, Reason: "Available",
			LastTransitionTime: metav1.Now()}},
	}
	wantStatus := got.Status.DeepCopy()
	g.Expect(env.Client.Status().Update(ctx, got)).To(Succeed())
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(cp), got)).To(Succeed())
	g.Expect(got.Status.Selector).To(Equal(wantStatus.Selector))
	g.Expect(got.Status.Initialization).To(Equal(wantStatus.Initialization))
	g.Expect(got.Status.AvailableReplicas).To(Equal(wantStatus.AvailableReplicas))
	g.Expect(got.Status.UpToDateReplicas).To(Equal(wantStatus.UpToDateReplicas))
	g.Expect(got.Status.Version).To(Equal(wantStatus.Version))

	// kubectl scale works through the scale subresource, and respects the replicas rule.
	scale := &autoscalingv1.Scale{}
	g.Expect(env.Client.SubResource("scale").Get(ctx, got, scale)).To(Succeed())
	g.Expect(scale.Spec.Replicas).To(BeEquivalentTo(3))
	g.Expect(scale.Status.Selector).To(Equal(wantStatus.Selector))
	scale.Spec.Replicas = 5
	g.Expect(env.Client.SubResource("scale").Update(ctx, got, client.WithSubResourceBody(scale))).To(Succeed())
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(cp), got)).To(Succeed())
	g.Expect(got.Spec.Replicas).To(HaveValue(BeEquivalentTo(5)))
	scale.Spec.Replicas = 2
	err = env.Client.SubResource("scale").Update(ctx, got, client.WithSubResourceBody(scale))
	g.Expect(err).To(MatchError(ContainSubstring("replicas cannot change from 3, 4 or 5 to 2")))
}

// arbiter is a valid spec.arbiter.
func arbiter() *controlplanev1.OpenshiftAssistedControlPlaneArbiterSpec {
	return &controlplanev1.OpenshiftAssistedControlPlaneArbiterSpec{MachineTemplate: controlplanev1.OpenshiftAssistedControlPlaneMachineTemplate{
		Spec: controlplanev1.OpenshiftAssistedControlPlaneMachineTemplateSpec{InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "Metal3MachineTemplate", Name: "arbiter"}},
	}}
}

// fencing is a valid spec.fencing: its default source.
func fencing() *controlplanev1.OpenshiftAssistedControlPlaneFencingSpec {
	return &controlplanev1.OpenshiftAssistedControlPlaneFencingSpec{}
}

// TestTwoNodesWithFencing checks that two-node OpenShift with fencing is accepted with the
// credentials of the hosts' BareMetalHosts (the default), and that it can neither lose its
// fencing, nor change its number of control-plane nodes, nor move to hosts without
// BareMetalHosts; a later upgrade is not held to the version rule of new clusters.
func TestTwoNodesWithFencing(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns, err := env.CreateNamespace(ctx, "fencing")
	g.Expect(err).NotTo(HaveOccurred())
	cp := controlPlane(ns, "tnf")
	cp.Spec.Replicas = ptr.To[int32](2)
	cp.Spec.DistributionVersion = "4.20.2"
	cp.Spec.Fencing = fencing()
	g.Expect(env.Client.Create(ctx, cp)).To(Succeed())
	g.Expect(cp.Spec.Fencing.CredentialsFrom).To(Equal(controlplanev1.FencingCredentialsFromBareMetalHost))

	for _, tt := range []struct {
		name    string
		mutate  func(*controlplanev1.OpenshiftAssistedControlPlane)
		message string
	}{
		{"removed", func(cp *controlplanev1.OpenshiftAssistedControlPlane) { cp.Spec.Fencing = nil }, "spec.fencing cannot be added or removed"},
		{"three replicas", func(cp *controlplanev1.OpenshiftAssistedControlPlane) { cp.Spec.Replicas = ptr.To[int32](3) },
			"replicas cannot change from 2 to 3, 4 or 5: two-node OpenShift (with an arbiter or with fencing) cannot grow its control plane"},
		{"agent hosts", func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
			cp.Spec.MachineTemplate.Spec.InfrastructureRef.Kind = "OpenshiftAssistedMachineTemplate"
		}, "spec.fencing needs Metal3 control-plane hosts"},
		{"an unknown source", func(cp *controlplanev1.OpenshiftAssistedControlPlane) { cp.Spec.Fencing.CredentialsFrom = "Secret" },
			`spec.fencing.credentialsFrom: Unsupported value: "Secret"`},
	} {
		changed := cp.DeepCopy()
		tt.mutate(changed)
		err := env.Client.Update(ctx, changed)
		g.Expect(err).To(MatchError(ContainSubstring(tt.message)), tt.name)
		var status apierrors.APIStatus
		g.Expect(errors.As(err, &status)).To(BeTrue())
		// The API server adds a cause without a field when a schema error kept it from the CEL rules.
		causes := slices.DeleteFunc(slices.Clone(status.Status().Details.Causes), func(c metav1.StatusCause) bool { return c.Field == "<nil>" })
		g.Expect(causes).To(HaveLen(1), "%s: only the rule the change breaks speaks: %v", tt.name, err)
	}

	upgraded := cp.DeepCopy()
	upgraded.Spec.DistributionVersion = "4.22.1"
	g.Expect(env.Client.Update(ctx, upgraded)).To(Succeed())
}

// TestTwoNodesWithArbiter checks that two-node OpenShift with an arbiter is accepted, and that it
// can neither lose its arbiter, nor change its number of control-plane nodes (through the spec or
// the scale subresource), since OpenShift supports no such transition.
func TestTwoNodesWithArbiter(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns, err := env.CreateNamespace(ctx, "arbiter")
	g.Expect(err).NotTo(HaveOccurred())
	cp := controlPlane(ns, "tna")
	cp.Spec.Replicas = ptr.To[int32](2)
	cp.Spec.Arbiter = arbiter()
	g.Expect(env.Client.Create(ctx, cp)).To(Succeed())

	removed := cp.DeepCopy()
	removed.Spec.Arbiter = nil
	g.Expect(env.Client.Update(ctx, removed)).To(MatchError(ContainSubstring("spec.arbiter cannot be added or removed")))

	three := cp.DeepCopy()
	three.Spec.Replicas = ptr.To[int32](3)
	g.Expect(env.Client.Update(ctx, three)).To(MatchError(ContainSubstring("replicas cannot change from 2 to 3, 4 or 5")))

	scale := &autoscalingv1.Scale{}
	g.Expect(env.Client.SubResource("scale").Get(ctx, cp, scale)).To(Succeed())
	scale.Spec.Replicas = 3
	g.Expect(env.Client.SubResource("scale").Update(ctx, cp, client.WithSubResourceBody(scale))).
		To(MatchError(ContainSubstring("replicas cannot change from 2 to 3, 4 or 5")))

	// Upstream's disk encryption values, the arbiter's among them.
	encrypted := controlPlane(ns, "tna-encrypted")
	encrypted.Spec.Replicas = ptr.To[int32](2)
	encrypted.Spec.Arbiter = arbiter()
	encrypted.Spec.Config.DiskEncryption = &controlplanev1.DiskEncryption{EnableOn: ptr.To("masters,arbiters,workers"), Mode: ptr.To("tpmv2")}
	g.Expect(env.Client.Create(ctx, encrypted)).To(Succeed())
	mixed := controlPlane(ns, "masters-workers")
	mixed.Spec.Replicas = ptr.To[int32](3)
	mixed.Spec.Config.DiskEncryption = &controlplanev1.DiskEncryption{EnableOn: ptr.To("masters,workers")}
	g.Expect(env.Client.Create(ctx, mixed)).To(Succeed())

	// The arbiter's template can change (its Machine is then replaced).
	got := &controlplanev1.OpenshiftAssistedControlPlane{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(cp), got)).To(Succeed())
	got.Spec.Arbiter.MachineTemplate.Spec.InfrastructureRef.Name = "arbiter-v2"
	g.Expect(env.Client.Update(ctx, got)).To(Succeed())
}

// TestDottedClusterNameOnPlatformNone: assisted-service takes a cluster name of several DNS
// labels on platform None (clusterNameRegexForNonePlatform in internal/cluster/validations), which
// the control plane chooses when the cluster has no VIPs; with VIPs (the baremetal platform) it
// takes one label, and adding VIPs to a cluster with such a name is refused with why.
func TestDottedClusterNameOnPlatformNone(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns, err := env.CreateNamespace(ctx, "dotted-name")
	g.Expect(err).NotTo(HaveOccurred())
	cp := controlPlane(ns, "east")
	cp.Spec.Config.ClusterName = "east.prod"
	cp.Spec.Config.APIVIPs, cp.Spec.Config.IngressVIPs = nil, nil
	g.Expect(env.Client.Create(ctx, cp)).To(Succeed())
	cp.Spec.Config.APIVIPs, cp.Spec.Config.IngressVIPs = []string{"192.168.111.5"}, []string{"192.168.111.4"}
	err = env.Client.Update(ctx, cp)
	g.Expect(err).To(HaveOccurred())
	g.Expect(err.Error()).To(ContainSubstring(`clusterName "east.prod" has dots, which assisted-service accepts on platform None only`))
}

// TestMachineNetworks: the machine networks of a single-stack, an IPv6 and a dual-stack cluster
// are taken with their VIPs inside them, in the order of the VIPs' families.
func TestMachineNetworks(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns, err := env.CreateNamespace(ctx, "machine-networks")
	g.Expect(err).NotTo(HaveOccurred())
	for name, c := range map[string]struct{ api, ingress, networks []string }{
		"ipv4": {[]string{"192.168.111.5"}, []string{"192.168.111.4"}, []string{"192.168.111.0/24"}},
		"ipv6": {[]string{"fd2e:6f44:5dd8:c956::5"}, []string{"fd2e:6f44:5dd8:c956::4"}, []string{"fd2e:6f44:5dd8:c956::/64"}},
		"dual": {[]string{"192.168.111.5", "fd2e:6f44:5dd8:c956::5"}, []string{"192.168.111.4", "fd2e:6f44:5dd8:c956::4"},
			[]string{"192.168.111.0/24", "fd2e:6f44:5dd8:c956::/64"}},
		"ipv6-primary": {[]string{"fd2e:6f44:5dd8:c956::5", "192.168.111.5"}, []string{"fd2e:6f44:5dd8:c956::4", "192.168.111.4"},
			[]string{"fd2e:6f44:5dd8:c956::/64", "192.168.111.0/24"}},
		// Dual-stack machine networks with the primary family's VIPs only.
		"dual-one-vip": {[]string{"192.168.111.5"}, []string{"192.168.111.4"}, []string{"192.168.111.0/24", "fd2e:6f44:5dd8:c956::/64"}},
	} {
		cp := controlPlane(ns, name)
		cp.Spec.Config.APIVIPs, cp.Spec.Config.IngressVIPs, cp.Spec.Config.MachineNetworks = c.api, c.ingress, c.networks
		g.Expect(env.Client.Create(ctx, cp)).To(Succeed(), name)
		got := &controlplanev1.OpenshiftAssistedControlPlane{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(cp), got)).To(Succeed())
		g.Expect(got.Spec.Config.MachineNetworks).To(Equal(c.networks), name)
	}
}

// TestSchemaRejectsBadInput checks that the API server refuses bad specs, on create and on
// update, with a message that says what is wrong.
func TestSchemaRejectsBadInput(t *testing.T) {
	ctx := context.Background()
	ns, err := env.CreateNamespace(ctx, "schema")
	NewWithT(t).Expect(err).NotTo(HaveOccurred())

	creates := []struct {
		name    string
		mutate  func(*controlplanev1.OpenshiftAssistedControlPlane)
		message string
	}{
		{"two replicas without an arbiter", func(cp *controlplanev1.OpenshiftAssistedControlPlane) { cp.Spec.Replicas = ptr.To[int32](2) },
			"spec.replicas: Invalid value: replicas 2 needs spec.arbiter or spec.fencing: two-node OpenShift keeps etcd's quorum either with a third, smaller arbiter node"},
		{"fencing with three replicas", func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
			cp.Spec.Replicas = ptr.To[int32](3)
			cp.Spec.Fencing = fencing()
			cp.Spec.DistributionVersion = "4.20.0"
		}, "spec.fencing: Invalid value: spec.fencing is for two-node OpenShift and needs replicas 2"},
		{"fencing and an arbiter", func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
			cp.Spec.Replicas = ptr.To[int32](2)
			cp.Spec.Fencing = fencing()
			cp.Spec.Arbiter = arbiter()
			cp.Spec.DistributionVersion = "4.20.0"
		}, "spec.fencing: Invalid value: spec.fencing and spec.arbiter are two different two-node topologies"},
		{"fencing on agent hosts", func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
			cp.Spec.Replicas = ptr.To[int32](2)
			cp.Spec.Fencing = fencing()
			cp.Spec.DistributionVersion = "4.20.0"
			cp.Spec.MachineTemplate.Spec.InfrastructureRef.Kind = "OpenshiftAssistedMachineTemplate"
		}, "spec.fencing: Invalid value: spec.fencing needs Metal3 control-plane hosts (a Metal3MachineTemplate)"},
		{"fencing on OpenShift 4.19", func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
			cp.Spec.Replicas = ptr.To[int32](2)
			cp.Spec.Fencing = fencing()
			cp.Spec.DistributionVersion = "4.19.9"
		}, "spec.fencing: Invalid value: spec.fencing needs OpenShift 4.20 or later"},
		{"VIPs on a single node", func(cp *controlplanev1.OpenshiftAssistedControlPlane) { cp.Spec.Replicas = ptr.To[int32](1) },
			"spec.config.apiVIPs: Invalid value: a single-node control plane (replicas 1, also when replicas is not set) takes no apiVIPs or ingressVIPs"},
		{"VIPs without replicas", func(cp *controlplanev1.OpenshiftAssistedControlPlane) { cp.Spec.Replicas = nil },
			"a single-node control plane (replicas 1, also when replicas is not set) takes no apiVIPs or ingressVIPs"},
		{"six replicas", func(cp *controlplanev1.OpenshiftAssistedControlPlane) { cp.Spec.Replicas = ptr.To[int32](6) },
			"replicas must be 1 (single-node OpenShift), 2 (two-node OpenShift with spec.arbiter or spec.fencing), 3, 4 or 5"},
		{"an arbiter with three replicas", func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
			cp.Spec.Replicas = ptr.To[int32](3)
			cp.Spec.Arbiter = arbiter()
		}, "spec.arbiter: Invalid value: spec.arbiter is for two-node OpenShift and needs replicas 2"},
		{"an arbiter with a single node", func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
			cp.Spec.Config.APIVIPs, cp.Spec.Config.IngressVIPs = nil, nil
			cp.Spec.Arbiter = arbiter()
		}, "spec.arbiter is for two-node OpenShift and needs replicas 2"},
		{"an arbiter without VIPs", func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
			cp.Spec.Replicas = ptr.To[int32](2)
			cp.Spec.Config.APIVIPs, cp.Spec.Config.IngressVIPs = nil, nil
			cp.Spec.Arbiter = arbiter()
		}, "spec.arbiter needs spec.config.apiVIPs and ingressVIPs: assisted-service installs two-node OpenShift with an arbiter on the baremetal platform only"},
		{"disk encryption of arbiters without an arbiter", func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
			cp.Spec.Replicas = ptr.To[int32](3)
			cp.Spec.Config.DiskEncryption = &controlplanev1.DiskEncryption{EnableOn: ptr.To("masters,arbiters")}
		}, "spec.config.diskEncryption.enableOn: Invalid value: diskEncryption.enableOn names arbiters but the cluster has none"},
		{"disk encryption of an unknown role", func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
			cp.Spec.Config.DiskEncryption = &controlplanev1.DiskEncryption{EnableOn: ptr.To("workers,masters")}
		}, `spec.config.diskEncryption.enableOn: Unsupported value: "workers,masters"`},
		{"an arbiter without a template", func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
			cp.Spec.Replicas = ptr.To[int32](2)
			cp.Spec.Arbiter = &controlplanev1.OpenshiftAssistedControlPlaneArbiterSpec{}
		}, "spec.arbiter.machineTemplate.spec: Required value"},
		{"version without patch", func(cp *controlplanev1.OpenshiftAssistedControlPlane) { cp.Spec.DistributionVersion = "4.17" },
			"spec.distributionVersion: Invalid value: \"4.17\": distributionVersion must be an OpenShift version such as 4.17.3"},
		{"version that is a word", func(cp *controlplanev1.OpenshiftAssistedControlPlane) { cp.Spec.DistributionVersion = "latest" },
			"distributionVersion must be an OpenShift version"},
		{"version with a GOARCH name", func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
			cp.Spec.DistributionVersion = "4.17.3-x86-64_x"
		},
			"optionally followed by the architecture of its release as upstream's v0.3.0-v0.3.2 wrote it (4.19.0-ec.2-x86_64)"},
		{"missing version", func(cp *controlplanev1.OpenshiftAssistedControlPlane) { cp.Spec.DistributionVersion = "" },
			"spec.distributionVersion"},
		{"api VIP without ingress VIP", func(cp *controlplanev1.OpenshiftAssistedControlPlane) { cp.Spec.Config.IngressVIPs = nil },
			"apiVIPs and ingressVIPs must be set together"},
		{"unknown network type", func(cp *controlplanev1.OpenshiftAssistedControlPlane) { cp.Spec.Config.NetworkType = "Flannel" },
			`spec.config.networkType: Unsupported value: "Flannel"`},
		{"API VIP that is no address", func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
			cp.Spec.Config.APIVIPs = []string{"api.example.com"}
		},
			`spec.config.apiVIPs[0]: Invalid value: "api.example.com": "api.example.com" is not an IP address`},
		{"ingress VIP that is no address", func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
			cp.Spec.Config.IngressVIPs = []string{"192.168.111.256"}
		},
			`"192.168.111.256" is not an IP address`},
		{"two API VIPs of one family", func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
			cp.Spec.Config.APIVIPs = []string{"192.168.111.5", "192.168.111.6"}
			cp.Spec.Config.IngressVIPs = []string{"192.168.111.4", "fd00::4"}
		}, "two apiVIPs must be one IPv4 and one IPv6 address"},
		{"machine network that is no network", func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
			cp.Spec.Config.MachineNetworks = []string{"192.168.111.5"}
		}, `spec.config.machineNetworks[0]: Invalid value: "192.168.111.5": "192.168.111.5" is not a network: write a CIDR`},
		{"two machine networks of one family", func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
			cp.Spec.Config.MachineNetworks = []string{"192.168.111.0/24", "192.168.112.0/24"}
		}, "two machineNetworks must be one IPv4 and one IPv6 network"},
		{"three machine networks", func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
			cp.Spec.Config.MachineNetworks = []string{"192.168.111.0/24", "fd2e:6f44:5dd8:c956::/64", "192.168.112.0/24"}
		}, "spec.config.machineNetworks: Too many: 3: must have at most 2 items"},
		{"API VIP outside the machine network", func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
			cp.Spec.Config.APIVIPs = []string{"192.168.112.5"}
			cp.Spec.Config.MachineNetworks = []string{"192.168.111.0/24"}
		}, "spec.config.apiVIPs: Invalid value: each API VIP must be inside the machine network at its position"},
		{"ingress VIPs of the other order than the machine networks", func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
			cp.Spec.Config.APIVIPs = []string{"192.168.111.5", "fd2e:6f44:5dd8:c956::5"}
			cp.Spec.Config.IngressVIPs = []string{"192.168.111.4", "fd2e:6f44:5dd8:c956::4"}
			cp.Spec.Config.MachineNetworks = []string{"fd2e:6f44:5dd8:c956::/64", "192.168.111.0/24"}
		}, "spec.config.ingressVIPs: Invalid value: each ingress VIP must be inside the machine network at its position"},
		{"dual-stack VIPs with one machine network", func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
			cp.Spec.Config.APIVIPs = []string{"192.168.111.5", "fd2e:6f44:5dd8:c956::5"}
			cp.Spec.Config.IngressVIPs = []string{"192.168.111.4", "fd2e:6f44:5dd8:c956::4"}
			cp.Spec.Config.MachineNetworks = []string{"192.168.111.0/24"}
		}, "spec.config.machineNetworks: Invalid value: two apiVIPs (dual stack) need two machineNetworks"},
		{"OpenShiftSDN with an IPv6 VIP", func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
			cp.Spec.Config.NetworkType = "OpenShiftSDN"
			cp.Spec.Config.APIVIPs = []string{"fd2e:6f44:5dd8:c956::5"}
			cp.Spec.Config.IngressVIPs = []string{"fd2e:6f44:5dd8:c956::4"}
		}, "spec.config.networkType: Invalid value: networkType OpenShiftSDN does not support IPv6"},
		{"OpenShiftSDN with an IPv6 machine network", func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
			cp.Spec.Config.NetworkType = "OpenShiftSDN"
			cp.Spec.Config.APIVIPs, cp.Spec.Config.IngressVIPs = nil, nil
			cp.Spec.Config.MachineNetworks = []string{"fd2e:6f44:5dd8:c956::/64"}
		}, "use OVNKubernetes (the default) for an IPv6 or dual-stack cluster"},
		{"ingress VIPs in the other order", func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
			cp.Spec.Config.APIVIPs = []string{"192.168.111.5", "fd00::5"}
			cp.Spec.Config.IngressVIPs = []string{"fd00::4", "192.168.111.4"}
		}, "spec.config.ingressVIPs: Invalid value: ingressVIPs must list the same IP families as apiVIPs, in the same order"},
		// assisted-service takes dotted names on platform None (no VIPs) only
		// (ValidateClusterNameFormat); TestDottedClusterNameOnPlatformNone creates one.
		{"cluster name with a dot, with VIPs", func(cp *controlplanev1.OpenshiftAssistedControlPlane) { cp.Spec.Config.ClusterName = "east.prod" },
			`spec.config.clusterName: Invalid value: clusterName "east.prod" has dots, which assisted-service accepts on platform None only`},
		{"cluster name with an empty label", func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
			cp.Spec.Config.APIVIPs, cp.Spec.Config.IngressVIPs = nil, nil
			cp.Spec.Config.ClusterName = "east..prod"
		}, "spec.config.clusterName in body should match"},
		{"cluster name longer than assisted-service's", func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
			cp.Spec.Config.ClusterName = strings.Repeat("a", 64)
		}, "spec.config.clusterName: Too long: may not be more than 63 bytes"},
		{"baseline capability that names no release", func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
			cp.Spec.Config.Capabilities.BaselineCapability = "v5"
		}, "spec.config.capabilities.baselineCapability in body should match"},
		{"the vCurrent baseline on platform baremetal", func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
			cp.Spec.Config.Capabilities.BaselineCapability = "vCurrent"
		}, "spec.config.capabilities: Invalid value: capabilities must leave MachineAPI out on a cluster with apiVIPs (platform baremetal)"},
		{"a v4.x baseline on platform baremetal", func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
			cp.Spec.Replicas = ptr.To[int32](3)
			cp.Spec.Config.Capabilities.BaselineCapability = "v4.14"
		}, "leave baselineCapability unset or None (the control plane enables the release's default capabilities except MachineAPI)"},
		{"MachineAPI on platform baremetal", func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
			cp.Spec.Replicas = ptr.To[int32](3)
			cp.Spec.Config.Capabilities = controlplanev1.Capabilities{BaselineCapability: "None", AdditionalEnabledCapabilities: []string{"baremetal", "MachineAPI"}}
		}, "remove MachineAPI from additionalEnabledCapabilities"},
		{"a hostname for every host of three", func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
			cp.Spec.Replicas = ptr.To[int32](3)
			cp.Spec.OpenshiftAssistedConfigSpec.NodeRegistration.Name = "master-0"
		}, "spec.openshiftAssistedConfigSpec.nodeRegistration.name: Invalid value: nodeRegistration.name must not be a fixed name when replicas is more than 1"},
		{"a providerID for every host of three", func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
			cp.Spec.Replicas = ptr.To[int32](3)
			cp.Spec.OpenshiftAssistedConfigSpec.NodeRegistration.ProviderID = "metal3://fixed"
		}, "spec.openshiftAssistedConfigSpec.nodeRegistration.providerID: Invalid value: nodeRegistration.providerID must not be fixed when replicas is more than 1"},
	}
	for _, tt := range creates {
		t.Run("create "+tt.name, func(t *testing.T) {
			g := NewWithT(t)
			cp := controlPlane(ns, "bad")
			tt.mutate(cp)
			err := env.Client.Create(ctx, cp)
			g.Expect(err).To(HaveOccurred())
			g.Expect(err.Error()).To(ContainSubstring(tt.message))
		})
	}

	updates := []struct {
		name    string
		mutate  func(*controlplanev1.OpenshiftAssistedControlPlane)
		message string
	}{
		{"base domain", func(cp *controlplanev1.OpenshiftAssistedControlPlane) { cp.Spec.Config.BaseDomain = "example.org" },
			"baseDomain is immutable"},
		{"cluster name", func(cp *controlplanev1.OpenshiftAssistedControlPlane) { cp.Spec.Config.ClusterName = "other" },
			"clusterName is immutable"},
		{"cluster name removed", func(cp *controlplanev1.OpenshiftAssistedControlPlane) { cp.Spec.Config.ClusterName = "" },
			"clusterName is immutable"},
		// Not "replicas 2 needs spec.arbiter", a rule for new control planes: an arbiter cannot
		// be added to this one.
		{"replicas to two", func(cp *controlplanev1.OpenshiftAssistedControlPlane) { cp.Spec.Replicas = ptr.To[int32](2) },
			"replicas cannot change from 3, 4 or 5 to 2"},
		{"replicas to two with an arbiter", func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
			cp.Spec.Replicas = ptr.To[int32](2)
			cp.Spec.Arbiter = arbiter()
		}, "replicas cannot change from 3, 4 or 5 to 2"},
		{"an arbiter added", func(cp *controlplanev1.OpenshiftAssistedControlPlane) { cp.Spec.Arbiter = arbiter() },
			"spec.arbiter cannot be added or removed: OpenShift cannot turn two nodes with an arbiter into a control plane without one, or back"},
		{"fencing added", func(cp *controlplanev1.OpenshiftAssistedControlPlane) { cp.Spec.Fencing = fencing() },
			"spec.fencing cannot be added or removed: OpenShift cannot turn two nodes with fencing into another control-plane topology, or back"},
	}
	for i, tt := range updates {
		t.Run("update "+tt.name, func(t *testing.T) {
			g := NewWithT(t)
			cp := controlPlane(ns, "immutable-"+string(rune('a'+i)))
			g.Expect(env.Client.Create(ctx, cp)).To(Succeed())
			tt.mutate(cp)
			err := env.Client.Update(ctx, cp)
			g.Expect(err).To(HaveOccurred())
			g.Expect(err.Error()).To(ContainSubstring(tt.message))
			// Only the rule the change breaks speaks (issue: refusals that mix rules).
			var status apierrors.APIStatus
			g.Expect(errors.As(err, &status)).To(BeTrue())
			g.Expect(status.Status().Details.Causes).To(HaveLen(1), "%v", err)
		})
	}

	// A valid upgrade and a scale up are accepted.
	g := NewWithT(t)
	cp := controlPlane(ns, "valid-update")
	cp.Spec.Replicas = ptr.To[int32](3)
	g.Expect(env.Client.Create(ctx, cp)).To(Succeed())
	cp.Spec.DistributionVersion = "4.18.0-rc.2"
	cp.Spec.Replicas = ptr.To[int32](5)
	g.Expect(env.Client.Update(ctx, cp)).To(Succeed())

	// Capabilities without MachineAPI on platform baremetal, and any baseline on platform None
	// (no VIPs), where the installer creates no master machine.openshift.io Machines.
	noMAPI := controlPlane(ns, "baremetal-without-machine-api")
	noMAPI.Spec.Replicas = ptr.To[int32](3)
	noMAPI.Spec.Config.Capabilities = controlplanev1.Capabilities{BaselineCapability: "None", AdditionalEnabledCapabilities: []string{"Console"}}
	g.Expect(env.Client.Create(ctx, noMAPI)).To(Succeed())
	external := controlPlane(ns, "external-load-balancer-vcurrent")
	external.Spec.Replicas = ptr.To[int32](3)
	external.Spec.Config.APIVIPs, external.Spec.Config.IngressVIPs = nil, nil
	external.Spec.Config.Capabilities.BaselineCapability = "vCurrent"
	g.Expect(env.Client.Create(ctx, external)).To(Succeed())

	// Upstream v0.3.0-v0.3.2's example: the version with its release's architecture.
	tagged := controlPlane(ns, "tagged-version")
	tagged.Spec.DistributionVersion = "4.19.0-ec.2-x86_64"
	g.Expect(env.Client.Create(ctx, tagged)).To(Succeed())

	// Dual-stack VIPs in the same order of families, and a single node that names its host.
	dual := controlPlane(ns, "dual-stack")
	dual.Spec.Config.APIVIPs = []string{"192.168.111.5", "fd00::5"}
	dual.Spec.Config.IngressVIPs = []string{"192.168.111.4", "fd00::4"}
	g.Expect(env.Client.Create(ctx, dual)).To(Succeed())
	sno := controlPlane(ns, "named-sno")
	sno.Spec.Replicas = ptr.To[int32](1)
	sno.Spec.Config.APIVIPs, sno.Spec.Config.IngressVIPs = nil, nil
	sno.Spec.OpenshiftAssistedConfigSpec.NodeRegistration.Name = "sno-0"
	sno.Spec.OpenshiftAssistedConfigSpec.NodeRegistration.ProviderID = "metal3://sno-0"
	g.Expect(env.Client.Create(ctx, sno)).To(Succeed())
	// Three hosts each named from its own metadata, as upstream's examples name them.
	byHost := controlPlane(ns, "named-by-host")
	byHost.Spec.Replicas = ptr.To[int32](3)
	byHost.Spec.OpenshiftAssistedConfigSpec.NodeRegistration.Name = "$METADATA_NAME"
	byHost.Spec.OpenshiftAssistedConfigSpec.NodeRegistration.ProviderID = "metal3://$METADATA_UUID"
	g.Expect(env.Client.Create(ctx, byHost)).To(Succeed())
}

// TestReplicaTransitionsOpenShiftDoesNotSupport checks that the API server refuses, with a message
// that says what to do instead, a single-node control plane grown to more nodes, a highly
// available one reduced to a single node or to two nodes, and two nodes with an arbiter grown,
// through a spec update as through the scale subresource (`kubectl scale`, which no validating
// webhook on the main resource sees); and still accepts changes between 3, 4 and 5. A refused
// change gets the message of the transition alone: not also those of the rules its new replicas
// would break on a new control plane (a single node's VIPs, two nodes' arbiter), whose advice
// (remove the VIPs, add an arbiter) cannot be followed on an existing one.
func TestReplicaTransitionsOpenShiftDoesNotSupport(t *testing.T) {
	ctx := context.Background()
	ns, err := env.CreateNamespace(ctx, "replicas")
	NewWithT(t).Expect(err).NotTo(HaveOccurred())

	const (
		grow       = "replicas cannot change from 1 to more: single-node OpenShift cannot be grown to a highly available control plane; create a new cluster with replicas 3"
		shrink     = "replicas cannot change from 2, 3, 4 or 5 to 1: a highly available control plane cannot be reduced to a single node: etcd would lose quorum"
		toTwo      = "replicas cannot change from 3, 4 or 5 to 2: a highly available control plane cannot become two-node OpenShift"
		growArbitr = "replicas cannot change from 2 to 3, 4 or 5: two-node OpenShift (with an arbiter or with fencing) cannot grow its control plane"
	)
	setReplicas := map[string]func(cp *controlplanev1.OpenshiftAssistedControlPlane, n int32) error{
		"spec": func(cp *controlplanev1.OpenshiftAssistedControlPlane, n int32) error {
			cp.Spec.Replicas = ptr.To(n)
			return env.Client.Update(ctx, cp)
		},
		"scale subresource": func(cp *controlplanev1.OpenshiftAssistedControlPlane, n int32) error {
			scale := &autoscalingv1.Scale{}
			if err := env.Client.SubResource("scale").Get(ctx, cp, scale); err != nil {
				return err
			}
			scale.Spec.Replicas = n
			return env.Client.SubResource("scale").Update(ctx, cp, client.WithSubResourceBody(scale))
		},
	}
	for _, tc := range []struct {
		name     string
		from, to int32
		want     string // "" when accepted
	}{
		{"1 to 3", 1, 3, grow},
		{"1 to 5", 1, 5, grow},
		{"1 to 2", 1, 2, grow},
		{"3 to 1", 3, 1, shrink},
		{"5 to 1", 5, 1, shrink},
		{"2 to 1", 2, 1, shrink},
		{"3 to 2", 3, 2, toTwo},
		{"2 to 3", 2, 3, growArbitr},
		{"2 to 2", 2, 2, ""},
		{"3 to 5", 3, 5, ""},
		{"5 to 3", 5, 3, ""},
		{"4 to 3", 4, 3, ""},
		{"1 to 1", 1, 1, ""},
	} {
		for how, set := range setReplicas {
			t.Run(tc.name+" through the "+how, func(t *testing.T) {
				g := NewWithT(t)
				cp := controlPlane(ns, fmt.Sprintf("r%d-%d-%s", tc.from, tc.to, strings.ReplaceAll(how, " ", "-")))
				cp.Spec.Replicas = ptr.To(tc.from)
				switch tc.from {
				case 1:
					// Single-node OpenShift takes no VIPs.
					cp.Spec.Config.APIVIPs, cp.Spec.Config.IngressVIPs = nil, nil
				case 2:
					cp.Spec.Arbiter = arbiter()
				}
				if tc.from > 1 {
					// Each host named from its metadata: a fixed name would do for a single node only.
					cp.Spec.OpenshiftAssistedConfigSpec.NodeRegistration.Name = "$METADATA_NAME"
				}
				if tc.from == 1 {
					cp.Spec.OpenshiftAssistedConfigSpec.NodeRegistration.Name = "sno-0"
				}
				g.Expect(env.Client.Create(ctx, cp)).To(Succeed())
				err := set(cp, tc.to)
				got := &controlplanev1.OpenshiftAssistedControlPlane{}
				g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(cp), got)).To(Succeed())
				if tc.want == "" {
					g.Expect(err).NotTo(HaveOccurred())
					g.Expect(got.Spec.Replicas).To(HaveValue(Equal(tc.to)))
					return
				}
				g.Expect(err).To(HaveOccurred())
				g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
				g.Expect(err.Error()).To(ContainSubstring(tc.want))
				var status apierrors.APIStatus
				g.Expect(errors.As(err, &status)).To(BeTrue())
				g.Expect(status.Status().Details.Causes).To(HaveLen(1), "only the transition's rule speaks: %v", err)
				g.Expect(got.Spec.Replicas).To(HaveValue(Equal(tc.from)), "the refused change is not stored")
			})
		}
	}
}
