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
	"time"

	capm3v1beta2 "github.com/metal3-io/cluster-api-provider-metal3/api/v1beta2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	capoascheme "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/scheme"
)

// TestMachinesInPlace: a change of spec.machineTemplate's labels, annotations, deletion
// timeouts, taints and readiness gates reaches the existing Machine (and the labels and
// annotations its Metal3Machine and OpenshiftAssistedConfig) in place, as KubeadmControlPlane
// propagates them; a key removed from the template is removed, one a user set is kept; a Machine
// created before the record existed loses nothing; a Machine being deleted gets its timeouts
// and taints only; once in sync, nothing is written.
func TestMachinesInPlace(t *testing.T) {
	g := NewWithT(t)
	s, err := capoascheme.New(bootstrapv1.AddToScheme, controlplanev1.AddToScheme)
	g.Expect(err).NotTo(HaveOccurred())
	oacp := testOACP(3)
	cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c1"}}
	oacp.Spec.MachineTemplate.ObjectMeta = clusterv1.ObjectMeta{
		Labels: map[string]string{"team": "a", "gone": "x"}, Annotations: map[string]string{"note": "1", "gone": "x"}}
	old := oacp.DeepCopy()

	sc := &scope{oacp: old, cluster: cluster}
	machine := func(name string, recorded bool) []client.Object {
		objs := rolloutMachine(name, time.Now(), "cp", desiredConfigSpec(old))
		lbls := machineObjectLabels(sc, false)
		lbls["user"] = "set"
		annotations := map[string]string{"note": "1", "gone": "x", "user": "set"}
		if recorded {
			annotations[templateMetadataAnnotation] = recordTemplateMetadata(&old.Spec.MachineTemplate)
		}
		for _, o := range objs {
			o.SetLabels(lbls)
			o.SetAnnotations(annotations)
		}
		objs[0].(*clusterv1.Machine).Spec.Deletion = desiredDeletion(&old.Spec.MachineTemplate)
		return objs
	}
	current, legacy, deleting := machine("m0", true), machine("m1", false), machine("m2", true)
	deleting[0].SetFinalizers([]string{"test"})
	crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "metal3machines.infrastructure.cluster.x-k8s.io",
		Labels: map[string]string{"cluster.x-k8s.io/v1beta2": "v1beta2"}}}
	objs := append(append(append([]client.Object{crd}, current...), legacy...), deleting...)
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).Build()
	ctx := context.Background()
	g.Expect(c.Delete(ctx, deleting[0])).To(Succeed())

	// The template changes: a label and an annotation go, one changes, timeouts, a taint and a
	// readiness gate come.
	oacp.Spec.MachineTemplate.ObjectMeta = clusterv1.ObjectMeta{
		Labels: map[string]string{"team": "b"}, Annotations: map[string]string{"note": "2"}}
	oacp.Spec.MachineTemplate.Spec.Deletion = clusterv1.MachineDeletionSpec{NodeDrainTimeoutSeconds: ptr.To[int32](60)}
	oacp.Spec.MachineTemplate.Spec.Taints = []clusterv1.MachineTaint{{Key: "dedicated", Effect: "NoSchedule", Propagation: clusterv1.MachineTaintPropagationAlways}}
	oacp.Spec.MachineTemplate.Spec.ReadinessGates = []clusterv1.MachineReadinessGate{{ConditionType: "example.com/Ready"}}

	var writes int
	read := func() []*clusterv1.Machine {
		var out []*clusterv1.Machine
		for _, name := range []string{"m0", "m1", "m2"} {
			m := &clusterv1.Machine{}
			g.Expect(c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: name}, m)).To(Succeed())
			out = append(out, m)
		}
		return out
	}
	counting := interceptorCounting(c, &writes)
	r := &OpenshiftAssistedControlPlaneReconciler{Client: counting}
	g.Expect(r.reconcileMachinesInPlace(ctx, &scope{oacp: oacp, cluster: cluster, machines: read()})).To(Succeed())

	ms := read()
	for _, name := range []string{"m0", "m1"} {
		for _, o := range []client.Object{&clusterv1.Machine{}, &capm3v1beta2.Metal3Machine{}, &bootstrapv1.OpenshiftAssistedConfig{}} {
			g.Expect(c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: name}, o)).To(Succeed())
			g.Expect(o.GetLabels()).To(HaveKeyWithValue("team", "b"), "%T %s", o, name)
			g.Expect(o.GetLabels()).To(HaveKeyWithValue("user", "set"), "%T %s", o, name)
			g.Expect(o.GetLabels()).To(HaveKeyWithValue(clusterv1.MachineControlPlaneLabel, ""), "%T %s", o, name)
			g.Expect(o.GetAnnotations()).To(HaveKeyWithValue("note", "2"), "%T %s", o, name)
			g.Expect(o.GetAnnotations()).To(HaveKeyWithValue("user", "set"), "%T %s", o, name)
			if name == "m0" {
				g.Expect(o.GetLabels()).NotTo(HaveKey("gone"), "%T %s: removed from the template", o, name)
				g.Expect(o.GetAnnotations()).NotTo(HaveKey("gone"), "%T %s", o, name)
			} else {
				g.Expect(o.GetLabels()).To(HaveKey("gone"), "%T %s: no record of what the template gave", o, name)
			}
		}
	}
	for _, m := range ms[:2] {
		g.Expect(m.Spec.Deletion).To(Equal(clusterv1.MachineDeletionSpec{NodeDrainTimeoutSeconds: ptr.To[int32](60), NodeDeletionTimeoutSeconds: ptr.To[int32](10)}))
		g.Expect(m.Spec.Taints).To(Equal(oacp.Spec.MachineTemplate.Spec.Taints))
		g.Expect(m.Spec.ReadinessGates).To(Equal(oacp.Spec.MachineTemplate.Spec.ReadinessGates))
		g.Expect(m.Annotations).To(HaveKeyWithValue(templateMetadataAnnotation, `{"labels":["team"],"annotations":["note"]}`))
	}
	g.Expect(ms[2].Labels).To(HaveKeyWithValue("team", "a"), "a Machine being deleted keeps its metadata")
	g.Expect(ms[2].Spec.Deletion.NodeDrainTimeoutSeconds).To(Equal(ptr.To[int32](60)))
	g.Expect(ms[2].Spec.ReadinessGates).To(BeEmpty())

	writes = 0
	g.Expect(r.reconcileMachinesInPlace(ctx, &scope{oacp: oacp, cluster: cluster, machines: read()})).To(Succeed())
	g.Expect(writes).To(BeZero(), "in sync: nothing written")
}

// interceptorCounting counts the patches sent through c.
func interceptorCounting(c client.WithWatch, writes *int) client.Client {
	return interceptor.NewClient(c, interceptor.Funcs{Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
		*writes++
		return c.Patch(ctx, obj, patch, opts...)
	}})
}
