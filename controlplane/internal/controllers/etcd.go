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
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/cluster-api/util/patch"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/controlplane/internal/etcd"
)

// An OpenShift cluster installed without Machine API (platform None, or BareMetal without the
// MachineAPI capability) adds etcd members on its own but never removes one: cluster-etcd-operator
// removes members only for machine.openshift.io Machines it hooks (its
// clusterMemberRemovalController; the enhancement etcd/protecting-etcd-quorum-during-control-
// plane-scaling.md lists other platforms as a non-goal). So the control plane removes the member
// of a control-plane Machine before the Machine's host goes, the way KubeadmControlPlane does
// (sigs.k8s.io/cluster-api controlplane/kubeadm/internal/controllers/controller.go
// reconcilePreTerminateHook, scale.go scaleDownControlPlane): every control-plane Machine carries
// a pre-terminate hook; a Machine is deleted only when etcd is healthy, after leadership moved
// away from it; once Cluster API's Machine controller has drained the node and waits on the hook,
// the member is removed (only if the members left keep quorum) and the hook goes.

// nodeName returns the name of the Machine's node, or "".
func nodeName(m *clusterv1.Machine) string {
	if m.Status.NodeRef.IsDefined() {
		return m.Status.NodeRef.Name
	}
	return ""
}

// etcdState is what a reconcile observed of the workload cluster's etcd.
type etcdState struct {
	loaded bool
	// cluster is the membership; nil when it could not be read (err says why).
	cluster *etcd.Cluster
	err     error
	// hookBlocked says why the member of a Machine being deleted is not removed yet.
	hookBlocked string
	// machineAPI says why cluster-etcd-operator adds no member for a Machine's node (Machine API
	// mode, see machineapi.go); "" when it does not ignore them.
	machineAPI string
}

// etcdReachable tells whether the cluster is installed far enough for its etcd to be reached:
// installed, with its kubeconfig written and at least one Machine with a node.
func etcdReachable(s *scope) bool {
	return s.kubeconfigWritten && slices.ContainsFunc(s.machines, func(m *clusterv1.Machine) bool { return nodeName(m) != "" })
}

// loadEtcd reads the etcd membership once per reconcile, through the nodes of the Machines not
// being deleted first.
func (r *OpenshiftAssistedControlPlaneReconciler) loadEtcd(ctx context.Context, s *scope) (*etcd.Cluster, error) {
	if s.etcd.loaded {
		return s.etcd.cluster, s.etcd.err
	}
	s.etcd.loaded = true
	cfg, err := r.ClusterCache.GetRESTConfig(ctx, client.ObjectKeyFromObject(s.cluster))
	if err != nil {
		s.etcd.err = fmt.Errorf("reaching the workload cluster: %w", err)
		return nil, s.etcd.err
	}
	var nodes, deletingNodes []string
	for _, m := range s.machines {
		switch n := nodeName(m); {
		case n == "":
		case m.DeletionTimestamp.IsZero():
			nodes = append(nodes, n)
		default:
			deletingNodes = append(deletingNodes, n)
		}
	}
	w := &etcd.Workload{Connector: r.Etcd, Config: cfg}
	s.etcd.cluster, s.etcd.err = w.Members(ctx, append(nodes, deletingNodes...))
	if s.etcd.err != nil {
		s.etcd.err = fmt.Errorf("reading the etcd members: %w", s.etcd.err)
	}
	return s.etcd.cluster, s.etcd.err
}

// workloadEtcd returns the etcd of the workload cluster, to change it.
func (r *OpenshiftAssistedControlPlaneReconciler) workloadEtcd(ctx context.Context, s *scope) (*etcd.Workload, error) {
	cfg, err := r.ClusterCache.GetRESTConfig(ctx, client.ObjectKeyFromObject(s.cluster))
	if err != nil {
		return nil, fmt.Errorf("reaching the workload cluster: %w", err)
	}
	return &etcd.Workload{Connector: r.Etcd, Config: cfg}, nil
}

// reconcileEtcdHooks puts the pre-terminate hook on every control-plane Machine not being
// deleted (Machines created by an earlier version, or moved in, lack it).
func (r *OpenshiftAssistedControlPlaneReconciler) reconcileEtcdHooks(ctx context.Context, s *scope) error {
	for _, m := range s.machines {
		if !m.DeletionTimestamp.IsZero() || metav1.HasAnnotation(m.ObjectMeta, controlplanev1.EtcdMemberHookAnnotation) {
			continue
		}
		if err := r.patchAnnotation(ctx, m, controlplanev1.EtcdMemberHookAnnotation, true); err != nil {
			return err
		}
	}
	return nil
}

// patchAnnotation adds (or removes) the annotation key on m.
func (r *OpenshiftAssistedControlPlaneReconciler) patchAnnotation(ctx context.Context, m *clusterv1.Machine, key string, add bool) error {
	helper, err := patch.NewHelper(m, r.Client)
	if err != nil {
		return fmt.Errorf("creating the patch helper of Machine %s: %w", m.Name, err)
	}
	if add {
		metav1.SetMetaDataAnnotation(&m.ObjectMeta, key, "")
	} else {
		delete(m.Annotations, key)
	}
	if err := helper.Patch(ctx, m); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("updating annotation %s of Machine %s: %w", key, m.Name, err)
	}
	return nil
}

// removeEtcdHooks removes the hook from every Machine: the whole control plane is being deleted,
// its etcd goes with it.
func (r *OpenshiftAssistedControlPlaneReconciler) removeEtcdHooks(ctx context.Context, s *scope) error {
	for _, m := range s.machines {
		if metav1.HasAnnotation(m.ObjectMeta, controlplanev1.EtcdMemberHookAnnotation) {
			if err := r.patchAnnotation(ctx, m, controlplanev1.EtcdMemberHookAnnotation, false); err != nil {
				return err
			}
		}
	}
	return nil
}

// hookPending returns the deleting Machine whose hook is to be run now: the one deleted first,
// once Cluster API's Machine controller waits on it and every other pre-terminate hook is done
// (ours runs last, so the kubelet still works while the others run, as KCP's does). It returns
// nil when there is none or it is not time yet.
func hookPending(machines []*clusterv1.Machine) *clusterv1.Machine {
	var first *clusterv1.Machine
	for _, m := range machines {
		if m.DeletionTimestamp.IsZero() || !metav1.HasAnnotation(m.ObjectMeta, controlplanev1.EtcdMemberHookAnnotation) {
			continue
		}
		if first == nil || m.DeletionTimestamp.Before(first.DeletionTimestamp) {
			first = m
		}
	}
	if first == nil {
		return nil
	}
	for k := range first.Annotations {
		if strings.HasPrefix(k, clusterv1.PreTerminateDeleteHookAnnotationPrefix) && k != controlplanev1.EtcdMemberHookAnnotation {
			return nil
		}
	}
	c := conditions.Get(first, clusterv1.MachineDeletingCondition)
	if c == nil || c.Status != metav1.ConditionTrue || c.Reason != clusterv1.MachineDeletingWaitingForPreTerminateHookReason {
		return nil
	}
	return first
}

// reconcilePreTerminateHook removes the etcd member of the control-plane Machine being deleted,
// once Cluster API's Machine controller waits on its hook, then removes the hook. It waits, and
// says why, while removing the member would leave etcd without quorum.
func (r *OpenshiftAssistedControlPlaneReconciler) reconcilePreTerminateHook(ctx context.Context, s *scope) error {
	m := hookPending(s.machines)
	if m == nil {
		return nil
	}
	log := ctrl.LoggerFrom(ctx).WithValues("Machine", m.Name)
	node := nodeName(m)
	if node == "" || !etcdReachable(s) {
		// No node (the host never joined) or no installed cluster: no member to remove.
		return r.patchAnnotation(ctx, m, controlplanev1.EtcdMemberHookAnnotation, false)
	}
	ec, err := r.loadEtcd(ctx, s)
	if err != nil {
		s.etcd.hookBlocked = fmt.Sprintf("cannot remove the etcd member of Machine %s (node %s) yet: %v", m.Name, node, err)
		return nil
	}
	if ec.Member(node) == nil {
		log.Info("The etcd member of the Machine's node is gone", "node", node)
		return r.patchAnnotation(ctx, m, controlplanev1.EtcdMemberHookAnnotation, false)
	}
	if why := ec.CanRemove(node); why != "" {
		msg := fmt.Sprintf("Machine %s waits for its etcd member to be removed: %s. Restore the unhealthy members (or their hosts); the member is removed as soon as etcd keeps quorum without it", m.Name, why)
		if s.etcd.hookBlocked != msg {
			r.Recorder.Eventf(s.oacp, m, corev1.EventTypeWarning, "EtcdMemberRemovalBlocked", "RemoveEtcdMember", "%s", msg)
		}
		s.etcd.hookBlocked = msg
		return nil
	}
	w, err := r.workloadEtcd(ctx, s)
	if err != nil {
		return err
	}
	if err := w.ForwardLeadership(ctx, ec, node, leaderCandidate(s.machines)); err != nil {
		return fmt.Errorf("removing the etcd member of Machine %s: %w", m.Name, err)
	}
	if err := w.RemoveMember(ctx, ec, node); err != nil {
		return fmt.Errorf("removing the etcd member of Machine %s: %w", m.Name, err)
	}
	r.Recorder.Eventf(s.oacp, m, corev1.EventTypeNormal, "RemovedEtcdMember", "RemoveEtcdMember",
		"Removed the etcd member %s of Machine %s before its host is released", node, m.Name)
	return r.patchAnnotation(ctx, m, controlplanev1.EtcdMemberHookAnnotation, false)
}

// leaderCandidate is the node etcd leadership moves to: the newest control-plane Machine not
// being deleted, as KCP picks.
func leaderCandidate(machines []*clusterv1.Machine) string {
	for i := len(machines) - 1; i >= 0; i-- {
		if m := machines[i]; m.DeletionTimestamp.IsZero() && nodeName(m) != "" {
			return nodeName(m)
		}
	}
	return ""
}

// etcdAllowsDeleting returns "" when the control-plane Machine m may be deleted now without
// putting etcd at risk, or why not. A Machine without a node, or a cluster not installed yet,
// has no member. Otherwise every member must be a healthy voting member (KCP's preflight
// checks), unless m's own member is the unhealthy one and the others keep quorum without it.
// Leadership is moved away from m's member before it is deleted.
func (r *OpenshiftAssistedControlPlaneReconciler) etcdAllowsDeleting(ctx context.Context, s *scope, m *clusterv1.Machine) (string, error) {
	node := nodeName(m)
	if node == "" || !etcdReachable(s) {
		return "", nil
	}
	ec, err := r.loadEtcd(ctx, s)
	if err != nil {
		return fmt.Sprintf("cannot check etcd before deleting Machine %s: %v", m.Name, err), nil
	}
	if member := ec.Member(node); member != nil && member.Healthy {
		if p := ec.Problem(); p != "" {
			return fmt.Sprintf("etcd must be healthy before the member of Machine %s is removed: %s", m.Name, p), nil
		}
	}
	if why := machinesWithoutMember(ec, s.machines, m); why != "" {
		return why, nil
	}
	if why := ec.CanRemove(node); why != "" {
		return why, nil
	}
	w, err := r.workloadEtcd(ctx, s)
	if err != nil {
		return "", err
	}
	others := slices.DeleteFunc(slices.Clone(s.machines), func(o *clusterv1.Machine) bool { return o == m })
	if err := w.ForwardLeadership(ctx, ec, node, leaderCandidate(others)); err != nil {
		return "", fmt.Errorf("before deleting Machine %s: %w", m.Name, err)
	}
	return "", nil
}

// machinesWithoutMember returns "" when every control-plane Machine with a node (but except and
// those being deleted) has a healthy voting etcd member, or which one has not: a new node's
// member is added by cluster-etcd-operator some time after the node joins, and a member is
// removed only once the new one votes.
func machinesWithoutMember(ec *etcd.Cluster, machines []*clusterv1.Machine, except *clusterv1.Machine) string {
	for _, o := range machines {
		node := nodeName(o)
		if o == except || node == "" || !o.DeletionTimestamp.IsZero() {
			continue
		}
		switch member := ec.Member(node); {
		case member == nil:
			return fmt.Sprintf("the etcd member of Machine %s (node %s) has not joined yet", o.Name, node)
		case member.IsLearner:
			return fmt.Sprintf("the etcd member of Machine %s (node %s) is a learner still catching up", o.Name, node)
		case !member.Healthy:
			return fmt.Sprintf("the etcd member of Machine %s (node %s) is unhealthy (%s)", o.Name, node, member.Problem)
		}
	}
	return ""
}

// etcdAllowsJoining returns "" when a new control-plane Machine may join now (a rollout adds
// one before it removes one): etcd is healthy and every Machine's member votes. Otherwise why not.
func (r *OpenshiftAssistedControlPlaneReconciler) etcdAllowsJoining(ctx context.Context, s *scope) string {
	ec, err := r.loadEtcd(ctx, s)
	if err != nil {
		return fmt.Sprintf("cannot check etcd before adding a Machine: %v", err)
	}
	if p := ec.Problem(); p != "" {
		return "etcd must be healthy before a Machine is replaced: " + p
	}
	return machinesWithoutMember(ec, s.machines, nil)
}

// reconcileStrayMembers removes the unhealthy etcd members that no control-plane Machine's node
// carries, as KCP's reconcileEtcdMembers does: between the removal of a Machine's member and the
// deletion of its Node, cluster-etcd-operator may add the member back (it adds one for every
// control-plane Node that has none), and the host's wipe then leaves a dead voting member that
// costs the cluster its fault tolerance. Only while no Machine is being created or deleted, only
// unhealthy members (a healthy one may be a node this control plane does not manage), and only
// when the others keep quorum.
func (r *OpenshiftAssistedControlPlaneReconciler) reconcileStrayMembers(ctx context.Context, s *scope) error {
	if !etcdReachable(s) {
		return nil
	}
	nodes := map[string]bool{}
	for _, m := range s.machines {
		if !m.DeletionTimestamp.IsZero() || nodeName(m) == "" {
			return nil
		}
		nodes[nodeName(m)] = true
	}
	ec, err := r.loadEtcd(ctx, s)
	if err != nil {
		return nil //nolint:nilerr // reported by the EtcdClusterHealthy condition; retried
	}
	if machinesWithoutMember(ec, s.machines, nil) == "" {
		// Every Machine's node has its voting member: a learner that never started belongs to
		// no node of this control plane (cluster-etcd-operator added it for a node on its way
		// out). Removing a learner never touches quorum.
		for _, member := range ec.Members {
			if member.Name != "" || !member.IsLearner {
				continue
			}
			w, err := r.workloadEtcd(ctx, s)
			if err != nil {
				return err
			}
			if err := w.RemoveMemberByID(ctx, ec, member.ID); err != nil {
				return fmt.Errorf("removing the etcd learner %x, which never started: %w", member.ID, err)
			}
			r.Recorder.Eventf(s.oacp, nil, corev1.EventTypeNormal, "RemovedEtcdMember", "RemoveEtcdMember",
				"Removed the etcd learner %x: it never started and every control-plane Machine's node has its member", member.ID)
			s.etcd = etcdState{}
			return nil
		}
	}
	for _, member := range ec.Members {
		if member.Name == "" || nodes[member.Name] || member.Healthy || ec.CanRemove(member.Name) != "" {
			continue
		}
		w, err := r.workloadEtcd(ctx, s)
		if err != nil {
			return err
		}
		if err := w.RemoveMember(ctx, ec, member.Name); err != nil {
			return fmt.Errorf("removing etcd member %s, which no control-plane Machine has: %w", member.Name, err)
		}
		r.Recorder.Eventf(s.oacp, nil, corev1.EventTypeNormal, "RemovedEtcdMember", "RemoveEtcdMember",
			"Removed the unhealthy etcd member %s: no control-plane Machine has its node", member.Name)
		s.etcd = etcdState{} // read again
		return nil
	}
	return nil
}
