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
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/foreign"
	capoascheme "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/scheme"
)

// TestDeleteOwnedForcesCleanupWhenTheOwnerControllerIsGone checks that deletion never blocks
// forever and never orphans assisted-service's records while it runs: an AgentClusterInstall
// whose finalizer nobody removes loses it when no controller acted on it for the timeout, or
// when its CRD is being uninstalled, and not before; the control plane gets a Warning event.
func TestDeleteOwnedForcesCleanupWhenTheOwnerControllerIsGone(t *testing.T) {
	s, err := capoascheme.New(controlplanev1.AddToScheme)
	if err != nil {
		t.Fatal(err)
	}
	const crdName = "agentclusterinstalls.extensions.hive.openshift.io"
	now := time.Now().Truncate(time.Second)
	for name, tc := range map[string]struct {
		deletedAgo  time.Duration
		crdDeleting bool
		wantGone    bool
		wantMessage string
	}{
		"recently deleted: wait for assisted-service": {deletedAgo: time.Second,
			wantMessage: "Waiting for assisted-service to remove the finalizers agentclusterinstall.agent-install.openshift.io/ai-deprovision " +
				"of AgentClusterInstall ns/c1 (last acted on 1s ago); they are removed after 5m0s without activity"},
		"stuck in deletion: finalizer removed":                                       {deletedAgo: 10 * time.Minute, wantGone: true},
		"assisted-service uninstalled (its CRD is being deleted): finalizer removed": {deletedAgo: time.Second, crdDeleting: true, wantGone: true},
	} {
		t.Run(name, func(t *testing.T) {
			oacp := testOACP(1)
			oacp.UID = "oacp-uid"
			aci := &hiveextv1beta1.AgentClusterInstall{ObjectMeta: metav1.ObjectMeta{
				Namespace: "ns", Name: "c1", Finalizers: []string{"agentclusterinstall.agent-install.openshift.io/ai-deprovision"},
				DeletionTimestamp: &metav1.Time{Time: now.Add(-tc.deletedAgo)},
				OwnerReferences:   []metav1.OwnerReference{*metav1.NewControllerRef(oacp, controlplanev1.GroupVersion.WithKind("OpenshiftAssistedControlPlane"))},
			}}
			crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: crdName}}
			if tc.crdDeleting {
				crd.Finalizers = []string{apiextensionsv1.CustomResourceCleanupFinalizer}
				crd.DeletionTimestamp = &metav1.Time{Time: now}
			}
			c := fake.NewClientBuilder().WithScheme(s).WithObjects(aci, crd).Build()
			recorder := events.NewFakeRecorder(10)
			r := &OpenshiftAssistedControlPlaneReconciler{Client: c, APIReader: c, Recorder: recorder,
				Foreign: foreign.Policy{Timeout: 5 * time.Minute, Clock: clocktesting.NewFakePassiveClock(now)}}
			sc := &scope{oacp: oacp}
			gone, wait, err := r.deleteOwned(context.Background(), sc, &hiveextv1beta1.AgentClusterInstall{}, client.ObjectKeyFromObject(aci), "assisted-service")
			if err != nil {
				t.Fatal(err)
			}
			if gone {
				t.Error("deleteOwned reported the object gone while it still existed")
			}
			if !tc.wantGone && wait.Message != tc.wantMessage {
				t.Errorf("message %q, want %q", wait.Message, tc.wantMessage)
			}
			err = c.Get(context.Background(), client.ObjectKeyFromObject(aci), &hiveextv1beta1.AgentClusterInstall{})
			if got := apierrors.IsNotFound(err); got != tc.wantGone {
				t.Errorf("object gone = %v (err %v), want %v", got, err, tc.wantGone)
			}
			if tc.wantGone {
				if ev := <-recorder.Events; !strings.HasPrefix(ev, "Warning ForeignFinalizersRemoved") {
					t.Errorf("event %q, want a ForeignFinalizersRemoved warning", ev)
				}
			}
			gone, _, err = r.deleteOwned(context.Background(), sc, &hiveextv1beta1.AgentClusterInstall{}, client.ObjectKeyFromObject(aci), "assisted-service")
			if err != nil || gone != tc.wantGone {
				t.Errorf("second call: gone %v err %v, want gone %v", gone, err, tc.wantGone)
			}
		})
	}
}

// TestDeleteOwnedLeavesOthersObjectsAlone checks that an object of the same name that this control
// plane does not own is never deleted.
func TestDeleteOwnedLeavesOthersObjectsAlone(t *testing.T) {
	s := runtime.NewScheme()
	if err := hivev1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	cd := &hivev1.ClusterDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c1"}}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(cd).Build()
	r := &OpenshiftAssistedControlPlaneReconciler{Client: c, APIReader: c, Recorder: events.NewFakeRecorder(10), Foreign: foreign.Policy{Timeout: time.Minute}}
	gone, _, err := r.deleteOwned(context.Background(), &scope{oacp: testOACP(1)}, &hivev1.ClusterDeployment{}, client.ObjectKeyFromObject(cd), "Hive")
	if err != nil || !gone {
		t.Fatalf("gone %v err %v: an object owned by someone else counts as not ours", gone, err)
	}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(cd), &hivev1.ClusterDeployment{}); err != nil {
		t.Errorf("the ClusterDeployment owned by someone else was deleted: %v", err)
	}
}

// TestDeletedForMoveIsLeftAlone checks that a control plane clusterctl move deletes from the
// management cluster it leaves (its Cluster already gone there) deletes none of what it owns: the
// ClusterDeployment and AgentClusterInstall live on in the other management cluster.
func TestDeletedForMoveIsLeftAlone(t *testing.T) {
	s, err := capoascheme.New(controlplanev1.AddToScheme, bootstrapv1.AddToScheme)
	if err != nil {
		t.Fatal(err)
	}
	oacp := testOACP(3)
	oacp.UID = "oacp-uid"
	oacp.Finalizers = []string{controlplanev1.OpenshiftAssistedControlPlaneFinalizer}
	oacp.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	oacp.Annotations = map[string]string{"clusterctl.cluster.x-k8s.io/delete-for-move": ""}
	oacp.OwnerReferences = []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: "c1", UID: "c1-uid"}}
	owner := []metav1.OwnerReference{*metav1.NewControllerRef(oacp, controlplanev1.GroupVersion.WithKind("OpenshiftAssistedControlPlane"))}
	cd := &hivev1.ClusterDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c1", OwnerReferences: owner}}
	aci := &hiveextv1beta1.AgentClusterInstall{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c1", OwnerReferences: owner}}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(oacp, cd, aci).
		WithStatusSubresource(&controlplanev1.OpenshiftAssistedControlPlane{}).Build()
	r := &OpenshiftAssistedControlPlaneReconciler{Client: c, APIReader: c, Recorder: events.NewFakeRecorder(10), Foreign: foreign.Policy{Timeout: 5 * time.Minute}}
	// The first reconcile of an object with a Cluster only records its Paused condition.
	for range 3 {
		if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(oacp)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, o := range []client.Object{&hivev1.ClusterDeployment{}, &hiveextv1beta1.AgentClusterInstall{}} {
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "c1"}, o); err != nil {
			t.Errorf("%T: %v, want it left alone", o, err)
		}
	}
	got := &controlplanev1.OpenshiftAssistedControlPlane{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(oacp), got); err != nil || len(got.Finalizers) != 1 {
		t.Errorf("control plane: %v, finalizers %v: clusterctl removes the finalizers itself", err, got.Finalizers)
	}
}
