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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
