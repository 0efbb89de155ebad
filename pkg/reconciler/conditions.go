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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// SetReadySummary sets obj's readyType condition to the summary of its other conditions (Cluster
// API's SetSummaryCondition). When that summary is True it is written as True with readyReason
// and no message: a healthy object says so in a word, as KubeadmConfig and Metal3Cluster do, and
// the informational messages of its conditions do not flow into its Machine's conditions (the
// summary's default reason, InfoReported, carried all of them).
func SetReadySummary(obj conditions.Setter, readyType, readyReason string, opts ...conditions.SummaryOption) error {
	if err := conditions.SetSummaryCondition(obj, obj, readyType, opts...); err != nil {
		return err
	}
	if c := conditions.Get(obj, readyType); c != nil && c.Status == metav1.ConditionTrue {
		conditions.Set(obj, metav1.Condition{Type: readyType, Status: metav1.ConditionTrue, Reason: readyReason, ObservedGeneration: c.ObservedGeneration})
	}
	return nil
}

// GiveReasons gives each of obj's conditions that has no reason its status as the reason, which
// the schema of metav1.Condition requires and Cluster API v1beta1 conditions leave out (True
// ones always: conditions.MarkTrue; False ones may). Upstream's controllers stored such
// conditions on the objects that this project's CRDs serve after a switch (cluster-api-provider-
// agent's AgentMachine before its v1beta2 API); a status write that carried one unchanged would
// be refused ("reason ... should be at least 1 chars long"), so every reconcile gives them one
// before its first write (Open). Severity, which they also carry, is pruned by the API server on
// read. It says whether it changed any.
func GiveReasons(obj conditions.Setter) bool {
	conds := obj.GetConditions()
	changed := false
	for i := range conds {
		if conds[i].Reason == "" {
			conds[i].Reason = string(conds[i].Status)
			changed = true
		}
	}
	if changed {
		obj.SetConditions(conds)
	}
	return changed
}

// writeReasons gives obj's reasonless conditions a reason (GiveReasons) in a status patch of its
// own, locked to the resourceVersion read, before any other write of the reconcile: Cluster
// API's paused.EnsurePausedCondition, the first that may write, sends the whole list of
// conditions back, and would be refused with them as stored.
func writeReasons(ctx context.Context, c client.Client, obj interface {
	client.Object
	conditions.Setter
}) error {
	before, ok := obj.DeepCopyObject().(client.Object)
	if !ok {
		return fmt.Errorf("copying %T", obj)
	}
	if !GiveReasons(obj) {
		return nil
	}
	if err := c.Status().Patch(ctx, obj, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("giving a reason to the conditions stored without one: %w", err)
	}
	return nil
}
