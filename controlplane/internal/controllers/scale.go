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
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
)

// Scaling: how many control-plane Machines the spec wants (spec.replicas, and the arbiter of
// two-node OpenShift, see arbiter.go), which Machine a scale down removes and when it may, and
// in which failure domain a new Machine goes. reconcileMachines (machines.go) creates or removes
// one Machine at a time until the count is the wanted one; etcd.go says whether etcd allows it.

// replicas is the desired number of control-plane nodes.
func replicas(oacp *controlplanev1.OpenshiftAssistedControlPlane) int32 {
	return ptr.Deref(oacp.Spec.Replicas, 1)
}

// wantArbiters is the number of arbiter Machines the spec asks for: 1 with spec.arbiter, else 0.
func wantArbiters(oacp *controlplanev1.OpenshiftAssistedControlPlane) int {
	if oacp.Spec.Arbiter != nil {
		return 1
	}
	return 0
}

// wantMachines is the number of control-plane Machines the spec asks for, the arbiter included.
func wantMachines(oacp *controlplanev1.OpenshiftAssistedControlPlane) int32 {
	return replicas(oacp) + int32(wantArbiters(oacp))
}

// countArbiters counts the arbiter Machines that are not being deleted.
func countArbiters(machines []*clusterv1.Machine) int {
	n := 0
	for _, m := range machines {
		if isArbiter(m) && m.DeletionTimestamp.IsZero() {
			n++
		}
	}
	return n
}

// createArbiterNext tells whether the next Machine to create to reach the spec is the arbiter.
func createArbiterNext(oacp *controlplanev1.OpenshiftAssistedControlPlane, machines []*clusterv1.Machine) bool {
	return countArbiters(machines) < wantArbiters(oacp)
}

// removeArbiterNext tells whether the Machine a scale down removes is an arbiter: only when
// there are more arbiters than the spec asks for (after an arbiter was surged in to replace an
// outdated one).
func removeArbiterNext(oacp *controlplanev1.OpenshiftAssistedControlPlane, machines []*clusterv1.Machine) bool {
	return countArbiters(machines) > wantArbiters(oacp)
}

// othersReady returns "" when every control-plane Machine but m (and those being deleted) is
// ready, or which one is not: KCP's preflight check before it removes a Machine.
func othersReady(machines []*clusterv1.Machine, m *clusterv1.Machine) string {
	for _, o := range machines {
		if o != m && o.DeletionTimestamp.IsZero() && !isHealthy(o) {
			return fmt.Sprintf("Machine %s is not ready yet; a control-plane Machine is removed only while all the others are ready", o.Name)
		}
	}
	return ""
}

// isHealthy tells whether a control-plane Machine counts towards quorum.
func isHealthy(m *clusterv1.Machine) bool {
	return m.DeletionTimestamp.IsZero() && conditions.IsTrue(m, clusterv1.MachineReadyCondition)
}

// scaleDown removes one control-plane Machine, the one selectMachineForScaleDown picks, once the
// others are ready (after the installation) and etcd allows it (etcdAllowsDeleting), and waits
// until the cache shows it going; else it says in s why the scale down waits.
func (r *OpenshiftAssistedControlPlaneReconciler) scaleDown(ctx context.Context, s *scope, want int) (ctrl.Result, error) {
	m, reason := selectMachineForScaleDown(s.machines, s.outdated, s.installed(), removeArbiterNext(s.oacp, s.machines))
	if m == nil {
		s.scaleDownBlocked = reason
		return ctrl.Result{RequeueAfter: waitRequeue}, nil
	}
	why := ""
	if s.installed() {
		why = othersReady(s.machines, m)
	}
	if why == "" {
		var err error
		if why, err = r.etcdAllowsDeleting(ctx, s, m); err != nil {
			return ctrl.Result{}, err
		}
	}
	if why != "" {
		if conditions.GetMessage(s.oacp, controlplanev1.ScalingDownCondition) != scaleDownBlockedMessage(s, why) {
			r.Recorder.Eventf(s.oacp, m, corev1.EventTypeWarning, "ScaleDownBlocked", "DeleteMachine",
				"Not deleting control-plane Machine %s yet: %s", m.Name, why)
		}
		s.scaleDownBlocked = why
		return ctrl.Result{RequeueAfter: waitRequeue}, nil
	}
	ctrl.LoggerFrom(ctx).Info("Deleting control-plane Machine to scale down", "Machine", m.Name)
	if err := r.Client.Delete(ctx, m); err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, fmt.Errorf("deleting Machine %s to scale down: %w", m.Name, err)
	}
	r.Recorder.Eventf(s.oacp, m, corev1.EventTypeNormal, "ScalingDown", "DeleteMachine",
		"Deleted control-plane Machine %s (%d Machines, %d wanted)", m.Name, len(s.machines), want)
	if err := r.waitForCache(ctx, m, func(err error, got *clusterv1.Machine) bool {
		return apierrors.IsNotFound(err) || (err == nil && !got.DeletionTimestamp.IsZero())
	}); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: waitRequeue}, nil
}

// selectMachineForScaleDown picks the Machine to remove, or nil and the reason to wait. Machines
// with the cluster.x-k8s.io/delete-machine annotation go first, then unhealthy ones, then the
// oldest in the most crowded failure domain. Once the cluster is installed, a healthy Machine is
// removed only if the healthy Machines left keep etcd's quorum of the smaller membership, so the
// last healthy member is never removed. arbiter says which kind goes: the arbiter Machine of
// two-node OpenShift (when there is one too many) or one of the others; the quorum counts both.
func selectMachineForScaleDown(machines []*clusterv1.Machine, outdated map[string]string, installed, arbiter bool) (*clusterv1.Machine, string) {
	if len(machines) == 0 {
		return nil, "no Machine to remove"
	}
	perFD := map[string]int{}
	for _, m := range machines {
		perFD[m.Spec.FailureDomain]++
	}
	rank := func(m *clusterv1.Machine) int {
		switch {
		case metav1.HasAnnotation(m.ObjectMeta, clusterv1.DeleteMachineAnnotation):
			return 0
		case !isHealthy(m):
			return 1
		}
		return 2
	}
	candidates := slices.DeleteFunc(slices.Clone(machines), func(m *clusterv1.Machine) bool {
		return !m.DeletionTimestamp.IsZero() || isArbiter(m) != arbiter
	})
	if len(candidates) == 0 {
		return nil, "every Machine is already being deleted, or there is no Machine of that kind (arbiter or not) to remove"
	}
	// While a rollout is under way only outdated Machines go, as KCP's scale down picks them
	// first: the new Machine that surged in must stay.
	if old := slices.DeleteFunc(slices.Clone(candidates), func(m *clusterv1.Machine) bool { _, ok := outdated[m.Name]; return !ok }); len(old) > 0 {
		candidates = old
	}
	// machines are oldest first; a stable sort keeps that order within a rank.
	slices.SortStableFunc(candidates, func(a, b *clusterv1.Machine) int {
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra - rb
		}
		return perFD[b.Spec.FailureDomain] - perFD[a.Spec.FailureDomain]
	})
	m := candidates[0]
	if !installed || !isHealthy(m) {
		return m, ""
	}
	healthy := 0
	for _, o := range machines {
		if isHealthy(o) {
			healthy++
		}
	}
	remaining := len(machines) - 1
	if quorum := remaining/2 + 1; healthy-1 < quorum {
		return nil, fmt.Sprintf("removing healthy Machine %s would leave %d healthy control-plane Machines of %d, below etcd quorum (%d); waiting for the others to be healthy",
			m.Name, healthy-1, remaining, quorum)
	}
	return m, ""
}

// failureDomainForNewMachine returns the control-plane failure domain of the Cluster with the
// fewest Machines (by name on ties), or "" when the Cluster has none.
func failureDomainForNewMachine(cluster *clusterv1.Cluster, machines []*clusterv1.Machine) string {
	counts := map[string]int{}
	var fds []string
	for _, fd := range cluster.Status.FailureDomains {
		if ptr.Deref(fd.ControlPlane, false) {
			fds = append(fds, fd.Name)
			counts[fd.Name] = 0
		}
	}
	if len(fds) == 0 {
		return ""
	}
	for _, m := range machines {
		if _, ok := counts[m.Spec.FailureDomain]; ok && m.DeletionTimestamp.IsZero() {
			counts[m.Spec.FailureDomain]++
		}
	}
	slices.SortFunc(fds, func(a, b string) int {
		if counts[a] != counts[b] {
			return counts[a] - counts[b]
		}
		if a < b {
			return -1
		}
		return 1
	})
	return fds[0]
}
