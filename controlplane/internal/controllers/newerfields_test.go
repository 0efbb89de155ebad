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
	"errors"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/reconciler"
	capoascheme "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/scheme"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/testenv"
)

// newerFieldsHub is an API server stand-in for the writes of newer fields: its AgentClusterInstall
// reads as live (fields the pinned types lack included, which a typed fake client would drop), and
// it records each patch and create, refusing them with refuse.
type newerFieldsHub struct {
	live    map[string]any
	refuse  error
	patches []string
	created []map[string]any
	strict  []bool
}

func (h *newerFieldsHub) client(t *testing.T) client.Client {
	t.Helper()
	s, err := capoascheme.New()
	if err != nil {
		t.Fatal(err)
	}
	return fake.NewClientBuilder().WithScheme(s).WithInterceptorFuncs(interceptor.Funcs{
		Get: func(_ context.Context, _ client.WithWatch, _ client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
			u, ok := obj.(*unstructured.Unstructured)
			if !ok {
				return errors.New("the live AgentClusterInstall is read unstructured")
			}
			u.Object = (&unstructured.Unstructured{Object: h.live}).DeepCopy().Object
			return nil
		},
		Patch: func(_ context.Context, _ client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			data, err := patch.Data(obj)
			if err != nil {
				return err
			}
			h.patches = append(h.patches, string(data))
			po := &client.PatchOptions{}
			po.ApplyOptions(opts)
			h.strict = append(h.strict, po.FieldValidation == metav1.FieldValidationStrict)
			return h.refuse
		},
		Create: func(_ context.Context, _ client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			h.created = append(h.created, obj.(*unstructured.Unstructured).DeepCopy().Object)
			co := &client.CreateOptions{}
			co.ApplyOptions(opts)
			h.strict = append(h.strict, co.FieldValidation == metav1.FieldValidationStrict)
			return h.refuse
		},
	}).Build()
}

func liveACI(spec map[string]any) map[string]any {
	return map[string]any{
		"apiVersion": hiveextv1beta1.GroupVersion.String(), "kind": "AgentClusterInstall",
		"metadata": map[string]any{"name": "c1", "namespace": "ns"},
		"spec":     spec,
	}
}

// TestWriteNewerFields: only the newer fields that differ from the live object are patched, in
// one merge patch with strict field validation (a hub whose CRD lacks the field refuses it rather
// than pruning it); a nil value removes a field that is there and leaves an absent one alone.
func TestWriteNewerFields(t *testing.T) {
	aci := &hiveextv1beta1.AgentClusterInstall{ObjectMeta: metav1.ObjectMeta{Name: "c1", Namespace: "ns"}}
	mirror := map[string]any{"name": "mirrors"}
	for name, tc := range map[string]struct {
		live   map[string]any
		fields []newerField
		want   string // the patch sent; "" for none
	}{
		"a field to set": {
			live:   liveACI(map[string]any{"imageSetRef": map[string]any{"name": "4.19"}}),
			fields: []newerField{{path: arbiterAgentsField, value: int64(1)}},
			want:   `{"spec":{"provisionRequirements":{"arbiterAgents":1}}}`,
		},
		"a field already at its value": {
			live:   liveACI(map[string]any{"provisionRequirements": map[string]any{"arbiterAgents": int64(1)}}),
			fields: []newerField{{path: arbiterAgentsField, value: int64(1)}},
		},
		"a field to remove": {
			live:   liveACI(map[string]any{"mirrorRegistryRef": mirror}),
			fields: []newerField{{path: mirrorRegistryRefField}},
			want:   `{"spec":{"mirrorRegistryRef":null}}`,
		},
		"an absent field that should be absent": {
			live:   liveACI(map[string]any{}),
			fields: []newerField{{path: mirrorRegistryRefField}},
		},
		"two fields, one already right": {
			live: liveACI(map[string]any{"provisionRequirements": map[string]any{"arbiterAgents": int64(1)}}),
			fields: []newerField{{path: arbiterAgentsField, value: int64(1)},
				{path: mirrorRegistryRefField, value: mirror}},
			want: `{"spec":{"mirrorRegistryRef":{"name":"mirrors"}}}`,
		},
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			hub := &newerFieldsHub{live: tc.live}
			r := &OpenshiftAssistedControlPlaneReconciler{Client: hub.client(t)}
			g.Expect(r.writeNewerFields(context.Background(), aci, tc.fields)).To(Succeed())
			if tc.want == "" {
				g.Expect(hub.patches).To(BeEmpty())
				return
			}
			g.Expect(hub.patches).To(HaveLen(1))
			g.Expect(hub.patches[0]).To(MatchJSON(tc.want))
			g.Expect(hub.strict).To(Equal([]bool{true}))
		})
	}
}

// TestCreateWithNewerFields: the AgentClusterInstall is created with its newer fields in the same
// write (assisted-service never sees it without them), strictly validated; a hub that refuses
// arbiterAgents gets a problem that says what to do, anything else the API server's error.
func TestCreateWithNewerFields(t *testing.T) {
	newACI := func() *hiveextv1beta1.AgentClusterInstall {
		return &hiveextv1beta1.AgentClusterInstall{
			ObjectMeta: metav1.ObjectMeta{Name: "c1", Namespace: "ns"},
			Spec:       hiveextv1beta1.AgentClusterInstallSpec{ImageSetRef: &hivev1.ClusterImageSetReference{Name: "4.19"}},
		}
	}
	fields := []newerField{{path: arbiterAgentsField, value: int64(1)}, {path: mirrorRegistryRefField}}

	t.Run("one create with the fields that have values", func(t *testing.T) {
		g := NewWithT(t)
		hub := &newerFieldsHub{}
		r := &OpenshiftAssistedControlPlaneReconciler{Client: hub.client(t)}
		g.Expect(r.createWithNewerFields(context.Background(), newACI(), fields)).To(Succeed())
		g.Expect(hub.created).To(HaveLen(1))
		got := hub.created[0]
		arbiters, _, _ := unstructured.NestedFieldNoCopy(got, arbiterAgentsField...)
		g.Expect(arbiters).To(BeEquivalentTo(int64(1)))
		_, found, _ := unstructured.NestedFieldNoCopy(got, mirrorRegistryRefField...)
		g.Expect(found).To(BeFalse(), "a field without a value is not written")
		imageSet, _, _ := unstructured.NestedString(got, "spec", "imageSetRef", "name")
		g.Expect(imageSet).To(Equal("4.19"), "the typed fields are written too")
		g.Expect(got["kind"]).To(Equal("AgentClusterInstall"))
		g.Expect(hub.strict).To(Equal([]bool{true}))
	})

	t.Run("a hub without arbiter clusters", func(t *testing.T) {
		g := NewWithT(t)
		hub := &newerFieldsHub{refuse: apierrors.NewBadRequest(`strict decoding error: unknown field "spec.provisionRequirements.arbiterAgents"`)}
		r := &OpenshiftAssistedControlPlaneReconciler{Client: hub.client(t)}
		err := r.createWithNewerFields(context.Background(), newACI(), fields)
		var problem *reconciler.Problem
		g.Expect(errors.As(err, &problem)).To(BeTrue(), "%v", err)
		g.Expect(problem.Condition).To(Equal(controlplanev1.AvailableCondition))
		g.Expect(problem.Reason).To(Equal(controlplanev1.ArbiterNotSupportedReason))
		g.Expect(problem.Error()).To(ContainSubstring("upgrade the hub's assisted-service"))
	})

	t.Run("another refusal", func(t *testing.T) {
		g := NewWithT(t)
		hub := &newerFieldsHub{refuse: apierrors.NewForbidden(hiveextv1beta1.GroupVersion.WithResource("agentclusterinstalls").GroupResource(), "c1", errors.New("denied"))}
		r := &OpenshiftAssistedControlPlaneReconciler{Client: hub.client(t)}
		err := r.createWithNewerFields(context.Background(), newACI(), fields)
		var problem *reconciler.Problem
		g.Expect(errors.As(err, &problem)).To(BeFalse())
		g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "%v", err)
		g.Expect(err.Error()).To(HavePrefix("writing AgentClusterInstall c1: "))
	})
}

func TestHasValues(t *testing.T) {
	g := NewWithT(t)
	g.Expect(hasValues(nil)).To(BeFalse())
	g.Expect(hasValues([]newerField{{path: mirrorRegistryRefField}})).To(BeFalse())
	g.Expect(hasValues([]newerField{{path: mirrorRegistryRefField}, {path: arbiterAgentsField, value: int64(1)}})).To(BeTrue())
}

// TestNewerFieldsFitTheNewestCRD: every AgentClusterInstall field the control plane writes and the
// pinned Go types lack is in the newest AgentClusterInstall CRD (testenv.NewestCRDDir, copied from
// assisted-service), with the type and value the control plane writes; and the AgentClusterInstall,
// ClusterDeployment and ClusterImageSet it creates for two-node OpenShift with an arbiter and
// mirrors, newer fields included, are what the newest CRDs take: a refresh of the copies that
// renames, retypes or requires a field fails here.
func TestNewerFieldsFitTheNewestCRD(t *testing.T) {
	g := NewWithT(t)
	oacp := testOACP(2, "192.168.111.5")
	oacp.Spec.Arbiter = &controlplanev1.OpenshiftAssistedControlPlaneArbiterSpec{}
	oacp.Spec.Config.DiskEncryption = &controlplanev1.DiskEncryption{EnableOn: ptr.To("masters,arbiters"), Mode: ptr.To("tpmv2")}
	oacp.Spec.Config.ManifestsConfigMapRefs = []hiveextv1beta1.ManifestsConfigMapReference{{Name: "extra"}}
	oacp.Spec.Config.PullSecretRef = &corev1.LocalObjectReference{Name: "pull"}
	fields := []newerField{arbiterAgents(wantArbiters(oacp)), mirrorRegistryRef("mirrors", oacp.Namespace)}
	for _, f := range fields {
		g.Expect(testenv.ValidateNewest(agentClusterInstallCRD, f.value, f.path...)).To(Succeed(), "%v", f.path)
	}
	// Removing the reference (a nil value) needs the field only.
	g.Expect(testenv.ValidateNewest(agentClusterInstallCRD, nil, mirrorRegistryRefField...)).To(Succeed())

	cluster := testCluster(nil, nil)
	aci := &hiveextv1beta1.AgentClusterInstall{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c1"}}
	g.Expect(desiredAgentClusterInstall(aci, oacp, cluster, 0)).To(Succeed())
	aci.SetGroupVersionKind(hiveextv1beta1.GroupVersion.WithKind("AgentClusterInstall"))
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(aci)
	g.Expect(err).NotTo(HaveOccurred())
	delete(u, "status") // not written with the object: the status subresource's
	for _, f := range fields {
		g.Expect(unstructured.SetNestedField(u, f.value, f.path...)).To(Succeed())
	}
	g.Expect(testenv.ValidateNewest(agentClusterInstallCRD, u)).To(Succeed(), "the AgentClusterInstall as created")

	cd := &hivev1.ClusterDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c1"}}
	desiredClusterDeployment(cd, oacp, cluster)
	cd.SetGroupVersionKind(hivev1.SchemeGroupVersion.WithKind("ClusterDeployment"))
	cis := &hivev1.ClusterImageSet{ObjectMeta: metav1.ObjectMeta{Name: ImageSetName(oacp)}}
	desiredClusterImageSet(cis, oacp, cluster, "quay.io/openshift-release-dev/ocp-release@sha256:"+strings.Repeat("0", 64))
	cis.SetGroupVersionKind(hivev1.SchemeGroupVersion.WithKind("ClusterImageSet"))
	for crd, obj := range map[string]client.Object{"clusterdeployments.hive.openshift.io": cd, "clusterimagesets.hive.openshift.io": cis} {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		g.Expect(err).NotTo(HaveOccurred())
		delete(u, "status")
		g.Expect(testenv.ValidateNewest(crd, u)).To(Succeed(), "the %s as created", crd)
	}
}
