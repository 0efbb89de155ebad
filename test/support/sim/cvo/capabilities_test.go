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

package cvo

import (
	"reflect"
	"slices"
	"testing"

	configv1 "github.com/openshift/api/config/v1"
)

func TestEnabledCapabilities(t *testing.T) {
	for name, tc := range map[string]struct {
		version string
		spec    *configv1.ClusterVersionCapabilitiesSpec
		want    []configv1.ClusterVersionCapability
	}{
		"no capabilities: the release's vCurrent": {version: "4.14.3", want: []configv1.ClusterVersionCapability{
			"Build", "CSISnapshot", "Console", "DeploymentConfig", "ImageRegistry", "Insights", "MachineAPI", "NodeTuning", "Storage",
			"baremetal", "marketplace", "openshift-samples"}},
		"None and a list": {version: "4.17.3", spec: &configv1.ClusterVersionCapabilitiesSpec{BaselineCapabilitySet: "None",
			AdditionalEnabledCapabilities: []configv1.ClusterVersionCapability{"baremetal", "Ingress", "Console"}},
			want: []configv1.ClusterVersionCapability{"Console", "Ingress", "baremetal"}},
		"an older baseline and one more": {version: "4.17.3", spec: &configv1.ClusterVersionCapabilitiesSpec{BaselineCapabilitySet: "v4.11",
			AdditionalEnabledCapabilities: []configv1.ClusterVersionCapability{"Console", "baremetal"}},
			want: []configv1.ClusterVersionCapability{"Console", "MachineAPI", "baremetal", "marketplace", "openshift-samples"}},
	} {
		if got := EnabledCapabilities(tc.version, tc.spec); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v, want %v", name, got, tc.want)
		}
	}
	// vCurrent of a release newer than the table: the newest set.
	if got := EnabledCapabilities("4.20.1", nil); !slices.Contains(got, "OperatorLifecycleManagerV1") || !slices.Contains(got, "MachineAPI") {
		t.Errorf("4.20 vCurrent: %v", got)
	}
}
