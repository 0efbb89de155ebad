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

// ClusterDeploymentReference names a Hive ClusterDeployment.
type ClusterDeploymentReference struct {
	// name of the ClusterDeployment.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",messageExpression="'\"' + self + '\" is not a valid object name: a ClusterDeployment name consists of lower case letters, digits, - and . and starts and ends with a letter or digit'"
	Name string `json:"name,omitempty"`

	// namespace of the ClusterDeployment. Defaults to the AgentCluster's namespace.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self == '' || self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",messageExpression="'\"' + self + '\" is not a valid namespace name: a namespace name consists of lower case letters, digits and - and starts and ends with a letter or digit'"
	Namespace string `json:"namespace,omitempty"`
}

// The rule on url uses the CEL URL library (isURL, url), which every Kubernetes version with CRD
// validation rules has. An IPv6 host without brackets is accepted as the controller brackets it
// (and as Go's URL parser accepted it before Go 1.26, so that the rule does not depend on the
// Go version the API server is built with).

// IgnitionEndpoint is a custom ignition endpoint that hosts fetch their ignition from.
// +kubebuilder:validation:XValidation:rule="!has(self.caCertificateReference) || (has(self.url) && size(self.url) > 0)",fieldPath=".caCertificateReference",message="caCertificateReference is set without url: the CA certificate is only used to contact the ignition endpoint's URL; set url, or remove ignitionEndpoint"
type IgnitionEndpoint struct {
	// url of the custom ignition endpoint, http or https. An IPv6 host is written in brackets.
	// +optional
	// +kubebuilder:validation:MaxLength=8192
	// +kubebuilder:validation:XValidation:rule="self == '' || self.matches('^https?://[0-9A-Fa-f.]*:[0-9A-Fa-f.]*:[0-9A-Fa-f:.]*([/?#].*)?$') || (isURL(self) && url(self).getScheme() in ['http', 'https'] && url(self).getHostname() != '')",messageExpression="'\"' + self + '\" is not an http or https URL with a host: write the address the hosts fetch their ignition from, such as https://ignition.example.com/ignition'"
	Url string `json:"url,omitempty"` //nolint:revive // field name kept for existing manifests.

	// caCertificateReference is a reference to the Secret holding the CA certificate used
	// when contacting the URL over HTTPS.
	// +optional
	CaCertificateReference *CaCertificateReference `json:"caCertificateReference,omitempty"`
}

// CaCertificateReference names the Secret that holds a CA certificate.
type CaCertificateReference struct {
	// namespace of the Secret holding the CA certificate.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",messageExpression="'\"' + self + '\" is not a valid namespace name: a namespace name consists of lower case letters, digits and - and starts and ends with a letter or digit'"
	Namespace string `json:"namespace"`

	// name of the Secret holding the CA certificate.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",messageExpression="'\"' + self + '\" is not a valid Secret name: a Secret name consists of lower case letters, digits, - and . and starts and ends with a letter or digit'"
	Name string `json:"name"`
}

// APIEndpoint is the endpoint of the control plane's API server: Cluster API's APIEndpoint with
// its empty value accepted. HyperShift writes {host: "", port: 0} into the AgentCluster until its
// HostedControlPlane reports the endpoint (hypershift-operator's reconcileAgentCluster), and
// upstream's CRDs accept it; Cluster API v1beta2's APIEndpoint refuses it (host minLength 1,
// port minimum 1).
type APIEndpoint struct {
	// host is the hostname or address on which the API server is serving; empty while not known.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Host string `json:"host,omitempty"`

	// port is the port on which the API server is serving; 0 while not known.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=65535
	Port int32 `json:"port,omitempty"`
}

// IsValid reports whether both host and port are set, as Cluster API's APIEndpoint.IsValid.
func (v APIEndpoint) IsValid() bool { return v.Host != "" && v.Port != 0 }

// IsZero reports whether neither host nor port is set.
func (v APIEndpoint) IsZero() bool { return v.Host == "" && v.Port == 0 }

// NewAPIEndpoint returns Cluster API's endpoint as an AgentCluster's.
func NewAPIEndpoint(e clusterv1.APIEndpoint) APIEndpoint {
	return APIEndpoint{Host: e.Host, Port: e.Port}
}

// AgentClusterSpec defines the desired state of AgentCluster.
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.clusterDeploymentRef) || (has(self.clusterDeploymentRef) && self.clusterDeploymentRef == oldSelf.clusterDeploymentRef)",message="clusterDeploymentRef cannot be changed or removed once set: the cluster's Agents are bound to that ClusterDeployment"
type AgentClusterSpec struct {
	// ignitionEndpoint is the custom ignition endpoint that the cluster's hosts fetch their ignition from.
	// +optional
	IgnitionEndpoint *IgnitionEndpoint `json:"ignitionEndpoint,omitempty"`

	// controlPlaneEndpoint is the endpoint used to communicate with the control plane. Empty
	// (also written as host "" and port 0) while it is not known: the controller then takes the
	// Cluster's, or waits.
	// +optional
	ControlPlaneEndpoint APIEndpoint `json:"controlPlaneEndpoint,omitempty,omitzero"`

	// clusterDeploymentRef names the Hive ClusterDeployment that the cluster's Agents are bound to.
	// A hosted control plane sets it to the ClusterDeployment it created; otherwise the controller
	// records here the ClusterDeployment it found or created, so that the reference survives
	// `clusterctl move` (status is not moved). It cannot change once set.
	// +optional
	ClusterDeploymentRef *ClusterDeploymentReference `json:"clusterDeploymentRef,omitempty"`
}

// AgentClusterInitializationStatus provides observations of the AgentCluster initialization process.
// +kubebuilder:validation:MinProperties=1
type AgentClusterInitializationStatus struct {
	// provisioned is true when the infrastructure provider reports that the cluster's infrastructure
	// is fully provisioned.
	// NOTE: this field is part of the Cluster API contract.
	// +optional
	Provisioned *bool `json:"provisioned,omitempty"`
}

// AgentClusterStatus defines the observed state of AgentCluster.
type AgentClusterStatus struct {
	// conditions represent the observations of the AgentCluster's current state.
	// Known condition types are Ready, ClusterDeploymentReady and Paused.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// initialization provides observations of the AgentCluster initialization process.
	// NOTE: fields in this struct are part of the Cluster API contract.
	// +optional
	Initialization AgentClusterInitializationStatus `json:"initialization,omitempty,omitzero"`

	// ready is true when the cluster's infrastructure is ready.
	//
	// Deprecated: kept for clients of the v1beta1 contract; use initialization.provisioned.
	// +optional
	Ready bool `json:"ready,omitempty"`

	// clusterDeploymentReference is the ClusterDeployment the cluster's Agents are bound to,
	// as observed by the controller. spec.clusterDeploymentRef is the durable record.
	// +optional
	ClusterDeploymentRef ClusterDeploymentReference `json:"clusterDeploymentReference,omitempty,omitzero"`

	// failureDomains is the list of failure domains this provider offers to Machines.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=100
	FailureDomains []clusterv1.FailureDomain `json:"failureDomains,omitempty"`

	// observedGeneration is the latest generation observed by the controller.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:resource:path=agentclusters,scope=Namespaced,categories=cluster-api
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1beta1"
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']",description="Cluster to which this AgentCluster belongs"
// +kubebuilder:printcolumn:name="Provisioned",type="boolean",JSONPath=".status.initialization.provisioned",description="Cluster infrastructure is provisioned"
// +kubebuilder:printcolumn:name="ClusterDeployment",type="string",JSONPath=".spec.clusterDeploymentRef.name",description="Hive ClusterDeployment the Agents bind to"
// +kubebuilder:printcolumn:name="Endpoint",type="string",JSONPath=".spec.controlPlaneEndpoint.host",description="API endpoint",priority=1
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"

// AgentCluster is the infrastructure of a Cluster whose Machines are hosts registered
// through the assisted installer as Agents.
type AgentCluster struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is the standard object's metadata.
	// More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec defines the desired state of AgentCluster.
	// +optional
	Spec AgentClusterSpec `json:"spec,omitempty"`

	// status defines the observed state of AgentCluster.
	// +optional
	Status AgentClusterStatus `json:"status,omitempty"`
}

// GetConditions returns the conditions of the AgentCluster.
func (c *AgentCluster) GetConditions() []metav1.Condition { return c.Status.Conditions }

// SetConditions sets the conditions of the AgentCluster.
func (c *AgentCluster) SetConditions(conditions []metav1.Condition) { c.Status.Conditions = conditions }

// +kubebuilder:object:root=true

// AgentClusterList contains a list of AgentCluster.
type AgentClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []AgentCluster `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &AgentCluster{}, &AgentClusterList{})
}
