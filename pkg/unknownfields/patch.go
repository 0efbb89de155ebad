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

// Package unknownfields writes objects of other services' CRDs (assisted-service, Hive) from the
// Go types this project pins, without erasing the fields a newer CRD on the hub has and those
// types lack.
//
// A typed object read from the cache has lost such fields at decode. A JSON merge patch from it
// (client.MergeFrom, controllerutil.CreateOrPatch) sends only what changed, so an unknown field of
// an object survives; but a merge patch replaces an array whole (RFC 7386), and the elements it
// sends are encoded from the typed structs: a changed array of objects erases every unknown field
// of its elements, those that did not change included. Patch and CreateOrPatch send the same
// patch as client.MergeFrom when it holds no array of objects (the common case: no request more);
// when it does, they read the object live, as unstructured (one GET), put back into each element
// of such an array that is unchanged (its known fields equal those of an element of the live
// array) the live element whole, with its unknown fields, and send the patch locked to the live
// object's resourceVersion, so that a change made meanwhile is read again (a conflict, retried a
// few times here) rather than overwritten.
//
// Limits: an element that is new or changed carries only what the types know (the unknown fields
// of an element whose known fields changed are not guessed); arrays inside an unchanged element are
// kept with it, whole. Arrays under metadata (ownerReferences, finalizers, managedFields) are
// Kubernetes' own types, which the pinned apimachinery knows: they are sent as they are.
package unknownfields

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// Patch writes obj, changed from before (a copy of obj as read), to the API server with a JSON
// merge patch that keeps the unknown fields of the unchanged elements of every array of objects
// it changes (see the package documentation). live reads the object from the API server as
// unstructured: an APIReader, or a client that caches no unstructured objects (nil: c, which
// then must not). obj is updated from the response, as by c.Patch.
func Patch(ctx context.Context, c client.Client, live client.Reader, before, obj client.Object, opts ...client.PatchOption) error {
	return patch(ctx, c, live, before, obj, func(p client.Patch) error { return c.Patch(ctx, obj, p, opts...) })
}

// CreateOrPatch is controllerutil.CreateOrPatch with the patches of Patch: it gets obj (from
// c, cached), creates it when missing (mutate applied), and otherwise patches what mutate changed
// (the status through the status subresource), reporting the result as controllerutil does. live
// is as for Patch.
func CreateOrPatch(ctx context.Context, c client.Client, live client.Reader, obj client.Object, mutate controllerutil.MutateFn) (controllerutil.OperationResult, error) {
	key := client.ObjectKeyFromObject(obj)
	if err := c.Get(ctx, key, obj); err != nil {
		if !apierrors.IsNotFound(err) {
			return controllerutil.OperationResultNone, err
		}
		if err := apply(mutate, key, obj); err != nil {
			return controllerutil.OperationResultNone, err
		}
		if err := c.Create(ctx, obj); err != nil {
			return controllerutil.OperationResultNone, err
		}
		return controllerutil.OperationResultCreated, nil
	}
	original, ok := obj.DeepCopyObject().(client.Object)
	if !ok {
		return controllerutil.OperationResultNone, fmt.Errorf("copying %T", obj)
	}
	before, beforeStatus, err := withoutStatus(original)
	if err != nil {
		return controllerutil.OperationResultNone, err
	}
	if err := apply(mutate, key, obj); err != nil {
		return controllerutil.OperationResultNone, err
	}
	after, afterStatus, err := withoutStatus(obj)
	if err != nil {
		return controllerutil.OperationResultNone, err
	}
	result := controllerutil.OperationResultNone
	if !reflect.DeepEqual(before, after) {
		if err := Patch(ctx, c, live, original, obj); err != nil {
			return result, err
		}
		result = controllerutil.OperationResultUpdated
	}
	if reflect.DeepEqual(beforeStatus, afterStatus) {
		return result, nil
	}
	if result == controllerutil.OperationResultUpdated {
		// The response replaced the status mutate set: put it back.
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return result, err
		}
		if afterStatus == nil {
			delete(u, "status")
		} else {
			u["status"] = afterStatus
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u, obj); err != nil {
			return result, err
		}
	}
	if err := patch(ctx, c, live, original, obj, func(p client.Patch) error { return c.Status().Patch(ctx, obj, p) }); err != nil {
		return result, err
	}
	if result == controllerutil.OperationResultUpdated {
		return controllerutil.OperationResultUpdatedStatus, nil
	}
	return controllerutil.OperationResultUpdatedStatusOnly, nil
}

// apply runs mutate and checks that it kept the object's name and namespace.
func apply(mutate controllerutil.MutateFn, key client.ObjectKey, obj client.Object) error {
	if mutate == nil {
		return nil
	}
	if err := mutate(); err != nil {
		return err
	}
	if client.ObjectKeyFromObject(obj) != key {
		return fmt.Errorf("MutateFn cannot mutate object name and/or object namespace")
	}
	return nil
}

// withoutStatus returns obj as unstructured without its status, and the status (nil for none).
func withoutStatus(obj client.Object) (map[string]any, any, error) {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj.DeepCopyObject())
	if err != nil {
		return nil, nil, err
	}
	status := u["status"]
	delete(u, "status")
	return u, status, nil
}

// patch sends the merge patch from before to obj through send: as client.MergeFrom when it holds
// no array of objects, otherwise with the unknown fields of unchanged elements put back, locked to
// the live object's resourceVersion.
func patch(ctx context.Context, c client.Client, live client.Reader, before, obj client.Object, send func(client.Patch) error) error {
	merge := client.MergeFrom(before)
	data, err := merge.Data(obj)
	if err != nil {
		return fmt.Errorf("computing the patch of %s: %w", obj.GetName(), err)
	}
	var doc map[string]any
	if err := utiljson.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("reading the patch of %s: %w", obj.GetName(), err)
	}
	if !objectArrays(doc) {
		return send(merge)
	}
	if live == nil {
		live = c
	}
	gvk, err := apiutil.GVKForObject(obj, c.Scheme())
	if err != nil {
		return err
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		if err := live.Get(ctx, client.ObjectKeyFromObject(obj), u); err != nil {
			return fmt.Errorf("reading %s %s: %w", gvk.Kind, obj.GetName(), err)
		}
		known, err := knownFields(obj, u)
		if err != nil {
			return err
		}
		out := runtime.DeepCopyJSON(doc)
		keepUnknown(out, u.Object, known)
		meta, _ := out["metadata"].(map[string]any)
		if meta == nil {
			meta = map[string]any{}
			out["metadata"] = meta
		}
		meta["resourceVersion"] = u.GetResourceVersion()
		raw, err := json.Marshal(out)
		if err != nil {
			return err
		}
		return send(client.RawPatch(types.MergePatchType, raw))
	})
}

// knownFields returns live as the Go type of obj sees it: the fields that type lacks dropped, at
// every depth.
func knownFields(obj client.Object, live *unstructured.Unstructured) (map[string]any, error) {
	typed, ok := reflect.New(reflect.TypeOf(obj).Elem()).Interface().(client.Object)
	if !ok {
		return nil, fmt.Errorf("making a %T", obj)
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(live.Object, typed); err != nil {
		return nil, fmt.Errorf("reading %s as %T: %w", live.GetName(), obj, err)
	}
	return runtime.DefaultUnstructuredConverter.ToUnstructured(typed)
}

// objectArrays tells whether a merge patch holds an array with an object among its elements,
// outside metadata.
func objectArrays(doc map[string]any) bool {
	for k, v := range doc {
		if k != "metadata" && hasObjectArrays(v) {
			return true
		}
	}
	return false
}

func hasObjectArrays(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		for _, e := range v {
			if hasObjectArrays(e) {
				return true
			}
		}
	case []any:
		for _, e := range v {
			if _, ok := e.(map[string]any); ok {
				return true
			}
		}
	}
	return false
}

// keepUnknown changes the merge patch doc (outside metadata): in each array of objects it holds,
// an element whose known fields equal those of an element of the live array (known is live as
// the Go types see it) becomes that live element, whole, with the fields the types lack. Each live
// element is taken once, at the same position when it matches there.
func keepUnknown(doc, live, known map[string]any) {
	for k, v := range doc {
		if k == "metadata" {
			continue
		}
		keep(doc, k, v, live[k], known[k])
	}
}

func keep(parent map[string]any, k string, v, live, known any) {
	switch v := v.(type) {
	case map[string]any:
		lm, _ := live.(map[string]any)
		km, _ := known.(map[string]any)
		if lm == nil || km == nil {
			return
		}
		for kk, vv := range v {
			keep(v, kk, vv, lm[kk], km[kk])
		}
	case []any:
		la, _ := live.([]any)
		ka, _ := known.([]any)
		if len(la) == 0 || len(la) != len(ka) {
			return
		}
		parent[k] = keepElements(v, la, ka)
	}
}

// keepElements returns elems with each element that equals an element of known replaced by the
// live element at its position.
func keepElements(elems, live, known []any) []any {
	used := make([]bool, len(known))
	match := func(i int, e any) int {
		if i < len(known) && !used[i] && jsonEqual(e, known[i]) {
			return i
		}
		for j := range known {
			if !used[j] && jsonEqual(e, known[j]) {
				return j
			}
		}
		return -1
	}
	out := make([]any, len(elems))
	for i, e := range elems {
		out[i] = e
		if _, ok := e.(map[string]any); !ok {
			continue
		}
		if j := match(i, e); j >= 0 {
			used[j] = true
			out[i] = runtime.DeepCopyJSONValue(live[j])
		}
	}
	return out
}

// jsonEqual compares two JSON values as they encode (numbers decoded as int64 or float64 alike).
func jsonEqual(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
}
