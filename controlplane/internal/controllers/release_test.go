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
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/controlplane/internal/release"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/reconciler"
	capoascheme "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/scheme"
)

// recordingRelease answers a read with info pinned in the image's repository, and records the
// image asked.
type recordingRelease struct {
	info  release.Info
	asked string
}

func (f *recordingRelease) Read(_ context.Context, ref string, _ release.Access) (release.Info, error) {
	f.asked = ref
	info := f.info
	info.DigestImage = ref[:strings.LastIndex(ref, ":")] + "@" + info.Digest
	return info, nil
}

// TestReleaseFollowsTheClusterArchitectures: the release image a control plane reads (and the
// ClusterImageSet then pins) is chosen from the architectures of the control plane and of the
// worker templates of its Cluster's MachineDeployments; a multi release must serve them all.
func TestReleaseFollowsTheClusterArchitectures(t *testing.T) {
	template := func(name, arch string) *bootstrapv1.OpenshiftAssistedConfigTemplate {
		tmpl := &bootstrapv1.OpenshiftAssistedConfigTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
		tmpl.Spec.Template.Spec.CpuArchitecture = arch
		return tmpl
	}
	md := func(name, cluster string, ref clusterv1.ContractVersionedObjectReference) *clusterv1.MachineDeployment {
		// Without the cluster-name label, which Cluster API adds later.
		md := &clusterv1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
		md.Spec.ClusterName = cluster
		md.Spec.Template.Spec.Bootstrap.ConfigRef = ref
		return md
	}
	oacRef := func(name string) clusterv1.ContractVersionedObjectReference {
		return clusterv1.ContractVersionedObjectReference{APIGroup: bootstrapv1.GroupVersion.Group, Kind: "OpenshiftAssistedConfigTemplate", Name: name}
	}
	deleting := md("old-arm", "c1", oacRef("arm"))
	now := metav1.Now()
	deleting.DeletionTimestamp, deleting.Finalizers = &now, []string{"keep"}
	multi := release.Info{Digest: "sha256:1d", KubernetesVersion: "v1.30.4", Platforms: []string{"amd64", "arm64"}}
	single := release.Info{Digest: "sha256:5e", KubernetesVersion: "v1.30.4"}
	const mirror = "mirror.example.com/ocp/release"

	for _, tc := range []struct {
		name       string
		cpArch     string
		version    string
		repository string
		objs       []client.Object
		info       release.Info
		listErr    error
		wantImage  string
		wantErr    string
		// wantReason is the ReleaseImageResolved reason; wantMessage a part of its message.
		wantReason, wantMessage string
	}{
		{name: "no MachineDeployment: the control plane's default", info: single,
			wantImage: "quay.io/openshift-release-dev/ocp-release:4.17.3-x86_64", wantReason: controlplanev1.ReleaseImageResolvedReason},
		{name: "arm64 everywhere", cpArch: "arm64", info: single,
			objs:      []client.Object{template("arm", "aarch64"), md("arm", "c1", oacRef("arm"))},
			wantImage: "quay.io/openshift-release-dev/ocp-release:4.17.3-aarch64", wantReason: controlplanev1.ReleaseImageResolvedReason},
		{name: "an arm64 worker pool: the multi release", info: multi,
			objs:      []client.Object{template("x86", "x86_64"), md("x86", "c1", oacRef("x86")), template("arm", "arm64"), md("arm", "c1", oacRef("arm"))},
			wantImage: "quay.io/openshift-release-dev/ocp-release:4.17.3-multi", wantReason: controlplanev1.ReleaseImageResolvedReason},
		{name: "multi through a repository override", repository: mirror, info: multi,
			objs:      []client.Object{template("arm", "aarch64"), md("arm", "c1", oacRef("arm"))},
			wantImage: mirror + ":4.17.3-multi", wantReason: controlplanev1.ReleaseImageResolvedReason},
		{name: "a multi release without the workers' architecture", info: multi,
			objs:      []client.Object{template("arm", "aarch64"), md("arm", "c1", oacRef("arm")), template("z", "s390x"), md("z", "c1", oacRef("z"))},
			wantImage: "quay.io/openshift-release-dev/ocp-release:4.17.3-multi", wantReason: controlplanev1.ReleaseImageArchitectureNotInReleaseReason,
			wantMessage: "has no image for s390x (it serves amd64, arm64)"},
		{name: "a single-architecture tag that is an index without the architecture", cpArch: "ppc64le", info: multi,
			wantImage: "quay.io/openshift-release-dev/ocp-release:4.17.3-ppc64le", wantReason: controlplanev1.ReleaseImageArchitectureNotInReleaseReason,
			wantMessage: "has no image for ppc64le"},
		{name: "ignored: another Cluster's, a deleting one's, a missing template, another bootstrap provider's", info: single,
			objs: []client.Object{template("arm", "aarch64"), md("other", "c2", oacRef("arm")), deleting, md("gone", "c1", oacRef("gone")),
				md("kubeadm", "c1", clusterv1.ContractVersionedObjectReference{APIGroup: "bootstrap.cluster.x-k8s.io", Kind: "KubeadmConfigTemplate", Name: "arm"})},
			wantImage: "quay.io/openshift-release-dev/ocp-release:4.17.3-x86_64", wantReason: controlplanev1.ReleaseImageResolvedReason},
		{name: "OKD", version: "4.18.0-okd-scos.1", info: single,
			wantImage: "quay.io/okd/scos-release:4.18.0-okd-scos.1", wantReason: controlplanev1.ReleaseImageResolvedReason},
		{name: "OKD through a repository override, multi", version: "4.18.0-okd-scos.1", repository: mirror, info: multi,
			objs:      []client.Object{template("arm", "aarch64"), md("arm", "c1", oacRef("arm"))},
			wantImage: mirror + ":4.18.0-okd-scos.1-multi", wantReason: controlplanev1.ReleaseImageResolvedReason},
		// Upstream v0.3.0-v0.3.2's form, the whole tag (their example 4.19.0-ec.2-x86_64): that
		// release, not <tag>-x86_64.
		{name: "a version that names its release's architecture", version: "4.19.0-ec.2-x86_64", info: single,
			wantImage: "quay.io/openshift-release-dev/ocp-release:4.19.0-ec.2-x86_64", wantReason: controlplanev1.ReleaseImageResolvedReason},
		{name: "a version that names its architecture, through a repository override", version: "4.17.3-aarch64", cpArch: "arm64", repository: mirror, info: single,
			wantImage: mirror + ":4.17.3-aarch64", wantReason: controlplanev1.ReleaseImageResolvedReason},
		{name: "a version that names multi", version: "4.17.3-multi", info: multi,
			objs:      []client.Object{template("arm", "aarch64"), md("arm", "c1", oacRef("arm"))},
			wantImage: "quay.io/openshift-release-dev/ocp-release:4.17.3-multi", wantReason: controlplanev1.ReleaseImageResolvedReason},
		{name: "a version that names another architecture than the machines'", version: "4.17.3-aarch64", info: single,
			objs:      []client.Object{template("arm", "aarch64"), md("arm", "c1", oacRef("arm"))},
			wantImage: "quay.io/openshift-release-dev/ocp-release:4.17.3-aarch64", wantReason: controlplanev1.ReleaseImageArchitectureNotInReleaseReason,
			wantMessage: "spec.distributionVersion names the aarch64 release, which cannot run the cluster's x86_64 machines"},
		{name: "the MachineDeployments cannot be listed", listErr: errors.New("etcdserver: request timed out"),
			wantErr: "listing the Cluster's MachineDeployments: etcdserver: request timed out"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := capoascheme.New(controlplanev1.AddToScheme, bootstrapv1.AddToScheme)
			if err != nil {
				t.Fatal(err)
			}
			c := fake.NewClientBuilder().WithScheme(s).WithObjects(tc.objs...).WithInterceptorFuncs(interceptor.Funcs{
				List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
					if tc.listErr != nil {
						return tc.listErr
					}
					return c.List(ctx, list, opts...)
				},
			}).Build()
			oacp := testOACP(3)
			oacp.Spec.OpenshiftAssistedConfigSpec.CpuArchitecture = tc.cpArch
			if tc.version != "" {
				oacp.Spec.DistributionVersion = tc.version
			}
			if tc.repository != "" {
				oacp.Annotations = map[string]string{controlplanev1.ReleaseImageRepositoryAnnotation: tc.repository}
			}
			reader := &recordingRelease{info: tc.info}
			r := &OpenshiftAssistedControlPlaneReconciler{Client: c, APIReader: c, Recorder: events.NewFakeRecorder(10), Release: reader}
			sc := &scope{oacp: oacp, cluster: testCluster(nil, nil)}

			err = r.readSpecRelease(context.Background(), sc)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("readSpecRelease error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if reader.asked != tc.wantImage || sc.releaseImage(oacp.Spec.DistributionVersion) != tc.wantImage {
				t.Errorf("read %q (releaseImage %q), want %q", reader.asked, sc.releaseImage(oacp.Spec.DistributionVersion), tc.wantImage)
			}
			setReleaseCondition(sc)
			cond := conditions.Get(oacp, controlplanev1.ReleaseImageResolvedCondition)
			if cond == nil || cond.Reason != tc.wantReason || !strings.Contains(cond.Message, tc.wantMessage) {
				t.Fatalf("ReleaseImageResolved = %+v, want reason %s and a message with %q", cond, tc.wantReason, tc.wantMessage)
			}
			if tc.wantReason == controlplanev1.ReleaseImageResolvedReason {
				if want := tc.wantImage[:strings.LastIndex(tc.wantImage, ":")] + "@" + tc.info.Digest; sc.specRelease.DigestImage != want || sc.specKubeVersion != "v1.30.4" {
					t.Errorf("resolved %s, Kubernetes %s; want %s, v1.30.4", sc.specRelease.DigestImage, sc.specKubeVersion, want)
				}
			} else if sc.specRelease.DigestImage != "" || sc.specKubeVersion != "" {
				t.Errorf("a release without the cluster's architectures is used: %+v", sc.specRelease)
			}
		})
	}
}

// TestSpecVersionMustBeTheReleasesKubernetesVersion: a spec.version that is not the Kubernetes
// version of the release is reported (ReleaseImageResolved False, VersionMismatch) and nothing is
// installed with it (the ClusterImageSet is not written: Available False, VersionMismatch); an
// installed cluster keeps its ClusterImageSet. An unset version, or one that differs only by the
// leading v or build metadata, is the release's.
func TestSpecVersionMustBeTheReleasesKubernetesVersion(t *testing.T) {
	for _, tc := range []struct {
		version   string
		installed bool
		mismatch  bool
	}{
		{version: ""},
		{version: "v1.30.4"},
		{version: "1.30.4"},
		{version: "v1.30.4+ocp.4.17.3"},
		{version: "v1.31.0", mismatch: true},
		{version: "v1.30.5", mismatch: true},
		{version: "v1.30.4-rc.1", mismatch: true},
		{version: "v1.31.0", installed: true, mismatch: true},
	} {
		t.Run(fmt.Sprintf("%s installed=%t", tc.version, tc.installed), func(t *testing.T) {
			s, err := capoascheme.New(controlplanev1.AddToScheme, bootstrapv1.AddToScheme)
			if err != nil {
				t.Fatal(err)
			}
			c := fake.NewClientBuilder().WithScheme(s).Build()
			oacp := testOACP(3)
			oacp.Spec.Version = tc.version
			if tc.installed {
				oacp.Status.DistributionVersion = oacp.Spec.DistributionVersion
			}
			r := &OpenshiftAssistedControlPlaneReconciler{Client: c, APIReader: c, Recorder: events.NewFakeRecorder(10),
				Release: &recordingRelease{info: release.Info{Digest: "sha256:5e", KubernetesVersion: "v1.30.4"}}}
			sc := &scope{oacp: oacp, cluster: testCluster(nil, nil)}
			if err := r.readSpecRelease(context.Background(), sc); err != nil {
				t.Fatal(err)
			}
			setReleaseCondition(sc)
			cond := conditions.Get(oacp, controlplanev1.ReleaseImageResolvedCondition)
			err = r.reconcileClusterImageSet(context.Background(), sc)
			var problem *reconciler.Problem
			switch {
			case !tc.mismatch:
				if cond.Reason != controlplanev1.ReleaseImageResolvedReason || err != nil {
					t.Fatalf("ReleaseImageResolved %s %q, ClusterImageSet error %v; want Resolved and written", cond.Reason, cond.Message, err)
				}
			case cond.Reason != controlplanev1.VersionMismatchReason ||
				!strings.Contains(cond.Message, "carries Kubernetes v1.30.4, but spec.version is "+tc.version+": set spec.version to v1.30.4"):
				t.Fatalf("ReleaseImageResolved = %s %q, want VersionMismatch naming both versions", cond.Reason, cond.Message)
			case tc.installed && err != nil:
				t.Fatalf("the ClusterImageSet of an installed cluster is refused: %v", err)
			case !tc.installed && (!errors.As(err, &problem) || problem.Reason != controlplanev1.VersionMismatchReason):
				t.Fatalf("ClusterImageSet error = %v, want a VersionMismatch problem", err)
			}
			if sc.specKubeVersion != "v1.30.4" {
				t.Errorf("Machines would carry Kubernetes %q, want the release's v1.30.4", sc.specKubeVersion)
			}
		})
	}
}
