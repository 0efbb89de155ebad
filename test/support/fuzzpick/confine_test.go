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
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// errorRecorder is a testing.TB that records what Errorf reports instead of failing.
type errorRecorder struct {
	testing.TB
	errs []string
}

func (r *errorRecorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// TestConfined: every kind of request into a forbidden namespace is reported; requests in other
// namespaces, and a list of every namespace, are not.
func TestConfined(t *testing.T) {
	ctx := context.Background()
	secret := func(ns string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "s"}}
	}
	for _, tc := range []struct {
		ns        string
		forbidden bool
	}{{"mine", false}, {"theirs", true}} {
		rec := &errorRecorder{TB: t}
		c := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).WithObjects(secret(tc.ns)).
			WithInterceptorFuncs(Confined(rec, "theirs", "elsewhere")).Build()
		_ = c.Get(ctx, client.ObjectKey{Namespace: tc.ns, Name: "s"}, &corev1.Secret{})
		_ = c.List(ctx, &corev1.SecretList{}, client.InNamespace(tc.ns))
		_ = c.Patch(ctx, secret(tc.ns), client.RawPatch("application/merge-patch+json", []byte(`{}`)))
		_ = c.Status().Patch(ctx, secret(tc.ns), client.RawPatch("application/merge-patch+json", []byte(`{}`)))
		_ = c.Update(ctx, secret(tc.ns))
		_ = c.Delete(ctx, secret(tc.ns))
		_ = c.Create(ctx, secret(tc.ns))
		want := 0
		if tc.forbidden {
			want = 7
		}
		if len(rec.errs) != want {
			t.Errorf("namespace %s: %d requests reported (%s), want %d", tc.ns, len(rec.errs), strings.Join(rec.errs, "; "), want)
		}
	}
	rec := &errorRecorder{TB: t}
	c := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).WithInterceptorFuncs(Confined(rec, "theirs")).Build()
	_ = c.List(ctx, &corev1.SecretList{})
	if len(rec.errs) != 0 {
		t.Errorf("a list of every namespace is reported: %v", rec.errs)
	}
}
