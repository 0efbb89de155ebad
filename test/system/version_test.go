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

package system

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	configv1 "github.com/openshift/api/config/v1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/lab"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/release"
)

var _ = Describe("The version of a control plane", func() {
	It("cannot change while the cluster installs, and is the one the cluster's ClusterVersion says runs", func() {
		l, ns := startLabWithHosts("version", "ver", 1)
		reportOnFailure(l, ns)
		const name = "ver"
		Expect(l.CreateCluster(ctx, lab.ClusterOptions{Namespace: ns, Name: name, ControlPlanes: 1, Version: "4.17.3"})).To(Succeed())

		// As soon as the controller reports the installation, ask for another version and for
		// more control-plane nodes: both are refused.
		Eventually(func(g Gomega) {
			cp := controlPlane(l, ns, name)(g)
			c := meta.FindStatusCondition(cp.Status.Conditions, controlplanev1.AvailableCondition)
			g.Expect(c).NotTo(BeNil())
			g.Expect(string(c.Status)).To(Equal("False"))
		}, timeout, 100*time.Millisecond).Should(Succeed())
		// The controller writes the object meanwhile: an update of a stale copy is a conflict
		// (checked before admission), so it is read again until the webhook answers.
		Eventually(func(g Gomega) {
			cp := controlPlane(l, ns, name)(g)
			cp.Spec.DistributionVersion = "4.17.5"
			err := l.Mgmt.Client.Update(ctx, cp)
			g.Expect(apierrors.IsConflict(err)).To(BeFalse(), "stale copy: %v", err)
			g.Expect(err).To(MatchError(And(
				ContainSubstring("changing distributionVersion from 4.17.3 to 4.17.5 is not allowed while the cluster is being installed"),
				ContainSubstring("the change will be carried out as an upgrade"))))
		}, timeout, interval).Should(Succeed())
		cp := controlPlane(l, ns, name)(Default)
		scale := &autoscalingv1.Scale{Spec: autoscalingv1.ScaleSpec{Replicas: 3}}
		Expect(l.Mgmt.Client.SubResource("scale").Update(ctx, cp, client.WithSubResourceBody(scale))).To(
			MatchError(ContainSubstring("single-node OpenShift cannot be grown to a highly available control plane")))

		expectAvailable(l, ns, name, 1, 1)
		// status.distributionVersion is what the workload cluster's ClusterVersion says runs.
		Eventually(func(g Gomega) {
			cv := &configv1.ClusterVersion{}
			g.Expect(l.Workload.Client.Get(ctx, types.NamespacedName{Name: "version"}, cv)).To(Succeed())
			g.Expect(cv.Status.History).NotTo(BeEmpty())
			g.Expect(cv.Status.History[0].State).To(Equal(configv1.CompletedUpdate))
			cp := controlPlane(l, ns, name)(g)
			g.Expect(cp.Spec.DistributionVersion).To(Equal("4.17.3"))
			g.Expect(cp.Status.DistributionVersion).To(Equal(cv.Status.History[0].Version))
			g.Expect(cp.Status.DistributionVersion).To(Equal("4.17.3"))
			g.Expect(cp.Status.Version).To(Equal("v1.30.4"))
		}, timeout, interval).Should(Succeed())
		sets := &hivev1.ClusterImageSetList{}
		Expect(l.Mgmt.Client.List(ctx, sets, client.MatchingLabels{controlplanev1.ImageSetNamespaceLabel: ns,
			controlplanev1.ImageSetControlPlaneLabel: name})).To(Succeed())
		Expect(sets.Items).To(HaveLen(1))
		// Pinned by digest: the payload says which version it is.
		installed, err := release.ReadPayload(ctx, sets.Items[0].Spec.ReleaseImage, l.Releases.RemoteOptions()...)
		Expect(err).NotTo(HaveOccurred())
		Expect(installed.Version).To(Equal("4.17.3"), "installed with the version it started with")
		cp = controlPlane(l, ns, name)(Default)

		// Installed: the same change is an upgrade.
		updateObject(l.Mgmt.Client, cp, func() error {
			cp.Spec.DistributionVersion = "4.17.5"
			return nil
		})
		Eventually(func(g Gomega) {
			cv := &configv1.ClusterVersion{}
			g.Expect(l.Workload.Client.Get(ctx, types.NamespacedName{Name: "version"}, cv)).To(Succeed())
			g.Expect(cv.Status.History[0].Version).To(Equal("4.17.5"))
			g.Expect(cv.Status.History[0].State).To(Equal(configv1.CompletedUpdate))
			cp := controlPlane(l, ns, name)(g)
			g.Expect(cp.Status.DistributionVersion).To(Equal("4.17.5"))
			g.Expect(cp.Status.Version).To(Equal("v1.30.6"))
		}, timeout, interval).Should(Succeed())
	})
})
