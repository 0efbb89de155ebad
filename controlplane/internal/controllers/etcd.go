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
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
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

// cluster-etcd-operator adds a member only through a new revision of the etcd static pods, and
// rolls a new revision only when CheckSafeToScaleCluster allows it (pkg/operator/ceohelpers/
// bootstrap.go): after bootstrap, three control-plane nodes and a fault-tolerant membership
// (etcdcli.IsQuorumFaultTolerantErr), unless its config etcds.operator.openshift.io/cluster sets
// spec.unsupportedConfigOverrides.useUnsupportedUnsafeNonHANonProductionUnstableEtcd
// (ceohelpers/unsupported_override.go). So once the dead member of a three-member cluster is
// removed, the replacement never joins: OpenShift's documented replacement of a dead member sets
// the override, replaces the member and removes the override
// (modules/restore-replace-stopped-etcd-member.adoc). The control plane does the same, only while
// a Machine's member waits to join a healthy membership that is not fault tolerant, records that
// it did (EtcdUnsafeScalingAnnotation) and removes the override once three healthy members vote.

// unsafeScalingKey is the override's key in spec.unsupportedConfigOverrides.
const unsafeScalingKey = "useUnsupportedUnsafeNonHANonProductionUnstableEtcd"

// etcdOperatorConfig is cluster-etcd-operator's config in the workload cluster.
var etcdOperatorConfig = schema.GroupVersionKind{Group: "operator.openshift.io", Version: "v1", Kind: "Etcd"}

// unsafeScalingRequeue is how often the control plane looks again while it holds the override.
const unsafeScalingRequeue = 10 * time.Second

// unsafeScalingNeeded returns why cluster-etcd-operator cannot add the member of a control-plane
// Machine without the unsafe scaling override ("" when it can, or when no member waits to join):
// a Machine with a node but no member, every member healthy and voting (while one is not, the
// operator adds nothing, override or not: remediation removes a dead member first), and fewer
// than three control-plane nodes or a membership that tolerates no failure.
func unsafeScalingNeeded(ec *etcd.Cluster, machines []*clusterv1.Machine) string {
	joining := joiningMachines(ec, machines)
	nodes := 0
	for _, m := range machines {
		if nodeName(m) != "" {
			nodes++
		}
	}
	if len(joining) == 0 || ec.Problem() != "" {
		return ""
	}
	why := ec.FaultTolerance()
	if nodes < 3 {
		why = fmt.Sprintf("%d control-plane nodes, fewer than the 3 it requires", nodes)
	}
	if why == "" {
		return ""
	}
	return fmt.Sprintf("the etcd member of Machine %s cannot join without it: %s", strings.Join(joining, ", "), why)
}

// unsafeScalingDone tells whether an override the control plane set can go: no Machine's member
// waits to join, and at least three healthy voting members tolerate a failure again.
func unsafeScalingDone(ec *etcd.Cluster, machines []*clusterv1.Machine) bool {
	return ec.Problem() == "" && ec.FaultTolerance() == "" && len(ec.Members) >= 3 &&
		machinesWithoutMember(ec, machines, nil) == ""
}

// unsafeScalingApplies tells whether the control plane may need the override: with three or
// more etcd members wanted, an arbiter's included.
func unsafeScalingApplies(oacp *controlplanev1.OpenshiftAssistedControlPlane) bool {
	return wantMachines(oacp) >= 3
}

// reconcileUnsafeScaling sets or removes cluster-etcd-operator's unsafe scaling override (see
// above). Single-node control planes never need it: the operator scales them unsafely anyway.
// Two nodes with an arbiter do: their three members (the arbiter's included) follow the same
// rule (cluster-etcd-operator's HA scaling strategy in the HighlyAvailableArbiter topology).
func (r *OpenshiftAssistedControlPlaneReconciler) reconcileUnsafeScaling(ctx context.Context, s *scope) (ctrl.Result, error) {
	_, set := s.oacp.Annotations[controlplanev1.EtcdUnsafeScalingAnnotation]
	if !etcdReachable(s) || (!set && !unsafeScalingApplies(s.oacp)) {
		return ctrl.Result{}, nil
	}
	ec, err := r.loadEtcd(ctx, s)
	if err != nil {
		return ctrl.Result{}, nil //nolint:nilerr // reported by the EtcdClusterHealthy condition; retried
	}
	switch {
	case !set:
		why := unsafeScalingNeeded(ec, s.machines)
		if why == "" {
			return ctrl.Result{}, nil
		}
		changed, err := r.setUnsafeScaling(ctx, s, true)
		if err != nil || !changed {
			return ctrl.Result{}, err
		}
		if s.oacp.Annotations == nil {
			s.oacp.Annotations = map[string]string{}
		}
		s.oacp.Annotations[controlplanev1.EtcdUnsafeScalingAnnotation] = r.now().UTC().Format(time.RFC3339)
		ctrl.LoggerFrom(ctx).Info("Set cluster-etcd-operator's unsafe scaling override", "reason", why)
		r.Recorder.Eventf(s.oacp, nil, corev1.EventTypeWarning, "EtcdUnsafeScalingSet", "SetEtcdUnsafeScaling",
			"Set %s in etcds.operator.openshift.io/cluster: %s; it is removed once three healthy members vote", unsafeScalingKey, why)
		return ctrl.Result{RequeueAfter: unsafeScalingRequeue}, nil
	case unsafeScalingDone(ec, s.machines):
		if _, err := r.setUnsafeScaling(ctx, s, false); err != nil {
			return ctrl.Result{}, err
		}
		delete(s.oacp.Annotations, controlplanev1.EtcdUnsafeScalingAnnotation)
		ctrl.LoggerFrom(ctx).Info("Removed cluster-etcd-operator's unsafe scaling override")
		r.Recorder.Eventf(s.oacp, nil, corev1.EventTypeNormal, "EtcdUnsafeScalingRemoved", "RemoveEtcdUnsafeScaling",
			"Removed %s from etcds.operator.openshift.io/cluster: %d healthy members vote", unsafeScalingKey, len(ec.Members))
		return ctrl.Result{}, nil
	}
	return ctrl.Result{RequeueAfter: unsafeScalingRequeue}, nil
}

// setUnsafeScaling sets (on) or removes the override in the workload cluster's etcd operator
// config with a merge patch of that one key, so that the config's other fields and overrides
// stay. It reports whether it changed anything: an override already set by someone else is left
// to them (and not recorded as the control plane's).
func (r *OpenshiftAssistedControlPlaneReconciler) setUnsafeScaling(ctx context.Context, s *scope, on bool) (bool, error) {
	c, err := r.ClusterCache.GetClient(ctx, client.ObjectKeyFromObject(s.cluster))
	if err != nil {
		return false, fmt.Errorf("reaching the workload cluster to change etcd's unsafe scaling override: %w", err)
	}
	cfg := &unstructured.Unstructured{}
	cfg.SetGroupVersionKind(etcdOperatorConfig)
	if err := c.Get(ctx, client.ObjectKey{Name: "cluster"}, cfg); err != nil {
		if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
			return false, nil // not cluster-etcd-operator's cluster: nothing gates its scaling
		}
		return false, fmt.Errorf("reading etcds.operator.openshift.io/cluster: %w", err)
	}
	current, _, _ := unstructured.NestedFieldNoCopy(cfg.Object, "spec", "unsupportedConfigOverrides", unsafeScalingKey)
	if on && overrideOn(current) {
		return false, nil
	}
	value := "null"
	if on {
		value = "true"
	}
	patch := fmt.Sprintf(`{"spec":{"unsupportedConfigOverrides":{%q:%s}}}`, unsafeScalingKey, value)
	if err := c.Patch(ctx, cfg, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		return false, fmt.Errorf("patching etcds.operator.openshift.io/cluster: %w", err)
	}
	return true, nil
}

// overrideOn reads the override as cluster-etcd-operator does: a bool, or a string ParseBool takes.
func overrideOn(v any) bool {
	switch v := v.(type) {
	case bool:
		return v
	case string:
		on, err := strconv.ParseBool(v)
		return err == nil && on
	}
	return false
}
