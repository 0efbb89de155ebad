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

package e2e

import (
	"context"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/test/framework"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ClusterDeletionSpecInput is the input of ClusterDeletionSpec.
type ClusterDeletionSpecInput struct {
	SpecInput
}

// ClusterDeletionSpec deletes an installed cluster and checks that nothing is left behind: no
// Cluster API, provider, assisted-service or Hive object of the cluster in its namespace and no
// Secret of the cluster but the user's pull secret, except what Kubernetes' garbage collector
// removes (see expectCollectable), and every BareMetalHost deprovisioned and free for another
// cluster, with no Agent still bound to the deleted cluster.
func ClusterDeletionSpec(ctx context.Context, inputGetter func() ClusterDeletionSpecInput) {
	const specName = "cluster-deletion"
	var (
		input ClusterDeletionSpecInput
		spec  *SpecEnv
	)
	BeforeEach(func() {
		input = inputGetter()
		spec = SetupSpec(ctx, specName, input.SpecInput)
		DeferCleanup(func() { spec.TearDown(ctx) })
	})

	It("leaves nothing behind when the Cluster is deleted", func() {
		Expect(spec.Management.AddHosts(ctx, spec.Namespace.Name, "host", 4)).To(Succeed())
		result := CreateClusterAndWait(ctx, *spec, ClusterSpec{Name: "deletion", ControlPlanes: 3, Workers: 1,
			OpenShiftVersion: input.E2EConfig.MustGetVariable("OPENSHIFT_VERSION")})
		proxy := spec.Management.Proxy()
		c := proxy.GetClient()

		By("Deleting the Cluster and waiting for it to be gone")
		// framework.DeleteClusterAndWait would do, but its argument check (BeEmpty on a
		// *Cluster) fails with the Gomega this module uses.
		framework.DeleteCluster(ctx, framework.DeleteClusterInput{Deleter: c, Cluster: result.Cluster})
		framework.WaitForClusterDeleted(ctx, framework.WaitForClusterDeletedInput{
			ClusterProxy: proxy, Cluster: result.Cluster, ClusterctlConfigPath: spec.ClusterctlConfigPath,
			ArtifactFolder: spec.ArtifactFolder,
		}, input.E2EConfig.GetIntervals(specName, "wait-delete-cluster")...)

		By("Checking that no object of the cluster is left, but for what the garbage collector removes")
		Eventually(func(g Gomega) {
			left := framework.GetCAPIResources(ctx, framework.GetCAPIResourcesInput{
				Lister: c, Namespace: spec.Namespace.Name, IncludeTypes: dumpedTypes,
			})
			for _, o := range left {
				if o.GetKind() == "BareMetalHost" || o.GetKind() == "Agent" {
					continue // The hosts belong to the lab's administrator; checked below.
				}
				expectCollectable(ctx, g, c, o)
			}
			secrets := &corev1.SecretList{}
			g.Expect(c.List(ctx, secrets, client.InNamespace(spec.Namespace.Name),
				client.MatchingLabels{clusterv1.ClusterNameLabel: result.Cluster.Name})).To(Succeed())
			for i := range secrets.Items {
				if s := &secrets.Items[i]; s.Name != result.Cluster.Name+"-pull-secret" {
					expectCollectable(ctx, g, c, s)
				}
			}
			agents := &aiv1beta1.AgentList{}
			g.Expect(c.List(ctx, agents, client.InNamespace(spec.Namespace.Name))).To(Succeed())
			for _, a := range agents.Items {
				g.Expect(a.Spec.ClusterDeploymentName).To(BeNil(), "Agent %s still bound to a cluster", a.Name)
			}
		}, input.E2EConfig.GetIntervals(specName, "wait-delete-cluster")...).Should(Succeed())

		By("Checking that every host is deprovisioned and free")
		Eventually(func(g Gomega) {
			hosts := &bmov1alpha1.BareMetalHostList{}
			g.Expect(c.List(ctx, hosts, client.InNamespace(spec.Namespace.Name))).To(Succeed())
			g.Expect(hosts.Items).To(HaveLen(4))
			for _, h := range hosts.Items {
				g.Expect(h.Spec.ConsumerRef).To(BeNil(), "BareMetalHost %s still consumed", h.Name)
				g.Expect(h.Spec.Image).To(BeNil(), "BareMetalHost %s still has an image", h.Name)
				g.Expect(h.Status.Provisioning.State).To(BeElementOf(bmov1alpha1.StateAvailable, bmov1alpha1.StateReady),
					"BareMetalHost %s", h.Name)
			}
		}, input.E2EConfig.GetIntervals(specName, "wait-hosts-released")...).Should(Succeed())
	})
}

// expectCollectable fails unless Kubernetes' garbage collector removes o: it has owners, and none
// of them exists any more. Objects a controller deletes itself must be gone; what only has an
// owner reference (templates the Cluster owns, its kubeconfig Secret) is removed by the garbage
// collector of kube-controller-manager, which the lab's API server runs without: on kind those
// objects are gone by now, in the lab they must at least not be orphans that stay forever.
func expectCollectable(ctx context.Context, g Gomega, c client.Client, o client.Object) {
	kind := o.GetObjectKind().GroupVersionKind().Kind
	g.Expect(o.GetOwnerReferences()).NotTo(BeEmpty(), "%s %s is left behind with no owner", kind, o.GetName())
	for _, ref := range o.GetOwnerReferences() {
		owner := &unstructured.Unstructured{}
		owner.SetAPIVersion(ref.APIVersion)
		owner.SetKind(ref.Kind)
		err := c.Get(ctx, client.ObjectKey{Namespace: o.GetNamespace(), Name: ref.Name}, owner)
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%s %s is left behind: its owner %s %s still exists (%v)",
			kind, o.GetName(), ref.Kind, ref.Name, err)
	}
}
