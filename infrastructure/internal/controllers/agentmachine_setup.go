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
	"errors"
	"fmt"
	"maps"
	"strings"

	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util"
	"sigs.k8s.io/cluster-api/util/predicates"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	infrav1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/infrastructure/v1beta1"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/reconciler"
)

// SetupWithManager registers the controller, its watches and the cache indexes. agentCache is the
// cache Agents are read and watched from (the manager's cache, or one limited to the namespace of
// --agent-namespace); it must also be r.AgentReader.
func (r *AgentMachineReconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, agentCache cache.Cache, options controller.Options) error {
	if r.Client == nil || r.APIReader == nil || r.AgentReader == nil || r.Recorder == nil || agentCache == nil {
		return errors.New("AgentMachineReconciler needs Client, APIReader, AgentReader, Recorder and an Agent cache")
	}
	if err := setupIndexes(ctx, agentCache, mgr.GetFieldIndexer()); err != nil {
		return err
	}
	r.pool = newAgentPool()
	log := ctrl.LoggerFrom(ctx).WithValues("controller", "agentmachine")
	scheme := mgr.GetScheme()
	filter := predicates.ResourceHasFilterLabel(scheme, log, r.WatchFilterValue)
	clusterToAgentMachines, err := util.ClusterToTypedObjectsMapper(r.Client, &infrav1.AgentMachineList{}, scheme)
	if err != nil {
		return fmt.Errorf("building the Cluster to AgentMachines mapper: %w", err)
	}
	err = ctrl.NewControllerManagedBy(mgr).
		Named("agentmachine").
		WithOptions(options).
		For(&infrav1.AgentMachine{}, builder.WithPredicates(filter)).
		Watches(&clusterv1.Machine{},
			handler.EnqueueRequestsFromMapFunc(util.MachineToInfrastructureMapFunc(infrav1.GroupVersion.WithKind(agentMachineKind))),
			builder.WithPredicates(filter)).
		Watches(&clusterv1.Cluster{},
			handler.EnqueueRequestsFromMapFunc(clusterToAgentMachines),
			builder.WithPredicates(predicates.All(scheme, log,
				predicates.ClusterPausedTransitionsOrInfrastructureProvisioned(scheme, log), filter))).
		Watches(&infrav1.AgentCluster{},
			handler.EnqueueRequestsFromMapFunc(r.agentClusterToAgentMachines),
			builder.WithPredicates(agentClusterReferencesChanged(), filter)).
		WatchesRawSource(source.Kind(agentCache, &aiv1beta1.Agent{}, r.agentEventHandler())).
		Complete(r)
	if err != nil {
		return fmt.Errorf("setting up the AgentMachine controller: %w", err)
	}
	return nil
}

// agentClusterReferencesChanged lets through the AgentCluster events its AgentMachines act on: its
// creation and deletion, a change of its spec (the references it gives, which may be refused), of
// the ClusterDeployment its status records or of its labels (its Cluster); not the updates of its
// conditions and other status, each of which would wake every AgentMachine of the cluster.
func agentClusterReferencesChanged() predicate.Funcs {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		old, ok := e.ObjectOld.(*infrav1.AgentCluster)
		ac, ok2 := e.ObjectNew.(*infrav1.AgentCluster)
		if !ok || !ok2 {
			return true
		}
		return old.Generation != ac.Generation || old.Status.ClusterDeploymentRef != ac.Status.ClusterDeploymentRef ||
			!maps.Equal(old.Labels, ac.Labels) || !old.DeletionTimestamp.Equal(ac.DeletionTimestamp)
	}}
}

// agentClusterToAgentMachines wakes the AgentMachines of the AgentCluster's Cluster (they wait for
// its ClusterDeployment reference).
func (r *AgentMachineReconciler) agentClusterToAgentMachines(ctx context.Context, o client.Object) []reconcile.Request {
	name := o.GetLabels()[clusterv1.ClusterNameLabel]
	if name == "" {
		return nil
	}
	list := &infrav1.AgentMachineList{}
	if err := r.Client.List(ctx, list, client.InNamespace(o.GetNamespace()),
		client.MatchingLabels{clusterv1.ClusterNameLabel: name}, client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing the AgentMachines of a Cluster", "Cluster", name)
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
	}
	return out
}

// agentEventHandler maps Agent events to AgentMachines: the claiming AgentMachine for every
// event (it mirrors the Agent, and notices when it vanishes); the waiting AgentMachines only when
// an Agent becomes claimable or its labels change while claimable, not on every status update
// assisted-service makes.
func (r *AgentMachineReconciler) agentEventHandler() handler.TypedEventHandler[*aiv1beta1.Agent, reconcile.Request] {
	add := func(q workqueue.TypedRateLimitingInterface[reconcile.Request], reqs []reconcile.Request) {
		for _, req := range reqs {
			q.Add(req)
		}
	}
	return handler.TypedFuncs[*aiv1beta1.Agent, reconcile.Request]{
		CreateFunc: func(ctx context.Context, e event.TypedCreateEvent[*aiv1beta1.Agent], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			r.observeAgent(e.Object)
			if e.IsInInitialList {
				// The waiting AgentMachines are reconciled after the cache's first sync anyway
				// (their own initial events): waking every one of them for each of a hub's
				// Agents would cost Agents x AgentMachines at every start.
				if owner := r.claimOwner(ctx, e.Object); owner != nil {
					q.Add(*owner)
				}
				return
			}
			add(q, r.explainedWaiting(ctx, e.Object))
			add(q, r.agentToAgentMachines(ctx, e.Object))
		},
		UpdateFunc: func(ctx context.Context, e event.TypedUpdateEvent[*aiv1beta1.Agent], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			r.observeAgent(e.ObjectNew)
			if standingChanged(e.ObjectOld, e.ObjectNew) {
				add(q, r.explainedWaiting(ctx, e.ObjectNew))
			}
			oldOwner, newOwner := r.claimOwner(ctx, e.ObjectOld), r.claimOwner(ctx, e.ObjectNew)
			if oldOwner != nil && (newOwner == nil || *newOwner != *oldOwner) {
				q.Add(*oldOwner)
			}
			if newOwner != nil {
				q.Add(*newOwner)
				return
			}
			newlyUsable := agentUsable(e.ObjectNew) == "" &&
				(agentUsable(e.ObjectOld) != "" || !maps.Equal(e.ObjectOld.Labels, e.ObjectNew.Labels) ||
					e.ObjectOld.Status.Inventory.Cpu.Architecture != e.ObjectNew.Status.Inventory.Cpu.Architecture)
			if newlyUsable {
				add(q, r.agentToAgentMachines(ctx, e.ObjectNew))
			}
		},
		DeleteFunc: func(ctx context.Context, e event.TypedDeleteEvent[*aiv1beta1.Agent], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if r.pool != nil {
				r.pool.forget(client.ObjectKeyFromObject(e.Object))
			}
			add(q, r.explainedWaiting(ctx, e.Object))
			if owner := r.claimOwner(ctx, e.Object); owner != nil {
				q.Add(*owner)
			}
		},
		GenericFunc: func(ctx context.Context, e event.TypedGenericEvent[*aiv1beta1.Agent], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			r.observeAgent(e.Object)
			add(q, r.agentToAgentMachines(ctx, e.Object))
		},
	}
}

// observeAgent keeps the pool of free Agents in step with the cache, before the AgentMachines the
// event wakes look into it. An Agent outside --agent-namespace is never pooled; which of the
// pooled Agents an AgentMachine may take is its agentScope's (agentRequest.namespace).
func (r *AgentMachineReconciler) observeAgent(agent *aiv1beta1.Agent) {
	if r.pool == nil {
		return
	}
	if r.AgentNamespace != "" && agent.Namespace != r.AgentNamespace {
		r.pool.forget(client.ObjectKeyFromObject(agent))
		return
	}
	r.pool.observe(agent)
}

// claimOwner names the AgentMachine that claimed the Agent: its claim-owner annotation, or, when
// someone removed the annotations, the AgentMachine whose UID the claim label holds (which would
// otherwise never hear of the Agent again: not of its unbind, not of its deletion), or the one
// that upstream's claim names by namespace and name.
func (r *AgentMachineReconciler) claimOwner(ctx context.Context, agent *aiv1beta1.Agent) *reconcile.Request {
	if ns, name, ok := strings.Cut(agent.Annotations[infrav1.ClaimOwnerAnnotation], "/"); ok {
		return &reconcile.Request{NamespacedName: client.ObjectKey{Namespace: ns, Name: name}}
	}
	uid := claimUID(agent)
	if uid == "" {
		return nil
	}
	list := &infrav1.AgentMachineList{}
	if err := r.Client.List(ctx, list, client.MatchingFields{agentMachineUIDIndex: uid}, client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing the AgentMachine that claimed an Agent", "Agent", klog.KObj(agent))
		return nil
	}
	if len(list.Items) == 0 {
		if ns := agent.Annotations[infrav1.UpstreamAgentClaimNamespaceAnnotation]; ns != "" && agent.Labels[infrav1.AgentClaimedByLabel] == "" {
			return &reconcile.Request{NamespacedName: client.ObjectKey{Namespace: ns, Name: uid}}
		}
		return nil
	}
	return &reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[0])}
}

// standingChanged tells whether what keeps an Agent from a waiting AgentMachine, or lets it take
// it, may have changed (agentRequest.mismatch): its availability (a claim, approval, connection,
// validation, deletion), its labels, its cluster or its CPU architecture. Not the status updates
// assisted-service makes while a host installs.
func standingChanged(old, agent *aiv1beta1.Agent) bool {
	return agentUsable(old) != agentUsable(agent) || !maps.Equal(old.Labels, agent.Labels) ||
		!ptr.Equal(old.Spec.ClusterDeploymentName, agent.Spec.ClusterDeploymentName) ||
		old.Status.Inventory.Cpu.Architecture != agent.Status.Inventory.Cpu.Architecture
}

// explainedWaiting wakes the waiting AgentMachines that say why no Agent fits them (counting the
// Agents of their scope by what keeps each out) and whose scope holds the Agent: its arrival, its
// deletion or a change of its standing changes their counts, which would otherwise stay as they
// were until some Agent became free. A claim storm wakes none: an AgentMachine explains only when
// nothing fits.
func (r *AgentMachineReconciler) explainedWaiting(ctx context.Context, agent *aiv1beta1.Agent) []reconcile.Request {
	list := &infrav1.AgentMachineList{}
	if err := r.Client.List(ctx, list, client.MatchingFields{waitingIndex: waitingExplained}, client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing the AgentMachines that found no Agent")
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		am := &list.Items[i]
		if reconciler.InWatchFilter(am, r.WatchFilterValue) && inScope(r.agentScope(am.Namespace), agent.Namespace) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(am)})
		}
	}
	return out
}

// agentToAgentMachines wakes the AgentMachine that claimed the Agent; an Agent that is free wakes
// only the waiting AgentMachines whose agentLabelSelector matches it.
func (r *AgentMachineReconciler) agentToAgentMachines(ctx context.Context, agent *aiv1beta1.Agent) []reconcile.Request {
	if owner := r.claimOwner(ctx, agent); owner != nil {
		return []reconcile.Request{*owner}
	}
	if agentUsable(agent) != "" {
		return nil
	}
	list := &infrav1.AgentMachineList{}
	if err := r.Client.List(ctx, list, client.MatchingFields{waitingIndex: "true"}, client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing the AgentMachines that wait for an Agent")
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		am := &list.Items[i]
		if !reconciler.InWatchFilter(am, r.WatchFilterValue) || !inScope(r.agentScope(am.Namespace), agent.Namespace) {
			continue
		}
		if sel := am.Spec.AgentLabelSelector; sel != nil {
			s, err := metav1.LabelSelectorAsSelector(sel)
			if err != nil || !s.Matches(labels.Set(agent.Labels)) {
				continue
			}
		}
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(am)})
	}
	return out
}
