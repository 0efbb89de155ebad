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

package capabilities

import (
	"slices"
	"testing"
)

// TestRecommended: the set of a version's minor, clamped to the table; the newest for what is no
// OpenShift 4 version; every set has baremetal and MachineAPI, and a caller's change of the copy
// it gets leaves the table alone.
func TestRecommended(t *testing.T) {
	for version, want := range map[string][]string{
		"4.10.0":        {"baremetal", "marketplace", "openshift-samples", "MachineAPI"},
		"v4.11":         {"baremetal", "marketplace", "openshift-samples", "MachineAPI"},
		"4.13.2":        recommended[13],
		"4.17.3-x86_64": recommended[16],
		"4.21.0-ec.1":   recommended[18],
		"5.0.0":         recommended[18],
		"latest":        recommended[18],
	} {
		if got := Recommended(version); !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", version, got, want)
		}
	}
	for minor, set := range recommended {
		if !slices.Contains(set, "MachineAPI") || !slices.Contains(set, "baremetal") {
			t.Errorf("openshift/api's v4.%d set has baremetal and MachineAPI; the table has %v", minor, set)
		}
	}
	got := Recommended("4.18.0")
	got[0] = "changed"
	if recommended[18][0] != "baremetal" {
		t.Error("a change of the returned set changed the table")
	}
}
