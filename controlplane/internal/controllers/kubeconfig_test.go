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
	"strings"
	"testing"
	"time"

	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	capoascheme "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/scheme"
)

// countingReader counts the reads that reach the API server.
type countingReader struct {
	client.Reader
	gets int
}

func (c *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c.gets++
	return c.Reader.Get(ctx, key, obj, opts...)
}

// TestKubeconfigReadsOnlyWhatChanged: once the <cluster>-kubeconfig is written, a reconcile reads
// neither it (the cache has it) nor the admin kubeconfig from the API server, and writes nothing;
// the admin kubeconfig is read again, and copied when it differs, when the AgentClusterInstall's
// generation changes, when the <cluster>-kubeconfig is edited or deleted, and after
// adminKubeconfigRecheck. Without a Secret cache, the kubeconfig is read from the API server.
func TestKubeconfigReadsOnlyWhatChanged(t *testing.T) {
	ctx := context.Background()
	s, err := capoascheme.New(controlplanev1.AddToScheme, bootstrapv1.AddToScheme)
	if err != nil {
		t.Fatal(err)
	}
	oacp := testOACP(1)
	oacp.UID = "oacp-uid"
	cluster := testCluster(nil, nil)
	admin := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c1-admin-kubeconfig"},
		Data: map[string][]byte{adminKubeconfigKey: []byte("first")}}
	aci := &hiveextv1beta1.AgentClusterInstall{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c1", Generation: 1},
		Spec: hiveextv1beta1.AgentClusterInstallSpec{ClusterMetadata: &hivev1.ClusterMetadata{
			AdminKubeconfigSecretRef: corev1.LocalObjectReference{Name: admin.Name}}}}
	cd := &hivev1.ClusterDeployment{Spec: hivev1.ClusterDeploymentSpec{Installed: true}}
	kubeconfigKey := client.ObjectKey{Namespace: "ns", Name: "c1-kubeconfig"}

	var writes int
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(admin).WithInterceptorFuncs(interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			writes++
			return c.Create(ctx, obj, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, p client.Patch, opts ...client.PatchOption) error {
			writes++
			return c.Patch(ctx, obj, p, opts...)
		},
	}).Build()
	clock := clocktesting.NewFakePassiveClock(time.Now())
	api := &countingReader{Reader: c}
	r := &OpenshiftAssistedControlPlaneReconciler{Client: c, APIReader: api, SecretReader: c, Recorder: events.NewFakeRecorder(10), Clock: clock}

	reconcile := func(step string, wantGets, wantWrites int, want string) {
		t.Helper()
		api.gets, writes = 0, 0
		sc := &scope{oacp: oacp, cluster: cluster, aci: aci, cd: cd}
		if err := r.reconcileKubeconfig(ctx, sc); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if !sc.kubeconfigWritten {
			t.Errorf("%s: the kubeconfig is not reported written", step)
		}
		got := &corev1.Secret{}
		if err := c.Get(ctx, kubeconfigKey, got); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if string(got.Data["value"]) != want || !metav1.IsControlledBy(got, oacp) || got.Labels[clusterv1.ClusterNameLabel] != "c1" {
			t.Errorf("%s: kubeconfig %q, controlled %v, labels %v; want %q, controlled, labelled c1",
				step, got.Data["value"], metav1.IsControlledBy(got, oacp), got.Labels, want)
		}
		if api.gets != wantGets || writes != wantWrites {
			t.Errorf("%s: %d reads from the API server and %d writes, want %d and %d", step, api.gets, writes, wantGets, wantWrites)
		}
	}
	setAdmin := func(data string) {
		admin.Data[adminKubeconfigKey] = []byte(data)
		if err := c.Update(ctx, admin); err != nil {
			t.Fatal(err)
		}
	}

	reconcile("first: the kubeconfig (not found) and the admin kubeconfig are read, the kubeconfig created", 2, 1, "first")
	reconcile("again: all from the cache, nothing written", 0, 0, "first")
	setAdmin("final")
	reconcile("the admin kubeconfig changed, the AgentClusterInstall not yet: not read", 0, 0, "first")
	aci.Generation = 2
	reconcile("the AgentClusterInstall's generation changed: the admin kubeconfig is read and copied", 1, 1, "final")
	reconcile("again after the copy", 0, 0, "final")

	edited := &corev1.Secret{}
	if err := c.Get(ctx, kubeconfigKey, edited); err != nil {
		t.Fatal(err)
	}
	edited.Data["value"] = []byte("edited")
	if err := c.Update(ctx, edited); err != nil {
		t.Fatal(err)
	}
	reconcile("the kubeconfig was edited: the admin kubeconfig is read and copied back", 1, 1, "final")

	clock.SetTime(clock.Now().Add(adminKubeconfigRecheck))
	reconcile("the recheck period passed: the admin kubeconfig is read, nothing written", 1, 0, "final")

	if err := c.Delete(ctx, edited); err != nil {
		t.Fatal(err)
	}
	reconcile("the kubeconfig was deleted: it is written again", 2, 1, "final")

	r.kubeconfigs.forget(oacp.UID)
	reconcile("forgotten (as by a new leader): the admin kubeconfig is read once", 1, 0, "final")

	r.SecretReader = nil
	reconcile("without a Secret cache: the kubeconfig is read from the API server, not the admin kubeconfig", 1, 0, "final")

	owned := &corev1.Secret{}
	if err := c.Get(ctx, kubeconfigKey, owned); err != nil {
		t.Fatal(err)
	}
	owned.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "other", UID: "other", Controller: ptr.To(true)}}
	if err := c.Update(ctx, owned); err != nil {
		t.Fatal(err)
	}
	r.SecretReader = c
	err = r.reconcileKubeconfig(ctx, &scope{oacp: oacp, cluster: cluster, aci: aci, cd: cd})
	if err == nil || !strings.Contains(err.Error(), "is controlled by ConfigMap other, not by this control plane") {
		t.Errorf("a kubeconfig Secret controlled by another object: %v, want it refused", err)
	}
}
