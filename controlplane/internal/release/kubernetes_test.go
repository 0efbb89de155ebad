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

package release

import "testing"

func TestCompareKubernetesVersions(t *testing.T) {
	for _, tc := range []struct {
		a, b   string
		want   int
		wantOK bool
	}{
		{"v1.32.5", "1.32.5", 0, true},
		{"1.30.6", "v1.30.6+a1b2c3d", 0, true},
		{"v1.30.6+a1b2c3d", "1.31.0", -1, true},
		{"1.31.1", "1.31.0", 1, true},
		{"1.31", "1.31.0", 0, false},
		{"1.31.0", "latest", 0, false},
		{"", "1.31.0", 0, false},
	} {
		if got, ok := CompareKubernetesVersions(tc.a, tc.b); got != tc.want || ok != tc.wantOK {
			t.Errorf("CompareKubernetesVersions(%q, %q) = %d, %v; want %d, %v", tc.a, tc.b, got, ok, tc.want, tc.wantOK)
		}
	}
}
