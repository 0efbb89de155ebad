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

	. "github.com/onsi/gomega"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	infrav1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/infrastructure/v1beta1"
	capoascheme "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/scheme"
)

// TestSetFailureDomains: the AgentCluster offers each failure domain its Agents are labelled with,
// once and sorted, as control-plane domains; none when no Agent has the label; the Agents its
// Machines may take: those of its namespace, of --agent-namespace when it is set, or of every
// namespace with --shared-agent-pool; nothing is read without an Agent reader.
func TestSetFailureDomains(t *testing.T) {
	scheme, err := capoascheme.New(infrav1.AddToScheme)
	if err != nil {
		t.Fatal(err)
	}
	agent := func(ns, name, domain string) client.Object {
		a := &aiv1beta1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		if domain != "" {
			a.Labels = map[string]string{infrav1.FailureDomainLabel: domain}
		}
		return a
	}
	domains := func(names ...string) []clusterv1.FailureDomain {
		var out []clusterv1.FailureDomain
		for _, n := range names {
			out = append(out, clusterv1.FailureDomain{Name: n, ControlPlane: ptr.To(true)})
		}
		return out
	}
	pool := []client.Object{agent("a", "a1", "rack-2"), agent("a", "a2", "rack-1"), agent("a", "a3", "rack-2"),
		agent("a", "a4", ""), agent("b", "b1", "rack-3")}
	for name, tc := range map[string]struct {
		agents    []client.Object
		namespace string
		shared    bool
		noReader  bool
		want      []clusterv1.FailureDomain
	}{
		"every labelled Agent of its namespace, once, sorted": {agents: pool, want: domains("rack-1", "rack-2")},
		"every labelled Agent with --shared-agent-pool":       {agents: pool, shared: true, want: domains("rack-1", "rack-2", "rack-3")},
		"the Agents of --agent-namespace":                     {agents: pool, namespace: "b", want: domains("rack-3")},
		"no labelled Agent":                                   {agents: []client.Object{agent("a", "a4", "")}},
		"no Agent reader":                                     {agents: pool, noReader: true, want: domains("stale")},
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			r := &AgentClusterReconciler{AgentNamespace: tc.namespace, SharedAgentPool: tc.shared}
			if !tc.noReader {
				r.AgentReader = fake.NewClientBuilder().WithScheme(scheme).WithObjects(tc.agents...).Build()
			}
			ac := &infrav1.AgentCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "c1"},
				Status: infrav1.AgentClusterStatus{FailureDomains: domains("stale")}}
			g.Expect(r.setFailureDomains(context.Background(), ac)).To(Succeed())
			g.Expect(ac.Status.FailureDomains).To(Equal(tc.want))
		})
	}
}
