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
	"testing"

	. "github.com/onsi/gomega"
	configv1 "github.com/openshift/api/config/v1"
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
	g.Expect(cvo.EnsureClusterVersion(ctx, workload.Client, cvo.Release("4.14.3", ""))).To(Succeed())

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
	g.Expect(cv.Status.Desired).To(Equal(configv1.Release{Version: "4.14.5", Image: cvo.ReleaseRepository + ":4.14.5-x86_64"}))
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
