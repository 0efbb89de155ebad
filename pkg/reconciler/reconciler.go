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

// Package reconciler holds what every reconciler of this repository does the same way, in the
// order of the one skeleton they all follow:
//
//  1. get the object (not found: done);
//  2. LeaveAlone: an object clusterctl move is deleting, or one outside this manager's
//     --watch-filter, is not touched;
//  3. read the owners (Machine, Cluster): a bootstrap config or infrastructure machine that no
//     Machine owns yet is not written to for WaitForOwner's time;
//  4. Open (skeleton.go): with a Cluster, EnsurePausedCondition (Cluster API's helper, but for a
//     new object that is not paused; without a Cluster, annotations.HasPaused); the finalizer
//     (Cluster API's finalizers.EnsureFinalizer, upstream's replaced) unless the object is being
//     deleted; the reconcile's Writer: a patch.Helper that writes the conditions the controller
//     owns (and FirstPausedCondition's), or, for the AgentMachine reconciler, which binds hosts in
//     bursts, Patcher: one status write per reconcile, the finalizer carried by its first write;
//  5. defer Opened.Close: the status, ReportError, the Ready summary, then the write, with
//     status.observedGeneration only when the reconcile succeeded; the deletion path runs under
//     it too and removes the finalizer in memory;
//  6. reconcileDelete or reconcileNormal.
//
// Events use the events API (k8s.io/client-go/tools/events, mgr.GetEventRecorder) with
// corev1.EventTypeNormal and corev1.EventTypeWarning; watches filter the reconciled kind with
// predicates.ResourceHasFilterLabel, and LeaveAlone checks the label again for requests mapped
// from other kinds.
package reconciler

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/annotations"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/cluster-api/util/paused"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/move"
)

// LeaveAlone is what a reconciler asks right after reading obj: true, and logged, when clusterctl
// move is deleting obj here after creating it on another management cluster (move.DeletingForMove),
// or when the manager runs with a watch filter (--watch-filter) that obj's
// cluster.x-k8s.io/watch-filter label does not match.
func LeaveAlone(ctx context.Context, obj metav1.Object, watchFilterValue string) bool {
	switch {
	case move.DeletingForMove(obj):
		ctrl.LoggerFrom(ctx).V(4).Info("Deleted by clusterctl move: left alone")
		return true
	case !InWatchFilter(obj, watchFilterValue):
		ctrl.LoggerFrom(ctx).V(4).Info("Outside the watch filter: left alone", "watchFilter", watchFilterValue)
		return true
	}
	return false
}

// UnownedGracePeriod is how long a bootstrap config or infrastructure machine that no Machine owns
// yet is left untouched after its creation (WaitForOwner).
const UnownedGracePeriod = 10 * time.Second

// WaitForOwner tells, for obj that no Machine owns yet, how long to leave it untouched: the rest
// of UnownedGracePeriod since its creation, else 0 (write to it, for instance a condition that
// says it waits for its Machine). Cluster API's MachineSet creates a bootstrap config and an
// infrastructure machine with server-side apply, then patches each once more (its
// managedFields, ssa.RemoveManagedFieldsForLabelsAndAnnotations) with only three retries 10 ms
// apart on a conflict; when they are used up it returns an error and leaves the object it
// created, with no Machine (cluster-api v1.13 createBootstrapConfig and createInfraMachine do
// not delete it). A reconciler that adds its finalizer and its conditions at once causes those
// conflicts: the lab's cluster deletion found such a worker config left behind.
// Cluster API's kubeadm bootstrap provider does not write to a config without an owner either.
func WaitForOwner(obj metav1.Object, now time.Time) time.Duration {
	if !obj.GetDeletionTimestamp().IsZero() {
		return 0
	}
	return max(0, obj.GetCreationTimestamp().Add(UnownedGracePeriod).Sub(now))
}

// InWatchFilter tells whether a manager started with --watch-filter=watchFilterValue handles obj:
// always without a filter, else when obj's cluster.x-k8s.io/watch-filter label has that value.
func InWatchFilter(obj metav1.Object, watchFilterValue string) bool {
	return watchFilterValue == "" || obj.GetLabels()[clusterv1.WatchLabel] == watchFilterValue
}

// EnsurePausedCondition is Cluster API's paused.EnsurePausedCondition for obj of cluster (nothing
// without a Cluster), except for a new object that is not paused: then it writes nothing and
// returns the first Paused condition (FirstPausedCondition), for the caller to set once its patch
// helper exists.
func EnsurePausedCondition(ctx context.Context, c client.Client, cluster *clusterv1.Cluster, obj paused.ConditionSetter) (
	first *metav1.Condition, isPaused, requeue bool, err error) {
	if first = FirstPausedCondition(cluster, obj); first != nil || cluster == nil {
		return first, false, false, nil
	}
	isPaused, requeue, err = paused.EnsurePausedCondition(ctx, c, cluster, obj)
	return nil, isPaused, requeue, err
}

// FirstPausedCondition returns the Paused condition that Cluster API's paused.EnsurePausedCondition
// would write first on obj (False, NotPaused) when obj has none yet and neither obj nor its
// Cluster is paused; otherwise nil, and EnsurePausedCondition handles the condition. Set the
// returned condition after creating the reconcile's patch helper, so that it goes out with the
// reconcile's own status patch: EnsurePausedCondition would patch it at once and end the
// reconcile, which costs every new object a status patch and a reconcile of their own.
func FirstPausedCondition(cluster *clusterv1.Cluster, obj interface {
	metav1.Object
	conditions.Getter
}) *metav1.Condition {
	if cluster == nil || conditions.Get(obj, clusterv1.PausedCondition) != nil || annotations.IsPaused(cluster, obj) {
		return nil
	}
	return &metav1.Condition{Type: clusterv1.PausedCondition, Status: metav1.ConditionFalse, Reason: clusterv1.NotPausedReason,
		ObservedGeneration: obj.GetGeneration()}
}
