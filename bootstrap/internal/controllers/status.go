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
	"fmt"
	"slices"

	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	"github.com/openshift/assisted-service/models"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/reconciler"
)

// stepConditions are the conditions of the steps a host goes through, in order.
var stepConditions = []string{
	bootstrapv1.InfraEnvReadyCondition,
	bootstrapv1.DataSecretAvailableCondition,
	bootstrapv1.AgentRegisteredCondition,
	bootstrapv1.AgentApprovedCondition,
	bootstrapv1.InstallingCondition,
	bootstrapv1.InstalledCondition,
}

// ownedConditions are the conditions only this controller writes.
var ownedConditions = append([]string{clusterv1.PausedCondition, bootstrapv1.ReadyCondition}, stepConditions...)

// waitingReasons are the reasons of a step's condition while an earlier step is not done.
var waitingReasons = map[string]string{
	bootstrapv1.DataSecretAvailableCondition: bootstrapv1.WaitingForInfraEnvReason,
	bootstrapv1.AgentRegisteredCondition:     bootstrapv1.WaitingForDataSecretReason,
	bootstrapv1.AgentApprovedCondition:       bootstrapv1.WaitingForAgentRegistrationReason,
	bootstrapv1.InstallingCondition:          bootstrapv1.WaitingForApprovalReason,
	bootstrapv1.InstalledCondition:           bootstrapv1.NotInstalledReason,
}

// waiting sets InfraEnvReady to false with reason and message (what the config waits for) and
// the later steps to waiting.
func waiting(c *bootstrapv1.OpenshiftAssistedConfig, reason, message string) {
	conditions.Set(c, metav1.Condition{Type: bootstrapv1.InfraEnvReadyCondition, Status: metav1.ConditionFalse, Reason: reason, Message: message})
	setDownstreamWaiting(c, bootstrapv1.InfraEnvReadyCondition)
}

// setWaitingAfter sets the step following done to false with reason and message, and the
// steps after it to waiting.
func setWaitingAfter(c *bootstrapv1.OpenshiftAssistedConfig, done, reason, message string) {
	i := slices.Index(stepConditions, done)
	next := stepConditions[i+1]
	conditions.Set(c, metav1.Condition{Type: next, Status: metav1.ConditionFalse, Reason: reason, Message: message})
	setDownstreamWaiting(c, next)
}

// setDownstreamWaiting sets every step after failed to false, waiting for the one before it.
func setDownstreamWaiting(c *bootstrapv1.OpenshiftAssistedConfig, failed string) {
	i := slices.Index(stepConditions, failed)
	for j := i + 1; j < len(stepConditions); j++ {
		conditions.Set(c, metav1.Condition{Type: stepConditions[j], Status: metav1.ConditionFalse,
			Reason: waitingReasons[stepConditions[j]], Message: "Waiting for " + stepConditions[j-1]})
	}
}

// saysOtherwise tells whether the config's condition t does not say msg yet: an event for msg is
// recorded once, when the condition first says it.
func saysOtherwise(c *bootstrapv1.OpenshiftAssistedConfig, t, msg string) bool {
	prev := conditions.Get(c, t)
	return prev == nil || prev.Message != msg
}

// agentState is the assisted-service state of the agent's host.
func agentState(agent *aiv1beta1.Agent) string { return agent.Status.DebugInfo.State }

// setInstallConditions sets Installing and Installed from the assisted-service state of agent.
func setInstallConditions(c *bootstrapv1.OpenshiftAssistedConfig, agent *aiv1beta1.Agent) {
	state := agentState(agent)
	detail := fmt.Sprintf("Agent %s is in assisted-service state %q", agent.Name, state)
	if info := agent.Status.DebugInfo.StateInfo; info != "" {
		detail += ": " + info
	}
	installing := metav1.Condition{Type: bootstrapv1.InstallingCondition, Status: metav1.ConditionFalse, Reason: bootstrapv1.NotInstallingReason, Message: detail}
	installed := metav1.Condition{Type: bootstrapv1.InstalledCondition, Status: metav1.ConditionFalse, Reason: bootstrapv1.NotInstalledReason, Message: detail}
	switch state {
	case models.HostStatusPreparingForInstallation, models.HostStatusPreparingSuccessful,
		models.HostStatusInstalling, models.HostStatusInstallingInProgress:
		installing.Status, installing.Reason = metav1.ConditionTrue, bootstrapv1.InstallingReason
		if p := agent.Status.Progress; p.CurrentStage != "" {
			installing.Message = fmt.Sprintf("%s (stage %q, %d%%)", detail, p.CurrentStage, p.InstallationPercentage)
		}
	case models.HostStatusInstallingPendingUserAction:
		// assisted-service moves a host there when it registers again while rebooting after
		// writing its disk ("Expected the host to boot from disk, but it booted the installation
		// image", PostRegisterDuringReboot in internal/host/transition.go): the install does not
		// go on until the host boots its disk.
		installing.Status, installing.Reason = metav1.ConditionTrue, bootstrapv1.InstallationPendingUserActionReason
		installing.Message = detail + ". Make the host boot its disk, then power-cycle it (kubectl annotate baremetalhost <name> reboot.metal3.io=): " +
			"with a live ISO the virtual CD stays attached, so on UEFI hosts the bare-metal operator must boot it once only " +
			"(LIVE_ISO_FORCE_PERSISTENT_BOOT_DEVICE=Never, as OpenShift's cluster-baremetal-operator runs it), and a legacy BIOS must boot the disk before the CD"
	case models.HostStatusInstalled, models.HostStatusAddedToExistingCluster:
		installing.Reason = bootstrapv1.InstalledReason
		installed.Status, installed.Reason = metav1.ConditionTrue, bootstrapv1.InstalledReason
	case models.HostStatusError, models.HostStatusPreparingFailed, models.HostStatusCancelled:
		installing.Reason = bootstrapv1.InstallationFailedReason
		installed.Reason = bootstrapv1.InstallationFailedReason
	}
	conditions.Set(c, installing)
	conditions.Set(c, installed)
}

// setJoined reports a config whose Machine is a Node of the cluster: its data Secret is the
// Machine's, and the steps that are not done yet in this status (it was lost in a clusterctl move,
// which does not carry status) are done.
func setJoined(c *bootstrapv1.OpenshiftAssistedConfig, m *clusterv1.Machine) {
	c.Status.DataSecretName = ptr.Deref(m.Spec.Bootstrap.DataSecretName, "")
	c.Status.Initialization.DataSecretCreated = ptr.To(true)
	msg := fmt.Sprintf("Machine %s is Node %s of the cluster", m.Name, m.Status.NodeRef.Name)
	for _, t := range stepConditions {
		want := metav1.Condition{Type: t, Status: metav1.ConditionTrue, Reason: bootstrapv1.NodeJoinedReason, Message: msg}
		if t == bootstrapv1.InstallingCondition {
			want.Status = metav1.ConditionFalse
		}
		if cur := conditions.Get(c, t); cur != nil && cur.Status == want.Status {
			continue // the reason and message of the step that completed here stay
		}
		conditions.Set(c, want)
	}
}

// infraEnvImageCondition is the message of the InfraEnv's ImageCreated condition, if any.
func infraEnvImageCondition(ie *aiv1beta1.InfraEnv) string {
	for _, cond := range ie.Status.Conditions {
		if cond.Type == aiv1beta1.ImageCreatedCondition {
			return fmt.Sprintf("%s (%s)", cond.Message, cond.Reason)
		}
	}
	return ""
}

// setSummary sets Ready: the config is ready when its InfraEnv serves the ISO, its bootstrap
// data exists and its Agent is approved. Installing and Installed only report progress, except
// an installation that waits for a person: Ready says so, and Cluster API mirrors it into the
// Machine's BootstrapConfigReady, where `clusterctl describe` shows it.
func setSummary(c *bootstrapv1.OpenshiftAssistedConfig) {
	_ = reconciler.SetReadySummary(c, bootstrapv1.ReadyCondition, bootstrapv1.ReadyReason,
		conditions.ForConditionTypes{
			bootstrapv1.InfraEnvReadyCondition,
			bootstrapv1.DataSecretAvailableCondition,
			bootstrapv1.AgentRegisteredCondition,
			bootstrapv1.AgentApprovedCondition,
		})
	if installing := conditions.Get(c, bootstrapv1.InstallingCondition); installing != nil && installing.Reason == bootstrapv1.InstallationPendingUserActionReason {
		conditions.Set(c, metav1.Condition{Type: bootstrapv1.ReadyCondition, Status: metav1.ConditionFalse,
			Reason: bootstrapv1.InstallationPendingUserActionReason, Message: installing.Message})
	}
}
