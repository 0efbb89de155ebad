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
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
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

// TestInstallHistory checks the history the installation leaves, as the cluster-version operator
// writes it: one Partial entry while installing, the same entry Completed once installed.
func TestInstallHistory(t *testing.T) {
	ctx := context.Background()
	r := Release("4.17.3", "")
	newClient := func(objs ...client.Object) client.Client {
		s := runtime.NewScheme()
		if err := configv1.Install(s); err != nil {
			t.Fatal(err)
		}
		return fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).WithStatusSubresource(&configv1.ClusterVersion{}).Build()
	}
	get := func(c client.Client) *configv1.ClusterVersion {
		cv := &configv1.ClusterVersion{}
		if err := c.Get(ctx, client.ObjectKey{Name: ClusterVersionName}, cv); err != nil {
			t.Fatal(err)
		}
		return cv
	}
	condition := func(cv *configv1.ClusterVersion, ct configv1.ClusterStatusConditionType) configv1.ConditionStatus {
		for _, c := range cv.Status.Conditions {
			if c.Type == ct {
				return c.Status
			}
		}
		return ""
	}

	t.Run("installing, then installed", func(t *testing.T) {
		cv := &configv1.ClusterVersion{ObjectMeta: metav1.ObjectMeta{Name: ClusterVersionName}}
		c := newClient(cv)
		cv = get(c)
		StartInstall(cv, r, metav1.Now())
		if err := c.Status().Update(ctx, cv); err != nil {
			t.Fatal(err)
		}
		cv = get(c)
		if h := cv.Status.History; len(h) != 1 || h[0].State != configv1.PartialUpdate || h[0].CompletionTime != nil || h[0].Verified {
			t.Fatalf("installing: history = %+v, want one Partial entry", h)
		}
		if condition(cv, configv1.OperatorAvailable) != configv1.ConditionFalse || condition(cv, configv1.OperatorProgressing) != configv1.ConditionTrue {
			t.Errorf("installing: conditions = %+v, want Available False, Progressing True", cv.Status.Conditions)
		}
		if err := EnsureClusterVersion(ctx, c, r, ""); err != nil {
			t.Fatal(err)
		}
		cv = get(c)
		if h := cv.Status.History; len(h) != 1 || h[0].State != configv1.CompletedUpdate || h[0].CompletionTime == nil || h[0].Version != "4.17.3" {
			t.Fatalf("installed: history = %+v, want the same entry Completed", h)
		}
		if condition(cv, configv1.OperatorAvailable) != configv1.ConditionTrue || condition(cv, configv1.OperatorProgressing) != configv1.ConditionFalse {
			t.Errorf("installed: conditions = %+v, want Available True, Progressing False", cv.Status.Conditions)
		}
	})
	t.Run("installed at once", func(t *testing.T) {
		c := newClient()
		if err := EnsureClusterVersion(ctx, c, r, ""); err != nil {
			t.Fatal(err)
		}
		if h := get(c).Status.History; len(h) != 1 || h[0].State != configv1.CompletedUpdate || h[0].Image != r.Image {
			t.Fatalf("history = %+v, want one Completed entry", h)
		}
	})
	t.Run("a longer history is left alone", func(t *testing.T) {
		cv := &configv1.ClusterVersion{ObjectMeta: metav1.ObjectMeta{Name: ClusterVersionName}}
		cv.Status.History = []configv1.UpdateHistory{{State: configv1.PartialUpdate, Version: "4.17.5", Image: Release("4.17.5", "").Image},
			{State: configv1.CompletedUpdate, Version: "4.17.3", Image: r.Image}}
		c := newClient(cv)
		if err := EnsureClusterVersion(ctx, c, r, ""); err != nil {
			t.Fatal(err)
		}
		if h := get(c).Status.History; len(h) != 2 || h[0].State != configv1.PartialUpdate {
			t.Fatalf("history = %+v, want it unchanged", h)
		}
	})
}
