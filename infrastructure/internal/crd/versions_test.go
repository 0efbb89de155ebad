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
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/infrastructure/v1beta1"
	capoascheme "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/scheme"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/testenv"
)

// upstreamPlurals are the kinds of openshift/cluster-api-provider-agent, which served them as
// v1alpha1 (storage until release-ocm-2.8) and v1beta1 (storage from release-ocm-2.9).
var upstreamPlurals = []string{"agentclusters", "agentmachines", "agentmachinetemplates"}

func ourCRD(t *testing.T, plural string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	crd, err := testenv.ProviderCRD("infrastructure", infrav1.GroupVersion.Group, plural)
	if err != nil {
		t.Fatal(err)
	}
	return crd
}

var crdVersion = testenv.CRDVersion

// TestOlderVersionHasTheSameSchema checks that v1alpha1 is served, deprecated and not stored, and
// has the schema, columns and subresources of v1beta1: the two convert by apiVersion alone (the
// CRDs declare no conversion webhook), so any difference would lose or refuse fields.
func TestOlderVersionHasTheSameSchema(t *testing.T) {
	for _, plural := range upstreamPlurals {
		t.Run(plural, func(t *testing.T) {
			g := NewWithT(t)
			crd := ourCRD(t, plural)
			g.Expect(crd.Spec.Conversion).To(Or(BeNil(), HaveField("Strategy", apiextensionsv1.NoneConverter)))
			alpha, beta := crdVersion(crd, "v1alpha1"), crdVersion(crd, "v1beta1")
			g.Expect(alpha).NotTo(BeNil(), "v1alpha1 is served")
			g.Expect(beta).NotTo(BeNil())
			g.Expect(alpha.Served && !alpha.Storage && alpha.Deprecated).To(BeTrue(), "v1alpha1 is served, deprecated and not stored")
			g.Expect(beta.Served && beta.Storage && !beta.Deprecated).To(BeTrue())
			a, b := alpha.Schema.OpenAPIV3Schema.DeepCopy(), beta.Schema.OpenAPIV3Schema.DeepCopy()
			a.Description, b.Description = "", ""
			g.Expect(a).To(Equal(b), "the two versions have one schema")
			g.Expect(alpha.AdditionalPrinterColumns).To(Equal(beta.AdditionalPrinterColumns))
			g.Expect(alpha.Subresources).To(Equal(beta.Subresources))
		})
	}
}

// upstreamShaped returns our CRD as a release of cluster-api-provider-agent installed it:
// v1alpha1 alone and stored (v0.1.0, release-ocm-2.5 to 2.8), or v1alpha1 served beside v1beta1
// stored (release-ocm-2.9 and later, whose users' hubs still list v1alpha1 as stored). Upstream's two versions have identical types, which our
// v1beta1 schema keeps (the fields below are upstream's documented ones).
func upstreamShaped(crd *apiextensionsv1.CustomResourceDefinition, withV1beta1 bool) *apiextensionsv1.CustomResourceDefinition {
	out := crd.DeepCopy()
	out.Status = apiextensionsv1.CustomResourceDefinitionStatus{}
	if withV1beta1 {
		return out
	}
	return testenv.OnlyVersionStored(out, "v1alpha1")
}

// upstreamObjects are objects as upstream users wrote them, at v1alpha1.
func upstreamObjects(ns string) []*unstructured.Unstructured {
	obj := func(kind, name string, spec map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
		u.SetGroupVersionKind(schema.GroupVersionKind{Group: infrav1.GroupVersion.Group, Version: "v1alpha1", Kind: kind})
		u.SetNamespace(ns)
		u.SetName(name)
		return u
	}
	selector := map[string]any{"matchLabels": map[string]any{"infraenv": "hosted"}}
	return []*unstructured.Unstructured{
		obj("AgentCluster", "hosted", map[string]any{
			"controlPlaneEndpoint": map[string]any{"host": "api.hosted.example.com", "port": int64(6443)},
			"ignitionEndpoint": map[string]any{"url": "https://ignition.example.com/ignition",
				"caCertificateReference": map[string]any{"namespace": ns, "name": "ignition-server-ca-cert"}},
		}),
		obj("AgentMachineTemplate", "hosted-workers", map[string]any{
			"template": map[string]any{"spec": map[string]any{"agentLabelSelector": selector}},
		}),
		obj("AgentMachine", "hosted-worker-1", map[string]any{"agentLabelSelector": selector}),
	}
}

// TestUpgradeFromUpstreamStoredVersions installs our CRDs over a hub where a release of
// cluster-api-provider-agent stored objects at v1alpha1: the API server refuses a CRD that drops
// a stored version, accepts ours, and every object reads back unchanged at v1beta1 and at v1alpha1.
func TestUpgradeFromUpstreamStoredVersions(t *testing.T) {
	for _, tc := range []struct {
		name        string
		withV1beta1 bool
	}{
		{name: "v1alpha1 only, as v0.1.0 and release-ocm-2.5 to 2.8 left it"},
		{name: "v1alpha1 beside v1beta1, as release-ocm-2.9 and later left it", withV1beta1: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			s, err := capoascheme.New(infrav1.AddToScheme, apiextensionsv1.AddToScheme)
			g.Expect(err).NotTo(HaveOccurred())
			ours := map[string]*apiextensionsv1.CustomResourceDefinition{}
			var old []*apiextensionsv1.CustomResourceDefinition
			for _, plural := range upstreamPlurals {
				ours[plural] = ourCRD(t, plural)
				g.Expect(crdVersion(ours[plural], "v1alpha1")).NotTo(BeNil(), "%s serves v1alpha1", plural)
				old = append(old, upstreamShaped(ours[plural], false))
			}
			hub, err := testenv.StartWithOptions(testenv.Options{Scheme: s, CRDs: old})
			g.Expect(err).NotTo(HaveOccurred())
			defer func() { _ = hub.Stop() }()
			ns, err := hub.CreateNamespace(ctx, "upstream")
			g.Expect(err).NotTo(HaveOccurred())

			objects := upstreamObjects(ns)
			for _, o := range objects {
				g.Expect(hub.Client.Create(ctx, o.DeepCopy())).To(Succeed(), "%s at v1alpha1", o.GetKind())
			}

			for _, plural := range upstreamPlurals {
				name := plural + "." + infrav1.GroupVersion.Group
				live := &apiextensionsv1.CustomResourceDefinition{}
				if tc.withV1beta1 {
					// The user upgraded upstream to a release that stores v1beta1.
					g.Expect(hub.Client.Get(ctx, client.ObjectKey{Name: name}, live)).To(Succeed())
					live.Spec = upstreamShaped(ours[plural], true).Spec
					g.Expect(hub.Client.Update(ctx, live)).To(Succeed())
				}
				g.Expect(hub.Client.Get(ctx, client.ObjectKey{Name: name}, live)).To(Succeed())
				g.Expect(live.Status.StoredVersions).To(ContainElement("v1alpha1"))

				// What this project shipped before it served v1alpha1: refused.
				withoutAlpha := live.DeepCopy()
				withoutAlpha.Spec = *ours[plural].Spec.DeepCopy()
				withoutAlpha.Spec.Versions = []apiextensionsv1.CustomResourceDefinitionVersion{*crdVersion(ours[plural], "v1beta1")}
				err := hub.Client.Update(ctx, withoutAlpha)
				g.Expect(err).To(MatchError(ContainSubstring("must remain in spec.versions")), "%s without v1alpha1", name)

				// Ours: accepted.
				g.Expect(hub.Client.Get(ctx, client.ObjectKey{Name: name}, live)).To(Succeed())
				live.Spec = *ours[plural].Spec.DeepCopy()
				g.Expect(hub.Client.Update(ctx, live)).To(Succeed(), "%s replaced by ours", name)
			}

			for _, o := range objects {
				// At v1beta1, through the typed client the providers use.
				typed, err := hub.Client.Scheme().New(infrav1.GroupVersion.WithKind(o.GetKind()))
				g.Expect(err).NotTo(HaveOccurred())
				obj := typed.(client.Object)
				g.Eventually(func() error {
					return hub.Client.Get(ctx, client.ObjectKeyFromObject(o), obj)
				}, 30*time.Second, 200*time.Millisecond).Should(Succeed(), "%s read at v1beta1", o.GetKind())
				asMap, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(asMap["spec"]).To(Equal(o.Object["spec"]), "%s spec at v1beta1", o.GetKind())

				// Written at v1beta1 and read back at v1alpha1: nothing lost either way.
				obj.SetLabels(map[string]string{"migrated": "true"})
				g.Expect(hub.Client.Update(ctx, obj)).To(Succeed())
				back := &unstructured.Unstructured{}
				back.SetGroupVersionKind(o.GroupVersionKind())
				g.Expect(hub.Client.Get(ctx, client.ObjectKeyFromObject(o), back)).To(Succeed())
				g.Expect(back.Object["spec"]).To(Equal(o.Object["spec"]), "%s spec at v1alpha1", o.GetKind())
				g.Expect(back.GetLabels()).To(HaveKeyWithValue("migrated", "true"))
			}
		})
	}
}
