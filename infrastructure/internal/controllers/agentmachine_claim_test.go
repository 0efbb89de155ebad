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
	"testing"
	"time"

	. "github.com/onsi/gomega"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	infrav1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/infrastructure/v1beta1"
)

// TestFreshClaimOfADeletedAgentIsNotWaitedFor: an Agent this process claimed moments ago is
// waited for while the cache shows it without the claim (the claim's watch event comes), and
// reported gone at once when the cache no longer shows it (no event would come: the reconcile
// requeued every claimRetryDelay until the claim's reservation expired).
func TestFreshClaimOfADeletedAgentIsNotWaitedFor(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	scheme := runtime.NewScheme()
	g.Expect(aiv1beta1.AddToScheme(scheme)).To(Succeed())
	g.Expect(infrav1.AddToScheme(scheme)).To(Succeed())
	agent := testAgent("a1")
	am := &infrav1.AgentMachine{ObjectMeta: metav1.ObjectMeta{Namespace: "agents", Name: "m1", UID: "am-1",
		Annotations: map[string]string{infrav1.ChosenAgentAnnotation: agent.Namespace + "/" + agent.Name}}}
	newReader := func(objs ...client.Object) client.Reader {
		return fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).WithIndex(&aiv1beta1.Agent{}, agentClaimIndex, indexAgentClaim).Build()
	}

	r := &AgentMachineReconciler{}
	r.reserved.reserve(client.ObjectKeyFromObject(agent), am.UID, true, time.Now())
	// The cache still shows the Agent unclaimed, the API server (the claim made) claimed.
	claimed := agent.DeepCopy()
	markClaimed(claimed, am)
	r.AgentReader, r.APIReader = newReader(agent), newReader(claimed)
	_, err := r.findClaimedAgent(ctx, am, true)
	g.Expect(err).To(MatchError(errCacheBehind))

	// The Agent was deleted: neither shows it.
	r.AgentReader, r.APIReader = newReader(), newReader()
	got, err := r.findClaimedAgent(ctx, am, true)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(BeNil())
	g.Expect(r.reserved.claimedBy(client.ObjectKeyFromObject(agent), am.UID, time.Now())).To(BeFalse(), "the claim's reservation is released")
}
