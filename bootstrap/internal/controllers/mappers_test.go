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
	"testing"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	capm3v1beta2 "github.com/metal3-io/cluster-api-provider-metal3/api/v1beta2"
	. "github.com/onsi/gomega"
	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	capoascheme "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/scheme"
)

// requestFor is the reconcile request of the config ns/name.
func requestFor(ns, name string) reconcile.Request {
	return reconcile.Request{NamespacedName: client.ObjectKey{Namespace: ns, Name: name}}
}

// mapperReconciler is a reconciler whose client holds objs and fails each List with listErr when
// it is set.
func mapperReconciler(g Gomega, listErr error, objs ...client.Object) *OpenshiftAssistedConfigReconciler {
	scheme, err := capoascheme.New(bootstrapv1.AddToScheme)
	g.Expect(err).NotTo(HaveOccurred())
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).WithInterceptorFuncs(interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if listErr != nil {
				return listErr
			}
			return c.List(ctx, list, opts...)
		},
	}).Build()
	return &OpenshiftAssistedConfigReconciler{Client: c}
}

// machineWithConfig is Machine ns/name whose bootstrap configRef is ref.
func machineWithConfig(ns, name string, ref clusterv1.ContractVersionedObjectReference) *clusterv1.Machine {
	return &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: clusterv1.MachineSpec{ClusterName: "c1", Bootstrap: clusterv1.Bootstrap{ConfigRef: ref}}}
}

// configRef refers to the OpenshiftAssistedConfig name.
func configRef(name string) clusterv1.ContractVersionedObjectReference {
	return clusterv1.ContractVersionedObjectReference{APIGroup: bootstrapv1.GroupVersion.Group, Kind: "OpenshiftAssistedConfig", Name: name}
}

// TestMachineToConfig: a Machine maps to the OpenshiftAssistedConfig its bootstrap configRef
// names, in its namespace; a Machine of another bootstrap provider, without one, or another
// object maps to nothing.
func TestMachineToConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		obj  client.Object
		want []reconcile.Request
	}{
		{name: "an OpenshiftAssistedConfig", obj: machineWithConfig("ns", "m1", configRef("m1-config")), want: []reconcile.Request{requestFor("ns", "m1-config")}},
		{name: "another kind of the same group", obj: machineWithConfig("ns", "m1", clusterv1.ContractVersionedObjectReference{
			APIGroup: bootstrapv1.GroupVersion.Group, Kind: "KubeadmConfig", Name: "m1"})},
		{name: "the same kind of another group", obj: machineWithConfig("ns", "m1", clusterv1.ContractVersionedObjectReference{
			APIGroup: "bootstrap.example.com", Kind: "OpenshiftAssistedConfig", Name: "m1"})},
		{name: "no configRef", obj: machineWithConfig("ns", "m1", clusterv1.ContractVersionedObjectReference{})},
		{name: "not a Machine", obj: &bootstrapv1.OpenshiftAssistedConfig{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m1"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(machineToConfig(context.Background(), tc.obj)).To(Equal(tc.want))
		})
	}
}

// TestClusterNameToConfigs: an object named after a Cluster maps to every config of that
// cluster (its cluster-name label) in the object's namespace, and to no other; an object that
// names no cluster, or a failed List, maps to nothing.
func TestClusterNameToConfigs(t *testing.T) {
	config := func(ns, name, cluster string) client.Object {
		c := &bootstrapv1.OpenshiftAssistedConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		if cluster != "" {
			c.Labels = map[string]string{clusterv1.ClusterNameLabel: cluster}
		}
		return c
	}
	configs := []client.Object{
		config("ns", "c1-cp-0", "c1"), config("ns", "c1-worker-0", "c1"), config("ns", "c2-cp-0", "c2"),
		config("ns", "unlabelled", ""), config("other", "c1-cp-0", "c1"),
	}
	aciClusterName := func(o client.Object) string {
		return o.(*hiveextv1beta1.AgentClusterInstall).Spec.ClusterDeploymentRef.Name
	}
	for _, tc := range []struct {
		name        string
		obj         client.Object
		clusterName func(client.Object) string
		listErr     error
		want        []reconcile.Request
	}{
		{name: "a Cluster", obj: &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c1"}},
			want: []reconcile.Request{requestFor("ns", "c1-cp-0"), requestFor("ns", "c1-worker-0")}},
		{name: "a Cluster in another namespace", obj: &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "c1"}},
			want: []reconcile.Request{requestFor("other", "c1-cp-0")}},
		{name: "an AgentClusterInstall, through its ClusterDeployment", clusterName: aciClusterName,
			obj: &hiveextv1beta1.AgentClusterInstall{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c2-install"},
				Spec: hiveextv1beta1.AgentClusterInstallSpec{ClusterDeploymentRef: corev1.LocalObjectReference{Name: "c2"}}},
			want: []reconcile.Request{requestFor("ns", "c2-cp-0")}},
		{name: "a cluster without configs", obj: &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c3"}},
			want: []reconcile.Request{}},
		{name: "no cluster named", clusterName: aciClusterName, obj: &hiveextv1beta1.AgentClusterInstall{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c2-install"}}},
		{name: "a failed List", obj: &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c1"}}, listErr: errors.New("boom")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			clusterName := tc.clusterName
			if clusterName == nil {
				clusterName = func(o client.Object) string { return o.GetName() }
			}
			got := mapperReconciler(g, tc.listErr, configs...).clusterNameToConfigs(clusterName)(context.Background(), tc.obj)
			if tc.want == nil {
				g.Expect(got).To(BeNil())
				return
			}
			g.Expect(got).To(ConsistOf(tc.want))
		})
	}
}

// TestAgentToConfig: an Agent maps to the config named by its InfraEnv label (InfraEnvs are named
// after their config) and to the config that claimed it, once when they are the same; an Agent
// without either maps to nothing.
func TestAgentToConfig(t *testing.T) {
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   []reconcile.Request
	}{
		{name: "registered and claimed by the same config", labels: map[string]string{aiv1beta1.InfraEnvNameLabel: "m1", bootstrapv1.AgentConfigLabel: "m1"},
			want: []reconcile.Request{requestFor("ns", "m1")}},
		{name: "registered through one config, claimed by another", labels: map[string]string{aiv1beta1.InfraEnvNameLabel: "m1", bootstrapv1.AgentConfigLabel: "m2"},
			want: []reconcile.Request{requestFor("ns", "m1"), requestFor("ns", "m2")}},
		{name: "registered only", labels: map[string]string{aiv1beta1.InfraEnvNameLabel: "m1"}, want: []reconcile.Request{requestFor("ns", "m1")}},
		{name: "claimed only", labels: map[string]string{bootstrapv1.AgentConfigLabel: "m2"}, want: []reconcile.Request{requestFor("ns", "m2")}},
		{name: "empty labels", labels: map[string]string{aiv1beta1.InfraEnvNameLabel: "", bootstrapv1.AgentConfigLabel: ""}},
		{name: "other labels", labels: map[string]string{clusterv1.ClusterNameLabel: "c1"}},
		{name: "no labels"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			agent := &aiv1beta1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "agent-0", Labels: tc.labels}}
			g.Expect(agentToConfig(context.Background(), agent)).To(Equal(tc.want))
		})
	}
}

// metal3Objects are Machine m1 with config m1-config, owning Metal3Machine m1 (after an owner
// of another kind), and Metal3Machine orphan, owned by no Machine, all in namespace ns.
func metal3Objects() []client.Object {
	return []client.Object{
		machineWithConfig("ns", "m1", configRef("m1-config")),
		&capm3v1beta2.Metal3Machine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m1", OwnerReferences: []metav1.OwnerReference{
			{APIVersion: "example.com/v1", Kind: "Other", Name: "x", UID: "x-uid"},
			{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: "m1", UID: "m1-uid"},
		}}},
		&capm3v1beta2.Metal3Machine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "orphan"}},
	}
}

// TestMetal3MachineToConfig: a Metal3Machine maps to the config of the Machine that owns it;
// one without an owning Machine, or whose Machine is not there, maps to nothing.
func TestMetal3MachineToConfig(t *testing.T) {
	owned := func(ns string, owners ...metav1.OwnerReference) client.Object {
		return &capm3v1beta2.Metal3Machine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m", OwnerReferences: owners}}
	}
	machine := func(name string) metav1.OwnerReference {
		return metav1.OwnerReference{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: name, UID: "uid"}
	}
	other := metav1.OwnerReference{APIVersion: "example.com/v1", Kind: "Other", Name: "m1", UID: "x-uid"}
	for _, tc := range []struct {
		name string
		obj  client.Object
		want []reconcile.Request
	}{
		{name: "owned by a Machine", obj: owned("ns", other, machine("m1")), want: []reconcile.Request{requestFor("ns", "m1-config")}},
		{name: "owned by no Machine", obj: owned("ns", other)},
		{name: "no owner", obj: owned("ns")},
		{name: "its Machine is gone", obj: owned("ns", machine("m2"))},
		{name: "its Machine is in its own namespace, not another's", obj: owned("other", machine("m1"))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			r := mapperReconciler(g, nil, metal3Objects()...)
			g.Expect(r.metal3MachineToConfig(context.Background(), tc.obj)).To(Equal(tc.want))
		})
	}
}

// TestBareMetalHostToConfig: a BareMetalHost that a Metal3Machine consumes maps to the config of
// the Machine that owns that Metal3Machine (the consumer in the host's namespace when its
// reference names none); a host consumed by something else, by nothing, or by a Metal3Machine
// that is not there maps to nothing.
func TestBareMetalHostToConfig(t *testing.T) {
	consumedBy := func(ref *corev1.ObjectReference) client.Object {
		return &bmov1alpha1.BareMetalHost{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "host-0"},
			Spec: bmov1alpha1.BareMetalHostSpec{ConsumerRef: ref}}
	}
	m3m := func(ns, name string) *corev1.ObjectReference {
		return &corev1.ObjectReference{APIVersion: capm3v1beta2.GroupVersion.String(), Kind: "Metal3Machine", Namespace: ns, Name: name}
	}
	for _, tc := range []struct {
		name string
		obj  client.Object
		want []reconcile.Request
	}{
		{name: "consumed by a Metal3Machine", obj: consumedBy(m3m("ns", "m1")), want: []reconcile.Request{requestFor("ns", "m1-config")}},
		{name: "consumed by a Metal3Machine of the host's namespace", obj: consumedBy(m3m("", "m1")), want: []reconcile.Request{requestFor("ns", "m1-config")}},
		{name: "consumed by a Metal3Machine of another namespace", obj: consumedBy(m3m("other", "m1"))},
		{name: "consumed by a Metal3Machine owned by no Machine", obj: consumedBy(m3m("ns", "orphan"))},
		{name: "consumed by a Metal3Machine that is gone", obj: consumedBy(m3m("ns", "m2"))},
		{name: "consumed by another kind", obj: consumedBy(&corev1.ObjectReference{Kind: "HostClaim", Namespace: "ns", Name: "m1"})},
		{name: "not consumed", obj: consumedBy(nil)},
		{name: "not a BareMetalHost", obj: &capm3v1beta2.Metal3Machine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m1"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			r := mapperReconciler(g, nil, metal3Objects()...)
			g.Expect(r.bareMetalHostToConfig(context.Background(), tc.obj)).To(Equal(tc.want))
		})
	}
}

// TestHostIdentityChanged: a BareMetalHost passes when it is created, and on an update of its
// spec (its generation), its annotations or the hardware inspection found; not on BMO's other
// status writes, a change of labels, a deletion or a generic event.
func TestHostIdentityChanged(t *testing.T) {
	before := &bmov1alpha1.BareMetalHost{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "host-0", Generation: 1, Annotations: map[string]string{"a": "1"}, Labels: map[string]string{"l": "1"}},
		Spec:       bmov1alpha1.BareMetalHostSpec{BootMACAddress: "52:54:00:aa:00:01"},
		Status: bmov1alpha1.BareMetalHostStatus{OperationalStatus: bmov1alpha1.OperationalStatusOK,
			HardwareDetails: &bmov1alpha1.HardwareDetails{Hostname: "localhost", NIC: []bmov1alpha1.NIC{{Name: "eth0", MAC: "52:54:00:aa:00:01"}}}},
	}
	for _, tc := range []struct {
		name   string
		change func(*bmov1alpha1.BareMetalHost)
		want   bool
	}{
		{name: "nothing", change: func(*bmov1alpha1.BareMetalHost) {}, want: false},
		{name: "spec (generation)", change: func(h *bmov1alpha1.BareMetalHost) { h.Generation = 2; h.Spec.BootMACAddress = "52:54:00:aa:00:02" }, want: true},
		{name: "an annotation changed", change: func(h *bmov1alpha1.BareMetalHost) { h.Annotations["a"] = "2" }, want: true},
		{name: "an annotation added", change: func(h *bmov1alpha1.BareMetalHost) { h.Annotations["b"] = "1" }, want: true},
		{name: "annotations removed", change: func(h *bmov1alpha1.BareMetalHost) { h.Annotations = nil }, want: true},
		{name: "hardware details changed", change: func(h *bmov1alpha1.BareMetalHost) { h.Status.HardwareDetails.NIC[0].MAC = "52:54:00:aa:00:03" }, want: true},
		{name: "hardware details gone", change: func(h *bmov1alpha1.BareMetalHost) { h.Status.HardwareDetails = nil }, want: true},
		{name: "other status", change: func(h *bmov1alpha1.BareMetalHost) {
			h.Status.OperationalStatus = bmov1alpha1.OperationalStatusDetached
			h.Status.PoweredOn = true
			h.Status.Provisioning.State = bmov1alpha1.StateProvisioning
		}, want: false},
		{name: "labels", change: func(h *bmov1alpha1.BareMetalHost) { h.Labels["l"] = "2" }, want: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			after := before.DeepCopy()
			tc.change(after)
			g.Expect(hostIdentityChanged.Update(event.UpdateEvent{ObjectOld: before.DeepCopy(), ObjectNew: after})).To(Equal(tc.want))
		})
	}

	g := NewWithT(t)
	m3m := &capm3v1beta2.Metal3Machine{}
	g.Expect(hostIdentityChanged.Update(event.UpdateEvent{ObjectOld: m3m, ObjectNew: m3m})).To(BeFalse(), "not a BareMetalHost")
	g.Expect(hostIdentityChanged.Create(event.CreateEvent{Object: before})).To(BeTrue())
	g.Expect(hostIdentityChanged.Delete(event.DeleteEvent{Object: before})).To(BeFalse())
	g.Expect(hostIdentityChanged.Generic(event.GenericEvent{Object: before})).To(BeFalse())
}
