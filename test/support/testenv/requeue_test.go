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

package testenv

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func TestCappedRequeuesShortenLongDelaysOnly(t *testing.T) {
	q := CappedRequeues(50*time.Millisecond)("test", workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	long := reconcile.Request{NamespacedName: types.NamespacedName{Name: "long"}}
	short := reconcile.Request{NamespacedName: types.NamespacedName{Name: "short"}}
	start := time.Now()
	q.AddAfter(long, time.Hour)
	q.AddAfter(short, 10*time.Millisecond)
	var order []string
	for range 2 {
		item, _ := q.Get()
		order = append(order, item.Name)
		q.Done(item)
	}
	// A delay an hour long came in the cap's time (bounded loosely for a busy machine), after the
	// shorter one.
	if waited := time.Since(start); waited > 10*time.Second {
		t.Fatalf("the capped requeue came after %s", waited)
	}
	if order[0] != "short" || order[1] != "long" {
		t.Fatalf("requeued in the order %v, want [short long]", order)
	}
}
