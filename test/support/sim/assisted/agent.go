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
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/openshift/assisted-service/api/common"
	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	"github.com/openshift/assisted-service/models"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	ign "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/internal/ignition"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/internal/kubelet"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/internal/stages"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/inventory"
)

// cluster is the ClusterDeployment an Agent is bound to and its AgentClusterInstall.
type cluster struct {
	cd  *hivev1.ClusterDeployment
	aci *hiveextv1beta1.AgentClusterInstall
}

func (c *cluster) key() types.NamespacedName { return client.ObjectKeyFromObject(c.aci) }
func (c *cluster) state() string             { return c.aci.Status.DebugInfo.State }

// clusterOf returns the cluster the Agent is bound to, or nil and why the binding cannot sync.
func (s *Simulator) clusterOf(ctx context.Context, a *aiv1beta1.Agent) (*cluster, string, error) {
	key, bound := boundTo(a)
	if !bound {
		return nil, "", nil
	}
	ns, name := key.Namespace, key.Name
	cd := &hivev1.ClusterDeployment{}
	if err := s.Client.Get(ctx, key, cd); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Sprintf("ClusterDeployment %s/%s not found", ns, name), nil
		}
		return nil, "", fmt.Errorf("reading the Agent's ClusterDeployment: %w", err)
	}
	if cd.Spec.ClusterInstallRef == nil || cd.Spec.ClusterInstallRef.Kind != "AgentClusterInstall" {
		return nil, fmt.Sprintf("ClusterDeployment %s/%s has no AgentClusterInstall", ns, name), nil
	}
	aci := &hiveextv1beta1.AgentClusterInstall{}
	if err := s.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: cd.Spec.ClusterInstallRef.Name}, aci); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Sprintf("AgentClusterInstall %s/%s not found", ns, cd.Spec.ClusterInstallRef.Name), nil
		}
		return nil, "", fmt.Errorf("reading the Agent's AgentClusterInstall: %w", err)
	}
	return &cluster{cd: cd, aci: aci}, "", nil
}

func bindingVariant(bound bool, state string) string {
	if bound {
		return state
	}
	switch state {
	case models.HostStatusDiscovering:
		return models.HostStatusDiscoveringUnbound
	case models.HostStatusKnown:
		return models.HostStatusKnownUnbound
	case models.HostStatusInsufficient:
		return models.HostStatusInsufficientUnbound
	case models.HostStatusDisconnected:
		return models.HostStatusDisconnectedUnbound
	}
	return state
}

func isOneOf(state string, states ...string) bool { return slices.Contains(states, state) }

var (
	preInstallStates = []string{"", models.HostStatusDiscovering, models.HostStatusDiscoveringUnbound, models.HostStatusKnown,
		models.HostStatusKnownUnbound, models.HostStatusInsufficient, models.HostStatusInsufficientUnbound,
		models.HostStatusDisconnected, models.HostStatusDisconnectedUnbound, models.HostStatusBinding, models.HostStatusUnbinding}
	installingStates = []string{models.HostStatusPreparingForInstallation, models.HostStatusPreparingSuccessful,
		models.HostStatusInstalling, models.HostStatusInstallingInProgress}
)

// progressStages are the progress stages assisted-service expects of a host of that role
// (shared with the hosts of the real service: sim/internal/stages), which an Agent's status
// lists; walked are those it goes through, the same but for a host added to an installed cluster
// (day2), whose Node's joining the service's agent controller reports (stages.Day2). An arbiter
// installs as a master does (newer services' FindMatchingStages).
func progressStages(role models.HostRole, bootstrap, sno bool) []models.HostStage {
	switch {
	case bootstrap:
		role = models.HostRoleBootstrap
	case role == HostRoleArbiter:
		role = models.HostRoleMaster
	}
	return stages.Host(role, sno)
}

func walkedStages(role models.HostRole, bootstrap, day2, sno bool) []models.HostStage {
	if day2 {
		if role == HostRoleArbiter {
			role = models.HostRoleMaster
		}
		return stages.Day2(role)
	}
	return progressStages(role, bootstrap, sno)
}

// validations are the host's validation results; failing lists the failures' messages. peers
// are the hosts of its cluster (self among them, as its Agent's name), day2 tells that the host
// joins an installed cluster.
func validations(h *inventory.Host, role models.HostRole, cl *cluster, failMemory bool, self string, peers []clusterHost, day2 bool) (common.ValidationsStatus, string) {
	bound := cl != nil
	if role == "" {
		role = models.HostRoleAutoAssign
	}
	ok := func(id models.HostValidationID, msg string) common.ValidationResult {
		return common.ValidationResult{ID: string(id), Status: validationStatusSuccess, Message: msg}
	}
	memory := ok(models.HostValidationIDHasMemoryForRole, fmt.Sprintf("Sufficient RAM for role %s", role))
	failing := ""
	if failMemory {
		memory.Status = validationStatusFailure
		memory.Message = fmt.Sprintf("Require at least 16.00 GiB RAM for role %s, found only %.2f GiB", role, float64(h.RAMMebibytes)/1024/4)
		failing = memory.Message
	}
	hw := common.ValidationResults{
		ok(models.HostValidationIDHasInventory, "Valid inventory exists for the host"),
		ok(models.HostValidationIDHasMinCPUCores, "Sufficient CPU cores"),
		ok(models.HostValidationIDHasMinMemory, "Sufficient minimum RAM"),
		ok(models.HostValidationIDHasMinValidDisks, "Sufficient disk capacity"),
		ok(models.HostValidationIDHasCPUCoresForRole, fmt.Sprintf("Sufficient CPU cores for role %s", role)),
		memory,
		ok(models.HostValidationIDHostnameUnique, fmt.Sprintf("Hostname %s is unique in cluster", h.Hostname)),
		ok(models.HostValidationIDHostnameValid, fmt.Sprintf("Hostname %s is allowed", h.Hostname)),
	}
	network := common.ValidationResults{
		ok(models.HostValidationIDConnected, "Host is connected"),
		ok(models.HostValidationIDMediaConnected, "Media device is connected"),
		ok(models.HostValidationIDNtpSynced, "Host NTP is synced"),
	}
	if bound {
		status, msg, fails := belongsToMachineNetworks(cl.aci, h.AgentInventory(metav1.Time{}))
		network = append(network, common.ValidationResult{ID: string(models.HostValidationIDBelongsToMachineCidr), Status: status, Message: msg})
		if fails && failing == "" {
			failing = msg
		}
		status, msg, fails = belongsToMajorityGroup(cl.aci, status, self, peers, day2)
		network = append(network, common.ValidationResult{ID: string(models.HostValidationIDBelongsToMajorityGroup), Status: status, Message: msg})
		if fails && failing == "" {
			failing = msg
		}
	} else {
		network = append(network, common.ValidationResult{ID: string(models.HostValidationIDBelongsToMachineCidr),
			Status: validationStatusPending, Message: "Missing inventory or machine network CIDR"})
	}
	return common.ValidationsStatus{validationCategoryHardware: hw, validationCategoryNetwork: network}, failing
}

// reconcileAgent moves one Agent at most one state forward.
func (s *Simulator) reconcileAgent(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	a := &aiv1beta1.Agent{}
	if err := s.Client.Get(ctx, req.NamespacedName, a); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !a.DeletionTimestamp.IsZero() {
		s.timer.Forget(a.UID)
		s.forgetHost(req.NamespacedName)
		// The service deletes the host with its fencing credentials: a host registered again
		// under that name has none until its Agent names a Secret.
		s.forgetFencing(req.NamespacedName)
		s.mu.Lock()
		delete(s.registered, req.NamespacedName)
		s.mu.Unlock()
		return ctrl.Result{}, removeFinalizer(ctx, s.Client, a, AgentFinalizer)
	}
	before := a.DeepCopy()
	host := s.Inventory.BySystemUUID(a.Name)
	if host == nil {
		log.V(4).Info("Agent of a host outside the lab's inventory: left alone")
		return ctrl.Result{}, nil
	}
	s.mu.Lock()
	registered := s.registered[req.NamespacedName]
	s.mu.Unlock()
	if !registered {
		// assisted-service deletes an Agent it holds no host for, as one moved from another
		// hub (clusterctl move) or restored from a backup: its host registered elsewhere.
		log.Info("Deleting an Agent whose host never registered with this service")
		return ctrl.Result{}, client.IgnoreNotFound(s.Client.Delete(ctx, a))
	}
	if err := addFinalizer(ctx, s.Client, a, AgentFinalizer); err != nil {
		return ctrl.Result{}, err
	}
	cl, specErr, err := s.clusterOf(ctx, a)
	if err != nil {
		return ctrl.Result{}, err
	}
	if cl != nil && specErr == "" && isOneOf(a.Status.DebugInfo.State, preInstallStates...) {
		if specErr, err = s.syncFencing(ctx, a, cl); err != nil {
			return ctrl.Result{}, err
		}
	}
	running, failValidation, disconnected := s.hostFlags(host.SystemUUID)
	connected := running && !disconnected
	bound := cl != nil
	cur := a.Status.DebugInfo.State
	role := s.effectiveRole(a)
	var peers []clusterHost
	day2 := cl != nil && isOneOf(cl.state(), models.ClusterStatusInstalled, models.ClusterStatusAddingHosts)
	if cl != nil && !day2 && !isSNO(cl.aci) {
		if peers, err = s.clusterHosts(ctx, cl, a.Name, host); err != nil {
			return ctrl.Result{}, err
		}
	}
	vals, failing := validations(host, role, cl, failValidation, a.Name, peers, day2)
	validated := func(bound bool) string {
		if failing != "" {
			return bindingVariant(bound, models.HostStatusInsufficient)
		}
		return bindingVariant(bound, models.HostStatusKnown)
	}
	var aciState string
	var inSet, installFault, sno bool
	if cl != nil {
		aciState = cl.state()
		sno = isSNO(cl.aci)
		inSet = s.inInstallSet(cl.key(), req.NamespacedName)
		s.mu.Lock()
		installFault = s.failInstall[cl.key()]
		s.mu.Unlock()
	}
	wait := func(step string, d time.Duration) (time.Duration, bool) {
		w := s.timer.Remaining(a.UID, cur+"/"+step, d)
		return w, w > 0
	}

	next, info := cur, a.Status.DebugInfo.StateInfo
	stage := a.Status.Progress.CurrentStage
	switch {
	case cur == "":
		next, info = bindingVariant(bound, models.HostStatusDiscovering), infoDiscovering
	case isOneOf(cur, preInstallStates...) && !connected:
		if !isOneOf(cur, models.HostStatusDisconnected, models.HostStatusDisconnectedUnbound) {
			next, info = bindingVariant(bound, models.HostStatusDisconnected), infoDisconnected
		}
	case isOneOf(cur, models.HostStatusDisconnected, models.HostStatusDisconnectedUnbound):
		next, info = bindingVariant(bound, models.HostStatusDiscovering), infoDiscovering
	case isOneOf(cur, models.HostStatusDiscovering, models.HostStatusDiscoveringUnbound):
		if w, ok := wait("discover", s.Durations.Discover); ok {
			return ctrl.Result{RequeueAfter: w}, nil
		}
		next = validated(bound)
	case isOneOf(cur, models.HostStatusKnownUnbound, models.HostStatusInsufficientUnbound):
		if bound {
			next, info = models.HostStatusBinding, infoBinding
		} else {
			next = validated(false)
		}
	case cur == models.HostStatusBinding:
		if !bound {
			next, info = models.HostStatusUnbinding, infoUnbinding
			break
		}
		if w, ok := wait("bind", s.Durations.Bind); ok {
			return ctrl.Result{RequeueAfter: w}, nil
		}
		next = validated(true)
	case cur == models.HostStatusUnbinding:
		if w, ok := wait("unbind", s.Durations.Bind); ok {
			return ctrl.Result{RequeueAfter: w}, nil
		}
		next = validated(false)
	case isOneOf(cur, models.HostStatusKnown, models.HostStatusInsufficient):
		switch {
		case !bound:
			next, info = models.HostStatusUnbinding, infoUnbinding
		case validated(true) != cur:
			next = validated(true)
		case cur == models.HostStatusKnown && inSet && aciState == models.ClusterStatusPreparingForInstallation:
			next, info = models.HostStatusPreparingForInstallation, infoPreparing
		case cur == models.HostStatusKnown && !inSet && a.Spec.Approved &&
			isOneOf(aciState, models.ClusterStatusInstalled, models.ClusterStatusAddingHosts):
			next, info = models.HostStatusInstalling, infoInstalling // day 2: installs alone
		}
	case isOneOf(cur, installingStates...) && (inSet && aciState == models.ClusterStatusError ||
		installFault && isOneOf(cur, models.HostStatusInstalling, models.HostStatusInstallingInProgress)):
		next, info = models.HostStatusError, infoAbortingClusterErrors
		if installFault {
			stage = models.HostStageFailed
		}
	case cur == models.HostStatusPreparingForInstallation:
		if w, ok := wait("prepare", s.Durations.Prepare); ok {
			return ctrl.Result{RequeueAfter: w}, nil
		}
		next, info = models.HostStatusPreparingSuccessful, infoPreparingSuccessful
	case cur == models.HostStatusPreparingSuccessful:
		if aciState == models.ClusterStatusInstalling {
			next, info = models.HostStatusInstalling, infoInstalling
		}
	case cur == models.HostStatusInstalling:
		if w, ok := wait("start", s.Durations.InstallStage); ok {
			return ctrl.Result{RequeueAfter: w}, nil
		}
		next, stage = models.HostStatusInstallingInProgress, walkedStages(role, a.Status.Bootstrap, !inSet, sno)[0]
		info = string(stage)
		a.Status.Progress.ProgressStages = progressStages(role, a.Status.Bootstrap, sno)
	case cur == models.HostStatusInstallingInProgress:
		if !connected && running {
			break // The agent stopped reporting: the installation does not progress.
		}
		if w, ok := wait(string(stage), s.Durations.InstallStage); ok {
			return ctrl.Result{RequeueAfter: w}, nil
		}
		switch stage {
		case models.HostStageWritingImageToDisk:
			if s.bootsFromDisk(host.SystemUUID) {
				// A host that booted a disk image is installed to its existing root
				// (install_cmd.go sends the CoreOS image when the inventory's boot device
				// type is persistent): no efibootmgr, the boot order stays.
				host.InstallToExistingRoot()
			} else {
				host.WriteOS()
			}
		case models.HostStageRebooting:
			if iso := host.PowerOn(); iso != "" {
				// The host came back in the discovery ISO and its agent registered again
				// while it was expected to reboot into its disk: assisted-service's "Wrong
				// boot order detection" (internal/host/statemachine.go, RegisterHost from
				// installing-in-progress in the rebooting stage, PostRegisterDuringReboot).
				s.mu.Lock()
				s.running[host.SystemUUID] = true
				s.mu.Unlock()
				next, info = models.HostStatusInstallingPendingUserAction, wrongBootOrderInfo(host)
				log.Info("Host booted the discovery ISO again after writing its disk", "host", host.Name)
			}
		}
		if next == models.HostStatusInstallingPendingUserAction {
			break
		}
		if following, ok := nextStage(walkedStages(role, a.Status.Bootstrap, !inSet, sno), stage); ok {
			stage, info = following, string(following)
			break
		}
		if err := s.ensureNode(ctx, a, host, role, cl); err != nil {
			return ctrl.Result{}, err
		}
		s.mu.Lock()
		s.running[host.SystemUUID] = false // It boots its disk: the discovery agent is gone.
		s.mu.Unlock()
		next, info = models.HostStatusInstalled, infoDone
		if !inSet {
			next = models.HostStatusAddedToExistingCluster
		}
	case cur == models.HostStatusInstallingPendingUserAction:
		// Held until the host boots its disk (a person fixed the boot order and power-cycled
		// it): the installed system reports progress again. Nothing tells the service when, so
		// it looks again.
		if !host.RunsDisk() {
			return ctrl.Result{RequeueAfter: s.Durations.InstallStage}, nil
		}
		s.mu.Lock()
		s.running[host.SystemUUID] = false
		s.mu.Unlock()
		next, info = models.HostStatusInstallingInProgress, string(stage)
		if following, ok := nextStage(walkedStages(role, a.Status.Bootstrap, !inSet, sno), stage); ok {
			stage, info = following, string(following)
		}
	case isOneOf(cur, models.HostStatusInstalled, models.HostStatusAddedToExistingCluster, models.HostStatusError):
		if !bound {
			next, info = models.HostStatusUnbindingPendingUserAction, infoUnbindingPending
		}
	case cur == models.HostStatusUnbindingPendingUserAction:
		// Its discovery agent registered again (the host booted the discovery image, whatever
		// its disk holds): assisted-service starts it over (pool_host_statemachine.go).
		if connected {
			next, info = bindingVariant(bound, models.HostStatusDiscovering), infoDiscovering
		}
	}
	if next == models.HostStatusKnown || next == models.HostStatusKnownUnbound {
		info = infoKnown
		if !bound {
			info = infoKnownUnbound
		}
	}
	if next == models.HostStatusInsufficient || next == models.HostStatusInsufficientUnbound {
		info = fmt.Sprintf(infoInsufficient, failing)
	}

	now := metav1.NewTime(s.now())
	if !isOneOf(next, models.HostStatusDiscovering, models.HostStatusDiscoveringUnbound) || a.Status.Inventory.Hostname != "" {
		a.Status.Inventory = host.AgentInventory(metav1.NewTime(now.Truncate(time.Minute)))
		a.Status.InstallationDiskID = host.InstallationDiskID()
		if isOneOf(next, preInstallStates...) {
			a.Status.ValidationsInfo = vals
		}
	}
	a.Status.Role = role
	s.mu.Lock()
	a.Status.Bootstrap = s.bootstrap[req.NamespacedName] && inSet
	s.mu.Unlock()
	a.Status.DebugInfo.State, a.Status.DebugInfo.StateInfo = next, info
	if err := s.populateAgentEventsURL(ctx, a); err != nil {
		return ctrl.Result{}, err
	}
	if stage != a.Status.Progress.CurrentStage {
		a.Status.Progress.CurrentStage = stage
		a.Status.Progress.StageStartTime = &now
		a.Status.Progress.StageUpdateTime = &now
		if st := a.Status.Progress.ProgressStages; len(st) > 0 {
			a.Status.Progress.InstallationPercentage = int64(100 * (slices.Index(st, stage) + 1) / len(st))
		}
	}
	setAgentConditions(a, next, info, failing, specErr)
	if equalAgentStatus(before, a) {
		return ctrl.Result{}, nil
	}
	if err := s.Client.Status().Update(ctx, a); err != nil {
		return ctrl.Result{}, fmt.Errorf("updating Agent status: %w", err)
	}
	if next != cur || stage != before.Status.Progress.CurrentStage {
		s.timer.Forget(a.UID)
		log.V(2).Info("Agent state", "state", next, "stage", stage)
		if next != cur {
			s.Recorder.Eventf(a, nil, corev1.EventTypeNormal, "HostStatusChanged", "Update", "Host %s: %s (%s)", host.Hostname, next, info)
		}
	}
	return ctrl.Result{}, nil
}

// populateAgentEventsURL publishes the events URL of the host once, as assisted-service does
// (agent_controller.go populateEventsURL): filtered by host_id and signed for the InfraEnv the
// host registered through.
func (s *Simulator) populateAgentEventsURL(ctx context.Context, a *aiv1beta1.Agent) error {
	if a.Status.DebugInfo.EventsURL != "" {
		return nil
	}
	ie := &aiv1beta1.InfraEnv{}
	err := s.Client.Get(ctx, client.ObjectKey{Namespace: a.Namespace, Name: a.Labels[aiv1beta1.InfraEnvNameLabel]}, ie)
	if err != nil {
		return client.IgnoreNotFound(err)
	}
	a.Status.DebugInfo.EventsURL, err = s.eventsURL("host_id", a.Name, infraEnvScope, string(ie.UID))
	return err
}

// nextStage is the stage after stage in the host's progress stages; false when stage is the last
// (or not one of them).
func nextStage(stages []models.HostStage, stage models.HostStage) (models.HostStage, bool) {
	i := slices.Index(stages, stage)
	if i < 0 || i+1 >= len(stages) {
		return "", false
	}
	return stages[i+1], true
}

// wrongBootOrderInfo is assisted-service's status info for a host that registered again while
// rebooting after writing its disk (PostRegisterDuringReboot in internal/host/transition.go: the
// message, then the installation disk's model, serial, name and identifier).
func wrongBootOrderInfo(h *inventory.Host) string {
	msg := "Expected the host to boot from disk, but it booted the installation image - please reboot and fix boot order to boot from disk"
	if len(h.Disks) == 0 {
		return msg
	}
	d := h.Disks[0]
	return fmt.Sprintf("%s %s %s (%s, %s)", msg, d.Model, d.Serial, strings.TrimPrefix(d.Name, "/dev/"), h.InstallationDiskID())
}

// equalAgentStatus compares what the simulator writes, ignoring the inventory's report time.
func equalAgentStatus(a, b *aiv1beta1.Agent) bool {
	x, y := a.Status.DeepCopy(), b.Status.DeepCopy()
	x.Inventory.ReportTime, y.Inventory.ReportTime = nil, nil
	for i := range x.Conditions {
		x.Conditions[i].LastHeartbeatTime, x.Conditions[i].LastTransitionTime = metav1.Time{}, metav1.Time{}
	}
	for i := range y.Conditions {
		y.Conditions[i].LastHeartbeatTime, y.Conditions[i].LastTransitionTime = metav1.Time{}, metav1.Time{}
	}
	return apiequality.Semantic.DeepEqual(x, y)
}

// effectiveRole is the host's role: as asked, or as assigned when the installation started.
func (s *Simulator) effectiveRole(a *aiv1beta1.Agent) models.HostRole {
	if a.Spec.Role != "" && a.Spec.Role != models.HostRoleAutoAssign {
		return a.Spec.Role
	}
	s.mu.Lock()
	role, ok := s.roles[client.ObjectKeyFromObject(a)]
	s.mu.Unlock()
	if ok {
		return role
	}
	if a.Status.Role == models.HostRoleMaster || a.Status.Role == models.HostRoleWorker || a.Status.Role == HostRoleArbiter {
		return a.Status.Role
	}
	return models.HostRoleAutoAssign
}

// ensureNode creates (or refreshes) the host's Node in the workload cluster, as the kubelet does.
// The kubelet is the one of the release cl installs.
func (s *Simulator) ensureNode(ctx context.Context, a *aiv1beta1.Agent, h *inventory.Host, role models.HostRole, cl *cluster) error {
	kubeletVersion, err := s.kubeletVersion(ctx, cl)
	if err != nil {
		return err
	}
	workload, err := s.workloadOf(ctx, client.ObjectKeyFromObject(cl.cd))
	if err != nil {
		return err
	}
	name := h.Hostname
	if a.Spec.Hostname != "" {
		name = a.Spec.Hostname
	}
	n := kubelet.Node{Host: h, Name: name, Labels: kubelet.RoleLabels(string(role)), KubeletVersion: kubeletVersion,
		MachineNetworks: statusMachineNetworks(cl.aci), BootID: string(a.UID)}
	if role == HostRoleArbiter {
		// OpenShift's arbiter node: its own role label and a NoSchedule taint that only the
		// control plane's critical components tolerate (openshift/installer's arbiter machine
		// pool, openshift/origin's HighlyAvailableArbiter tests).
		n.Taints = []corev1.Taint{{Key: arbiterNodeLabel, Effect: corev1.TaintEffectNoSchedule}}
	}
	for k, v := range a.Spec.NodeLabels {
		n.Labels[k] = v
	}
	// The kubelet registers with the providerID its --provider-id names, if any.
	if n.ProviderID, err = ign.KubeletProviderID(a.Spec.IgnitionConfigOverrides); err != nil {
		return fmt.Errorf("host %s: %w", name, err)
	}
	if err := kubelet.Register(ctx, workload.client, n, s.now()); err != nil {
		return err
	}
	if role == models.HostRoleMaster {
		return s.writeFencingSecret(ctx, workload.client, a, name)
	}
	return nil
}

// kubeletVersion is the Kubernetes version of the release cl installs (its ClusterImageSet's
// release image), "" when unknown.
func (s *Simulator) kubeletVersion(ctx context.Context, cl *cluster) (string, error) {
	if s.KubernetesVersion == nil || cl == nil || cl.aci.Spec.ImageSetRef == nil {
		return "", nil
	}
	cis := &hivev1.ClusterImageSet{}
	if err := s.Client.Get(ctx, client.ObjectKey{Name: cl.aci.Spec.ImageSetRef.Name}, cis); err != nil {
		if apierrors.IsNotFound(err) {
			return "", nil
		}
		return "", fmt.Errorf("reading ClusterImageSet %s: %w", cl.aci.Spec.ImageSetRef.Name, err)
	}
	v, err := s.KubernetesVersion(ctx, cis.Spec.ReleaseImage)
	if err != nil {
		return "", fmt.Errorf("reading the Kubernetes version of release %s: %w", cis.Spec.ReleaseImage, err)
	}
	return v, nil
}

// agentsOfACI maps an AgentClusterInstall to the Agents bound to its ClusterDeployment.
func (s *Simulator) agentsOfACI(ctx context.Context, obj client.Object) []reconcile.Request {
	aci, ok := obj.(*hiveextv1beta1.AgentClusterInstall)
	if !ok {
		return nil
	}
	agents, err := s.boundAgents(ctx, aci.Namespace, aci.Spec.ClusterDeploymentRef.Name)
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing Agents")
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(agents))
	for i := range agents {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&agents[i])})
	}
	return reqs
}

// clusterHosts are the hosts of the cluster cl as its hosts' connectivity checks see them (for
// belongsToMajorityGroup): every Agent bound to it, self (the Agent of host) among them, and
// whether each runs its discovery agent. It reads the cache without copying the Agents: it runs
// on every validation pass of every host.
func (s *Simulator) clusterHosts(ctx context.Context, cl *cluster, self string, host *inventory.Host) ([]clusterHost, error) {
	agents, err := s.boundAgents(ctx, cl.cd.Namespace, cl.cd.Name, client.UnsafeDisableDeepCopy)
	if err != nil {
		return nil, err
	}
	type member struct {
		name string
		host *inventory.Host
	}
	members := []member{{self, host}}
	for i := range agents {
		if a := &agents[i]; a.Name != self {
			// An Agent of a host outside the lab's inventory (nil) is a host of the cluster
			// that never answers here.
			members = append(members, member{a.Name, s.Inventory.BySystemUUID(a.Name)})
		}
	}
	out := make([]clusterHost, 0, len(members))
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range members {
		out = append(out, clusterHostOf(m.name, m.host, m.host != nil && s.running[m.host.SystemUUID]))
	}
	return out, nil
}

// boundAgents lists the Agents whose spec binds them to the ClusterDeployment namespace/name
// (opts: further options of the list, such as client.UnsafeDisableDeepCopy for a reader).
func (s *Simulator) boundAgents(ctx context.Context, namespace, name string, opts ...client.ListOption) ([]aiv1beta1.Agent, error) {
	list := &aiv1beta1.AgentList{}
	if err := s.Client.List(ctx, list, opts...); err != nil {
		return nil, fmt.Errorf("listing Agents: %w", err)
	}
	want := types.NamespacedName{Namespace: namespace, Name: name}
	var out []aiv1beta1.Agent
	for i := range list.Items {
		if cd, ok := boundTo(&list.Items[i]); ok && cd == want {
			out = append(out, list.Items[i])
		}
	}
	return out, nil
}

// boundTo is the ClusterDeployment the Agent's spec binds it to (its namespace when the
// reference names none), false when it is unbound.
func boundTo(a *aiv1beta1.Agent) (types.NamespacedName, bool) {
	ref := a.Spec.ClusterDeploymentName
	if ref == nil || ref.Name == "" {
		return types.NamespacedName{}, false
	}
	if ref.Namespace == "" {
		return types.NamespacedName{Namespace: a.Namespace, Name: ref.Name}, true
	}
	return types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, true
}

// aciOfAgent maps an Agent to the AgentClusterInstall of the cluster it is (or was) bound to.
func (s *Simulator) aciOfAgent(ctx context.Context, obj client.Object) []reconcile.Request {
	a, ok := obj.(*aiv1beta1.Agent)
	if !ok {
		return nil
	}
	reqs := s.installSetsOf(client.ObjectKeyFromObject(a))
	cl, _, err := s.clusterOf(ctx, a)
	if err == nil && cl != nil {
		reqs = append(reqs, reconcile.Request{NamespacedName: cl.key()})
	}
	return reqs
}

// aciOfClusterDeployment maps a ClusterDeployment to its AgentClusterInstall.
func aciOfClusterDeployment(_ context.Context, obj client.Object) []reconcile.Request {
	cd, ok := obj.(*hivev1.ClusterDeployment)
	if !ok || cd.Spec.ClusterInstallRef == nil || cd.Spec.ClusterInstallRef.Kind != "AgentClusterInstall" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: cd.Namespace, Name: cd.Spec.ClusterInstallRef.Name}}}
}

func (s *Simulator) inInstallSet(aci, agent types.NamespacedName) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.installSets[aci][agent]
}

func (s *Simulator) installSetsOf(agent types.NamespacedName) []reconcile.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	var reqs []reconcile.Request
	for aci, set := range s.installSets {
		if set[agent] {
			reqs = append(reqs, reconcile.Request{NamespacedName: aci})
		}
	}
	return reqs
}
