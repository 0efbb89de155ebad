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
	"testing"

	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// TestHiveInstalledStandIn: a ClusterDeployment is marked installed, with the install's cluster
// metadata, once the AgentClusterInstall it references reports Completed=True; not before, and
// not for an install it does not reference.
func TestHiveInstalledStandIn(t *testing.T) {
	scheme, err := Scheme()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cd := &hivev1.ClusterDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cd"}, Spec: hivev1.ClusterDeploymentSpec{
		ClusterInstallRef: &hivev1.ClusterInstallLocalReference{Group: hiveextv1beta1.Group, Version: "v1beta1", Kind: "AgentClusterInstall", Name: "aci"}}}
	aci := &hiveextv1beta1.AgentClusterInstall{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "aci"},
		Spec: hiveextv1beta1.AgentClusterInstallSpec{ClusterDeploymentRef: corev1.LocalObjectReference{Name: "cd"},
			ClusterMetadata: &hivev1.ClusterMetadata{ClusterID: "id", InfraID: "infra"}}}
	other := aci.DeepCopy()
	other.Name = "other"
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(cd, aci, other).WithStatusSubresource(aci).Build()
	r := &hiveInstalledStandIn{client: c}
	reconcile := func(name string) *hivev1.ClusterDeployment {
		t.Helper()
		if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKey{Namespace: "ns", Name: name}}); err != nil {
			t.Fatal(err)
		}
		got := &hivev1.ClusterDeployment{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(cd), got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	if reconcile("aci").Spec.Installed {
		t.Fatal("installed before the install completed")
	}
	completed := []hivev1.ClusterInstallCondition{{Type: hiveextv1beta1.ClusterCompletedCondition, Status: corev1.ConditionTrue}}
	other.Status.Conditions = completed
	if err := c.Status().Update(ctx, other); err != nil {
		t.Fatal(err)
	}
	if reconcile("other").Spec.Installed {
		t.Fatal("installed by an install the ClusterDeployment does not reference")
	}
	aci.Status.Conditions = completed
	if err := c.Status().Update(ctx, aci); err != nil {
		t.Fatal(err)
	}
	if got := reconcile("aci"); !got.Spec.Installed || got.Spec.ClusterMetadata == nil || got.Spec.ClusterMetadata.InfraID != "infra" {
		t.Fatalf("spec %+v, want installed with the install's metadata", got.Spec)
	}
}
