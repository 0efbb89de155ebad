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

package system

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/lab"
)

// OKD and multi-architecture releases resolve: the control plane reads the release its version
// and its machine configs' architectures name (controlplane/internal/controllers/release.go),
// the ClusterImageSet pins its digest, and ReleaseImageResolved carries its Kubernetes version.
// Nothing is installed (no hosts): resolution is what is checked. The specs run in a lab that
// exists (the disconnected flavor's, after its cluster is gone): a lab costs about as much CPU as
// an install. lab returns it once its BeforeAll ran.
func releaseResolutionSpecs(labOf func() *lab.Lab) {
	var l *lab.Lab
	BeforeAll(func() { l = labOf() })

	// create creates the objects of cluster o, in a namespace of its own, with the architecture
	// of its workers' OpenshiftAssistedConfigTemplate set to workerArch (unless empty).
	create := func(o lab.ClusterOptions, workerArch string) string {
		ns, err := l.Mgmt.CreateNamespace(ctx, o.Name)
		Expect(err).NotTo(HaveOccurred())
		reportOnFailure(l, ns)
		o.Namespace = ns
		objs, err := l.ClusterObjects(o)
		Expect(err).NotTo(HaveOccurred())
		for _, obj := range objs {
			if t, ok := obj.(*bootstrapv1.OpenshiftAssistedConfigTemplate); ok && workerArch != "" {
				t.Spec.Template.Spec.CpuArchitecture = workerArch
			}
			Expect(l.Mgmt.Client.Create(ctx, obj, client.FieldValidation(metav1.FieldValidationStrict))).To(Succeed())
		}
		return ns
	}
	// expectResolved waits for the control plane's ReleaseImageResolved to be True, its
	// ClusterImageSet to pin image, and its Machines to carry kubernetesVersion.
	expectResolved := func(ns, name, image, kubernetesVersion string) {
		Eventually(func(g Gomega) {
			cp := controlPlane(l, ns, name)(g)
			c := meta.FindStatusCondition(cp.Status.Conditions, controlplanev1.ReleaseImageResolvedCondition)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Reason).To(Equal(controlplanev1.ReleaseImageResolvedReason), c.Message)
			aci := &hiveextv1beta1.AgentClusterInstall{}
			g.Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, aci)).To(Succeed())
			cis := &hivev1.ClusterImageSet{}
			g.Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Name: aci.Spec.ImageSetRef.Name}, cis)).To(Succeed())
			g.Expect(cis.Spec.ReleaseImage).To(Equal(image))
			machines := &clusterv1.MachineList{}
			g.Expect(l.Mgmt.Client.List(ctx, machines, client.InNamespace(ns), client.MatchingLabels{clusterv1.MachineControlPlaneNameLabel: name})).To(Succeed())
			g.Expect(machines.Items).NotTo(BeEmpty())
			for _, m := range machines.Items {
				g.Expect(m.Spec.Version).To(Equal(kubernetesVersion), m.Name)
			}
		}, timeout, interval).Should(Succeed())
	}

	It("resolves an OKD version of an upstream-shaped control plane as upstream names it (<repository override>:<version>-<arch>)", func() {
		const version, kube = "4.18.0-okd-scos.1", "1.31.6"
		img, err := l.Releases.PushRelease(l.Releases.Repository()+":"+version+"-x86_64", kube)
		Expect(err).NotTo(HaveOccurred())
		digest, err := img.Digest()
		Expect(err).NotTo(HaveOccurred())
		ns := create(lab.ClusterOptions{Name: "okd", ControlPlanes: 3, Version: version, Upstream: true}, "")
		expectResolved(ns, "okd", l.Releases.Repository()+"@"+digest.String(), "v"+kube)
	})

	It("resolves the multi release, an image index pinned by its digest, for a cluster with an arm64 worker pool", func() {
		idx, err := l.Releases.PushMultiRelease(l.Releases.Repository()+":4.17.5-multi", lab.Releases["4.17.5"], "amd64", "arm64")
		Expect(err).NotTo(HaveOccurred())
		digest, err := idx.Digest()
		Expect(err).NotTo(HaveOccurred())
		ns := create(lab.ClusterOptions{Name: "multi", ControlPlanes: 3, Workers: 1, Version: "4.17.5"}, "arm64")
		expectResolved(ns, "multi", l.Releases.Repository()+"@"+digest.String(), "v"+lab.Releases["4.17.5"])
	})

	It("says which architecture a multi release lacks", func() {
		_, err := l.Releases.PushMultiRelease(l.Releases.Repository()+":4.17.3-multi", lab.Releases["4.17.3"], "amd64", "arm64")
		Expect(err).NotTo(HaveOccurred())
		ns := create(lab.ClusterOptions{Name: "mainframe", ControlPlanes: 3, Workers: 1, Version: "4.17.3"}, "s390x")
		Eventually(func(g Gomega) {
			cp := controlPlane(l, ns, "mainframe")(g)
			c := meta.FindStatusCondition(cp.Status.Conditions, controlplanev1.ReleaseImageResolvedCondition)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Reason).To(Equal(controlplanev1.ReleaseImageArchitectureNotInReleaseReason))
			g.Expect(c.Message).To(ContainSubstring("4.17.3-multi is not used: the multi-architecture release has no image for s390x (it serves amd64, arm64)"))
			a := meta.FindStatusCondition(cp.Status.Conditions, controlplanev1.AvailableCondition)
			g.Expect(a).NotTo(BeNil())
			g.Expect(a.Reason).To(Equal(controlplanev1.ReleaseImageArchitectureNotInReleaseReason))
		}, timeout, interval).Should(Succeed())
		Expect(apierrors.IsNotFound(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "mainframe"}, &hiveextv1beta1.AgentClusterInstall{}))).
			To(BeTrue(), "nothing installs a release that cannot run on every host")
		sets := &hivev1.ClusterImageSetList{}
		Expect(l.Mgmt.Client.List(ctx, sets, client.MatchingLabels{controlplanev1.ImageSetNamespaceLabel: ns,
			controlplanev1.ImageSetControlPlaneLabel: "mainframe"})).To(Succeed())
		Expect(sets.Items).To(BeEmpty(), "no ClusterImageSet")
	})
}
