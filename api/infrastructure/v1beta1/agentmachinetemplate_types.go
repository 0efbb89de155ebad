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

// AgentMachineTemplateResource describes the data needed to create an AgentMachine from a template.
// +kubebuilder:validation:XValidation:rule="!has(self.spec.providerID) || size(self.spec.providerID) == 0",fieldPath=".spec.providerID",messageExpression="'providerID \"' + self.spec.providerID + '\" must not be set in a template: it would be copied into every AgentMachine created from it, while each AgentMachine gets the providerID of the host it claims (agent://<Agent name>) from the controller; remove spec.template.spec.providerID'"
type AgentMachineTemplateResource struct {
	// metadata is the standard object's metadata, applied to AgentMachines created from this template.
	// +optional
	ObjectMeta clusterv1.ObjectMeta `json:"metadata,omitempty,omitzero"`

	// spec is the desired state of AgentMachines created from this template.
	// +required
	Spec AgentMachineSpec `json:"spec"`
}

// AgentMachineTemplateSpec defines the desired state of AgentMachineTemplate.
type AgentMachineTemplateSpec struct {
	// template is the AgentMachine created from this template. Its spec cannot change: create a
	// new template and point the MachineDeployment or control plane at it to roll out a change.
	// The provider's ValidatingAdmissionPolicy (infrastructure/config/admission) refuses a change,
	// but for the dry-run through which Cluster API's topology controller tells whether a template
	// differs from the class's (annotation topology.cluster.x-k8s.io/dry-run), which a schema rule
	// cannot tell from a change.
	// +required
	Template AgentMachineTemplateResource `json:"template"`
}

// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:path=agentmachinetemplates,scope=Namespaced,categories=cluster-api
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1beta1"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"

// AgentMachineTemplate is the template for AgentMachines.
type AgentMachineTemplate struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is the standard object's metadata.
	// More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec defines the desired state of AgentMachineTemplate.
	// +optional
	Spec AgentMachineTemplateSpec `json:"spec,omitempty"`
}

// +kubebuilder:object:root=true

// AgentMachineTemplateList contains a list of AgentMachineTemplate.
type AgentMachineTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []AgentMachineTemplate `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &AgentMachineTemplate{}, &AgentMachineTemplateList{})
}
