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
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/controllers/clustercache"
	"sigs.k8s.io/cluster-api/util"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/infrastructure/v1beta1"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/reconciler"
)

const (
	preTerminateHookOwner = "capi-provider-agent"
	// DefaultUnbindTimeout bounds how long the release of an Agent waits for assisted-service to
	// report it unbound; after it the claim is dropped anyway (with a warning event).
	DefaultUnbindTimeout = 10 * time.Minute
	// DefaultIgnitionTokenRefreshPeriod is how often the bootstrap data of a claimed host that is
	// not yet installed is read again (see refreshIgnition).
	DefaultIgnitionTokenRefreshPeriod = 5 * time.Minute
	// claimRetryDelay spaces the retries of a claim that lost a race for every Agent it tried.
	claimRetryDelay = 200 * time.Millisecond
	// workloadRetry spaces the tries to reach a workload cluster the ClusterCache has not
	// connected to yet.
	workloadRetry = 10 * time.Second
	// claimAttempts is how many Agents one reconcile tries to claim.
	claimAttempts = 3
)

// AgentMachineReconciler claims an Agent for each AgentMachine, binds it to the cluster's
// ClusterDeployment and reflects it in the AgentMachine.
type AgentMachineReconciler struct {
	// Client reads Cluster API objects and AgentMachines from the manager's cache and writes.
	Client client.Client
	// APIReader reads from the API server, bypassing caches.
	APIReader client.Reader
	// AgentReader reads Agents: the manager's cache, or the cache of --agent-namespace.
	AgentReader client.Reader
	// SecretReader, when set, reads bootstrap data Secrets from a cache of the Secrets labelled
	// with a Cluster's name (see bootstrapData); others are read from the API server.
	SecretReader client.Reader
	// AgentNamespace, when set, is the only namespace Agents are taken from.
	AgentNamespace string
	// SharedAgentPool lets an AgentMachine take Agents of every namespace when AgentNamespace is
	// empty (--shared-agent-pool); otherwise it takes those of its own namespace only.
	SharedAgentPool bool
	// AllowCrossNamespaceReferences: see setup.Options.
	AllowCrossNamespaceReferences bool
	// ClusterCache reaches workload clusters: the addresses of a host whose Agent is gone are
	// its Node's. Optional.
	ClusterCache clustercache.ClusterCache
	// WatchFilterValue is the value of the cluster.x-k8s.io/watch-filter label to reconcile.
	WatchFilterValue string
	// Recorder records events on AgentMachines.
	Recorder events.EventRecorder
	// UnbindTimeout bounds the wait for an unbind; DefaultUnbindTimeout when zero.
	UnbindTimeout time.Duration
	// IgnitionTokenRefreshPeriod: see setup.Options; DefaultIgnitionTokenRefreshPeriod when zero,
	// never when negative.
	IgnitionTokenRefreshPeriod time.Duration

	// tokens holds, per AgentMachine UID, the hash of the ignition token last written to its
	// token Secret, so that a refresh that finds the same token writes nothing and reads no more
	// than the bootstrap data.
	tokens sync.Map
	// tokensRead holds, per AgentMachine UID, when its bootstrap data was last read for the
	// ignition token (see refreshIgnition).
	tokensRead sync.Map
	// reserved are the Agents this process chose or claimed lately (see reservations).
	reserved reservations
	// pool holds the free Agents, fed by the Agent watch (see agentPool).
	pool *agentPool
}

// scope is what one reconcile of an AgentMachine works with.
type scope struct {
	agentMachine *infrav1.AgentMachine
	machine      *clusterv1.Machine
	cluster      *clusterv1.Cluster
	// finalizerUnsaved says that the AgentMachine's finalizer is set in memory only: the choice
	// of an Agent, the first write before a claim, carries it (see choose).
	finalizerUnsaved bool
}

// RBAC: only the verbs the code uses (docs/architecture_design.md, "Privileges"). Objects are
// written with patches (the patch helper, merge patches), never a full update; get/list/watch
// are the cache's informers. Status is patched; finalizers/update lets the controller set
// blockOwnerDeletion owner references to an AgentMachine (the OwnerReferencesPermissionEnforcement
// admission plugin asks for it). The manager's client does not cache Secrets (pkg/manager): get
// reads, through the ClusterCache, the workload kubeconfig, and the bootstrap data Secrets that
// have no cluster name label; list/watch is the informer of those that have it (the Secrets of
// Cluster API's clusters: as Cluster API's own managers cache them, see bootstrapData); create and
// update write the ignition token Secret the AgentMachine owns (garbage-collected with it, never
// deleted here).
// +kubebuilder:rbac:groups=capi-provider.agent-install.openshift.io,resources=agentmachines,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=capi-provider.agent-install.openshift.io,resources=agentmachines/status,verbs=patch
// +kubebuilder:rbac:groups=capi-provider.agent-install.openshift.io,resources=agentmachines/finalizers,verbs=update
// +kubebuilder:rbac:groups=capi-provider.agent-install.openshift.io,resources=agentclusters,verbs=get;list;watch
// +kubebuilder:rbac:groups=agent-install.openshift.io,resources=agents,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=clusters,verbs=get;list;watch
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=machines,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;patch

// Reconcile claims, binds and reflects the Agent of an AgentMachine, or releases it on deletion.
func (r *AgentMachineReconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, rerr error) {
	log := ctrl.LoggerFrom(ctx)
	am := &infrav1.AgentMachine{}
	if err := r.Client.Get(ctx, req.NamespacedName, am); err != nil {
		if apierrors.IsNotFound(err) {
			if err := r.releaseOrphanedHooks(ctx, req.NamespacedName); err != nil {
				return ctrl.Result{}, err
			}
			return r.releaseStaleClaims(ctx, req.NamespacedName)
		}
		return ctrl.Result{}, err
	}
	if reconciler.LeaveAlone(ctx, am, r.WatchFilterValue) {
		return ctrl.Result{}, nil
	}
	machine, err := util.GetOwnerMachine(ctx, r.Client, am.ObjectMeta)
	if err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, fmt.Errorf("getting the owner Machine: %w", err)
	}
	var cluster *clusterv1.Cluster
	if machine == nil {
		if wait := reconciler.WaitForOwner(am, time.Now()); wait > 0 {
			return ctrl.Result{RequeueAfter: wait}, nil
		}
	} else {
		log = log.WithValues("Machine", klog.KObj(machine))
		cluster, err = util.GetClusterFromMetadata(ctx, r.Client, machine.ObjectMeta)
		if err != nil && !apierrors.IsNotFound(err) && !errors.Is(err, util.ErrNoCluster) {
			return ctrl.Result{}, fmt.Errorf("getting the Cluster: %w", err)
		}
	}
	if cluster != nil {
		log = log.WithValues("Cluster", klog.KObj(cluster))
	}
	ctx = ctrl.LoggerInto(ctx, log)

	// One status write per reconcile, with observedGeneration as the spec patch leaves it (not
	// patch.Helper's separate conditions patch, nor a reconcile more for observedGeneration after
	// providerID bumps the generation): issue 19's fleet-scale budget. The finalizer is not
	// written in a patch and a reconcile of its own (Cluster API's finalizers.EnsureFinalizer): it
	// goes out with the choice of an Agent, before the claim of any host (choose), or else with
	// this reconcile's deferred patch.
	opened, err := reconciler.Open(ctx, am, reconciler.Opening{Client: r.Client, Cluster: cluster,
		Finalizer: infrav1.AgentMachineFinalizer, UpstreamFinalizer: infrav1.UpstreamAgentMachineFinalizer,
		FinalizerWithFirstWrite: true, NewWriter: reconciler.OnePatch})
	if opened == nil {
		return ctrl.Result{}, err
	}
	s := &scope{agentMachine: am, machine: machine, cluster: cluster, finalizerUnsaved: opened.FinalizerUnsaved}
	defer opened.Close(ctx, &rerr, reconciler.Closing{Recorder: r.Recorder,
		Summary: func() error { return setReady(am) },
		Observe: func(generation int64) { am.Status.ObservedGeneration = generation }})

	if !am.DeletionTimestamp.IsZero() {
		return r.reconcileDelete(ctx, s)
	}
	return r.reconcileNormal(ctx, s)
}

func (r *AgentMachineReconciler) reconcileNormal(ctx context.Context, s *scope) (ctrl.Result, error) {
	am := s.agentMachine
	if s.machine == nil {
		setReserved(am, metav1.ConditionFalse, infrav1.WaitingForMachineReason, "Waiting for Cluster API to set a Machine as the owner of this AgentMachine")
		return ctrl.Result{}, nil
	}
	if !s.machine.DeletionTimestamp.IsZero() {
		return r.reconcileMachineDeleting(ctx, s)
	}
	if s.cluster == nil {
		setReserved(am, metav1.ConditionFalse, infrav1.WaitingForClusterInfrastructureReason,
			fmt.Sprintf("Waiting for Cluster %q of the Machine", s.machine.Spec.ClusterName))
		return ctrl.Result{}, nil
	}

	agent, err := r.claimedAgent(ctx, am, true)
	if errors.Is(err, errCacheBehind) {
		return ctrl.Result{RequeueAfter: claimRetryDelay}, nil
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	if agent == nil && am.Spec.ProviderID != "" && s.machine.Status.NodeRef.IsDefined() {
		// The host was installed and is a Node: it needs its Agent no more. This is the case
		// after a clusterctl move, which carries no status, and whose new hub's assisted-service
		// deletes the Agents of hosts that registered elsewhere.
		setNodeJoined(am, s.machine)
		return r.reconcileNodeAddresses(ctx, s)
	}
	if agent == nil && am.Spec.ProviderID != "" {
		// The host was claimed once and its Agent is gone: never claim a different host for a
		// Machine whose providerID is set.
		setReserved(am, metav1.ConditionFalse, infrav1.AgentNotFoundReason,
			fmt.Sprintf("The Agent of this Machine (%s) no longer exists; delete the Machine to replace the host", am.Spec.ProviderID))
		clearAgentConditions(am, "The claimed Agent no longer exists")
		am.Status.Ready = false //nolint:staticcheck // still written for clients of the v1beta1 contract
		return ctrl.Result{}, nil
	}
	claimedNow := agent == nil
	if claimedNow {
		var res ctrl.Result
		agent, res, err = r.claim(ctx, s)
		if err != nil || agent == nil {
			clearAgentConditions(am, "No Agent is claimed yet")
			return res, err
		}
	}

	am.Status.AgentRef = &infrav1.AgentReference{Namespace: agent.Namespace, Name: agent.Name}
	am.Spec.ProviderID = infrav1.ProviderIDPrefix + agent.Name
	ensureBackupLabel(&am.ObjectMeta)
	am.Status.FailureDomain = agent.Labels[infrav1.FailureDomainLabel]
	setReserved(am, metav1.ConditionTrue, infrav1.AgentReservedReason, "")
	mirrorAgent(am, agent)
	if err := r.ensurePreTerminateHook(ctx, s.machine); err != nil {
		return ctrl.Result{}, err
	}
	return r.refreshIgnition(ctx, s, agent, claimedNow)
}
