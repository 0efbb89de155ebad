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

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// OpenshiftAssistedConfigTemplateResource describes the data needed to create an
// OpenshiftAssistedConfig from a template.
// +kubebuilder:validation:XValidation:rule="!has(self.spec) || !has(self.spec.nodeRegistration) || !has(self.spec.nodeRegistration.name) || size(self.spec.nodeRegistration.name) == 0 || self.spec.nodeRegistration.name.startsWith('$')",fieldPath=".spec.nodeRegistration.name",message="nodeRegistration.name must not be a fixed name in a template: every host created from it would be installed with that same hostname; leave it unset so that each host is named after its Machine, or name a host metadata variable such as METADATA_NAME with a leading dollar sign"
// +kubebuilder:validation:XValidation:rule="!has(self.spec) || !has(self.spec.nodeRegistration) || !has(self.spec.nodeRegistration.providerID) || size(self.spec.nodeRegistration.providerID) == 0 || self.spec.nodeRegistration.providerID.contains('$')",fieldPath=".spec.nodeRegistration.providerID",message="nodeRegistration.providerID must not be fixed in a template: every host created from it would register with that same providerID; leave it unset, or build it from a host metadata variable such as METADATA_UUID written with a leading dollar sign"
type OpenshiftAssistedConfigTemplateResource struct {
	// metadata is the standard object's metadata, applied to configs created from this template.
	// +optional
	ObjectMeta clusterv1.ObjectMeta `json:"metadata,omitempty,omitzero"`

	// spec is the desired state of configs created from this template.
	// +optional
	Spec OpenshiftAssistedConfigSpec `json:"spec,omitempty"`
}

// OpenshiftAssistedConfigTemplateSpec defines the desired state of OpenshiftAssistedConfigTemplate.
type OpenshiftAssistedConfigTemplateSpec struct {
	// template is the OpenshiftAssistedConfig created from this template.
	// +required
	Template OpenshiftAssistedConfigTemplateResource `json:"template"`
}

// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:path=openshiftassistedconfigtemplates,scope=Namespaced,categories=cluster-api,shortName=oact;oacts
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1alpha2"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"

// OpenshiftAssistedConfigTemplate is the template for OpenshiftAssistedConfigs, used by
// MachineDeployments and MachineSets.
type OpenshiftAssistedConfigTemplate struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is the standard object's metadata.
	// More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec defines the desired state of OpenshiftAssistedConfigTemplate.
	// +optional
	Spec OpenshiftAssistedConfigTemplateSpec `json:"spec,omitempty"`
}

// +kubebuilder:object:root=true

// OpenshiftAssistedConfigTemplateList contains a list of OpenshiftAssistedConfigTemplate.
type OpenshiftAssistedConfigTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []OpenshiftAssistedConfigTemplate `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &OpenshiftAssistedConfigTemplate{}, &OpenshiftAssistedConfigTemplateList{})
}
