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

package v1alpha4

import "testing"

// TestReleaseImageRepository: our annotation, else upstream's, else the default ("").
func TestReleaseImageRepository(t *testing.T) {
	for _, tc := range []struct {
		annotations map[string]string
		want        string
	}{
		{nil, ""},
		{map[string]string{ReleaseImageRepositoryAnnotation: "ours.example.com/r"}, "ours.example.com/r"},
		{map[string]string{UpstreamReleaseImageRepositoryAnnotation: "upstream.example.com/r"}, "upstream.example.com/r"},
		{map[string]string{ReleaseImageRepositoryAnnotation: "ours.example.com/r", UpstreamReleaseImageRepositoryAnnotation: "upstream.example.com/r"}, "ours.example.com/r"},
		{map[string]string{ReleaseImageRepositoryAnnotation: "", UpstreamReleaseImageRepositoryAnnotation: "upstream.example.com/r"}, "upstream.example.com/r"},
	} {
		cp := &OpenshiftAssistedControlPlane{}
		cp.Annotations = tc.annotations
		if got := cp.ReleaseImageRepository(); got != tc.want {
			t.Errorf("%v: got %q, want %q", tc.annotations, got, tc.want)
		}
	}
}
