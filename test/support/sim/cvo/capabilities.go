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
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// recommendedCapabilities are openshift/api's ClusterVersionCapabilitySets v4.11 to v4.18
// (config/v1/types_cluster_version.go at 2a3d739; the module pinned here predates most of them):
// the capabilities a release of that minor enables by default. A release's vCurrent is the set
// of its own minor (its cluster-version operator vendors the api of its release).
var recommendedCapabilities = func() map[int][]configv1.ClusterVersionCapability {
	v411 := []configv1.ClusterVersionCapability{"baremetal", "marketplace", "openshift-samples", "MachineAPI"}
	v412 := append(slices.Clone(v411), "Console", "Insights", "Storage", "CSISnapshot")
	v413 := append(slices.Clone(v412), "NodeTuning")
	v414 := append(slices.Clone(v413), "Build", "DeploymentConfig", "ImageRegistry")
	v415 := append(slices.Clone(v414), "OperatorLifecycleManager", "CloudCredential")
	v416 := append(slices.Clone(v415), "Ingress", "CloudControllerManager")
	v418 := append(slices.Clone(v416), "OperatorLifecycleManagerV1")
	return map[int][]configv1.ClusterVersionCapability{11: v411, 12: v412, 13: v413, 14: v414, 15: v415, 16: v416, 17: v416, 18: v418}
}()

// capabilitySet is the named baseline set for a release of version: vCurrent is the release's own
// minor's set, v4.x that minor's (clamped to the sets the table knows).
func capabilitySet(set configv1.ClusterVersionCapabilitySet, version string) []configv1.ClusterVersionCapability {
	if set == configv1.ClusterVersionCapabilitySetNone {
		return nil
	}
	minor := 18
	name := string(set)
	if set == "" || set == configv1.ClusterVersionCapabilitySetCurrent {
		name = version
	}
	if parts := strings.SplitN(strings.TrimPrefix(name, "v"), ".", 3); len(parts) >= 2 && parts[0] == "4" {
		if m, err := strconv.Atoi(parts[1]); err == nil {
			minor = min(max(m, 11), 18)
		}
	}
	return recommendedCapabilities[minor]
}

// EnabledCapabilities is what the cluster-version operator of a release of version enables for
// spec (nil: the default, vCurrent): the baseline set and the additional capabilities
// (openshift/cluster-version-operator 6e71933 lib/capability/capability.go
// categorizeEnabledCapabilities), sorted as its status lists them (GetCapabilitiesStatus).
func EnabledCapabilities(version string, spec *configv1.ClusterVersionCapabilitiesSpec) []configv1.ClusterVersionCapability {
	var baseline configv1.ClusterVersionCapabilitySet
	var additional []configv1.ClusterVersionCapability
	if spec != nil {
		baseline, additional = spec.BaselineCapabilitySet, spec.AdditionalEnabledCapabilities
	}
	enabled := slices.Clone(capabilitySet(baseline, version))
	for _, c := range additional {
		if !slices.Contains(enabled, c) {
			enabled = append(enabled, c)
		}
	}
	slices.Sort(enabled)
	return enabled
}

// EnsureCapabilities records, in the ClusterVersion of a cluster installed at version, the
// install-config's capabilities (spec, nil: none given) as the installer writes them in the
// ClusterVersion manifest (spec.capabilities), and the capabilities the cluster-version operator
// then reports (status.capabilities: enabled ones, and known ones, the release's recommended set
// and the enabled ones). EnsureClusterVersion must have created the ClusterVersion.
func EnsureCapabilities(ctx context.Context, c client.Client, version string, spec *configv1.ClusterVersionCapabilitiesSpec) error {
	// The operator's reconciler writes the ClusterVersion meanwhile: read again on a conflict.
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cv := &configv1.ClusterVersion{}
		if err := c.Get(ctx, client.ObjectKey{Name: ClusterVersionName}, cv); err != nil {
			return fmt.Errorf("reading the ClusterVersion: %w", err)
		}
		if spec != nil && cv.Spec.Capabilities == nil {
			cv.Spec.Capabilities = spec.DeepCopy()
			if err := c.Update(ctx, cv); err != nil {
				return fmt.Errorf("writing the ClusterVersion's capabilities: %w", err)
			}
		}
		enabled := EnabledCapabilities(version, cv.Spec.Capabilities)
		known := slices.Clone(capabilitySet(configv1.ClusterVersionCapabilitySetCurrent, version))
		for _, e := range enabled {
			if !slices.Contains(known, e) {
				known = append(known, e)
			}
		}
		slices.Sort(known)
		cv.Status.Capabilities = configv1.ClusterVersionCapabilitiesStatus{EnabledCapabilities: enabled, KnownCapabilities: known}
		if err := c.Status().Update(ctx, cv); err != nil {
			return fmt.Errorf("writing the ClusterVersion's capabilities status: %w", err)
		}
		return nil
	})
}
