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
	"errors"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/cluster-api/util/conditions"
)

// ReconcileErrorEvent is the reason of the Warning event a failed reconcile records.
const ReconcileErrorEvent = "ReconcileError"

// Problem is a reconcile error the user has to act on (a spec that cannot be applied, an object
// of that name that belongs to someone else): the condition that reports it, with a reason. Its
// message is the error's, which says what to do.
type Problem struct {
	Condition string
	Reason    string
	Err       error
}

// NewProblem returns err as a Problem that condition reports with reason.
func NewProblem(condition, reason string, err error) error {
	return &Problem{Condition: condition, Reason: reason, Err: err}
}

func (p *Problem) Error() string { return p.Err.Error() }

func (p *Problem) Unwrap() error { return p.Err }

// ReportError makes a reconcile error visible on obj, the object the user edits, rather than in
// the manager's log only: a Problem sets its condition False with its reason and the error as
// message (call this after the status is computed, so that it wins), and every error but a
// conflict (a stale read that the retry resolves) is a Warning event. The events recorder
// aggregates repeats into a series, so a retried error is one event.
func ReportError(obj interface {
	conditions.Setter
	runtime.Object
}, recorder events.EventRecorder, err error) {
	if err == nil {
		return
	}
	if p := (*Problem)(nil); errors.As(err, &p) {
		conditions.Set(obj, metav1.Condition{Type: p.Condition, Status: metav1.ConditionFalse, Reason: p.Reason, Message: capitalized(err.Error())})
	}
	if apierrors.IsConflict(err) {
		return
	}
	recorder.Eventf(obj, nil, corev1.EventTypeWarning, ReconcileErrorEvent, "Reconcile", "%s", capitalized(err.Error()))
}

// ReportWriteError makes visible on obj that writing obj itself failed, so that no condition of
// it could say so (its status refused by the API server's validation, for example): a Warning
// event. A conflict (the retry resolves it) and a NotFound (obj is gone) are not reported.
func ReportWriteError(obj runtime.Object, recorder events.EventRecorder, err error) {
	if err == nil || apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return
	}
	recorder.Eventf(obj, nil, corev1.EventTypeWarning, ReconcileErrorEvent, "Reconcile", "%s", capitalized(err.Error()))
}

func capitalized(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}
