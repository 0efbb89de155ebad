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
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	// DiscoveryIgnitionOverrideAnnotation holds a JSON ignition config merged into the
	// discovery image's ignition (the live ISO the host boots before installation).
	DiscoveryIgnitionOverrideAnnotation = "openshiftassistedconfig.cluster.x-k8s.io/discovery-ignition-override"
	// IgnitionOverrideAnnotation holds a JSON ignition config merged into the installed
	// host's ignition (the Agent's ignitionConfigOverrides).
	IgnitionOverrideAnnotation = "openshiftassistedconfig.cluster.x-k8s.io/ignition-override"
	// LegacyBootDiskFirstAnnotation is set to "true" on a BareMetalHost whose spec.bootMode is
	// legacy to say that the host's BIOS boots its disk before the virtual CD. Without it such a
	// host is not approved for a live-ISO install: the installer sets the boot order on UEFI
	// hosts only, and the discovery ISO stays attached after the install.
	LegacyBootDiskFirstAnnotation = "openshiftassistedconfig.cluster.x-k8s.io/legacy-boot-disk-first"
)

// The rule on additionalNTPSources uses the CEL IP library (isIP), which the API server accepts in
// new rules from Kubernetes 1.31 on (it came in 1.30). The formats CEL cannot parse (SSH keys,
// PEM bundles, proxy URLs, label selectors, kubelet labels) are checked by the webhooks of the
// bootstrap and control-plane providers (pkg/validation).

// OpenshiftAssistedConfigSpec defines the desired state of OpenshiftAssistedConfig: the settings
// of the InfraEnv (discovery image) the Machine's host boots, and of the host's registration.
type OpenshiftAssistedConfigSpec struct {
	// proxy is the proxy the discovery agent and the installed host use. Unset means no proxy.
	// +optional
	Proxy *aiv1beta1.Proxy `json:"proxy,omitempty"`

	// pullSecretRef names the Secret, in the config's namespace, holding the pull secret used to
	// pull release and discovery images. Defaults to the control plane's pull secret.
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

	// cpuArchitecture is the CPU architecture of the host and its discovery image. The release
	// a cluster installs is chosen for the architectures of all its configs (the control
	// plane's and its MachineDeployments' templates): theirs when they agree, OpenShift's multi
	// release when they differ.
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
	// AgentServiceConfig. Defaults to the image matching the cluster's version.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	OSImageVersion string `json:"osImageVersion,omitempty"`

	// nodeRegistration holds settings for the host's registration as a Node.
	// +optional
	NodeRegistration NodeRegistrationOptions `json:"nodeRegistration,omitempty,omitzero"`

	// preBootstrapCommands are shell commands the installed host runs once, before its kubelet
	// first starts (systemd unit capoa-pre-bootstrap.service, as the upstream provider names it).
	// They run in order under bash with errexit, nounset and pipefail; if one fails, the host
	// tries again at its next boot. Applied when the host is installed. An empty command is an
	// empty line of the script, which runs nothing (as upstream's).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=1024
	// +kubebuilder:validation:items:MaxLength=65536
	PreBootstrapCommands []string `json:"preBootstrapCommands,omitempty"`

	// postBootstrapCommands are shell commands the installed host runs once, after its Node has
	// joined (capoa-post-bootstrap.service waits, up to 10 minutes, until the API server is ready
	// and the Node is registered, reading them with postBootstrapKubeconfigPath). Same rules as
	// preBootstrapCommands.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=1024
	// +kubebuilder:validation:items:MaxLength=65536
	PostBootstrapCommands []string `json:"postBootstrapCommands,omitempty"`

	// bootstrapCommandSentinelDir is the directory where the host records that its pre- and
	// post-bootstrap commands have run (pre-bootstrap.done, post-bootstrap.done). Defaults to
	// /var/lib/capoa. An absolute path without whitespace, control characters, quotes, $, \,
	// |, &, ;, parentheses, < or > (shell syntax, as upstream's script wrote it unquoted), or %
	// (a systemd specifier).
	// +optional
	// +kubebuilder:validation:MaxLength=4075
	// +kubebuilder:validation:Pattern=`^/[^\x00-\x20\x7f'"\x60$\\|&;()<>%]*$`
	BootstrapCommandSentinelDir string `json:"bootstrapCommandSentinelDir,omitempty"`

	// postBootstrapKubeconfigPath is the kubeconfig, on the host, with which the post-bootstrap
	// unit waits for the API server and the Node. Defaults to the kubelet's,
	// /var/lib/kubelet/kubeconfig. A path without ", $, \ or a backquote, which upstream's script
	// (between double quotes) would have read as shell syntax; a relative path is relative to /.
	// +optional
	// +kubebuilder:validation:MaxLength=4095
	// +kubebuilder:validation:Pattern=`^[^"$\x60\\]*$`
	PostBootstrapKubeconfigPath string `json:"postBootstrapKubeconfigPath,omitempty"`
}

// NodeRegistrationOptions holds settings for the host's registration as a Node.
type NodeRegistrationOptions struct {
	// name is the hostname the host is installed with, and so its Node's name: a hostname, or a
	// host metadata variable (METADATA_NAME, METADATA_LOCAL_HOSTNAME...) written as in a shell,
	// with a leading dollar sign and optional braces, resolved for each host from its Metal3
	// metadata (what its config drive's meta_data.json holds: the BareMetalHost's name,
	// local-hostname, uuid, metal3-name and metal3-namespace, overridden by the keys of its
	// metaData Secret, rendered by CAPM3 from the Metal3DataTemplate; each key upper-cased with
	// "-" as "_" after METADATA_), as the upstream bootstrap provider resolves it on the host.
	// A variable may be used in templates and with several control-plane replicas.
	// Defaults to the Machine's name.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$') || self.matches('^[$]([{]METADATA_[A-Z0-9_]+[}]|METADATA_[A-Z0-9_]+)$')",message="name must be a lowercase hostname (RFC 1123), such as master-0 or master-0.example.com, or a host metadata variable such as METADATA_NAME written with a leading dollar sign"
	Name string `json:"name,omitempty"`

	// kubeletExtraLabels are labels, as key=value, that the kubelet sets on the Node. A value may
	// be a host metadata variable, written and resolved per host like name.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=1024
	KubeletExtraLabels []string `json:"kubeletExtraLabels,omitempty"`

	// providerID is the provider ID the host's kubelet registers its Node with, as
	// <provider>://<id>. It may hold host metadata variables, written and resolved per host like
	// name (for example metal3:// followed by METADATA_UUID with a leading dollar sign), as the
	// upstream bootstrap provider expands them on the host. It must resolve to the providerID the
	// infrastructure provider reports for the Machine, which is how Cluster API finds the
	// Machine's Node: a Machine whose providerID differs reports it. When unset, the kubelet
	// registers without one and the infrastructure provider sets it.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9][a-z0-9+.-]*://[^[:space:]]+$')",message="providerID must be <provider>://<id> without spaces, such as metal3:// followed by a host metadata variable like METADATA_UUID written with a leading dollar sign"
	ProviderID string `json:"providerID,omitempty"`
}

// OpenshiftAssistedConfigInitializationStatus provides observations of the
// OpenshiftAssistedConfig initialization process.
// +kubebuilder:validation:MinProperties=1
type OpenshiftAssistedConfigInitializationStatus struct {
	// dataSecretCreated is true when the Machine's bootstrap data Secret is created.
	// NOTE: this field is part of the Cluster API contract.
	// +optional
	DataSecretCreated *bool `json:"dataSecretCreated,omitempty"`
}

// OpenshiftAssistedConfigStatus defines the observed state of OpenshiftAssistedConfig.
type OpenshiftAssistedConfigStatus struct {
	// conditions represent the observations of the config's current state. Known condition types
	// are Ready, DataSecretAvailable, InfraEnvReady, AgentRegistered, AgentApproved, Installing,
	// Installed and Paused.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// initialization provides observations of the config's initialization process.
	// NOTE: fields in this struct are part of the Cluster API contract.
	// +optional
	Initialization OpenshiftAssistedConfigInitializationStatus `json:"initialization,omitempty,omitzero"`

	// dataSecretName is the name of the Secret that holds the bootstrap data.
	// NOTE: this field is part of the Cluster API contract.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	DataSecretName string `json:"dataSecretName,omitempty"`

	// infraEnvRef is the InfraEnv this config owns.
	// +optional
	InfraEnvRef *corev1.ObjectReference `json:"infraEnvRef,omitempty"`

	// agentRef is the Agent recognized as this Machine's host.
	// +optional
	// +k8s:conversion-gen=false
	AgentRef *corev1.ObjectReference `json:"agentRef,omitempty"`

	// isoDownloadURL is the URL of the discovery ISO to boot the Machine's host from by hand (a
	// Machine whose infrastructure is not a Metal3Machine). It carries a download token; for a
	// Metal3Machine it is left empty, as the URL goes to the Metal3Machine only.
	// +optional
	ISODownloadURL string `json:"isoDownloadURL,omitempty"`

	// observedGeneration is the latest generation observed by the controller.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:resource:path=openshiftassistedconfigs,scope=Namespaced,categories=cluster-api,shortName=oac;oacs
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1alpha2"
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']",description="Cluster to which this config belongs"
// +kubebuilder:printcolumn:name="Data Secret Created",type="boolean",JSONPath=".status.initialization.dataSecretCreated",description="The bootstrap data Secret is created"
// +kubebuilder:printcolumn:name="InfraEnv",type="string",JSONPath=".status.infraEnvRef.name",description="InfraEnv owned by this config"
// +kubebuilder:printcolumn:name="Agent",type="string",JSONPath=".status.agentRef.name",description="Agent of this Machine's host"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"

// OpenshiftAssistedConfig is the bootstrap configuration of one Machine installed by the
// assisted installer: it owns the Machine's InfraEnv and recognizes and approves its Agent.
type OpenshiftAssistedConfig struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is the standard object's metadata.
	// More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec defines the desired state of OpenshiftAssistedConfig: the settings of the InfraEnv
	// (discovery image) the Machine's host boots, and of the host's registration.
	// +optional
	Spec OpenshiftAssistedConfigSpec `json:"spec,omitempty"`

	// status defines the observed state of OpenshiftAssistedConfig.
	// +optional
	Status OpenshiftAssistedConfigStatus `json:"status,omitempty"`
}

// GetConditions returns the conditions of the config.
func (c *OpenshiftAssistedConfig) GetConditions() []metav1.Condition { return c.Status.Conditions }

// SetConditions sets the conditions of the config.
func (c *OpenshiftAssistedConfig) SetConditions(conditions []metav1.Condition) {
	c.Status.Conditions = conditions
}

// +kubebuilder:object:root=true

// OpenshiftAssistedConfigList contains a list of OpenshiftAssistedConfig.
type OpenshiftAssistedConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []OpenshiftAssistedConfig `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &OpenshiftAssistedConfig{}, &OpenshiftAssistedConfigList{})
}
