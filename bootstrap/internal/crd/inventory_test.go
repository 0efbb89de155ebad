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
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/schemadiff"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/testenv"
)

// TestConstraintsOnUpstreamPathsAreInventoried lists every constraint our schemas add on a path
// that upstream's schema of the same kind and version has (a value upstream accepted that ours
// may refuse) and fails, naming the path and constraint, unless docs/migration.md lists it
// with what happens to upstream's value.
func TestConstraintsOnUpstreamPathsAreInventoried(t *testing.T) {
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, plural := range []string{"openshiftassistedconfigs", "openshiftassistedconfigtemplates"} {
		crd, err := testenv.ProviderCRD("bootstrap", bootstrapv1.GroupVersion.Group, plural)
		if err != nil {
			t.Fatal(err)
		}
		crds = append(crds, crd)
	}
	schemadiff.CheckInventory(t, crds...)
}
