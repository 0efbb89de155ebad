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

package v1alpha2

// Finalizer and labels of the bootstrap provider.
const (
	// ConfigFinalizer lets the controller release the config's Agent and delete its InfraEnv
	// before the config goes away.
	ConfigFinalizer = "openshiftassistedconfig.bootstrap.cluster.x-k8s.io"
	// UpstreamConfigFinalizer is the finalizer of
	// openshift-assisted/cluster-api-provider-openshift-assisted on its configs. The provider
	// replaces it with ConfigFinalizer, and removes it from a config being deleted, so that a
	// config created before a switch is not stuck.
	UpstreamConfigFinalizer = "openshiftassistedconfig.bootstrap.cluster.x-k8s.io/deprovision"

	// AgentConfigLabel is set on the Agent recognized as a config's host; its value is the
	// config's name (in the Agent's namespace). It is removed when the Agent is released. The
	// infrastructure provider reads it too, to claim for a Machine only its own config's Agent.
	AgentConfigLabel = "bootstrap.cluster.x-k8s.io/openshiftassistedconfig"

	// ConfigKind is the kind of a Machine's bootstrap config (spec.bootstrap.configRef.kind)
	// when this provider prepares its host; with GroupVersion.Group it is how the
	// infrastructure provider recognizes such a Machine.
	ConfigKind = "OpenshiftAssistedConfig"

	// BootstrapDataFormatIgnition is the format (the "format" key of the bootstrap data Secret,
	// as the Cluster API bootstrap contract has it) of the data this provider writes: an
	// Ignition config. The infrastructure provider accepts only this format.
	BootstrapDataFormatIgnition = "ignition"
)

// Condition types of an OpenshiftAssistedConfig, in the order a host goes through them.
const (
	// ReadyCondition summarizes the other conditions.
	ReadyCondition = "Ready"
	// InfraEnvReadyCondition is true when the config's InfraEnv reports its discovery ISO URL.
	// While false, its reason says what the config waits for (Machine, Cluster infrastructure,
	// ClusterDeployment, pull secret, a running installation, the ISO).
	InfraEnvReadyCondition = "InfraEnvReady"
	// DataSecretAvailableCondition is true when the bootstrap data Secret exists.
	DataSecretAvailableCondition = "DataSecretAvailable"
	// AgentRegisteredCondition is true when the Agent of the Machine's host is recognized.
	AgentRegisteredCondition = "AgentRegistered"
	// AgentApprovedCondition is true when that Agent has its role, hostname and disk, and is approved.
	AgentApprovedCondition = "AgentApproved"
	// InstallingCondition is true while assisted-service installs the host.
	InstallingCondition = "Installing"
	// InstalledCondition is true when assisted-service reports the host installed.
	InstalledCondition = "Installed"
)

// Condition reasons of an OpenshiftAssistedConfig.
const (
	WaitingForMachineReason                = "WaitingForMachine"
	WaitingForClusterReason                = "WaitingForCluster"
	WaitingForClusterInfrastructureReason  = "WaitingForClusterInfrastructure"
	WaitingForClusterDeploymentReason      = "WaitingForClusterDeployment"
	WaitingForPullSecretReason             = "WaitingForPullSecret"
	WaitingForInstallationToCompleteReason = "WaitingForInstallationToComplete"
	WaitingForISOReason                    = "WaitingForISO"
	InfraEnvFailedReason                   = "InfraEnvFailed"
	ISOAvailableReason                     = "ISOAvailable"

	WaitingForInfraEnvReason      = "WaitingForInfraEnv"
	WaitingForMetal3MachineReason = "WaitingForMetal3Machine"
	InvalidIgnitionOverrideReason = "InvalidIgnitionOverride"
	// DiscoveryIgnitionUnavailableReason: the host boots an RHCOS disk image (the image-based
	// flow), whose bootstrap data carries the InfraEnv's discovery ignition, and assisted-service
	// did not serve it; the message says why (unreachable, certificate, token).
	DiscoveryIgnitionUnavailableReason = "DiscoveryIgnitionUnavailable"
	DataSecretCreatedReason            = "DataSecretCreated"

	WaitingForDataSecretReason    = "WaitingForDataSecret"
	WaitingForBareMetalHostReason = "WaitingForBareMetalHost"
	WaitingForAgentReason         = "WaitingForAgent"
	AmbiguousAgentsReason         = "AmbiguousAgents"
	AgentRegisteredReason         = "AgentRegistered"
	// HostNotSupportedReason: the BareMetalHost CAPM3 chose cannot install from the discovery ISO
	// (a BMC driver without virtual media, or legacy BIOS without the annotation that says its
	// disk boots first). Its Agent is not approved, so nothing is installed on it.
	HostNotSupportedReason = "HostNotSupported"
	// BareMetalHostTakenReason: the BareMetalHost that CAPM3 associated with the Machine's
	// Metal3Machine is claimed by another consumer: CAPM3 claimed it twice
	// (metal3-io/cluster-api-provider-metal3#1004), and it provisions for the other one.
	BareMetalHostTakenReason = "BareMetalHostTaken"
	// BareMetalHostRefusedReason: the Metal3Machine's metal3.io/BareMetalHost annotation names a
	// host that is never read: one of another namespace (CAPM3 associates only hosts of the
	// Metal3Machine's own), or a value that is not <namespace>/<name>.
	BareMetalHostRefusedReason = "BareMetalHostRefused"
	// FencingCredentialsUnavailableReason: the Machine belongs to two-node OpenShift with fencing
	// (controlplane.cluster.x-k8s.io/fencing) and its host's fencing credentials cannot be given
	// to its Agent: no BareMetalHost, a BMC address that is not redfish, a BMC credentials Secret
	// that is missing or lacks a key, or a hub whose Agent has no spec.fencingCredentialsSecretRef.
	// Its Agent is not approved, so nothing is installed on it.
	FencingCredentialsUnavailableReason = "FencingCredentialsUnavailable"

	WaitingForAgentRegistrationReason = "WaitingForAgentRegistration"
	AgentApprovedReason               = "AgentApproved"

	WaitingForApprovalReason = "WaitingForApproval"
	NotInstallingReason      = "NotInstalling"
	InstallingReason         = "Installing"
	InstallationFailedReason = "InstallationFailed"
	// InstallationPendingUserActionReason: assisted-service waits for a person, most often because
	// the host booted the discovery ISO again after writing its disk (wrong boot order).
	InstallationPendingUserActionReason = "InstallationPendingUserAction"
	InstalledReason                     = "Installed"
	NotInstalledReason                  = "NotInstalled"
	// NodeJoinedReason: the Machine is a Node of the cluster, so every step is done, whatever
	// became of its Agent (after a clusterctl move, assisted-service on the new hub deletes the
	// Agents it holds no host for).
	NodeJoinedReason = "NodeJoined"

	ReadyReason    = "Ready"
	NotReadyReason = "NotReady"
)
