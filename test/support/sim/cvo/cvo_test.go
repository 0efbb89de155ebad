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
	"testing"

	configv1 "github.com/openshift/api/config/v1"
)

func TestRelease(t *testing.T) {
	for _, tc := range []struct {
		name, version, image string
		want                 configv1.Release
	}{
		{"version only", "4.14.5", "", configv1.Release{Version: "4.14.5", Image: ReleaseRepository + ":4.14.5-x86_64"}},
		{"image only", "", "quay.io/openshift-release-dev/ocp-release:4.15.0-rc.1-aarch64",
			configv1.Release{Version: "4.15.0-rc.1", Image: "quay.io/openshift-release-dev/ocp-release:4.15.0-rc.1-aarch64"}},
		{"both", "4.14.5", "registry.lab:5000/ocp:custom", configv1.Release{Version: "4.14.5", Image: "registry.lab:5000/ocp:custom"}},
		{"digest", "", "quay.io/ocp@sha256:abc", configv1.Release{Image: "quay.io/ocp@sha256:abc"}},
		{"registry port, no tag", "", "registry.lab:5000/ocp", configv1.Release{Image: "registry.lab:5000/ocp"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Release(tc.version, tc.image); got.Version != tc.want.Version || got.Image != tc.want.Image {
				t.Errorf("Release(%q, %q) = %+v, want %+v", tc.version, tc.image, got, tc.want)
			}
		})
	}
}

func TestChannel(t *testing.T) {
	for in, want := range map[string]string{"4.14.3": "stable-4.14", "4": "", "": ""} {
		if got := channel(in); got != want {
			t.Errorf("channel(%q) = %q, want %q", in, got, want)
		}
	}
}
