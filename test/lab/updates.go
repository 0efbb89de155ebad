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

package lab

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/blang/semver/v4"
	configv1 "github.com/openshift/api/config/v1"
)

// UpdateServiceURL is the update service (OpenShift Update Service) of the lab's connected
// clusters: the upstream their ClusterVersion names. A disconnected cluster's ClusterVersion names
// none, so the cluster-version operator asks the default one, api.openshift.com, which the lab
// cannot reach.
const UpdateServiceURL = "https://updates.lab.sim/api/upgrades_info/v1/graph"

// upstreamOf is the update service the installer configures for a cluster installed from
// releaseImage: none for a disconnected cluster (its ClusterImageSet names OpenShift's own
// repository, read through its mirrors), the lab's for the others.
func upstreamOf(releaseImage string) string {
	if strings.HasPrefix(releaseImage, OpenShiftReleaseRepository) {
		return ""
	}
	return UpdateServiceURL
}

// updateService answers the cluster-version operator simulator's graph requests as Cincinnati
// does for a channel: the releases the lab's registry serves that are newer than current, in its
// minor or the next, by digest in OpenShift's repository. Only UpdateServiceURL answers.
func (l *Lab) updateService(_ context.Context, upstream, channel, current string) ([]configv1.Release, error) {
	if upstream != UpdateServiceURL {
		//nolint:staticcheck // ST1005: the text of Go's HTTP client, which the operator quotes
		return nil, fmt.Errorf("Get \"https://api.openshift.com/api/upgrades_info/v1/graph?channel=%s\": dial tcp: lookup api.openshift.com: no such host", channel)
	}
	cur, err := semver.ParseTolerant(current)
	if err != nil {
		return nil, fmt.Errorf("the current version %q is not a version: %w", current, err)
	}
	var out []configv1.Release
	l.versions.Range(func(k, digest any) bool {
		version := k.(string) //nolint:forcetypeassert // only strings are stored
		v, err := semver.ParseTolerant(version)
		if err != nil || len(v.Pre) > 0 || !v.GT(cur) || v.Major != cur.Major || v.Minor > cur.Minor+1 {
			return true
		}
		out = append(out, configv1.Release{Version: version, Image: OpenShiftReleaseRepository + "@" + digest.(string)}) //nolint:forcetypeassert // only strings are stored
		return true
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	return out, nil
}

// signatureStore says that the signature stores a connected cluster reaches sign every release:
// the lab's releases stand for Red Hat's. A disconnected cluster reaches none: it verifies a
// release with the signature ConfigMaps of its openshift-config-managed namespace only.
func (l *Lab) signatureStore(_ context.Context, upstream, _ string) bool {
	return upstream == UpdateServiceURL
}
