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
	"context"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	configv1 "github.com/openshift/api/config/v1"
	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/lab"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/cvo"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/release"
)

// The disconnected flavor (templates/cluster-template-disconnected.yaml): the control plane names
// OpenShift's release on quay.io, which the lab cannot reach; its image registry ConfigMap mirrors
// it to the lab's registry, served over HTTPS by a CA of its own and requiring the credentials of
// the cluster's pull secret.
var _ = Describe("The disconnected flavor: OpenShift through an authenticated TLS mirror", Ordered, func() {
	var (
		l  *lab.Lab
		ns string
	)
	const name = "disconnected"
	o := lab.ClusterOptions{Name: name, ControlPlanes: 3, Workers: 0, Version: "4.17.3", Disconnected: true}

	BeforeAll(func() {
		l, ns = startLabWithHosts("disconnected", "host", 3)
		o.Namespace = ns
	})
	BeforeEach(func() { reportOnFailure(l, ns) })

	It("installs nothing while the pull secret has no credentials for the mirror, saying so, and installs once it has them", func() {
		objs, err := l.ClusterObjects(o)
		Expect(err).NotTo(HaveOccurred())
		var pullSecret *corev1.Secret
		for _, obj := range objs {
			if s, ok := obj.(*corev1.Secret); ok {
				pullSecret = s
				// A pull secret made for quay.io only, before the mirror was set up.
				s.Data = map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{"quay.io":{"auth":"dXNlcjpwYXNz"}}}`)}
			}
			Expect(l.Mgmt.Client.Create(ctx, obj, client.FieldValidation(metav1.FieldValidationStrict))).To(Succeed())
		}
		Expect(pullSecret).NotTo(BeNil())

		Eventually(func(g Gomega) {
			cp := controlPlane(l, ns, name)(g)
			c := meta.FindStatusCondition(cp.Status.Conditions, controlplanev1.ReleaseImageResolvedCondition)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Reason).To(Equal(controlplanev1.ReleaseImageNotResolvedReason))
			g.Expect(c.Message).To(ContainSubstring("registry " + l.Releases.Host + " requires credentials and the pull secret has none for it"))
			a := meta.FindStatusCondition(cp.Status.Conditions, controlplanev1.AvailableCondition)
			g.Expect(a).NotTo(BeNil())
			g.Expect(a.Reason).To(Equal(controlplanev1.ReleaseImageNotResolvedReason))
			g.Expect(a.Message).To(ContainSubstring("installs its release by digest"))
		}, timeout, interval).Should(Succeed())
		aci := &hiveextv1beta1.AgentClusterInstall{}
		Expect(apierrors.IsNotFound(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, aci))).To(BeTrue(), "nothing installs without the release's digest")
		Expect(eventReasons(l, ns)).To(ContainElement(controlplanev1.ReleaseImageNotResolvedReason), "a Warning event says it too")

		By("adding the mirror's credentials to the pull secret")
		patched := pullSecret.DeepCopy()
		patched.Data = map[string][]byte{corev1.DockerConfigJsonKey: l.PullSecret()}
		Expect(l.Mgmt.Client.Patch(ctx, patched, client.MergeFrom(pullSecret))).To(Succeed())
		expectAvailable(l, ns, name, 3, 3)
	})

	It("installs OpenShift's release pinned by digest, with the cluster's mirrors, and the version its payload names", func() {
		cp := controlPlane(l, ns, name)(Default)
		Expect(conditionTrue(cp.Status.Conditions, controlplanev1.ReleaseImageResolvedCondition)).To(BeTrue())
		mirrored, err := release.ReadPayload(ctx, l.Releases.Repository()+":4.17.3-x86_64", l.Releases.RemoteOptions()...)
		Expect(err).NotTo(HaveOccurred())
		// status.version follows the workload's ClusterVersion, which reports the completed
		// installation after the control plane is Available: read once, it was still empty.
		Eventually(func(g Gomega) {
			g.Expect(controlPlane(l, ns, name)(g).Status.Version).To(Equal(mirrored.KubernetesVersion))
		}, timeout, interval).Should(Succeed())

		cis := &hivev1.ClusterImageSet{}
		aci := &hiveextv1beta1.AgentClusterInstall{}
		Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, aci)).To(Succeed())
		Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Name: aci.Spec.ImageSetRef.Name}, cis)).To(Succeed())
		Expect(cis.Spec.ReleaseImage).To(MatchRegexp(`^quay\.io/openshift-release-dev/ocp-release@sha256:[0-9a-f]{64}$`),
			"the source repository, pinned by digest: the cluster's ImageDigestMirrorSet applies to it")
		payload, err := release.ReadPayload(ctx, l.Releases.Repository()+"@"+cis.Spec.ReleaseImage[len(lab.OpenShiftReleaseRepository)+1:], l.Releases.RemoteOptions()...)
		Expect(err).NotTo(HaveOccurred(), "the digest is the mirror's")
		Expect(payload.Version).To(Equal("4.17.3"))

		refs := sets.New[string]()
		for _, r := range aci.Spec.ManifestsConfigMapRefs {
			refs.Insert(r.Name)
		}
		Expect(refs.Has(name+"-additional-registry-config")).To(BeTrue(), "manifests %v", sets.List(refs))
		manifests := &corev1.ConfigMap{}
		Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name + "-additional-registry-config"}, manifests)).To(Succeed())
		Expect(manifests.Data["image-digest-mirror-set.json"]).To(ContainSubstring(l.Releases.Host + "/openshift-release-dev/ocp-release"))
		Expect(manifests.Data["additional-registry-certificate.json"]).To(ContainSubstring("BEGIN CERTIFICATE"))

		// The installed cluster runs the version its payload names, as the cluster-version operator reads it.
		Eventually(func(g Gomega) {
			cv := &configv1.ClusterVersion{}
			g.Expect(l.Workload.Client.Get(context.Background(), client.ObjectKey{Name: "version"}, cv)).To(Succeed())
			g.Expect(cv.Status.History).NotTo(BeEmpty())
			g.Expect(cv.Status.History[0].Version).To(Equal("4.17.3"))
			g.Expect(cv.Status.History[0].Image).To(Equal(cis.Spec.ReleaseImage))
		}, timeout, interval).Should(Succeed())
		machines := &clusterv1.MachineList{}
		Expect(l.Mgmt.Client.List(ctx, machines, client.InNamespace(ns))).To(Succeed())
		for _, m := range machines.Items {
			Expect(m.Spec.Version).To(Equal(mirrored.KubernetesVersion), "Machine %s", m.Name)
		}
	})

	It("upgrades by digest once the cluster holds the release's signature, saying what is missing until then", func() {
		cp := controlPlane(l, ns, name)(Default)
		patched := cp.DeepCopy()
		patched.Spec.DistributionVersion = "4.18.0"
		Expect(l.Mgmt.Client.Patch(ctx, patched, client.MergeFrom(cp))).To(Succeed())

		// No update service answers a disconnected cluster: it is asked for the release by digest,
		// which the cluster-version operator verifies against the signatures the cluster holds.
		var digest string
		Eventually(func(g Gomega) {
			cv := &configv1.ClusterVersion{}
			g.Expect(l.Workload.Client.Get(ctx, client.ObjectKey{Name: "version"}, cv)).To(Succeed())
			g.Expect(cv.Status.AvailableUpdates).To(BeEmpty())
			g.Expect(cv.Spec.DesiredUpdate).NotTo(BeNil())
			g.Expect(cv.Spec.DesiredUpdate.Version).To(Equal("4.18.0"))
			g.Expect(cv.Spec.DesiredUpdate.Image).To(HavePrefix(lab.OpenShiftReleaseRepository + "@sha256:"))
			g.Expect(cv.Spec.DesiredUpdate.Force).To(BeFalse())
			digest = cv.Spec.DesiredUpdate.Image[len(lab.OpenShiftReleaseRepository)+1:]
			c := meta.FindStatusCondition(controlPlane(l, ns, name)(g).Status.Conditions, controlplanev1.UpgradingCondition)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Reason).To(Equal(controlplanev1.UpgradeNotAcceptedReason))
			g.Expect(c.Message).To(ContainSubstring("The update cannot be verified"))
			g.Expect(c.Message).To(ContainSubstring("apply the release's signature ConfigMap"))
		}, timeout, interval).Should(Succeed())
		Expect(eventReasons(l, ns)).To(ContainElement(controlplanev1.UpgradeNotAcceptedReason))

		By("applying the release's signature ConfigMap to the cluster, as oc-mirror writes it")
		Expect(client.IgnoreAlreadyExists(l.Workload.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: cvo.SignatureNamespace}}))).To(Succeed())
		Expect(l.Workload.Client.Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: cvo.SignatureNamespace, Name: strings.Replace(digest, ":", "-", 1),
				Labels: map[string]string{cvo.SignatureLabel: ""}},
			BinaryData: map[string][]byte{strings.Replace(digest, ":", "-", 1) + "-1": []byte("signature")},
		})).To(Succeed())
		Eventually(func(g Gomega) {
			cp := controlPlane(l, ns, name)(g)
			g.Expect(cp.Status.DistributionVersion).To(Equal("4.18.0"))
			g.Expect(meta.FindStatusCondition(cp.Status.Conditions, controlplanev1.UpgradingCondition)).To(HaveField("Reason", controlplanev1.NotUpgradingReason))
			cv := &configv1.ClusterVersion{}
			g.Expect(l.Workload.Client.Get(ctx, client.ObjectKey{Name: "version"}, cv)).To(Succeed())
			g.Expect(cv.Status.History[0].Image).To(Equal(lab.OpenShiftReleaseRepository + "@" + digest))
			g.Expect(cv.Status.History[0].State).To(Equal(configv1.CompletedUpdate))
		}, timeout, interval).Should(Succeed())
	})

	It("leaves nothing behind when the Cluster is deleted", func() {
		deleteClusterAndExpectNothingLeft(l, ns, name)
	})

	Context("OKD and multi-architecture releases", func() {
		releaseResolutionSpecs(func() *lab.Lab { return l })
	})
})
