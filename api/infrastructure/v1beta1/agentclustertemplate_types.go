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

// AgentClusterTemplateResource describes the data needed to create an AgentCluster from a template.
// +kubebuilder:validation:XValidation:rule="!has(self.spec.clusterDeploymentRef)",fieldPath=".spec.clusterDeploymentRef",message="clusterDeploymentRef must not be set in a template: every AgentCluster created from it would bind its cluster's hosts to that same ClusterDeployment; leave it unset (the controller records the ClusterDeployment of each cluster)"
type AgentClusterTemplateResource struct {
	// metadata is the standard object's metadata, applied to the AgentCluster created from this template.
	// +optional
	ObjectMeta clusterv1.ObjectMeta `json:"metadata,omitempty,omitzero"`

	// spec is the desired state of the AgentCluster.
	// +required
	Spec AgentClusterSpec `json:"spec"`
}

// AgentClusterTemplateSpec defines the desired state of AgentClusterTemplate.
type AgentClusterTemplateSpec struct {
	// template is the AgentCluster created from this template. It cannot change: create a new
	// template instead.
	// +required
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.template is immutable: create a new AgentClusterTemplate instead"
	Template AgentClusterTemplateResource `json:"template"`
}

// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:path=agentclustertemplates,scope=Namespaced,categories=cluster-api
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1beta1"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"

// AgentClusterTemplate is the template for AgentClusters, used by ClusterClass.
type AgentClusterTemplate struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is the standard object's metadata.
	// More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec defines the desired state of AgentClusterTemplate.
	// +optional
	Spec AgentClusterTemplateSpec `json:"spec,omitempty"`
}

// +kubebuilder:object:root=true

// AgentClusterTemplateList contains a list of AgentClusterTemplate.
type AgentClusterTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []AgentClusterTemplate `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &AgentClusterTemplate{}, &AgentClusterTemplateList{})
}
