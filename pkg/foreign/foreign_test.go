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

package foreign_test

import (
	"context"
	"strings"
	"testing"
	"time"

	hivev1 "github.com/openshift/hive/apis/hive/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/foreign"
)

const hiveFinalizer = "hive.openshift.io/deprovision"

func TestWait(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) *metav1.Time { return &metav1.Time{Time: now.Add(-d)} }
	wrote := func(d time.Duration) []metav1.ManagedFieldsEntry {
		return []metav1.ManagedFieldsEntry{
			{Manager: "capoa-controlplane-manager", Operation: metav1.ManagedFieldsOperationUpdate, Time: ago(time.Hour)},
			{Manager: "hive-controllers", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status", Time: ago(d)},
		}
	}
	for name, tc := range map[string]struct {
		timeout     time.Duration
		deletedAgo  time.Duration
		managed     []metav1.ManagedFieldsEntry
		crd         string // "", "installed", "deleting"
		wantRemoved bool
		wantReason  foreign.Reason
		wantMessage string
		wantRequeue time.Duration
	}{
		"just deleted: wait until the timeout": {
			timeout: 5 * time.Minute, deletedAgo: time.Minute, crd: "installed",
			wantMessage: "Waiting for Hive to remove the finalizers hive.openshift.io/deprovision of ClusterDeployment ns/c1 " +
				"(last acted on 1m0s ago); they are removed after 5m0s without activity",
			wantRequeue: 4*time.Minute + time.Second,
		},
		"deleted long ago, nobody wrote it since: removed": {
			timeout: 5 * time.Minute, deletedAgo: 10 * time.Minute, crd: "installed", managed: wrote(time.Hour),
			wantRemoved: true, wantReason: foreign.NoControllerActivity,
			wantMessage: "No controller acted on ClusterDeployment ns/c1 for 10m0s (is Hive running?): removed its finalizers hive.openshift.io/deprovision",
		},
		"deleted long ago, but its controller is still working on it: wait": {
			timeout: 5 * time.Minute, deletedAgo: 10 * time.Minute, crd: "installed", managed: wrote(time.Minute),
			wantMessage: "Waiting for Hive to remove the finalizers hive.openshift.io/deprovision of ClusterDeployment ns/c1 " +
				"(last acted on 1m0s ago); they are removed after 5m0s without activity",
			wantRequeue: 4*time.Minute + time.Second,
		},
		"its CRD is being deleted: removed at once": {
			timeout: 5 * time.Minute, deletedAgo: time.Second, crd: "deleting",
			wantRemoved: true, wantReason: foreign.CRDGone,
			wantMessage: "The CRD clusterdeployments.hive.openshift.io is being deleted (its service is uninstalled): " +
				"removed the finalizers hive.openshift.io/deprovision of ClusterDeployment ns/c1",
		},
		"its CRD is not installed: removed at once": {
			timeout: 5 * time.Minute, deletedAgo: time.Second,
			wantRemoved: true, wantReason: foreign.CRDGone,
			wantMessage: "The CRD clusterdeployments.hive.openshift.io is not installed: " +
				"removed the finalizers hive.openshift.io/deprovision of ClusterDeployment ns/c1",
		},
		"timeout 0: waits as long as Hive needs": {
			deletedAgo: 48 * time.Hour, crd: "installed",
			wantMessage: "Waiting for Hive to remove the finalizers hive.openshift.io/deprovision of ClusterDeployment ns/c1 (last acted on 48h0m0s ago)",
		},
	} {
		t.Run(name, func(t *testing.T) {
			s := runtime.NewScheme()
			if err := hivev1.AddToScheme(s); err != nil {
				t.Fatal(err)
			}
			if err := apiextensionsv1.AddToScheme(s); err != nil {
				t.Fatal(err)
			}
			cd := &hivev1.ClusterDeployment{ObjectMeta: metav1.ObjectMeta{
				Namespace: "ns", Name: "c1", Finalizers: []string{hiveFinalizer}, Labels: map[string]string{"keep": "me"},
				DeletionTimestamp: ago(tc.deletedAgo),
			}}
			objs := []client.Object{cd}
			if tc.crd != "" {
				crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "clusterdeployments.hive.openshift.io"}}
				if tc.crd == "deleting" {
					crd.Finalizers = []string{apiextensionsv1.CustomResourceCleanupFinalizer}
					crd.DeletionTimestamp = ago(time.Second)
				}
				objs = append(objs, crd)
			}
			// The fake client's RESTMapper knows no kind, as a hub whose discovery lost the CRD:
			// the CRD itself decides.
			c := fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).Build()
			p := foreign.Policy{Timeout: tc.timeout, Clock: clocktesting.NewFakePassiveClock(now)}
			got := &hivev1.ClusterDeployment{}
			if err := c.Get(context.Background(), client.ObjectKeyFromObject(cd), got); err != nil {
				t.Fatal(err)
			}
			got.ManagedFields = tc.managed // the fake client refuses to store them
			v, err := p.Wait(context.Background(), c, got, "Hive")
			if err != nil {
				t.Fatal(err)
			}
			if v.Removed != tc.wantRemoved || v.Reason != tc.wantReason || v.Message != tc.wantMessage || v.RequeueAfter != tc.wantRequeue {
				t.Errorf("got removed %v reason %q requeue %s message\n  %q\nwant removed %v reason %q requeue %s message\n  %q",
					v.Removed, v.Reason, v.RequeueAfter, v.Message, tc.wantRemoved, tc.wantReason, tc.wantRequeue, tc.wantMessage)
			}
			after := &hivev1.ClusterDeployment{}
			err = c.Get(context.Background(), client.ObjectKeyFromObject(cd), after)
			if tc.wantRemoved {
				// The fake client deletes an object whose last finalizer goes, as the API server does.
				if err == nil {
					t.Errorf("finalizers %v left on the ClusterDeployment", after.Finalizers)
				}
				return
			}
			if err != nil || strings.Join(after.Finalizers, ",") != hiveFinalizer || after.Labels["keep"] != "me" {
				t.Errorf("the ClusterDeployment changed while waiting: %v %v", err, after.ObjectMeta)
			}
		})
	}
}

// TestLastActivity: the later of the deletion and any field manager's last write.
func TestLastActivity(t *testing.T) {
	deleted := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	o := &hivev1.ClusterDeployment{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &metav1.Time{Time: deleted}}}
	if got := foreign.LastActivity(o); !got.Equal(deleted) {
		t.Errorf("no managed fields: %s, want the deletion %s", got, deleted)
	}
	later := deleted.Add(time.Minute)
	o.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "a", Time: &metav1.Time{Time: deleted.Add(-time.Hour)}}, {Manager: "b", Time: &metav1.Time{Time: later}}, {Manager: "c"}}
	if got := foreign.LastActivity(o); !got.Equal(later) {
		t.Errorf("%s, want the last write %s", got, later)
	}
}
