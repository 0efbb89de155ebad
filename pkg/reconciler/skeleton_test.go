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
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

const (
	ours     = "example.test/ours"
	upstream = "example.test/upstream"
)

// skeletonWorld is a fake API server with one Machine, the object the skeleton reconciles here
// (any kind with v1beta2 conditions and an observedGeneration would do).
func skeletonWorld(t *testing.T, m *clusterv1.Machine) (client.Client, *clusterv1.Machine) {
	t.Helper()
	s := runtime.NewScheme()
	if err := clusterv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	m.Namespace, m.Name = "ns", "m"
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(m).WithStatusSubresource(&clusterv1.Machine{}).Build()
	return c, stored(t, c)
}

func stored(t *testing.T, c client.Client) *clusterv1.Machine {
	t.Helper()
	m := &clusterv1.Machine{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "m"}, m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestOpen checks when the opening ends a reconcile, and what it wrote then.
func TestOpen(t *testing.T) {
	running, paused := &clusterv1.Cluster{}, &clusterv1.Cluster{Spec: clusterv1.ClusterSpec{Paused: ptr.To(true)}}
	for name, tc := range map[string]struct {
		cluster        *clusterv1.Cluster
		obj            clusterv1.Machine
		withFirstWrite bool
		wantOpened     bool
		wantFinalizers []string
		wantPaused     metav1.ConditionStatus // of the stored object; "" for none
		wantUnsaved    bool
	}{
		"new: the finalizer, in a write of its own": {cluster: running, wantFinalizers: []string{ours}},
		"upstream's finalizer: replaced by ours": {cluster: running,
			obj: clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Finalizers: []string{"other", upstream}}}, wantFinalizers: []string{"other", ours}},
		"finalizer there: opened, the Paused condition for the reconcile's write": {cluster: running,
			obj: clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Finalizers: []string{ours}}}, wantOpened: true, wantFinalizers: []string{ours}},
		"finalizer with the first write: opened, nothing written": {cluster: running, withFirstWrite: true,
			wantOpened: true, wantUnsaved: true},
		"paused Cluster: Cluster API's Paused condition, nothing else": {cluster: paused, wantPaused: metav1.ConditionTrue},
		"no Cluster yet: opened, no Paused condition": {obj: clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Finalizers: []string{ours}}},
			wantOpened: true, wantFinalizers: []string{ours}},
		"no Cluster yet, paused annotation: left alone": {
			obj: clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{clusterv1.PausedAnnotation: ""}}}},
		"no Cluster, paused annotation, deleted: the deletion goes on": {
			obj: clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{clusterv1.PausedAnnotation: ""},
				Finalizers: []string{upstream}, DeletionTimestamp: &metav1.Time{Time: time.Now()}}},
			wantOpened: true, wantFinalizers: []string{upstream}},
	} {
		t.Run(name, func(t *testing.T) {
			c, m := skeletonWorld(t, tc.obj.DeepCopy())
			opened, err := Open(context.Background(), m, Opening{Client: c, Cluster: tc.cluster, Finalizer: ours, UpstreamFinalizer: upstream,
				FinalizerWithFirstWrite: tc.withFirstWrite, NewWriter: PatchHelper()})
			if err != nil {
				t.Fatal(err)
			}
			if (opened != nil) != tc.wantOpened {
				t.Fatalf("opened: %v, want %v", opened != nil, tc.wantOpened)
			}
			got := stored(t, c)
			if !slices.Equal(got.Finalizers, tc.wantFinalizers) {
				t.Errorf("stored finalizers %v, want %v", got.Finalizers, tc.wantFinalizers)
			}
			if p := conditions.Get(got, clusterv1.PausedCondition); (p == nil && tc.wantPaused != "") || (p != nil && p.Status != tc.wantPaused) {
				t.Errorf("stored Paused condition %+v, want status %q", p, tc.wantPaused)
			}
			if opened == nil {
				return
			}
			if opened.FinalizerUnsaved != tc.wantUnsaved || (tc.wantUnsaved && !slices.Contains(m.Finalizers, ours)) {
				t.Errorf("FinalizerUnsaved %v with finalizers %v in memory, want %v", opened.FinalizerUnsaved, m.Finalizers, tc.wantUnsaved)
			}
			// The first Paused condition waits in memory for the reconcile's own write.
			if p := conditions.Get(m, clusterv1.PausedCondition); (p != nil) != (tc.cluster != nil) {
				t.Errorf("Paused condition in memory %+v, want one: %v", p, tc.cluster != nil)
			}
		})
	}
}

// TestClose checks the closing's order and its one write: the status, then a Problem's condition
// over it, then the summary that takes it in; observedGeneration only for a reconcile that
// succeeded; the finalizer that waited for the first write.
func TestClose(t *testing.T) {
	problem := NewProblem("Thing", "Broken", errors.New("the thing is broken: fix it"))
	for name, tc := range map[string]struct {
		writer       func(client.Object, client.Client) (Writer, error)
		err          error
		wantObserved int64
		wantThing    string // the reason of the stored Thing condition
		wantReady    metav1.ConditionStatus
		wantEvent    bool
	}{
		"success, patch.Helper": {writer: PatchHelper("Thing", "Ready", clusterv1.PausedCondition), wantObserved: 2, wantThing: "Fine", wantReady: metav1.ConditionTrue},
		"success, one patch":    {writer: OnePatch, wantObserved: 2, wantThing: "Fine", wantReady: metav1.ConditionTrue},
		"a problem: its condition wins, the summary says it, no observedGeneration": {writer: OnePatch, err: problem,
			wantThing: "Broken", wantReady: metav1.ConditionFalse, wantEvent: true},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			c, m := skeletonWorld(t, &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Generation: 2}})
			opened, err := Open(ctx, m, Opening{Client: c, Cluster: &clusterv1.Cluster{}, Finalizer: ours,
				FinalizerWithFirstWrite: true, NewWriter: tc.writer})
			if err != nil || opened == nil {
				t.Fatalf("Open: %v, %v", opened, err)
			}
			recorder := events.NewFakeRecorder(5)
			var order []string
			reterr := tc.err
			opened.Close(ctx, &reterr, Closing{Recorder: recorder,
				Status: func() {
					order = append(order, "status")
					conditions.Set(m, metav1.Condition{Type: "Thing", Status: metav1.ConditionTrue, Reason: "Fine"})
				},
				Summary: func() error {
					order = append(order, "summary")
					return SetReadySummary(m, "Ready", "Ready", conditions.ForConditionTypes{"Thing"})
				},
				Observe: func(generation int64) { m.Status.ObservedGeneration = generation }})
			if !errors.Is(reterr, tc.err) || (tc.err == nil && reterr != nil) {
				t.Errorf("error %v, want %v", reterr, tc.err)
			}
			if !slices.Equal(order, []string{"status", "summary"}) {
				t.Errorf("order %v, want status, then summary", order)
			}
			got := stored(t, c)
			if !slices.Contains(got.Finalizers, ours) {
				t.Errorf("stored finalizers %v: the first write did not carry %s", got.Finalizers, ours)
			}
			if got.Status.ObservedGeneration != tc.wantObserved {
				t.Errorf("observedGeneration %d, want %d", got.Status.ObservedGeneration, tc.wantObserved)
			}
			if thing := conditions.Get(got, "Thing"); thing == nil || thing.Reason != tc.wantThing {
				t.Errorf("Thing %+v, want reason %s", thing, tc.wantThing)
			}
			if ready := conditions.Get(got, "Ready"); ready == nil || ready.Status != tc.wantReady {
				t.Errorf("Ready %+v, want %s", ready, tc.wantReady)
			}
			if p := conditions.Get(got, clusterv1.PausedCondition); p == nil || p.Status != metav1.ConditionFalse {
				t.Errorf("Paused %+v: the first Paused condition did not go out with the write", p)
			}
			if gotEvent := len(recorder.Events) > 0; gotEvent != tc.wantEvent {
				t.Errorf("a Warning event: %v, want %v", gotEvent, tc.wantEvent)
			}
		})
	}
}

// TestCloseOfAGoneObject: the reconcile of a stale copy of an object that was being deleted, and
// is gone, reports nothing; the same write failing for an object that is not being deleted does.
func TestCloseOfAGoneObject(t *testing.T) {
	for _, deleting := range []bool{true, false} {
		ctx := context.Background()
		obj := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Finalizers: []string{ours}}}
		c, m := skeletonWorld(t, obj)
		if deleting {
			if err := c.Delete(ctx, m); err != nil {
				t.Fatal(err)
			}
			m = stored(t, c)
		}
		opened, err := Open(ctx, m, Opening{Client: c, Finalizer: ours, NewWriter: PatchHelper("Thing")})
		if err != nil || opened == nil {
			t.Fatalf("Open: %v, %v", opened, err)
		}
		// Another reconcile removed the finalizer meanwhile (or someone deleted the object).
		gone := stored(t, c)
		gone.Finalizers = nil
		if err := c.Update(ctx, gone); err != nil {
			t.Fatal(err)
		}
		if !deleting {
			if err := c.Delete(ctx, gone); err != nil {
				t.Fatal(err)
			}
		}
		conditions.Set(m, metav1.Condition{Type: "Thing", Status: metav1.ConditionTrue, Reason: "Fine"})
		recorder := events.NewFakeRecorder(5)
		var reterr error
		opened.Close(ctx, &reterr, Closing{Recorder: recorder})
		if deleting && reterr != nil {
			t.Errorf("deleting, gone: error %v, want none", reterr)
		}
		if !deleting && reterr == nil {
			t.Error("not deleting, gone: no error, want the failed write")
		}
	}
}

// TestOpenGivesStoredConditionsAReason: conditions stored without a reason (Cluster API v1beta1
// ones that upstream wrote) get one in a write of their own before any other, so that even the
// write of a paused Cluster's Paused condition, which sends every condition back, passes a schema
// that requires a reason (played here by refusing any status write that leaves one without).
func TestOpenGivesStoredConditionsAReason(t *testing.T) {
	paused := &clusterv1.Cluster{Spec: clusterv1.ClusterSpec{Paused: ptr.To(true)}}
	at := metav1.Now()
	for name, cluster := range map[string]*clusterv1.Cluster{"running Cluster": {}, "paused Cluster": paused} {
		t.Run(name, func(t *testing.T) {
			m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Finalizers: []string{ours}}}
			m.Status.Conditions = []metav1.Condition{{Type: "AgentReserved", Status: metav1.ConditionTrue, LastTransitionTime: at}}
			c, m := skeletonWorld(t, m)
			writes := 0
			schema := interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
				writes++
				sent, err := patch.Data(obj)
				if err != nil {
					return err
				}
				if strings.Contains(string(sent), `"reason":""`) {
					return apierrors.NewInvalid(clusterv1.GroupVersion.WithKind("Machine").GroupKind(), obj.GetName(),
						field.ErrorList{field.Invalid(field.NewPath("status", "conditions", "reason"), "", "should be at least 1 chars long")})
				}
				return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
			}}
			c = interceptor.NewClient(c.(client.WithWatch), schema)
			if _, err := Open(context.Background(), m, Opening{Client: c, Cluster: cluster, Finalizer: ours, NewWriter: PatchHelper()}); err != nil {
				t.Fatal(err)
			}
			got := stored(t, c)
			if r := conditions.Get(got, "AgentReserved"); r == nil || r.Reason != "True" {
				t.Errorf("stored AgentReserved %+v, want reason True", r)
			}
			if writes == 0 {
				t.Error("no status write")
			}
			// Once given, nothing more to write.
			before := writes
			if err := writeReasons(context.Background(), c, got); err != nil || writes != before {
				t.Errorf("second writeReasons: %v, %d writes more", err, writes-before)
			}
		})
	}
}
