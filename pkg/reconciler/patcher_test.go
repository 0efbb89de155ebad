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
	"reflect"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// TestPatcher checks what Patcher sends: nothing when nothing changed, one patch for the
// metadata and spec, one for the whole status (conditions included), and observedGeneration as
// the generation the first patch left. The fake client does not bump generations: the
// interceptor does it, as the API server does for a spec change.
func TestPatcher(t *testing.T) {
	for name, tc := range map[string]struct {
		change        func(d *appsv1.Deployment)
		observe       bool
		gone          bool
		wantPatches   []string
		wantObserved  int64
		wantCondition bool
	}{
		"nothing changed": {change: func(*appsv1.Deployment) {}},
		"generation observed already": {
			change: func(*appsv1.Deployment) {}, observe: true,
		},
		"status only, conditions and fields in one patch": {
			change: func(d *appsv1.Deployment) {
				d.Status.Replicas = 3
				d.Status.Conditions = append(d.Status.Conditions, appsv1.DeploymentCondition{Type: "Available", Status: corev1.ConditionTrue})
			},
			wantPatches: []string{"status"}, wantCondition: true,
		},
		"spec and status: observedGeneration is the generation the spec patch left": {
			change: func(d *appsv1.Deployment) {
				d.Spec.Replicas = ptr.To[int32](5)
				d.Labels = map[string]string{"a": "b"}
				d.Status.Conditions = append(d.Status.Conditions, appsv1.DeploymentCondition{Type: "Available", Status: corev1.ConditionTrue})
			},
			observe: true, wantPatches: []string{"", "status"}, wantObserved: 3, wantCondition: true,
		},
		"spec only, not observed (a failed reconcile)": {
			change:      func(d *appsv1.Deployment) { d.Spec.Replicas = ptr.To[int32](5) },
			wantPatches: []string{""}, wantObserved: 1,
		},
		"status of an object gone with its last finalizer": {
			change: func(d *appsv1.Deployment) {
				d.Finalizers = nil
				d.Status.Replicas = 3
			},
			gone: true, wantPatches: []string{"", "status"}, wantObserved: 1,
		},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			stored := &appsv1.Deployment{
				ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "d", Generation: 2, Finalizers: []string{"f"}},
				Spec:       appsv1.DeploymentSpec{Replicas: ptr.To[int32](1)},
				Status:     appsv1.DeploymentStatus{ObservedGeneration: 1},
			}
			if tc.observe && tc.wantPatches == nil {
				stored.Status.ObservedGeneration = 2
			}
			var patches []string
			c := fake.NewClientBuilder().WithScheme(newScheme(t)).WithObjects(stored).WithStatusSubresource(stored).
				WithInterceptorFuncs(interceptor.Funcs{
					Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
						patches = append(patches, "")
						if err := c.Patch(ctx, obj, patch, opts...); err != nil {
							return err
						}
						d := obj.(*appsv1.Deployment)
						d.Generation++
						return c.Update(ctx, d)
					},
					SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
						patches = append(patches, sub)
						if tc.gone {
							return apierrors.NewNotFound(schema.GroupResource{Group: "apps", Resource: "deployments"}, obj.GetName())
						}
						return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
					},
				}).Build()
			d := &appsv1.Deployment{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(stored), d); err != nil {
				t.Fatal(err)
			}
			if tc.gone {
				d.DeletionTimestamp = ptr.To(metav1.Now())
			}
			p := NewPatcher(d, c)
			tc.change(d)
			var observe func(int64)
			if tc.observe {
				observe = func(g int64) { d.Status.ObservedGeneration = g }
			}
			if err := p.Patch(ctx, d, observe); err != nil {
				t.Fatalf("Patch: %v", err)
			}
			if !reflect.DeepEqual(patches, tc.wantPatches) {
				t.Fatalf("patches sent %q, want %q", patches, tc.wantPatches)
			}
			if tc.gone {
				return
			}
			got := &appsv1.Deployment{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(stored), got); err != nil {
				t.Fatal(err)
			}
			if want := tc.wantObserved; want != 0 && got.Status.ObservedGeneration != want {
				t.Errorf("observedGeneration %d, want %d", got.Status.ObservedGeneration, want)
			}
			if tc.wantCondition != (len(got.Status.Conditions) == 1) {
				t.Errorf("conditions stored: %v", got.Status.Conditions)
			}
			if *got.Spec.Replicas != *d.Spec.Replicas || !reflect.DeepEqual(got.Labels, d.Labels) {
				t.Errorf("spec or labels not stored: %v %v", *got.Spec.Replicas, got.Labels)
			}
		})
	}
}

// TestRestampConditions: the conditions a reconcile set before its spec patch bumped the
// generation say they observed the new one; others (set by an earlier reconcile) are kept.
func TestRestampConditions(t *testing.T) {
	status := map[string]any{"conditions": []any{
		map[string]any{"type": "Ready", "observedGeneration": int64(1)},
		map[string]any{"type": "Old", "observedGeneration": int64(0)},
	}, "ready": true}
	got := restampConditions(status, 1, 2)
	want := map[string]any{"conditions": []any{
		map[string]any{"type": "Ready", "observedGeneration": int64(2)},
		map[string]any{"type": "Old", "observedGeneration": int64(0)},
	}, "ready": true}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("restampConditions = %v, want %v", got, want)
	}
	if status["conditions"].([]any)[0].(map[string]any)["observedGeneration"] != int64(1) {
		t.Error("the status given was changed")
	}
	if got := restampConditions(nil, 1, 2); got != nil {
		t.Errorf("no status: %v", got)
	}
}
