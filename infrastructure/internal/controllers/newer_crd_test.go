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
	"encoding/json"
	"testing"

	. "github.com/onsi/gomega"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/infrastructure/v1beta1"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/testenv"
)

// newerAgent reads the Agent key as unstructured, with every field the API server keeps.
func newerAgent(g Gomega, ctx context.Context, key client.ObjectKey) *unstructured.Unstructured {
	a := &unstructured.Unstructured{}
	a.SetGroupVersionKind(aiv1beta1.GroupVersion.WithKind("Agent"))
	g.Expect(env.Client.Get(ctx, key, a)).To(Succeed())
	return a
}

// TestNewerAgentCRDFieldsSurvive: on a hub with the newest assisted-service and Hive CRDs, whose
// Agent has spec fields the pinned Go types lack, claiming, unbinding and releasing an Agent keep
// them: every write of the provider is a patch of the fields it owns. A typed Update of the Agent
// erases them (seen before the writes became patches).
func TestNewerAgentCRDFieldsSurvive(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	f := newFixture(t, ctx, "newercrd", nil)
	restore, err := testenv.UseNewestCRDs(ctx, env.Client, f.ns)
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { g.Expect(restore(context.Background())).To(Succeed()) })
	startManager(t, isolated(f, 0))

	name := agentName(3)
	key := client.ObjectKey{Namespace: f.ns, Name: name}
	createAgent(t, ctx, f.ns, name, nil, 8)
	patch, err := json.Marshal(map[string]any{"spec": testenv.NewerAgentSpec(nil)})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(env.Client.Patch(ctx, &aiv1beta1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name}},
		client.RawPatch(types.MergePatchType, patch))).To(Succeed())
	g.Expect(testenv.MissingNewerAgentSpecFields(newerAgent(g, ctx, key))).To(BeEmpty(), "the API server keeps the newer fields")

	// Claim.
	f.machine(t, ctx, "m1", nil)
	g.Eventually(func(g Gomega) {
		g.Expect(getAM(g, ctx, f.ns, "m1").Spec.ProviderID).To(Equal("agent://" + name))
		a := newerAgent(g, ctx, key)
		g.Expect(a.GetLabels()).To(HaveKey(infrav1.AgentClaimedByLabel))
		cd, _, _ := unstructured.NestedString(a.Object, "spec", "clusterDeploymentName", "name")
		g.Expect(cd).NotTo(BeEmpty())
	}, timeout, interval).Should(Succeed())
	g.Expect(testenv.MissingNewerAgentSpecFields(newerAgent(g, ctx, key))).To(BeEmpty(), "after the claim")
	setAgentCondition(t, ctx, key, aiv1beta1.BoundCondition, corev1.ConditionTrue, aiv1beta1.BoundReason)

	// Unbind (the Machine is deleted; its pre-terminate hook unbinds the Agent).
	g.Expect(env.Client.Delete(ctx, &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "m1"}})).To(Succeed())
	g.Eventually(func(g Gomega) {
		a := newerAgent(g, ctx, key)
		g.Expect(a.GetAnnotations()).To(HaveKey(infrav1.UnbindRequestedAnnotation))
		_, found, _ := unstructured.NestedMap(a.Object, "spec", "clusterDeploymentName")
		g.Expect(found).To(BeFalse())
	}, timeout, interval).Should(Succeed())
	g.Expect(testenv.MissingNewerAgentSpecFields(newerAgent(g, ctx, key))).To(BeEmpty(), "after the unbind")

	// Release, once assisted-service reports the Agent unbound.
	setAgentCondition(t, ctx, key, aiv1beta1.BoundCondition, corev1.ConditionFalse, aiv1beta1.UnboundReason)
	g.Eventually(func(g Gomega) {
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "m1"}, &infrav1.AgentMachine{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue())
		g.Expect(newerAgent(g, ctx, key).GetLabels()).NotTo(HaveKey(infrav1.AgentClaimedByLabel))
	}, timeout, interval).Should(Succeed())
	g.Expect(testenv.MissingNewerAgentSpecFields(newerAgent(g, ctx, key))).To(BeEmpty(), "after the release")
}
