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

package reconciler

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
)

func TestLeaveAlone(t *testing.T) {
	for _, tc := range []struct {
		annotations, labels map[string]string
		filter              string
		want                bool
	}{
		{nil, nil, "", false},
		{map[string]string{"cluster.x-k8s.io/paused": ""}, nil, "", false},
		// As clusterctl move writes it (its patch replaces every annotation).
		{map[string]string{"clusterctl.cluster.x-k8s.io/delete-for-move": ""}, nil, "", true},
		{nil, nil, "blue", true},
		{nil, map[string]string{"cluster.x-k8s.io/watch-filter": "green"}, "blue", true},
		{nil, map[string]string{"cluster.x-k8s.io/watch-filter": "blue"}, "blue", false},
		{map[string]string{"clusterctl.cluster.x-k8s.io/delete-for-move": ""}, map[string]string{"cluster.x-k8s.io/watch-filter": "blue"}, "blue", true},
	} {
		obj := &metav1.ObjectMeta{Annotations: tc.annotations, Labels: tc.labels}
		if got := LeaveAlone(context.Background(), obj, tc.filter); got != tc.want {
			t.Errorf("LeaveAlone(annotations %v, labels %v, filter %q) = %v, want %v", tc.annotations, tc.labels, tc.filter, got, tc.want)
		}
	}
}

func TestInWatchFilter(t *testing.T) {
	labelled := &metav1.ObjectMeta{Labels: map[string]string{"cluster.x-k8s.io/watch-filter": "blue"}}
	for _, tc := range []struct {
		obj    *metav1.ObjectMeta
		filter string
		want   bool
	}{
		{&metav1.ObjectMeta{}, "", true},
		{labelled, "", true},
		{&metav1.ObjectMeta{}, "blue", false},
		{labelled, "blue", true},
		{labelled, "green", false},
	} {
		if got := InWatchFilter(tc.obj, tc.filter); got != tc.want {
			t.Errorf("InWatchFilter(labels %v, %q) = %v, want %v", tc.obj.Labels, tc.filter, got, tc.want)
		}
	}
}

func TestWaitForOwner(t *testing.T) {
	now := time.Date(2026, 11, 26, 6, 0, 0, 0, time.UTC)
	deleted := metav1.NewTime(now)
	for name, tc := range map[string]struct {
		obj  *metav1.ObjectMeta
		want time.Duration
	}{
		"just created":              {&metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(now)}, UnownedGracePeriod},
		"created 4 s ago":           {&metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(now.Add(-4 * time.Second))}, UnownedGracePeriod - 4*time.Second},
		"older than the period":     {&metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(now.Add(-time.Minute))}, 0},
		"no creation time":          {&metav1.ObjectMeta{}, 0},
		"deleted before it has one": {&metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(now), DeletionTimestamp: &deleted}, 0},
	} {
		if got := WaitForOwner(tc.obj, now); got != tc.want {
			t.Errorf("%s: WaitForOwner = %s, want %s", name, got, tc.want)
		}
	}
}

func TestFirstPausedCondition(t *testing.T) {
	paused := &clusterv1.Cluster{Spec: clusterv1.ClusterSpec{Paused: ptr.To(true)}}
	running := &clusterv1.Cluster{}
	withCondition := func(status metav1.ConditionStatus) *clusterv1.Machine {
		m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Generation: 3}}
		conditions.Set(m, metav1.Condition{Type: clusterv1.PausedCondition, Status: status, Reason: "Any"})
		return m
	}
	annotated := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{clusterv1.PausedAnnotation: ""}}}
	for name, tc := range map[string]struct {
		cluster *clusterv1.Cluster
		obj     *clusterv1.Machine
		want    bool
	}{
		"a new object of a running Cluster: set with the reconcile's patch": {cluster: running, obj: &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Generation: 3}}, want: true},
		"no Cluster: nothing":                          {obj: &clusterv1.Machine{}},
		"a paused Cluster: Cluster API's helper":       {cluster: paused, obj: &clusterv1.Machine{}},
		"a paused object: Cluster API's helper":        {cluster: running, obj: annotated},
		"a condition already: Cluster API's helper":    {cluster: running, obj: withCondition(metav1.ConditionFalse)},
		"paused before, not now: Cluster API's helper": {cluster: running, obj: withCondition(metav1.ConditionTrue)},
	} {
		t.Run(name, func(t *testing.T) {
			got := FirstPausedCondition(tc.cluster, tc.obj)
			if (got != nil) != tc.want {
				t.Fatalf("FirstPausedCondition = %+v, want a condition: %v", got, tc.want)
			}
			if got != nil && (got.Status != metav1.ConditionFalse || got.Reason != clusterv1.NotPausedReason || got.ObservedGeneration != 3) {
				t.Errorf("FirstPausedCondition = %+v, want False, %s, observedGeneration 3 (as paused.EnsurePausedCondition writes it)", got, clusterv1.NotPausedReason)
			}
		})
	}
}
