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

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// AgentClaimedByLabel is set on an Agent claimed by an AgentMachine; its value is the
// AgentMachine's UID, which is unique across namespaces. An Agent without it (or upstream's
// UpstreamAgentClaimLabel) is not claimed.
const AgentClaimedByLabel = "capi-provider.agent-install.openshift.io/claimed-by"

// UpstreamAgentClaimLabel is openshift/cluster-api-provider-agent's claim label on an Agent
// ("agentMachineRef"): its value is the claiming AgentMachine's UID in upstream's v1alpha1
// releases, and its name, with its namespace in UpstreamAgentClaimNamespaceAnnotation, in the
// later ones (getAgentMachineRefLabel). An Agent that carries it is claimed: no other
// AgentMachine takes it, and the AgentMachine it names adopts the claim (AgentClaimedByLabel
// replaces it).
const UpstreamAgentClaimLabel = "agentMachineRef"

// UpstreamAgentClaimNamespaceAnnotation is the annotation upstream writes beside its claim label
// (the AgentMachine's namespace); adoption and release remove it.
const UpstreamAgentClaimNamespaceAnnotation = "agentMachineRefNamespace"

// The labels of the ignition token Secret an AgentMachine writes, as
// cluster-api-provider-agent writes them.
const (
	// AssistedWatchLabel makes assisted-service watch the Secret (its manager caches only the
	// Secrets that carry it, and labels a referenced one itself on first read), so that a
	// rotated token reaches it at once.
	AssistedWatchLabel = "agent-install.openshift.io/watch"
	// BackupLabel puts an object in the hub backups of Red Hat Advanced Cluster Management: the
	// token Secrets, the AgentClusters once provisioned and the AgentMachines once bound, as
	// cluster-api-provider-agent labels them.
	BackupLabel = "cluster.open-cluster-management.io/backup"
)

// AgentReference names an assisted-service Agent.
type AgentReference struct {
	// name of the Agent.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name,omitempty"`

	// namespace of the Agent.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace,omitempty"`
}

// The rules on agentLabelSelector check its operators and values; the format of its label keys
// and values, which no CEL rule can check within the cost budget on a third-party type without
// size limits, is checked by the controller (condition AgentReserved False, NoSuitableAgents).

// AgentMachineSpec defines the desired state of AgentMachine.
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.providerID) || size(oldSelf.providerID) == 0 || (has(self.providerID) && self.providerID == oldSelf.providerID)",message="providerID cannot be changed or removed once set"
type AgentMachineSpec struct {
	// agentLabelSelector selects the Agents this Machine may claim: only Agents whose labels
	// match it are considered.
	// +optional
	// +kubebuilder:validation:XValidation:rule="!has(self.matchExpressions) || self.matchExpressions.all(e, e.operator in ['In', 'NotIn', 'Exists', 'DoesNotExist'])",message="matchExpressions: every operator must be In, NotIn, Exists or DoesNotExist"
	// +kubebuilder:validation:XValidation:rule="!has(self.matchExpressions) || self.matchExpressions.all(e, (e.operator in ['In', 'NotIn']) == (has(e.values) && size(e.values) > 0))",message="matchExpressions: an In or NotIn expression needs values, and an Exists or DoesNotExist expression takes none"
	AgentLabelSelector *metav1.LabelSelector `json:"agentLabelSelector,omitempty"`

	// providerID is the identifier of the claimed host, formatted as agent://<agent id>.
	// Set by the controller once an Agent is claimed.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	ProviderID string `json:"providerID,omitempty"`
}

// AgentMachineInitializationStatus provides observations of the AgentMachine initialization process.
// +kubebuilder:validation:MinProperties=1
type AgentMachineInitializationStatus struct {
	// provisioned is true when the host behind this AgentMachine is installed.
	// NOTE: this field is part of the Cluster API contract.
	// +optional
	Provisioned *bool `json:"provisioned,omitempty"`
}

// AgentMachineStatus defines the observed state of AgentMachine.
type AgentMachineStatus struct {
	// conditions represent the observations of the AgentMachine's current state.
	// Known condition types are Ready, AgentReserved, AgentSpecSynced, AgentValidated,
	// AgentRequirementsMet, Installed and Paused.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// initialization provides observations of the AgentMachine initialization process.
	// NOTE: fields in this struct are part of the Cluster API contract.
	// +optional
	Initialization AgentMachineInitializationStatus `json:"initialization,omitempty,omitzero"`

	// ready is true when the host is installed.
	//
	// Deprecated: kept for clients of the v1beta1 contract; use initialization.provisioned.
	// +optional
	Ready bool `json:"ready,omitempty"`

	// agentRef is the Agent claimed for this Machine.
	// +optional
	AgentRef *AgentReference `json:"agentRef,omitempty"`

	// addresses are the host's addresses, as reported by its Agent.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=128
	Addresses []clusterv1.MachineAddress `json:"addresses,omitempty"`

	// failureDomain is the failure domain of the claimed host.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	FailureDomain string `json:"failureDomain,omitempty"`

	// observedGeneration is the latest generation observed by the controller.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:resource:path=agentmachines,scope=Namespaced,categories=cluster-api
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1beta1"
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']",description="Cluster to which this AgentMachine belongs"
// +kubebuilder:printcolumn:name="Agent",type="string",JSONPath=".status.agentRef.name",description="Agent claimed for this Machine"
// +kubebuilder:printcolumn:name="ProviderID",type="string",JSONPath=".spec.providerID",description="Provider ID of the host"
// +kubebuilder:printcolumn:name="Provisioned",type="boolean",JSONPath=".status.initialization.provisioned",description="Host is installed"
// +kubebuilder:printcolumn:name="Machine",type="string",JSONPath=".metadata.ownerReferences[?(@.kind==\"Machine\")].name",description="Machine that owns this AgentMachine",priority=1
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"

// AgentMachine is the infrastructure of a Machine: it claims an approved Agent for the Machine
// and binds it to the cluster.
type AgentMachine struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is the standard object's metadata.
	// More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec defines the desired state of AgentMachine.
	// +optional
	Spec AgentMachineSpec `json:"spec,omitempty"`

	// status defines the observed state of AgentMachine.
	// +optional
	Status AgentMachineStatus `json:"status,omitempty"`
}

// GetConditions returns the conditions of the AgentMachine.
func (m *AgentMachine) GetConditions() []metav1.Condition { return m.Status.Conditions }

// SetConditions sets the conditions of the AgentMachine.
func (m *AgentMachine) SetConditions(conditions []metav1.Condition) { m.Status.Conditions = conditions }

// +kubebuilder:object:root=true

// AgentMachineList contains a list of AgentMachine.
type AgentMachineList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []AgentMachine `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &AgentMachine{}, &AgentMachineList{})
}
