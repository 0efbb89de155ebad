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
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	infrav1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/infrastructure/v1beta1"
	capoascheme "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/scheme"
)

// TestIndexClusterDeployment: an AgentCluster is found by the ClusterDeployment it references (in
// its own namespace unless the reference names one), else by the two it may use: the one it
// creates (its name) and the one the control plane creates (its Cluster's name).
func TestIndexClusterDeployment(t *testing.T) {
	for name, tc := range map[string]struct {
		ac   *infrav1.AgentCluster
		want []string
	}{
		"a reference in its namespace": {
			ac:   &infrav1.AgentCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "ac"}, Spec: infrav1.AgentClusterSpec{ClusterDeploymentRef: &infrav1.ClusterDeploymentReference{Name: "cd"}}},
			want: []string{"ns/cd"},
		},
		"a reference to another namespace": {
			ac:   &infrav1.AgentCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "ac"}, Spec: infrav1.AgentClusterSpec{ClusterDeploymentRef: &infrav1.ClusterDeploymentReference{Namespace: "hcp", Name: "cd"}}},
			want: []string{"hcp/cd"},
		},
		"no reference, a Cluster of another name": {
			ac:   &infrav1.AgentCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "ac", Labels: map[string]string{clusterv1.ClusterNameLabel: "c1"}}},
			want: []string{"ns/ac", "ns/c1"},
		},
		"no reference, a Cluster of the same name": {
			ac:   &infrav1.AgentCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c1", Labels: map[string]string{clusterv1.ClusterNameLabel: "c1"}}},
			want: []string{"ns/c1"},
		},
		"no reference, no Cluster yet": {
			ac:   &infrav1.AgentCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "ac"}},
			want: []string{"ns/ac"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			NewWithT(t).Expect(indexClusterDeployment(tc.ac)).To(Equal(tc.want))
		})
	}
	NewWithT(t).Expect(indexClusterDeployment(&hivev1.ClusterDeployment{})).To(BeNil(), "not an AgentCluster")
}

// TestClusterDeploymentToAgentClusters: a ClusterDeployment's change reconciles the AgentClusters
// that use it, through the index, and no other.
func TestClusterDeploymentToAgentClusters(t *testing.T) {
	g := NewWithT(t)
	scheme, err := capoascheme.New(infrav1.AddToScheme)
	g.Expect(err).NotTo(HaveOccurred())
	objs := []client.Object{
		&infrav1.AgentCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c1"}},
		&infrav1.AgentCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "ac2", Labels: map[string]string{clusterv1.ClusterNameLabel: "c1"}}},
		&infrav1.AgentCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "other"}},
		&infrav1.AgentCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns2", Name: "c1"}},
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).
		WithIndex(&infrav1.AgentCluster{}, clusterDeploymentIndex, indexClusterDeployment).Build()
	r := &AgentClusterReconciler{Client: c}
	got := r.clusterDeploymentToAgentClusters(context.Background(), &hivev1.ClusterDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c1"}})
	g.Expect(got).To(ConsistOf(
		reconcile.Request{NamespacedName: client.ObjectKey{Namespace: "ns", Name: "c1"}},
		reconcile.Request{NamespacedName: client.ObjectKey{Namespace: "ns", Name: "ac2"}},
	))
}
