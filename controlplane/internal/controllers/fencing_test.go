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
	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/testenv"
)

// TestTwoNodesWithFencing creates two-node OpenShift with fencing first on a hub whose
// assisted-service predates it (the Agent CRD generated from the pinned Go types has no
// fencingCredentialsSecretRef): the control plane says so on Available and in a Warning event,
// with what to do, and creates neither the AgentClusterInstall nor a Machine. On the newest hub
// the same control plane creates the AgentClusterInstall with two control-plane agents and no
// arbiter, and two control-plane Machines, each labelled for the bootstrap provider to give its
// host the fencing credentials of its BareMetalHost.
func TestTwoNodesWithFencing(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	f := newFixture(ctx, t, fixtureOptions{replicas: 2, fencing: true, version: "4.20.0", vips: []string{"192.168.111.5"}})

	g.Eventually(func(g Gomega) {
		c := conditions.Get(f.getOACP(ctx, g), controlplanev1.AvailableCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(controlplanev1.FencingNotSupportedReason))
		g.Expect(c.Message).To(ContainSubstring("does not support two-node OpenShift with fencing: its Agent CRD has no spec.fencingCredentialsSecretRef"))
		g.Expect(c.Message).To(ContainSubstring("upgrade the hub's assisted-service"))
	}, timeout, interval).Should(Succeed())
	f.expectNothingOnAnOlderHub(ctx, g, "does not support two-node OpenShift with fencing")

	restore, err := testenv.UseNewestCRDs(ctx, mgmt.Client, f.ns)
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { g.Expect(restore(context.Background())).To(Succeed()) })

	g.Eventually(func(g Gomega) {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(hiveextv1beta1.GroupVersion.WithKind("AgentClusterInstall"))
		g.Expect(mgmt.Client.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: f.cluster.Name}, u)).To(Succeed())
		pr, _, _ := unstructured.NestedMap(u.Object, "spec", "provisionRequirements")
		g.Expect(pr).To(Equal(map[string]any{"controlPlaneAgents": int64(2)}), "assisted-service knows TNF from two control-plane hosts with credentials and no arbiter")
	}, timeout, interval).Should(Succeed())
	g.Eventually(func(g Gomega) {
		ms := f.machines(ctx, g)
		g.Expect(ms).To(HaveLen(2))
		for _, m := range ms {
			g.Expect(m.Labels).To(HaveKey(controlplanev1.FencingMachineLabel))
			g.Expect(m.Labels).NotTo(HaveKey(controlplanev1.ArbiterMachineLabel))
		}
	}, timeout, interval).Should(Succeed())
	g.Eventually(func(g Gomega) {
		c := conditions.Get(f.getOACP(ctx, g), controlplanev1.AvailableCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).NotTo(Equal(controlplanev1.FencingNotSupportedReason))
	}, timeout, interval).Should(Succeed())
}
