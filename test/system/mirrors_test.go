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
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/lab"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/assisted"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/release"
)

// Disconnected clusters on a hub whose assisted-service takes a cluster's mirrors itself
// (spec.mirrorRegistryRef of the AgentClusterInstall and the InfraEnv, ACM 2.13 and later), and
// the mistakes a mirror configuration can hold. The control-plane manager may read from the
// lab's registry, from a second mirror served by a CA of its own that the manager does not trust
// (the mirror of a site whose CA the user forgot), and from a host where nothing listens.
var _ = Describe("Mirrors on a hub that takes them itself, and mirror configurations that cannot work", Ordered, func() {
	var (
		l         *lab.Lab
		ns        string
		untrusted *release.Registry
	)
	const (
		unreachable = "127.0.0.1:1" // nothing listens on port 1
		badPassword = "Xq7pZ-not-the-password"
	)

	BeforeAll(func() {
		var err error
		untrusted, err = release.StartSecureRegistry(release.SecureOptions{IP: "127.0.0.3", Username: "mirror", Password: "other"})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(untrusted.Close)
		// The hub's assisted-service has the per-cluster mirror registry: the newest CRDs.
		l, err = lab.Start(ctx, lab.Options{AllowedReleaseRegistries: []string{unreachable, untrusted.Host}, NewestCRDs: true})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { Expect(l.Stop()).To(Succeed()) })
		ns, err = l.Mgmt.CreateNamespace(ctx, "mirrors")
		Expect(err).NotTo(HaveOccurred())
		_, err = l.AddHosts(ctx, ns, "mirror", 3)
		Expect(err).NotTo(HaveOccurred())
	})
	BeforeEach(func() { reportOnFailure(l, ns) })

	It("installs through the cluster's mirrors, which its AgentClusterInstall and InfraEnvs name, without manifests", func() {
		const name = "mirrored"
		Expect(l.CreateCluster(ctx, lab.ClusterOptions{Namespace: ns, Name: name, ControlPlanes: 3, Version: "4.17.3", Disconnected: true})).To(Succeed())
		expectAvailable(l, ns, name, 3, 3)

		want := map[string]any{"name": name + "-mirror-config", "namespace": ns}
		aci := &unstructured.Unstructured{}
		aci.SetGroupVersionKind(hiveextv1beta1.GroupVersion.WithKind("AgentClusterInstall"))
		Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, aci)).To(Succeed())
		ref, _, _ := unstructured.NestedMap(aci.Object, "spec", "mirrorRegistryRef")
		Expect(ref).To(Equal(want))
		refs, _, _ := unstructured.NestedSlice(aci.Object, "spec", "manifestsConfigMapRefs")
		for _, r := range refs {
			Expect(r).NotTo(HaveKeyWithValue("name", name+"-additional-registry-config"), "no manifests: assisted-service applies the mirrors itself")
		}
		Expect(apierrors.IsNotFound(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name + "-additional-registry-config"}, &corev1.ConfigMap{}))).To(BeTrue())

		infraEnvs := &unstructured.UnstructuredList{}
		infraEnvs.SetGroupVersionKind(aiv1beta1.GroupVersion.WithKind("InfraEnvList"))
		Expect(l.Mgmt.Client.List(ctx, infraEnvs, client.InNamespace(ns))).To(Succeed())
		Expect(infraEnvs.Items).To(HaveLen(3))
		for _, ie := range infraEnvs.Items {
			ref, _, _ := unstructured.NestedMap(ie.Object, "spec", "mirrorRegistryRef")
			Expect(ref).To(Equal(want), "InfraEnv %s: its discovery image pulls from the cluster's mirrors", ie.GetName())
		}

		// assisted-service used the ConfigMap: it labels it for its backup and its watches.
		cm := &corev1.ConfigMap{}
		Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name + "-mirror-config"}, cm)).To(Succeed())
		Expect(cm.Labels).To(HaveKeyWithValue(assisted.BackupLabel, "true"))
		Expect(cm.Labels).To(HaveKeyWithValue(assisted.WatchResourceLabel, "true"))

		cis := &hivev1.ClusterImageSet{}
		typed := &hiveextv1beta1.AgentClusterInstall{}
		Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, typed)).To(Succeed())
		Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Name: typed.Spec.ImageSetRef.Name}, cis)).To(Succeed())
		Expect(cis.Spec.ReleaseImage).To(MatchRegexp(`^quay\.io/openshift-release-dev/ocp-release@sha256:[0-9a-f]{64}$`))
	})

	// Each case is a cluster of its own whose mirror ConfigMap or pull secret holds one mistake:
	// its control plane says which registry failed and how, never quoting what the registry
	// answered, sends a Warning event, and installs nothing.
	type badInput struct {
		version string
		mutate  func(mirrors *corev1.ConfigMap, pullSecret *corev1.Secret)
		want    func() string
	}
	replaceMirrorHost := func(host string) func(*corev1.ConfigMap, *corev1.Secret) {
		return func(cm *corev1.ConfigMap, _ *corev1.Secret) {
			cm.Data["registries.conf"] = strings.ReplaceAll(cm.Data["registries.conf"], l.Releases.Host, host)
		}
	}
	DescribeTable("a mirror configuration that cannot work installs nothing and says why",
		func(name string, tc badInput) {
			version := tc.version
			if version == "" {
				version = "4.17.3"
			}
			objs, err := l.ClusterObjects(lab.ClusterOptions{Namespace: ns, Name: name, ControlPlanes: 3, Version: version, Disconnected: true})
			Expect(err).NotTo(HaveOccurred())
			var cm *corev1.ConfigMap
			var secret *corev1.Secret
			for _, obj := range objs {
				switch o := obj.(type) {
				case *corev1.ConfigMap:
					cm = o
				case *corev1.Secret:
					secret = o
				}
			}
			Expect(cm).NotTo(BeNil())
			Expect(secret).NotTo(BeNil())
			tc.mutate(cm, secret)
			for _, obj := range objs {
				Expect(l.Mgmt.Client.Create(ctx, obj, client.FieldValidation(metav1.FieldValidationStrict))).To(Succeed())
			}
			want := tc.want()
			Eventually(func(g Gomega) {
				cp := controlPlane(l, ns, name)(g)
				c := meta.FindStatusCondition(cp.Status.Conditions, controlplanev1.ReleaseImageResolvedCondition)
				g.Expect(c).NotTo(BeNil())
				g.Expect(c.Reason).To(Equal(controlplanev1.ReleaseImageNotResolvedReason))
				g.Expect(c.Message).To(ContainSubstring(want))
				g.Expect(c.Message).To(ContainSubstring("read through the mirrors of ConfigMap " + name + "-mirror-config"))
				g.Expect(c.Message).NotTo(ContainSubstring(badPassword), "no credential is quoted")
				a := meta.FindStatusCondition(cp.Status.Conditions, controlplanev1.AvailableCondition)
				g.Expect(a).NotTo(BeNil())
				g.Expect(a.Status).To(Equal(metav1.ConditionFalse))
			}, timeout, interval).Should(Succeed())
			Expect(apierrors.IsNotFound(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &hiveextv1beta1.AgentClusterInstall{}))).
				To(BeTrue(), "nothing installs half-configured")
			Expect(eventReasons(l, ns)).To(ContainElement(controlplanev1.ReleaseImageNotResolvedReason))
			Expect(l.Mgmt.Client.Delete(ctx, &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})).To(Succeed())
		},
		Entry("a mirror host where nothing listens", "wronghost", badInput{
			mutate: replaceMirrorHost(unreachable),
			want: func() string {
				return "resolving release image " + unreachable + "/openshift-release-dev/ocp-release:4.17.3-x86_64: the registry cannot be reached (connection refused)"
			},
		}),
		Entry("a mirror whose CA the ConfigMap lacks", "noca", badInput{
			mutate: func(cm *corev1.ConfigMap, _ *corev1.Secret) {
				replaceMirrorHost(untrusted.Host)(cm, nil)
				delete(cm.Data, "ca-bundle.crt")
			},
			want: func() string {
				return "resolving release image " + untrusted.Host + "/openshift-release-dev/ocp-release:4.17.3-x86_64: the registry's TLS certificate is not trusted: add its CA to the ca-bundle.crt key"
			},
		}),
		Entry("a pull secret with a wrong password for the mirror", "badcreds", badInput{
			mutate: func(_ *corev1.ConfigMap, s *corev1.Secret) {
				s.Data[corev1.DockerConfigJsonKey] = l.Releases.PullSecret(lab.RegistryUsername, badPassword)
			},
			want: func() string {
				return "registry " + l.Releases.Host + " refused the pull secret's credentials for it: correct its auths entry in the pull secret (the registry answered HTTP 401 Unauthorized (UNAUTHORIZED))"
			},
		}),
		Entry("a release the mirror does not hold", "notmirrored", badInput{
			version: "4.16.99",
			mutate:  func(*corev1.ConfigMap, *corev1.Secret) {},
			want: func() string {
				return "resolving release image " + l.Releases.Host + "/openshift-release-dev/ocp-release:4.16.99-x86_64: the registry answered HTTP 404 Not Found: no such image"
			},
		}),
	)

	It("leaves nothing behind when the Clusters are deleted", func() {
		deleteClusterAndExpectNothingLeft(l, ns, "mirrored")
	})
})
