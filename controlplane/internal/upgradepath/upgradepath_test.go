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

package upgradepath

import (
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	for _, tc := range []struct{ from, to, want string }{
		{"4.17.3", "4.17.5", ""},
		{"4.17.3", "4.18.0", ""},
		{"4.17.3", "4.18.0-rc.2", ""},
		{"4.18.0-rc.2", "4.18.0", ""},
		{"4.17.5", "4.17.3", "downgrading OpenShift from 4.17.5 to 4.17.3 is not supported"},
		{"4.17.3", "4.19.0", "one minor version at a time"},
		{"4.17.3", "5.0.0", "major version"},
	} {
		got := Check(tc.from, tc.to)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("Check(%s, %s) = %q, want %q", tc.from, tc.to, got, tc.want)
		}
	}
}
