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

package fuzzpick

import (
	"context"
	"slices"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// Confined returns the interceptor of a fake client that fails tb on any get, list, patch,
// status (or other subresource) patch, update, create or delete in one of the namespaces
// forbidden: other tenants', whose objects a fuzz input may name. A list of every namespace (the
// namespace "", as a cluster-wide index is read) is allowed: it is no request into one of them.
func Confined(tb testing.TB, forbidden ...string) interceptor.Funcs {
	tb.Helper()
	touched := func(verb, ns string) {
		if slices.Contains(forbidden, ns) {
			tb.Errorf("the reconcile sent a %s in namespace %s", verb, ns)
		}
	}
	return interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			touched("get", key.Namespace)
			return c.Get(ctx, key, obj, opts...)
		},
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			touched("list", (&client.ListOptions{}).ApplyOptions(opts).Namespace)
			return c.List(ctx, list, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			touched("patch", obj.GetNamespace())
			return c.Patch(ctx, obj, patch, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			touched(sub+" patch", obj.GetNamespace())
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			touched("update", obj.GetNamespace())
			return c.Update(ctx, obj, opts...)
		},
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			touched("create", obj.GetNamespace())
			return c.Create(ctx, obj, opts...)
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			touched("delete", obj.GetNamespace())
			return c.Delete(ctx, obj, opts...)
		},
	}
}
