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
	"slices"
	"strings"

	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/controlplane/internal/release"
)

// updateStatus computes the control plane's status from what the reconcile observed.
func (r *OpenshiftAssistedControlPlaneReconciler) updateStatus(ctx context.Context, s *scope) {
	oacp := s.oacp
	st := &oacp.Status
	st.Selector = replicasSelector(oacp, s.cluster).String()

	// The replica counts pair with spec.replicas, which leaves the arbiter out; every Machine,
	// the arbiter included, counts in MachinesReady and the scaling conditions.
	var all, total, ready, available, upToDate int32
	var notReady []string
	for _, m := range s.machines {
		if !m.DeletionTimestamp.IsZero() {
			continue
		}
		all++
		if !conditions.IsTrue(m, clusterv1.MachineReadyCondition) {
			notReady = append(notReady, m.Name)
		}
		if isArbiter(m) {
			continue
		}
		total++
		if conditions.IsTrue(m, clusterv1.MachineReadyCondition) {
			ready++
		}
		if conditions.IsTrue(m, clusterv1.MachineAvailableCondition) {
			available++
		}
		if conditions.IsTrue(m, clusterv1.MachineUpToDateCondition) {
			upToDate++
		}
	}
	st.Replicas, st.ReadyReplicas, st.AvailableReplicas, st.UpToDateReplicas = ptr.To(total), ptr.To(ready), ptr.To(available), ptr.To(upToDate)

	if st.DistributionVersion != "" && s.deleting == nil {
		if st.DistributionVersion == release.Version(oacp.Spec.DistributionVersion) && s.specKubeVersion != "" {
			st.Version = s.specKubeVersion
		} else if info, err := r.Release.Read(ctx, s.releaseImage(st.DistributionVersion), r.releaseAccess(oacp)); err == nil {
			st.Version = info.KubernetesVersion
		} else {
			ctrl.LoggerFrom(ctx).Info("Cannot resolve the running release image", "error", release.LogMessage(err))
		}
	}

	setDeletingCondition(s)
	if s.deleting != nil {
		return
	}
	before := conditionCopy(oacp, controlplanev1.AvailableCondition)
	setAvailableConditions(s)
	if after := conditions.Get(oacp, controlplanev1.AvailableCondition); after.Reason == controlplanev1.InstallSpecRejectedReason && before.Message != after.Message {
		r.Recorder.Eventf(oacp, s.aci, corev1.EventTypeWarning, controlplanev1.InstallSpecRejectedReason, "Install", after.Message)
	}
	setMachinesReadyCondition(s, all, notReady)
	setScalingConditions(s, all)
	setEtcdCondition(s)
	setRollingOutCondition(s)
	setUpgradingCondition(s)
	before = conditionCopy(oacp, controlplanev1.ReleaseImageResolvedCondition)
	setReleaseCondition(s)
	// A release that cannot be read is told once per cause, as a Warning event.
	if after := conditions.Get(oacp, controlplanev1.ReleaseImageResolvedCondition); after != nil && after.Status == metav1.ConditionFalse &&
		(before.Status != metav1.ConditionFalse || before.Message != after.Message) {
		r.Recorder.Eventf(oacp, nil, corev1.EventTypeWarning, after.Reason, "ReadReleaseImage", after.Message)
	}
}

func setDeletingCondition(s *scope) {
	if s.deleting == nil {
		conditions.Set(s.oacp, metav1.Condition{Type: controlplanev1.DeletingCondition, Status: metav1.ConditionFalse,
			Reason: clusterv1.NotDeletingReason})
		return
	}
	conditions.Set(s.oacp, metav1.Condition{Type: controlplanev1.DeletingCondition, Status: metav1.ConditionTrue,
		Reason: s.deleting.reason, Message: s.deleting.message})
	conditions.Set(s.oacp, metav1.Condition{Type: controlplanev1.AvailableCondition, Status: metav1.ConditionFalse,
		Reason: clusterv1.DeletingReason, Message: "The control plane is being deleted"})
}

// installProgress describes the AgentClusterInstall's state in words.
func installProgress(s *scope) string {
	aci := s.aci
	state := aci.Status.DebugInfo.State
	if state == "" {
		state = "not reported yet"
	}
	msg := fmt.Sprintf("assisted-service reports the installation %s", state)
	if aci.Status.DebugInfo.StateInfo != "" {
		msg += fmt.Sprintf(" (%s)", aci.Status.DebugInfo.StateInfo)
	}
	if p := aci.Status.Progress.TotalPercentage; p > 0 {
		msg += fmt.Sprintf(", %d%% done", p)
	}
	msg += fmt.Sprintf("; control-plane agents: %d of %d ready", aci.Status.ControlPlaneAgentsReady, aci.Spec.ProvisionRequirements.ControlPlaneAgents)
	if w := aci.Spec.ProvisionRequirements.WorkerAgents; w > 0 {
		msg += fmt.Sprintf("; worker agents: %d of %d ready", aci.Status.WorkerAgentsReady, w)
	}
	return msg
}

func setAvailableConditions(s *scope) {
	oacp := s.oacp
	initialized := ptr.Deref(oacp.Status.Initialization.ControlPlaneInitialized, false)
	switch {
	case s.kubeconfigWritten || (initialized && s.aci == nil):
		conditions.Set(oacp, metav1.Condition{Type: controlplanev1.KubeconfigAvailableCondition, Status: metav1.ConditionTrue,
			Reason: controlplanev1.KubeconfigAvailableReason})
		fallthrough
	case initialized && s.installed() && !s.kubeconfigChecked:
		// Or the reconcile stopped before the kubeconfig step (a conflict writing the
		// AgentClusterInstall, say): the installed cluster stays Available, and
		// KubeconfigAvailable says what the last reconcile that reached that step found.
		conditions.Set(oacp, metav1.Condition{Type: controlplanev1.AvailableCondition, Status: metav1.ConditionTrue,
			Reason: controlplanev1.InstalledReason, Message: ""})
		return
	case s.aci == nil:
		conditions.Set(oacp, metav1.Condition{Type: controlplanev1.AvailableCondition, Status: metav1.ConditionFalse,
			Reason: controlplanev1.WaitingForClusterReason, Message: "Waiting for the AgentClusterInstall to be created"})
	case s.installed():
		conditions.Set(oacp, metav1.Condition{Type: controlplanev1.AvailableCondition, Status: metav1.ConditionFalse,
			Reason:  controlplanev1.KubeconfigNotAvailableReason,
			Message: "assisted-service reports the cluster installed; waiting for the admin kubeconfig Secret named in the AgentClusterInstall's spec.clusterMetadata"})
	case specNotSynced(s) != nil:
		c := specNotSynced(s)
		conditions.Set(oacp, metav1.Condition{Type: controlplanev1.AvailableCondition, Status: metav1.ConditionFalse,
			Reason: controlplanev1.InstallSpecRejectedReason,
			Message: fmt.Sprintf("assisted-service cannot apply AgentClusterInstall %s (SpecSynced %s): %s. The AgentClusterInstall is written from spec.config and the Cluster's networks: correct them",
				s.aci.Name, c.Reason, c.Message)})
	case failedMessage(s) != "":
		conditions.Set(oacp, metav1.Condition{Type: controlplanev1.AvailableCondition, Status: metav1.ConditionFalse,
			Reason: controlplanev1.InstallFailedReason, Message: "The installation failed: " + failedMessage(s) + "; " + installProgress(s)})
	default:
		conditions.Set(oacp, metav1.Condition{Type: controlplanev1.AvailableCondition, Status: metav1.ConditionFalse,
			Reason: controlplanev1.InstallingReason, Message: strings.ToUpper(installProgress(s)[:1]) + installProgress(s)[1:]})
	}
	conditions.Set(oacp, metav1.Condition{Type: controlplanev1.KubeconfigAvailableCondition, Status: metav1.ConditionFalse,
		Reason: controlplanev1.KubeconfigNotAvailableReason, Message: "The kubeconfig Secret is written once assisted-service reports the cluster installed"})
}

// specNotSynced returns the AgentClusterInstall's SpecSynced condition when assisted-service
// reports that it cannot apply the spec (InputError: the spec is invalid; BackendError: its
// backend failed), nil otherwise.
func specNotSynced(s *scope) *hivev1.ClusterInstallCondition {
	for i, c := range s.aci.Status.Conditions {
		if c.Type == hiveextv1beta1.ClusterSpecSyncedCondition && c.Status == corev1.ConditionFalse {
			return &s.aci.Status.Conditions[i]
		}
	}
	return nil
}

func failedMessage(s *scope) string {
	for _, c := range s.aci.Status.Conditions {
		if c.Type == hivev1.ClusterInstallFailed && c.Status == "True" {
			return c.Message
		}
	}
	return ""
}

func setMachinesReadyCondition(s *scope, total int32, notReady []string) {
	switch {
	case total == 0:
		conditions.Set(s.oacp, metav1.Condition{Type: controlplanev1.MachinesReadyCondition, Status: metav1.ConditionFalse,
			Reason: controlplanev1.NoMachinesReason, Message: "No control-plane Machines yet"})
	case len(notReady) == 0:
		conditions.Set(s.oacp, metav1.Condition{Type: controlplanev1.MachinesReadyCondition, Status: metav1.ConditionTrue,
			Reason: controlplanev1.MachinesReadyReason})
	default:
		conditions.Set(s.oacp, metav1.Condition{Type: controlplanev1.MachinesReadyCondition, Status: metav1.ConditionFalse,
			Reason:  controlplanev1.MachinesNotReadyReason,
			Message: fmt.Sprintf("%d of %d control-plane Machines are not ready: %s", len(notReady), total, strings.Join(notReady, ", "))})
	}
}

func setScalingConditions(s *scope, total int32) {
	want := wantMachines(s.oacp)
	if total < want {
		conditions.Set(s.oacp, metav1.Condition{Type: controlplanev1.ScalingUpCondition, Status: metav1.ConditionTrue,
			Reason: controlplanev1.ScalingUpReason, Message: fmt.Sprintf("Scaling up from %d to %d control-plane Machines", total, want)})
	} else {
		conditions.Set(s.oacp, metav1.Condition{Type: controlplanev1.ScalingUpCondition, Status: metav1.ConditionFalse,
			Reason: controlplanev1.NotScalingReason})
	}
	deleting := 0
	for _, m := range s.machines {
		if !m.DeletionTimestamp.IsZero() {
			deleting++
		}
	}
	switch {
	case s.scaleDownBlocked != "":
		conditions.Set(s.oacp, metav1.Condition{Type: controlplanev1.ScalingDownCondition, Status: metav1.ConditionTrue,
			Reason: controlplanev1.ScaleDownBlockedReason, Message: scaleDownBlockedMessage(s, s.scaleDownBlocked)})
	case s.etcd.hookBlocked != "":
		conditions.Set(s.oacp, metav1.Condition{Type: controlplanev1.ScalingDownCondition, Status: metav1.ConditionTrue,
			Reason: controlplanev1.ScaleDownBlockedReason, Message: s.etcd.hookBlocked})
	case total > want || deleting > 0:
		conditions.Set(s.oacp, metav1.Condition{Type: controlplanev1.ScalingDownCondition, Status: metav1.ConditionTrue,
			Reason:  controlplanev1.ScalingDownReason,
			Message: fmt.Sprintf("Scaling down from %d to %d control-plane Machines, one at a time (%d being deleted)", total, want, deleting)})
	default:
		conditions.Set(s.oacp, metav1.Condition{Type: controlplanev1.ScalingDownCondition, Status: metav1.ConditionFalse,
			Reason: controlplanev1.NotScalingReason})
	}
}

// scaleDownBlockedMessage is the ScalingDown message of a scale down that waits because of why.
func scaleDownBlockedMessage(s *scope, why string) string {
	total := 0
	for _, m := range s.machines {
		if m.DeletionTimestamp.IsZero() {
			total++
		}
	}
	return fmt.Sprintf("Scaling down from %d to %d control-plane Machines is blocked: %s", total, wantMachines(s.oacp), why)
}

// setEtcdCondition reports the health of the installed cluster's etcd, as KubeadmControlPlane's
// EtcdClusterHealthy condition does.
func setEtcdCondition(s *scope) {
	cond := metav1.Condition{Type: controlplanev1.EtcdClusterHealthyCondition}
	switch {
	case !s.etcd.loaded:
		cond.Status, cond.Reason = metav1.ConditionUnknown, controlplanev1.EtcdClusterNotInstalledReason
		cond.Message = "etcd is checked once the cluster is installed and its control-plane nodes have joined"
		if c := conditions.Get(s.oacp, controlplanev1.EtcdClusterHealthyCondition); c != nil && s.kubeconfigWritten {
			return // not read in this reconcile: keep the last observation
		}
	case s.etcd.err != nil:
		cond.Status, cond.Reason = metav1.ConditionUnknown, controlplanev1.EtcdClusterHealthUnknownReason
		cond.Message = fmt.Sprintf("Cannot read the etcd members (retrying): %v", s.etcd.err)
	case s.etcd.machineAPI != "":
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, controlplanev1.EtcdMemberNotAddedReason, s.etcd.machineAPI
	case s.etcd.cluster.Problem() != "":
		cond.Status, cond.Reason = metav1.ConditionFalse, controlplanev1.EtcdClusterUnhealthyReason
		cond.Message = fmt.Sprintf("%s; no control-plane Machine is removed until every member is healthy again", strings.ToUpper(s.etcd.cluster.Problem()[:1])+s.etcd.cluster.Problem()[1:])
	default:
		cond.Status, cond.Reason = metav1.ConditionTrue, controlplanev1.EtcdClusterHealthyReason
	}
	conditions.Set(s.oacp, cond)
}

// setRollingOutCondition reports the replacement of the Machines that no longer match the spec.
func setRollingOutCondition(s *scope) {
	if s.outdated == nil {
		return // the reconcile stopped before looking
	}
	names := slices.Sorted(maps.Keys(s.outdated))
	switch {
	case len(names) == 0:
		conditions.Set(s.oacp, metav1.Condition{Type: controlplanev1.RollingOutCondition, Status: metav1.ConditionFalse,
			Reason: controlplanev1.NotRollingOutReason})
	case s.rolloutBlocked != "":
		conditions.Set(s.oacp, metav1.Condition{Type: controlplanev1.RollingOutCondition, Status: metav1.ConditionTrue,
			Reason:  controlplanev1.RolloutBlockedReason,
			Message: fmt.Sprintf("Replacing %d control-plane Machines (%s) is blocked: %s", len(names), strings.Join(names, ", "), s.rolloutBlocked)})
	default:
		conditions.Set(s.oacp, metav1.Condition{Type: controlplanev1.RollingOutCondition, Status: metav1.ConditionTrue,
			Reason:  controlplanev1.RollingOutReason,
			Message: fmt.Sprintf("Replacing %d control-plane Machines one at a time, a new one first: %s", len(names), strings.Join(names, ", "))})
	}
}

func setUpgradingCondition(s *scope) {
	u := s.upgrade
	switch {
	case u.refused != "":
		conditions.Set(s.oacp, metav1.Condition{Type: controlplanev1.UpgradingCondition, Status: metav1.ConditionFalse,
			Reason: controlplanev1.UpgradeRefusedReason, Message: u.refused})
	case u.notAccepted != "":
		conditions.Set(s.oacp, metav1.Condition{Type: controlplanev1.UpgradingCondition, Status: metav1.ConditionFalse,
			Reason: controlplanev1.UpgradeNotAcceptedReason, Message: notAcceptedMessage(u.from, u.to, u.notAccepted)})
	case u.inProgress:
		msg := fmt.Sprintf("Upgrading OpenShift from %s to %s", u.from, u.to)
		if u.progress != "" {
			msg += ": " + u.progress
		}
		conditions.Set(s.oacp, metav1.Condition{Type: controlplanev1.UpgradingCondition, Status: metav1.ConditionTrue,
			Reason: controlplanev1.UpgradingReason, Message: msg})
	default:
		conditions.Set(s.oacp, metav1.Condition{Type: controlplanev1.UpgradingCondition, Status: metav1.ConditionFalse,
			Reason: controlplanev1.NotUpgradingReason})
	}
}

// conditionCopy is a copy of oacp's condition t (the zero Condition when it has none), to compare
// with what the status computation sets: conditions.Set changes the condition in place.
func conditionCopy(oacp *controlplanev1.OpenshiftAssistedControlPlane, t string) metav1.Condition {
	if c := conditions.Get(oacp, t); c != nil {
		return *c
	}
	return metav1.Condition{}
}

// notAcceptedMessage is the Upgrading message of an upgrade (between the versions from and to)
// that the cluster-version operator does not accept, for why.
func notAcceptedMessage(from, to, why string) string {
	return fmt.Sprintf("OpenShift %s is not upgraded to %s: %s", from, to, why)
}

// isUpgradingReported tells whether the Upgrading condition already says message with reason (so
// its event is not repeated).
func isUpgradingReported(oacp *controlplanev1.OpenshiftAssistedControlPlane, reason, message string) bool {
	c := conditions.Get(oacp, controlplanev1.UpgradingCondition)
	return c != nil && c.Reason == reason && c.Message == message
}

func setReleaseCondition(s *scope) {
	if s.releaseErr == nil && s.specKubeVersion == "" {
		return // the reconcile stopped before reading the release image
	}
	image := s.releaseImage(s.oacp.Spec.DistributionVersion)
	// The messages never quote a registry's answer (release.Summary): the condition is read by
	// whoever may read the control plane; the manager's log has the full error.
	var notAllowed *release.RegistryNotAllowedError
	var archs *architecturesError
	var mismatch *versionMismatchError
	switch {
	case errors.As(s.releaseErr, &mismatch):
		conditions.Set(s.oacp, metav1.Condition{Type: controlplanev1.ReleaseImageResolvedCondition, Status: metav1.ConditionFalse,
			Reason: controlplanev1.VersionMismatchReason,
			Message: fmt.Sprintf("Release image %s (%s) carries Kubernetes %s, but spec.version is %s: set spec.version to v%s or leave it unset, or set distributionVersion to the OpenShift version whose release carries Kubernetes %s (in a ClusterClass, the openshiftVersions variable maps the Cluster's spec.topology.version to distributionVersion)",
				image, s.specRelease.Digest, mismatch.release, mismatch.version, strings.TrimPrefix(mismatch.release, "v"), mismatch.version)})
		return
	case errors.As(s.releaseErr, &archs):
		conditions.Set(s.oacp, metav1.Condition{Type: controlplanev1.ReleaseImageResolvedCondition, Status: metav1.ConditionFalse,
			Reason: controlplanev1.ReleaseImageArchitectureNotInReleaseReason,
			Message: fmt.Sprintf("Release image %s is not used: %s, which the cluster's machine configs ask for (the control plane's cpuArchitecture and its MachineDeployments' OpenshiftAssistedConfigTemplates): use a release (or %s repository) that serves them, or change those cpuArchitectures",
				image, archs.Error(), controlplanev1.ReleaseImageRepositoryAnnotation)})
		return
	case errors.As(s.releaseErr, &notAllowed):
		conditions.Set(s.oacp, metav1.Condition{Type: controlplanev1.ReleaseImageResolvedCondition, Status: metav1.ConditionFalse,
			Reason: controlplanev1.ReleaseImageRegistryNotAllowedReason,
			Message: fmt.Sprintf("Release image %s (repository from the %s annotation, or the default) is not read: %s",
				image, controlplanev1.ReleaseImageRepositoryAnnotation, release.Summary(s.releaseErr))})
		return
	case s.releaseErr != nil:
		// Where it was read: a cluster with mirrors reads it through them (the summary names the
		// registry that failed); else from its repository, which a mirror can replace.
		where := fmt.Sprintf("retrying; set the %s annotation for a mirror", controlplanev1.ReleaseImageRepositoryAnnotation)
		if ref := s.oacp.Spec.Config.ImageRegistryRef; ref != nil {
			where = fmt.Sprintf("retrying; read through the mirrors of ConfigMap %s, which spec.config.imageRegistryRef names", ref.Name)
		}
		conditions.Set(s.oacp, metav1.Condition{Type: controlplanev1.ReleaseImageResolvedCondition, Status: metav1.ConditionFalse,
			Reason:  controlplanev1.ReleaseImageNotResolvedReason,
			Message: fmt.Sprintf("Cannot read the Kubernetes version of release image %s (%s): %s", image, where, release.Summary(s.releaseErr))})
		return
	}
	// Healthy: no message. What was resolved shows where it is used: the ClusterImageSet pins the
	// release by digest, and the Machines carry its Kubernetes version.
	conditions.Set(s.oacp, metav1.Condition{Type: controlplanev1.ReleaseImageResolvedCondition, Status: metav1.ConditionTrue,
		Reason: controlplanev1.ReleaseImageResolvedReason})
}
