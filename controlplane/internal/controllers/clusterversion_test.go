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

package controllers_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	configv1 "github.com/openshift/api/config/v1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/controlplane/internal/controllers"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/pause"
)

// The workload cluster's ClusterVersion is handled as unstructured: the test scheme, like the
// provider's, does not register OpenShift's config API.

func toUnstructured(cv *configv1.ClusterVersion) (*unstructured.Unstructured, error) {
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(cv)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: obj}
	u.SetGroupVersionKind(configv1.GroupVersion.WithKind("ClusterVersion"))
	return u, nil
}

func history(versions ...string) []configv1.UpdateHistory {
	h := []configv1.UpdateHistory{}
	for _, v := range versions {
		h = append(h, configv1.UpdateHistory{State: configv1.CompletedUpdate, Version: v, Image: "quay.io/ocp@sha256:" + v,
			StartedTime: metav1.Now(), CompletionTime: ptrTime(metav1.Now()), Verified: true})
	}
	return h
}

func ptrTime(t metav1.Time) *metav1.Time { return &t }

// createClusterVersion creates the workload cluster's ClusterVersion, as the installer leaves it:
// no desiredUpdate, the installed release Completed. The tests share one workload cluster: an
// existing ClusterVersion is reset.
func createClusterVersion(ctx context.Context, version string) error {
	cv := &configv1.ClusterVersion{ObjectMeta: metav1.ObjectMeta{Name: "version"},
		Spec: configv1.ClusterVersionSpec{ClusterID: "9b1e9e1c-0000-4000-8000-000000000001", Channel: "stable-4.18"}}
	u, err := toUnstructured(cv)
	if err != nil {
		return err
	}
	err = workload.Client.Create(ctx, u)
	if apierrors.IsAlreadyExists(err) {
		existing := &unstructured.Unstructured{}
		existing.SetGroupVersionKind(configv1.GroupVersion.WithKind("ClusterVersion"))
		if err := workload.Client.Get(ctx, client.ObjectKey{Name: "version"}, existing); err != nil {
			return err
		}
		unstructured.RemoveNestedField(existing.Object, "spec", "desiredUpdate")
		err = workload.Client.Update(ctx, existing)
	}
	if err != nil {
		return err
	}
	return setClusterVersionStatus(ctx, version, history(version))
}

func setClusterVersionStatus(ctx context.Context, desired string, h []configv1.UpdateHistory) error {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(configv1.GroupVersion.WithKind("ClusterVersion"))
	if err := workload.Client.Get(ctx, client.ObjectKey{Name: "version"}, u); err != nil {
		return err
	}
	cv := &configv1.ClusterVersion{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, cv); err != nil {
		return err
	}
	cv.Status = configv1.ClusterVersionStatus{
		Desired: configv1.Release{Version: desired, Image: "quay.io/ocp@sha256:" + desired}, History: h,
		ObservedGeneration: cv.Generation, VersionHash: "hash-" + desired,
		Conditions: []configv1.ClusterOperatorStatusCondition{{Type: configv1.OperatorProgressing, Status: configv1.ConditionFalse,
			LastTransitionTime: metav1.Now(), Message: "Cluster version is " + desired}},
	}
	nu, err := toUnstructured(cv)
	if err != nil {
		return err
	}
	return workload.Client.Status().Update(ctx, nu)
}

// completeUpdate plays the cluster-version operator finishing an update to version.
func completeUpdate(ctx context.Context, version, from string) error {
	return setClusterVersionStatus(ctx, version, history(version, from))
}

// newInstalledFixture is a control plane of one replica installed at version, its workload
// cluster's ClusterVersion reset to that version.
func newInstalledFixture(ctx context.Context, t *testing.T, version string) *fixture {
	t.Helper()
	f := newFixture(ctx, t, fixtureOptions{replicas: 1, version: version})
	NewWithT(t).Expect(createClusterVersion(ctx, version)).To(Succeed())
	f.simulateInstall(ctx, t)
	expectInstalled(ctx, t, f, 1)
	return f
}

// leaveClusterVersionAlone pauses f's Cluster when the test ends: the tests share the workload
// cluster's ClusterVersion, which f's controller must not touch afterwards.
func leaveClusterVersionAlone(ctx context.Context, t *testing.T, f *fixture) {
	t.Helper()
	t.Cleanup(func() {
		// A Cluster already gone is left alone; any other error would leave it unpaused.
		if err := pause.SetCluster(ctx, mgmt.Client, client.ObjectKeyFromObject(f.cluster), true); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("pausing the Cluster: %v", err)
		}
	})
}

func getClusterVersion(ctx context.Context, g Gomega) *configv1.ClusterVersion {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(configv1.GroupVersion.WithKind("ClusterVersion"))
	g.Expect(workload.Client.Get(ctx, client.ObjectKey{Name: "version"}, u)).To(Succeed())
	cv := &configv1.ClusterVersion{}
	g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, cv)).To(Succeed())
	return cv
}

// TestVersionChangedDuringInstallIsCarriedOutAsAnUpgrade changes distributionVersion while the
// cluster installs, as a user could with the webhook not deployed: the ClusterImageSet keeps the
// release being installed, status.distributionVersion stays empty until the cluster's
// ClusterVersion is read, then reports what runs (4.17.3), and the change is carried out as an
// upgrade; a Partial update on top of the history does not change what status reports.
func TestVersionChangedDuringInstallIsCarriedOutAsAnUpgrade(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	f := newFixture(ctx, t, fixtureOptions{replicas: 1})
	leaveClusterVersionAlone(ctx, t, f)
	installImage := pinnedRelease("4.17.3")
	imageSet := func(g Gomega) string {
		cis := &hivev1.ClusterImageSet{}
		g.Expect(mgmt.Client.Get(ctx, client.ObjectKey{Name: controllers.ImageSetName(f.oacp)}, cis)).To(Succeed())
		return cis.Spec.ReleaseImage
	}
	g.Eventually(imageSet, timeout, interval).Should(Equal(installImage))

	g.Eventually(func(g Gomega) {
		o := f.getOACP(ctx, g)
		o.Spec.DistributionVersion = "4.18.0"
		g.Expect(mgmt.Client.Update(ctx, o)).To(Succeed())
	}, timeout, interval).Should(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(f.getOACP(ctx, g).Status.ObservedGeneration).To(Equal(f.getOACP(ctx, g).Generation))
	}, timeout, interval).Should(Succeed())
	g.Consistently(func(g Gomega) {
		g.Expect(imageSet(g)).To(Equal(installImage), "the release being installed does not change")
		o := f.getOACP(ctx, g)
		g.Expect(o.Status.DistributionVersion).To(BeEmpty(), "nothing runs yet")
		g.Expect(conditions.IsTrue(o, controlplanev1.UpgradingCondition)).To(BeFalse())
	}, 2*time.Second, interval).Should(Succeed())

	f.simulateInstall(ctx, t) // the ClusterVersion reports 4.17.3 installed
	g.Eventually(func(g Gomega) {
		cv := getClusterVersion(ctx, g)
		g.Expect(cv.Spec.DesiredUpdate).NotTo(BeNil())
		g.Expect(cv.Spec.DesiredUpdate.Version).To(Equal("4.18.0"))
		o := f.getOACP(ctx, g)
		g.Expect(o.Status.DistributionVersion).To(Equal("4.17.3"), "what runs, not what the spec asks")
		g.Expect(o.Status.Version).To(Equal("v1.30.4"))
		g.Expect(conditions.IsTrue(o, controlplanev1.UpgradingCondition)).To(BeTrue())
		g.Expect(conditions.GetMessage(o, controlplanev1.UpgradingCondition)).To(ContainSubstring("from 4.17.3 to 4.18.0"))
	}, timeout, interval).Should(Succeed())

	g.Expect(completeUpdate(ctx, "4.18.0", "4.17.3")).To(Succeed())
	g.Eventually(func(g Gomega) {
		o := f.getOACP(ctx, g)
		g.Expect(o.Status.DistributionVersion).To(Equal("4.18.0"))
		g.Expect(o.Status.Version).To(Equal("v1.31.2"))
		g.Expect(conditions.GetReason(o, controlplanev1.UpgradingCondition)).To(Equal(controlplanev1.NotUpgradingReason))
		g.Expect(imageSet(g)).To(Equal(pinnedRelease("4.18.0")), "once installed, the ClusterImageSet follows the spec")
	}, timeout, interval).Should(Succeed())

	// An update the cluster-version operator has not completed does not run yet.
	partial := append([]configv1.UpdateHistory{{State: configv1.PartialUpdate, Version: "4.19.0", Image: "quay.io/ocp@sha256:4.19.0",
		StartedTime: metav1.Now()}}, history("4.18.0", "4.17.3")...)
	g.Expect(setClusterVersionStatus(ctx, "4.19.0", partial)).To(Succeed())
	g.Consistently(func(g Gomega) {
		g.Expect(f.getOACP(ctx, g).Status.DistributionVersion).To(Equal("4.18.0"))
	}, 2*time.Second, interval).Should(Succeed())
}

// TestUpgradeByDigestUnlessTheUpdateServiceOffersIt: a cluster whose update service offers
// nothing (a disconnected one) is asked for the release pinned by digest; when the
// cluster-version operator cannot verify it, the control plane says so, with what to do, in its
// Upgrading condition and a Warning event; once the update service offers the version, the
// cluster is asked for it by version.
func TestUpgradeByDigestUnlessTheUpdateServiceOffersIt(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	f := newInstalledFixture(ctx, t, "4.17.3")
	leaveClusterVersionAlone(ctx, t, f)
	g.Eventually(func(g Gomega) {
		o := f.getOACP(ctx, g)
		o.Spec.DistributionVersion = "4.18.0"
		g.Expect(mgmt.Client.Update(ctx, o)).To(Succeed())
	}, timeout, interval).Should(Succeed())
	var cv *configv1.ClusterVersion
	g.Eventually(func(g Gomega) {
		cv = getClusterVersion(ctx, g)
		g.Expect(cv.Spec.DesiredUpdate).To(Equal(&configv1.Update{Version: "4.18.0", Image: pinnedRelease("4.18.0")}))
	}, timeout, interval).Should(Succeed())

	// The cluster-version operator cannot verify the release: no signature reaches the cluster.
	setStatus := func(mutate func(*configv1.ClusterVersionStatus)) {
		g.Eventually(func(g Gomega) {
			cv := getClusterVersion(ctx, g)
			cv.Status.ObservedGeneration = cv.Generation
			mutate(&cv.Status)
			u, err := toUnstructured(cv)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(workload.Client.Status().Update(ctx, u)).To(Succeed())
		}, timeout, interval).Should(Succeed())
	}
	setStatus(func(st *configv1.ClusterVersionStatus) {
		st.Conditions = append(st.Conditions, configv1.ClusterOperatorStatusCondition{Type: "ReleaseAccepted", Status: configv1.ConditionFalse,
			Reason: "RetrievePayload", LastTransitionTime: metav1.Now(),
			Message: fmt.Sprintf("Retrieving payload failed version=%q image=%q failure=The update cannot be verified: unable to verify %s against keyrings: verifier-public-key-redhat",
				"4.18.0", pinnedRelease("4.18.0"), releaseDigests["4.18.0"])})
	})
	g.Eventually(func(g Gomega) {
		o := f.getOACP(ctx, g)
		c := conditions.Get(o, controlplanev1.UpgradingCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Reason).To(Equal(controlplanev1.UpgradeNotAcceptedReason))
		g.Expect(c.Message).To(ContainSubstring("OpenShift 4.17.3 is not upgraded to 4.18.0: the cluster-version operator does not accept the release"))
		g.Expect(c.Message).To(ContainSubstring("apply the release's signature ConfigMap"))
		events := &eventsv1.EventList{}
		g.Expect(mgmt.Client.List(ctx, events, client.InNamespace(f.ns))).To(Succeed())
		g.Expect(events.Items).To(ContainElement(And(HaveField("Type", corev1.EventTypeWarning),
			HaveField("Reason", controlplanev1.UpgradeNotAcceptedReason), HaveField("Note", ContainSubstring("cannot be verified")))))
	}, timeout, interval).Should(Succeed())

	// The update service now offers 4.18.0: the cluster is asked for it by version.
	setStatus(func(st *configv1.ClusterVersionStatus) {
		st.AvailableUpdates = []configv1.Release{{Version: "4.18.0", Image: "quay.io/openshift-release-dev/ocp-release@" + releaseDigests["4.18.0"]}}
	})
	g.Eventually(func(g Gomega) {
		g.Expect(getClusterVersion(ctx, g).Spec.DesiredUpdate).To(Equal(&configv1.Update{Version: "4.18.0"}))
	}, timeout, interval).Should(Succeed())
}
