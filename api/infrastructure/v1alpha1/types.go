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

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	infrav1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/infrastructure/v1beta1"
)

// The markers of each kind repeat those of its v1beta1 kind (print columns, subresources): the
// CRD test checks that both versions of each CRD have one schema and the same columns.

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=agentclusters,scope=Namespaced,categories=cluster-api
// +kubebuilder:deprecatedversion:warning="capi-provider.agent-install.openshift.io/v1alpha1 AgentCluster is deprecated; use v1beta1, which has the same fields"
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']",description="Cluster to which this AgentCluster belongs"
// +kubebuilder:printcolumn:name="Provisioned",type="boolean",JSONPath=".status.initialization.provisioned",description="Cluster infrastructure is provisioned"
// +kubebuilder:printcolumn:name="ClusterDeployment",type="string",JSONPath=".spec.clusterDeploymentRef.name",description="Hive ClusterDeployment the Agents bind to"
// +kubebuilder:printcolumn:name="Endpoint",type="string",JSONPath=".spec.controlPlaneEndpoint.host",description="API endpoint",priority=1
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"

// AgentCluster is the deprecated v1alpha1 form of v1beta1.AgentCluster, with the same fields.
type AgentCluster struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is the standard object's metadata.
	// More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec defines the desired state of AgentCluster.
	// +optional
	Spec infrav1.AgentClusterSpec `json:"spec,omitempty"`

	// status defines the observed state of AgentCluster.
	// +optional
	Status infrav1.AgentClusterStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// AgentClusterList contains a list of AgentCluster.
type AgentClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []AgentCluster `json:"items"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=agentmachines,scope=Namespaced,categories=cluster-api
// +kubebuilder:deprecatedversion:warning="capi-provider.agent-install.openshift.io/v1alpha1 AgentMachine is deprecated; use v1beta1, which has the same fields"
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']",description="Cluster to which this AgentMachine belongs"
// +kubebuilder:printcolumn:name="Agent",type="string",JSONPath=".status.agentRef.name",description="Agent claimed for this Machine"
// +kubebuilder:printcolumn:name="ProviderID",type="string",JSONPath=".spec.providerID",description="Provider ID of the host"
// +kubebuilder:printcolumn:name="Provisioned",type="boolean",JSONPath=".status.initialization.provisioned",description="Host is installed"
// +kubebuilder:printcolumn:name="Machine",type="string",JSONPath=".metadata.ownerReferences[?(@.kind==\"Machine\")].name",description="Machine that owns this AgentMachine",priority=1
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"

// AgentMachine is the deprecated v1alpha1 form of v1beta1.AgentMachine, with the same fields.
type AgentMachine struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is the standard object's metadata.
	// More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec defines the desired state of AgentMachine.
	// +optional
	Spec infrav1.AgentMachineSpec `json:"spec,omitempty"`

	// status defines the observed state of AgentMachine.
	// +optional
	Status infrav1.AgentMachineStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// AgentMachineList contains a list of AgentMachine.
type AgentMachineList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []AgentMachine `json:"items"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=agentmachinetemplates,scope=Namespaced,categories=cluster-api
// +kubebuilder:deprecatedversion:warning="capi-provider.agent-install.openshift.io/v1alpha1 AgentMachineTemplate is deprecated; use v1beta1, which has the same fields"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"

// AgentMachineTemplate is the deprecated v1alpha1 form of v1beta1.AgentMachineTemplate, with
// the same fields.
type AgentMachineTemplate struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is the standard object's metadata.
	// More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec defines the desired state of AgentMachineTemplate.
	// +optional
	Spec infrav1.AgentMachineTemplateSpec `json:"spec,omitempty"`
}

// +kubebuilder:object:root=true

// AgentMachineTemplateList contains a list of AgentMachineTemplate.
type AgentMachineTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []AgentMachineTemplate `json:"items"`
}
