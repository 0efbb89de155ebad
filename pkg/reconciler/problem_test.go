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
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/tools/events"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
)

func TestReportError(t *testing.T) {
	conflict := apierrors.NewConflict(schema.GroupResource{Resource: "machines"}, "m1", errors.New("the object has been modified"))
	for name, tc := range map[string]struct {
		err           error
		wantCondition *metav1.Condition
		wantEvent     string
	}{
		"no error: nothing": {},
		"a plain error: a Warning event only": {
			err:       fmt.Errorf("creating Machine m1: %w", errors.New("boom")),
			wantEvent: "Warning ReconcileError Creating Machine m1: boom",
		},
		"a problem, wrapped: its condition and a Warning event": {
			err: fmt.Errorf("writing the AgentClusterInstall: %w",
				NewProblem("Available", "InvalidSpec", errors.New("cluster network 10.0.0.0/26 is too small: correct Cluster.spec.clusterNetwork"))),
			wantCondition: &metav1.Condition{Type: "Available", Status: metav1.ConditionFalse, Reason: "InvalidSpec",
				Message: "Writing the AgentClusterInstall: cluster network 10.0.0.0/26 is too small: correct Cluster.spec.clusterNetwork"},
			wantEvent: "Warning ReconcileError Writing the AgentClusterInstall: cluster network 10.0.0.0/26 is too small: correct Cluster.spec.clusterNetwork",
		},
		"a conflict: the retry resolves it, no event": {err: fmt.Errorf("patching: %w", conflict)},
	} {
		t.Run(name, func(t *testing.T) {
			m := &clusterv1.Machine{}
			recorder := events.NewFakeRecorder(5)
			ReportError(m, recorder, tc.err)
			got := conditions.Get(m, "Available")
			switch {
			case tc.wantCondition == nil && got != nil:
				t.Errorf("condition %+v, want none", got)
			case tc.wantCondition != nil && (got == nil || got.Status != tc.wantCondition.Status || got.Reason != tc.wantCondition.Reason || got.Message != tc.wantCondition.Message):
				t.Errorf("condition %+v, want %+v", got, tc.wantCondition)
			}
			var event string
			select {
			case event = <-recorder.Events:
			default:
			}
			if event != tc.wantEvent {
				t.Errorf("event %q, want %q", event, tc.wantEvent)
			}
		})
	}
}

func TestReportWriteError(t *testing.T) {
	gr := schema.GroupResource{Group: "capi-provider.agent-install.openshift.io", Resource: "agentmachines"}
	for name, tc := range map[string]struct {
		err       error
		wantEvent string
	}{
		"no error: nothing": {},
		"a refused status: a Warning event": {
			err: fmt.Errorf("patching AgentMachine: %w", apierrors.NewInvalid(schema.GroupKind{Group: gr.Group, Kind: "AgentMachine"}, "m1",
				field.ErrorList{field.Required(field.NewPath("status", "clusterDeploymentReference"), "")})),
			wantEvent: `Warning ReconcileError Patching AgentMachine: AgentMachine.capi-provider.agent-install.openshift.io "m1" is invalid: ` +
				`status.clusterDeploymentReference: Required value`,
		},
		"a conflict: the retry resolves it, no event": {err: fmt.Errorf("patching: %w", apierrors.NewConflict(gr, "m1", errors.New("modified")))},
		"gone: no event": {err: fmt.Errorf("patching: %w", apierrors.NewNotFound(gr, "m1"))},
	} {
		t.Run(name, func(t *testing.T) {
			recorder := events.NewFakeRecorder(5)
			ReportWriteError(&clusterv1.Machine{}, recorder, tc.err)
			var event string
			select {
			case event = <-recorder.Events:
			default:
			}
			if event != tc.wantEvent {
				t.Errorf("event %q, want %q", event, tc.wantEvent)
			}
		})
	}
}
