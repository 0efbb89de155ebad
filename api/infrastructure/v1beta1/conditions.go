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

package v1beta1

import clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

// Finalizers of the infrastructure provider.
const (
	// AgentClusterFinalizer keeps an AgentCluster until the objects it created are gone.
	AgentClusterFinalizer = "agentcluster.capi-provider.agent-install.openshift.io"
	// UpstreamAgentClusterFinalizer is openshift/cluster-api-provider-agent's finalizer on
	// AgentClusters (spelled without a dot after "agentcluster", as upstream does). The provider
	// replaces it with AgentClusterFinalizer, and removes it from an AgentCluster being deleted.
	UpstreamAgentClusterFinalizer = "agentclustercapi-provider.agent-install.openshift.io/deprovision"
	// AgentMachineFinalizer keeps an AgentMachine until its Agent is released.
	AgentMachineFinalizer = "agentmachine.capi-provider.agent-install.openshift.io"
	// UpstreamAgentMachineFinalizer is openshift/cluster-api-provider-agent's finalizer on
	// AgentMachines. The provider replaces it with AgentMachineFinalizer, and removes it from an
	// AgentMachine being deleted once the Agent is released, so that AgentMachines created
	// before a switch from upstream are neither stuck nor deleted without their unbind.
	UpstreamAgentMachineFinalizer = "agentmachine.agent-install.openshift.io/deprovision"
)

// Labels and annotations the infrastructure provider sets or reads. AgentClaimedByLabel is
// beside the AgentMachine type.
const (
	// PreTerminateHookAnnotation is the Machine's pre-terminate hook: Cluster API waits for it to
	// go before deleting the AgentMachine, which gives time to unbind the Agent.
	PreTerminateHookAnnotation = clusterv1.PreTerminateDeleteHookAnnotationPrefix + "/agentmachine"
	// ClaimOwnerAnnotation names the claiming AgentMachine as <namespace>/<name>, for people and
	// to map Agent events back to it.
	ClaimOwnerAnnotation = "capi-provider.agent-install.openshift.io/agentmachine"
	// ChosenAgentAnnotation on an AgentMachine names the Agent (<namespace>/<name>) it claims or
	// is about to claim. It is written, under an optimistic lock of the AgentMachine, before the
	// Agent is claimed, and changed only once that Agent can no longer be claimed by this
	// AgentMachine: two controllers racing on one AgentMachine (a leader hand-over, a lost
	// response) agree on one Agent and never claim a second.
	ChosenAgentAnnotation = "capi-provider.agent-install.openshift.io/agent"
	// PreviousSpecAnnotation holds the Agent fields the claim changed, as JSON, so that they can
	// be restored on release.
	PreviousSpecAnnotation = "capi-provider.agent-install.openshift.io/previous-spec"
	// UnbindRequestedAnnotation records when the controller asked assisted-service to unbind the
	// Agent (RFC 3339), so that waiting for the unbind cannot last forever.
	UnbindRequestedAnnotation = "capi-provider.agent-install.openshift.io/unbind-requested"
	// FailureDomainLabel on an Agent names the failure domain its host is in. A Machine with a
	// failure domain only claims Agents whose label has that value.
	FailureDomainLabel = "capi-provider.agent-install.openshift.io/failure-domain"
	// ArchitectureLabel on a Machine asks for hosts of this CPU architecture (Kubernetes names:
	// amd64, arm64, ppc64le, s390x).
	ArchitectureLabel = "kubernetes.io/arch"
	// AgentClusterLabel is set on the ClusterDeployment and AgentClusterInstall that an
	// AgentCluster created itself (no OpenshiftAssistedControlPlane, no clusterDeploymentRef);
	// its value is the AgentCluster's name.
	AgentClusterLabel = "capi-provider.agent-install.openshift.io/agentcluster"
	// ProviderIDPrefix starts every providerID this provider sets: agent://<agent name>.
	ProviderIDPrefix = "agent://"
)

// Condition types of an AgentCluster.
const (
	// ClusterDeploymentReadyCondition is True once the ClusterDeployment the Agents bind to exists.
	ClusterDeploymentReadyCondition = "ClusterDeploymentReady"
)

// Reasons of an AgentCluster's ClusterDeploymentReady condition.
const (
	WaitingForClusterReason                       = "WaitingForCluster"
	WaitingForControlPlaneClusterDeploymentReason = "WaitingForControlPlaneClusterDeployment"
	WaitingForHostedControlPlaneReason            = "WaitingForHostedControlPlane"
	ClusterDeploymentNotFoundReason               = "ClusterDeploymentNotFound"
	ClusterDeploymentReadyReason                  = "ClusterDeploymentReady"
	WaitingForControlPlaneEndpointReason          = "WaitingForControlPlaneEndpoint"
	DeletingClusterDeploymentReason               = "DeletingClusterDeployment"
	// CrossNamespaceReferenceRefusedReason: clusterDeploymentRef or the ignition endpoint's
	// caCertificateReference names another namespace, and the manager does not allow it
	// (--allow-cross-namespace-references); also a reason of AgentReserved.
	CrossNamespaceReferenceRefusedReason = "CrossNamespaceReferenceRefused"
	// IgnitionEndpointNotUsedReason: spec.ignitionEndpoint is set but the ClusterDeployment was not
	// created by this AgentCluster (a control plane provider manages it and its
	// AgentClusterInstall's ignition endpoint), so the field would do nothing; it is refused.
	IgnitionEndpointNotUsedReason = "IgnitionEndpointNotUsed"
)

// Condition types of an AgentMachine.
const (
	// AgentReservedCondition is True once an Agent is claimed for the Machine; while False its
	// reason says what the claim waits for.
	AgentReservedCondition = "AgentReserved"
	// AgentConnectedCondition mirrors the Agent's Connected condition.
	AgentConnectedCondition = "AgentConnected"
	// AgentSpecSyncedCondition mirrors the Agent's SpecSynced condition.
	AgentSpecSyncedCondition = "AgentSpecSynced"
	// AgentValidatedCondition mirrors the Agent's Validated condition.
	AgentValidatedCondition = "AgentValidated"
	// AgentRequirementsMetCondition mirrors the Agent's RequirementsMet condition.
	AgentRequirementsMetCondition = "AgentRequirementsMet"
	// InstalledCondition mirrors the Agent's Installed condition.
	InstalledCondition = "Installed"
)

// Reasons of an AgentMachine's AgentReserved condition (NodeJoinedReason also of the mirrored
// conditions).
const (
	WaitingForMachineReason               = "WaitingForMachine"
	WaitingForClusterInfrastructureReason = "WaitingForClusterInfrastructure"
	WaitingForBootstrapDataReason         = "WaitingForBootstrapData"
	WaitingForClusterDeploymentReason     = "WaitingForClusterDeployment"
	InvalidBootstrapDataReason            = "InvalidBootstrapData"
	NoSuitableAgentsReason                = "NoSuitableAgents"
	AgentReservedReason                   = "AgentReserved"
	AgentNotFoundReason                   = "AgentNotFound"
	UnbindingReason                       = "Unbinding"
	NoAgentReason                         = "NoAgent"
	// NodeJoinedReason: the Machine is a Node of the cluster and its Agent is gone, as after a
	// clusterctl move.
	NodeJoinedReason = "NodeJoined"
)
