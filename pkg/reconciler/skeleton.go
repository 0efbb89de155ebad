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
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/tools/events"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/annotations"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/cluster-api/util/finalizers"
	"sigs.k8s.io/cluster-api/util/patch"
	"sigs.k8s.io/cluster-api/util/paused"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// Writer writes, at the end of a reconcile, what it changed in the object: Patcher, or Cluster
// API's patch.Helper (PatchHelper). observe, when not nil, records the generation the object has
// as status.observedGeneration.
type Writer interface {
	Patch(ctx context.Context, obj client.Object, observe func(generation int64)) error
}

// PatchHelper returns the Writer that is Cluster API's patch.Helper, which writes the conditions
// the controller owns under a 3-way merge (other controllers' conditions are kept).
func PatchHelper(ownedConditions ...string) func(client.Object, client.Client) (Writer, error) {
	return func(obj client.Object, c client.Client) (Writer, error) {
		h, err := patch.NewHelper(obj, c)
		if err != nil {
			return nil, fmt.Errorf("creating the patch helper: %w", err)
		}
		return helperWriter{helper: h, owned: ownedConditions}, nil
	}
}

type helperWriter struct {
	helper *patch.Helper
	owned  []string
}

func (w helperWriter) Patch(ctx context.Context, obj client.Object, observe func(int64)) error {
	if observe != nil {
		observe(obj.GetGeneration())
	}
	return w.helper.Patch(ctx, obj, patch.WithOwnedConditions{Conditions: w.owned})
}

// OnePatch returns Patcher as the Writer: one status write per reconcile, observedGeneration
// included, for objects whose conditions no other controller writes.
func OnePatch(obj client.Object, c client.Client) (Writer, error) { return NewPatcher(obj, c), nil }

// Opening says how Open opens the reconcile of an object.
type Opening struct {
	Client client.Client
	// Cluster is the object's Cluster; nil while it has none.
	Cluster *clusterv1.Cluster
	// Finalizer is the provider's finalizer on the object, added while it is not being deleted;
	// UpstreamFinalizer, the finalizer the upstream providers put on the same kind, is replaced
	// by it.
	Finalizer, UpstreamFinalizer string
	// FinalizerWithFirstWrite adds Finalizer in memory only, for the reconcile's first write to
	// carry (Opened.FinalizerUnsaved), rather than in a patch and a reconcile of its own.
	FinalizerWithFirstWrite bool
	// NewWriter makes the reconcile's Writer: PatchHelper(...) or OnePatch.
	NewWriter func(client.Object, client.Client) (Writer, error)
}

// Opened is a reconcile that Open opened; its Close writes the object.
type Opened struct {
	obj    paused.ConditionSetter
	client client.Client
	writer Writer
	// FinalizerUnsaved says that the finalizer is set in memory only (FinalizerWithFirstWrite).
	FinalizerUnsaved bool
}

// Open is the opening every reconciler of this repository runs once it has read obj and its
// owners (steps 3 to 5 of the skeleton, see the package comment): Cluster API's Paused condition
// (EnsurePausedCondition; without a Cluster, the paused annotation alone), the finalizer unless
// obj is being deleted, then the Writer, with FirstPausedCondition's condition set for it to
// carry. It returns nil, and the error if any, when the reconcile ends there: obj is paused, or
// a finalizer was written (the write brings another reconcile).
func Open(ctx context.Context, obj paused.ConditionSetter, o Opening) (*Opened, error) {
	if err := writeReasons(ctx, o.Client, obj); err != nil {
		return nil, err
	}
	first, isPaused, requeue, err := EnsurePausedCondition(ctx, o.Client, o.Cluster, obj)
	if err != nil || isPaused || requeue {
		return nil, err
	}
	deleting := !obj.GetDeletionTimestamp().IsZero()
	// Cluster API's check needs a Cluster: an object that has none yet is left alone on its own
	// paused annotation (but its deletion goes on, so that nothing is left behind).
	if o.Cluster == nil && annotations.HasPaused(obj) && !deleting {
		return nil, nil
	}
	opened := &Opened{obj: obj, client: o.Client}
	if !deleting {
		if o.UpstreamFinalizer != "" {
			if replaced, err := ReplaceFinalizer(ctx, o.Client, obj, o.UpstreamFinalizer, o.Finalizer); err != nil || replaced {
				return nil, err
			}
		}
		if !o.FinalizerWithFirstWrite {
			if added, err := finalizers.EnsureFinalizer(ctx, o.Client, obj, o.Finalizer); err != nil || added {
				return nil, err
			}
		}
	}
	if opened.writer, err = o.NewWriter(obj, o.Client); err != nil {
		return nil, err
	}
	if first != nil {
		conditions.Set(obj, *first)
	}
	if !deleting && o.FinalizerWithFirstWrite && controllerutil.AddFinalizer(obj, o.Finalizer) {
		opened.FinalizerUnsaved = true
	}
	return opened, nil
}

// Closing says how Close ends a reconcile. Every field may be nil.
type Closing struct {
	// Recorder records the Warning events of a failed reconcile and of a failed write.
	Recorder events.EventRecorder
	// Status computes the object's status from what the reconcile saw; it runs before
	// ReportError, so that a Problem's condition wins.
	Status func()
	// Summary sets the summary condition (Ready); it runs after ReportError, so that the summary
	// takes in a Problem's condition. An error fails the reconcile.
	Summary func() error
	// Observe records generation as status.observedGeneration; it is called only when the
	// reconcile succeeded.
	Observe func(generation int64)
}

// Close ends a reconcile that Open opened, deferred with the reconcile's named error: the
// status (Status), the error made visible on the object (ReportError), the summary, then one
// write with observedGeneration when the reconcile succeeded. A write that fails is a Warning
// event and joins *reterr, unless the object was being deleted and is gone (a reconcile of a
// stale copy): nothing is left to report on then.
func (o *Opened) Close(ctx context.Context, reterr *error, c Closing) {
	if c.Status != nil {
		c.Status()
	}
	ReportError(o.obj, c.Recorder, *reterr)
	if c.Summary != nil {
		if err := c.Summary(); err != nil {
			*reterr = errors.Join(*reterr, err)
		}
	}
	var observe func(int64)
	if *reterr == nil {
		observe = c.Observe
	}
	err := o.writer.Patch(ctx, o.obj, observe)
	if err == nil || (!o.obj.GetDeletionTimestamp().IsZero() && isNotFound(err)) {
		return
	}
	kind := "the object"
	if gvk, gvkErr := apiutil.GVKForObject(o.obj, o.client.Scheme()); gvkErr == nil {
		kind = gvk.Kind
	}
	err = fmt.Errorf("patching %s: %w", kind, err)
	ReportWriteError(o.obj, c.Recorder, err)
	*reterr = errors.Join(*reterr, err)
}

// isNotFound is apierrors.IsNotFound for an error or any error of an aggregate (patch.Helper
// aggregates the errors of its patches).
func isNotFound(err error) bool {
	if apierrors.IsNotFound(err) {
		return true
	}
	var agg kerrors.Aggregate
	if errors.As(err, &agg) {
		for _, e := range agg.Errors() {
			if isNotFound(e) {
				return true
			}
		}
	}
	return false
}
