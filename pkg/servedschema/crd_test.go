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

package servedschema

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// aciCRDName is the AgentClusterInstall CRD's name, whose newer fields the control plane asks for.
const aciCRDName = "agentclusterinstalls.extensions.hive.openshift.io"

// aciCRD is an AgentClusterInstall CRD whose v1beta1 spec has the given properties.
func aciCRD(generation int64, version string, spec ...string) *apiextensionsv1.CustomResourceDefinition {
	props := map[string]apiextensionsv1.JSONSchemaProps{}
	for _, p := range spec {
		props[p] = apiextensionsv1.JSONSchemaProps{Type: "object"}
	}
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: aciCRDName, Generation: generation},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
			Name: version, Served: true, Storage: true,
			Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
				Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": {Type: "object", Properties: props}},
			}},
		}}},
	}
}

// TestCRDFieldsHas: whether the hub's CRD has a field is read from its schema, for the version
// asked, and read again only when the CRD's generation changes.
func TestCRDFieldsHas(t *testing.T) {
	s := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		crd  *apiextensionsv1.CustomResourceDefinition
		want bool
	}{
		"a newer hub":                       {crd: aciCRD(1, "v1beta1", "mirrorRegistryRef", "imageSetRef"), want: true},
		"an older hub":                      {crd: aciCRD(1, "v1beta1", "imageSetRef")},
		"the field in another version only": {crd: aciCRD(1, "v1", "mirrorRegistryRef")},
		"no AgentClusterInstall CRD at all": {},
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			b := fake.NewClientBuilder().WithScheme(s)
			if tc.crd != nil {
				b = b.WithObjects(tc.crd)
			}
			c := b.Build()
			var schemas CRDFields
			got, err := schemas.Has(context.Background(), c, c, aciCRDName, "v1beta1", "spec", "mirrorRegistryRef")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(tc.want))
		})
	}

	t.Run("the CRD is read again only when its generation changes", func(t *testing.T) {
		g := NewWithT(t)
		ctx := context.Background()
		crd := aciCRD(1, "v1beta1", "imageSetRef")
		reads := 0
		c := fake.NewClientBuilder().WithScheme(s).WithObjects(crd).WithInterceptorFuncs(interceptor.Funcs{
			Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				if _, meta := obj.(*metav1.PartialObjectMetadata); !meta {
					reads++
				}
				return c.Get(ctx, key, obj, opts...)
			},
		}).Build()
		var schemas CRDFields
		for range 3 {
			got, err := schemas.Has(ctx, c, c, aciCRDName, "v1beta1", "spec", "mirrorRegistryRef")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(BeFalse())
		}
		g.Expect(reads).To(Equal(1), "one read of the whole CRD for three answers")

		// The hub's assisted-service is upgraded: the CRD gains the field, and a new generation.
		newer := &apiextensionsv1.CustomResourceDefinition{}
		g.Expect(c.Get(ctx, client.ObjectKey{Name: aciCRDName}, newer)).To(Succeed())
		newer.Spec = aciCRD(2, "v1beta1", "imageSetRef", "mirrorRegistryRef").Spec
		newer.Generation = 2
		g.Expect(c.Update(ctx, newer)).To(Succeed())
		reads = 0
		got, err := schemas.Has(ctx, c, c, aciCRDName, "v1beta1", "spec", "mirrorRegistryRef")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(got).To(BeTrue())
		g.Expect(reads).To(Equal(1), "read again once the generation changed")
	})
}
