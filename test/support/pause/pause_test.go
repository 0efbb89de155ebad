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

package pause

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// TestSetCluster: the field changes both ways, whatever else was written to the Cluster since the
// caller last read it, and nothing else changes; a Cluster that does not exist is an error.
func TestSetCluster(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	scheme := runtime.NewScheme()
	g.Expect(clusterv1.AddToScheme(scheme)).To(Succeed())
	c := fake.NewClientBuilder().WithScheme(scheme).Build()
	cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c1", Labels: map[string]string{"a": "b"}}}
	g.Expect(c.Create(ctx, cluster)).To(Succeed())
	key := client.ObjectKeyFromObject(cluster)
	stale := cluster.DeepCopy()

	// A controller writes the Cluster after the test read it: an update from stale would conflict.
	cluster.Annotations = map[string]string{"written": "by a controller"}
	g.Expect(c.Update(ctx, cluster)).To(Succeed())
	stale.Spec.Paused = ptr.To(true)
	g.Expect(apierrors.IsConflict(c.Update(ctx, stale))).To(BeTrue())

	for _, paused := range []bool{true, false} {
		g.Expect(SetCluster(ctx, c, key, paused)).To(Succeed())
		got := &clusterv1.Cluster{}
		g.Expect(c.Get(ctx, key, got)).To(Succeed())
		g.Expect(got.Spec.Paused).To(Equal(ptr.To(paused)))
		g.Expect(got.Labels).To(Equal(map[string]string{"a": "b"}))
		g.Expect(got.Annotations).To(Equal(map[string]string{"written": "by a controller"}))
	}
	err := SetCluster(ctx, c, client.ObjectKey{Namespace: "ns", Name: "missing"}, true)
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "got %v", err)
}
