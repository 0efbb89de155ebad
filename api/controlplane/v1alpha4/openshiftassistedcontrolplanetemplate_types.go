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

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
)

// OpenshiftAssistedControlPlaneTemplateSpec defines the desired state of
// OpenshiftAssistedControlPlaneTemplate.
type OpenshiftAssistedControlPlaneTemplateSpec struct {
	// template is the control plane that Cluster API's topology controller creates for each
	// Cluster of a ClusterClass naming this template.
	// +required
	Template OpenshiftAssistedControlPlaneTemplateResource `json:"template,omitempty,omitzero"`
}

// OpenshiftAssistedControlPlaneTemplateResource describes the control plane created from a template.
type OpenshiftAssistedControlPlaneTemplateResource struct {
	// metadata is the standard object's metadata, given to the control plane.
	// +optional
	ObjectMeta clusterv1.ObjectMeta `json:"metadata,omitempty,omitzero"`

	// spec is the control plane's spec, but for what the topology controller sets from the
	// Cluster (version, replicas, the Machines' infrastructure template, readiness gates and
	// taints).
	// +required
	Spec OpenshiftAssistedControlPlaneTemplateResourceSpec `json:"spec,omitempty,omitzero"`
}

// OpenshiftAssistedControlPlaneTemplateResourceSpec holds the fields of an
// OpenshiftAssistedControlPlane's spec that a ClusterClass shares among its Clusters. Fields
// particular to a cluster (the base domain, the VIPs, the OpenShift version) are usually set by
// the ClusterClass's patches from the Cluster's variables. Two-node OpenShift with an arbiter
// (the control plane's spec.arbiter) is not a field of the template: it names a host's template
// per cluster, which a ClusterClass adds by a patch (templates/clusterclass-openshift-metal3.yaml).
type OpenshiftAssistedControlPlaneTemplateResourceSpec struct {
	// config holds the settings of the OpenShift cluster, as the control plane's spec.config.
	// +optional
	Config OpenshiftAssistedControlPlaneConfigSpec `json:"config,omitempty,omitzero"`

	// machineTemplate describes the control-plane Machines, as the control plane's
	// spec.machineTemplate, without the infrastructure template, which the ClusterClass names
	// (spec.controlPlane.machineInfrastructure).
	// +optional
	MachineTemplate OpenshiftAssistedControlPlaneTemplateMachineTemplate `json:"machineTemplate,omitempty,omitzero"`

	// openshiftAssistedConfigSpec is the bootstrap configuration of each control-plane Machine.
	// +optional
	OpenshiftAssistedConfigSpec bootstrapv1.OpenshiftAssistedConfigSpec `json:"openshiftAssistedConfigSpec,omitempty,omitzero"`

	// distributionVersion is the OpenShift version, as the control plane's
	// spec.distributionVersion. A ClusterClass usually sets it with a patch from the Kubernetes
	// version of the Cluster's topology (see docs/clusterclass.md).
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	DistributionVersion string `json:"distributionVersion,omitempty"`

	// rollout controls the replacement of control-plane Machines.
	// +optional
	Rollout OpenshiftAssistedControlPlaneRolloutSpec `json:"rollout,omitempty,omitzero"`

	// remediation controls how unhealthy control-plane Machines are replaced.
	// +optional
	Remediation OpenshiftAssistedControlPlaneRemediationSpec `json:"remediation,omitempty,omitzero"`
}

// OpenshiftAssistedControlPlaneTemplateMachineTemplate describes the control-plane Machines of a
// control plane created from a template.
// +kubebuilder:validation:MinProperties=1
type OpenshiftAssistedControlPlaneTemplateMachineTemplate struct {
	// metadata is the standard object's metadata, applied to the control-plane Machines.
	// +optional
	ObjectMeta clusterv1.ObjectMeta `json:"metadata,omitempty,omitzero"`

	// spec is the spec of the control-plane Machines.
	// +optional
	Spec OpenshiftAssistedControlPlaneTemplateMachineTemplateSpec `json:"spec,omitempty,omitzero"`
}

// OpenshiftAssistedControlPlaneTemplateMachineTemplateSpec is the spec of the control-plane
// Machines of a control plane created from a template.
// +kubebuilder:validation:MinProperties=1
type OpenshiftAssistedControlPlaneTemplateMachineTemplateSpec struct {
	// deletion contains options for the deletion of control-plane Machines.
	// +optional
	Deletion clusterv1.MachineDeletionSpec `json:"deletion,omitempty,omitzero"`
}

// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:path=openshiftassistedcontrolplanetemplates,scope=Namespaced,categories=cluster-api
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1alpha4"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"

// OpenshiftAssistedControlPlaneTemplate is the template of an OpenshiftAssistedControlPlane that
// a ClusterClass names (spec.controlPlane.templateRef). Its spec is immutable: to change a
// ClusterClass's control plane, create a new template and point the ClusterClass at it, and the
// topology controller rolls the change out to its Clusters.
type OpenshiftAssistedControlPlaneTemplate struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is the standard object's metadata.
	// More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec defines the desired state of OpenshiftAssistedControlPlaneTemplate.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="an OpenshiftAssistedControlPlaneTemplate's spec is immutable: create a new template and point the ClusterClass's spec.controlPlane.templateRef at it"
	Spec OpenshiftAssistedControlPlaneTemplateSpec `json:"spec,omitempty,omitzero"`
}

// +kubebuilder:object:root=true

// OpenshiftAssistedControlPlaneTemplateList contains a list of OpenshiftAssistedControlPlaneTemplate.
type OpenshiftAssistedControlPlaneTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []OpenshiftAssistedControlPlaneTemplate `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &OpenshiftAssistedControlPlaneTemplate{}, &OpenshiftAssistedControlPlaneTemplateList{})
}
