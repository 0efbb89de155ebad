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
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1" //nolint:staticcheck // upstream's v1alpha1 holds Cluster API v1beta1 conditions
)

// The fields are upstream's v1alpha1 fields (bootstrap/api/v1alpha1 of
// openshift-assisted/cluster-api-provider-openshift-assisted, v0.2.0 to v0.4.0 and master), with
// the validation markers of the same fields in v1alpha2, so that an object is held to the same
// rules in either version. Each field means what it means in v1alpha2.

// OpenshiftAssistedConfigSpec is the v1alpha1 form of v1alpha2.OpenshiftAssistedConfigSpec,
// without the fields v1alpha2 added (pre/post bootstrap commands, their sentinel directory and
// kubeconfig path).
type OpenshiftAssistedConfigSpec struct {
	// proxy is the proxy the discovery agent and the installed host use. Unset means no proxy.
	// +optional
	Proxy *aiv1beta1.Proxy `json:"proxy,omitempty"`

	// pullSecretRef names the Secret holding the pull secret. Defaults to the control plane's.
	// +optional
	PullSecretRef *corev1.LocalObjectReference `json:"pullSecretRef,omitempty"`

	// additionalNTPSources are NTP sources (hostnames or IPs) added to the host's NTP configuration.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=255
	// +kubebuilder:validation:items:XValidation:rule="isIP(self) || self.matches('^[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?([.][A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?)*[.]?$')",messageExpression="'\"' + self + '\" is not an IP address or a host name: give each NTP source as an address (10.0.0.1, fd00::1) or a DNS name (ntp.example.com), one per item'"
	AdditionalNTPSources []string `json:"additionalNTPSources,omitempty"`

	// sshAuthorizedKey holds SSH public keys, one per line, added to the discovery image, for
	// debugging a host.
	// +optional
	// +kubebuilder:validation:MaxLength=65536
	SSHAuthorizedKey string `json:"sshAuthorizedKey,omitempty"`

	// nmStateConfigLabelSelector selects the NMStateConfigs applied to hosts booting this
	// config's discovery image (static networking).
	// +optional
	NMStateConfigLabelSelector metav1.LabelSelector `json:"nmStateConfigLabelSelector,omitempty,omitzero"`

	// cpuArchitecture is the CPU architecture of the host and its discovery image.
	// +kubebuilder:default=x86_64
	// +kubebuilder:validation:Enum=x86_64;aarch64;arm64;ppc64le;s390x
	// +optional
	CpuArchitecture string `json:"cpuArchitecture,omitempty"` //nolint:revive // field name kept for existing manifests.

	// kernelArguments are kernel arguments added to, replaced in or deleted from the discovery
	// image's boot command line.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=2048
	KernelArguments []aiv1beta1.KernelArgument `json:"kernelArguments,omitempty"`

	// additionalTrustBundle is a PEM-encoded X.509 certificate bundle that the discovered host,
	// and the cluster formed from it, trust.
	// +optional
	AdditionalTrustBundle string `json:"additionalTrustBundle,omitempty"`

	// osImageVersion is the version of the discovery OS image, one of the OS images listed in the
	// AgentServiceConfig.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	OSImageVersion string `json:"osImageVersion,omitempty"`

	// nodeRegistration holds settings for the host's registration as a Node.
	// +optional
	NodeRegistration NodeRegistrationOptions `json:"nodeRegistration,omitempty,omitzero"`
}

// NodeRegistrationOptions is the v1alpha1 form of v1alpha2.NodeRegistrationOptions, without
// providerID.
type NodeRegistrationOptions struct {
	// name is the hostname the host is installed with: a hostname, or a host metadata variable
	// such as METADATA_NAME written with a leading dollar sign, resolved per host.
	// Defaults to the Machine's name.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$') || self.matches('^[$]([{]METADATA_[A-Z0-9_]+[}]|METADATA_[A-Z0-9_]+)$')",message="name must be a lowercase hostname (RFC 1123), such as master-0 or master-0.example.com, or a host metadata variable such as METADATA_NAME written with a leading dollar sign"
	Name string `json:"name,omitempty"`

	// kubeletExtraLabels are labels, as key=value, that the kubelet sets on the Node. A value may
	// be a host metadata variable, resolved per host like name.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=1024
	KubeletExtraLabels []string `json:"kubeletExtraLabels,omitempty"`
}

// OpenshiftAssistedConfigStatus is upstream's v1alpha1 status, which follows the Cluster API
// v1beta1 contract (ready, v1beta1 conditions). It is computed from v1alpha2's status on every
// read; failureReason and failureMessage are never set (v1alpha2 reports problems in conditions).
type OpenshiftAssistedConfigStatus struct {
	// infraEnvRef is the InfraEnv this config owns.
	// +optional
	InfraEnvRef *corev1.ObjectReference `json:"infraEnvRef,omitempty"`

	// agentRef is the Agent recognized as this Machine's host.
	// +optional
	// +k8s:conversion-gen=false
	AgentRef *corev1.LocalObjectReference `json:"agentRef,omitempty"`

	// ready is true when the bootstrap data Secret is created.
	// +optional
	Ready bool `json:"ready"`

	// dataSecretName is the name of the Secret that holds the bootstrap data.
	// +optional
	DataSecretName *string `json:"dataSecretName,omitempty"`

	// failureReason was set by upstream on non-retryable errors.
	// +optional
	FailureReason string `json:"failureReason,omitempty"`

	// failureMessage was set by upstream on non-retryable errors.
	// +optional
	FailureMessage string `json:"failureMessage,omitempty"`

	// observedGeneration is the latest generation observed by the controller.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions are v1alpha2's conditions in the Cluster API v1beta1 form.
	// +optional
	Conditions clusterv1beta1.Conditions `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=openshiftassistedconfigs,scope=Namespaced,categories=cluster-api,shortName=oac;oacs
// +kubebuilder:deprecatedversion:warning="bootstrap.cluster.x-k8s.io/v1alpha1 OpenshiftAssistedConfig is deprecated; use v1alpha2"
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']",description="Cluster to which this config belongs"
// +kubebuilder:printcolumn:name="Ready",type="boolean",JSONPath=".status.ready",description="The bootstrap data Secret is created"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"

// OpenshiftAssistedConfig is the deprecated v1alpha1 form of v1alpha2.OpenshiftAssistedConfig.
type OpenshiftAssistedConfig struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is the standard object's metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec defines the desired state of OpenshiftAssistedConfig.
	// +optional
	Spec OpenshiftAssistedConfigSpec `json:"spec,omitempty"`

	// status defines the observed state of OpenshiftAssistedConfig.
	// +optional
	Status OpenshiftAssistedConfigStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// OpenshiftAssistedConfigList contains a list of OpenshiftAssistedConfig.
type OpenshiftAssistedConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []OpenshiftAssistedConfig `json:"items"`
}

// OpenshiftAssistedConfigTemplateResource is the v1alpha1 form of
// v1alpha2.OpenshiftAssistedConfigTemplateResource.
// +kubebuilder:validation:XValidation:rule="!has(self.spec) || !has(self.spec.nodeRegistration) || !has(self.spec.nodeRegistration.name) || size(self.spec.nodeRegistration.name) == 0 || self.spec.nodeRegistration.name.startsWith('$')",fieldPath=".spec.nodeRegistration.name",message="nodeRegistration.name must not be a fixed name in a template: every host created from it would be installed with that same hostname; leave it unset so that each host is named after its Machine, or name a host metadata variable such as METADATA_NAME with a leading dollar sign"
type OpenshiftAssistedConfigTemplateResource struct {
	// metadata is the metadata given to the configs created from this template.
	// +optional
	ObjectMeta clusterv1beta1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the spec of the configs created from this template.
	// +optional
	Spec OpenshiftAssistedConfigSpec `json:"spec,omitempty"`
}

// OpenshiftAssistedConfigTemplateSpec is the v1alpha1 form of
// v1alpha2.OpenshiftAssistedConfigTemplateSpec.
type OpenshiftAssistedConfigTemplateSpec struct {
	// template is the config each Machine created from this template gets.
	// +required
	Template OpenshiftAssistedConfigTemplateResource `json:"template"`
}

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=openshiftassistedconfigtemplates,scope=Namespaced,categories=cluster-api,shortName=oact;oacts
// +kubebuilder:deprecatedversion:warning="bootstrap.cluster.x-k8s.io/v1alpha1 OpenshiftAssistedConfigTemplate is deprecated; use v1alpha2"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"

// OpenshiftAssistedConfigTemplate is the deprecated v1alpha1 form of
// v1alpha2.OpenshiftAssistedConfigTemplate.
type OpenshiftAssistedConfigTemplate struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is the standard object's metadata.
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
