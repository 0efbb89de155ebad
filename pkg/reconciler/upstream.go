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
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/cluster-api/util"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// What a switch from the upstream providers (openshift-assisted/cluster-api-provider-openshift-assisted,
// openshift/cluster-api-provider-agent) leaves behind: objects under their finalizers, and
// objects they created with a plain (non-controller) owner reference to the object this
// provider now reconciles.

// ReplaceFinalizer swaps finalizer from for to on obj in one patch (optimistic lock), and says
// whether it did: from is the upstream provider's finalizer, which nothing removes once that
// provider is gone.
func ReplaceFinalizer(ctx context.Context, c client.Client, obj client.Object, from, to string) (bool, error) {
	if !controllerutil.ContainsFinalizer(obj, from) {
		return false, nil
	}
	before, ok := obj.DeepCopyObject().(client.Object)
	if !ok {
		return false, fmt.Errorf("copying %T", obj)
	}
	controllerutil.RemoveFinalizer(obj, from)
	controllerutil.AddFinalizer(obj, to)
	if err := c.Patch(ctx, obj, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return false, fmt.Errorf("replacing the upstream provider's finalizer %s: %w", from, err)
	}
	return true, nil
}

// OwnedBy tells whether owner is among obj's owners (by UID), as its controller or not.
func OwnedBy(obj, owner metav1.Object) bool {
	return slices.ContainsFunc(obj.GetOwnerReferences(), func(o metav1.OwnerReference) bool { return o.UID == owner.GetUID() })
}

// CreatedFor tells whether obj is what an upstream provider created for owner: owner is among
// its owners and obj has no controller.
func CreatedFor(obj, owner metav1.Object) bool {
	return metav1.GetControllerOfNoCopy(obj) == nil && OwnedBy(obj, owner)
}

// AdoptOwned makes owner (of kind ownerGVK) the controller of obj, as read from the API server,
// when obj has no controller and owner is one of its owners: what the upstream providers created
// for owner. labels are added in the same patch (metadata only, optimistic lock: the spec the
// upstream provider wrote is kept). It says whether it adopted obj; an object with a controller,
// or without owner among its owners, is left alone.
func AdoptOwned(ctx context.Context, c client.Client, owner client.Object, ownerGVK schema.GroupVersionKind, obj client.Object, labels map[string]string) (bool, error) {
	if !CreatedFor(obj, owner) {
		return false, nil
	}
	before, ok := obj.DeepCopyObject().(client.Object)
	if !ok {
		return false, fmt.Errorf("copying %T", obj)
	}
	// The upstream reference (same group, kind and name) becomes a controller reference.
	obj.SetOwnerReferences(util.EnsureOwnerRef(obj.GetOwnerReferences(), *metav1.NewControllerRef(owner, ownerGVK)))
	if len(labels) > 0 {
		merged := obj.GetLabels()
		if merged == nil {
			merged = map[string]string{}
		}
		maps.Copy(merged, labels)
		obj.SetLabels(merged)
	}
	if err := c.Patch(ctx, obj, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return false, fmt.Errorf("adopting %T %s: %w", obj, obj.GetName(), err)
	}
	return true, nil
}
