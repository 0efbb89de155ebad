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
	"fmt"
	"strings"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// FromCRD returns the schema (spec.versions[].schema.openAPIV3Schema) of the version of a
// CustomResourceDefinition, decoded from JSON as unstructured content; nil when the CRD has no
// such version or no schema.
func FromCRD(crd map[string]any, version string) Schema {
	versions, _, _ := unstructured.NestedSlice(crd, "spec", "versions")
	for _, v := range versions {
		vm, ok := v.(map[string]any)
		if !ok || vm["name"] != version {
			continue
		}
		s, _, _ := unstructured.NestedMap(vm, "schema", "openAPIV3Schema")
		return s
	}
	return nil
}

// CRDFields tells whether the CRDs the hub serves have a field, for a manager that may read
// CRDs (the control plane's; HyperShift grants the infrastructure provider no cluster-scoped
// rights, so it reads OpenAPI discovery instead: Client). The answer is kept per CRD generation,
// which the manager's metadata cache of CRDs gives for free (Cluster API's contract lookup keeps
// it): the CRD itself, large, is read from the API server only when its generation changes, as
// when the hub's assisted-service is upgraded. The zero value is ready to use.
type CRDFields struct {
	mu      sync.Mutex
	answers map[string]crdAnswer
}

type crdAnswer struct {
	generation int64
	has        bool
}

// Has tells whether version of the CRD named crd declares the field at path below the root of
// its schema (for example "spec", "mirrorRegistryRef"; "[]" steps into an array's items, as in
// Schema.Declares). cached reads the CRD's metadata (a cached client); live reads the whole CRD.
// A CRD that does not exist has no field.
func (c *CRDFields) Has(ctx context.Context, cached, live client.Reader, crd, version string, path ...string) (bool, error) {
	meta := &metav1.PartialObjectMetadata{}
	meta.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
	if err := cached.Get(ctx, client.ObjectKey{Name: crd}, meta); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil // no CRD, no field: writing the object says what is missing
		}
		return false, fmt.Errorf("reading the metadata of CRD %s: %w", crd, err)
	}
	key := crd + "/" + version + "/" + strings.Join(path, ".")
	c.mu.Lock()
	answer, ok := c.answers[key]
	c.mu.Unlock()
	if ok && answer.generation == meta.Generation {
		return answer.has, nil
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
	if err := live.Get(ctx, client.ObjectKey{Name: crd}, u); err != nil {
		return false, fmt.Errorf("reading CRD %s: %w", crd, err)
	}
	has := FromCRD(u.Object, version).Declares(path...)
	c.mu.Lock()
	if c.answers == nil {
		c.answers = map[string]crdAnswer{}
	}
	c.answers[key] = crdAnswer{generation: u.GetGeneration(), has: has}
	c.mu.Unlock()
	return has, nil
}
