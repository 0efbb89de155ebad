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

package v1alpha4

import clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

const (
	// OpenshiftAssistedControlPlaneFinalizer lets the controller delete the Machines, the
	// ClusterDeployment, the AgentClusterInstall and the ClusterImageSet before the control plane
	// goes away.
	OpenshiftAssistedControlPlaneFinalizer = "openshiftassistedcontrolplane.controlplane.cluster.x-k8s.io"
	// UpstreamOpenshiftAssistedControlPlaneFinalizer is the finalizer of
	// openshift-assisted/cluster-api-provider-openshift-assisted on its control planes. The
	// provider replaces it with OpenshiftAssistedControlPlaneFinalizer, and removes it from a
	// control plane being deleted, so that a control plane created before a switch is not stuck.
	UpstreamOpenshiftAssistedControlPlaneFinalizer = "openshiftassistedcontrolplane.controlplane.cluster.x-k8s.io/deprovision"

	// ReleaseImageRepositoryAnnotation overrides the repository of the OpenShift release image
	// (default quay.io/openshift-release-dev/ocp-release), for mirrors and disconnected installs.
	// The image is <repository>:<distributionVersion>-<architecture>.
	ReleaseImageRepositoryAnnotation = "controlplane.cluster.x-k8s.io/release-image-repository"
	// UpstreamReleaseImageRepositoryAnnotation is the upstream provider's key for the same
	// override (cluster-api-provider-openshift-assisted's release.go), honoured when
	// ReleaseImageRepositoryAnnotation is not set; the webhook refuses the two with different values.
	UpstreamReleaseImageRepositoryAnnotation = "cluster.x-k8s.io/release-image-repository-override"

	// ImageSetNamespaceLabel records, on the cluster-scoped ClusterImageSet, the namespace of the
	// control plane it belongs to.
	ImageSetNamespaceLabel = "controlplane.cluster.x-k8s.io/namespace"
	// ImageSetControlPlaneLabel records, on the cluster-scoped ClusterImageSet, the name of the
	// control plane it belongs to.
	ImageSetControlPlaneLabel = "controlplane.cluster.x-k8s.io/name"

	// EtcdMemberHookAnnotation is the pre-terminate hook every control-plane Machine carries:
	// Cluster API's Machine controller drains the node, then waits before it deletes the host
	// until the control plane has moved etcd leadership away from the node's member and removed
	// the member, as KubeadmControlPlane's kcp-cleanup hook does.
	EtcdMemberHookAnnotation = clusterv1.PreTerminateDeleteHookAnnotationPrefix + "/openshift-assisted-etcd"

	// RemediationInProgressAnnotation is the annotation that, on the control plane, records the remediation under way
	// (JSON: machine, timestamp, retryCount) until its replacement Machine is created; the same
	// key as KubeadmControlPlane's.
	RemediationInProgressAnnotation = "controlplane.cluster.x-k8s.io/remediation-in-progress"
	// RemediationForAnnotation is the annotation that, on a Machine created to replace an unhealthy one, records that
	// remediation (the same JSON), to count retries; the same key as KubeadmControlPlane's.
	RemediationForAnnotation = "controlplane.cluster.x-k8s.io/remediation-for"
	// EtcdUnsafeScalingAnnotation records, on the control plane, when it set cluster-etcd-operator's
	// unsafe scaling override in the workload cluster (so that a member can join an etcd that is
	// not fault tolerant, as after a dead member of three was removed); the control plane removes
	// the override, and this annotation, once three healthy members vote again. An override the
	// control plane did not set is never touched.
	EtcdUnsafeScalingAnnotation = "controlplane.cluster.x-k8s.io/etcd-unsafe-scaling"

	// ArbiterMachineLabel marks the arbiter Machine of two-node OpenShift with an arbiter
	// (spec.arbiter): a control-plane Machine (it carries cluster.x-k8s.io/control-plane too, and
	// its node runs an etcd member) whose host the bootstrap provider installs with
	// assisted-service's "arbiter" role instead of "master". The control plane sets it; the
	// bootstrap provider reads it.
	ArbiterMachineLabel = "controlplane.cluster.x-k8s.io/arbiter"

	// FencingMachineLabel marks the control-plane Machines of two-node OpenShift with fencing
	// (spec.fencing): the bootstrap provider gives each one's host the fencing credentials of its
	// BareMetalHost (Agent spec.fencingCredentialsSecretRef). The control plane sets it; the
	// bootstrap provider reads it.
	FencingMachineLabel = "controlplane.cluster.x-k8s.io/fencing"
)

// Condition types of the OpenshiftAssistedControlPlane.
const (
	// AvailableCondition is true when the cluster is installed and its kubeconfig is available.
	AvailableCondition = clusterv1.AvailableCondition
	// KubeconfigAvailableCondition is true when the <cluster>-kubeconfig Secret is written.
	KubeconfigAvailableCondition = "KubeconfigAvailable"
	// MachinesReadyCondition summarizes the Ready condition of the control-plane Machines.
	MachinesReadyCondition = "MachinesReady"
	// ScalingUpCondition is true while control-plane Machines are being added.
	ScalingUpCondition = clusterv1.ScalingUpCondition
	// ScalingDownCondition is true while control-plane Machines are being removed.
	ScalingDownCondition = clusterv1.ScalingDownCondition
	// UpgradingCondition is true while the workload cluster moves to a new distributionVersion,
	// and false with reason UpgradeRefused when the requested version cannot be reached.
	UpgradingCondition = "Upgrading"
	// ReleaseImageResolvedCondition is true when the Kubernetes version of the release image is known.
	ReleaseImageResolvedCondition = "ReleaseImageResolved"
	// DeletingCondition reports the progress of the deletion.
	DeletingCondition = clusterv1.DeletingCondition
	// PausedCondition is true when the control plane or its Cluster is paused.
	PausedCondition = clusterv1.PausedCondition
	// EtcdClusterHealthyCondition is true when every etcd member of the installed cluster is a
	// healthy voting member, as KubeadmControlPlane's condition of the same name.
	EtcdClusterHealthyCondition = "EtcdClusterHealthy"
	// RollingOutCondition is true while control-plane Machines that no longer match the spec
	// are being replaced, as KubeadmControlPlane's condition of the same name.
	RollingOutCondition = clusterv1.RollingOutCondition
)

// Condition reasons of the OpenshiftAssistedControlPlane.
const (
	WaitingForClusterReason = "WaitingForCluster"
	InstallingReason        = "Installing"
	InstallFailedReason     = "InstallFailed"
	// InstallSpecRejectedReason: assisted-service cannot apply the AgentClusterInstall's spec
	// (its SpecSynced condition is False with InputError or BackendError); the message is its.
	InstallSpecRejectedReason = "InstallSpecRejected"
	// InvalidSpecReason: the AgentClusterInstall cannot be written from the spec, the Cluster's
	// networks or the install-config override annotation; the message says which and what to fix.
	InvalidSpecReason = "InvalidSpec"
	// ImageRegistryInvalidReason: the ConfigMap that spec.config.imageRegistryRef names does not
	// exist or cannot be used (no registries.conf, invalid TOML, no mirror, a CA that is no PEM
	// certificate); the message says which. Nothing is installed until it is fixed.
	ImageRegistryInvalidReason = "ImageRegistryInvalid"
	// NotOwnedReason: a ClusterDeployment or AgentClusterInstall of the Cluster's name exists and
	// belongs to someone else; the control plane does not take it over.
	NotOwnedReason = "NotOwned"
	// ArbiterNotSupportedReason (on Available): spec.arbiter is set but the hub's
	// assisted-service (its AgentClusterInstall CRD) has no arbiter support.
	ArbiterNotSupportedReason = "ArbiterNotSupported"
	// FencingNotSupportedReason (on Available): spec.fencing is set but the hub's assisted-service
	// (its Agent CRD) has no fencing support (spec.fencingCredentialsSecretRef).
	FencingNotSupportedReason      = "FencingNotSupported"
	InstalledReason                = "Installed"
	KubeconfigNotAvailableReason   = "KubeconfigNotAvailable"
	KubeconfigAvailableReason      = "KubeconfigAvailable"
	ScalingUpReason                = "ScalingUp"
	ScalingDownReason              = "ScalingDown"
	ScaleDownBlockedReason         = "ScaleDownBlocked"
	EtcdClusterHealthyReason       = "Healthy"
	EtcdClusterUnhealthyReason     = "Unhealthy"
	EtcdClusterHealthUnknownReason = "HealthUnknown"
	EtcdClusterNotInstalledReason  = "NotInstalled"
	// EtcdMemberNotAddedReason: cluster-etcd-operator does not add the member of a control-plane
	// Machine's node (it runs with Machine API and no machine.openshift.io Machine references the
	// node); the message says what to do.
	EtcdMemberNotAddedReason = "MemberNotAdded"
	// Reasons of the OwnerRemediated condition of a control-plane Machine (as KCP's).
	RemediationDeferredReason        = "RemediationDeferred"
	MachineCannotBeRemediatedReason  = "CannotBeRemediated"
	RemediationMachineDeletingReason = "MachineDeleting"
	RemediationInternalErrorReason   = "RemediationInternalError"
	// Reasons of the RollingOut condition.
	RollingOutReason     = clusterv1.RollingOutReason
	NotRollingOutReason  = clusterv1.NotRollingOutReason
	RolloutBlockedReason = "RolloutBlocked"
	NotScalingReason     = "NotScaling"
	UpgradeRefusedReason = "UpgradeRefused"
	// UpgradeNotAcceptedReason: the workload cluster's cluster-version operator does not take the
	// update asked of it (its Invalid or ReleaseAccepted condition says why).
	UpgradeNotAcceptedReason       = "UpgradeNotAccepted"
	UpgradingReason                = "Upgrading"
	NotUpgradingReason             = "NotUpgrading"
	ReleaseImageResolvedReason     = "Resolved"
	ReleaseImageNotResolvedReason  = "NotResolved"
	DeletingMachinesReason         = "DeletingMachines"
	DeletingInstallResourcesReason = "DeletingInstallResources"
	MachinesReadyReason            = "Ready"
	MachinesNotReadyReason         = "NotReady"
	NoMachinesReason               = "NoMachines"
)

// ReleaseImageRegistryNotAllowedReason is the reason of a False ReleaseImageResolved condition when
// the release image's registry is not one the control-plane manager may contact (its
// --allowed-release-registries flag): the image is not read.
const ReleaseImageRegistryNotAllowedReason = "RegistryNotAllowed"

// ReleaseImageArchitectureNotInReleaseReason is the reason of a False ReleaseImageResolved
// condition when the release of a cluster whose machine configs name several CPU architectures
// (OpenShift's multi release, an image index) has no image for one of them.
const ReleaseImageArchitectureNotInReleaseReason = "ArchitectureNotInRelease"

// VersionMismatchReason is the reason of a False ReleaseImageResolved condition when spec.version
// is not the Kubernetes version that the release of spec.distributionVersion carries; nothing is
// installed (Available False) or upgraded (Upgrading False, UpgradeRefused) until they agree.
const VersionMismatchReason = "VersionMismatch"
