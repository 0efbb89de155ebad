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
	"os"
	"path/filepath"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// TestProviderCRDsCarryTheContractLabel checks every CRD of the three providers for the label
// through which Cluster API finds the version of a kind that implements its v1beta2 contract:
// it must name the CRD's storage version.
func TestProviderCRDsCarryTheContractLabel(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, dir := range ProviderCRDDirs {
		files, err := filepath.Glob(filepath.Join(root, dir, "*.yaml"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no CRDs in %s (err %v)", dir, err)
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := yaml.UnmarshalStrict(data, crd); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			storage := ""
			for _, v := range crd.Spec.Versions {
				if v.Storage {
					storage = v.Name
				}
			}
			if got := crd.Labels["cluster.x-k8s.io/v1beta2"]; got != storage || storage == "" {
				t.Errorf("%s: label cluster.x-k8s.io/v1beta2 is %q, want the storage version %q", crd.Name, got, storage)
			}
			seen++
		}
	}
	if seen != 8 {
		t.Errorf("checked %d provider CRDs, want 8 (4 infrastructure, 2 bootstrap, 2 control plane)", seen)
	}
}
