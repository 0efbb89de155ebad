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

package testenv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	apimeta "k8s.io/apimachinery/pkg/api/meta"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// What upgrade tests need: our CRDs as files, the same CRDs as an older release left them on a
// hub, and the CRD update a user's upgrade makes.

// ProviderCRD reads the CRD of plural in group that make manifests wrote for provider
// (infrastructure, bootstrap or controlplane).
func ProviderCRD(provider, group, plural string) (*apiextensionsv1.CustomResourceDefinition, error) {
	return ReadCRD(filepath.Join(provider, "config", "crd", "bases", group+"_"+plural+".yaml"))
}

// ReadCRD reads the CRD file at path, relative to the repository root.
func ReadCRD(path string) (*apiextensionsv1.CustomResourceDefinition, error) {
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(filepath.Join(root, path))
	if err != nil {
		return nil, err
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(data, crd); err != nil {
		return nil, fmt.Errorf("reading the CRD in %s: %w", path, err)
	}
	return crd, nil
}

// CRDVersion returns the version called name of crd, or nil.
func CRDVersion(crd *apiextensionsv1.CustomResourceDefinition, name string) *apiextensionsv1.CustomResourceDefinitionVersion {
	for i := range crd.Spec.Versions {
		if crd.Spec.Versions[i].Name == name {
			return &crd.Spec.Versions[i]
		}
	}
	return nil
}

// OnlyVersionStored returns crd with version as its only version, served and stored, and no
// conversion: how a release that knew no other version installed it.
func OnlyVersionStored(crd *apiextensionsv1.CustomResourceDefinition, version string) *apiextensionsv1.CustomResourceDefinition {
	out := crd.DeepCopy()
	out.Status = apiextensionsv1.CustomResourceDefinitionStatus{}
	out.Spec.Conversion = nil
	v := CRDVersion(out, version).DeepCopy()
	v.Served, v.Storage, v.Deprecated, v.DeprecationWarning = true, true, false, nil
	out.Spec.Versions = []apiextensionsv1.CustomResourceDefinitionVersion{*v}
	return out
}

// ReplaceCRD replaces the spec of the live CRD called like crd with crd's, as applying a newer
// release's CRD does. A conversion webhook on the live CRD is kept: envtest sets one, pointing at
// the test's webhook server, on the CRDs of kinds the scheme can convert, where the release's
// manifests add theirs (naming a Service) with a kustomize patch to the generated CRD.
func ReplaceCRD(ctx context.Context, c client.Client, crd *apiextensionsv1.CustomResourceDefinition) error {
	live := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(ctx, client.ObjectKey{Name: crd.Name}, live); err != nil {
		return err
	}
	conversion := live.Spec.Conversion
	live.Spec = *crd.Spec.DeepCopy()
	if conversion != nil && conversion.Strategy == apiextensionsv1.WebhookConverter {
		live.Spec.Conversion = conversion
	}
	return c.Update(ctx, live)
}

// MigrateStorage does the storage migration docs/migration.md gives (Cluster API's clusterctl
// does the same in its CRD migration): every object of list's kind is written back unchanged,
// which the API server stores at the CRD's storage version, and then the storage version is left
// alone in the CRD's status.storedVersions, so that older versions may leave spec.versions.
func MigrateStorage(ctx context.Context, c client.Client, crdName string, list client.ObjectList) error {
	if err := c.List(ctx, list); err != nil {
		return err
	}
	items, err := apimeta.ExtractList(list)
	if err != nil {
		return err
	}
	for _, item := range items {
		o, ok := item.(client.Object)
		if !ok {
			return fmt.Errorf("%T is not an object", item)
		}
		if err := c.Update(ctx, o); err != nil {
			return fmt.Errorf("rewriting %s: %w", client.ObjectKeyFromObject(o), err)
		}
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(ctx, client.ObjectKey{Name: crdName}, crd); err != nil {
		return err
	}
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			crd.Status.StoredVersions = []string{v.Name}
		}
	}
	return c.Status().Update(ctx, crd)
}

// CreateStrictly creates, in namespace ns, every object of the YAML documents in file (a path
// relative to the test's package), with strict field validation (kubectl apply --validate=strict:
// an unknown or duplicated field is an error), and returns them as created.
func CreateStrictly(ctx context.Context, c client.Client, ns, file string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for _, doc := range strings.Split(string(data), "\n---\n") {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			return out, fmt.Errorf("%s: %w", file, err)
		}
		if len(u.Object) == 0 {
			continue
		}
		u.SetNamespace(ns)
		if err := c.Create(ctx, u, client.FieldValidation(metav1.FieldValidationStrict)); err != nil {
			return out, fmt.Errorf("%s %s from %s: %w", u.GetKind(), u.GetName(), file, err)
		}
		out = append(out, u)
	}
	return out, nil
}
