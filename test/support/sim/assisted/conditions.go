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
	"fmt"

	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	"github.com/openshift/assisted-service/models"
	conditionsv1 "github.com/openshift/custom-resource-status/conditions/v1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Host status infos, as assisted-service words them.
const (
	infoDiscovering            = "Waiting for host to send hardware details"
	infoKnown                  = "Host is ready to be installed"
	infoKnownUnbound           = "Host is ready to be bound to a cluster"
	infoInsufficient           = "Host does not meet the minimum hardware requirements: %s"
	infoDisconnected           = "Host has stopped communicating with the installation service"
	infoBinding                = "Host is waiting to be bound to the cluster"
	infoUnbinding              = "Host is waiting to be unbound from the cluster"
	infoUnbindingPending       = "Host requires booting into the discovery image to complete unbinding"
	infoPreparing              = "Host is preparing for installation"
	infoPreparingSuccessful    = "Host finished successfully to prepare for installation"
	infoInstalling             = "Installation is in progress"
	infoDone                   = "Done"
	infoAbortingClusterErrors  = "Host is part of a cluster that failed to install"
	clusterInfoReady           = "Cluster ready to be installed"
	clusterInfoInsufficient    = "Cluster is not ready for install"
	clusterInfoPreparing       = "Preparing cluster for installation"
	clusterInfoInstalling      = "Installation in progress"
	clusterInfoFinalizing      = "Finalizing cluster installation"
	clusterInfoInstalled       = "Cluster is installed"
	clusterInfoAddingHosts     = "cluster is adding hosts to existing OCP cluster"
	clusterInfoError           = "cluster has hosts in error"
	clusterInfoInstallFailed   = "Failed installing cluster: simulated installation failure"
	validationStatusSuccess    = "success" // assisted-service's host.ValidationSuccess
	validationStatusFailure    = "failure" // host.ValidationFailure
	validationStatusPending    = "pending" // host.ValidationPending
	validationCategoryHardware = "hardware"
	validationCategoryNetwork  = "network"
)

func cond(t conditionsv1.ConditionType, ok bool, reason, msg string) conditionsv1.Condition {
	s := corev1.ConditionFalse
	if ok {
		s = corev1.ConditionTrue
	}
	return conditionsv1.Condition{Type: t, Status: s, Reason: reason, Message: msg}
}

// setAgentConditions sets the Agent's conditions for its state, as assisted-service's Agent
// controller does.
func setAgentConditions(a *aiv1beta1.Agent, state, stateInfo, failing string, specErr string) {
	set := func(c conditionsv1.Condition) { conditionsv1.SetStatusConditionNoHeartbeat(&a.Status.Conditions, c) }

	if specErr != "" {
		set(cond(aiv1beta1.SpecSyncedCondition, false, aiv1beta1.InputErrorReason, aiv1beta1.InputErrorMsg+" "+specErr))
	} else {
		set(cond(aiv1beta1.SpecSyncedCondition, true, aiv1beta1.SyncedOkReason, aiv1beta1.SyncedOkMsg))
	}

	switch state {
	case models.HostStatusDisconnected, models.HostStatusDisconnectedUnbound:
		set(cond(aiv1beta1.ConnectedCondition, false, aiv1beta1.AgentDisconnectedReason, aiv1beta1.AgentDisonnectedMsg))
	default:
		set(cond(aiv1beta1.ConnectedCondition, true, aiv1beta1.AgentConnectedReason, aiv1beta1.AgentConnectedMsg))
	}

	switch state {
	case models.HostStatusKnown, models.HostStatusKnownUnbound:
		if a.Spec.Approved {
			set(cond(aiv1beta1.RequirementsMetCondition, true, aiv1beta1.AgentReadyReason, aiv1beta1.AgentReadyMsg))
		} else {
			set(cond(aiv1beta1.RequirementsMetCondition, false, aiv1beta1.AgentIsNotApprovedReason, aiv1beta1.AgentIsNotApprovedMsg))
		}
	case models.HostStatusPreparingForInstallation, models.HostStatusPreparingSuccessful, models.HostStatusInstalling,
		models.HostStatusInstallingInProgress, models.HostStatusInstallingPendingUserAction:
		set(cond(aiv1beta1.RequirementsMetCondition, true, aiv1beta1.AgentAlreadyInstallingReason, aiv1beta1.AgentAlreadyInstallingMsg))
	case models.HostStatusInstalled, models.HostStatusError, models.HostStatusAddedToExistingCluster:
		set(cond(aiv1beta1.RequirementsMetCondition, true, aiv1beta1.AgentInstallationStoppedReason, aiv1beta1.AgentInstallationStoppedMsg))
	case models.HostStatusBinding:
		set(cond(aiv1beta1.RequirementsMetCondition, false, aiv1beta1.BindingReason, aiv1beta1.BindingMsg))
	case models.HostStatusUnbinding, models.HostStatusUnbindingPendingUserAction:
		set(cond(aiv1beta1.RequirementsMetCondition, false, aiv1beta1.UnbindingReason, aiv1beta1.UnbindingMsg))
	default:
		set(cond(aiv1beta1.RequirementsMetCondition, false, aiv1beta1.AgentNotReadyReason, aiv1beta1.AgentNotReadyMsg))
	}

	switch {
	case state == models.HostStatusBinding:
		set(cond(aiv1beta1.ValidatedCondition, false, aiv1beta1.BindingReason, aiv1beta1.BindingMsg))
	case state == models.HostStatusUnbinding || state == models.HostStatusUnbindingPendingUserAction:
		set(cond(aiv1beta1.ValidatedCondition, false, aiv1beta1.UnbindingReason, aiv1beta1.UnbindingMsg))
	case state == models.HostStatusInsufficient || state == models.HostStatusInsufficientUnbound:
		set(cond(aiv1beta1.ValidatedCondition, false, aiv1beta1.ValidationsFailingReason, aiv1beta1.AgentValidationsFailingMsg+" "+failing))
	case len(a.Status.ValidationsInfo) == 0:
		set(conditionsv1.Condition{Type: aiv1beta1.ValidatedCondition, Status: corev1.ConditionUnknown,
			Reason: aiv1beta1.ValidationsUnknownReason, Message: aiv1beta1.AgentValidationsUnknownMsg})
	default:
		set(cond(aiv1beta1.ValidatedCondition, true, aiv1beta1.ValidationsPassingReason, aiv1beta1.AgentValidationsPassingMsg))
	}

	switch state {
	case models.HostStatusInstalled, models.HostStatusAddedToExistingCluster:
		set(cond(aiv1beta1.InstalledCondition, true, aiv1beta1.InstalledReason, aiv1beta1.InstalledMsg+" "+stateInfo))
	case models.HostStatusError:
		set(cond(aiv1beta1.InstalledCondition, false, aiv1beta1.InstallationFailedReason, aiv1beta1.InstallationFailedMsg+" "+stateInfo))
	case models.HostStatusPreparingForInstallation, models.HostStatusPreparingSuccessful,
		models.HostStatusInstalling, models.HostStatusInstallingInProgress, models.HostStatusInstallingPendingUserAction:
		set(cond(aiv1beta1.InstalledCondition, false, aiv1beta1.InstallationInProgressReason, aiv1beta1.InstallationInProgressMsg+" "+stateInfo))
	case models.HostStatusBinding:
		set(cond(aiv1beta1.InstalledCondition, false, aiv1beta1.BindingReason, aiv1beta1.BindingMsg))
	case models.HostStatusUnbinding, models.HostStatusUnbindingPendingUserAction:
		set(cond(aiv1beta1.InstalledCondition, false, aiv1beta1.UnbindingReason, aiv1beta1.UnbindingMsg))
	default:
		set(cond(aiv1beta1.InstalledCondition, false, aiv1beta1.InstallationNotStartedReason, aiv1beta1.InstallationNotStartedMsg))
	}

	switch state {
	case models.HostStatusBinding:
		set(cond(aiv1beta1.BoundCondition, false, aiv1beta1.BindingReason, aiv1beta1.BindingMsg))
	case models.HostStatusUnbinding:
		set(cond(aiv1beta1.BoundCondition, false, aiv1beta1.UnbindingReason, aiv1beta1.UnbindingMsg))
	case models.HostStatusUnbindingPendingUserAction:
		set(cond(aiv1beta1.BoundCondition, false, aiv1beta1.UnbindingPendingUserActionReason, aiv1beta1.UnbindingPendingUserActionMsg))
	case models.HostStatusDisconnectedUnbound, models.HostStatusKnownUnbound, models.HostStatusInsufficientUnbound,
		models.HostStatusDiscoveringUnbound:
		set(cond(aiv1beta1.BoundCondition, false, aiv1beta1.UnboundReason, aiv1beta1.UnboundMsg))
	default:
		set(cond(aiv1beta1.BoundCondition, true, aiv1beta1.BoundReason, aiv1beta1.BoundMsg))
	}
}

// aciCounts are the numbers assisted-service weighs to decide whether a cluster can install.
type aciCounts struct {
	registered, approved, unsynced int
	// arbiters is the number of arbiter hosts the cluster asks for (two-node OpenShift).
	arbiters int
}

// setACIConditions sets the AgentClusterInstall's conditions for the cluster's state, as
// assisted-service's ClusterDeployments controller does.
func setACIConditions(aci *hiveextv1beta1.AgentClusterInstall, state, stateInfo, failing string, n aciCounts, now metav1.Time) {
	set := func(t string, s corev1.ConditionStatus, reason, msg string) {
		setClusterCondition(&aci.Status.Conditions, hivev1.ClusterInstallCondition{Type: t, Status: s, Reason: reason, Message: msg}, now)
	}
	tf := func(b bool) corev1.ConditionStatus {
		if b {
			return corev1.ConditionTrue
		}
		return corev1.ConditionFalse
	}
	set(hiveextv1beta1.ClusterSpecSyncedCondition, corev1.ConditionTrue, hiveextv1beta1.ClusterSyncedOkReason, hiveextv1beta1.ClusterSyncedOkMsg)

	reason, msg, ok := requirementsMet(aci, state, n)
	set(hiveextv1beta1.ClusterRequirementsMetCondition, tf(ok), reason, msg)

	switch state {
	case models.ClusterStatusInsufficient:
		set(hiveextv1beta1.ClusterValidatedCondition, corev1.ConditionFalse, hiveextv1beta1.ClusterValidationsFailingReason,
			hiveextv1beta1.ClusterValidationsFailingMsg+" "+failing)
	default:
		set(hiveextv1beta1.ClusterValidatedCondition, corev1.ConditionTrue, hiveextv1beta1.ClusterValidationsPassingReason,
			hiveextv1beta1.ClusterValidationsOKMsg)
	}

	switch state {
	case models.ClusterStatusInstalled, models.ClusterStatusAddingHosts:
		set(hiveextv1beta1.ClusterCompletedCondition, corev1.ConditionTrue, hiveextv1beta1.ClusterInstalledReason,
			hiveextv1beta1.ClusterInstalledMsg+" "+stateInfo)
	case models.ClusterStatusError:
		set(hiveextv1beta1.ClusterCompletedCondition, corev1.ConditionFalse, hiveextv1beta1.ClusterInstallationFailedReason,
			hiveextv1beta1.ClusterInstallationFailedMsg+" "+stateInfo)
	case models.ClusterStatusReady:
		if aci.Spec.HoldInstallation {
			set(hiveextv1beta1.ClusterCompletedCondition, corev1.ConditionFalse, hiveextv1beta1.ClusterInstallationOnHoldReason,
				hiveextv1beta1.ClusterInstallationOnHoldMsg)
		} else {
			set(hiveextv1beta1.ClusterCompletedCondition, corev1.ConditionFalse, hiveextv1beta1.ClusterInstallationNotStartedReason,
				hiveextv1beta1.ClusterInstallationNotStartedMsg)
		}
	case models.ClusterStatusPreparingForInstallation, models.ClusterStatusInstalling, models.ClusterStatusFinalizing:
		set(hiveextv1beta1.ClusterCompletedCondition, corev1.ConditionFalse, hiveextv1beta1.ClusterInstallationInProgressReason,
			hiveextv1beta1.ClusterInstallationInProgressMsg+" "+stateInfo)
	default:
		set(hiveextv1beta1.ClusterCompletedCondition, corev1.ConditionFalse, hiveextv1beta1.ClusterInstallationNotStartedReason,
			hiveextv1beta1.ClusterInstallationNotStartedMsg)
	}

	if state == models.ClusterStatusError {
		set(hiveextv1beta1.ClusterFailedCondition, corev1.ConditionTrue, hiveextv1beta1.ClusterFailedReason,
			hiveextv1beta1.ClusterFailedMsg+" "+stateInfo)
	} else {
		set(hiveextv1beta1.ClusterFailedCondition, corev1.ConditionFalse, hiveextv1beta1.ClusterNotFailedReason, hiveextv1beta1.ClusterNotFailedMsg)
	}

	switch state {
	case models.ClusterStatusError:
		set(hiveextv1beta1.ClusterStoppedCondition, corev1.ConditionTrue, hiveextv1beta1.ClusterStoppedFailedReason, hiveextv1beta1.ClusterStoppedFailedMsg)
	case models.ClusterStatusInstalled, models.ClusterStatusAddingHosts:
		set(hiveextv1beta1.ClusterStoppedCondition, corev1.ConditionTrue, hiveextv1beta1.ClusterStoppedCompletedReason, hiveextv1beta1.ClusterStoppedCompletedMsg)
	default:
		set(hiveextv1beta1.ClusterStoppedCondition, corev1.ConditionFalse, hiveextv1beta1.ClusterNotStoppedReason, hiveextv1beta1.ClusterNotStoppedMsg)
	}
}

// requirementsMet is the RequirementsMet condition: whether the cluster may start installing.
func requirementsMet(aci *hiveextv1beta1.AgentClusterInstall, state string, n aciCounts) (reason, msg string, ok bool) {
	expected := aci.Spec.ProvisionRequirements.ControlPlaneAgents + aci.Spec.ProvisionRequirements.WorkerAgents + n.arbiters
	switch state {
	case models.ClusterStatusReady:
		switch {
		case n.registered < expected:
			return hiveextv1beta1.ClusterInsufficientAgentsReason, fmt.Sprintf(hiveextv1beta1.ClusterInsufficientAgentsMsg, expected, n.approved), false
		case n.unsynced != 0:
			return hiveextv1beta1.ClusterUnsyncedAgentsReason, fmt.Sprintf(hiveextv1beta1.ClusterUnsyncedAgentsMsg, n.unsynced), false
		case n.approved < expected:
			return hiveextv1beta1.ClusterUnapprovedAgentsReason, fmt.Sprintf(hiveextv1beta1.ClusterUnapprovedAgentsMsg, expected-n.approved), false
		case n.registered > expected:
			return hiveextv1beta1.ClusterAdditionalAgentsReason, fmt.Sprintf(hiveextv1beta1.ClusterAdditionalAgentsMsg, expected, n.registered), false
		}
		return hiveextv1beta1.ClusterReadyReason, hiveextv1beta1.ClusterReadyMsg, true
	case models.ClusterStatusPreparingForInstallation, models.ClusterStatusInstalling, models.ClusterStatusFinalizing,
		models.ClusterStatusAddingHosts:
		return hiveextv1beta1.ClusterAlreadyInstallingReason, hiveextv1beta1.ClusterAlreadyInstallingMsg, true
	case models.ClusterStatusInstalled, models.ClusterStatusError:
		return hiveextv1beta1.ClusterInstallationStoppedReason, hiveextv1beta1.ClusterInstallationStoppedMsg, true
	}
	return hiveextv1beta1.ClusterNotReadyReason, hiveextv1beta1.ClusterNotReadyMsg, false
}

// setClusterCondition sets c, moving its transition time only when its status changes.
func setClusterCondition(conds *[]hivev1.ClusterInstallCondition, c hivev1.ClusterInstallCondition, now metav1.Time) {
	for i := range *conds {
		old := &(*conds)[i]
		if old.Type != c.Type {
			continue
		}
		if old.Status != c.Status {
			old.LastTransitionTime = now
		}
		old.Status, old.Reason, old.Message = c.Status, c.Reason, c.Message
		old.LastProbeTime = now
		return
	}
	c.LastTransitionTime, c.LastProbeTime = now, now
	*conds = append(*conds, c)
}
