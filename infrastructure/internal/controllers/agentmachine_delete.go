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
	"errors"
	"fmt"
	"time"

	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	conditionsv1 "github.com/openshift/custom-resource-status/conditions/v1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util"
	"sigs.k8s.io/cluster-api/util/annotations"
	"sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	infrav1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/infrastructure/v1beta1"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/reconciler"
)

// reconcileMachineDeleting runs the pre-terminate hook: once Cluster API waits for it (the Node is
// drained), unbind and release the Agent, then remove the hook so that the Machine can go.
func (r *AgentMachineReconciler) reconcileMachineDeleting(ctx context.Context, s *scope) (ctrl.Result, error) {
	machine := s.machine
	if _, ok := machine.Annotations[infrav1.PreTerminateHookAnnotation]; !ok {
		return ctrl.Result{}, nil
	}
	if c := conditions.Get(machine, clusterv1.MachineDeletingCondition); c == nil ||
		c.Reason != clusterv1.MachineDeletingWaitingForPreTerminateHookReason {
		setReserved(s.agentMachine, metav1.ConditionTrue, infrav1.UnbindingReason, "Waiting for Cluster API to drain the Machine before the Agent is unbound")
		return ctrl.Result{}, nil
	}
	res, done, err := r.release(ctx, s.agentMachine)
	if err != nil || !done {
		return res, err
	}
	return ctrl.Result{}, r.removePreTerminateHook(ctx, machine)
}

// removePreTerminateHook removes our pre-terminate hook from the Machine, if it carries it.
func (r *AgentMachineReconciler) removePreTerminateHook(ctx context.Context, machine *clusterv1.Machine) error {
	if machine == nil {
		return nil
	}
	if _, ok := machine.Annotations[infrav1.PreTerminateHookAnnotation]; !ok {
		return nil
	}
	before := machine.DeepCopy()
	delete(machine.Annotations, infrav1.PreTerminateHookAnnotation)
	if err := r.Client.Patch(ctx, machine, client.MergeFrom(before)); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("removing the pre-terminate hook from Machine %s: %w", machine.Name, err)
	}
	return nil
}

// releaseOrphanedHooks removes our pre-terminate hook from the Machines of the AgentMachine key
// names, which is gone: the AgentMachine's own deletion removes the hook it saw, but a hook added
// after that (a reconcile that read the AgentMachine before its deletion, a second manager during
// a leader hand-over) or one its stale cache did not show yet would keep the Machine's deletion
// waiting for a hook nobody owns. Machine events come here too (they map to the AgentMachine's
// name), so the hook goes whenever it shows up. A Machine outside the watch filter, or paused, is
// left alone.
func (r *AgentMachineReconciler) releaseOrphanedHooks(ctx context.Context, key client.ObjectKey) error {
	machines := &clusterv1.MachineList{}
	if err := r.Client.List(ctx, machines, client.InNamespace(key.Namespace), client.MatchingFields{hookedMachineIndex: key.Name}); err != nil {
		return fmt.Errorf("listing the Machines of AgentMachine %s: %w", key.Name, err)
	}
	if len(machines.Items) == 0 {
		return nil
	}
	// The cache may not have the AgentMachine yet: only the API server's word that it is gone counts.
	switch err := r.APIReader.Get(ctx, key, &infrav1.AgentMachine{}); {
	case err == nil:
		return nil
	case !apierrors.IsNotFound(err):
		return fmt.Errorf("reading AgentMachine %s: %w", key.Name, err)
	}
	for i := range machines.Items {
		machine := &machines.Items[i]
		if reconciler.LeaveAlone(ctx, machine, r.WatchFilterValue) || annotations.HasPaused(machine) {
			continue
		}
		cluster, err := util.GetClusterFromMetadata(ctx, r.Client, machine.ObjectMeta)
		if err != nil && !apierrors.IsNotFound(err) && !errors.Is(err, util.ErrNoCluster) {
			return fmt.Errorf("getting the Cluster of Machine %s: %w", machine.Name, err)
		}
		if cluster != nil && annotations.IsPaused(cluster, machine) {
			continue
		}
		if err := r.removePreTerminateHook(ctx, machine); err != nil {
			return err
		}
		ctrl.LoggerFrom(ctx).Info("Removed the pre-terminate hook of a deleted AgentMachine", "Machine", klog.KObj(machine))
		r.Recorder.Eventf(machine, nil, corev1.EventTypeNormal, "PreTerminateHookRemoved", "Delete",
			"Removed the pre-terminate hook of AgentMachine %s, which is gone", key.Name)
	}
	return nil
}

// releaseStaleClaims releases the Agents still claimed for the AgentMachine key names, which is
// gone. Its own deletion releases its Agent; one removed without that (its finalizer taken off by
// hand, its namespace forced away, upstream's AgentMachine deleted around the switch) left the
// claim behind, and the host would stay out of the pool for good. Agent events come here through
// their claim owner (claimOwner), so a stale claim is found when the manager starts and whenever
// the Agent changes. Only the API server's word that the AgentMachine is gone counts, and a claim
// whose UID an AgentMachine of the cache has is not stale. Only Agents in the AgentMachine's scope
// are touched (a tenant's Agent never makes us read or write another namespace), and only by a
// manager without --watch-filter: the watch label of an AgentMachine that is gone cannot be read,
// and a manager with a filter must not act for another's AgentMachines. A host whose
// installation has started or ended keeps its binding, so that no cluster loses a node it has or
// is installing: only the claim goes (clusterctl move leaves installed hosts behind this way, as
// it deletes the source's AgentMachines without their finalizers). Any other is unbound first,
// as a deletion does. Each is a Warning event on the Agent.
func (r *AgentMachineReconciler) releaseStaleClaims(ctx context.Context, key client.ObjectKey) (ctrl.Result, error) {
	if r.WatchFilterValue != "" {
		return ctrl.Result{}, nil
	}
	scope := r.agentScope(key.Namespace)
	var stale []*aiv1beta1.Agent
	for _, field := range []client.MatchingFields{{agentClaimOwnerIndex: key.String()}, {agentClaimIndex: nameClaimKey(key.Namespace, key.Name)}} {
		list := &aiv1beta1.AgentList{}
		if err := r.AgentReader.List(ctx, list, field); err != nil {
			return ctrl.Result{}, fmt.Errorf("listing the Agents claimed for AgentMachine %s: %w", key, err)
		}
		for i := range list.Items {
			if inScope(scope, list.Items[i].Namespace) {
				stale = append(stale, &list.Items[i])
			}
		}
	}
	if len(stale) == 0 {
		return ctrl.Result{}, nil
	}
	switch err := r.APIReader.Get(ctx, key, &infrav1.AgentMachine{}); {
	case err == nil:
		return ctrl.Result{}, nil
	case !apierrors.IsNotFound(err):
		return ctrl.Result{}, fmt.Errorf("reading AgentMachine %s: %w", key, err)
	}
	var res ctrl.Result
	for _, agent := range stale {
		if uid := agent.Labels[infrav1.AgentClaimedByLabel]; uid != "" {
			holders := &infrav1.AgentMachineList{}
			if err := r.Client.List(ctx, holders, client.MatchingFields{agentMachineUIDIndex: uid}); err != nil {
				return ctrl.Result{}, fmt.Errorf("listing the AgentMachine that claimed Agent %s/%s: %w", agent.Namespace, agent.Name, err)
			}
			if len(holders.Items) > 0 {
				continue
			}
		}
		committed := hostCommitted(agent)
		_, unbinding := agent.Annotations[infrav1.UnbindRequestedAnnotation]
		claim := types.UID(agent.Labels[infrav1.AgentClaimedByLabel])
		wait, done, err := r.releaseAgent(ctx, agent, agent, !committed)
		conflict := apierrors.IsConflict(err)
		if conflict {
			// The cache is behind the Agent (assisted-service's status, or the release that
			// a deletion made just before): its update event brings the next look.
			wait, err = claimRetryDelay, nil
		}
		if err != nil {
			return ctrl.Result{}, err
		}
		if !unbinding && !conflict {
			ctrl.LoggerFrom(ctx).Info("Released the claim of an AgentMachine that is gone", "Agent", klog.KObj(agent), "AgentMachine", key, "keepBinding", committed)
			if committed {
				r.Recorder.Eventf(agent, nil, corev1.EventTypeWarning, "StaleClaim", "Release",
					"AgentMachine %s, which claimed this Agent, was removed without releasing it; the host's installation has started, so the Agent stays bound to its cluster and only the claim is dropped. Delete the Agent if the host left that cluster", key)
			} else {
				r.Recorder.Eventf(agent, nil, corev1.EventTypeWarning, "StaleClaim", "Release",
					"AgentMachine %s, which claimed this Agent, was removed without releasing it; unbinding the Agent and returning its host to the pool", key)
			}
		}
		if done {
			// A claim this process made holds the host in its reservations until they expire.
			r.reserved.release(client.ObjectKeyFromObject(agent), claim)
		} else if res.RequeueAfter == 0 || wait < res.RequeueAfter {
			res.RequeueAfter = wait
		}
	}
	return res, nil
}

// hostCommitted tells whether the Agent's host is being installed or is installed (its Installed
// condition, as assisted-service's agent controller sets it in installed()).
func hostCommitted(agent *aiv1beta1.Agent) bool {
	c := conditionsv1.FindStatusCondition(agent.Status.Conditions, aiv1beta1.InstalledCondition)
	return c != nil && (c.Status == corev1.ConditionTrue || c.Reason == aiv1beta1.InstallationInProgressReason)
}

func (r *AgentMachineReconciler) reconcileDelete(ctx context.Context, s *scope) (ctrl.Result, error) {
	res, done, err := r.release(ctx, s.agentMachine)
	if err != nil || !done {
		return res, err
	}
	// The AgentMachine goes first (deleted on its own, or with its namespace): nothing would
	// remove the hook from its Machine afterwards, and the Machine's deletion would wait forever.
	if err := r.removePreTerminateHook(ctx, s.machine); err != nil {
		return ctrl.Result{}, err
	}
	controllerutil.RemoveFinalizer(s.agentMachine, infrav1.AgentMachineFinalizer)
	controllerutil.RemoveFinalizer(s.agentMachine, infrav1.UpstreamAgentMachineFinalizer)
	r.tokens.Delete(s.agentMachine.UID)
	r.tokensRead.Delete(s.agentMachine.UID)
	return ctrl.Result{}, nil
}

// release unbinds the claimed Agent (restoring the fields the claim changed), waits until
// assisted-service reports it unbound or the unbind timeout passes, then drops the claim.
// An Agent that vanished is released at once.
func (r *AgentMachineReconciler) release(ctx context.Context, am *infrav1.AgentMachine) (ctrl.Result, bool, error) {
	log := ctrl.LoggerFrom(ctx)
	agent, err := r.claimedAgent(ctx, am, false)
	if err != nil {
		return ctrl.Result{}, false, err
	}
	if agent == nil {
		if am.Status.AgentRef != nil {
			log.Info("The claimed Agent is gone: nothing to unbind", "Agent", am.Status.AgentRef.Name)
		}
		delete(am.Annotations, infrav1.ChosenAgentAnnotation)
		clearAgentConditions(am, "The Agent is released")
		setReserved(am, metav1.ConditionFalse, infrav1.NoAgentReason, "No Agent is claimed")
		return ctrl.Result{}, true, nil
	}
	wait, done, err := r.releaseAgent(ctx, agent, am, true)
	if err != nil {
		return ctrl.Result{}, false, err
	}
	if !done {
		setReserved(am, metav1.ConditionTrue, infrav1.UnbindingReason, fmt.Sprintf("Waiting for assisted-service to unbind Agent %s", agent.Name))
		return ctrl.Result{RequeueAfter: wait}, false, nil
	}
	delete(am.Annotations, infrav1.ChosenAgentAnnotation)
	r.reserved.release(client.ObjectKeyFromObject(agent), am.UID)
	am.Status.AgentRef = nil
	clearAgentConditions(am, "The Agent is released")
	setReserved(am, metav1.ConditionFalse, infrav1.NoAgentReason, "The Agent is released")
	return ctrl.Result{}, true, nil
}

// releaseAgent takes the next step of the Agent's release and says whether it is done, or how
// long to wait for assisted-service: with unbind, it restores the fields the claim changed and
// waits until assisted-service reports the Agent unbound or the unbind timeout passes; then it
// drops the claim. Without unbind the Agent keeps its binding and only the claim goes. Events
// go to regarding: the AgentMachine, or the Agent itself when its AgentMachine is gone.
func (r *AgentMachineReconciler) releaseAgent(ctx context.Context, agent *aiv1beta1.Agent, regarding client.Object, unbind bool) (time.Duration, bool, error) {
	log := ctrl.LoggerFrom(ctx)
	before := agent
	agent = agent.DeepCopy()
	if agent.Annotations == nil {
		// Someone stripped them: the claim label alone still names us.
		agent.Annotations = map[string]string{}
	}
	var previous previousSpec
	if raw := agent.Annotations[infrav1.PreviousSpecAnnotation]; raw != "" {
		if err := json.Unmarshal([]byte(raw), &previous); err != nil {
			log.Info("Ignoring an unreadable previous-spec annotation; unbinding to no ClusterDeployment", "Agent", klog.KObj(agent))
			previous = previousSpec{}
		}
	}
	requested, _ := time.Parse(time.RFC3339, agent.Annotations[infrav1.UnbindRequestedAnnotation])
	if requested.After(time.Now().Add(maxClockSkew)) {
		// Not a time this provider wrote (anyone who may edit the Agent can write one): waiting
		// for it would hold the release that long. Asked again, from now.
		log.Info("Ignoring an unbind request time in the future; asking for the unbind again", "Agent", klog.KObj(agent), "requested", requested)
		requested = time.Time{}
	}
	if requested.IsZero() && unbind {
		if previous.ClusterDeploymentName != nil {
			going, err := r.clusterDeploymentGoing(ctx, previous.ClusterDeploymentName)
			if err != nil {
				return 0, false, err
			}
			if going {
				// Bound back to a ClusterDeployment that is being deleted, the Agent would stay
				// pointed at a cluster that no longer exists: assisted-service unbinds a deleted
				// cluster's Agents when its AgentClusterInstall goes, and may already have.
				log.Info("The ClusterDeployment the Agent had before the claim is being deleted: unbinding the Agent to none",
					"Agent", klog.KObj(agent), "ClusterDeployment", previous.ClusterDeploymentName.Namespace+"/"+previous.ClusterDeploymentName.Name)
				previous.ClusterDeploymentName = nil
				raw, err := json.Marshal(previous)
				if err != nil {
					return 0, false, fmt.Errorf("encoding the previous spec of Agent %s: %w", agent.Name, err)
				}
				agent.Annotations[infrav1.PreviousSpecAnnotation] = string(raw)
			}
		}
		agent.Spec.ClusterDeploymentName = previous.ClusterDeploymentName
		agent.Spec.IgnitionEndpointTokenReference = previous.IgnitionEndpointTokenReference
		agent.Spec.IgnitionEndpointHTTPHeaders = previous.IgnitionEndpointHTTPHeaders
		agent.Spec.MachineConfigPool = previous.MachineConfigPool
		agent.Annotations[infrav1.UnbindRequestedAnnotation] = time.Now().UTC().Format(time.RFC3339)
		if err := r.Client.Patch(ctx, agent, lockedPatch(before)); err != nil {
			return 0, false, fmt.Errorf("unbinding Agent %s/%s: %w", agent.Namespace, agent.Name, err)
		}
		log.Info("Unbinding Agent", "Agent", klog.KObj(agent))
		r.Recorder.Eventf(regarding, related(regarding, before), corev1.EventTypeNormal, "AgentUnbinding", "Unbind", "Unbinding Agent %s/%s", agent.Namespace, agent.Name)
		return r.unbindTimeout(), false, nil
	}
	if unbind {
		timedOut := time.Since(requested) > r.unbindTimeout()
		if !unbound(agent, previous) && !timedOut {
			return time.Until(requested.Add(r.unbindTimeout())) + time.Second, false, nil
		}
		if timedOut {
			r.Recorder.Eventf(regarding, related(regarding, before), corev1.EventTypeWarning, "UnbindTimedOut", "Release",
				"assisted-service did not report Agent %s/%s unbound within %s; releasing it anyway", agent.Namespace, agent.Name, r.unbindTimeout())
		}
	}
	delete(agent.Labels, infrav1.AgentClaimedByLabel)
	delete(agent.Labels, infrav1.UpstreamAgentClaimLabel)
	delete(agent.Annotations, infrav1.UpstreamAgentClaimNamespaceAnnotation)
	delete(agent.Annotations, infrav1.ClaimOwnerAnnotation)
	delete(agent.Annotations, infrav1.PreviousSpecAnnotation)
	delete(agent.Annotations, infrav1.UnbindRequestedAnnotation)
	switch err := r.Client.Patch(ctx, agent, lockedPatch(before)); {
	case apierrors.IsNotFound(err):
		// Deleted meanwhile: nothing left to release, and nothing of it to keep pointing at.
		log.Info("Agent deleted before its release", "Agent", klog.KObj(agent))
	case err != nil:
		return 0, false, fmt.Errorf("releasing Agent %s/%s: %w", agent.Namespace, agent.Name, err)
	default:
		log.Info("Released Agent", "Agent", klog.KObj(agent))
		r.Recorder.Eventf(regarding, related(regarding, before), corev1.EventTypeNormal, "AgentReleased", "Release", "Released Agent %s/%s", agent.Namespace, agent.Name)
	}
	return 0, true, nil
}

// related is the Agent as the related object of an event about regarding, or nil when the event
// is about the Agent itself.
func related(regarding client.Object, agent *aiv1beta1.Agent) runtime.Object {
	if regarding == client.Object(agent) {
		return nil
	}
	return agent
}

// clusterDeploymentGoing tells whether the ClusterDeployment ref names is gone or being deleted.
func (r *AgentMachineReconciler) clusterDeploymentGoing(ctx context.Context, ref *aiv1beta1.ClusterReference) (bool, error) {
	cd := &hivev1.ClusterDeployment{}
	switch err := r.Client.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, cd); {
	case apierrors.IsNotFound(err):
		return true, nil
	case err != nil:
		return false, fmt.Errorf("reading ClusterDeployment %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	return !cd.DeletionTimestamp.IsZero(), nil
}

// unbound tells whether assisted-service reports the Agent unbound (or bound back to the
// ClusterDeployment it had before the claim).
func unbound(agent *aiv1beta1.Agent, previous previousSpec) bool {
	bound := conditionsv1.FindStatusCondition(agent.Status.Conditions, aiv1beta1.BoundCondition)
	if previous.ClusterDeploymentName != nil {
		return bound != nil && bound.Status == corev1.ConditionTrue && bound.Reason == aiv1beta1.BoundReason
	}
	return bound != nil && bound.Status == corev1.ConditionFalse &&
		(bound.Reason == aiv1beta1.UnboundReason || bound.Reason == aiv1beta1.UnbindingPendingUserActionReason)
}

// maxClockSkew is how far ahead of this manager's clock an unbind request time may be and
// still be taken as written: by the manager that led before, whose clock may run a little ahead.
const maxClockSkew = time.Minute

func (r *AgentMachineReconciler) unbindTimeout() time.Duration {
	if r.UnbindTimeout > 0 {
		return r.UnbindTimeout
	}
	return DefaultUnbindTimeout
}
