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
	"time"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// LabRequeueCap is the longest delayed requeue of the third-party controllers a test or the lab
// runs on its fast clock (CappedRequeues). CAPM3 polls every 30 s for what it does not watch (a
// workload cluster's Node, for one): a real host takes many minutes from provisioning to its
// Node, so a poll costs it nothing; a simulated host takes under a second, and each 30 s poll
// was most of a day-2 host's time in the lab.
const LabRequeueCap = time.Second

// CappedRequeues returns a controller's NewQueue (controller.Options) whose delayed requeues (a
// reconcile's RequeueAfter) wait at most limit: the controller looks again sooner, as it would
// on a clock that runs faster, and nothing else changes. Its error backoff (rate-limited
// requeues) is the rate limiter's, unchanged. A controller may reconcile an object at any time,
// so an earlier look changes no outcome, only when it is seen.
func CappedRequeues(limit time.Duration) func(string, workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
	return func(name string, rateLimiter workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
		// The queue controller-runtime makes without the priority queue (controller.NewTyped).
		q := workqueue.NewTypedRateLimitingQueueWithConfig(rateLimiter, workqueue.TypedRateLimitingQueueConfig[reconcile.Request]{Name: name})
		return cappedQueue{TypedRateLimitingInterface: q, limit: limit}
	}
}

type cappedQueue struct {
	workqueue.TypedRateLimitingInterface[reconcile.Request]
	limit time.Duration
}

// AddAfter adds item after d, or after the cap when d is longer.
func (q cappedQueue) AddAfter(item reconcile.Request, d time.Duration) {
	q.TypedRateLimitingInterface.AddAfter(item, min(d, q.limit))
}
