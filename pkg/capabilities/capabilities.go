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

// Package capabilities holds OpenShift's recommended capability sets, openshift/api's
// ClusterVersionCapabilitySets v4.11 to v4.18 (config/v1/types_cluster_version.go at 2a3d739),
// which the openshift/api module pinned here predates: the sets a release of each minor enables by
// default (vCurrent). The control plane's install defaults and the lab's cluster-version operator
// read this one table.
package capabilities

import (
	"slices"
	"strconv"
	"strings"
)

// The minors of the oldest and newest sets the table has.
const (
	OldestMinor = 11
	NewestMinor = 18
)

var recommended = func() map[int][]string {
	v411 := []string{"baremetal", "marketplace", "openshift-samples", "MachineAPI"}
	v412 := append(slices.Clone(v411), "Console", "Insights", "Storage", "CSISnapshot")
	v413 := append(slices.Clone(v412), "NodeTuning")
	v414 := append(slices.Clone(v413), "Build", "DeploymentConfig", "ImageRegistry")
	v415 := append(slices.Clone(v414), "OperatorLifecycleManager", "CloudCredential")
	v416 := append(slices.Clone(v415), "Ingress", "CloudControllerManager")
	v418 := append(slices.Clone(v416), "OperatorLifecycleManagerV1")
	return map[int][]string{11: v411, 12: v412, 13: v413, 14: v414, 15: v415, 16: v416, 17: v416, 18: v418}
}()

// Recommended returns a copy of the recommended set of the OpenShift version or set name
// ("4.17.3", "4.19.0-ec.2-x86_64", "v4.16"): its minor's, clamped to the sets the table has; the
// newest set for a name that is no OpenShift 4 version.
func Recommended(version string) []string {
	minor := NewestMinor
	// A version may end with an architecture (4.19.0-ec.2-x86_64), which is no semver.
	if parts := strings.SplitN(strings.TrimPrefix(version, "v"), ".", 3); len(parts) >= 2 && parts[0] == "4" {
		if m, err := strconv.ParseUint(parts[1], 10, 64); err == nil {
			minor = int(min(max(m, OldestMinor), NewestMinor))
		}
	}
	return slices.Clone(recommended[minor])
}
