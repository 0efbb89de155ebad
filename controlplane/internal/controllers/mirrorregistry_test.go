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
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/testenv"
)

// TestMirrorRegistryRefOnANewerHub: on a hub with the newest assisted-service CRDs, whose
// AgentClusterInstall has spec.mirrorRegistryRef (assisted-service's per-cluster mirror
// registry), the image registry ConfigMap of spec.config.imageRegistryRef reaches the install
// through that field, in the write that creates the AgentClusterInstall, rather than as
// manifests; removing imageRegistryRef before the install starts removes the field.
// (TestImageRegistryReachesTheInstall covers older hubs.)
func TestMirrorRegistryRefOnANewerHub(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	restore, err := testenv.UseNewestCRDs(ctx, mgmt.Client, "default")
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { g.Expect(restore(context.Background())).To(Succeed()) })

	f := newFixture(ctx, t, fixtureOptions{replicas: 1, imageRegistry: "mirrors"})
	conf := "[[registry]]\nlocation = \"quay.io/openshift-release-dev/ocp-release\"\n[[registry.mirror]]\nlocation = \"mirror.example:5000/ocp\"\n"
	g.Expect(mgmt.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "mirrors"},
		Data: map[string]string{"registries.conf": conf}})).To(Succeed())

	mirrorRef := func(g Gomega) (map[string]any, bool) {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(hiveextv1beta1.GroupVersion.WithKind("AgentClusterInstall"))
		g.Expect(mgmt.Client.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: f.cluster.Name}, u)).To(Succeed())
		ref, found, err := unstructured.NestedMap(u.Object, "spec", "mirrorRegistryRef")
		g.Expect(err).NotTo(HaveOccurred())
		return ref, found
	}
	g.Eventually(func(g Gomega) {
		ref, found := mirrorRef(g)
		g.Expect(found).To(BeTrue())
		g.Expect(ref).To(Equal(map[string]any{"name": "mirrors", "namespace": f.ns}))
	}, timeout, interval).Should(Succeed())
	for _, r := range f.aci(ctx, g).Spec.ManifestsConfigMapRefs {
		g.Expect(r.Name).NotTo(Equal(f.cluster.Name+"-additional-registry-config"), "no manifests where assisted-service takes the mirrors itself")
	}
	g.Expect(apierrors.IsNotFound(mgmt.Client.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: f.cluster.Name + "-additional-registry-config"}, &corev1.ConfigMap{}))).To(BeTrue())

	oacp := f.getOACP(ctx, g)
	before := oacp.DeepCopy()
	oacp.Spec.Config.ImageRegistryRef = nil
	g.Expect(mgmt.Client.Patch(ctx, oacp, client.MergeFrom(before))).To(Succeed())
	g.Eventually(func(g Gomega) {
		_, found := mirrorRef(g)
		g.Expect(found).To(BeFalse(), "the reference goes with spec.config.imageRegistryRef")
	}, timeout, interval).Should(Succeed())
}
