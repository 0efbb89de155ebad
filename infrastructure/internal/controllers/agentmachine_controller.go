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

// Package controller holds the infrastructure provider's controllers: AgentMachine claims and
// binds Agents for Machines.
package controllers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	conditionsv1 "github.com/openshift/custom-resource-status/conditions/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/controllers/clustercache"
	"sigs.k8s.io/cluster-api/util"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/cluster-api/util/finalizers"
	"sigs.k8s.io/cluster-api/util/patch"
	"sigs.k8s.io/cluster-api/util/paused"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	infrav1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/infrastructure/v1beta1"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/move"
)

const (
	preTerminateHookOwner = "capi-provider-agent"
	// DefaultUnbindTimeout bounds how long the release of an Agent waits for assisted-service to
	// report it unbound; after it the claim is dropped anyway (with a warning event).
	DefaultUnbindTimeout = 10 * time.Minute
	// claimRetryDelay spaces the retries of a claim that lost a race for every Agent it tried.
	claimRetryDelay = 200 * time.Millisecond
	// workloadRetry spaces the tries to reach a workload cluster the ClusterCache has not
	// connected to yet.
	workloadRetry = 10 * time.Second
	// claimAttempts is how many of the best-ranked Agents one reconcile tries to claim.
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
	// AgentNamespace, when set, is the only namespace Agents are taken from.
	AgentNamespace string
	// ClusterCache reaches workload clusters: the addresses of a host whose Agent is gone are
	// its Node's. Optional.
	ClusterCache clustercache.ClusterCache
	// WatchFilterValue is the value of the cluster.x-k8s.io/watch-filter label to reconcile.
	WatchFilterValue string
	// Recorder records events on AgentMachines.
	Recorder events.EventRecorder
	// UnbindTimeout bounds the wait for an unbind; DefaultUnbindTimeout when zero.
	UnbindTimeout time.Duration

	// claims remembers, per AgentMachine UID, the Agent this process claimed, until the cache
	// shows it: a reconcile that follows the claim before the cache catches up must not claim a
	// second Agent. After a restart the freshly synced cache (claim index) has every claim.
	claims sync.Map
}

// machineScope is what one reconcile of an AgentMachine works with.
type machineScope struct {
	agentMachine *infrav1.AgentMachine
	machine      *clusterv1.Machine
	cluster      *clusterv1.Cluster
}

// +kubebuilder:rbac:groups=capi-provider.agent-install.openshift.io,resources=agentmachines,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=capi-provider.agent-install.openshift.io,resources=agentmachines/status;agentmachines/finalizers,verbs=get;update;patch
// +kubebuilder:rbac:groups=capi-provider.agent-install.openshift.io,resources=agentclusters,verbs=get;list;watch
// +kubebuilder:rbac:groups=agent-install.openshift.io,resources=agents,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=clusters,verbs=get;list;watch
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=machines,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;create;update;patch

// Reconcile claims, binds and reflects the Agent of an AgentMachine, or releases it on deletion.
func (r *AgentMachineReconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, rerr error) {
	log := ctrl.LoggerFrom(ctx)
	am := &infrav1.AgentMachine{}
	if err := r.Client.Get(ctx, req.NamespacedName, am); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if move.LeaveAlone(ctx, am) {
		return ctrl.Result{}, nil
	}
	if !r.inScope(am) {
		// Requests also come from watches of other kinds (Agents, Machines): honor --watch-filter here.
		return ctrl.Result{}, nil
	}
	machine, err := util.GetOwnerMachine(ctx, r.Client, am.ObjectMeta)
	if err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, fmt.Errorf("getting the owner Machine: %w", err)
	}
	var cluster *clusterv1.Cluster
	if machine != nil {
		log = log.WithValues("Machine", klogRef(machine))
		cluster, err = util.GetClusterFromMetadata(ctx, r.Client, machine.ObjectMeta)
		if err != nil && !apierrors.IsNotFound(err) && !errors.Is(err, util.ErrNoCluster) {
			return ctrl.Result{}, fmt.Errorf("getting the Cluster: %w", err)
		}
	}
	if cluster != nil {
		log = log.WithValues("Cluster", klogRef(cluster))
		if isPaused, requeue, err := paused.EnsurePausedCondition(ctx, r.Client, cluster, am); err != nil || isPaused || requeue {
			return ctrl.Result{}, err
		}
	}
	ctx = ctrl.LoggerInto(ctx, log)

	if am.DeletionTimestamp.IsZero() {
		if added, err := finalizers.EnsureFinalizer(ctx, r.Client, am, infrav1.AgentMachineFinalizer); err != nil || added {
			return ctrl.Result{}, err
		}
	}

	helper, err := patch.NewHelper(am, r.Client)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("creating patch helper: %w", err)
	}
	s := &machineScope{agentMachine: am, machine: machine, cluster: cluster}
	defer func() {
		if err := setReady(am); err != nil {
			rerr = kerrors.NewAggregate([]error{rerr, err})
		}
		am.Status.ObservedGeneration = am.Generation
		if err := helper.Patch(ctx, am, patch.WithOwnedConditions{Conditions: ownedConditions}); err != nil {
			rerr = kerrors.NewAggregate([]error{rerr, fmt.Errorf("patching AgentMachine: %w", err)})
		}
	}()

	if !am.DeletionTimestamp.IsZero() {
		return r.reconcileDelete(ctx, s)
	}
	return r.reconcileNormal(ctx, s)
}

func (r *AgentMachineReconciler) reconcileNormal(ctx context.Context, s *machineScope) (ctrl.Result, error) {
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

	agent, err := r.claimedAgent(ctx, am)
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
		am.Status.Ready = false
		return ctrl.Result{}, nil
	}
	if agent == nil {
		var res ctrl.Result
		agent, res, err = r.claim(ctx, s)
		if err != nil || agent == nil {
			clearAgentConditions(am, "No Agent is claimed yet")
			return res, err
		}
	}

	am.Status.AgentRef = &infrav1.AgentReference{Namespace: agent.Namespace, Name: agent.Name}
	am.Spec.ProviderID = infrav1.ProviderIDPrefix + agent.Name
	am.Status.FailureDomain = agent.Labels[infrav1.FailureDomainLabel]
	setReserved(am, metav1.ConditionTrue, infrav1.AgentReservedReason, "")
	mirrorAgent(am, agent)
	if err := r.ensurePreTerminateHook(ctx, s.machine); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, nil
}

// claimedAgent returns the Agent this AgentMachine holds, if any: from status.agentRef, else from
// the claim index (which survives restarts and lost status updates), else from this process's
// memory of a claim the cache does not show yet.
func (r *AgentMachineReconciler) claimedAgent(ctx context.Context, am *infrav1.AgentMachine) (*aiv1beta1.Agent, error) {
	uid := string(am.UID)
	if ref := am.Status.AgentRef; ref != nil {
		agent := &aiv1beta1.Agent{}
		err := r.AgentReader.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, agent)
		switch {
		case apierrors.IsNotFound(err):
			// fall through to the index and memory: the cache may lag behind a fresh claim.
		case err != nil:
			return nil, fmt.Errorf("getting Agent %s/%s: %w", ref.Namespace, ref.Name, err)
		case agent.Labels[infrav1.AgentClaimedByLabel] == uid:
			return agent, nil
		}
	}
	list := &aiv1beta1.AgentList{}
	if err := r.AgentReader.List(ctx, list, client.MatchingFields{agentClaimIndex: uid}); err != nil {
		return nil, fmt.Errorf("listing the Agents claimed by this AgentMachine: %w", err)
	}
	if len(list.Items) > 0 {
		r.claims.Delete(uid)
		return &list.Items[0], nil
	}
	if v, ok := r.claims.Load(uid); ok {
		agent := &aiv1beta1.Agent{}
		if err := r.APIReader.Get(ctx, v.(types.NamespacedName), agent); err != nil {
			if apierrors.IsNotFound(err) {
				r.claims.Delete(uid)
				return nil, nil
			}
			return nil, fmt.Errorf("getting claimed Agent %s: %w", v, err)
		}
		if agent.Labels[infrav1.AgentClaimedByLabel] == uid {
			return agent, nil
		}
		r.claims.Delete(uid)
	}
	return nil, nil
}

// claim waits for what the claim needs, then chooses and claims the best fit Agent.
func (r *AgentMachineReconciler) claim(ctx context.Context, s *machineScope) (*aiv1beta1.Agent, ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	am, machine, cluster := s.agentMachine, s.machine, s.cluster
	if !ptr.Deref(cluster.Status.Initialization.InfrastructureProvisioned, false) {
		setReserved(am, metav1.ConditionFalse, infrav1.WaitingForClusterInfrastructureReason,
			fmt.Sprintf("Waiting for the infrastructure of Cluster %s to be provisioned", cluster.Name))
		return nil, ctrl.Result{}, nil
	}
	if machine.Spec.Bootstrap.DataSecretName == nil {
		setReserved(am, metav1.ConditionFalse, infrav1.WaitingForBootstrapDataReason,
			fmt.Sprintf("Waiting for the bootstrap provider to set the data Secret of Machine %s", machine.Name))
		return nil, ctrl.Result{}, nil
	}
	cd, err := r.clusterDeployment(ctx, cluster)
	if err != nil {
		return nil, ctrl.Result{}, err
	}
	if cd == nil {
		setReserved(am, metav1.ConditionFalse, infrav1.WaitingForClusterDeploymentReason,
			fmt.Sprintf("Waiting for the AgentCluster of Cluster %s to reference a ClusterDeployment", cluster.Name))
		return nil, ctrl.Result{}, nil
	}
	secret := &corev1.Secret{}
	secretKey := client.ObjectKey{Namespace: machine.Namespace, Name: *machine.Spec.Bootstrap.DataSecretName}
	if err := r.Client.Get(ctx, secretKey, secret); err != nil {
		if apierrors.IsNotFound(err) {
			setReserved(am, metav1.ConditionFalse, infrav1.WaitingForBootstrapDataReason,
				fmt.Sprintf("Waiting for bootstrap data Secret %s", secretKey.Name))
			return nil, ctrl.Result{RequeueAfter: 10 * time.Second}, nil
		}
		return nil, ctrl.Result{}, fmt.Errorf("getting bootstrap data Secret %s: %w", secretKey.Name, err)
	}
	source, err := parseBootstrapData(secret)
	if err != nil {
		setReserved(am, metav1.ConditionFalse, infrav1.InvalidBootstrapDataReason,
			fmt.Sprintf("Bootstrap data Secret %s: %v", secretKey.Name, err))
		return nil, ctrl.Result{}, fmt.Errorf("reading bootstrap data Secret %s: %w", secretKey.Name, err)
	}

	request, err := newAgentRequest(am, machine, cd)
	if err != nil {
		setReserved(am, metav1.ConditionFalse, infrav1.NoSuitableAgentsReason, err.Error())
		return nil, ctrl.Result{}, nil //nolint:nilerr // a user error: reported in the condition, retried on change.
	}
	fd := request.failureDomain
	if fd == "" {
		fd = anyFailureDomain
	}
	free := &aiv1beta1.AgentList{}
	if err := r.AgentReader.List(ctx, free, r.agentListOptions(client.MatchingFields{agentFreeIndex: fd})...); err != nil {
		return nil, ctrl.Result{}, fmt.Errorf("listing free Agents: %w", err)
	}
	ranked, _ := rankAgents(request, pointers(free.Items))
	if len(ranked) == 0 {
		// Explain, counting every Agent this provider sees.
		all := &aiv1beta1.AgentList{}
		if err := r.AgentReader.List(ctx, all, r.agentListOptions()...); err != nil {
			return nil, ctrl.Result{}, fmt.Errorf("listing Agents: %w", err)
		}
		_, summary := rankAgents(request, pointers(all.Items))
		setReserved(am, metav1.ConditionFalse, infrav1.NoSuitableAgentsReason, summary)
		return nil, ctrl.Result{}, nil
	}

	tokenRef, err := r.ensureTokenSecret(ctx, am, source.Token)
	if err != nil {
		return nil, ctrl.Result{}, err
	}
	for i, candidate := range ranked {
		if i == claimAttempts {
			break
		}
		agent, err := r.claimAgent(ctx, am, candidate, cd, tokenRef, source.Headers)
		if err != nil {
			if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
				log.V(4).Info("Lost the race for an Agent, trying the next", "Agent", klogRef(candidate))
				continue
			}
			return nil, ctrl.Result{}, fmt.Errorf("claiming Agent %s/%s: %w", candidate.Namespace, candidate.Name, err)
		}
		r.claims.Store(string(am.UID), client.ObjectKeyFromObject(agent))
		log.Info("Claimed Agent", "Agent", klogRef(agent))
		r.Recorder.Eventf(am, agent, corev1.EventTypeNormal, "AgentClaimed", "Claim",
			"Claimed Agent %s/%s and bound it to ClusterDeployment %s/%s", agent.Namespace, agent.Name, cd.Namespace, cd.Name)
		return agent, ctrl.Result{}, nil
	}
	setReserved(am, metav1.ConditionFalse, infrav1.NoSuitableAgentsReason,
		"Other Machines claimed the best fit Agents first; trying again")
	return nil, ctrl.Result{RequeueAfter: claimRetryDelay}, nil
}

// claimAgent claims and binds one Agent in a single update. The update carries the
// resourceVersion the Agent was read with, so that of two concurrent claims only one succeeds.
func (r *AgentMachineReconciler) claimAgent(ctx context.Context, am *infrav1.AgentMachine, cached *aiv1beta1.Agent,
	cd *aiv1beta1.ClusterReference, tokenRef *aiv1beta1.IgnitionEndpointTokenReference, headers map[string]string) (*aiv1beta1.Agent, error) {
	agent := cached.DeepCopy()
	previous, err := json.Marshal(previousSpec{
		ClusterDeploymentName:          agent.Spec.ClusterDeploymentName,
		IgnitionEndpointTokenReference: agent.Spec.IgnitionEndpointTokenReference,
		IgnitionEndpointHTTPHeaders:    agent.Spec.IgnitionEndpointHTTPHeaders,
	})
	if err != nil {
		return nil, err
	}
	if agent.Labels == nil {
		agent.Labels = map[string]string{}
	}
	if agent.Annotations == nil {
		agent.Annotations = map[string]string{}
	}
	agent.Labels[infrav1.AgentClaimedByLabel] = string(am.UID)
	agent.Annotations[infrav1.ClaimOwnerAnnotation] = am.Namespace + "/" + am.Name
	agent.Annotations[infrav1.PreviousSpecAnnotation] = string(previous)
	delete(agent.Annotations, infrav1.UnbindRequestedAnnotation)
	agent.Spec.ClusterDeploymentName = cd
	agent.Spec.IgnitionEndpointTokenReference = tokenRef
	agent.Spec.IgnitionEndpointHTTPHeaders = headers
	if err := r.Client.Update(ctx, agent); err != nil {
		return nil, err
	}
	return agent, nil
}

// previousSpec are the Agent fields a claim changes, restored on release.
type previousSpec struct {
	ClusterDeploymentName          *aiv1beta1.ClusterReference               `json:"clusterDeploymentName,omitempty"`
	IgnitionEndpointTokenReference *aiv1beta1.IgnitionEndpointTokenReference `json:"ignitionEndpointTokenReference,omitempty"`
	IgnitionEndpointHTTPHeaders    map[string]string                         `json:"ignitionEndpointHTTPHeaders,omitempty"`
}

// ensureTokenSecret writes the ignition endpoint token for the Agent into a Secret owned by the
// AgentMachine (so that it is garbage-collected with it). No token, no Secret. It creates first
// and reads only when the Secret exists (one request in the usual case).
func (r *AgentMachineReconciler) ensureTokenSecret(ctx context.Context, am *infrav1.AgentMachine, token string) (*aiv1beta1.IgnitionEndpointTokenReference, error) {
	if token == "" {
		return nil, nil
	}
	want := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: am.Namespace, Name: "agentmachine-" + am.Name + "-ignition-token"},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{IgnitionTokenSecretKey: []byte(token)},
	}
	if name := am.Labels[clusterv1.ClusterNameLabel]; name != "" {
		want.Labels = map[string]string{clusterv1.ClusterNameLabel: name}
	}
	if err := controllerutil.SetControllerReference(am, want, r.Client.Scheme()); err != nil {
		return nil, err
	}
	ref := &aiv1beta1.IgnitionEndpointTokenReference{Namespace: want.Namespace, Name: want.Name}
	err := r.Client.Create(ctx, want)
	if err == nil {
		return ref, nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("creating the ignition token Secret %s: %w", want.Name, err)
	}
	existing := &corev1.Secret{}
	if err := r.Client.Get(ctx, client.ObjectKeyFromObject(want), existing); err != nil {
		return nil, fmt.Errorf("getting the ignition token Secret %s: %w", want.Name, err)
	}
	if bytes.Equal(existing.Data[IgnitionTokenSecretKey], want.Data[IgnitionTokenSecretKey]) && metav1.IsControlledBy(existing, am) {
		return ref, nil
	}
	existing.Data = want.Data
	if err := controllerutil.SetControllerReference(am, existing, r.Client.Scheme()); err != nil {
		return nil, err
	}
	if err := r.Client.Update(ctx, existing); err != nil {
		return nil, fmt.Errorf("updating the ignition token Secret %s: %w", want.Name, err)
	}
	return ref, nil
}

// clusterDeployment returns the ClusterDeployment the cluster's Agents bind to, as the Cluster's
// AgentCluster records it, or nil while it does not.
func (r *AgentMachineReconciler) clusterDeployment(ctx context.Context, cluster *clusterv1.Cluster) (*aiv1beta1.ClusterReference, error) {
	ref := cluster.Spec.InfrastructureRef
	if ref.Kind != "AgentCluster" || ref.APIGroup != infrav1.GroupVersion.Group {
		return nil, fmt.Errorf("cluster %s has infrastructure %s %s, not an AgentCluster", cluster.Name, ref.Kind, ref.Name)
	}
	ac := &infrav1.AgentCluster{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: cluster.Namespace, Name: ref.Name}, ac); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("getting AgentCluster %s: %w", ref.Name, err)
	}
	cd := ac.Spec.ClusterDeploymentRef
	if cd == nil || cd.Name == "" {
		cd = &ac.Status.ClusterDeploymentRef
	}
	if cd.Name == "" {
		return nil, nil
	}
	ns := cd.Namespace
	if ns == "" {
		ns = ac.Namespace
	}
	return &aiv1beta1.ClusterReference{Namespace: ns, Name: cd.Name}, nil
}

func newAgentRequest(am *infrav1.AgentMachine, machine *clusterv1.Machine, cd *aiv1beta1.ClusterReference) (agentRequest, error) {
	req := agentRequest{
		failureDomain:     machine.Spec.FailureDomain,
		architecture:      machine.Labels[infrav1.ArchitectureLabel],
		clusterDeployment: cd.Namespace + "/" + cd.Name,
		key:               string(am.UID),
	}
	if ref := machine.Spec.Bootstrap.ConfigRef; ref.Kind == bootstrapv1.ConfigKind && ref.APIGroup == bootstrapv1.GroupVersion.Group {
		req.bootstrapConfig = machine.Namespace + "/" + ref.Name
	}
	if am.Spec.AgentLabelSelector != nil {
		sel, err := metav1.LabelSelectorAsSelector(am.Spec.AgentLabelSelector)
		if err != nil {
			return req, fmt.Errorf("invalid agentLabelSelector: %w", err)
		}
		req.selector = sel
	}
	return req, nil
}

func (r *AgentMachineReconciler) agentListOptions(opts ...client.ListOption) []client.ListOption {
	opts = append(opts, client.UnsafeDisableDeepCopy)
	if r.AgentNamespace != "" {
		opts = append(opts, client.InNamespace(r.AgentNamespace))
	}
	return opts
}

func (r *AgentMachineReconciler) ensurePreTerminateHook(ctx context.Context, machine *clusterv1.Machine) error {
	if _, ok := machine.Annotations[infrav1.PreTerminateHookAnnotation]; ok {
		return nil
	}
	before := machine.DeepCopy()
	if machine.Annotations == nil {
		machine.Annotations = map[string]string{}
	}
	machine.Annotations[infrav1.PreTerminateHookAnnotation] = preTerminateHookOwner
	if err := r.Client.Patch(ctx, machine, client.MergeFrom(before)); err != nil {
		return fmt.Errorf("adding the pre-terminate hook to Machine %s: %w", machine.Name, err)
	}
	return nil
}

// reconcileMachineDeleting runs the pre-terminate hook: once Cluster API waits for it (the Node is
// drained), unbind and release the Agent, then remove the hook so that the Machine can go.
func (r *AgentMachineReconciler) reconcileMachineDeleting(ctx context.Context, s *machineScope) (ctrl.Result, error) {
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
	before := machine.DeepCopy()
	delete(machine.Annotations, infrav1.PreTerminateHookAnnotation)
	if err := r.Client.Patch(ctx, machine, client.MergeFrom(before)); err != nil {
		return ctrl.Result{}, fmt.Errorf("removing the pre-terminate hook from Machine %s: %w", machine.Name, err)
	}
	return ctrl.Result{}, nil
}

func (r *AgentMachineReconciler) reconcileDelete(ctx context.Context, s *machineScope) (ctrl.Result, error) {
	res, done, err := r.release(ctx, s.agentMachine)
	if err != nil || !done {
		return res, err
	}
	controllerutil.RemoveFinalizer(s.agentMachine, infrav1.AgentMachineFinalizer)
	return ctrl.Result{}, nil
}

// release unbinds the claimed Agent (restoring the fields the claim changed), waits until
// assisted-service reports it unbound or the unbind timeout passes, then drops the claim.
// An Agent that vanished is released at once.
func (r *AgentMachineReconciler) release(ctx context.Context, am *infrav1.AgentMachine) (ctrl.Result, bool, error) {
	log := ctrl.LoggerFrom(ctx)
	agent, err := r.claimedAgent(ctx, am)
	if err != nil {
		return ctrl.Result{}, false, err
	}
	if agent == nil {
		if am.Status.AgentRef != nil {
			log.Info("The claimed Agent is gone: nothing to unbind", "Agent", am.Status.AgentRef.Name)
		}
		r.claims.Delete(string(am.UID))
		clearAgentConditions(am, "The Agent is released")
		setReserved(am, metav1.ConditionFalse, infrav1.NoAgentReason, "No Agent is claimed")
		return ctrl.Result{}, true, nil
	}
	agent = agent.DeepCopy()
	var previous previousSpec
	if raw := agent.Annotations[infrav1.PreviousSpecAnnotation]; raw != "" {
		if err := json.Unmarshal([]byte(raw), &previous); err != nil {
			log.Info("Ignoring an unreadable previous-spec annotation; unbinding to no ClusterDeployment", "Agent", klogRef(agent))
			previous = previousSpec{}
		}
	}
	requested, _ := time.Parse(time.RFC3339, agent.Annotations[infrav1.UnbindRequestedAnnotation])
	if requested.IsZero() {
		agent.Spec.ClusterDeploymentName = previous.ClusterDeploymentName
		agent.Spec.IgnitionEndpointTokenReference = previous.IgnitionEndpointTokenReference
		agent.Spec.IgnitionEndpointHTTPHeaders = previous.IgnitionEndpointHTTPHeaders
		agent.Annotations[infrav1.UnbindRequestedAnnotation] = time.Now().UTC().Format(time.RFC3339)
		if err := r.Client.Update(ctx, agent); err != nil {
			return ctrl.Result{}, false, fmt.Errorf("unbinding Agent %s/%s: %w", agent.Namespace, agent.Name, err)
		}
		log.Info("Unbinding Agent", "Agent", klogRef(agent))
		r.Recorder.Eventf(am, agent, corev1.EventTypeNormal, "AgentUnbinding", "Unbind", "Unbinding Agent %s/%s", agent.Namespace, agent.Name)
		setReserved(am, metav1.ConditionTrue, infrav1.UnbindingReason, fmt.Sprintf("Waiting for assisted-service to unbind Agent %s", agent.Name))
		return ctrl.Result{RequeueAfter: r.unbindTimeout()}, false, nil
	}
	timedOut := time.Since(requested) > r.unbindTimeout()
	if !unbound(agent, previous) && !timedOut {
		setReserved(am, metav1.ConditionTrue, infrav1.UnbindingReason, fmt.Sprintf("Waiting for assisted-service to unbind Agent %s", agent.Name))
		return ctrl.Result{RequeueAfter: time.Until(requested.Add(r.unbindTimeout())) + time.Second}, false, nil
	}
	if timedOut {
		r.Recorder.Eventf(am, agent, corev1.EventTypeWarning, "UnbindTimedOut", "Release",
			"assisted-service did not report Agent %s/%s unbound within %s; releasing it anyway", agent.Namespace, agent.Name, r.unbindTimeout())
	}
	delete(agent.Labels, infrav1.AgentClaimedByLabel)
	delete(agent.Annotations, infrav1.ClaimOwnerAnnotation)
	delete(agent.Annotations, infrav1.PreviousSpecAnnotation)
	delete(agent.Annotations, infrav1.UnbindRequestedAnnotation)
	if err := r.Client.Update(ctx, agent); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, true, nil
		}
		return ctrl.Result{}, false, fmt.Errorf("releasing Agent %s/%s: %w", agent.Namespace, agent.Name, err)
	}
	r.claims.Delete(string(am.UID))
	log.Info("Released Agent", "Agent", klogRef(agent))
	r.Recorder.Eventf(am, agent, corev1.EventTypeNormal, "AgentReleased", "Release", "Released Agent %s/%s", agent.Namespace, agent.Name)
	am.Status.AgentRef = nil
	clearAgentConditions(am, "The Agent is released")
	setReserved(am, metav1.ConditionFalse, infrav1.NoAgentReason, "The Agent is released")
	return ctrl.Result{}, true, nil
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

func (r *AgentMachineReconciler) unbindTimeout() time.Duration {
	if r.UnbindTimeout > 0 {
		return r.UnbindTimeout
	}
	return DefaultUnbindTimeout
}

func pointers(agents []aiv1beta1.Agent) []*aiv1beta1.Agent {
	out := make([]*aiv1beta1.Agent, len(agents))
	for i := range agents {
		out[i] = &agents[i]
	}
	return out
}

// inScope tells whether --watch-filter lets this controller reconcile the AgentMachine.
func (r *AgentMachineReconciler) inScope(am *infrav1.AgentMachine) bool {
	return r.WatchFilterValue == "" || am.Labels[clusterv1.WatchLabel] == r.WatchFilterValue
}

func klogRef(o client.Object) string { return o.GetNamespace() + "/" + o.GetName() }

// reconcileNodeAddresses reports the addresses of a host whose Agent is gone, whose Machine is a
// Node, as that Node has them: a clusterctl move carries no status, and Cluster API copies these
// addresses to the Machine. Until the workload cluster can be reached, the addresses are kept.
func (r *AgentMachineReconciler) reconcileNodeAddresses(ctx context.Context, s *machineScope) (ctrl.Result, error) {
	if r.ClusterCache == nil {
		return ctrl.Result{}, nil
	}
	remote, err := r.ClusterCache.GetClient(ctx, client.ObjectKeyFromObject(s.cluster))
	if errors.Is(err, clustercache.ErrClusterNotConnected) {
		ctrl.LoggerFrom(ctx).V(4).Info("Workload cluster not connected yet; the Node's addresses are read later")
		return ctrl.Result{RequeueAfter: workloadRetry}, nil
	}
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("getting a client for Cluster %s: %w", s.cluster.Name, err)
	}
	node := &corev1.Node{}
	if err := remote.Get(ctx, client.ObjectKey{Name: s.machine.Status.NodeRef.Name}, node); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, nil // Cluster API reports a Machine whose Node is gone.
		}
		return ctrl.Result{}, fmt.Errorf("reading Node %s of Cluster %s: %w", s.machine.Status.NodeRef.Name, s.cluster.Name, err)
	}
	if addresses := nodeAddresses(node); len(addresses) > 0 {
		s.agentMachine.Status.Addresses = addresses
	}
	return ctrl.Result{}, nil
}
