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
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	utilconversion "sigs.k8s.io/cluster-api/util/conversion"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	controlplanev1alpha2 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha2"
	controlplanev1alpha3 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha3"
	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/controlplane/internal/webhooks"
	capoascheme "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/scheme"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/testenv"
)

const controlPlaneCRD = "openshiftassistedcontrolplanes.controlplane.cluster.x-k8s.io"

// upstreamControlPlane is the control plane of upstream's multinode example
// (examples/multinode-example.yaml.j2, v0.4.0), with the status its controller leaves (Cluster
// API v1beta1 contract).
func upstreamControlPlane(ns string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "controlplane.cluster.x-k8s.io/v1alpha2",
		"kind":       "OpenshiftAssistedControlPlane",
		"metadata": map[string]any{"namespace": ns, "name": "test-multinode", "annotations": map[string]any{
			"cluster.x-k8s.io/release-image-repository-override": "registry.example.com/ocp-release",
		}},
		"spec": map[string]any{
			"openshiftAssistedConfigSpec": map[string]any{
				"pullSecretRef":    map[string]any{"name": "pull-secret"},
				"nodeRegistration": map[string]any{"kubeletExtraLabels": []any{"metal3.io/uuid=${METADATA_UUID}"}},
			},
			"distributionVersion": "4.19.0",
			"config": map[string]any{
				"apiVIPs":       []any{"192.168.222.40"},
				"ingressVIPs":   []any{"192.168.222.41"},
				"baseDomain":    "lab.home",
				"pullSecretRef": map[string]any{"name": "pull-secret"},
				"capabilities":  map[string]any{"baselineCapability": "None", "additionalEnabledCapabilities": []any{"marketplace"}},
			},
			"machineTemplate": map[string]any{
				"infrastructureRef": map[string]any{"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
					"kind": "Metal3MachineTemplate", "name": "test-multinode-controlplane", "namespace": ns},
				"nodeDrainTimeout": "5m0s",
			},
			"replicas": int64(3),
		},
	}}
}

func upstreamControlPlaneStatus() map[string]any {
	return map[string]any{
		"selector": "cluster.x-k8s.io/cluster-name=test-multinode,cluster.x-k8s.io/control-plane", "replicas": int64(3),
		"readyReplicas": int64(3), "updatedReplicas": int64(3), "unavailableReplicas": int64(1),
		"initialized": true, "ready": true, "version": "v1.32.5", "distributionVersion": "4.19.0",
		"conditions": []any{map[string]any{"type": "Available", "status": "True", "lastTransitionTime": "2026-01-02T03:04:05Z"}},
	}
}

// metal3Templates is the CRD of the machine templates upstream's control planes name: conversion
// to v1alpha2 reads it for the infrastructureRef's apiVersion.
const metal3Templates = testenv.ThirdPartyCRDDir + "/metal3/infrastructure.cluster.x-k8s.io_metal3machinetemplates.yaml"

// startWithWebhooks starts an API server with crds (nil: the provider's and the Metal3 machine
// templates') and the control-plane provider's webhooks, validating and converting, served by a
// manager; stop stops both.
func startWithWebhooks(ctx context.Context, crds []*apiextensionsv1.CustomResourceDefinition) (hub *testenv.Environment, stop func(), err error) {
	s, err := capoascheme.New(bootstrapv1.AddToScheme, controlplanev1.AddToScheme, controlplanev1alpha3.AddToScheme, controlplanev1alpha2.AddToScheme)
	if err != nil {
		return nil, nil, err
	}
	o := testenv.Options{Scheme: s, CRDs: crds, WebhookManifestDirs: []string{"controlplane/config/webhook"}}
	if crds == nil {
		o.CRDPaths = []string{"controlplane/config/crd/bases", metal3Templates}
	}
	return testenv.StartWithWebhooks(ctx, o, webhooks.SetupWithManager)
}

// TestUpstreamExamplesApplyStrictly creates the control planes of upstream's documented examples,
// unchanged, with strict field validation, and reads them back at v1alpha4 with their meaning.
func TestUpstreamExamplesApplyStrictly(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	hub, stop, err := startWithWebhooks(ctx, nil)
	g.Expect(err).NotTo(HaveOccurred())
	defer stop()
	ns, err := hub.CreateNamespace(ctx, "examples")
	g.Expect(err).NotTo(HaveOccurred())

	created, err := testenv.CreateStrictly(ctx, hub.Client, ns, "testdata/upstream/v0.4.0-examples.yaml")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(created).To(HaveLen(3))
	want := map[string]int32{"test-multinode": 3, "test-sno": 1, "test-multinode-okd": 3}
	for _, o := range created {
		cp := &controlplanev1.OpenshiftAssistedControlPlane{}
		g.Expect(hub.Client.Get(ctx, client.ObjectKeyFromObject(o), cp)).To(Succeed())
		g.Expect(cp.Spec.Replicas).To(Equal(ptr.To(want[cp.Name])), cp.Name)
		g.Expect(cp.Spec.MachineTemplate.Spec.InfrastructureRef).To(Equal(clusterv1.ContractVersionedObjectReference{
			APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "Metal3MachineTemplate", Name: cp.Name + "-controlplane"}), cp.Name)
		g.Expect(cp.Spec.Config.BaseDomain).To(Equal("lab.home"), cp.Name)
		g.Expect(cp.Spec.OpenshiftAssistedConfigSpec.NodeRegistration.KubeletExtraLabels).To(Equal([]string{`metal3.io/uuid="${METADATA_UUID}"`}), cp.Name)
	}

	// v0.3.2's example names the release's architecture in distributionVersion, as its releases
	// used it as the whole tag: accepted, and kept as written.
	created, err = testenv.CreateStrictly(ctx, hub.Client, ns, "testdata/upstream/v0.3.2-examples.yaml")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(created).To(HaveLen(1))
	cp := &controlplanev1.OpenshiftAssistedControlPlane{}
	g.Expect(hub.Client.Get(ctx, client.ObjectKeyFromObject(created[0]), cp)).To(Succeed())
	g.Expect(cp.Spec.DistributionVersion).To(Equal("4.19.0-ec.2-x86_64"))
}

// TestUpgradeFromUpstreamStoredVersion installs our CRD over a hub where upstream v0.3.0 to
// v0.4.0 stored control planes at v1alpha2, with the provider's conversion webhook served: the
// CRD without v1alpha2 is refused and ours accepted; the control plane reads back at v1alpha4
// with its meaning (infrastructureRef by group, timeouts in seconds, status in the v1beta2
// contract's form); what only v1alpha4 holds survives a v1alpha2 client's read and write (the
// infrastructureRef comes back at the version the template's CRD names for the contract);
// v1alpha2 writes meet the provider's validation; the storage migration leaves v1alpha2 unused.
func TestUpgradeFromUpstreamStoredVersion(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ours, err := testenv.ProviderCRD("controlplane", controlplanev1.GroupVersion.Group, "openshiftassistedcontrolplanes")
	g.Expect(err).NotTo(HaveOccurred())
	templates, err := testenv.ReadCRD(metal3Templates)
	g.Expect(err).NotTo(HaveOccurred())
	hub, stop, err := startWithWebhooks(ctx, []*apiextensionsv1.CustomResourceDefinition{testenv.OnlyVersionStored(ours, "v1alpha2"), templates})
	g.Expect(err).NotTo(HaveOccurred())
	defer stop()

	ns, err := hub.CreateNamespace(ctx, "upstream")
	g.Expect(err).NotTo(HaveOccurred())
	cp := upstreamControlPlane(ns)
	g.Expect(hub.Client.Create(ctx, cp.DeepCopy())).To(Succeed())
	withStatus := cp.DeepCopy()
	g.Expect(hub.Client.Get(ctx, client.ObjectKeyFromObject(cp), withStatus)).To(Succeed())
	g.Expect(unstructured.SetNestedMap(withStatus.Object, upstreamControlPlaneStatus(), "status")).To(Succeed())
	g.Expect(hub.Client.Status().Update(ctx, withStatus)).To(Succeed())

	withoutAlpha := ours.DeepCopy()
	withoutAlpha.Spec.Versions = []apiextensionsv1.CustomResourceDefinitionVersion{*testenv.CRDVersion(ours, "v1alpha3"), *testenv.CRDVersion(ours, "v1alpha4")}
	g.Expect(testenv.ReplaceCRD(ctx, hub.Client, withoutAlpha)).To(MatchError(ContainSubstring("must remain in spec.versions")))
	g.Expect(testenv.ReplaceCRD(ctx, hub.Client, ours)).To(Succeed())

	// At v1alpha4, as the provider reads it (through the conversion webhook, once it answers).
	got := &controlplanev1.OpenshiftAssistedControlPlane{}
	g.Eventually(func() error {
		return hub.Client.Get(ctx, client.ObjectKeyFromObject(cp), got)
	}, time.Minute, 200*time.Millisecond).Should(Succeed())
	g.Expect(got.Spec.MachineTemplate.Spec.InfrastructureRef).To(Equal(clusterv1.ContractVersionedObjectReference{
		APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "Metal3MachineTemplate", Name: "test-multinode-controlplane"}))
	g.Expect(got.Spec.MachineTemplate.Spec.Deletion.NodeDrainTimeoutSeconds).To(Equal(ptr.To[int32](300)))
	g.Expect(got.Spec.Replicas).To(Equal(ptr.To[int32](3)))
	g.Expect(got.Spec.Config.APIVIPs).To(Equal([]string{"192.168.222.40"}))
	g.Expect(got.Spec.Config.Capabilities.AdditionalEnabledCapabilities).To(Equal([]string{"marketplace"}))
	g.Expect(got.Spec.OpenshiftAssistedConfigSpec.NodeRegistration.KubeletExtraLabels).To(Equal([]string{"metal3.io/uuid=${METADATA_UUID}"}))
	g.Expect(got.ReleaseImageRepository()).To(Equal("registry.example.com/ocp-release"))
	g.Expect(got.Status.Initialization.ControlPlaneInitialized).To(Equal(ptr.To(true)))
	g.Expect(got.Status.Replicas).To(Equal(ptr.To[int32](3)))
	g.Expect(got.Status.AvailableReplicas).To(Equal(ptr.To[int32](2)))
	g.Expect(got.Status.UpToDateReplicas).To(Equal(ptr.To[int32](3)))
	g.Expect(got.Status.Version).To(Equal("v1.32.5"))
	g.Expect(got.Status.Conditions).To(ConsistOf(HaveField("Type", "Available")))

	// What only v1alpha4 holds survives a v1alpha2 client that reads and writes the object.
	got.Spec.Config.NetworkType = "OVNKubernetes"
	got.Spec.Remediation.MaxRetry = ptr.To[int32](2)
	got.Spec.OpenshiftAssistedConfigSpec.PostBootstrapCommands = []string{"echo post"}
	g.Expect(hub.Client.Update(ctx, got)).To(Succeed())
	old := &unstructured.Unstructured{}
	old.SetGroupVersionKind(controlplanev1alpha2.GroupVersion.WithKind(controlplanev1.ControlPlaneKind))
	g.Expect(hub.Client.Get(ctx, client.ObjectKeyFromObject(cp), old)).To(Succeed())
	// The template's CRD names v1beta2 for the v1beta2 contract; upstream's namespace is dropped
	// (v1alpha4 references templates in the control plane's namespace).
	ref, _, err := unstructured.NestedStringMap(old.Object, "spec", "machineTemplate", "infrastructureRef")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ref).To(Equal(map[string]string{
		"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2", "kind": "Metal3MachineTemplate", "name": "test-multinode-controlplane"}))
	// The spec upstream wrote, with the default of cpuArchitecture (upstream's schema has it too).
	want := cp.DeepCopy()
	g.Expect(unstructured.SetNestedField(want.Object, "x86_64", "spec", "openshiftAssistedConfigSpec", "cpuArchitecture")).To(Succeed())
	for _, field := range []string{"config", "openshiftAssistedConfigSpec", "replicas", "distributionVersion"} {
		g.Expect(old.Object["spec"].(map[string]any)[field]).To(Equal(want.Object["spec"].(map[string]any)[field]), "spec.%s at v1alpha2", field)
	}
	g.Expect(old.Object["status"]).To(And(HaveKeyWithValue("ready", true), HaveKeyWithValue("unavailableReplicas", int64(1))))
	old.SetLabels(map[string]string{"edited-at": "v1alpha2"})
	g.Expect(hub.Client.Update(ctx, old)).To(Succeed())
	g.Expect(hub.Client.Get(ctx, client.ObjectKeyFromObject(cp), got)).To(Succeed())
	g.Expect(got.Labels).To(HaveKeyWithValue("edited-at", "v1alpha2"))
	g.Expect(got.Spec.Config.NetworkType).To(Equal("OVNKubernetes"))
	g.Expect(got.Spec.Remediation.MaxRetry).To(Equal(ptr.To[int32](2)))
	g.Expect(got.Spec.OpenshiftAssistedConfigSpec.PostBootstrapCommands).To(Equal([]string{"echo post"}))
	g.Expect(got.Annotations).NotTo(HaveKey(utilconversion.DataAnnotation), "the hub keeps no conversion data")

	// A v1alpha2 write meets the provider's validation (the webhook sees it as v1alpha4).
	bad := upstreamControlPlane(ns)
	bad.SetName("bad-proxy")
	g.Expect(unstructured.SetNestedField(bad.Object, "not a URL", "spec", "config", "proxy", "httpProxy")).To(Succeed())
	g.Expect(hub.Client.Create(ctx, bad)).To(MatchError(ContainSubstring("httpProxy")))

	// The storage migration docs/migration.md gives; then a CRD without v1alpha2 is accepted.
	g.Expect(testenv.MigrateStorage(ctx, hub.Client, controlPlaneCRD, &controlplanev1.OpenshiftAssistedControlPlaneList{})).To(Succeed())
	g.Expect(testenv.ReplaceCRD(ctx, hub.Client, withoutAlpha)).To(Succeed())
	g.Expect(hub.Client.Get(ctx, client.ObjectKeyFromObject(cp), got)).To(Succeed())
	g.Expect(got.Spec.Config.BaseDomain).To(Equal("lab.home"))
}

// TestUpgradeFromStoredV1alpha3 installs our CRD over a hub where the previous release stored a
// control plane at v1alpha3, with the provider's webhooks served: it reads back at v1alpha4 with
// its machine template on the v1beta2 contract's paths (spec.machineTemplate.spec); a server-side
// apply of those paths and of spec.version, as Cluster API's topology controller sends, is
// accepted (v1alpha3's schema refuses it: "field not declared in schema"); what only v1alpha4
// holds survives a v1alpha3 client's read and write; the storage migration moves it to v1alpha4.
func TestUpgradeFromStoredV1alpha3(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ours, err := testenv.ProviderCRD("controlplane", controlplanev1.GroupVersion.Group, "openshiftassistedcontrolplanes")
	g.Expect(err).NotTo(HaveOccurred())
	hub, stop, err := startWithWebhooks(ctx, []*apiextensionsv1.CustomResourceDefinition{testenv.OnlyVersionStored(ours, "v1alpha3")})
	g.Expect(err).NotTo(HaveOccurred())
	defer stop()
	ns, err := hub.CreateNamespace(ctx, "v1alpha3")
	g.Expect(err).NotTo(HaveOccurred())

	ref := clusterv1.ContractVersionedObjectReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "Metal3MachineTemplate", Name: "cp"}
	stored := &controlplanev1alpha3.OpenshiftAssistedControlPlane{}
	stored.Namespace, stored.Name = ns, "stored"
	stored.Spec = controlplanev1alpha3.OpenshiftAssistedControlPlaneSpec{
		Config:              controlplanev1alpha3.OpenshiftAssistedControlPlaneConfigSpec{BaseDomain: "example.com"},
		DistributionVersion: "4.19.3",
		MachineTemplate: controlplanev1alpha3.OpenshiftAssistedControlPlaneMachineTemplate{
			InfrastructureRef: ref, Deletion: clusterv1.MachineDeletionSpec{NodeDrainTimeoutSeconds: ptr.To[int32](60)},
		},
	}
	g.Expect(hub.Client.Create(ctx, stored)).To(Succeed())

	// Topology's apply, refused by v1alpha3's schema.
	apply := func(apiVersion string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": apiVersion, "kind": controlplanev1.ControlPlaneKind,
			"metadata": map[string]any{"namespace": ns, "name": "stored"},
			"spec": map[string]any{
				"version": "v1.32.5",
				"machineTemplate": map[string]any{"spec": map[string]any{
					"infrastructureRef": map[string]any{"apiGroup": ref.APIGroup, "kind": ref.Kind, "name": "cp-2"},
					"readinessGates":    []any{map[string]any{"conditionType": "NetworkReady"}},
				}},
			},
		}}
	}
	//nolint:staticcheck // client.Apply with Patch: the form Cluster API's topology controller uses
	applyErr := hub.Client.Patch(ctx, apply("controlplane.cluster.x-k8s.io/v1alpha3"), client.Apply, client.FieldOwner("capi-topology"), client.ForceOwnership)
	g.Expect(applyErr).To(MatchError(ContainSubstring("field not declared in schema")))

	g.Expect(testenv.ReplaceCRD(ctx, hub.Client, ours)).To(Succeed())
	got := &controlplanev1.OpenshiftAssistedControlPlane{}
	g.Eventually(func() error {
		return hub.Client.Get(ctx, client.ObjectKeyFromObject(stored), got)
	}, time.Minute, 200*time.Millisecond).Should(Succeed())
	g.Expect(got.Spec.MachineTemplate.Spec.InfrastructureRef).To(Equal(ref))
	g.Expect(got.Spec.MachineTemplate.Spec.Deletion.NodeDrainTimeoutSeconds).To(Equal(ptr.To[int32](60)))

	//nolint:staticcheck // as above
	g.Eventually(func() error {
		return hub.Client.Patch(ctx, apply(controlplanev1.GroupVersion.String()), client.Apply, client.FieldOwner("capi-topology"), client.ForceOwnership)
	}, 30*time.Second, 200*time.Millisecond).Should(Succeed())
	g.Expect(hub.Client.Get(ctx, client.ObjectKeyFromObject(stored), got)).To(Succeed())
	g.Expect(got.Spec.Version).To(Equal("v1.32.5"))
	g.Expect(got.Spec.MachineTemplate.Spec.InfrastructureRef.Name).To(Equal("cp-2"))
	g.Expect(got.Spec.MachineTemplate.Spec.ReadinessGates).To(Equal([]clusterv1.MachineReadinessGate{{ConditionType: "NetworkReady"}}))

	// A v1alpha3 client reads and writes it: v1alpha4's fields survive.
	old := &controlplanev1alpha3.OpenshiftAssistedControlPlane{}
	g.Expect(hub.Client.Get(ctx, client.ObjectKeyFromObject(stored), old)).To(Succeed())
	g.Expect(old.Spec.MachineTemplate.InfrastructureRef.Name).To(Equal("cp-2"))
	old.Labels = map[string]string{"edited-at": "v1alpha3"}
	g.Expect(hub.Client.Update(ctx, old)).To(Succeed())
	g.Expect(hub.Client.Get(ctx, client.ObjectKeyFromObject(stored), got)).To(Succeed())
	g.Expect(got.Labels).To(HaveKeyWithValue("edited-at", "v1alpha3"))
	g.Expect(got.Spec.Version).To(Equal("v1.32.5"))
	g.Expect(got.Spec.MachineTemplate.Spec.ReadinessGates).To(HaveLen(1))
	g.Expect(got.Annotations).NotTo(HaveKey(utilconversion.DataAnnotation), "the hub keeps no conversion data")

	g.Expect(testenv.MigrateStorage(ctx, hub.Client, controlPlaneCRD, &controlplanev1.OpenshiftAssistedControlPlaneList{})).To(Succeed())
	crd := &apiextensionsv1.CustomResourceDefinition{}
	g.Expect(hub.Client.Get(ctx, client.ObjectKey{Name: controlPlaneCRD}, crd)).To(Succeed())
	g.Expect(crd.Status.StoredVersions).To(Equal([]string{"v1alpha4"}))
}
