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

	. "github.com/onsi/gomega"
	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	infrav1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/infrastructure/v1beta1"
)

// readerFunc is a client.Reader whose Get is the function (List is not expected).
type readerFunc func(ctx context.Context, key client.ObjectKey, obj client.Object) error

func (f readerFunc) Get(ctx context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	return f(ctx, key, obj)
}

func (f readerFunc) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return errors.New("List is not expected")
}

func TestIsHostedControlPlane(t *testing.T) {
	for _, tt := range []struct {
		ref  clusterv1.ContractVersionedObjectReference
		want bool
	}{
		{clusterv1.ContractVersionedObjectReference{APIGroup: "hypershift.openshift.io", Kind: "HostedControlPlane", Name: "hcp"}, true},
		{clusterv1.ContractVersionedObjectReference{APIGroup: "hypershift.openshift.io", Kind: "HostedCluster", Name: "hcp"}, false},
		{clusterv1.ContractVersionedObjectReference{APIGroup: "controlplane.cluster.x-k8s.io", Kind: "HostedControlPlane", Name: "hcp"}, false},
		{clusterv1.ContractVersionedObjectReference{APIGroup: "controlplane.cluster.x-k8s.io", Kind: "OpenshiftAssistedControlPlane", Name: "cp"}, false},
		{clusterv1.ContractVersionedObjectReference{}, false},
	} {
		if got := isHostedControlPlane(tt.ref); got != tt.want {
			t.Errorf("isHostedControlPlane(%+v) = %v, want %v", tt.ref, got, tt.want)
		}
	}
}

// hcpObject is a HostedControlPlane as HyperShift fills it in; unset fields are left out.
func hcpObject(baseDomain, pullSecret, kubeconfig, kubeadminPassword string) map[string]any {
	obj := map[string]any{}
	set := func(v string, path ...string) {
		if v != "" {
			_ = unstructured.SetNestedField(obj, v, path...)
		}
	}
	set(baseDomain, "spec", "dns", "baseDomain")
	set(pullSecret, "spec", "pullSecret", "name")
	set(kubeconfig, "status", "kubeConfig", "name")
	set(kubeadminPassword, "status", "kubeadminPassword", "name")
	return obj
}

// TestHostedControlPlane: what the AgentCluster of a HostedControlPlane's Cluster reads, or says
// it waits for; nothing is read for another control plane, or once the ClusterDeployment exists.
func TestHostedControlPlane(t *testing.T) {
	scheme := testScheme(t)
	const ns = "ns"
	hcpRef := clusterv1.ContractVersionedObjectReference{APIGroup: "hypershift.openshift.io", Kind: "HostedControlPlane", Name: "hcp"}
	notFound := apierrors.NewNotFound(schema.GroupResource{Group: "hypershift.openshift.io", Resource: "hostedcontrolplanes"}, "hcp")
	existingCD := &hivev1.ClusterDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ac"}}
	for _, tt := range []struct {
		name         string
		controlPlane clusterv1.ContractVersionedObjectReference
		objects      []client.Object
		cdErr        error
		hcp          map[string]any // nil: the HostedControlPlane does not exist
		hcpErr       error
		wantRead     bool
		want         *hostedControlPlane
		wantWaiting  string
		wantErr      string
	}{
		{name: "another control plane",
			controlPlane: clusterv1.ContractVersionedObjectReference{APIGroup: "controlplane.cluster.x-k8s.io", Kind: "OpenshiftAssistedControlPlane", Name: "cp"}},
		{name: "the ClusterDeployment exists", controlPlane: hcpRef, objects: []client.Object{existingCD}},
		{name: "the ClusterDeployment cannot be read", controlPlane: hcpRef, cdErr: errors.New("boom"),
			wantErr: "getting ClusterDeployment ac: boom"},
		{name: "no HostedControlPlane yet", controlPlane: hcpRef, wantRead: true,
			wantWaiting: "Waiting for HostedControlPlane hcp of Cluster c1"},
		{name: "the HostedControlPlane cannot be read", controlPlane: hcpRef, hcpErr: errors.New("boom"), wantRead: true,
			wantErr: "getting HostedControlPlane hcp: boom"},
		{name: "nothing reported", controlPlane: hcpRef, hcp: hcpObject("", "", "", ""), wantRead: true,
			wantWaiting: "Waiting for HostedControlPlane hcp to report [.spec.dns.baseDomain .spec.pullSecret.name .status.kubeConfig.name]"},
		{name: "no kubeconfig yet", controlPlane: hcpRef, hcp: hcpObject("hosted.example.com", "pull-secret", "", "kubeadmin"), wantRead: true,
			wantWaiting: "Waiting for HostedControlPlane hcp to report [.status.kubeConfig.name]"},
		{name: "started, no kubeadmin password", controlPlane: hcpRef, hcp: hcpObject("hosted.example.com", "pull-secret", "admin-kubeconfig", ""), wantRead: true,
			want: &hostedControlPlane{name: "hcp", baseDomain: "hosted.example.com", pullSecret: "pull-secret", kubeconfig: "admin-kubeconfig"}},
		{name: "started", controlPlane: hcpRef, hcp: hcpObject("hosted.example.com", "pull-secret", "admin-kubeconfig", "kubeadmin"), wantRead: true,
			want: &hostedControlPlane{name: "hcp", baseDomain: "hosted.example.com", pullSecret: "pull-secret", kubeconfig: "admin-kubeconfig",
				kubeadminPassword: "kubeadmin"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(tt.objects...).WithInterceptorFuncs(interceptor.Funcs{
				Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
					if _, ok := obj.(*hivev1.ClusterDeployment); ok && tt.cdErr != nil {
						return tt.cdErr
					}
					return c.Get(ctx, key, obj, opts...)
				},
			}).Build()
			var read []string
			apiReader := readerFunc(func(_ context.Context, key client.ObjectKey, obj client.Object) error {
				u, ok := obj.(*unstructured.Unstructured)
				g.Expect(ok).To(BeTrue(), "the HostedControlPlane is read as an unstructured object")
				read = append(read, u.GetAPIVersion()+" "+u.GetKind()+" "+key.String())
				switch {
				case tt.hcpErr != nil:
					return tt.hcpErr
				case tt.hcp == nil:
					return notFound
				}
				u.Object = tt.hcp
				return nil
			})
			r := &AgentClusterReconciler{Client: c, APIReader: apiReader}
			ac := &infrav1.AgentCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ac"}}
			cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c1"},
				Spec: clusterv1.ClusterSpec{ControlPlaneRef: tt.controlPlane}}
			hcp, waiting, err := r.hostedControlPlane(context.Background(), ac, cluster)
			if tt.wantErr != "" {
				g.Expect(err).To(MatchError(tt.wantErr))
			} else {
				g.Expect(err).NotTo(HaveOccurred())
			}
			g.Expect(hcp).To(Equal(tt.want))
			g.Expect(waiting).To(Equal(tt.wantWaiting))
			if tt.wantRead {
				g.Expect(read).To(Equal([]string{"hypershift.openshift.io/v1beta1 HostedControlPlane ns/hcp"}))
			} else {
				g.Expect(read).To(BeEmpty())
			}
		})
	}
}

// TestHostedControlPlaneDescribe: the ClusterDeployment and AgentClusterInstall of a hosted
// cluster are those of an installed cluster with the HostedControlPlane's names and Secrets, its
// IDs the Cluster's UID, and user-managed networking.
func TestHostedControlPlaneDescribe(t *testing.T) {
	cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c1", UID: "cluster-uid"}}
	for _, tt := range []struct {
		name              string
		kubeadminPassword string
		wantPassword      *corev1.LocalObjectReference
	}{
		{"with a kubeadmin password", "kubeadmin", &corev1.LocalObjectReference{Name: "kubeadmin"}},
		{"without a kubeadmin password", "", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			hcp := &hostedControlPlane{name: "hcp", baseDomain: "hosted.example.com", pullSecret: "pull-secret",
				kubeconfig: "admin-kubeconfig", kubeadminPassword: tt.kubeadminPassword}
			cd := &hivev1.ClusterDeployment{}
			aci := &hiveextv1beta1.AgentClusterInstall{}
			hcp.describe(cd, aci, cluster)
			g.Expect(cd.Spec.Installed).To(BeTrue())
			g.Expect(cd.Spec.ClusterName).To(Equal("hcp"))
			g.Expect(cd.Spec.BaseDomain).To(Equal("hosted.example.com"))
			g.Expect(cd.Spec.PullSecretRef).To(Equal(&corev1.LocalObjectReference{Name: "pull-secret"}))
			g.Expect(cd.Spec.ClusterMetadata).To(Equal(&hivev1.ClusterMetadata{
				ClusterID:                "cluster-uid",
				InfraID:                  "cluster-uid",
				AdminKubeconfigSecretRef: corev1.LocalObjectReference{Name: "admin-kubeconfig"},
				AdminPasswordSecretRef:   tt.wantPassword,
			}))
			g.Expect(aci.Spec.ProvisionRequirements.ControlPlaneAgents).To(Equal(3))
			g.Expect(aci.Spec.Networking.UserManagedNetworking).To(Equal(ptr.To(true)))
		})
	}
}
