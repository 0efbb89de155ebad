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

import (
	"fmt"
	"slices"
	"strings"

	"github.com/blang/semver/v4"
)

const (
	// OKDRepository is the repository of OKD's release images (OKD on CentOS Stream CoreOS).
	OKDRepository = "quay.io/okd/scos-release"
	// okdPreRelease starts the pre-release part of an OKD version: 4.18.0-okd-scos.1.
	okdPreRelease = "okd-scos"
	// MultiArchitecture is the architecture suffix of OpenShift's multi-architecture release
	// images (quay.io/openshift-release-dev/ocp-release:4.17.3-multi), whose tags name an image
	// index holding one payload per architecture.
	MultiArchitecture = "multi"
)

// IsOKD tells whether version is an OKD version: one of its pre-release identifiers starts with
// okd-scos (4.18.0-okd-scos.1, 4.18.0-okd-scos.ec.1). This is upstream's rule
// (openshift-assisted/cluster-api-provider-openshift-assisted, controlplane/internal/release/
// release.go IsOKD: semver.ParseTolerant, then any Pre identifier with the prefix OKDPreStr,
// "okd-scos" in constants.go), so that an upstream control plane gets the same release image.
func IsOKD(version string) bool {
	v, err := semver.ParseTolerant(version)
	if err != nil {
		return false
	}
	return slices.ContainsFunc(v.Pre, func(p semver.PRVersion) bool { return strings.HasPrefix(p.VersionStr, okdPreRelease) })
}

// Image returns the release image of an OpenShift or OKD version for a CPU architecture (as a
// machine config names it, or MultiArchitecture), as upstream's GetReleaseImage (same file as
// IsOKD) builds it:
//   - with a repository (the release-image repository override): <repository>:<version>-<arch>,
//     for OKD versions too;
//   - without one, for an OKD version: OKDRepository:<version>, without an architecture (OKD's
//     tags carry none): quay.io/okd/scos-release:4.18.0-okd-scos.1;
//   - otherwise DefaultRepository:<version>-<arch>: quay.io/openshift-release-dev/ocp-release:4.17.3-x86_64.
func Image(repository, version, cpuArchitecture string) string {
	version = strings.TrimPrefix(version, "v")
	if repository == "" {
		if IsOKD(version) {
			return fmt.Sprintf("%s:%s", OKDRepository, version)
		}
		repository = DefaultRepository
	}
	return fmt.Sprintf("%s:%s-%s", strings.TrimSuffix(repository, "/"), version, Architecture(cpuArchitecture))
}

// tagArchitectures are the architectures OpenShift's release tags end with.
var tagArchitectures = []string{"x86_64", "aarch64", "ppc64le", "s390x", MultiArchitecture}

// SplitArchitecture splits a distributionVersion written as the name of a release tag,
// <version>-<architecture> (4.19.0-ec.2-x86_64), into the version and the architecture; any other
// distributionVersion is the version, with architecture "". Upstream's releases v0.3.0 to v0.3.2
// used spec.distributionVersion as the whole tag (openshift-assisted/cluster-api-provider-
// openshift-assisted, controlplane/internal/release/release.go GetReleaseImage at v0.3.2: "%s:%s"
// of the repository and the version), and their multinode example wrote 4.19.0-ec.2-x86_64;
// v0.3.3 began to append the machines' architecture itself. A control plane written for those
// releases keeps its meaning: version 4.19.0-ec.2, of the x86_64 release.
func SplitArchitecture(distributionVersion string) (version, architecture string) {
	for _, arch := range tagArchitectures {
		v, ok := strings.CutSuffix(distributionVersion, "-"+arch)
		if !ok {
			continue
		}
		if _, err := semver.ParseTolerant(v); err == nil {
			return v, arch
		}
	}
	return distributionVersion, ""
}

// Version is the OpenShift version a distributionVersion names, without the architecture it may
// end with (SplitArchitecture).
func Version(distributionVersion string) string {
	v, _ := SplitArchitecture(distributionVersion)
	return v
}

// Architecture is the name OpenShift's release tags give a CPU architecture as a machine config
// names it: x86_64 (also for "" and amd64, the default), aarch64 (also for arm64), ppc64le,
// s390x, multi.
func Architecture(cpuArchitecture string) string {
	switch cpuArchitecture {
	case "", "amd64":
		return "x86_64"
	case "arm64":
		return "aarch64"
	}
	return cpuArchitecture
}

// ClusterArchitecture is the architecture of the release a cluster whose machine configs name
// architectures installs: theirs when they all agree (x86_64 when there is none), else
// MultiArchitecture, OpenShift's multi payload. Names of one architecture (arm64, aarch64) agree.
// Unlike upstream's getArchitecture (controlplane/internal/controller/
// openshiftassistedcontrolplane_controller.go), which falls back to multi when no config names
// one, a cluster without configs keeps the control plane's default, x86_64.
func ClusterArchitecture(architectures []string) string {
	arch := ""
	for _, a := range architectures {
		switch a = Architecture(a); {
		case arch == "":
			arch = a
		case a != arch:
			return MultiArchitecture
		}
	}
	return Architecture(arch)
}

// platformArchitecture is the OCI platform architecture (an image index's
// manifests[].platform.architecture, GOARCH names) of a release architecture.
func platformArchitecture(arch string) string {
	switch Architecture(arch) {
	case "x86_64":
		return "amd64"
	case "aarch64":
		return "arm64"
	}
	return arch
}

// MissingArchitectures returns those of architectures (release or machine-config names) that
// the release does not serve: none for a single-architecture release image (Platforms is empty),
// whose architecture the tag names.
func (i Info) MissingArchitectures(architectures []string) []string {
	if len(i.Platforms) == 0 {
		return nil
	}
	var missing []string
	for _, a := range architectures {
		a = Architecture(a)
		if !slices.Contains(i.Platforms, platformArchitecture(a)) && !slices.Contains(missing, a) {
			missing = append(missing, a)
		}
	}
	return missing
}
