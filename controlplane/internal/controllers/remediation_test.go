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

package controllers

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
)

// cpMachine returns a control-plane Machine with a node, created at minute age.
func cpMachine(name string, age int) *clusterv1.Machine {
	m := machine(name, age, true, "")
	m.Status.NodeRef = clusterv1.MachineNodeReference{Name: name}
	return m
}

// unhealthy marks m as a MachineHealthCheck does when it asks the owner to remediate.
func unhealthy(m *clusterv1.Machine) *clusterv1.Machine {
	m.Status.Conditions = append(m.Status.Conditions,
		metav1.Condition{Type: clusterv1.MachineHealthCheckSucceededCondition, Status: metav1.ConditionFalse, Reason: "UnhealthyNode"},
		metav1.Condition{Type: clusterv1.MachineOwnerRemediatedCondition, Status: metav1.ConditionFalse, Reason: clusterv1.MachineOwnerRemediatedWaitingForRemediationReason})
	return m
}

func TestMachineToRemediate(t *testing.T) {
	noNode := unhealthy(machine("nonode", 5, false, ""))
	tests := []struct {
		name     string
		machines []*clusterv1.Machine
		want     string
	}{
		{name: "none unhealthy", machines: []*clusterv1.Machine{cpMachine("a", 0), cpMachine("b", 1)}},
		{name: "the unhealthy one", machines: []*clusterv1.Machine{cpMachine("a", 0), unhealthy(cpMachine("b", 1))}, want: "b"},
		{name: "oldest of two", machines: []*clusterv1.Machine{unhealthy(cpMachine("a", 0)), unhealthy(cpMachine("b", 1))}, want: "a"},
		{name: "one without a node first", machines: []*clusterv1.Machine{unhealthy(cpMachine("a", 0)), noNode}, want: "nonode"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := machineToRemediate(tc.machines)
			if (got == nil) != (tc.want == "") || got != nil && got.Name != tc.want {
				t.Errorf("machineToRemediate = %v, want %q", got, tc.want)
			}
		})
	}
}

func TestDecideRemediation(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	replacement := func(retry int, ago time.Duration) *clusterv1.Machine {
		m := unhealthy(cpMachine("c", 2))
		d := &remediationData{Machine: "old", Timestamp: metav1.NewTime(now.Add(-ago)), RetryCount: retry}
		m.Annotations = map[string]string{controlplanev1.RemediationForAnnotation: d.String()}
		return m
	}
	deleting := cpMachine("b", 1)
	deleting.DeletionTimestamp = &metav1.Time{Time: now}
	tests := []struct {
		name       string
		replicas   int32
		spec       controlplanev1.OpenshiftAssistedControlPlaneRemediationSpec
		machines   func(m *clusterv1.Machine) []*clusterv1.Machine
		target     *clusterv1.Machine
		wantReason string
		wantMsg    string
		wantRetry  int
	}{
		{name: "first remediation", replicas: 3, target: unhealthy(cpMachine("c", 2))},
		{name: "single node", replicas: 1, target: unhealthy(cpMachine("c", 2)),
			machines:   func(m *clusterv1.Machine) []*clusterv1.Machine { return []*clusterv1.Machine{m} },
			wantReason: controlplanev1.MachineCannotBeRemediatedReason, wantMsg: "Single-node OpenShift cannot be remediated"},
		{name: "another Machine being deleted", replicas: 3, target: unhealthy(cpMachine("c", 2)),
			machines: func(m *clusterv1.Machine) []*clusterv1.Machine {
				return []*clusterv1.Machine{cpMachine("a", 0), deleting, m}
			},
			wantReason: controlplanev1.RemediationDeferredReason, wantMsg: "Waiting for Machine b to be deleted"},
		{name: "another Machine provisioning", replicas: 3, target: unhealthy(cpMachine("c", 2)),
			machines: func(m *clusterv1.Machine) []*clusterv1.Machine {
				return []*clusterv1.Machine{cpMachine("a", 0), machine("new", 3, false, ""), m}
			},
			wantReason: controlplanev1.RemediationDeferredReason, wantMsg: "Waiting for Machine new to be provisioned"},
		{name: "a replacement that fails within the retry period waits", replicas: 3,
			spec: controlplanev1.OpenshiftAssistedControlPlaneRemediationSpec{RetryPeriodSeconds: ptr.To[int32](600)}, target: replacement(0, 5*time.Minute),
			wantReason: controlplanev1.RemediationDeferredReason, wantMsg: "waiting spec.remediation.retryPeriodSeconds (10m0s)"},
		{name: "a replacement that fails after the retry period is a retry", replicas: 3,
			spec: controlplanev1.OpenshiftAssistedControlPlaneRemediationSpec{RetryPeriodSeconds: ptr.To[int32](60)}, target: replacement(0, 5*time.Minute), wantRetry: 1},
		{name: "maxRetry reached", replicas: 3,
			spec: controlplanev1.OpenshiftAssistedControlPlaneRemediationSpec{MaxRetry: ptr.To[int32](2)}, target: replacement(2, 5*time.Minute),
			wantReason: controlplanev1.MachineCannotBeRemediatedReason, wantMsg: "spec.remediation.maxRetry (2) is reached"},
		{name: "healthy longer than minHealthyPeriod: a new problem", replicas: 3,
			spec: controlplanev1.OpenshiftAssistedControlPlaneRemediationSpec{MaxRetry: ptr.To[int32](2)}, target: replacement(2, 2*time.Hour)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			oacp := testOACP(tc.replicas)
			oacp.Spec.Remediation = tc.spec
			machines := []*clusterv1.Machine{cpMachine("a", 0), cpMachine("b", 1), tc.target}
			if tc.machines != nil {
				machines = tc.machines(tc.target)
			}
			d := decideRemediation(oacp, machines, tc.target, now)
			if d.reason != tc.wantReason || !strings.Contains(d.message, tc.wantMsg) {
				t.Fatalf("decision = %q %q, want %q containing %q", d.reason, d.message, tc.wantReason, tc.wantMsg)
			}
			if tc.wantReason == "" && (d.data == nil || d.data.RetryCount != tc.wantRetry || d.data.Machine != "c") {
				t.Errorf("data = %+v, want machine c retry %d", d.data, tc.wantRetry)
			}
		})
	}
}
