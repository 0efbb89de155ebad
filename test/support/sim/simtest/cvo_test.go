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

package simtest

import (
	"context"
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
	configv1 "github.com/openshift/api/config/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/cvo"
)

// TestClusterVersionUpgrade asks the workload cluster's ClusterVersion for another release, as the
// control-plane provider does on an upgrade, and checks that the update goes Partial, then
// Completed, with status.desired and the conditions following.
func TestClusterVersionUpgrade(t *testing.T) {
	g := NewWithT(t)
	wc := watchClient(t, workload)
	history := recordStates(t, wc, &configv1.ClusterVersionList{}, "", cvo.ClusterVersionName,
		func(cv *configv1.ClusterVersion) string {
			if len(cv.Status.History) == 0 {
				return ""
			}
			return cv.Status.History[0].Version + "/" + string(cv.Status.History[0].State)
		})
	freshClusterVersion(g)
	g.Expect(cvo.EnsureClusterVersion(ctx, workload.Client, cvo.Release("4.14.3", ""), testUpstream)).To(Succeed())

	cv := &configv1.ClusterVersion{}
	g.Expect(workload.Client.Get(ctx, client.ObjectKey{Name: cvo.ClusterVersionName}, cv)).To(Succeed())
	base := cv.DeepCopy()
	cv.Spec.DesiredUpdate = &configv1.Update{Version: "4.14.5"}
	g.Expect(workload.Client.Patch(ctx, cv, client.MergeFrom(base))).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(workload.Client.Get(ctx, client.ObjectKey{Name: cvo.ClusterVersionName}, cv)).To(Succeed())
		g.Expect(cv.Status.History).To(HaveLen(2))
		g.Expect(cv.Status.History[0].State).To(Equal(configv1.CompletedUpdate))
	}, timeout).Should(Succeed())
	g.Eventually(history.States, timeout).Should(Equal([]string{"4.14.3/Completed", "4.14.5/Partial", "4.14.5/Completed"}))
	g.Expect(cv.Status.Desired).To(Equal(configv1.Release{Version: "4.14.5", Image: release4145}), "the update service's release")
	g.Expect(cv.Status.History[0].CompletionTime).NotTo(BeNil())
	g.Expect(cv.Status.History[1].Version).To(Equal("4.14.3"))
	g.Expect(cv.Status.ObservedGeneration).To(Equal(cv.Generation))
	for _, c := range cv.Status.Conditions {
		switch c.Type {
		case configv1.OperatorProgressing:
			g.Expect(c.Status).To(Equal(configv1.ConditionFalse))
			g.Expect(c.Message).To(Equal("Cluster version is 4.14.5"))
		case configv1.OperatorAvailable:
			g.Expect(c.Status).To(Equal(configv1.ConditionTrue))
			g.Expect(c.Message).To(Equal("Done applying 4.14.5"))
		}
	}
	g.Expect(workload.Client.Delete(ctx, cv)).To(Succeed())
}

// The tests' update service (cvo.UpdateService): at testUpstream it offers 4.14.5 by digest to a
// cluster of 4.14.3, and its signature store signs that digest; any other upstream (the default
// one of a disconnected cluster) cannot be reached.
const (
	testUpstream = "https://updates.simtest.example/api/upgrades_info/v1/graph"
	digest4145   = "sha256:4145414541454145414541454145414541454145414541454145414541454145"
	release4145  = cvo.ReleaseRepository + "@" + digest4145
)

func testUpdateService(_ context.Context, upstream, channel, current string) ([]configv1.Release, error) {
	if upstream != testUpstream {
		return nil, fmt.Errorf("Get \"https://api.openshift.com/api/upgrades_info/v1/graph?channel=%s\": dial tcp: lookup api.openshift.com: no such host", channel)
	}
	if current != "4.14.3" {
		return nil, nil
	}
	return []configv1.Release{{Version: "4.14.5", Image: release4145}}, nil
}

func testSignatureStore(_ context.Context, upstream, digest string) bool {
	return upstream == testUpstream && digest == digest4145
}

// TestClusterVersionRefusesWhatTheRealOperatorRefuses: a disconnected cluster (no update service
// reached) gets Invalid for an update by version; an update by image needs a digest and a
// signature the cluster trusts (a signature ConfigMap, as oc-mirror writes them), or force.
func TestClusterVersionRefusesWhatTheRealOperatorRefuses(t *testing.T) {
	g := NewWithT(t)
	freshClusterVersion(g)
	g.Expect(cvo.EnsureClusterVersion(ctx, workload.Client, cvo.Release("4.14.3", ""), "")).To(Succeed())
	t.Cleanup(func() {
		_ = workload.Client.Delete(context.Background(), &configv1.ClusterVersion{ObjectMeta: metav1.ObjectMeta{Name: cvo.ClusterVersionName}})
	})
	cv := &configv1.ClusterVersion{}
	desire := func(u configv1.Update) {
		g.Expect(workload.Client.Get(ctx, client.ObjectKey{Name: cvo.ClusterVersionName}, cv)).To(Succeed())
		base := cv.DeepCopy()
		cv.Spec.DesiredUpdate = &u
		g.Expect(workload.Client.Patch(ctx, cv, client.MergeFrom(base))).To(Succeed())
	}
	condition := func(g Gomega, t configv1.ClusterStatusConditionType) configv1.ClusterOperatorStatusCondition {
		g.Expect(workload.Client.Get(ctx, client.ObjectKey{Name: cvo.ClusterVersionName}, cv)).To(Succeed())
		g.Expect(cv.Status.ObservedGeneration).To(Equal(cv.Generation))
		for _, c := range cv.Status.Conditions {
			if c.Type == t {
				return c
			}
		}
		return configv1.ClusterOperatorStatusCondition{}
	}
	stillAt := func(g Gomega) {
		g.Expect(cv.Status.History).To(HaveLen(1), "no update started")
	}

	desire(configv1.Update{Version: "4.14.5"})
	g.Eventually(func(g Gomega) {
		c := condition(g, cvo.Invalid)
		g.Expect(c.Status).To(Equal(configv1.ConditionTrue))
		g.Expect(c.Reason).To(Equal(cvo.InvalidClusterVersion))
		g.Expect(c.Message).To(ContainSubstring(cvo.VersionNotInUpdatesMsg))
		r := condition(g, configv1.RetrievedUpdates)
		g.Expect(r.Status).To(Equal(configv1.ConditionFalse))
		g.Expect(r.Message).To(ContainSubstring("no such host"))
		stillAt(g)
	}, timeout).Should(Succeed())

	desire(configv1.Update{Version: "4.14.5", Image: cvo.ReleaseRepository + ":4.14.5-x86_64"})
	g.Eventually(func(g Gomega) {
		c := condition(g, cvo.ReleaseAccepted)
		g.Expect(c.Status).To(Equal(configv1.ConditionFalse))
		g.Expect(c.Reason).To(Equal(cvo.RetrievePayload))
		g.Expect(c.Message).To(ContainSubstring(cvo.NotByDigestMsg))
		g.Expect(condition(g, cvo.Invalid).Status).To(Equal(configv1.ConditionFalse))
		stillAt(g)
	}, timeout).Should(Succeed())

	desire(configv1.Update{Version: "4.14.5", Image: release4145})
	g.Eventually(func(g Gomega) {
		c := condition(g, cvo.ReleaseAccepted)
		g.Expect(c.Status).To(Equal(configv1.ConditionFalse))
		g.Expect(c.Message).To(ContainSubstring("The update cannot be verified: unable to verify " + digest4145))
		stillAt(g)
	}, timeout).Should(Succeed())

	// The release's signature, as oc-mirror writes it for a disconnected cluster.
	g.Expect(client.IgnoreAlreadyExists(workload.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: cvo.SignatureNamespace}}))).To(Succeed())
	sig := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: cvo.SignatureNamespace, Name: "sha256-4145",
		Labels: map[string]string{cvo.SignatureLabel: ""}}, BinaryData: map[string][]byte{"sha256-" + digest4145[len("sha256:"):] + "-1": []byte("signature")}}
	g.Expect(workload.Client.Create(ctx, sig)).To(Succeed())
	t.Cleanup(func() { _ = workload.Client.Delete(context.Background(), sig) })
	g.Eventually(func(g Gomega) {
		c := condition(g, cvo.ReleaseAccepted)
		g.Expect(c.Status).To(Equal(configv1.ConditionTrue))
		g.Expect(cv.Status.History).To(HaveLen(2))
		g.Expect(cv.Status.History[0].Image).To(Equal(release4145))
		g.Expect(cv.Status.History[0].State).To(Equal(configv1.CompletedUpdate))
	}, timeout).Should(Succeed())
}

// freshClusterVersion deletes the workload cluster's ClusterVersion that an earlier test (an
// installation) left, so that the test's own is created with its upstream.
func freshClusterVersion(g Gomega) {
	cv := &configv1.ClusterVersion{ObjectMeta: metav1.ObjectMeta{Name: cvo.ClusterVersionName}}
	g.Expect(client.IgnoreNotFound(workload.Client.Delete(ctx, cv))).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(workload.Client.Get(ctx, client.ObjectKeyFromObject(cv), cv))
	}, timeout).Should(BeTrue())
}
