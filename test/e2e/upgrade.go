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

package e2e

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	configv1 "github.com/openshift/api/config/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/patch"
)

// ClusterUpgradeSpecInput is the input of ClusterUpgradeSpec.
type ClusterUpgradeSpecInput struct {
	SpecInput
}

// ClusterUpgradeSpec changes the distributionVersion of an installed cluster's control plane:
// the control plane asks the workload cluster's cluster-version operator for the new release
// (ClusterVersion's desiredUpdate), and reports the new OpenShift and Kubernetes versions once
// the update completed.
func ClusterUpgradeSpec(ctx context.Context, inputGetter func() ClusterUpgradeSpecInput) {
	const specName = "cluster-upgrade"
	var (
		input ClusterUpgradeSpecInput
		spec  *SpecEnv
	)
	BeforeEach(func() {
		input = inputGetter()
		spec = SetupSpec(ctx, specName, input.SpecInput)
		DeferCleanup(func() { spec.TearDown(ctx) })
	})

	It("upgrades the distribution version through the workload cluster's ClusterVersion", func() {
		from := input.E2EConfig.MustGetVariable("OPENSHIFT_VERSION")
		to := input.E2EConfig.MustGetVariable("OPENSHIFT_VERSION_UPGRADE_TO")
		kubernetesTo := input.E2EConfig.MustGetVariable("KUBERNETES_VERSION_UPGRADE_TO")
		Expect(to).NotTo(Equal(from))
		Expect(spec.Management.AddHosts(ctx, spec.Namespace.Name, "host", 1)).To(Succeed())
		result := CreateClusterAndWait(ctx, *spec, ClusterSpec{Name: "upgrade", Flavor: "sno", ControlPlanes: 1,
			OpenShiftVersion: from})
		proxy := spec.Management.Proxy()
		Eventually(func(g Gomega) {
			cv := GetClusterVersion(ctx, g, proxy, result.Cluster)
			g.Expect(cv.Status.History).NotTo(BeEmpty())
			g.Expect(cv.Status.History[0].Version).To(Equal(from))
		}, input.E2EConfig.GetIntervals(specName, "wait-control-plane")...).Should(Succeed())

		By("Setting distributionVersion to " + to)
		cp := GetControlPlane(ctx, Default, proxy.GetClient(), result.Cluster)
		helper, err := patch.NewHelper(cp, proxy.GetClient())
		Expect(err).NotTo(HaveOccurred())
		cp.Spec.DistributionVersion = to
		Expect(helper.Patch(ctx, cp)).To(Succeed())

		By("Waiting for the cluster-version operator to complete the update, and the control plane to report it")
		Eventually(func(g Gomega) {
			cv := GetClusterVersion(ctx, g, proxy, result.Cluster)
			g.Expect(cv.Spec.DesiredUpdate).NotTo(BeNil())
			g.Expect(cv.Spec.DesiredUpdate.Version).To(Equal(to))
			g.Expect(cv.Status.History).NotTo(BeEmpty())
			g.Expect(cv.Status.History[0].Version).To(Equal(to))
			g.Expect(cv.Status.History[0].State).To(Equal(configv1.CompletedUpdate))
			cp := GetControlPlane(ctx, g, proxy.GetClient(), result.Cluster)
			g.Expect(cp.Status.DistributionVersion).To(Equal(to))
			g.Expect(cp.Status.Version).To(Equal(kubernetesTo))
			g.Expect(meta.IsStatusConditionTrue(cp.Status.Conditions, clusterv1.AvailableCondition)).To(BeTrue())
		}, input.E2EConfig.GetIntervals(specName, "wait-upgrade")...).Should(Succeed())
	})
}
