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

	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/capabilities"
)

// capabilitySet is the named baseline set for a release of version: vCurrent is the release's own
// minor's recommended set (its cluster-version operator vendors the api of its release), v4.x that
// minor's (capabilities.Recommended, clamped to the sets the table knows).
func capabilitySet(set configv1.ClusterVersionCapabilitySet, version string) []configv1.ClusterVersionCapability {
	if set == configv1.ClusterVersionCapabilitySetNone {
		return nil
	}
	name := string(set)
	if set == "" || set == configv1.ClusterVersionCapabilitySetCurrent {
		name = version
	}
	var out []configv1.ClusterVersionCapability
	for _, c := range capabilities.Recommended(name) {
		out = append(out, configv1.ClusterVersionCapability(c))
	}
	return out
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
	enabled := capabilitySet(baseline, version)
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
		known := capabilitySet(configv1.ClusterVersionCapabilitySetCurrent, version)
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
