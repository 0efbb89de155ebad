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
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	infrav1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/infrastructure/v1beta1"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/metrics"
)

// errCacheBehind says that this process claimed the AgentMachine's Agent moments ago and its
// cache does not show the claim yet: the reconcile waits for the cache (the Agent's watch event
// starts the next one) rather than read the Agent from the API server.
var errCacheBehind = errors.New("the cache does not show the claim of the Agent yet")

// claimedAgent returns the Agent this AgentMachine holds, if any (see findClaimedAgent), with a
// claim that cluster-api-provider-agent made for it adopted. With waitForCache, a claim this
// process made that the cache does not show yet is errCacheBehind.
func (r *AgentMachineReconciler) claimedAgent(ctx context.Context, am *infrav1.AgentMachine, waitForCache bool) (*aiv1beta1.Agent, error) {
	agent, err := r.findClaimedAgent(ctx, am, waitForCache)
	if err != nil || agent == nil || agent.Labels[infrav1.AgentClaimedByLabel] == string(am.UID) {
		return agent, err
	}
	return r.adoptUpstreamClaim(ctx, am, agent)
}

// adoptUpstreamClaim turns the claim cluster-api-provider-agent recorded on the Agent for this
// AgentMachine (its UpstreamAgentClaimLabel) into ours, in one locked patch: our claim label and
// owner annotation replace upstream's label and namespace annotation. The Agent's binding is
// kept, so an installed host stays installed; without a previous-spec annotation, its release
// later unbinds it to no ClusterDeployment, as upstream's deletion does.
func (r *AgentMachineReconciler) adoptUpstreamClaim(ctx context.Context, am *infrav1.AgentMachine, agent *aiv1beta1.Agent) (*aiv1beta1.Agent, error) {
	adopted := agent.DeepCopy()
	markClaimed(adopted, am)
	delete(adopted.Labels, infrav1.UpstreamAgentClaimLabel)
	delete(adopted.Annotations, infrav1.UpstreamAgentClaimNamespaceAnnotation)
	if err := r.Client.Patch(ctx, adopted, lockedPatch(agent)); err != nil {
		return nil, fmt.Errorf("adopting the claim cluster-api-provider-agent recorded on Agent %s/%s: %w", agent.Namespace, agent.Name, err)
	}
	ctrl.LoggerFrom(ctx).Info("Adopted the claim cluster-api-provider-agent recorded", "Agent", klog.KObj(agent))
	r.Recorder.Eventf(am, adopted, corev1.EventTypeNormal, "AgentClaimAdopted", "Adopt",
		"Adopted Agent %s/%s, which cluster-api-provider-agent claimed for this AgentMachine", agent.Namespace, agent.Name)
	return adopted, nil
}

// findClaimedAgent returns the Agent this AgentMachine holds, if any: from status.agentRef, else
// from the claim index (which survives restarts and lost status updates), else the Agent the
// AgentMachine chose, read from the API server (a claim the cache does not show yet, or whose
// response was lost).
func (r *AgentMachineReconciler) findClaimedAgent(ctx context.Context, am *infrav1.AgentMachine, waitForCache bool) (*aiv1beta1.Agent, error) {
	uid := string(am.UID)
	scope := r.agentScope(am.Namespace)
	if ref := am.Status.AgentRef; ref != nil {
		agent := &aiv1beta1.Agent{}
		err := r.AgentReader.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, agent)
		switch {
		case apierrors.IsNotFound(err):
			// fall through to the index and the choice: the cache may lag behind a fresh claim.
		case err != nil:
			return nil, fmt.Errorf("getting Agent %s/%s: %w", ref.Namespace, ref.Name, err)
		case heldBy(agent, am, scope):
			return agent, nil
		}
	}
	// By UID, as ours and upstream's v1alpha1 releases claim; by name, as upstream's later ones.
	for _, key := range []string{uid, nameClaimKey(am.Namespace, am.Name)} {
		list := &aiv1beta1.AgentList{}
		if err := r.AgentReader.List(ctx, list, client.MatchingFields{agentClaimIndex: key}); err != nil {
			return nil, fmt.Errorf("listing the Agents claimed by this AgentMachine: %w", err)
		}
		for i := range list.Items {
			// An upstream claim by name on an Agent of another namespace is not adopted (heldBy).
			if heldBy(&list.Items[i], am, scope) {
				return &list.Items[i], nil
			}
		}
	}
	key, ok := chosenAgent(am)
	if !ok || !inScope(scope, key.Namespace) {
		return nil, nil
	}
	if waitForCache && r.reserved.claimedBy(key, am.UID, time.Now()) {
		// This process claimed the Agent from its cache: a cache that still shows it lags
		// behind the claim, and the Agent's watch event ends the wait. A cache that no longer
		// shows it saw the Agent deleted, and no event would come: waiting for the claim's
		// reservation to expire kept the AgentMachine requeueing every claimRetryDelay for up
		// to reservationTTL before it said its Agent was gone.
		cached := &aiv1beta1.Agent{}
		err := r.AgentReader.Get(ctx, key, cached)
		if err == nil {
			return nil, errCacheBehind
		}
		if !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("getting chosen Agent %s: %w", key, err)
		}
		r.reserved.release(key, am.UID)
		return nil, nil
	}
	agent := &aiv1beta1.Agent{}
	if err := r.APIReader.Get(ctx, key, agent); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("getting chosen Agent %s: %w", key, err)
	}
	if claimedBy(agent, am) {
		return agent, nil
	}
	return nil, nil
}

// chosenAgent returns the Agent the AgentMachine's ChosenAgentAnnotation names.
func chosenAgent(am *infrav1.AgentMachine) (client.ObjectKey, bool) {
	ns, name, ok := strings.Cut(am.Annotations[infrav1.ChosenAgentAnnotation], "/")
	if !ok || ns == "" || name == "" {
		return client.ObjectKey{}, false
	}
	return client.ObjectKey{Namespace: ns, Name: name}, true
}

// claim waits for what the claim needs, then chooses and claims the best fit Agent.
func (r *AgentMachineReconciler) claim(ctx context.Context, s *scope) (*aiv1beta1.Agent, ctrl.Result, error) {
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
	cd, refused, err := r.clusterDeployment(ctx, cluster)
	if err != nil {
		return nil, ctrl.Result{}, err
	}
	if refused != "" {
		setReserved(am, metav1.ConditionFalse, infrav1.CrossNamespaceReferenceRefusedReason, "The Cluster's AgentCluster is refused: "+refused)
		return nil, ctrl.Result{}, nil
	}
	if cd == nil {
		setReserved(am, metav1.ConditionFalse, infrav1.WaitingForClusterDeploymentReason,
			fmt.Sprintf("Waiting for the AgentCluster of Cluster %s to reference a ClusterDeployment", cluster.Name))
		return nil, ctrl.Result{}, nil
	}
	secretKey := client.ObjectKey{Namespace: machine.Namespace, Name: *machine.Spec.Bootstrap.DataSecretName}
	secret, err := r.bootstrapData(ctx, secretKey)
	if err != nil {
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

	request, err := newAgentRequest(am, machine, cd, r.agentScope(am.Namespace))
	if err != nil {
		setReserved(am, metav1.ConditionFalse, infrav1.NoSuitableAgentsReason, err.Error())
		return nil, ctrl.Result{}, nil // a user error: reported in the condition, retried on change.
	}
	pool, err := r.agentPool(ctx)
	if err != nil {
		return nil, ctrl.Result{}, err
	}
	passed := map[client.ObjectKey]bool{}
	// next returns the best fit that no other reconcile of this process holds, reserved for this
	// AgentMachine until it is chosen (a reservation this reconcile does not use is released).
	var candidate *client.ObjectKey
	next := func() *client.ObjectKey {
		for {
			now := time.Now()
			a := pool.best(request, func(key client.ObjectKey) bool {
				return passed[key] || r.reserved.heldByOther(key, am.UID, now)
			})
			if a == nil {
				return nil
			}
			key := client.ObjectKeyFromObject(a)
			if r.reserved.tryReserve(key, am.UID, now) {
				return &key
			}
			passed[key] = true
		}
	}
	defer func() {
		if candidate != nil {
			r.reserved.release(*candidate, am.UID)
		}
	}()
	chosen, hasChoice := chosenAgent(am)
	if !hasChoice {
		if candidate = next(); candidate == nil {
			return nil, ctrl.Result{}, r.explainNoAgent(ctx, am, request)
		}
	}
	if hasChoice {
		// Recorded by an earlier reconcile, maybe of another process: the cached AgentMachine must
		// be the live one, or the choice may have changed since.
		live := &infrav1.AgentMachine{}
		if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(am), live); err != nil {
			return nil, ctrl.Result{}, fmt.Errorf("getting AgentMachine %s: %w", am.Name, err)
		}
		if live.ResourceVersion != am.ResourceVersion {
			return nil, ctrl.Result{RequeueAfter: claimRetryDelay}, nil // the cache catches up first
		}
	}

	tokenRef, _, err := r.ensureTokenSecret(ctx, am, source.Token)
	if err != nil {
		return nil, ctrl.Result{}, err
	}
	r.tokens.Store(am.UID, sha256.Sum256([]byte(source.Token)))
	bind := binding{clusterDeployment: cd, tokenRef: tokenRef, headers: source.Headers, machineConfigPool: source.MachineConfigPool}
	// rv is the AgentMachine's resourceVersion after this reconcile's last write of the choice;
	// am keeps the one it was read with, for the patch helper.
	rv := am.ResourceVersion
	if hasChoice && s.finalizerUnsaved {
		// A choice recorded without the finalizer (by an older release): record it again with it,
		// before the claim.
		if err := r.choose(ctx, s, &rv, &chosen); err != nil {
			return nil, ctrl.Result{}, err
		}
	}
	for range claimAttempts {
		if !hasChoice {
			if candidate == nil {
				candidate = next()
			}
			if candidate == nil {
				// Every fit was claimed by others first: forget the choice, and explain.
				if err := r.choose(ctx, s, &rv, nil); err != nil {
					return nil, ctrl.Result{}, err
				}
				return nil, ctrl.Result{}, r.explainNoAgent(ctx, am, request)
			}
			chosen, candidate = *candidate, nil
			if err := r.choose(ctx, s, &rv, &chosen); err != nil {
				r.reserved.release(chosen, am.UID)
				return nil, ctrl.Result{}, err // a conflict: another reconcile chose first
			}
		}
		agent, why, err := r.claimChosen(ctx, am, chosen, request, bind)
		switch {
		case err != nil && apierrors.IsConflict(err):
			// The Agent changed since it was read (its status, another claim): read it again.
			log.V(4).Info("The chosen Agent changed while claiming it; trying again", "Agent", chosen)
			return nil, ctrl.Result{RequeueAfter: claimRetryDelay}, nil
		case err != nil:
			return nil, ctrl.Result{}, fmt.Errorf("claiming Agent %s: %w", chosen, err)
		case agent != nil:
			r.reserved.reserve(chosen, am.UID, true, time.Now())
			// Logged, not an event: the AgentMachine's status.agentRef, providerID and
			// AgentReserved condition say the same, and an event per claim was one of the bind's
			// seven requests per machine (issue 45).
			log.Info("Claimed Agent", "Agent", klog.KObj(agent), "ClusterDeployment", klog.KRef(cd.Namespace, cd.Name))
			return agent, ctrl.Result{}, nil
		}
		log.V(4).Info("The chosen Agent can no longer be claimed; choosing another", "Agent", chosen, "reason", why)
		r.reserved.release(chosen, am.UID)
		passed[chosen], hasChoice = true, false
	}
	setReserved(am, metav1.ConditionFalse, infrav1.NoSuitableAgentsReason,
		"Other Machines claimed the best fit Agents first; trying again")
	return nil, ctrl.Result{RequeueAfter: claimRetryDelay}, nil
}

// explainNoAgent says in the AgentReserved condition why no Agent fits, counting every Agent
// the AgentMachine may take (its agentScope): other tenants' Agents are not counted. The
// AgentMachine waits for an Agent to change.
func (r *AgentMachineReconciler) explainNoAgent(ctx context.Context, am *infrav1.AgentMachine, request agentRequest) error {
	all := &aiv1beta1.AgentList{}
	if err := r.AgentReader.List(ctx, all, agentListOptions(request.namespace)...); err != nil {
		return fmt.Errorf("listing Agents: %w", err)
	}
	setReserved(am, metav1.ConditionFalse, infrav1.NoSuitableAgentsReason, summarizeFit(request, all.Items))
	return nil
}

// agentPool returns the pool of free Agents the Agent watch feeds (SetupWithManager); a
// reconciler built without it (a unit test's) pools the Agents it lists.
func (r *AgentMachineReconciler) agentPool(ctx context.Context) (*agentPool, error) {
	if r.pool != nil {
		return r.pool, nil
	}
	all := &aiv1beta1.AgentList{}
	if err := r.AgentReader.List(ctx, all, agentListOptions(r.AgentNamespace)...); err != nil {
		return nil, fmt.Errorf("listing Agents: %w", err)
	}
	pool := newAgentPool()
	for i := range all.Items {
		pool.observe(&all.Items[i])
	}
	return pool, nil
}

// choose records the Agent this AgentMachine is about to claim (ChosenAgentAnnotation), or
// forgets the choice (agent nil). The patch carries the AgentMachine's resourceVersion (*rv,
// updated): of two reconciles that choose at once (two processes during a leader hand-over, or
// one behind a stale cache), one fails with a conflict and reads the other's choice on its next
// try. am gets the annotations, not the new resourceVersion: the patch helper's later patches
// must not carry one. The first choice also saves the AgentMachine's finalizer (set in memory by
// Reconcile), so that no Agent is claimed for an AgentMachine that could go without releasing it.
func (r *AgentMachineReconciler) choose(ctx context.Context, s *scope, rv *string, agent *client.ObjectKey) error {
	am := s.agentMachine
	if _, ok := am.Annotations[infrav1.ChosenAgentAnnotation]; !ok && agent == nil {
		return nil
	}
	base := am.DeepCopy()
	base.ResourceVersion = *rv
	if s.finalizerUnsaved {
		controllerutil.RemoveFinalizer(base, infrav1.AgentMachineFinalizer) // as stored: the patch adds it
	}
	changed := am.DeepCopy()
	changed.ResourceVersion = *rv
	if changed.Annotations == nil {
		changed.Annotations = map[string]string{}
	}
	what := "forgetting the chosen Agent"
	if agent != nil {
		changed.Annotations[infrav1.ChosenAgentAnnotation] = agent.String()
		what = "recording the choice of Agent " + agent.String()
	} else {
		delete(changed.Annotations, infrav1.ChosenAgentAnnotation)
	}
	if err := r.Client.Patch(ctx, changed, lockedPatch(base)); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	am.Annotations, *rv = changed.Annotations, changed.ResourceVersion
	s.finalizerUnsaved = false
	return nil
}

// claimChosen claims the Agent the AgentMachine chose, read from the cache. It returns the
// Agent when it is claimed (now or before, by a response that was lost), or why it can no longer
// be (gone, claimed by another AgentMachine, no longer a fit): only then may another be chosen.
// A conflict means it changed since it was read (the claim's patch carries the resourceVersion
// the cache holds, so a stale cache can never claim it twice); it is tried again once the cache
// caught up.
func (r *AgentMachineReconciler) claimChosen(ctx context.Context, am *infrav1.AgentMachine, key client.ObjectKey, request agentRequest,
	bind binding) (*aiv1beta1.Agent, string, error) {
	if !inScope(request.namespace, key.Namespace) {
		// A choice (ChosenAgentAnnotation, which whoever edits the AgentMachine can write) of an
		// Agent this AgentMachine may not take: refused without reading it. An Agent it already
		// holds there (a claim by its UID, from a shared pool) was found by findClaimedAgent.
		r.Recorder.Eventf(am, nil, corev1.EventTypeWarning, "ChosenAgentRefused", "Claim",
			"The %s annotation names Agent %s of another namespace, which this AgentMachine may not take: it takes the Agents of namespace %s; "+
				"the choice is dropped. Name an Agent of that namespace, or ask the hub's administrator for --agent-namespace or --shared-agent-pool",
			infrav1.ChosenAgentAnnotation, key, request.namespace)
		return nil, "in another namespace", nil
	}
	agent := &aiv1beta1.Agent{}
	if err := r.AgentReader.Get(ctx, key, agent); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, "deleted", nil
		}
		return nil, "", fmt.Errorf("getting Agent %s: %w", key, err)
	}
	if heldBy(agent, am, request.namespace) {
		return agent, "", nil
	}
	if why := request.mismatch(agent); why != "" {
		return nil, why, nil
	}
	claimed, err := r.claimAgent(ctx, am, agent, bind)
	if apierrors.IsNotFound(err) {
		return nil, "deleted", nil
	}
	return claimed, "", err
}

// claimAgent claims and binds one Agent in a single patch. The patch carries the
// resourceVersion the Agent was read with, so that of two concurrent claims only one succeeds.
// It is a merge patch of the fields a claim owns, never a full update: the hub's Agent CRD is
// newer than our Go types, and an update would erase the spec fields they lack.
func (r *AgentMachineReconciler) claimAgent(ctx context.Context, am *infrav1.AgentMachine, cached *aiv1beta1.Agent, bind binding) (*aiv1beta1.Agent, error) {
	agent := cached.DeepCopy()
	previous, err := json.Marshal(previousSpec{
		ClusterDeploymentName:          agent.Spec.ClusterDeploymentName,
		IgnitionEndpointTokenReference: agent.Spec.IgnitionEndpointTokenReference,
		IgnitionEndpointHTTPHeaders:    agent.Spec.IgnitionEndpointHTTPHeaders,
		MachineConfigPool:              agent.Spec.MachineConfigPool,
	})
	if err != nil {
		return nil, err
	}
	markClaimed(agent, am)
	agent.Annotations[infrav1.PreviousSpecAnnotation] = string(previous)
	delete(agent.Annotations, infrav1.UnbindRequestedAnnotation)
	agent.Spec.ClusterDeploymentName = bind.clusterDeployment
	agent.Spec.IgnitionEndpointTokenReference = bind.tokenRef
	agent.Spec.IgnitionEndpointHTTPHeaders = bind.headers
	if bind.machineConfigPool != "" {
		agent.Spec.MachineConfigPool = bind.machineConfigPool
	}
	if err := r.Client.Patch(ctx, agent, lockedPatch(cached)); err != nil {
		return nil, err
	}
	metrics.AgentMachineClaimSeconds.Observe(time.Since(am.CreationTimestamp.Time).Seconds())
	return agent, nil
}

// markClaimed records on agent that am claims it: the claim label (am's UID) and the owner
// annotation. Its label and annotation maps exist afterwards.
func markClaimed(agent *aiv1beta1.Agent, am *infrav1.AgentMachine) {
	if agent.Labels == nil {
		agent.Labels = map[string]string{}
	}
	if agent.Annotations == nil {
		agent.Annotations = map[string]string{}
	}
	agent.Labels[infrav1.AgentClaimedByLabel] = string(am.UID)
	agent.Annotations[infrav1.ClaimOwnerAnnotation] = am.Namespace + "/" + am.Name
}

// lockedPatch is a JSON merge patch from before that fails with a conflict when the object
// changed since it was read (the patch carries its resourceVersion). Agents are always written
// with it: only the fields we change are sent, so the fields of a newer CRD survive.
func lockedPatch(before client.Object) client.Patch {
	return client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})
}

// previousSpec are the Agent fields a claim changes, restored on release.
type previousSpec struct {
	ClusterDeploymentName          *aiv1beta1.ClusterReference               `json:"clusterDeploymentName,omitempty"`
	IgnitionEndpointTokenReference *aiv1beta1.IgnitionEndpointTokenReference `json:"ignitionEndpointTokenReference,omitempty"`
	IgnitionEndpointHTTPHeaders    map[string]string                         `json:"ignitionEndpointHTTPHeaders,omitempty"`
	MachineConfigPool              string                                    `json:"machineConfigPool,omitempty"`
}

// binding is what a claim writes on the Agent: the ClusterDeployment to bind to, and how the
// host fetches its ignition (token Secret, HTTP headers, machine config pool; see
// splitIgnitionURL).
type binding struct {
	clusterDeployment *aiv1beta1.ClusterReference
	tokenRef          *aiv1beta1.IgnitionEndpointTokenReference
	headers           map[string]string
	machineConfigPool string
}

// ensureTokenSecret writes the ignition endpoint token for the Agent into a Secret owned by the
// AgentMachine (so that it is garbage-collected with it). No token, no Secret. It creates first
// and reads only when the Secret exists (one request in the usual case). It returns whether the
// token of an existing Secret was replaced.
func (r *AgentMachineReconciler) ensureTokenSecret(ctx context.Context, am *infrav1.AgentMachine, token string) (*aiv1beta1.IgnitionEndpointTokenReference, bool, error) {
	if token == "" {
		return nil, false, nil
	}
	want := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: am.Namespace, Name: "agentmachine-" + am.Name + "-ignition-token"},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{IgnitionTokenSecretKey: []byte(token)},
	}
	want.Labels = map[string]string{infrav1.AssistedWatchLabel: "true", infrav1.BackupLabel: "true"}
	if name := am.Labels[clusterv1.ClusterNameLabel]; name != "" {
		want.Labels[clusterv1.ClusterNameLabel] = name
	}
	if err := controllerutil.SetControllerReference(am, want, r.Client.Scheme()); err != nil {
		return nil, false, err
	}
	ref := &aiv1beta1.IgnitionEndpointTokenReference{Namespace: want.Namespace, Name: want.Name}
	err := r.Client.Create(ctx, want)
	if err == nil {
		return ref, false, nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return nil, false, fmt.Errorf("creating the ignition token Secret %s: %w", want.Name, err)
	}
	existing := &corev1.Secret{}
	if err := r.Client.Get(ctx, client.ObjectKeyFromObject(want), existing); err != nil {
		return nil, false, fmt.Errorf("getting the ignition token Secret %s: %w", want.Name, err)
	}
	sameToken := bytes.Equal(existing.Data[IgnitionTokenSecretKey], want.Data[IgnitionTokenSecretKey])
	if sameToken && metav1.IsControlledBy(existing, am) {
		return ref, false, nil
	}
	// A patch of the token and the controller reference, locked to what was read: the rest of
	// the Secret (keys, labels, annotations others added) stays as it is.
	before := existing.DeepCopy()
	if existing.Data == nil {
		existing.Data = map[string][]byte{}
	}
	existing.Data[IgnitionTokenSecretKey] = want.Data[IgnitionTokenSecretKey]
	if err := controllerutil.SetControllerReference(am, existing, r.Client.Scheme()); err != nil {
		return nil, false, err
	}
	if err := r.Client.Patch(ctx, existing, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return nil, false, fmt.Errorf("patching the ignition token Secret %s: %w", want.Name, err)
	}
	return ref, !sameToken, nil
}

// clusterDeployment returns the ClusterDeployment the cluster's Agents bind to, as the Cluster's
// AgentCluster records it, or nil while it does not; or why the AgentCluster's references are
// refused (see crossNamespaceRefusal).
func (r *AgentMachineReconciler) clusterDeployment(ctx context.Context, cluster *clusterv1.Cluster) (*aiv1beta1.ClusterReference, string, error) {
	cd, ac, err := r.agentClusterDeployment(ctx, cluster)
	if err != nil || ac == nil {
		return cd, "", err
	}
	if why := crossNamespaceRefusal(ac, r.AllowCrossNamespaceReferences); why != "" {
		return nil, why, nil
	}
	return cd, "", nil
}

func (r *AgentMachineReconciler) agentClusterDeployment(ctx context.Context, cluster *clusterv1.Cluster) (*aiv1beta1.ClusterReference, *infrav1.AgentCluster, error) {
	ref := cluster.Spec.InfrastructureRef
	if ref.Kind != "AgentCluster" || ref.APIGroup != infrav1.GroupVersion.Group {
		return nil, nil, fmt.Errorf("cluster %s has infrastructure %s %s, not an AgentCluster", cluster.Name, ref.Kind, ref.Name)
	}
	ac := &infrav1.AgentCluster{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: cluster.Namespace, Name: ref.Name}, ac); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil, nil
		}
		return nil, nil, fmt.Errorf("getting AgentCluster %s: %w", ref.Name, err)
	}
	cd := ac.Spec.ClusterDeploymentRef
	if cd == nil || cd.Name == "" {
		cd = &ac.Status.ClusterDeploymentRef
	}
	if cd.Name == "" {
		return nil, ac, nil
	}
	ns := cd.Namespace
	if ns == "" {
		ns = ac.Namespace
	}
	return &aiv1beta1.ClusterReference{Namespace: ns, Name: cd.Name}, ac, nil
}

// newAgentRequest is what the AgentMachine's Machine asks of a host, among the Agents of scope
// (agentScope).
func newAgentRequest(am *infrav1.AgentMachine, machine *clusterv1.Machine, cd *aiv1beta1.ClusterReference, scope string) (agentRequest, error) {
	req := agentRequest{
		namespace:         scope,
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

// agentListOptions lists the Agents of scope ("" for every namespace), uncopied.
func agentListOptions(scope string) []client.ListOption {
	opts := []client.ListOption{client.UnsafeDisableDeepCopy}
	if scope != "" {
		opts = append(opts, client.InNamespace(scope))
	}
	return opts
}

// agentScope is the namespace the AgentMachines of namespace ns take Agents from (see agentScope).
func (r *AgentMachineReconciler) agentScope(ns string) string {
	return agentScope(r.AgentNamespace, r.SharedAgentPool, ns)
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
