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
	"encoding/json"
	"errors"
	"testing"

	. "github.com/onsi/gomega"
	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	capoascheme "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/scheme"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/testenv"
)

// infraEnvCRD is the name of the InfraEnv CRD.
const infraEnvCRD = "infraenvs.agent-install.openshift.io"

// TestInfraEnvName: a config's InfraEnv is named after the config.
func TestInfraEnvName(t *testing.T) {
	g := NewWithT(t)
	g.Expect(infraEnvName(&bootstrapv1.OpenshiftAssistedConfig{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "worker-0-x7k2p"}})).
		To(Equal("worker-0-x7k2p"))
}

// TestPullSecretRef: the config's own pull secret, else the ClusterDeployment's, else none; a
// reference without a name counts as none, and the result is a copy.
func TestPullSecretRef(t *testing.T) {
	own := &corev1.LocalObjectReference{Name: "own"}
	cdWith := func(ref *corev1.LocalObjectReference) *hivev1.ClusterDeployment {
		return &hivev1.ClusterDeployment{Spec: hivev1.ClusterDeploymentSpec{PullSecretRef: ref}}
	}
	for _, tc := range []struct {
		name   string
		config *corev1.LocalObjectReference
		cd     *hivev1.ClusterDeployment
		want   *corev1.LocalObjectReference
	}{
		{name: "the config's over the ClusterDeployment's", config: own, cd: cdWith(&corev1.LocalObjectReference{Name: "cd"}), want: own},
		{name: "the config's without a ClusterDeployment", config: own, want: own},
		{name: "the ClusterDeployment's", cd: cdWith(&corev1.LocalObjectReference{Name: "cd"}), want: &corev1.LocalObjectReference{Name: "cd"}},
		{name: "the config's without a name", config: &corev1.LocalObjectReference{}, cd: cdWith(&corev1.LocalObjectReference{Name: "cd"}),
			want: &corev1.LocalObjectReference{Name: "cd"}},
		{name: "the ClusterDeployment's without a name", cd: cdWith(&corev1.LocalObjectReference{})},
		{name: "neither set", cd: cdWith(nil)},
		{name: "neither set, no ClusterDeployment"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			config := &bootstrapv1.OpenshiftAssistedConfig{Spec: bootstrapv1.OpenshiftAssistedConfigSpec{PullSecretRef: tc.config}}
			got := pullSecretRef(config, tc.cd)
			if tc.want == nil {
				g.Expect(got).To(BeNil())
				return
			}
			g.Expect(got).To(Equal(tc.want))
			g.Expect(got).NotTo(BeIdenticalTo(config.Spec.PullSecretRef), "a copy")
			if tc.cd != nil {
				g.Expect(got).NotTo(BeIdenticalTo(tc.cd.Spec.PullSecretRef), "a copy")
			}
		})
	}
}

// TestDesiredInfraEnvSpec: every InfraEnv setting of the config reaches the InfraEnv spec, bound
// to the ClusterDeployment, with the discovery ignition override from the config's annotation
// and the iPXE script type the API server would default; the spec shares no slice or pointer with
// the config.
func TestDesiredInfraEnvSpec(t *testing.T) {
	cd := &hivev1.ClusterDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "clusters", Name: "c1"}}
	t.Run("every field", func(t *testing.T) {
		g := NewWithT(t)
		config := &bootstrapv1.OpenshiftAssistedConfig{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m1", Annotations: map[string]string{
				bootstrapv1.DiscoveryIgnitionOverrideAnnotation: `{"ignition":{"version":"3.2.0"}}`,
				bootstrapv1.IgnitionOverrideAnnotation:          `{"not":"the discovery one"}`,
			}},
			Spec: bootstrapv1.OpenshiftAssistedConfigSpec{
				Proxy:                      &aiv1beta1.Proxy{HTTPProxy: "http://p:3128", HTTPSProxy: "http://p:3129", NoProxy: ".local"},
				PullSecretRef:              &corev1.LocalObjectReference{Name: "ignored: the pullSecret argument is used"},
				AdditionalNTPSources:       []string{"ntp.example.com", "10.0.0.1"},
				SSHAuthorizedKey:           "ssh-ed25519 AAAA",
				NMStateConfigLabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"net": "static"}},
				CpuArchitecture:            "aarch64",
				KernelArguments:            []aiv1beta1.KernelArgument{{Operation: "append", Value: "console=ttyS0"}},
				AdditionalTrustBundle:      "-----BEGIN CERTIFICATE-----",
				OSImageVersion:             "4.17",
				NodeRegistration:           bootstrapv1.NodeRegistrationOptions{Name: "host-0"},
				PreBootstrapCommands:       []string{"echo pre"},
			},
		}
		got := desiredInfraEnvSpec(config, cd, &corev1.LocalObjectReference{Name: "pull"})
		g.Expect(got).To(Equal(aiv1beta1.InfraEnvSpec{
			ClusterRef:                 &aiv1beta1.ClusterReference{Namespace: "clusters", Name: "c1"},
			PullSecretRef:              &corev1.LocalObjectReference{Name: "pull"},
			Proxy:                      &aiv1beta1.Proxy{HTTPProxy: "http://p:3128", HTTPSProxy: "http://p:3129", NoProxy: ".local"},
			AdditionalNTPSources:       []string{"ntp.example.com", "10.0.0.1"},
			SSHAuthorizedKey:           "ssh-ed25519 AAAA",
			NMStateConfigLabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"net": "static"}},
			CpuArchitecture:            "aarch64",
			KernelArguments:            []aiv1beta1.KernelArgument{{Operation: "append", Value: "console=ttyS0"}},
			AdditionalTrustBundle:      "-----BEGIN CERTIFICATE-----",
			OSImageVersion:             "4.17",
			IgnitionConfigOverride:     `{"ignition":{"version":"3.2.0"}}`,
			IPXEScriptType:             aiv1beta1.DiscoveryImageAlways,
		}))
		g.Expect(testenv.ValidateNewest(infraEnvCRD, got, "spec")).To(Succeed(), "the newest InfraEnv CRD takes the spec")

		// A later change to the config reaches none of it.
		config.Spec.Proxy.HTTPProxy = "changed"
		config.Spec.AdditionalNTPSources[0] = "changed"
		config.Spec.KernelArguments[0].Value = "changed"
		config.Spec.NMStateConfigLabelSelector.MatchLabels["net"] = "changed"
		g.Expect(got.Proxy.HTTPProxy).To(Equal("http://p:3128"))
		g.Expect(got.AdditionalNTPSources[0]).To(Equal("ntp.example.com"))
		g.Expect(got.KernelArguments[0].Value).To(Equal("console=ttyS0"))
		g.Expect(got.NMStateConfigLabelSelector.MatchLabels["net"]).To(Equal("static"))
	})
	t.Run("an empty config", func(t *testing.T) {
		g := NewWithT(t)
		got := desiredInfraEnvSpec(&bootstrapv1.OpenshiftAssistedConfig{}, cd, nil)
		g.Expect(got).To(Equal(aiv1beta1.InfraEnvSpec{
			ClusterRef:     &aiv1beta1.ClusterReference{Namespace: "clusters", Name: "c1"},
			IPXEScriptType: aiv1beta1.DiscoveryImageAlways,
		}))
	})
}

// TestPatchNewerInfraEnvFields: the fields newer than the InfraEnv type are written by a merge
// patch of those alone: full-iso for a host that boots a disk image, and the AgentClusterInstall's
// mirrorRegistryRef when it differs from the one recorded in the InfraEnv's annotation (removed
// with null when the AgentClusterInstall has none any more); nothing when there is nothing to
// write. Every field patched is one the newest InfraEnv CRD (testenv.NewestCRDDir) has, with the
// type of the value written.
func TestPatchNewerInfraEnvFields(t *testing.T) {
	const recorded = mirrorRegistryRefAnnotation
	mirrors := map[string]any{"name": "mirrors", "namespace": "ns"}
	for _, tc := range []struct {
		name      string
		diskImage bool
		// aci is whether the scope has the cluster's AgentClusterInstall, live its spec.mirrorRegistryRef
		// (nil for none), gone that the live read finds none.
		aci, gone   bool
		live        map[string]any
		annotation  *string
		getErr      error
		patchErr    error
		wantPatch   string
		wantErr     string
		wantRecords *string
	}{
		{name: "ISO host without AgentClusterInstall: nothing to write"},
		{name: "disk image host", diskImage: true, wantPatch: `{"spec":{"imageType":"full-iso"}}`},
		{name: "AgentClusterInstall without mirrors, none recorded: nothing to write", aci: true},
		{name: "AgentClusterInstall gone: nothing to write", aci: true, gone: true},
		{
			name: "mirrors to write", aci: true, live: mirrors,
			wantPatch:   `{"metadata":{"annotations":{"` + recorded + `":"ns/mirrors"}},"spec":{"mirrorRegistryRef":{"name":"mirrors","namespace":"ns"}}}`,
			wantRecords: ptr.To("ns/mirrors"),
		},
		{name: "mirrors already written", aci: true, live: mirrors, annotation: ptr.To("ns/mirrors")},
		{
			name: "mirrors changed", aci: true, live: map[string]any{"name": "mirrors-2", "namespace": "ns"}, annotation: ptr.To("ns/mirrors"),
			wantPatch:   `{"metadata":{"annotations":{"` + recorded + `":"ns/mirrors-2"}},"spec":{"mirrorRegistryRef":{"name":"mirrors-2","namespace":"ns"}}}`,
			wantRecords: ptr.To("ns/mirrors-2"),
		},
		{
			name: "mirrors removed", aci: true, annotation: ptr.To("ns/mirrors"),
			wantPatch:   `{"metadata":{"annotations":{"` + recorded + `":""}},"spec":{"mirrorRegistryRef":null}}`,
			wantRecords: ptr.To(""),
		},
		{
			name: "disk image host with mirrors", diskImage: true, aci: true, live: mirrors,
			wantPatch:   `{"metadata":{"annotations":{"` + recorded + `":"ns/mirrors"}},"spec":{"imageType":"full-iso","mirrorRegistryRef":{"name":"mirrors","namespace":"ns"}}}`,
			wantRecords: ptr.To("ns/mirrors"),
		},
		{name: "AgentClusterInstall unreadable", aci: true, getErr: errors.New("boom"), wantErr: "reading AgentClusterInstall c1: boom"},
		{name: "InfraEnv not patched", diskImage: true, patchErr: errors.New("boom"), wantPatch: `{"spec":{"imageType":"full-iso"}}`,
			wantErr: "patching InfraEnv m1: boom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			ie := &aiv1beta1.InfraEnv{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m1", Labels: map[string]string{"keep": "me"}}}
			if tc.annotation != nil {
				ie.Annotations = map[string]string{recorded: *tc.annotation}
			}
			var reads []client.ObjectKey
			var patches []string
			scheme, err := capoascheme.New(bootstrapv1.AddToScheme)
			g.Expect(err).NotTo(HaveOccurred())
			c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(ie.DeepCopy()).WithInterceptorFuncs(interceptor.Funcs{
				// The live AgentClusterInstall, with a field its Go type lacks.
				Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
					u, ok := obj.(*unstructured.Unstructured)
					if !ok {
						return c.Get(ctx, key, obj, opts...)
					}
					g.Expect(u.GroupVersionKind()).To(Equal(hiveextv1beta1.GroupVersion.WithKind("AgentClusterInstall")))
					reads = append(reads, key)
					switch {
					case tc.getErr != nil:
						return tc.getErr
					case tc.gone:
						return apierrors.NewNotFound(hiveextv1beta1.GroupVersion.WithResource("agentclusterinstalls").GroupResource(), key.Name)
					}
					u.SetNamespace(key.Namespace)
					u.SetName(key.Name)
					if tc.live != nil {
						return unstructured.SetNestedMap(u.Object, tc.live, "spec", "mirrorRegistryRef")
					}
					return nil
				},
				Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
					data, err := patch.Data(obj)
					g.Expect(err).NotTo(HaveOccurred())
					patches = append(patches, string(data))
					if tc.patchErr != nil {
						return tc.patchErr
					}
					return c.Patch(ctx, obj, patch, opts...)
				},
			}).Build()
			// The ClusterDeployment names the AgentClusterInstall; the scope's cached copy is
			// never set: the live one counts, also while the cache does not show it yet.
			s := &scope{diskImage: tc.diskImage, clusterDeployment: &hivev1.ClusterDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c1"}}}
			if tc.aci {
				s.clusterDeployment.Spec.ClusterInstallRef = &hivev1.ClusterInstallLocalReference{
					Group: hiveextv1beta1.Group, Version: hiveextv1beta1.Version, Kind: "AgentClusterInstall", Name: "c1"}
			}
			r := &OpenshiftAssistedConfigReconciler{Client: c}

			err = r.patchNewerInfraEnvFields(context.Background(), s, ie)
			if tc.wantErr != "" {
				g.Expect(err).To(MatchError(tc.wantErr))
			} else {
				g.Expect(err).NotTo(HaveOccurred())
			}
			if tc.aci {
				g.Expect(reads).To(Equal([]client.ObjectKey{{Namespace: "ns", Name: "c1"}}), "one live read of the AgentClusterInstall")
			} else {
				g.Expect(reads).To(BeEmpty())
			}
			if tc.wantPatch == "" {
				g.Expect(patches).To(BeEmpty())
				return
			}
			g.Expect(patches).To(HaveLen(1))
			g.Expect(patches[0]).To(MatchJSON(tc.wantPatch))
			var sent struct{ Spec map[string]any }
			g.Expect(json.Unmarshal([]byte(patches[0]), &sent)).To(Succeed())
			for field, value := range sent.Spec {
				g.Expect(testenv.ValidateNewest(infraEnvCRD, value, "spec", field)).To(Succeed(), "spec.%s", field)
			}
			if tc.wantRecords != nil {
				stored := &aiv1beta1.InfraEnv{}
				g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(ie), stored)).To(Succeed())
				g.Expect(stored.Annotations).To(Equal(map[string]string{recorded: *tc.wantRecords}))
				g.Expect(stored.Labels).To(Equal(map[string]string{"keep": "me"}), "the patch leaves the rest")
			}
		})
	}
}
