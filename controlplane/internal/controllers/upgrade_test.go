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

package controllers

import (
	"strings"
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/controlplane/internal/release"
)

func entry(version string, state configv1.UpdateState) configv1.UpdateHistory {
	return configv1.UpdateHistory{Version: version, State: state}
}

// TestRunningVersion reads which version runs from ClusterVersion histories (newest first) as the
// cluster-version operator writes them.
func TestRunningVersion(t *testing.T) {
	const partial, completed = configv1.PartialUpdate, configv1.CompletedUpdate
	for _, tc := range []struct {
		name    string
		history []configv1.UpdateHistory
		want    string
	}{
		{"no history", nil, ""},
		{"first installation in progress", []configv1.UpdateHistory{entry("4.17.3", partial)}, ""},
		{"installed", []configv1.UpdateHistory{entry("4.17.3", completed)}, "4.17.3"},
		{"upgrade in progress", []configv1.UpdateHistory{entry("4.18.0", partial), entry("4.17.3", completed)}, "4.17.3"},
		{"upgraded", []configv1.UpdateHistory{entry("4.18.0", completed), entry("4.17.3", completed)}, "4.18.0"},
		{"an upgrade superseded another before it completed", []configv1.UpdateHistory{
			entry("4.18.1", partial), entry("4.18.0", partial), entry("4.17.3", completed)}, "4.17.3"},
		{"an upgrade after a superseded one", []configv1.UpdateHistory{
			entry("4.18.1", completed), entry("4.18.0", partial), entry("4.17.3", completed)}, "4.18.1"},
		{"installation never completed, then an upgrade", []configv1.UpdateHistory{
			entry("4.17.5", partial), entry("4.17.3", partial)}, ""},
		{"state not written yet", []configv1.UpdateHistory{entry("4.18.0", ""), entry("4.17.3", completed)}, "4.17.3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := runningVersion(tc.history); got != tc.want {
				t.Errorf("runningVersion() = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestDesiredClusterImageSet checks that the ClusterImageSet of a cluster being installed keeps
// the release it was created with, and follows the spec once the cluster is installed.
func TestDesiredClusterImageSet(t *testing.T) {
	const repo = "registry.lab:5000/ocp"
	image := func(v string) string { return release.Image(repo, v, "") }
	cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c1"}}
	cp := func(spec, running string, initialized bool) *controlplanev1.OpenshiftAssistedControlPlane {
		oacp := &controlplanev1.OpenshiftAssistedControlPlane{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c1",
			Annotations: map[string]string{controlplanev1.ReleaseImageRepositoryAnnotation: repo}}}
		oacp.Spec.DistributionVersion = spec
		oacp.Status.DistributionVersion = running
		if initialized {
			oacp.Status.Initialization.ControlPlaneInitialized = ptr.To(true)
		}
		return oacp
	}
	existing := func(v string) *hivev1.ClusterImageSet {
		cis := &hivev1.ClusterImageSet{ObjectMeta: metav1.ObjectMeta{Name: "c1", CreationTimestamp: metav1.Now()}}
		cis.Spec.ReleaseImage = image(v)
		return cis
	}
	for _, tc := range []struct {
		name string
		cis  *hivev1.ClusterImageSet
		oacp *controlplanev1.OpenshiftAssistedControlPlane
		want string
	}{
		{"new", &hivev1.ClusterImageSet{}, cp("4.17.3", "", false), image("4.17.3")},
		{"installing, spec unchanged", existing("4.17.3"), cp("4.17.3", "", false), image("4.17.3")},
		{"installing, spec changed", existing("4.17.3"), cp("4.18.0", "", false), image("4.17.3")},
		{"installed, version not read yet", existing("4.17.3"), cp("4.18.0", "", true), image("4.18.0")},
		{"installed, upgrading", existing("4.17.3"), cp("4.18.0", "4.17.3", true), image("4.18.0")},
		{"after clusterctl move, version read", existing("4.17.3"), cp("4.18.0", "4.17.3", false), image("4.18.0")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			desiredClusterImageSet(tc.cis, tc.oacp, cluster, (&scope{oacp: tc.oacp}).releaseImage(tc.oacp.Spec.DistributionVersion))
			if tc.cis.Spec.ReleaseImage != tc.want {
				t.Errorf("release image = %q, want %q", tc.cis.Spec.ReleaseImage, tc.want)
			}
			if tc.cis.Labels[controlplanev1.ImageSetControlPlaneLabel] != "c1" {
				t.Errorf("labels = %v", tc.cis.Labels)
			}
		})
	}
}

func TestDesiredUpdate(t *testing.T) {
	offered := []configv1.Release{{Version: "4.18.1", Image: "quay.io/ocp@sha256:graph"}}
	for _, tc := range []struct {
		name, version, digest string
		available             []configv1.Release
		want                  *configv1.Update
		wantErr               bool
	}{
		{name: "GA, offered by the update service", version: "4.18.1", digest: "reg/ocp@sha256:abc", available: offered,
			want: &configv1.Update{Version: "4.18.1"}},
		{name: "GA, no update service (disconnected)", version: "4.18.1", digest: "reg/ocp@sha256:abc",
			want: &configv1.Update{Version: "4.18.1", Image: "reg/ocp@sha256:abc"}},
		{name: "GA, not offered", version: "4.18.2", digest: "reg/ocp@sha256:abc", available: offered,
			want: &configv1.Update{Version: "4.18.2", Image: "reg/ocp@sha256:abc"}},
		{name: "GA, not offered and not resolved", version: "4.18.2", available: offered, wantErr: true},
		{name: "GA, offered and not resolved", version: "4.18.1", available: offered, want: &configv1.Update{Version: "4.18.1"}},
		{name: "release candidate", version: "4.18.0-rc.2", digest: "reg/ocp@sha256:abc", available: []configv1.Release{{Version: "4.18.0-rc.2"}},
			want: &configv1.Update{Version: "4.18.0-rc.2", Image: "reg/ocp@sha256:abc"}},
		{name: "release candidate, not resolved", version: "4.18.0-rc.2", wantErr: true},
		{name: "not a version", version: "latest", digest: "reg/ocp@sha256:abc", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := desiredUpdate(tc.version, tc.digest, tc.available)
			if (err != nil) != tc.wantErr {
				t.Fatalf("desiredUpdate: %v, want an error: %v", err, tc.wantErr)
			}
			if !tc.wantErr && *got != *tc.want {
				t.Errorf("desiredUpdate = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestNotAccepted: the cluster-version operator's refusals of the update asked, with what to do,
// once its status is about that request.
func TestNotAccepted(t *testing.T) {
	want := &configv1.Update{Version: "4.18.1", Image: "quay.io/ocp@sha256:abc"}
	cv := func(generation, observed int64, u *configv1.Update, conds ...configv1.ClusterOperatorStatusCondition) *configv1.ClusterVersion {
		return &configv1.ClusterVersion{ObjectMeta: metav1.ObjectMeta{Generation: generation},
			Spec: configv1.ClusterVersionSpec{DesiredUpdate: u}, Status: configv1.ClusterVersionStatus{ObservedGeneration: observed, Conditions: conds}}
	}
	unverified := configv1.ClusterOperatorStatusCondition{Type: "ReleaseAccepted", Status: configv1.ConditionFalse, Reason: "RetrievePayload",
		Message: `Retrieving payload failed version="4.18.1" image="quay.io/ocp@sha256:abc" failure=The update cannot be verified: unable to verify sha256:abc`}
	invalid := configv1.ClusterOperatorStatusCondition{Type: "Invalid", Status: configv1.ConditionTrue, Reason: "InvalidClusterVersion",
		Message: "The cluster version is invalid: spec.desiredUpdate.version: when image is empty the update must be an available update"}
	for _, tc := range []struct {
		name string
		cv   *configv1.ClusterVersion
		want []string
	}{
		{name: "accepted", cv: cv(2, 2, want, configv1.ClusterOperatorStatusCondition{Type: "ReleaseAccepted", Status: configv1.ConditionTrue})},
		{name: "not verified", cv: cv(2, 2, want, unverified), want: []string{"does not accept the release", "cannot be verified", "signature ConfigMap", "openshift-config-managed"}},
		{name: "invalid", cv: cv(2, 2, want, invalid), want: []string{"finds the update invalid", "available update", "update service does not offer it"}},
		{name: "status of an earlier request", cv: cv(3, 2, want, unverified)},
		{name: "another request in place", cv: cv(2, 2, &configv1.Update{Version: "4.18.1"}, invalid)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := notAccepted(tc.cv, want)
			if len(tc.want) == 0 && got != "" {
				t.Fatalf("notAccepted = %q, want none", got)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("notAccepted = %q, want it to contain %q", got, w)
				}
			}
		})
	}
}
