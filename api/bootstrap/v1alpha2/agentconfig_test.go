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

package v1alpha2_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
)

// TestAgentConfigNamesThisAPI: the infrastructure provider recognizes a Machine's bootstrap
// config by GroupVersion.Group and ConfigKind, which must name OpenshiftAssistedConfig, and the
// Agent label must be in this API's group.
func TestAgentConfigNamesThisAPI(t *testing.T) {
	s := runtime.NewScheme()
	if err := bootstrapv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	gvks, _, err := s.ObjectKinds(&bootstrapv1.OpenshiftAssistedConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if len(gvks) != 1 || gvks[0].Group != bootstrapv1.GroupVersion.Group || gvks[0].Kind != bootstrapv1.ConfigKind {
		t.Errorf("OpenshiftAssistedConfig is %v; the API names %s %s", gvks, bootstrapv1.GroupVersion.Group, bootstrapv1.ConfigKind)
	}
	if want := bootstrapv1.GroupVersion.Group + "/openshiftassistedconfig"; bootstrapv1.AgentConfigLabel != want {
		t.Errorf("AgentConfigLabel is %q, want %q", bootstrapv1.AgentConfigLabel, want)
	}
}
