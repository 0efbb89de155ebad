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

	capm3v1beta2 "github.com/metal3-io/cluster-api-provider-metal3/api/v1beta2"
	. "github.com/onsi/gomega"
	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/testenv"
)

// TestTwoNodesWithArbiter creates two-node OpenShift with an arbiter first on a hub whose
// assisted-service predates arbiter clusters (the AgentClusterInstall CRD generated from the
// pinned Go types has no arbiterAgents): the control plane says so, with what to do, and creates
// neither the AgentClusterInstall nor a Machine. Then the hub is upgraded to the newest
// assisted-service and Hive CRDs (testenv.UseNewestCRDs), whose AgentClusterInstall has the
// field: the same control plane creates the AgentClusterInstall asking for two control-plane
// agents and one arbiter, and three control-plane Machines, one of them the arbiter, cloned from
// its own template. The hub is older again after the test, for the tests that follow.
func TestTwoNodesWithArbiter(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	f := newFixture(ctx, t, fixtureOptions{replicas: 2, arbiter: true, vips: []string{"192.168.111.5"}})

	g.Eventually(func(g Gomega) {
		o := f.getOACP(ctx, g)
		c := conditions.Get(o, controlplanev1.AvailableCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(controlplanev1.ArbiterNotSupportedReason))
		g.Expect(c.Message).To(ContainSubstring("does not support two-node OpenShift with an arbiter"))
		g.Expect(c.Message).To(ContainSubstring("upgrade the hub's assisted-service"))
	}, timeout, interval).Should(Succeed())
	f.expectNothingOnAnOlderHub(ctx, g, "does not support two-node OpenShift with an arbiter")

	// The hub's assisted-service is upgraded.
	restore, err := testenv.UseNewestCRDs(ctx, mgmt.Client, f.ns)
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { g.Expect(restore(context.Background())).To(Succeed()) })

	g.Eventually(func(g Gomega) {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(hiveextv1beta1.GroupVersion.WithKind("AgentClusterInstall"))
		g.Expect(mgmt.Client.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: f.cluster.Name}, u)).To(Succeed())
		pr, _, _ := unstructured.NestedMap(u.Object, "spec", "provisionRequirements")
		g.Expect(pr).To(Equal(map[string]any{"controlPlaneAgents": int64(2), "arbiterAgents": int64(1)}))
	}, timeout, interval).Should(Succeed())
	aci := f.aci(ctx, g)
	g.Expect(aci.Spec.PlatformType).To(Equal(hiveextv1beta1.BareMetalPlatformType))
	g.Expect(metav1.IsControlledBy(aci, f.oacp)).To(BeTrue())

	var arbiters, others []clusterv1.Machine
	g.Eventually(func(g Gomega) {
		arbiters, others = nil, nil
		for _, m := range f.machines(ctx, g) {
			if _, ok := m.Labels[controlplanev1.ArbiterMachineLabel]; ok {
				arbiters = append(arbiters, m)
			} else {
				others = append(others, m)
			}
		}
		g.Expect(arbiters).To(HaveLen(1))
		g.Expect(others).To(HaveLen(2))
	}, timeout, interval).Should(Succeed())
	a := arbiters[0]
	g.Expect(a.Labels).To(HaveKeyWithValue(clusterv1.MachineControlPlaneLabel, ""), "the arbiter is a control-plane Machine")
	g.Expect(a.Labels).To(HaveKeyWithValue("size", "small"), "from spec.arbiter.machineTemplate.metadata")
	m3m := &capm3v1beta2.Metal3Machine{}
	g.Expect(mgmt.Client.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: a.Spec.InfrastructureRef.Name}, m3m)).To(Succeed())
	g.Expect(m3m.Annotations).To(HaveKeyWithValue(clusterv1.TemplateClonedFromNameAnnotation, f.cluster.Name+"-arbiter"))
	for _, m := range others {
		g.Expect(m.Labels).NotTo(HaveKey("size"))
	}
	tmpl := &capm3v1beta2.Metal3MachineTemplate{}
	g.Expect(mgmt.Client.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: f.cluster.Name + "-arbiter"}, tmpl)).To(Succeed())
	g.Expect(tmpl.OwnerReferences).To(ContainElement(metav1.OwnerReference{
		APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: f.cluster.Name, UID: f.cluster.UID}),
		"the Cluster owns the arbiter's template too")

	// The status counts pair with spec.replicas: the arbiter is left out, and out of the selector.
	g.Eventually(func(g Gomega) {
		o := f.getOACP(ctx, g)
		g.Expect(o.Status.Replicas).To(Equal(ptr.To[int32](2)))
		g.Expect(o.Status.Selector).To(ContainSubstring("!" + controlplanev1.ArbiterMachineLabel))
		c := conditions.Get(o, controlplanev1.ScalingUpCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse), "three Machines are what the spec asks for")
	}, timeout, interval).Should(Succeed())
}
