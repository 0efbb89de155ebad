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

package assisted

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	"github.com/openshift/assisted-service/models"
	conditionsv1 "github.com/openshift/custom-resource-status/conditions/v1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// Names and labels of the credentials Secrets, as assisted-service and Hive write them.
const (
	adminKubeconfigSecretFormat = "%s-admin-kubeconfig"
	adminPasswordSecretFormat   = "%s-admin-password"
	// KubeconfigSecretKey is the key of the kubeconfig in the admin kubeconfig Secret.
	KubeconfigSecretKey    = "kubeconfig"
	labelClusterDeployment = "hive.openshift.io/cluster-deployment-name"
	labelSecretType        = "hive.openshift.io/secret-type"
)

// AdminKubeconfigSecretName is the name of the Secret holding the admin kubeconfig of the
// cluster of the ClusterDeployment named cdName.
func AdminKubeconfigSecretName(cdName string) string {
	return fmt.Sprintf(adminKubeconfigSecretFormat, cdName)
}

// reconcileACI moves one AgentClusterInstall at most one state forward.
func (s *Simulator) reconcileACI(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	aci := &hiveextv1beta1.AgentClusterInstall{}
	if err := s.Client.Get(ctx, req.NamespacedName, aci); err != nil {
		if apierrors.IsNotFound(err) {
			s.forgetInstallSet(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !aci.DeletionTimestamp.IsZero() {
		if controllerutil.ContainsFinalizer(aci, AgentClusterInstallFinalizer) {
			if err := s.unbindAgents(ctx, client.ObjectKey{Namespace: aci.Namespace, Name: aci.Spec.ClusterDeploymentRef.Name}); err != nil {
				return ctrl.Result{}, err
			}
		}
		s.forgetInstallSet(req.NamespacedName)
		s.timer.Forget(aci.UID)
		return ctrl.Result{}, removeFinalizer(ctx, s.Client, aci, AgentClusterInstallFinalizer)
	}
	if err := addFinalizer(ctx, s.Client, aci, AgentClusterInstallFinalizer); err != nil {
		return ctrl.Result{}, err
	}
	before := aci.DeepCopy()
	now := metav1.NewTime(s.now())

	cd := &hivev1.ClusterDeployment{}
	if err := s.Client.Get(ctx, client.ObjectKey{Namespace: aci.Namespace, Name: aci.Spec.ClusterDeploymentRef.Name}, cd); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, fmt.Errorf("reading the ClusterDeployment: %w", err)
		}
		setClusterCondition(&aci.Status.Conditions, hivev1.ClusterInstallCondition{
			Type: hiveextv1beta1.ClusterSpecSyncedCondition, Status: corev1.ConditionFalse, Reason: hiveextv1beta1.ClusterInputErrorReason,
			Message: fmt.Sprintf("%s ClusterDeployment %s not found", hiveextv1beta1.ClusterInputErrorMsg, aci.Spec.ClusterDeploymentRef.Name),
		}, now)
		return ctrl.Result{}, s.writeACIStatus(ctx, before, aci)
	}
	spec, err := s.liveSpec(ctx, aci, hiveextv1beta1.GroupVersion.WithKind("AgentClusterInstall"))
	if err != nil {
		return ctrl.Result{}, err
	}
	arbiters, err := arbiterAgents(spec)
	if err != nil {
		return ctrl.Result{}, err
	}
	if ref := mirrorRegistryRef(spec); ref != nil {
		// clusterdeployments_controller.go: a mirror registry ConfigMap that cannot be used is an
		// input error, before the cluster is registered.
		if err := s.checkMirrorRegistry(ctx, *ref); err != nil {
			setClusterCondition(&aci.Status.Conditions, hivev1.ClusterInstallCondition{
				Type: hiveextv1beta1.ClusterSpecSyncedCondition, Status: corev1.ConditionFalse, Reason: hiveextv1beta1.ClusterInputErrorReason,
				Message: hiveextv1beta1.ClusterInputErrorMsg + " " + err.Error(),
			}, now)
			// An input error is not retried: the AgentClusterInstall is looked at again when it
			// changes (the ConfigMap is watched only once it carries the watch label).
			return ctrl.Result{}, s.writeACIStatus(ctx, before, aci)
		}
	}
	if why := clusterNameSpecError(aci, cd.Spec.ClusterName); why != "" {
		setClusterCondition(&aci.Status.Conditions, hivev1.ClusterInstallCondition{
			Type: hiveextv1beta1.ClusterSpecSyncedCondition, Status: corev1.ConditionFalse, Reason: hiveextv1beta1.ClusterInputErrorReason,
			Message: hiveextv1beta1.ClusterInputErrorMsg + " " + why,
		}, now)
		return ctrl.Result{}, s.writeACIStatus(ctx, before, aci)
	}
	if why := arbiterSpecError(aci, arbiters); why != "" {
		setClusterCondition(&aci.Status.Conditions, hivev1.ClusterInstallCondition{
			Type: hiveextv1beta1.ClusterSpecSyncedCondition, Status: corev1.ConditionFalse, Reason: hiveextv1beta1.ClusterInputErrorReason,
			Message: hiveextv1beta1.ClusterInputErrorMsg + " " + why,
		}, now)
		return ctrl.Result{}, s.writeACIStatus(ctx, before, aci)
	}
	if why := networkingSpecError(aci); why != "" {
		// assisted-service refuses to register (or update) the cluster with these networks
		// (network.go): an input error, looked at again when the AgentClusterInstall changes.
		setClusterCondition(&aci.Status.Conditions, hivev1.ClusterInstallCondition{
			Type: hiveextv1beta1.ClusterSpecSyncedCondition, Status: corev1.ConditionFalse, Reason: hiveextv1beta1.ClusterInputErrorReason,
			Message: hiveextv1beta1.ClusterInputErrorMsg + " " + why,
		}, now)
		return ctrl.Result{}, s.writeACIStatus(ctx, before, aci)
	}
	agents, err := s.boundAgents(ctx, cd.Namespace, cd.Name)
	if err != nil {
		return ctrl.Result{}, err
	}
	n := aciCounts{arbiters: arbiters}
	for i := range agents {
		a := &agents[i]
		if a.Status.DebugInfo.State == models.HostStatusBinding || a.Status.DebugInfo.State == "" ||
			strings.HasSuffix(a.Status.DebugInfo.State, "-unbound") {
			continue
		}
		n.registered++
		if a.Spec.Approved {
			n.approved++
		}
		if conditionsv1.IsStatusConditionFalse(a.Status.Conditions, aiv1beta1.SpecSyncedCondition) {
			n.unsynced++
		}
	}

	cur := aci.Status.DebugInfo.State
	next, info := cur, aci.Status.DebugInfo.StateInfo
	backend, failing := backendState(aci, agents, arbiters, s.fencedAgents(agents))
	preInstall := cur == "" || cur == models.ClusterStatusInsufficient || cur == models.ClusterStatusReady
	machine := machineNetworksOf(aci, agents, preInstall)
	if backend == models.ClusterStatusReady {
		if why := clusterNetworkFailures(aci, agents, machine); why != "" {
			backend, failing = models.ClusterStatusInsufficient, why
		}
	}
	s.mu.Lock()
	installFault := s.failInstall[req.NamespacedName]
	s.mu.Unlock()
	set := s.installSet(req.NamespacedName)

	switch cur {
	case "" /* a new AgentClusterInstall, or one moved from another hub */ :
		if !cd.Spec.Installed {
			next = models.ClusterStatusInsufficient
			break
		}
		// assisted-service has no record of a cluster that is already installed (moved from
		// another hub): it imports it as a day-2 cluster that takes new hosts, except a
		// single-node one, which it leaves alone.
		if isSNO(aci) {
			log.Info("Installed single-node cluster unknown to this service: left alone")
			return ctrl.Result{}, nil
		}
		log.Info("Imported an installed cluster unknown to this service as a day-2 cluster")
		next = models.ClusterStatusAddingHosts
	case models.ClusterStatusInsufficient, models.ClusterStatusReady:
		if backend != cur {
			next = backend
			break
		}
		if _, _, ok := requirementsMet(aci, cur, n); ok && cur == models.ClusterStatusReady && !aci.Spec.HoldInstallation {
			s.startInstall(req.NamespacedName, aci, agents)
			next = models.ClusterStatusPreparingForInstallation
		}
	case models.ClusterStatusPreparingForInstallation:
		if allIn(agents, set, models.HostStatusPreparingSuccessful) {
			next = models.ClusterStatusInstalling
		}
	case models.ClusterStatusInstalling:
		switch {
		case installFault:
			next = models.ClusterStatusError
		case allIn(agents, set, models.HostStatusInstalled):
			next = models.ClusterStatusFinalizing
		}
	case models.ClusterStatusFinalizing:
		if w := s.timer.Remaining(aci.UID, cur, s.Durations.Finalize); w > 0 {
			return ctrl.Result{RequeueAfter: w}, nil
		}
		if err := s.completeInstall(ctx, aci, cd); err != nil {
			return ctrl.Result{}, err
		}
		next = models.ClusterStatusInstalled
	case models.ClusterStatusInstalled:
		next = models.ClusterStatusAddingHosts
	}
	info = clusterStateInfo(next, info)
	if next == models.ClusterStatusInsufficient {
		info = clusterInfoInsufficient
	}

	aci.Status.DebugInfo.State, aci.Status.DebugInfo.StateInfo = next, info
	if err := s.populateACIURLs(aci); err != nil {
		return ctrl.Result{}, err
	}
	aci.Status.APIVIP, aci.Status.APIVIPs = aci.Spec.APIVIP, aci.Spec.APIVIPs
	aci.Status.IngressVIP, aci.Status.IngressVIPs = aci.Spec.IngressVIP, aci.Spec.IngressVIPs
	aci.Status.MachineNetwork = nil
	for _, m := range machine {
		aci.Status.MachineNetwork = append(aci.Status.MachineNetwork, hiveextv1beta1.MachineNetworkEntry{CIDR: m})
	}
	aci.Status.UserManagedNetworking = ptr.To(ptr.Deref(aci.Spec.Networking.UserManagedNetworking, false) ||
		isSNO(aci))
	aci.Status.PlatformType = aci.Spec.PlatformType
	if aci.Status.PlatformType == "" {
		aci.Status.PlatformType = hiveextv1beta1.BareMetalPlatformType
		if *aci.Status.UserManagedNetworking {
			aci.Status.PlatformType = hiveextv1beta1.NonePlatformType
		}
	}
	aci.Status.ControlPlaneAgentsDiscovered, aci.Status.ControlPlaneAgentsReady = 0, 0
	aci.Status.WorkerAgentsDiscovered, aci.Status.WorkerAgentsReady = 0, 0
	for i := range agents {
		ready := conditionsv1.IsStatusConditionTrue(agents[i].Status.Conditions, aiv1beta1.RequirementsMetCondition)
		switch s.effectiveRole(&agents[i]) {
		case HostRoleArbiter:
			continue // counted in the newer status's arbiter fields, which the pinned types lack
		case models.HostRoleWorker:
			aci.Status.WorkerAgentsDiscovered++
			if ready {
				aci.Status.WorkerAgentsReady++
			}
		default:
			aci.Status.ControlPlaneAgentsDiscovered++
			if ready {
				aci.Status.ControlPlaneAgentsReady++
			}
		}
	}
	aci.Status.Progress.TotalPercentage = progress(next, agents, set)
	setACIConditions(aci, next, info, failing, n, now)
	if err := s.writeACIStatus(ctx, before, aci); err != nil {
		return ctrl.Result{}, err
	}
	if next != cur {
		s.timer.Forget(aci.UID)
		log.V(2).Info("AgentClusterInstall state", "state", next)
		eventType := corev1.EventTypeNormal
		if next == models.ClusterStatusError {
			eventType = corev1.EventTypeWarning
		}
		s.Recorder.Eventf(aci, nil, eventType, "ClusterStatusChanged", "Update", "Cluster %s: %s (%s)", cd.Name, next, info)
	}
	return ctrl.Result{}, nil
}

// populateACIURLs publishes the cluster's events and logs URLs once, signed for the cluster, as
// assisted-service does (clusterdeployments_controller.go populateEventsURL, filtered by
// cluster_id, and generateControllerLogsDownloadURL). The cluster's ID is the
// AgentClusterInstall's UID.
func (s *Simulator) populateACIURLs(aci *hiveextv1beta1.AgentClusterInstall) error {
	id := string(aci.UID)
	var err error
	if aci.Status.DebugInfo.EventsURL == "" {
		if aci.Status.DebugInfo.EventsURL, err = s.eventsURL("cluster_id", id, clusterScope, id); err != nil {
			return err
		}
	}
	if aci.Status.DebugInfo.LogsURL == "" {
		aci.Status.DebugInfo.LogsURL, err = s.signedURL("/v2/clusters/"+id+"/logs", nil, clusterScope, id)
	}
	return err
}

// isSNO tells a single-node cluster: one control-plane node and no workers.
func isSNO(aci *hiveextv1beta1.AgentClusterInstall) bool {
	return aci.Spec.ProvisionRequirements.ControlPlaneAgents == 1 && aci.Spec.ProvisionRequirements.WorkerAgents == 0
}

func (s *Simulator) writeACIStatus(ctx context.Context, before, aci *hiveextv1beta1.AgentClusterInstall) error {
	if apiequality.Semantic.DeepEqual(before.Status, aci.Status) {
		return nil
	}
	if err := s.Client.Status().Update(ctx, aci); err != nil {
		return fmt.Errorf("updating AgentClusterInstall status: %w", err)
	}
	return nil
}

// backendState is the cluster's state before installation as assisted-service computes it: ready
// when every bound host is known and there are enough control-plane hosts.
func backendState(aci *hiveextv1beta1.AgentClusterInstall, agents []aiv1beta1.Agent, wantArbiters int, fenced map[string]bool) (string, string) {
	masters, arbiters, notReady := 0, 0, []string{}
	for i := range agents {
		a := &agents[i]
		if a.Status.DebugInfo.State != models.HostStatusKnown {
			notReady = append(notReady, a.Name)
			continue
		}
		switch a.Spec.Role {
		case models.HostRoleWorker:
		case HostRoleArbiter:
			arbiters++
		default:
			masters++
		}
	}
	want := aci.Spec.ProvisionRequirements.ControlPlaneAgents
	switch {
	case len(notReady) > 0:
		sort.Strings(notReady)
		return models.ClusterStatusInsufficient, "The cluster has hosts that are not ready to install: " + strings.Join(notReady, ", ")
	case masters < want || want == 0:
		return models.ClusterStatusInsufficient, fmt.Sprintf(
			"Clusters must have exactly %d dedicated control plane nodes. Add or remove hosts, or change their roles configurations to meet the requirement.", want)
	case arbiters < wantArbiters:
		return models.ClusterStatusInsufficient, fmt.Sprintf(
			"Clusters with an arbiter must have at least %d arbiter nodes. Add hosts, or change their roles configurations to meet the requirement.", wantArbiters)
	case want == 2 && wantArbiters == 0 && !isTNF(aci, agents, wantArbiters, fenced):
		// internal/cluster/validator.go: two control-plane nodes need an arbiter or fencing.
		return models.ClusterStatusInsufficient,
			"The cluster must have exactly 2 dedicated control plane nodes and at least 1 arbiter node or the control plane nodes must have fencing credentials. Add or remove hosts, or change their roles configurations to meet the requirement."
	}
	return models.ClusterStatusReady, ""
}

// HostRoleArbiter is assisted-service's role of the arbiter host of two-node OpenShift
// (models.HostRoleArbiter from 2025; the models this project pins predate it).
const HostRoleArbiter models.HostRole = "arbiter"

// arbiterNodeLabel is the role label of OpenShift's arbiter node.
const arbiterNodeLabel = "node-role.kubernetes.io/arbiter"

// arbiterAgents reads spec.provisionRequirements.arbiterAgents of the live spec of an
// AgentClusterInstall, a field of newer assisted-service CRDs that the pinned Go types lack (0
// when the hub's CRD has no such field: the API server has pruned it).
func arbiterAgents(spec map[string]any) (int, error) {
	n, _, err := unstructured.NestedInt64(spec, "provisionRequirements", "arbiterAgents")
	if err != nil {
		return 0, fmt.Errorf("reading spec.provisionRequirements.arbiterAgents: %w", err)
	}
	return int(n), nil
}

// Cluster names as assisted-service's validations take them (clusterNameRegex and
// clusterNameRegexForNonePlatform, internal/cluster/validations/validations.go at 063b2579).
var (
	clusterNameFormat     = regexp.MustCompile(`^([a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	noneClusterNameFormat = regexp.MustCompile(`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)*$`)
)

// clusterNameSpecError is assisted-service's refusal of the ClusterDeployment's cluster name, or
// "": RegisterClusterInternal (internal/bminventory/inventory.go) checks it with
// ValidateClusterNameFormat for the cluster's platform, where only platform None takes dotted
// names, and answers 400, which the ClusterDeployments controller's updateStatus reports as an
// input error; the cluster is never registered. The platform is the AgentClusterInstall's, or
// None when it leaves it to userManagedNetworking.
func clusterNameSpecError(aci *hiveextv1beta1.AgentClusterInstall, name string) string {
	format := clusterNameFormat
	if aci.Spec.PlatformType == hiveextv1beta1.NonePlatformType ||
		(aci.Spec.PlatformType == "" && aci.Spec.Networking.UserManagedNetworking != nil && *aci.Spec.Networking.UserManagedNetworking) {
		format = noneClusterNameFormat
	}
	if format.MatchString(name) {
		return ""
	}
	return fmt.Sprintf("Cluster name format is not valid: '%s'. Name must start and end with either a letter or number "+
		"and consist of lower-case letters, numbers, and hyphens. Subdomains in cluster names are only valid with none platform.", name)
}

// arbiterSpecError is assisted-service's refusal of an arbiter cluster it cannot install, as
// its arbiter-clusters enhancement lists the validations (docs/enhancements/arbiter-clusters.md:
// at least one arbiter, 2-5 control-plane nodes, platform baremetal), or "".
func arbiterSpecError(aci *hiveextv1beta1.AgentClusterInstall, arbiters int) string {
	if arbiters == 0 {
		return ""
	}
	if cp := aci.Spec.ProvisionRequirements.ControlPlaneAgents; cp < 2 || cp > 5 {
		return fmt.Sprintf("a cluster with arbiter nodes must have 2 to 5 control plane nodes, not %d", cp)
	}
	if aci.Spec.PlatformType != "" && aci.Spec.PlatformType != hiveextv1beta1.BareMetalPlatformType {
		return fmt.Sprintf("a cluster with arbiter nodes must have platform baremetal, not %s", aci.Spec.PlatformType)
	}
	return ""
}

func clusterStateInfo(state, current string) string {
	switch state {
	case models.ClusterStatusInsufficient:
		return clusterInfoInsufficient
	case models.ClusterStatusReady:
		return clusterInfoReady
	case models.ClusterStatusPreparingForInstallation:
		return clusterInfoPreparing
	case models.ClusterStatusInstalling:
		return clusterInfoInstalling
	case models.ClusterStatusFinalizing:
		return clusterInfoFinalizing
	case models.ClusterStatusInstalled:
		return clusterInfoInstalled
	case models.ClusterStatusAddingHosts:
		return clusterInfoAddingHosts
	case models.ClusterStatusError:
		return clusterInfoInstallFailed
	}
	return current
}

func progress(state string, agents []aiv1beta1.Agent, set map[types.NamespacedName]bool) int64 {
	switch state {
	case models.ClusterStatusFinalizing:
		return 90
	case models.ClusterStatusInstalled, models.ClusterStatusAddingHosts:
		return 100
	case models.ClusterStatusInstalling:
		total, sum := 0, int64(0)
		for i := range agents {
			if set[client.ObjectKeyFromObject(&agents[i])] {
				total++
				sum += agents[i].Status.Progress.InstallationPercentage
			}
		}
		if total > 0 {
			return 10 + 80*sum/int64(100*total)
		}
	}
	return 0
}

// allIn reports whether every Agent of the install set is in state (and the set is not empty).
func allIn(agents []aiv1beta1.Agent, set map[types.NamespacedName]bool, state string) bool {
	seen := 0
	for i := range agents {
		if !set[client.ObjectKeyFromObject(&agents[i])] {
			continue
		}
		if agents[i].Status.DebugInfo.State != state {
			return false
		}
		seen++
	}
	return seen > 0 && seen == len(set)
}

// startInstall records the hosts that install with the cluster, their roles and the bootstrap host.
func (s *Simulator) startInstall(key types.NamespacedName, aci *hiveextv1beta1.AgentClusterInstall, agents []aiv1beta1.Agent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	set := map[types.NamespacedName]bool{}
	sorted := append([]aiv1beta1.Agent(nil), agents...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	masters := 0
	for i := range sorted {
		if sorted[i].Spec.Role == models.HostRoleMaster {
			masters++
		}
	}
	bootstrap := false
	for i := range sorted {
		k := client.ObjectKeyFromObject(&sorted[i])
		set[k] = true
		role := sorted[i].Spec.Role
		if role == "" || role == models.HostRoleAutoAssign {
			role = models.HostRoleWorker
			if masters < aci.Spec.ProvisionRequirements.ControlPlaneAgents {
				role = models.HostRoleMaster
				masters++
			}
		}
		s.roles[k] = role
		if role == models.HostRoleMaster && !bootstrap {
			s.bootstrap[k], bootstrap = true, true
		}
	}
	s.installSets[key] = set
}

func (s *Simulator) installSet(key types.NamespacedName) map[types.NamespacedName]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[types.NamespacedName]bool{}
	for k, v := range s.installSets[key] {
		out[k] = v
	}
	return out
}

// forgetHost drops a host that deregistered or registered anew from the installations it was
// part of: when it comes back, it is a new host of the cluster (a day-2 host once installed).
func (s *Simulator) forgetHost(agent types.NamespacedName) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, set := range s.installSets {
		delete(set, agent)
	}
	delete(s.roles, agent)
	delete(s.bootstrap, agent)
	delete(s.fencing, agent)
}

func (s *Simulator) forgetInstallSet(key types.NamespacedName) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.installSets[key] {
		delete(s.roles, k)
		delete(s.bootstrap, k)
	}
	delete(s.installSets, key)
}

// completeInstall writes what a finished installation leaves: the credentials Secrets and the
// cluster metadata (assisted-service), and the ClusterDeployment installed (Hive).
func (s *Simulator) completeInstall(ctx context.Context, aci *hiveextv1beta1.AgentClusterInstall, cd *hivev1.ClusterDeployment) error {
	workload, err := s.workloadOf(ctx, client.ObjectKeyFromObject(cd))
	if err != nil {
		return err
	}
	kubeconfig, err := WorkloadKubeconfig(workload.config, cd.Name)
	if err != nil {
		return err
	}
	kcName := AdminKubeconfigSecretName(cd.Name)
	if err := s.ensureSecret(ctx, cd, kcName, "kubeconfig", map[string][]byte{KubeconfigSecretKey: kubeconfig}); err != nil {
		return err
	}
	pwName := fmt.Sprintf(adminPasswordSecretFormat, cd.Name)
	password, err := randomPassword()
	if err != nil {
		return err
	}
	if err := s.ensureSecret(ctx, cd, pwName, "kubeadmincreds", map[string][]byte{"username": []byte("kubeadmin"), "password": []byte(password)}); err != nil {
		return err
	}
	md := &hivev1.ClusterMetadata{
		ClusterID: string(aci.UID), InfraID: fmt.Sprintf("%s-%s", cd.Name, string(aci.UID)[:5]),
		AdminKubeconfigSecretRef: corev1.LocalObjectReference{Name: kcName},
		AdminPasswordSecretRef:   &corev1.LocalObjectReference{Name: pwName},
	}
	if aci.Spec.ClusterMetadata == nil {
		base := aci.DeepCopy()
		aci.Spec.ClusterMetadata = md
		if err := s.Client.Patch(ctx, aci, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
			return fmt.Errorf("setting the AgentClusterInstall's cluster metadata: %w", err)
		}
	}
	if s.OnClusterInstalled != nil {
		ic := InstalledCluster{ClusterDeployment: cd, AgentClusterInstall: aci, Workload: workload.client, WorkloadConfig: workload.config}
		if aci.Spec.ImageSetRef != nil {
			cis := &hivev1.ClusterImageSet{}
			if err := s.Client.Get(ctx, client.ObjectKey{Name: aci.Spec.ImageSetRef.Name}, cis); err == nil {
				ic.ReleaseImage = cis.Spec.ReleaseImage
			}
		}
		if err := s.OnClusterInstalled(ctx, ic); err != nil {
			return fmt.Errorf("running the cluster-installed hook: %w", err)
		}
	}
	if !cd.Spec.Installed {
		base := cd.DeepCopy()
		cd.Spec.Installed = true
		cd.Spec.ClusterMetadata = aci.Spec.ClusterMetadata.DeepCopy()
		if err := s.Client.Patch(ctx, cd, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
			return fmt.Errorf("marking the ClusterDeployment installed: %w", err)
		}
	}
	return nil
}

func (s *Simulator) ensureSecret(ctx context.Context, cd *hivev1.ClusterDeployment, name, secretType string, data map[string][]byte) error {
	sec := &corev1.Secret{}
	err := s.Client.Get(ctx, client.ObjectKey{Namespace: cd.Namespace, Name: name}, sec)
	if err == nil || !apierrors.IsNotFound(err) {
		if err != nil {
			return fmt.Errorf("reading Secret %s: %w", name, err)
		}
		return nil
	}
	sec = &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: cd.Namespace,
			Labels: map[string]string{labelClusterDeployment: cd.Name, labelSecretType: secretType},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: hivev1.SchemeGroupVersion.String(), Kind: "ClusterDeployment",
				Name: cd.Name, UID: cd.UID, BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Data: data,
	}
	if err := s.Client.Create(ctx, sec); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating Secret %s: %w", name, err)
	}
	return nil
}

// WorkloadKubeconfig is a kubeconfig of the workload API server, as an administrator (what
// openshift-install writes as auth/kubeconfig, and assisted-service puts in the admin kubeconfig
// Secret).
func WorkloadKubeconfig(c *rest.Config, clusterName string) ([]byte, error) {
	server := c.Host
	if !strings.Contains(server, "://") {
		server = "https://" + server
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[clusterName] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: c.CAData,
		InsecureSkipTLSVerify: c.Insecure}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: c.CertData, ClientKeyData: c.KeyData,
		Token: c.BearerToken, Username: c.Username, Password: c.Password}
	cfg.Contexts["admin"] = &clientcmdapi.Context{Cluster: clusterName, AuthInfo: "admin"}
	cfg.CurrentContext = "admin"
	out, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, fmt.Errorf("writing the workload kubeconfig: %w", err)
	}
	return out, nil
}

func randomPassword() (string, error) {
	b := make([]byte, 18)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generating the kubeadmin password: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// unbindAgents does what assisted-service does to the Agents of a cluster whose
// AgentClusterInstall is deleted (its ClusterDeploymentsReconciler.agentClusterInstallFinalizer
// and unbindAgents, internal/controller/controllers/clusterdeployments_controller.go): every
// Agent bound to the ClusterDeployment cd is deleted when it registered through an InfraEnv
// whose clusterRef is cd (shouldDeleteAgentOnUnbind: the host booted that cluster's own
// discovery ISO), and unbound (spec.clusterDeploymentName removed) otherwise, so that it goes
// back to its InfraEnv's pool.
func (s *Simulator) unbindAgents(ctx context.Context, cd client.ObjectKey) error {
	agents := &aiv1beta1.AgentList{}
	if err := s.Client.List(ctx, agents); err != nil {
		return fmt.Errorf("listing Agents: %w", err)
	}
	for i := range agents.Items {
		agent := &agents.Items[i]
		ref := agent.Spec.ClusterDeploymentName
		if ref == nil || ref.Name != cd.Name || ref.Namespace != cd.Namespace {
			continue
		}
		ie := &aiv1beta1.InfraEnv{}
		err := s.Client.Get(ctx, client.ObjectKey{Namespace: agent.Namespace, Name: agent.Labels[aiv1beta1.InfraEnvNameLabel]}, ie)
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("reading the InfraEnv of Agent %s: %w", agent.Name, err)
		}
		if err == nil && ie.Spec.ClusterRef != nil && ie.Spec.ClusterRef.Name == cd.Name && ie.Spec.ClusterRef.Namespace == cd.Namespace {
			if err := s.Client.Delete(ctx, agent); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("deleting Agent %s of the deleted cluster: %w", agent.Name, err)
			}
			continue
		}
		before := agent.DeepCopy()
		agent.Spec.ClusterDeploymentName = nil
		if err := s.Client.Patch(ctx, agent, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("unbinding Agent %s from the deleted cluster: %w", agent.Name, err)
		}
	}
	return nil
}

// reconcileClusterDeployment keeps assisted-service's finalizer on ClusterDeployments installed
// through an AgentClusterInstall. When one is deleted it deletes its AgentClusterInstall and waits
// until that is gone, as assisted-service does (clusterDeploymentFinalizer, deleteClusterInstall),
// then deletes the credentials Secrets it owns (a real cluster's garbage collector would; the lab
// has none) and releases it.
func (s *Simulator) reconcileClusterDeployment(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cd := &hivev1.ClusterDeployment{}
	if err := s.Client.Get(ctx, req.NamespacedName, cd); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if cd.Spec.ClusterInstallRef == nil || cd.Spec.ClusterInstallRef.Kind != "AgentClusterInstall" {
		return ctrl.Result{}, nil
	}
	if cd.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, addFinalizer(ctx, s.Client, cd, ClusterDeploymentFinalizer)
	}
	if !controllerutil.ContainsFinalizer(cd, ClusterDeploymentFinalizer) {
		return ctrl.Result{}, nil
	}
	aci := &hiveextv1beta1.AgentClusterInstall{}
	switch err := s.Client.Get(ctx, client.ObjectKey{Namespace: cd.Namespace, Name: cd.Spec.ClusterInstallRef.Name}, aci); {
	case err == nil:
		if aci.DeletionTimestamp.IsZero() {
			if err := s.Client.Delete(ctx, aci); err != nil && !apierrors.IsNotFound(err) {
				return ctrl.Result{}, fmt.Errorf("deleting the AgentClusterInstall of the deleted ClusterDeployment: %w", err)
			}
		}
		return ctrl.Result{RequeueAfter: time.Second}, nil
	case !apierrors.IsNotFound(err):
		return ctrl.Result{}, fmt.Errorf("reading the AgentClusterInstall: %w", err)
	}
	for _, name := range []string{AdminKubeconfigSecretName(cd.Name), fmt.Sprintf(adminPasswordSecretFormat, cd.Name)} {
		sec := &corev1.Secret{}
		if err := s.Client.Get(ctx, client.ObjectKey{Namespace: cd.Namespace, Name: name}, sec); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return ctrl.Result{}, fmt.Errorf("reading Secret %s: %w", name, err)
		}
		if !metav1.IsControlledBy(sec, cd) && !ownedBy(sec, cd) {
			continue
		}
		if err := s.Client.Delete(ctx, sec); err != nil && !apierrors.IsNotFound(err) {
			return ctrl.Result{}, fmt.Errorf("deleting Secret %s: %w", name, err)
		}
	}
	return ctrl.Result{}, removeFinalizer(ctx, s.Client, cd, ClusterDeploymentFinalizer)
}

func ownedBy(obj metav1.Object, owner metav1.Object) bool {
	for _, r := range obj.GetOwnerReferences() {
		if r.UID == owner.GetUID() {
			return true
		}
	}
	return false
}
