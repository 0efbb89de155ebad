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
	utilconversion "sigs.k8s.io/cluster-api/util/conversion"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1alpha1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha1"
	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/bootstrap/internal/webhooks"
	capoascheme "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/scheme"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/testenv"
)

var bootstrapPlurals = []string{"openshiftassistedconfigs", "openshiftassistedconfigtemplates"}

// upstreamConfig is an OpenshiftAssistedConfig as upstream's documented examples write it and as
// its controller leaves the status (Cluster API v1beta1 contract: ready, v1beta1 conditions).
func upstreamConfig(ns string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "bootstrap.cluster.x-k8s.io/v1alpha1",
		"kind":       "OpenshiftAssistedConfig",
		"metadata":   map[string]any{"namespace": ns, "name": "test-multinode-workers-abcde"},
		"spec": map[string]any{
			"cpuArchitecture":      "x86_64",
			"pullSecretRef":        map[string]any{"name": "pull-secret"},
			"additionalNTPSources": []any{"ntp.example.com"},
			"nodeRegistration": map[string]any{
				"name":               "$METADATA_NAME",
				"kubeletExtraLabels": []any{"metal3.io/uuid=$METADATA_UUID"},
			},
			"kernelArguments": []any{map[string]any{"operation": "append", "value": "console=ttyS0"}},
		},
	}}
	return u
}

func upstreamConfigStatus(ns string) map[string]any {
	return map[string]any{
		"ready":          true,
		"dataSecretName": "test-multinode-workers-abcde",
		"infraEnvRef": map[string]any{"apiVersion": "agent-install.openshift.io/v1beta1", "kind": "InfraEnv",
			"namespace": ns, "name": "test-multinode-workers-abcde"},
		"agentRef":           map[string]any{"name": "4f3a2c1e-0000-0000-0000-000000000001"},
		"observedGeneration": int64(1),
		"conditions": []any{map[string]any{
			"type": "Ready", "status": "True", "lastTransitionTime": "2026-01-02T03:04:05Z",
		}, map[string]any{
			"type": "DataSecretAvailable", "status": "False", "severity": "Info", "reason": "WaitingForInstall",
			"message": "waiting", "lastTransitionTime": "2026-01-02T03:04:05Z",
		}},
	}
}

func upstreamTemplate(ns string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "bootstrap.cluster.x-k8s.io/v1alpha1",
		"kind":       "OpenshiftAssistedConfigTemplate",
		"metadata":   map[string]any{"namespace": ns, "name": "test-multinode-workers"},
		"spec": map[string]any{"template": map[string]any{
			"metadata": map[string]any{"labels": map[string]any{"tier": "workers"}},
			"spec": map[string]any{
				"cpuArchitecture":  "x86_64",
				"pullSecretRef":    map[string]any{"name": "pull-secret"},
				"nodeRegistration": map[string]any{"name": "$METADATA_NAME"},
			},
		}},
	}}
}

// startWithWebhooks starts an API server with crds (nil: the provider's) and the bootstrap
// provider's webhooks, validating and converting, served by a manager; stop stops both.
func startWithWebhooks(ctx context.Context, crds []*apiextensionsv1.CustomResourceDefinition) (hub *testenv.Environment, stop func(), err error) {
	s, err := capoascheme.New(bootstrapv1.AddToScheme, bootstrapv1alpha1.AddToScheme)
	if err != nil {
		return nil, nil, err
	}
	o := testenv.Options{Scheme: s, CRDs: crds, WebhookManifestDirs: []string{"bootstrap/config/webhook"}}
	if crds == nil {
		o.CRDPaths = []string{"bootstrap/config/crd/bases"}
	}
	return testenv.StartWithWebhooks(ctx, o, webhooks.SetupWithManager)
}

// TestUpstreamExamplesApplyStrictly creates the objects of upstream's documented examples,
// unchanged, with strict field validation, and reads them back at v1alpha2 with their meaning.
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

	template := &bootstrapv1.OpenshiftAssistedConfigTemplate{}
	g.Expect(hub.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "test-multinode-worker"}, template)).To(Succeed())
	g.Expect(template.Spec.Template.Spec.NodeRegistration.KubeletExtraLabels).To(Equal([]string{`metal3.io/uuid="${METADATA_UUID}"`}))
	g.Expect(template.Spec.Template.Spec.PullSecretRef.Name).To(Equal("pull-secret"))
	config := &bootstrapv1.OpenshiftAssistedConfig{}
	g.Expect(hub.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "test-worker-0"}, config)).To(Succeed())
	g.Expect(config.Spec.NodeRegistration.Name).To(Equal("$METADATA_NAME"))
	g.Expect(hub.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "my-worker-config"}, config)).To(Succeed())
	g.Expect(config.Spec.NodeRegistration.ProviderID).To(Equal("metal3://$METADATA_UUID"))
}

// TestUpgradeFromUpstreamStoredVersion installs our CRDs over a hub where a release of the
// upstream bootstrap provider (v0.2.0 to v0.4.0) stored objects at v1alpha1, with the provider's
// conversion webhook served: the CRD without v1alpha1 is refused and ours accepted; every object
// reads back at v1alpha2 with its meaning (status in the v1beta2 contract's form); what only
// v1alpha2 holds survives a v1alpha1 client's read and write; v1alpha1 writes meet the provider's
// validation; and the storage migration that docs/migration.md gives leaves v1alpha1 unused.
func TestUpgradeFromUpstreamStoredVersion(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ours := map[string]*apiextensionsv1.CustomResourceDefinition{}
	var old []*apiextensionsv1.CustomResourceDefinition
	for _, plural := range bootstrapPlurals {
		crd, err := testenv.ProviderCRD("bootstrap", bootstrapv1.GroupVersion.Group, plural)
		g.Expect(err).NotTo(HaveOccurred())
		ours[plural] = crd
		old = append(old, testenv.OnlyVersionStored(crd, "v1alpha1"))
	}
	hub, stop, err := startWithWebhooks(ctx, old)
	g.Expect(err).NotTo(HaveOccurred())
	defer stop()

	ns, err := hub.CreateNamespace(ctx, "upstream")
	g.Expect(err).NotTo(HaveOccurred())
	config, template := upstreamConfig(ns), upstreamTemplate(ns)
	g.Expect(hub.Client.Create(ctx, config)).To(Succeed())
	g.Expect(unstructured.SetNestedMap(config.Object, upstreamConfigStatus(ns), "status")).To(Succeed())
	g.Expect(hub.Client.Status().Update(ctx, config)).To(Succeed())
	g.Expect(hub.Client.Create(ctx, template)).To(Succeed())

	for _, plural := range bootstrapPlurals {
		name := plural + "." + bootstrapv1.GroupVersion.Group
		withoutAlpha := ours[plural].DeepCopy()
		withoutAlpha.Spec.Versions = []apiextensionsv1.CustomResourceDefinitionVersion{*testenv.CRDVersion(ours[plural], "v1alpha2")}
		g.Expect(testenv.ReplaceCRD(ctx, hub.Client, withoutAlpha)).To(MatchError(ContainSubstring("must remain in spec.versions")), "%s without v1alpha1", name)
		g.Expect(testenv.ReplaceCRD(ctx, hub.Client, ours[plural])).To(Succeed(), "%s replaced by ours", name)
	}

	// At v1alpha2, as the providers read it (through the conversion webhook, once it answers).
	got := &bootstrapv1.OpenshiftAssistedConfig{}
	g.Eventually(func() error {
		return hub.Client.Get(ctx, client.ObjectKeyFromObject(config), got)
	}, time.Minute, 200*time.Millisecond).Should(Succeed())
	g.Expect(got.Spec.NodeRegistration).To(Equal(bootstrapv1.NodeRegistrationOptions{
		Name: "$METADATA_NAME", KubeletExtraLabels: []string{"metal3.io/uuid=$METADATA_UUID"}}))
	g.Expect(got.Spec.PullSecretRef.Name).To(Equal("pull-secret"))
	g.Expect(got.Spec.KernelArguments).To(HaveLen(1))
	g.Expect(got.Status.Initialization.DataSecretCreated).To(Equal(ptr.To(true)))
	g.Expect(got.Status.DataSecretName).To(Equal("test-multinode-workers-abcde"))
	g.Expect(got.Status.AgentRef).To(HaveField("Name", "4f3a2c1e-0000-0000-0000-000000000001"))
	g.Expect(got.Status.AgentRef).To(HaveField("Kind", "Agent"))
	g.Expect(got.Status.Conditions).To(ConsistOf(
		HaveField("Type", "Ready"),
		And(HaveField("Type", "DataSecretAvailable"), HaveField("Reason", "WaitingForInstall"))))
	gotTemplate := &bootstrapv1.OpenshiftAssistedConfigTemplate{}
	g.Expect(hub.Client.Get(ctx, client.ObjectKeyFromObject(template), gotTemplate)).To(Succeed())
	g.Expect(gotTemplate.Spec.Template.ObjectMeta.Labels).To(HaveKeyWithValue("tier", "workers"))
	g.Expect(gotTemplate.Spec.Template.Spec.NodeRegistration.Name).To(Equal("$METADATA_NAME"))

	// What only v1alpha2 holds survives a v1alpha1 client that reads and writes the object.
	got.Spec.PreBootstrapCommands = []string{"echo pre"}
	got.Spec.NodeRegistration.ProviderID = "metal3://$METADATA_UUID"
	g.Expect(hub.Client.Update(ctx, got)).To(Succeed())
	old1 := &unstructured.Unstructured{}
	old1.SetGroupVersionKind(bootstrapv1alpha1.GroupVersion.WithKind("OpenshiftAssistedConfig"))
	g.Expect(hub.Client.Get(ctx, client.ObjectKeyFromObject(config), old1)).To(Succeed())
	g.Expect(old1.Object["spec"]).To(Equal(config.Object["spec"]), "the spec at v1alpha1 is what upstream wrote")
	g.Expect(old1.GetAnnotations()).To(HaveKey(utilconversion.DataAnnotation))
	old1.SetLabels(map[string]string{"edited-at": "v1alpha1"})
	g.Expect(hub.Client.Update(ctx, old1)).To(Succeed())
	g.Expect(hub.Client.Get(ctx, client.ObjectKeyFromObject(config), got)).To(Succeed())
	g.Expect(got.Labels).To(HaveKeyWithValue("edited-at", "v1alpha1"))
	g.Expect(got.Spec.PreBootstrapCommands).To(Equal([]string{"echo pre"}))
	g.Expect(got.Spec.NodeRegistration.ProviderID).To(Equal("metal3://$METADATA_UUID"))
	g.Expect(got.Annotations).NotTo(HaveKey(utilconversion.DataAnnotation), "the hub keeps no conversion data")

	// A v1alpha1 write meets the provider's validation (the webhook sees it as v1alpha2).
	bad := upstreamConfig(ns)
	bad.SetName("bad-proxy")
	g.Expect(unstructured.SetNestedField(bad.Object, "not a URL", "spec", "proxy", "httpProxy")).To(Succeed())
	g.Expect(hub.Client.Create(ctx, bad)).To(MatchError(ContainSubstring("httpProxy")))

	// The storage migration docs/migration.md gives; then a CRD without v1alpha1 is accepted.
	lists := map[string]client.ObjectList{
		"openshiftassistedconfigs":         &bootstrapv1.OpenshiftAssistedConfigList{},
		"openshiftassistedconfigtemplates": &bootstrapv1.OpenshiftAssistedConfigTemplateList{},
	}
	for _, plural := range bootstrapPlurals {
		name := plural + "." + bootstrapv1.GroupVersion.Group
		live := &apiextensionsv1.CustomResourceDefinition{}
		g.Expect(hub.Client.Get(ctx, client.ObjectKey{Name: name}, live)).To(Succeed())
		g.Expect(live.Status.StoredVersions).To(ConsistOf("v1alpha1", "v1alpha2"))
		g.Expect(testenv.MigrateStorage(ctx, hub.Client, name, lists[plural])).To(Succeed())
		withoutAlpha := ours[plural].DeepCopy()
		withoutAlpha.Spec.Versions = []apiextensionsv1.CustomResourceDefinitionVersion{*testenv.CRDVersion(ours[plural], "v1alpha2")}
		g.Expect(testenv.ReplaceCRD(ctx, hub.Client, withoutAlpha)).To(Succeed(), "%s without v1alpha1 after the migration", name)
	}
	// Every object still reads back: nothing was left at v1alpha1.
	g.Expect(hub.Client.Get(ctx, client.ObjectKeyFromObject(config), got)).To(Succeed())
	g.Expect(got.Spec.NodeRegistration.Name).To(Equal("$METADATA_NAME"))
}
