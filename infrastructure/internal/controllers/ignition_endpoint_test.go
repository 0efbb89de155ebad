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
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/infrastructure/v1beta1"
)

// TestIgnitionEndpointOfAControlPlanesClusterIsRefused: an AgentCluster whose ClusterDeployment a
// control plane provider created cannot hand that cluster an ignition endpoint (the control plane
// writes its AgentClusterInstall), so spec.ignitionEndpoint would do nothing: the AgentCluster says
// so in ClusterDeploymentReady with a Warning event, is not provisioned, and once the field is
// removed it proceeds.
func TestIgnitionEndpointOfAControlPlanesClusterIsRefused(t *testing.T) {
	t.Parallel() // see suite_test.go
	g := NewWithT(t)
	ctx := context.Background()
	f := newFixtureWith(t, ctx, "ignition", nil, func(ac *infrav1.AgentCluster) {
		ac.Spec.IgnitionEndpoint = &infrav1.IgnitionEndpoint{Url: "https://ignition.example.com/config/worker"}
	})
	startManager(t, isolated(f, 0))
	key := client.ObjectKey{Namespace: f.ns, Name: f.cluster}

	g.Eventually(func(g Gomega) {
		ac := &infrav1.AgentCluster{}
		g.Expect(env.Client.Get(ctx, key, ac)).To(Succeed())
		c := conditions.Get(ac, infrav1.ClusterDeploymentReadyCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(infrav1.IgnitionEndpointNotUsedReason))
		g.Expect(c.Message).To(ContainSubstring("spec.ignitionEndpoint is not used: ClusterDeployment " + f.ns + "/" + f.cd +
			" was not created by this AgentCluster"))
		g.Expect(c.Message).To(ContainSubstring("remove spec.ignitionEndpoint"))
		g.Expect(ptr.Deref(ac.Status.Initialization.Provisioned, false)).To(BeFalse())

		list := &eventsv1.EventList{}
		g.Expect(env.Client.List(ctx, list, client.InNamespace(f.ns))).To(Succeed())
		found := false
		for _, e := range list.Items {
			found = found || (e.Reason == infrav1.IgnitionEndpointNotUsedReason && e.Type == corev1.EventTypeWarning && e.Regarding.Kind == "AgentCluster")
		}
		g.Expect(found).To(BeTrue(), "a Warning event on the AgentCluster")
	}, timeout, interval).Should(Succeed())

	g.Eventually(func() error {
		ac := &infrav1.AgentCluster{}
		if err := env.Client.Get(ctx, key, ac); err != nil {
			return err
		}
		ac.Spec.IgnitionEndpoint = nil
		return env.Client.Update(ctx, ac)
	}, timeout, interval).Should(Succeed())
	g.Eventually(func(g Gomega) {
		ac := &infrav1.AgentCluster{}
		g.Expect(env.Client.Get(ctx, key, ac)).To(Succeed())
		g.Expect(ptr.Deref(ac.Status.Initialization.Provisioned, false)).To(BeTrue())
		g.Expect(conditions.IsTrue(ac, infrav1.ClusterDeploymentReadyCondition)).To(BeTrue())
	}, timeout, interval).Should(Succeed())
}
