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

package release_test

import (
	"slices"
	"testing"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/controlplane/internal/release"
)

func TestIsOKD(t *testing.T) {
	for _, tc := range []struct {
		version string
		want    bool
	}{
		{"4.18.0-okd-scos.1", true},
		{"v4.18.0-okd-scos.1", true},
		{"4.18.0-okd-scos.ec.1", true},
		{" 4.19.0-okd-scos.0 ", true},
		// The identifier only starts with okd-scos.
		{"4.18.0-okd-scosx.1", true},
		// okd-scos in a later pre-release identifier counts too.
		{"4.18.0-0.okd-scos.1", true},
		{"4.18.0-rc.okd-scos", true},
		{"4.17.3", false},
		{"4.18.0-rc.2", false},
		// In the build metadata, not a pre-release identifier.
		{"4.18.0-rc.1+okd-scos", false},
		// A prefix of the identifier: okd alone, or okd-scos inside an identifier, is not OKD.
		{"4.18.0-okd.1", false},
		{"4.18.0-xokd-scos.1", false},
		// Not a version.
		{"", false},
		{"okd-scos", false},
		{"4.18-okd-scos.1", false},
	} {
		if got := release.IsOKD(tc.version); got != tc.want {
			t.Errorf("IsOKD(%q) = %v, want %v", tc.version, got, tc.want)
		}
	}
}

func TestArchitecture(t *testing.T) {
	for in, want := range map[string]string{
		"":        "x86_64",
		"amd64":   "x86_64",
		"x86_64":  "x86_64",
		"arm64":   "aarch64",
		"aarch64": "aarch64",
		"ppc64le": "ppc64le",
		"s390x":   "s390x",
		"multi":   release.MultiArchitecture,
		// Not a name it knows: kept as it is.
		"AMD64": "AMD64",
	} {
		if got := release.Architecture(in); got != want {
			t.Errorf("Architecture(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestSplitArchitecture: a distributionVersion that ends with a release tag's architecture (upstream
// v0.3.0-v0.3.2's form) is that version of that architecture; anything else is a version alone.
func TestSplitArchitecture(t *testing.T) {
	for in, want := range map[string][2]string{
		"4.19.0-ec.2-x86_64":      {"4.19.0-ec.2", "x86_64"},
		"4.17.3-x86_64":           {"4.17.3", "x86_64"},
		"v4.17.3-aarch64":         {"v4.17.3", "aarch64"},
		"4.17.3-ppc64le":          {"4.17.3", "ppc64le"},
		"4.17.3-s390x":            {"4.17.3", "s390x"},
		"4.17.3-multi":            {"4.17.3", "multi"},
		"4.18.0-rc.2":             {"4.18.0-rc.2", ""},
		"4.18.0-okd-scos.1":       {"4.18.0-okd-scos.1", ""},
		"4.17.3":                  {"4.17.3", ""},
		"x86_64":                  {"x86_64", ""},
		"-x86_64":                 {"-x86_64", ""},
		"4.17.3-amd64":            {"4.17.3-amd64", ""}, // GOARCH names are not tag names
		"4.18.0-okd-scos.1-multi": {"4.18.0-okd-scos.1", "multi"},
	} {
		v, arch := release.SplitArchitecture(in)
		if v != want[0] || arch != want[1] {
			t.Errorf("SplitArchitecture(%q) = %q, %q; want %q, %q", in, v, arch, want[0], want[1])
		}
		if got := release.Version(in); got != want[0] {
			t.Errorf("Version(%q) = %q, want %q", in, got, want[0])
		}
	}
}

func TestImage(t *testing.T) {
	for _, tc := range []struct{ repo, version, arch, want string }{
		{"", "4.17.3", "", "quay.io/openshift-release-dev/ocp-release:4.17.3-x86_64"},
		{"", "v4.18.0-rc.2", "arm64", "quay.io/openshift-release-dev/ocp-release:4.18.0-rc.2-aarch64"},
		{"mirror.example.com:5000/ocp/release/", "4.17.3", "x86_64", "mirror.example.com:5000/ocp/release:4.17.3-x86_64"},
		{"", "4.17.3", "multi", "quay.io/openshift-release-dev/ocp-release:4.17.3-multi"},
		{"", "4.17.3", "ppc64le", "quay.io/openshift-release-dev/ocp-release:4.17.3-ppc64le"},
		{"mirror.example.com/ocp", "v4.17.3", "amd64", "mirror.example.com/ocp:4.17.3-x86_64"},
		// OKD: upstream's repository, no architecture; with an override, as upstream, one.
		{"", "4.18.0-okd-scos.1", "x86_64", "quay.io/okd/scos-release:4.18.0-okd-scos.1"},
		{"", "v4.18.0-okd-scos.ec.2", "arm64", "quay.io/okd/scos-release:4.18.0-okd-scos.ec.2"},
		{"mirror.example.com/okd", "4.18.0-okd-scos.1", "", "mirror.example.com/okd:4.18.0-okd-scos.1-x86_64"},
		{"mirror.example.com/okd/", "v4.18.0-okd-scos.1", "arm64", "mirror.example.com/okd:4.18.0-okd-scos.1-aarch64"},
		{"", "4.18.0-okd-scos.1", "multi", "quay.io/okd/scos-release:4.18.0-okd-scos.1"},
		// Not OKD: okd-scos is not a pre-release identifier, or the version does not parse.
		{"", "4.18.0-rc.1+okd-scos", "", "quay.io/openshift-release-dev/ocp-release:4.18.0-rc.1+okd-scos-x86_64"},
		{"", "okd-scos", "", "quay.io/openshift-release-dev/ocp-release:okd-scos-x86_64"},
	} {
		if got := release.Image(tc.repo, tc.version, tc.arch); got != tc.want {
			t.Errorf("Image(%q, %q, %q) = %q, want %q", tc.repo, tc.version, tc.arch, got, tc.want)
		}
	}
}

func TestClusterArchitecture(t *testing.T) {
	for _, tc := range []struct {
		archs []string
		want  string
	}{
		{nil, "x86_64"},
		{[]string{""}, "x86_64"},
		{[]string{"aarch64"}, "aarch64"},
		{[]string{"arm64", "aarch64", "arm64"}, "aarch64"},
		{[]string{"x86_64", "", "amd64"}, "x86_64"},
		{[]string{"x86_64", "aarch64"}, "multi"},
		{[]string{"", "arm64"}, "multi"},
		{[]string{"s390x", "s390x", "ppc64le"}, "multi"},
		{[]string{"ppc64le", "ppc64le"}, "ppc64le"},
		{[]string{"multi"}, "multi"},
	} {
		if got := release.ClusterArchitecture(tc.archs); got != tc.want {
			t.Errorf("ClusterArchitecture(%q) = %q, want %q", tc.archs, got, tc.want)
		}
	}
}

func TestMissingArchitectures(t *testing.T) {
	multi := release.Info{Platforms: []string{"amd64", "arm64"}}
	for _, tc := range []struct {
		info  release.Info
		archs []string
		want  []string
	}{
		{multi, []string{"x86_64", "aarch64"}, nil},
		{multi, []string{"", "arm64", "amd64"}, nil},
		{multi, []string{"x86_64", "ppc64le", "s390x", "ppc64le"}, []string{"ppc64le", "s390x"}},
		// Both names of one architecture are one missing architecture, named as a release does.
		{release.Info{Platforms: []string{"amd64"}}, []string{"arm64", "aarch64"}, []string{"aarch64"}},
		{release.Info{Platforms: []string{"amd64"}}, []string{"", "amd64", "x86_64"}, nil},
		// Platforms whose OCI and release names are the same.
		{release.Info{Platforms: []string{"ppc64le", "s390x"}}, []string{"s390x", "ppc64le", "x86_64"}, []string{"x86_64"}},
		{multi, nil, nil},
		// A single-architecture image: its tag names the architecture, nothing to check.
		{release.Info{}, []string{"x86_64", "s390x"}, nil},
	} {
		if got := tc.info.MissingArchitectures(tc.archs); !slices.Equal(got, tc.want) {
			t.Errorf("%v.MissingArchitectures(%q) = %q, want %q", tc.info.Platforms, tc.archs, got, tc.want)
		}
	}
}
