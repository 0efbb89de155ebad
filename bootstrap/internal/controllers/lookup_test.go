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
	"github.com/openshift/assisted-service/models"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	capoascheme "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/scheme"
)

// lookupClient is a fake client holding objs whose Get fails with getErr when it is set.
func lookupClient(g Gomega, getErr error, objs ...client.Object) client.Client {
	scheme, err := capoascheme.New(bootstrapv1.AddToScheme)
	g.Expect(err).NotTo(HaveOccurred())
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).WithInterceptorFuncs(interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if getErr != nil {
				return getErr
			}
			return c.Get(ctx, key, obj, opts...)
		},
	}).Build()
}

// TestClusterDeploymentFor: the ClusterDeployment named after a Cluster with a control plane, in
// its namespace; none for a Cluster without controlPlaneRef or while it does not exist; a
// failed read is an error that names it.
func TestClusterDeploymentFor(t *testing.T) {
	withControlPlane := clusterv1.ClusterSpec{ControlPlaneRef: clusterv1.ContractVersionedObjectReference{
		APIGroup: "controlplane.cluster.x-k8s.io", Kind: "OpenshiftAssistedControlPlane", Name: "c1"}}
	cds := []client.Object{
		&hivev1.ClusterDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c1"}},
		&hivev1.ClusterDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "c2"}},
	}
	for _, tc := range []struct {
		name      string
		namespace string
		spec      clusterv1.ClusterSpec
		getErr    error
		want      string
		wantErr   string
	}{
		{name: "with a control plane", namespace: "ns", spec: withControlPlane, want: "c1"},
		{name: "without controlPlaneRef", namespace: "ns"},
		{name: "not created yet", namespace: "other", spec: withControlPlane},
		{name: "unreadable", namespace: "ns", spec: withControlPlane, getErr: errors.New("boom"), wantErr: "getting ClusterDeployment ns/c1: boom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			c := lookupClient(g, tc.getErr, cds...)
			cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: tc.namespace, Name: "c1"}, Spec: tc.spec}
			cd, err := clusterDeploymentFor(context.Background(), c, cluster)
			if tc.wantErr != "" {
				g.Expect(err).To(MatchError(tc.wantErr))
				g.Expect(cd).To(BeNil())
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			if tc.want == "" {
				g.Expect(cd).To(BeNil())
				return
			}
			g.Expect(cd).NotTo(BeNil())
			g.Expect(client.ObjectKeyFromObject(cd)).To(Equal(client.ObjectKey{Namespace: tc.namespace, Name: tc.want}))
		})
	}
}

// TestClusterInstallFor: the AgentClusterInstall that the ClusterDeployment's clusterInstallRef
// names, in its namespace; none for a reference to nothing, to another kind, without a name, or
// to an AgentClusterInstall that does not exist; a failed read is an error that names it.
func TestClusterInstallFor(t *testing.T) {
	ref := func(kind, name string) *hivev1.ClusterInstallLocalReference {
		return &hivev1.ClusterInstallLocalReference{Group: hiveextv1beta1.Group, Version: "v1beta1", Kind: kind, Name: name}
	}
	aci := &hiveextv1beta1.AgentClusterInstall{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c1-install"}}
	for _, tc := range []struct {
		name    string
		ref     *hivev1.ClusterInstallLocalReference
		getErr  error
		want    bool
		wantErr string
	}{
		{name: "referenced", ref: ref("AgentClusterInstall", "c1-install"), want: true},
		{name: "no reference"},
		{name: "a reference to another kind", ref: ref("ImageClusterInstall", "c1-install")},
		{name: "a reference without a name", ref: ref("AgentClusterInstall", "")},
		{name: "not created yet", ref: ref("AgentClusterInstall", "c1-other")},
		{name: "unreadable", ref: ref("AgentClusterInstall", "c1-install"), getErr: errors.New("boom"), wantErr: "getting AgentClusterInstall ns/c1-install: boom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			c := lookupClient(g, tc.getErr, aci)
			cd := &hivev1.ClusterDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c1"},
				Spec: hivev1.ClusterDeploymentSpec{ClusterInstallRef: tc.ref}}
			got, err := clusterInstallFor(context.Background(), c, cd)
			if tc.wantErr != "" {
				g.Expect(err).To(MatchError(tc.wantErr))
				g.Expect(got).To(BeNil())
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			if !tc.want {
				g.Expect(got).To(BeNil())
				return
			}
			g.Expect(got).NotTo(BeNil())
			g.Expect(client.ObjectKeyFromObject(got)).To(Equal(client.ObjectKeyFromObject(aci)))
		})
	}
}

// TestInstallationRunning: the first installation runs from its preparation to its finalizing;
// before, after, in error and without an AgentClusterInstall it does not.
func TestInstallationRunning(t *testing.T) {
	for state, want := range map[string]bool{
		models.ClusterStatusPreparingForInstallation:    true,
		models.ClusterStatusInstalling:                  true,
		models.ClusterStatusInstallingPendingUserAction: true,
		models.ClusterStatusFinalizing:                  true,
		"":                                              false,
		models.ClusterStatusInsufficient:                false,
		models.ClusterStatusReady:                       false,
		models.ClusterStatusPendingForInput:             false,
		models.ClusterStatusInstalled:                   false,
		models.ClusterStatusAddingHosts:                 false,
		models.ClusterStatusError:                       false,
		models.ClusterStatusCancelled:                   false,
	} {
		t.Run(state, func(t *testing.T) {
			g := NewWithT(t)
			aci := &hiveextv1beta1.AgentClusterInstall{Status: hiveextv1beta1.AgentClusterInstallStatus{DebugInfo: hiveextv1beta1.DebugInfo{State: state}}}
			g.Expect(installationRunning(aci)).To(Equal(want))
		})
	}
	NewWithT(t).Expect(installationRunning(nil)).To(BeFalse(), "no AgentClusterInstall")
}
