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
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/testenv"
)

// TestNewerFieldsOfNetworkEntriesSurviveANetworkChange: on a hub whose AgentClusterInstall CRD
// has a field in the elements of spec.networking.clusterNetwork that the pinned Go types lack, a
// change of that array (the Cluster goes dual stack before the install, with machine networks of
// both families) keeps the field in the
// element that did not change. A JSON merge patch from the typed object would send the array as
// the types encode it, without the field.
func TestNewerFieldsOfNetworkEntriesSurviveANetworkChange(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	restore, err := testenv.AddHypotheticalNetworkEntryField(ctx, mgmt.Client, "default")
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { g.Expect(restore(context.Background())).To(Succeed()) })

	f := newFixture(ctx, t, fixtureOptions{replicas: 1, pods: []string{"10.128.0.0/14"}, services: []string{"172.30.0.0/16"}})
	key := client.ObjectKey{Namespace: f.ns, Name: f.cluster.Name}
	clusterNetwork := func(g Gomega) []any {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(hiveextv1beta1.GroupVersion.WithKind("AgentClusterInstall"))
		g.Expect(mgmt.Client.Get(ctx, key, u)).To(Succeed())
		n, _, err := unstructured.NestedSlice(u.Object, "spec", "networking", "clusterNetwork")
		g.Expect(err).NotTo(HaveOccurred())
		return n
	}
	ipv4 := map[string]any{"cidr": "10.128.0.0/14", "hostPrefix": int64(23)}
	g.Eventually(clusterNetwork, timeout, interval).Should(Equal([]any{ipv4}))

	// What a newer assisted-service (or a user) writes into the element.
	withField := map[string]any{"cidr": "10.128.0.0/14", "hostPrefix": int64(23), testenv.HypotheticalElementField: "kept"}
	g.Expect(mgmt.Client.Patch(ctx, &hiveextv1beta1.AgentClusterInstall{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}, client.RawPatch(types.MergePatchType,
		fmt.Appendf(nil, `{"spec":{"networking":{"clusterNetwork":[{"cidr":"10.128.0.0/14","hostPrefix":23,%q:"kept"}]}}}`,
			testenv.HypotheticalElementField)))).To(Succeed())
	g.Expect(clusterNetwork(g)).To(Equal([]any{withField}))

	// The Cluster goes dual stack (before the install: the AgentClusterInstall follows).
	before := f.cluster.DeepCopy()
	f.cluster.Spec.ClusterNetwork.Pods.CIDRBlocks = []string{"10.128.0.0/14", "fd01::/48"}
	f.cluster.Spec.ClusterNetwork.Services.CIDRBlocks = []string{"172.30.0.0/16", "fd02::/112"}
	g.Expect(mgmt.Client.Patch(ctx, f.cluster, client.MergeFrom(before))).To(Succeed())
	// With the hosts' networks of both families, without which assisted-service refuses a
	// dual-stack cluster (and the control plane with it).
	g.Expect(mgmt.Client.Patch(ctx, f.getOACP(ctx, g), client.RawPatch(types.MergePatchType,
		[]byte(`{"spec":{"config":{"machineNetworks":["192.168.111.0/24","fd2e:6f44:5dd8:c956::/64"]}}}`)))).To(Succeed())

	// A change of the Cluster's spec does not start a reconcile (the watch passes its pause and
	// infrastructure only): one of the control plane does, until the change is seen.
	touch := 0
	g.Eventually(func(g Gomega) {
		touch++
		g.Expect(mgmt.Client.Patch(ctx, f.getOACP(ctx, g), client.RawPatch(types.MergePatchType,
			fmt.Appendf(nil, `{"metadata":{"annotations":{"test.capoa/touch":"%d"}}}`, touch)))).To(Succeed())
		n := clusterNetwork(g)
		g.Expect(n).To(HaveLen(2), "the AgentClusterInstall gets the IPv6 network")
		g.Expect(n[0]).To(Equal(withField), "the unchanged IPv4 entry keeps the newer field")
		g.Expect(n[1]).To(Equal(map[string]any{"cidr": "fd01::/48", "hostPrefix": int64(64)}))
	}, timeout, interval).Should(Succeed())
}
