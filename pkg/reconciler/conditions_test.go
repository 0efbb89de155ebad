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
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
)

func TestSetReadySummary(t *testing.T) {
	for _, tc := range []struct {
		name        string
		conds       []metav1.Condition
		readyReason string // "" for "Ready"
		wantStatus  metav1.ConditionStatus
		wantReason  string
		wantMsg     string // the exact message
	}{
		{name: "all true, with messages", conds: []metav1.Condition{
			{Type: "A", Status: metav1.ConditionTrue, Reason: "Done", Message: "A is done in many words"},
			{Type: "B", Status: metav1.ConditionTrue, Reason: "Done", Message: "B too"},
		}, wantStatus: metav1.ConditionTrue, wantReason: "Ready"},
		{name: "all true, the caller's reason", conds: []metav1.Condition{
			{Type: "A", Status: metav1.ConditionTrue, Reason: "Done"},
			{Type: "B", Status: metav1.ConditionTrue, Reason: "Done", Message: "B is done"},
		}, readyReason: "Provisioned", wantStatus: metav1.ConditionTrue, wantReason: "Provisioned"},
		{name: "all true, replacing a summary with a message", conds: []metav1.Condition{
			{Type: "A", Status: metav1.ConditionTrue, Reason: "Done", Message: "A is done"},
			{Type: "B", Status: metav1.ConditionTrue, Reason: "Done"},
			{Type: "Ready", Status: metav1.ConditionTrue, Reason: "InfoReported", Message: "* A: A is done", ObservedGeneration: 1},
		}, wantStatus: metav1.ConditionTrue, wantReason: "Ready"},
		{name: "one false", conds: []metav1.Condition{
			{Type: "A", Status: metav1.ConditionTrue, Reason: "Done", Message: "A is done"},
			{Type: "B", Status: metav1.ConditionFalse, Reason: "Waiting", Message: "B waits for the host"},
		}, wantStatus: metav1.ConditionFalse, wantReason: "IssuesReported", wantMsg: "* B: B waits for the host"},
		// Only a True summary is rewritten: the others keep Cluster API's reason and message.
		{name: "one unknown", conds: []metav1.Condition{
			{Type: "A", Status: metav1.ConditionTrue, Reason: "Done"},
			{Type: "B", Status: metav1.ConditionUnknown, Reason: "Probing", Message: "B is probed"},
		}, readyReason: "Provisioned", wantStatus: metav1.ConditionUnknown, wantReason: "UnknownReported", wantMsg: "* B: B is probed"},
		{name: "one not reported yet", conds: []metav1.Condition{
			{Type: "A", Status: metav1.ConditionTrue, Reason: "Done"},
		}, wantStatus: metav1.ConditionUnknown, wantReason: "UnknownReported", wantMsg: "* B: Condition not yet reported"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Generation: 3}}
			obj.Status.Conditions = tc.conds
			reason := tc.readyReason
			if reason == "" {
				reason = "Ready"
			}
			if err := SetReadySummary(obj, "Ready", reason, conditions.ForConditionTypes{"A", "B"}); err != nil {
				t.Fatal(err)
			}
			c := conditions.Get(obj, "Ready")
			if c == nil || c.Status != tc.wantStatus || c.Reason != tc.wantReason {
				t.Fatalf("Ready = %+v, want %s %s", c, tc.wantStatus, tc.wantReason)
			}
			if c.Message != tc.wantMsg {
				t.Errorf("message %q, want %q", c.Message, tc.wantMsg)
			}
			if c.ObservedGeneration != 3 {
				t.Errorf("observedGeneration %d, want 3", c.ObservedGeneration)
			}
			readys := 0
			for _, c := range obj.Status.Conditions {
				if c.Type == "Ready" {
					readys++
				}
			}
			if readys != 1 {
				t.Errorf("%d Ready conditions, want one: %+v", readys, obj.Status.Conditions)
			}
		})
	}
}

// TestSetReadySummaryErrors checks that SetReadySummary returns Cluster API's refusal of its
// options and then leaves the object as it was.
func TestSetReadySummaryErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    []conditions.SummaryOption
		wantErr string
	}{
		{name: "no condition types", wantErr: "option ForConditionTypes not provided or empty"},
		{name: "the summary among its sources", opts: []conditions.SummaryOption{conditions.ForConditionTypes{"A", "Ready"}},
			wantErr: "option ForConditionTypes cannot include Ready (target condition type)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := &clusterv1.Machine{}
			obj.Status.Conditions = []metav1.Condition{{Type: "A", Status: metav1.ConditionTrue, Reason: "Done"}}
			err := SetReadySummary(obj, "Ready", "Ready", tc.opts...)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
			if c := conditions.Get(obj, "Ready"); c != nil {
				t.Errorf("Ready = %+v after an error, want none", c)
			}
		})
	}
}

// TestGiveReasons: conditions stored as Cluster API v1beta1 ones (no reason when True, maybe none
// when False) get their status as reason; the others are left as they are.
func TestGiveReasons(t *testing.T) {
	at := metav1.Now()
	obj := &clusterv1.Machine{}
	obj.Status.Conditions = []metav1.Condition{
		{Type: "AgentReserved", Status: metav1.ConditionTrue, LastTransitionTime: at},
		{Type: "AgentValidated", Status: metav1.ConditionFalse, LastTransitionTime: at},
		{Type: "Installed", Status: metav1.ConditionFalse, Reason: "InstallationNotStarted", Message: "not yet", LastTransitionTime: at},
	}
	GiveReasons(obj)
	want := []metav1.Condition{
		{Type: "AgentReserved", Status: metav1.ConditionTrue, Reason: "True", LastTransitionTime: at},
		{Type: "AgentValidated", Status: metav1.ConditionFalse, Reason: "False", LastTransitionTime: at},
		{Type: "Installed", Status: metav1.ConditionFalse, Reason: "InstallationNotStarted", Message: "not yet", LastTransitionTime: at},
	}
	if !reflect.DeepEqual(obj.Status.Conditions, want) {
		t.Fatalf("conditions = %+v, want %+v", obj.Status.Conditions, want)
	}
}
