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
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/cluster-api/util/patch"
	ctrl "sigs.k8s.io/controller-runtime"

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/metrics"
)

// Remediation follows the Cluster API contract for control-plane providers: a MachineHealthCheck
// marks an unhealthy control-plane Machine HealthCheckSucceeded=False and OwnerRemediated=False,
// and the control plane, its owner, replaces it. The rules are KubeadmControlPlane's
// (controlplane/kubeadm/internal/controllers/remediation.go): one remediation at a time (the
// remediation-in-progress annotation until the replacement exists), never for a single node,
// never while another Machine is being created or deleted, only while etcd keeps quorum without
// the Machine's member, with spec.remediation's retry limit and period. The member itself is
// removed by the pre-terminate hook (etcd.go); the replacement is created by the scale up.

// remediationData is what the remediation annotations hold, in KCP's format.
type remediationData struct {
	Machine    string      `json:"machine"`
	Timestamp  metav1.Time `json:"timestamp"`
	RetryCount int         `json:"retryCount"`
}

func parseRemediationData(v string) (*remediationData, error) {
	d := &remediationData{}
	if err := json.Unmarshal([]byte(v), d); err != nil {
		return nil, fmt.Errorf("reading remediation data %q: %w", v, err)
	}
	return d, nil
}

func (d *remediationData) String() string {
	b, _ := json.Marshal(d) //nolint:errchkjson // a struct of strings, a time and an int
	return string(b)
}

// needsRemediation tells whether a MachineHealthCheck asked the owner to remediate m.
func needsRemediation(m *clusterv1.Machine) bool {
	return conditions.IsFalse(m, clusterv1.MachineHealthCheckSucceededCondition) && conditions.IsFalse(m, clusterv1.MachineOwnerRemediatedCondition)
}

// machineToRemediate picks the Machine to remediate first: one without a node (it never came
// up), else the oldest, as KCP's getMachineToBeRemediated does in its simplest form.
func machineToRemediate(machines []*clusterv1.Machine) *clusterv1.Machine {
	var pick *clusterv1.Machine
	for _, m := range machines {
		if !needsRemediation(m) {
			continue
		}
		switch {
		case pick == nil:
			pick = m
		case nodeName(pick) != "" && nodeName(m) == "":
			pick = m
		}
	}
	return pick
}

// remediationDecision is whether a Machine can be remediated now.
type remediationDecision struct {
	// reason and message are set when it cannot: the OwnerRemediated condition says so.
	reason, message string
	// data is what the remediation records when it goes ahead.
	data *remediationData
}

// decideRemediation applies the rules that need no etcd: single node, other Machines being
// created or deleted, retry limit and period. now is the time of the reconcile.
func decideRemediation(oacp *controlplanev1.OpenshiftAssistedControlPlane, machines []*clusterv1.Machine, m *clusterv1.Machine, now time.Time) remediationDecision {
	deferred := func(msg string) remediationDecision {
		return remediationDecision{reason: controlplanev1.RemediationDeferredReason, message: msg}
	}
	if len(machines) <= 1 || replicas(oacp) == 1 {
		return remediationDecision{reason: controlplanev1.MachineCannotBeRemediatedReason,
			message: "Single-node OpenShift cannot be remediated by replacing its only node: repair or reinstall the host"}
	}
	for _, o := range machines {
		if o == m {
			continue
		}
		if !o.DeletionTimestamp.IsZero() {
			return deferred(fmt.Sprintf("Waiting for Machine %s to be deleted before remediating", o.Name))
		}
		if nodeName(o) == "" {
			return deferred(fmt.Sprintf("Waiting for Machine %s to be provisioned before remediating", o.Name))
		}
	}
	data := &remediationData{Machine: m.Name, Timestamp: metav1.NewTime(now)}
	last, ok := m.Annotations[controlplanev1.RemediationForAnnotation]
	if !ok {
		return remediationDecision{data: data}
	}
	prev, err := parseRemediationData(last)
	if err != nil {
		return remediationDecision{data: data} // unreadable: count as a first remediation
	}
	spec := oacp.Spec.Remediation
	minHealthy := time.Duration(ptr.Deref(spec.MinHealthyPeriodSeconds, 3600)) * time.Second
	retryPeriod := time.Duration(ptr.Deref(spec.RetryPeriodSeconds, 0)) * time.Second
	if prev.Timestamp.Add(minHealthy).Before(now) {
		return remediationDecision{data: data} // healthy long enough: a new problem
	}
	if prev.Timestamp.Add(retryPeriod).After(now) {
		return deferred(fmt.Sprintf("Machine %s replaced Machine %s at %s; waiting spec.remediation.retryPeriodSeconds (%s) before remediating it",
			m.Name, prev.Machine, prev.Timestamp.UTC().Format(time.RFC3339), retryPeriod))
	}
	if spec.MaxRetry != nil && prev.RetryCount >= int(*spec.MaxRetry) {
		return remediationDecision{reason: controlplanev1.MachineCannotBeRemediatedReason,
			message: fmt.Sprintf("Machine %s is the replacement number %d for an unhealthy Machine and failed too: spec.remediation.maxRetry (%d) is reached; find why the replacements fail, then delete the Machine",
				m.Name, prev.RetryCount+1, *spec.MaxRetry)}
	}
	data.RetryCount = prev.RetryCount + 1
	return remediationDecision{data: data}
}

// reconcileRemediation remediates one unhealthy control-plane Machine, when it is safe. It
// returns true when it deleted one (the reconcile stops there).
func (r *OpenshiftAssistedControlPlaneReconciler) reconcileRemediation(ctx context.Context, s *scope) (bool, error) {
	if err := r.cleanUpRemediationConditions(ctx, s); err != nil {
		return false, err
	}
	// A remediation is done once its replacement exists (or the annotation is stale).
	if v, ok := s.oacp.Annotations[controlplanev1.RemediationInProgressAnnotation]; ok {
		if d, err := parseRemediationData(v); err != nil {
			delete(s.oacp.Annotations, controlplanev1.RemediationInProgressAnnotation)
		} else {
			for _, m := range s.machines {
				if m.CreationTimestamp.After(d.Timestamp.Time) {
					delete(s.oacp.Annotations, controlplanev1.RemediationInProgressAnnotation)
					break
				}
			}
		}
	}
	m := machineToRemediate(s.machines)
	if m == nil || !m.DeletionTimestamp.IsZero() {
		return false, nil
	}
	if _, ok := s.oacp.Annotations[controlplanev1.RemediationInProgressAnnotation]; ok {
		return false, r.setOwnerRemediated(ctx, s, m, controlplanev1.RemediationDeferredReason,
			"Waiting for the remediation under way to complete (its replacement Machine to be created) before remediating another")
	}
	d := decideRemediation(s.oacp, s.machines, m, r.now())
	if d.reason == "" && etcdReachable(s) {
		if why, err := r.etcdAllowsRemediating(ctx, s, m); err != nil {
			return false, err
		} else if why != "" {
			d = remediationDecision{reason: controlplanev1.MachineCannotBeRemediatedReason, message: why}
		}
	}
	if d.reason != "" {
		return false, r.setOwnerRemediated(ctx, s, m, d.reason, d.message)
	}

	if err := r.Client.Delete(ctx, m); err != nil && !apierrors.IsNotFound(err) {
		_ = r.setOwnerRemediated(ctx, s, m, controlplanev1.RemediationInternalErrorReason, fmt.Sprintf("Deleting the Machine failed: %v", err))
		return false, fmt.Errorf("deleting unhealthy Machine %s: %w", m.Name, err)
	}
	metrics.Remediations.Inc()
	ctrl.LoggerFrom(ctx).Info("Deleting unhealthy control-plane Machine (remediation)", "Machine", m.Name, "retry", d.data.RetryCount)
	r.Recorder.Eventf(s.oacp, m, corev1.EventTypeWarning, "Remediating", "DeleteMachine",
		"Replacing unhealthy control-plane Machine %s (retry %d): its etcd member is removed before its host goes", m.Name, d.data.RetryCount)
	if err := r.setOwnerRemediated(ctx, s, m, controlplanev1.RemediationMachineDeletingReason, "Machine is deleting"); err != nil {
		return true, err
	}
	if s.oacp.Annotations == nil {
		s.oacp.Annotations = map[string]string{}
	}
	s.oacp.Annotations[controlplanev1.RemediationInProgressAnnotation] = d.data.String()
	return true, r.waitForCache(ctx, m, func(err error, got *clusterv1.Machine) bool {
		return apierrors.IsNotFound(err) || (err == nil && !got.DeletionTimestamp.IsZero())
	})
}

// etcdAllowsRemediating returns "" when m's member can go keeping quorum (moving leadership away
// from it first), or why not.
func (r *OpenshiftAssistedControlPlaneReconciler) etcdAllowsRemediating(ctx context.Context, s *scope, m *clusterv1.Machine) (string, error) {
	node := nodeName(m)
	if node == "" {
		return "", nil
	}
	ec, err := r.loadEtcd(ctx, s)
	if err != nil {
		return fmt.Sprintf("Cannot check etcd before remediating: %v", err), nil
	}
	if why := ec.CanRemove(node); why != "" {
		return fmt.Sprintf("Remediating Machine %s could lose etcd quorum: %s. Restore the other unhealthy members first", m.Name, why), nil
	}
	w, err := r.workloadEtcd(ctx, s)
	if err != nil {
		return "", err
	}
	if err := w.ForwardLeadership(ctx, ec, node, leaderCandidate(s.machines)); err != nil {
		return "", fmt.Errorf("before remediating Machine %s: %w", m.Name, err)
	}
	return "", nil
}

// setOwnerRemediated sets m's OwnerRemediated condition, and raises a Warning event on the
// control plane when the condition changes to a refusal.
func (r *OpenshiftAssistedControlPlaneReconciler) setOwnerRemediated(ctx context.Context, s *scope, m *clusterv1.Machine, reason, message string) error {
	if c := conditions.Get(m, clusterv1.MachineOwnerRemediatedCondition); c != nil && c.Reason == reason && c.Message == message {
		return nil
	}
	if reason == controlplanev1.MachineCannotBeRemediatedReason || reason == controlplanev1.RemediationDeferredReason {
		r.Recorder.Eventf(s.oacp, m, corev1.EventTypeWarning, "RemediationBlocked", "RemediateMachine", "Machine %s: %s", m.Name, message)
	}
	helper, err := patch.NewHelper(m, r.Client)
	if err != nil {
		return fmt.Errorf("creating the patch helper of Machine %s: %w", m.Name, err)
	}
	conditions.Set(m, metav1.Condition{Type: clusterv1.MachineOwnerRemediatedCondition, Status: metav1.ConditionFalse, Reason: reason, Message: message})
	if err := helper.Patch(ctx, m, patch.WithOwnedConditions{Conditions: []string{clusterv1.MachineOwnerRemediatedCondition}}); err != nil {
		return fmt.Errorf("setting the OwnerRemediated condition of Machine %s: %w", m.Name, err)
	}
	return nil
}

// cleanUpRemediationConditions removes OwnerRemediated from Machines the MachineHealthCheck
// finds healthy again, as KCP does.
func (r *OpenshiftAssistedControlPlaneReconciler) cleanUpRemediationConditions(ctx context.Context, s *scope) error {
	for _, m := range s.machines {
		if !m.DeletionTimestamp.IsZero() || !conditions.IsTrue(m, clusterv1.MachineHealthCheckSucceededCondition) || !conditions.IsFalse(m, clusterv1.MachineOwnerRemediatedCondition) {
			continue
		}
		helper, err := patch.NewHelper(m, r.Client)
		if err != nil {
			return fmt.Errorf("creating the patch helper of Machine %s: %w", m.Name, err)
		}
		conditions.Delete(m, clusterv1.MachineOwnerRemediatedCondition)
		if err := helper.Patch(ctx, m, patch.WithOwnedConditions{Conditions: []string{clusterv1.MachineOwnerRemediatedCondition}}); err != nil {
			return fmt.Errorf("clearing the OwnerRemediated condition of Machine %s: %w", m.Name, err)
		}
	}
	return nil
}
