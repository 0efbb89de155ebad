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

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	capm3v1beta2 "github.com/metal3-io/cluster-api-provider-metal3/api/v1beta2"
	. "github.com/onsi/gomega"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	capoascheme "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/scheme"
)

// TestBareMetalHostClaimedTwice: when CAPM3 claimed the host of the Machine's Metal3Machine for
// another consumer too (metal3-io/cluster-api-provider-metal3#1004), the config says so once,
// with what to do, instead of waiting for a host that provisions for someone else.
func TestBareMetalHostClaimedTwice(t *testing.T) {
	m3m := &capm3v1beta2.Metal3Machine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m1",
		Annotations: map[string]string{metal3HostAnnotation: "ns/host-0"}}}
	consumer := func(name string) *corev1.ObjectReference {
		return &corev1.ObjectReference{APIVersion: capm3v1beta2.GroupVersion.String(), Kind: "Metal3Machine", Namespace: "ns", Name: name}
	}
	for name, tc := range map[string]struct {
		consumer *corev1.ObjectReference
		want     string
	}{
		"claimed by this Metal3Machine":     {consumer: consumer("m1")},
		"not claimed (yet, or any more)":    {},
		"claimed by another Metal3Machine":  {consumer: consumer("m2"), want: "BareMetalHost host-0, which CAPM3 associated with Metal3Machine m1 (its metal3.io/BareMetalHost annotation), is claimed by Metal3Machine ns/m2"},
		"claimed by another kind of object": {consumer: &corev1.ObjectReference{Kind: "HostClaim", Namespace: "ns", Name: "m1"}, want: "is claimed by HostClaim ns/m1"},
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			bmh := &bmov1alpha1.BareMetalHost{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "host-0"},
				Spec: bmov1alpha1.BareMetalHostSpec{ConsumerRef: tc.consumer, BootMACAddress: "52:54:00:aa:00:01", BootMode: bmov1alpha1.UEFI,
					BMC: bmov1alpha1.BMCDetails{Address: "redfish-virtualmedia://192.0.2.1/redfish/v1/Systems/1"}}}
			if tc.want == "" {
				g.Expect(hostTaken(bmh, m3m)).To(BeEmpty())
			} else {
				g.Expect(hostTaken(bmh, m3m)).To(ContainSubstring(tc.want))
			}

			scheme, err := capoascheme.New(bootstrapv1.AddToScheme)
			g.Expect(err).NotTo(HaveOccurred())
			c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(bmh).Build()
			recorder := events.NewFakeRecorder(5)
			f := newFixture()
			s := &scope{config: f.config, machine: f.machine, metal3Machine: m3m,
				infraEnv: &aiv1beta1.InfraEnv{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m1"}}}
			r := &OpenshiftAssistedConfigReconciler{Client: c, Recorder: recorder}
			for range 2 {
				done, err := r.reconcileAgent(context.Background(), s)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(done).To(BeFalse(), "no Agent registered")
			}
			registered := conditions.Get(f.config, bootstrapv1.AgentRegisteredCondition)
			g.Expect(registered).NotTo(BeNil())
			if tc.want == "" {
				g.Expect(registered.Reason).To(Equal(bootstrapv1.WaitingForAgentReason))
				g.Expect(recorder.Events).To(BeEmpty())
				return
			}
			g.Expect(registered.Reason).To(Equal(bootstrapv1.BareMetalHostTakenReason))
			g.Expect(registered.Message).To(ContainSubstring("Delete this Machine"))
			g.Expect(recorder.Events).To(HaveLen(1), "one Warning event, not one per reconcile")
			g.Expect(<-recorder.Events).To(HavePrefix("Warning BareMetalHostTaken "))
		})
	}
}

// TestBareMetalHostOfAnotherNamespace: the metal3.io/BareMetalHost annotation is writable by
// whoever edits the Metal3Machine; a host it names in another namespace (or a value that is not
// <namespace>/<name>) is never read, and the config says why once, with what to do.
func TestBareMetalHostOfAnotherNamespace(t *testing.T) {
	for name, tc := range map[string]struct {
		annotation string
		want       string
	}{
		"another namespace": {annotation: "other/host-0",
			want: "The metal3.io/BareMetalHost annotation of Metal3Machine m1 names a BareMetalHost in another namespace, which is never read: " +
				"CAPM3 associates only hosts of the Metal3Machine's namespace ns; remove the annotation, and CAPM3 associates one of them"},
		"no namespace": {annotation: "host-0",
			want: "The metal3.io/BareMetalHost annotation of Metal3Machine m1 is not <namespace>/<name>: remove it, and CAPM3 associates a host again"},
		"no name": {annotation: "ns/",
			want: "The metal3.io/BareMetalHost annotation of Metal3Machine m1 is not <namespace>/<name>: remove it, and CAPM3 associates a host again"},
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			m3m := &capm3v1beta2.Metal3Machine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m1",
				Annotations: map[string]string{metal3HostAnnotation: tc.annotation}}}
			other := &bmov1alpha1.BareMetalHost{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "host-0"}}
			scheme, err := capoascheme.New(bootstrapv1.AddToScheme)
			g.Expect(err).NotTo(HaveOccurred())
			var hostReads int
			c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(other).WithInterceptorFuncs(interceptor.Funcs{
				Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
					if _, ok := obj.(*bmov1alpha1.BareMetalHost); ok {
						hostReads++
					}
					return c.Get(ctx, key, obj, opts...)
				},
			}).Build()
			recorder := events.NewFakeRecorder(5)
			f := newFixture()
			s := &scope{config: f.config, machine: f.machine, metal3Machine: m3m,
				infraEnv: &aiv1beta1.InfraEnv{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m1"}}}
			r := &OpenshiftAssistedConfigReconciler{Client: c, Recorder: recorder}
			for range 2 {
				done, err := r.reconcileAgent(context.Background(), s)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(done).To(BeFalse())
			}
			g.Expect(hostReads).To(BeZero(), "no BareMetalHost is read")
			g.Expect(s.bareMetalHost).To(BeNil())
			registered := conditions.Get(f.config, bootstrapv1.AgentRegisteredCondition)
			g.Expect(registered).NotTo(BeNil())
			g.Expect(registered.Reason).To(Equal(bootstrapv1.BareMetalHostRefusedReason))
			g.Expect(registered.Message).To(Equal(tc.want))
			g.Expect(recorder.Events).To(HaveLen(1), "one Warning event, not one per reconcile")
			g.Expect(<-recorder.Events).To(HavePrefix("Warning BareMetalHostRefused "))
		})
	}
}
