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
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// reconcileBound is how long the reconciles of one fuzz input may take: a fake client answers at
// once, so only a loop or an unbounded wait takes longer.
const reconcileBound = 20 * time.Second

// NoPanic runs reconcile (the reconciles of one fuzz input, over objs) and fails t when it panics
// or does not return within 20 s, printing the objects. Errors are the reconciler's business.
func NoPanic(t *testing.T, objs []client.Object, reconcile func()) {
	t.Helper()
	done := make(chan any, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- fmt.Sprintf("%v\n%s", p, debug.Stack())
			}
		}()
		reconcile()
		done <- nil
	}()
	select {
	case p := <-done:
		if p != nil {
			t.Fatalf("reconcile panicked: %v\nobjects: %s", p, Describe(objs))
		}
	case <-time.After(reconcileBound):
		buf := make([]byte, 1<<20)
		t.Fatalf("reconcile did not return within %s (a loop or a wait without bound)\n%s\nobjects: %s",
			reconcileBound, buf[:runtime.Stack(buf, true)], Describe(objs))
	}
}

// Describe prints objs for a failure message.
func Describe(objs []client.Object) string {
	var b strings.Builder
	for _, o := range objs {
		fmt.Fprintf(&b, "\n%T %+v", o, o)
	}
	return b.String()
}
