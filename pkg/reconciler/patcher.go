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
	"fmt"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Patcher writes what one reconcile changed in an object of ours, in at most two requests: a
// merge patch of its metadata and spec, then a merge patch of its whole status, conditions
// included, that also carries status.observedGeneration as the generation the first patch left.
//
// Cluster API's patch.Helper sends up to three: the conditions, under a 3-way merge that keeps
// conditions other controllers own, apart from the rest of the status; and it can only record the
// generation the object was read with, so a reconcile that changes the spec (an infrastructure
// machine's providerID) costs one more reconcile and status write for observedGeneration alone.
// Patcher is for objects whose conditions only their own controller writes (its status patch
// replaces the condition list it changed); Cluster API's paused.EnsurePausedCondition, which runs
// before the Patcher is created, is the only other writer, and the Patcher starts from what it wrote.
type Patcher struct {
	client client.Client
	before client.Object
}

// NewPatcher remembers obj as read, to patch what changes in it.
func NewPatcher(obj client.Object, c client.Client) *Patcher {
	return &Patcher{client: c, before: obj.DeepCopyObject().(client.Object)}
}

// Patch writes the changes made to obj since NewPatcher: metadata and spec first, then the status.
// observe, when not nil, is called before the status is compared with the generation obj has
// after the first patch (the one it was read with when that patch sent nothing), to record it as
// status.observedGeneration. obj itself is not updated from the responses. Both patches are tried;
// their errors are aggregated. A status patch of an object that is gone because the reconcile
// removed its last finalizer is not an error.
func (p *Patcher) Patch(ctx context.Context, obj client.Object, observe func(generation int64)) error {
	before, err := runtime.DefaultUnstructuredConverter.ToUnstructured(p.before)
	if err != nil {
		return fmt.Errorf("converting %s to unstructured: %w", obj.GetName(), err)
	}
	after, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return fmt.Errorf("converting %s to unstructured: %w", obj.GetName(), err)
	}
	beforeStatus, afterStatus := before["status"], after["status"]
	delete(before, "status")
	delete(after, "status")

	var errs []error
	generation := obj.GetGeneration()
	if !apiequality.Semantic.DeepEqual(before, after) {
		written, err := p.send(ctx, obj, before, after, p.client.Patch)
		if err != nil {
			errs = append(errs, fmt.Errorf("patching metadata and spec: %w", err))
		} else {
			generation = written.GetGeneration()
		}
	}

	if observe != nil {
		observe(generation)
		withStatus, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return kerrors.NewAggregate(append(errs, fmt.Errorf("converting %s to unstructured: %w", obj.GetName(), err)))
		}
		afterStatus = withStatus["status"]
	}
	if read := obj.GetGeneration(); generation != read {
		// The conditions this reconcile set say they observed the generation it read
		// (conditions.Set); they were computed with the spec it then wrote.
		afterStatus = restampConditions(afterStatus, read, generation)
	}
	if !apiequality.Semantic.DeepEqual(beforeStatus, afterStatus) {
		statusPatch := func(ctx context.Context, o client.Object, patch client.Patch, _ ...client.PatchOption) error {
			return p.client.Status().Patch(ctx, o, patch)
		}
		_, err := p.send(ctx, obj, map[string]any{"status": beforeStatus}, map[string]any{"status": afterStatus}, statusPatch)
		// An object whose last finalizer this reconcile removed is gone: not an error.
		gone := apierrors.IsNotFound(err) && !obj.GetDeletionTimestamp().IsZero() && len(obj.GetFinalizers()) == 0
		if err != nil && !gone {
			errs = append(errs, fmt.Errorf("patching status: %w", err))
		}
	}
	return kerrors.NewAggregate(errs)
}

// send writes the JSON merge patch from before to after (unstructured contents) to a copy of obj
// through write, and returns the copy as the API server answered.
func (p *Patcher) send(ctx context.Context, obj client.Object, before, after map[string]any,
	write func(context.Context, client.Object, client.Patch, ...client.PatchOption) error) (client.Object, error) {
	data, err := client.MergeFrom(&unstructured.Unstructured{Object: before}).Data(&unstructured.Unstructured{Object: after})
	if err != nil {
		return nil, fmt.Errorf("computing the patch: %w", err)
	}
	written := obj.DeepCopyObject().(client.Object)
	if err := write(ctx, written, client.RawPatch(types.MergePatchType, data)); err != nil {
		return nil, err
	}
	return written, nil
}

// restampConditions returns status with the observedGeneration of its conditions that is from
// generation from replaced by the generation to (a copy; status is not changed).
func restampConditions(status any, from, to int64) any {
	m, ok := status.(map[string]any)
	if !ok {
		return status
	}
	m = runtime.DeepCopyJSON(m)
	list, _ := m["conditions"].([]any)
	for _, c := range list {
		if c, ok := c.(map[string]any); ok && c["observedGeneration"] == from {
			c["observedGeneration"] = to
		}
	}
	return m
}
