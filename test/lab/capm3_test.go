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

package lab

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	capm3v1beta2 "github.com/metal3-io/cluster-api-provider-metal3/api/v1beta2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/patch"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/testenv"
)

// TestCAPM3ProvisionsAHostWithoutIronic runs Cluster API's and CAPM3's own controllers against a
// real API server and checks that CAPM3 picks an available BareMetalHost for a Metal3Machine and
// writes the Metal3Machine's live-ISO image onto it: the step the lab's hosts start from.
func TestCAPM3ProvisionsAHostWithoutIronic(t *testing.T) {
	g := NewWithT(t)
	s, err := Scheme()
	g.Expect(err).NotTo(HaveOccurred())
	env, err := testenv.Start(s)
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = env.Stop() }()

	ctx, cancel := context.WithCancel(ctrl.LoggerInto(context.Background(), ctrl.Log))
	defer cancel()
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: s, Metrics: metricsserver.Options{BindAddress: "0"},
		Controller: testenv.ControllerConfig()})
	g.Expect(err).NotTo(HaveOccurred())
	capi, err := testenv.SetupCAPIControllers(ctx, mgr, 2)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(SetupCAPM3Controllers(ctx, mgr, capi.ClusterCache, 2, testenv.LabRequeueCap)).To(Succeed())
	go func() { _ = mgr.Start(ctx) }()

	ns, err := env.CreateNamespace(ctx, "capm3")
	g.Expect(err).NotTo(HaveOccurred())
	c := env.Client

	host := &bmov1alpha1.BareMetalHost{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "host-0"},
		Spec: bmov1alpha1.BareMetalHostSpec{
			Online:         true,
			BootMACAddress: "52:54:00:00:00:01",
			BMC:            bmov1alpha1.BMCDetails{Address: "redfish-virtualmedia://127.0.0.1:8000/redfish/v1/Systems/host-0", CredentialsName: "bmc"},
		},
	}
	g.Expect(c.Create(ctx, host)).To(Succeed())
	host.Status = bmov1alpha1.BareMetalHostStatus{
		OperationalStatus: bmov1alpha1.OperationalStatusOK,
		Provisioning:      bmov1alpha1.ProvisionStatus{State: bmov1alpha1.StateAvailable, BootMode: bmov1alpha1.UEFI},
		PoweredOn:         false,
	}
	g.Expect(c.Status().Update(ctx, host)).To(Succeed())

	g.Expect(c.Create(ctx, &capm3v1beta2.Metal3Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "lab"},
		Spec: capm3v1beta2.Metal3ClusterSpec{
			ControlPlaneEndpoint: capm3v1beta2.APIEndpoint{Host: "192.168.111.5", Port: 6443},
		},
	})).To(Succeed())
	g.Expect(c.Create(ctx, &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "lab"},
		Spec: clusterv1.ClusterSpec{
			Paused: ptr.To(false),
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: capm3v1beta2.GroupVersion.Group, Kind: "Metal3Cluster", Name: "lab",
			},
		},
	})).To(Succeed())
	g.Expect(c.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m0-bootstrap"},
		Type:       clusterv1.ClusterSecretType,
		Data:       map[string][]byte{"value": []byte("{}"), "format": []byte("ignition")},
	})).To(Succeed())
	isoURL := "https://assisted-image-service.lab/images/infraenv-0/discovery.iso"
	g.Expect(c.Create(ctx, &capm3v1beta2.Metal3Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m0",
			Labels: map[string]string{clusterv1.ClusterNameLabel: "lab"}},
		Spec: capm3v1beta2.Metal3MachineSpec{
			Image: capm3v1beta2.Image{URL: isoURL, Checksum: ptr.To(""), DiskFormat: "live-iso"},
		},
	})).To(Succeed())
	g.Expect(c.Create(ctx, &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m0", Labels: map[string]string{clusterv1.ClusterNameLabel: "lab"}},
		Spec: clusterv1.MachineSpec{
			ClusterName: "lab",
			Bootstrap:   clusterv1.Bootstrap{DataSecretName: ptr.To("m0-bootstrap")},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: capm3v1beta2.GroupVersion.Group, Kind: "Metal3Machine", Name: "m0",
			},
		},
	})).To(Succeed())

	g.Eventually(func(g Gomega) {
		got := &bmov1alpha1.BareMetalHost{}
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(host), got)).To(Succeed())
		g.Expect(got.Spec.ConsumerRef).NotTo(BeNil(), "CAPM3 has not claimed the host")
		g.Expect(got.Spec.ConsumerRef.Name).To(Equal("m0"))
		g.Expect(got.Spec.Image).NotTo(BeNil())
		g.Expect(got.Spec.Image.URL).To(Equal(isoURL))
		g.Expect(got.Spec.Image.DiskFormat).To(HaveValue(Equal("live-iso")))
	}, 90*time.Second, 500*time.Millisecond).Should(Succeed())
}

// TestHostClaimLock: two claims of one BareMetalHost computed from the same read, as CAPM3
// writes them (patch.Helper), both land through a plain client (the last wins) but only the
// first through hostClaimLock; a change of another kind is not locked.
func TestHostClaimLock(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	s, err := Scheme()
	g.Expect(err).NotTo(HaveOccurred())
	claim := func(c client.Client, host *bmov1alpha1.BareMetalHost, consumer string) error {
		helper, err := patch.NewHelper(host, c)
		if err != nil {
			return err
		}
		host.Spec.ConsumerRef = &corev1.ObjectReference{Kind: "Metal3Machine", Namespace: "ns", Name: consumer}
		return helper.Patch(ctx, host)
	}
	for _, locked := range []bool{false, true} {
		fc := fake.NewClientBuilder().WithScheme(s).WithObjects(
			&bmov1alpha1.BareMetalHost{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "host-0"}},
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm"}}).Build()
		var c client.Client = fc
		if locked {
			c = hostClaimLock{fc}
		}
		first, second := &bmov1alpha1.BareMetalHost{}, &bmov1alpha1.BareMetalHost{}
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "host-0"}, first)).To(Succeed())
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "host-0"}, second)).To(Succeed())
		g.Expect(claim(c, first, "m3m-a")).To(Succeed())
		err := claim(c, second, "m3m-b")
		stored := &bmov1alpha1.BareMetalHost{}
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "host-0"}, stored)).To(Succeed())
		if locked {
			g.Expect(apierrors.IsConflict(err) || kerrorsHasConflict(err)).To(BeTrue(), "second claim: %v", err)
			g.Expect(stored.Spec.ConsumerRef.Name).To(Equal("m3m-a"), "the first claim stands")
		} else {
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(stored.Spec.ConsumerRef.Name).To(Equal("m3m-b"), "without the lock the last claim wins (CAPM3 v1.13.2)")
		}

		// Other kinds go through as they are: two stale changes of a ConfigMap both land.
		a, b := &corev1.ConfigMap{}, &corev1.ConfigMap{}
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "cm"}, a)).To(Succeed())
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "cm"}, b)).To(Succeed())
		for i, cm := range []*corev1.ConfigMap{a, b} {
			before := cm.DeepCopy()
			cm.Data = map[string]string{"k": string(rune('a' + i))}
			g.Expect(c.Patch(ctx, cm, client.MergeFrom(before))).To(Succeed())
		}
	}
}

func kerrorsHasConflict(err error) bool {
	var agg kerrors.Aggregate
	return errors.As(err, &agg) && slices.ContainsFunc(agg.Errors(), apierrors.IsConflict)
}
