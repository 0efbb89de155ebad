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

package cvo

import (
	"context"
	"fmt"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/internal/steps"
)

// TestUpdateMovesTheMasterPoolThenTheWorkerPool drives an update from 4.17.3 to 4.17.5 and checks,
// at every step, what the machine-config operator guarantees: one node of a pool at a time, the
// master pool done before the ClusterVersion says Completed, the worker pool only after, and
// every node at the new Kubernetes version, uncordoned, in the end.
func TestUpdateMovesTheMasterPoolThenTheWorkerPool(t *testing.T) {
	ctx := context.Background()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := configv1.Install(s); err != nil {
		t.Fatal(err)
	}
	from, to := Release("4.17.3", ""), Release("4.17.5", "")
	cv := &configv1.ClusterVersion{ObjectMeta: metav1.ObjectMeta{Name: ClusterVersionName, UID: "cv"},
		Spec: configv1.ClusterVersionSpec{DesiredUpdate: &configv1.Update{Version: to.Version, Image: to.Image, Force: true}}}
	cv.Status.Desired = to
	cv.Status.History = []configv1.UpdateHistory{
		{State: configv1.PartialUpdate, Version: to.Version, Image: to.Image},
		{State: configv1.CompletedUpdate, Version: from.Version, Image: from.Image},
	}
	objs := []client.Object{cv}
	for i, name := range []string{"master-0", "master-1", "master-2", "worker-0", "worker-1"} {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name), Labels: map[string]string{}}}
		if i < 3 {
			n.Labels[MasterRoleLabel] = ""
		}
		n.Status.NodeInfo.KubeletVersion = "v1.30.4+a1b2c3d"
		objs = append(objs, n)
	}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).
		WithStatusSubresource(&configv1.ClusterVersion{}, &corev1.Node{}).Build()
	clock := clocktesting.NewFakePassiveClock(time.Now())
	r := &Reconciler{Client: c, Clock: clock, Durations: Durations{Update: time.Second, NodeUpdate: 3 * time.Second},
		KubernetesVersion: func(_ context.Context, image string) (string, error) {
			if image != to.Image {
				return "", fmt.Errorf("unexpected release %s", image)
			}
			return "1.30.6", nil
		},
		timer: steps.NewTimer(clock)}

	for i := 0; ; i++ {
		if i > 100 {
			t.Fatal("the update never finished")
		}
		if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKey{Name: ClusterVersionName}}); err != nil {
			t.Fatal(err)
		}
		got := &configv1.ClusterVersion{}
		if err := c.Get(ctx, client.ObjectKey{Name: ClusterVersionName}, got); err != nil {
			t.Fatal(err)
		}
		nodes := &corev1.NodeList{}
		if err := c.List(ctx, nodes); err != nil {
			t.Fatal(err)
		}
		completed := got.Status.History[0].State == configv1.CompletedUpdate
		cordoned, updated := map[bool]int{}, map[bool]int{}
		for _, n := range nodes.Items {
			_, master := n.Labels[MasterRoleLabel]
			if n.Spec.Unschedulable {
				cordoned[master]++
			}
			if n.Status.NodeInfo.KubeletVersion == "1.30.6" {
				updated[master]++
			}
		}
		if cordoned[true] > 1 || cordoned[false] > 1 {
			t.Fatalf("step %d: %d masters and %d workers cordoned at once, want at most one per pool", i, cordoned[true], cordoned[false])
		}
		if completed && updated[true] != 3 {
			t.Fatalf("step %d: the update is Completed with %d of 3 masters updated", i, updated[true])
		}
		if !completed && updated[false] > 0 {
			t.Fatalf("step %d: a worker was updated before the update completed", i)
		}
		if completed && updated[false] == 2 && cordoned[false] == 0 {
			for _, n := range nodes.Items {
				if n.Annotations[StateAnnotation] != StateDone || n.Annotations[CurrentConfigAnnotation] == "" {
					t.Fatalf("Node %s ends with annotations %v, want state Done and its current config", n.Name, n.Annotations)
				}
			}
			return
		}
		clock.SetTime(clock.Now().Add(time.Second))
	}
}
