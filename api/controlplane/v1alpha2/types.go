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
	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1" //nolint:staticcheck // upstream's v1alpha2 holds Cluster API v1beta1 types

	bootstrapv1alpha1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha1"
	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
)

// The fields are upstream's v1alpha2 fields (controlplane/api/v1alpha2 of
// openshift-assisted/cluster-api-provider-openshift-assisted, v0.3.0 to v0.4.0 and master), with
// the validation markers of the same fields in v1alpha4, so that an object is held to the same
// rules in either version (except the rules about spec.arbiter, which v1alpha2 cannot hold). Each
// field means what it means in v1alpha4. The types v1alpha4 shares unchanged with upstream's
// v1alpha2 (disk encryption, capabilities) are v1alpha4's.

// OpenshiftAssistedControlPlaneMachineTemplate is the v1alpha2 form of
// v1alpha4.OpenshiftAssistedControlPlaneMachineTemplate.
type OpenshiftAssistedControlPlaneMachineTemplate struct {
	// metadata is given to the control-plane Machines.
	// +optional
	ObjectMeta clusterv1beta1.ObjectMeta `json:"metadata,omitempty,omitzero"`

	// infrastructureRef is the infrastructure template of the control-plane Machines. Only its
	// group (from apiVersion), kind and name are kept: v1alpha4 finds the version from the
	// template's CRD, as Cluster API's contract does.
	// +required
	InfrastructureRef corev1.ObjectReference `json:"infrastructureRef"`

	// nodeDrainTimeout is how long the Machine controller drains a Node, kept in whole seconds.
	// +optional
	NodeDrainTimeout *metav1.Duration `json:"nodeDrainTimeout,omitempty"`

	// nodeVolumeDetachTimeout is how long the Machine controller waits for volumes to detach,
	// kept in whole seconds.
	// +optional
	NodeVolumeDetachTimeout *metav1.Duration `json:"nodeVolumeDetachTimeout,omitempty"`

	// nodeDeletionTimeout is how long the Machine controller tries to delete the Node, kept in
	// whole seconds.
	// +optional
	NodeDeletionTimeout *metav1.Duration `json:"nodeDeletionTimeout,omitempty"`
}

// OpenshiftAssistedControlPlaneSpec is the v1alpha2 form of v1alpha4.OpenshiftAssistedControlPlaneSpec,
// without rollout, remediation and arbiter.
// +kubebuilder:validation:XValidation:rule="!has(self.openshiftAssistedConfigSpec) || !has(self.openshiftAssistedConfigSpec.nodeRegistration) || !has(self.openshiftAssistedConfigSpec.nodeRegistration.name) || size(self.openshiftAssistedConfigSpec.nodeRegistration.name) == 0 || self.openshiftAssistedConfigSpec.nodeRegistration.name.startsWith('$') || (has(self.replicas) && self.replicas == 1)",fieldPath=".openshiftAssistedConfigSpec.nodeRegistration.name",message="nodeRegistration.name must not be a fixed name when replicas is more than 1: every control-plane host would be installed with that same hostname; leave it unset so that each host is named after its Machine, or name a host metadata variable such as METADATA_NAME with a leading dollar sign"
type OpenshiftAssistedControlPlaneSpec struct {
	// config holds the settings of the OpenShift cluster.
	// +optional
	Config OpenshiftAssistedControlPlaneConfigSpec `json:"config,omitempty"`

	// machineTemplate describes the control-plane Machines.
	// +required
	MachineTemplate OpenshiftAssistedControlPlaneMachineTemplate `json:"machineTemplate"`

	// openshiftAssistedConfigSpec is the bootstrap config of every control-plane Machine.
	// +optional
	OpenshiftAssistedConfigSpec bootstrapv1alpha1.OpenshiftAssistedConfigSpec `json:"openshiftAssistedConfigSpec,omitempty,omitzero"`

	// replicas is the number of control-plane Machines: 1, 3, 4 or 5 (2 with v1alpha4's arbiter).
	// +optional
	// +kubebuilder:validation:XValidation:rule="self in [1, 2, 3, 4, 5]",message="replicas must be 1 (single-node OpenShift), 2 (two-node OpenShift with spec.arbiter or spec.fencing), 3, 4 or 5: OpenShift supports no other number of control-plane nodes"
	// +kubebuilder:validation:XValidation:rule="!(oldSelf == 1 && self > 1)",message="replicas cannot change from 1 to more: single-node OpenShift cannot be grown to a highly available control plane; create a new cluster with replicas 3 (add capacity to this one with workers instead)"
	// +kubebuilder:validation:XValidation:rule="!(oldSelf > 1 && self == 1)",message="replicas cannot change from 2, 3, 4 or 5 to 1: a highly available control plane cannot be reduced to a single node: etcd would lose quorum and OpenShift does not support the change; keep the replicas, or create a new single-node cluster"
	Replicas int32 `json:"replicas,omitempty"`

	// distributionVersion is the OpenShift version of the cluster, for example 4.17.3.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:XValidation:rule="self.matches('^v?(0|[1-9][0-9]*)[.](0|[1-9][0-9]*)[.](0|[1-9][0-9]*)(-[0-9A-Za-z-]+([.][0-9A-Za-z-]+)*)?([+][0-9A-Za-z-]+([.][0-9A-Za-z-]+)*)?(-(x86_64|aarch64|ppc64le|s390x|multi))?$')",message="distributionVersion must be an OpenShift version such as 4.17.3 or 4.18.0-rc.2 (major.minor.patch with an optional pre-release), optionally followed by the architecture of its release as upstream's v0.3.0-v0.3.2 wrote it (4.19.0-ec.2-x86_64)"
	DistributionVersion string `json:"distributionVersion"`
}

// OpenshiftAssistedControlPlaneConfigSpec is the v1alpha2 form of
// v1alpha4.OpenshiftAssistedControlPlaneConfigSpec, without networkType and machineNetworks (kept in
// the conversion-data annotation).
// +kubebuilder:validation:XValidation:rule="has(self.clusterName) == has(oldSelf.clusterName) && (!has(self.clusterName) || self.clusterName == oldSelf.clusterName)",message="clusterName is immutable"
// +kubebuilder:validation:XValidation:rule="has(self.apiVIPs) == has(self.ingressVIPs) && (!has(self.apiVIPs) || size(self.apiVIPs) == size(self.ingressVIPs))",message="apiVIPs and ingressVIPs must be set together, with the same number of addresses"
// +kubebuilder:validation:XValidation:rule="!has(self.clusterName) || !self.clusterName.contains('.') || !has(self.apiVIPs) || size(self.apiVIPs) == 0",fieldPath=".clusterName",messageExpression="'clusterName \"' + self.clusterName + '\" has dots, which assisted-service accepts on platform None only: with apiVIPs (the baremetal platform) the cluster name is one DNS label; remove the dots, or remove apiVIPs and ingressVIPs to install on platform None behind your own load balancer'"
type OpenshiftAssistedControlPlaneConfigSpec struct {
	// apiVIPs are the virtual IPs of the cluster's API: one address, or two for dual stack.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=2
	// +kubebuilder:validation:items:MaxLength=45
	// +kubebuilder:validation:items:XValidation:rule="isIP(self)",messageExpression="'\"' + self + '\" is not an IP address: write an IPv4 address such as 192.168.111.5 or an IPv6 address such as fd2e:6f44:5dd8::5'"
	APIVIPs []string `json:"apiVIPs,omitempty"`

	// ingressVIPs are the virtual IPs of the cluster's ingress, like apiVIPs.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=2
	// +kubebuilder:validation:items:MaxLength=45
	// +kubebuilder:validation:items:XValidation:rule="isIP(self)",messageExpression="'\"' + self + '\" is not an IP address: write an IPv4 address such as 192.168.111.4 or an IPv6 address such as fd2e:6f44:5dd8::4'"
	IngressVIPs []string `json:"ingressVIPs,omitempty"`

	// manifestsConfigMapRefs are ConfigMaps of manifests added to, or replacing, those the
	// installer generates.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=256
	ManifestsConfigMapRefs []hiveextv1beta1.ManifestsConfigMapReference `json:"manifestsConfigMapRefs,omitempty"`

	// diskEncryption configures disk encryption of the cluster's nodes.
	// +optional
	DiskEncryption *controlplanev1.DiskEncryption `json:"diskEncryption,omitempty"`

	// proxy is the cluster-wide proxy of the installed cluster.
	// +optional
	Proxy *hiveextv1beta1.Proxy `json:"proxy,omitempty"`

	// mastersSchedulable lets workloads run on control-plane nodes.
	// +optional
	MastersSchedulable bool `json:"mastersSchedulable,omitempty"`

	// sshAuthorizedKey holds the SSH public keys, one per line, installed on the cluster's nodes.
	// +optional
	// +kubebuilder:validation:MaxLength=65536
	SSHAuthorizedKey string `json:"sshAuthorizedKey,omitempty"`

	// clusterName is the OpenShift cluster's name: one DNS label, or on platform None (no
	// apiVIPs) several joined by dots, as assisted-service takes it. Defaults to the CAPI
	// Cluster's name. Immutable.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	ClusterName string `json:"clusterName,omitempty"`

	// baseDomain is the base domain of the cluster. Immutable.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="baseDomain is immutable"
	BaseDomain string `json:"baseDomain"`

	// pullSecretRef names the Secret holding the pull secret of the installation.
	// +optional
	PullSecretRef *corev1.LocalObjectReference `json:"pullSecretRef,omitempty"`

	// imageRegistryRef names a ConfigMap holding additional image registries and their CA bundles.
	// +optional
	ImageRegistryRef *corev1.LocalObjectReference `json:"imageRegistryRef,omitempty"`

	// capabilities selects the optional OpenShift capabilities to install.
	// +optional
	Capabilities controlplanev1.Capabilities `json:"capabilities,omitempty,omitzero"`
}

// OpenshiftAssistedControlPlaneStatus is upstream's v1alpha2 status, which follows the Cluster
// API v1beta1 contract. It is computed from v1alpha4's status on every read; clusterDeploymentRef
// and the failure fields are never set (v1alpha4 reports problems in conditions, and names the
// ClusterDeployment after the control plane).
type OpenshiftAssistedControlPlaneStatus struct {
	// clusterDeploymentRef was upstream's reference to the ClusterDeployment.
	// +optional
	ClusterDeploymentRef *corev1.ObjectReference `json:"clusterDeploymentRef,omitempty"`

	// selector selects the control-plane Machines, for the scale subresource.
	// +optional
	Selector string `json:"selector,omitempty"`

	// replicas is the number of non-terminated control-plane Machines.
	// +optional
	Replicas int32 `json:"replicas"`

	// version is the Kubernetes version of the control plane.
	// +optional
	Version *string `json:"version,omitempty"`

	// distributionVersion is the OpenShift version the control plane runs.
	// +optional
	DistributionVersion string `json:"distributionVersion,omitempty"`

	// updatedReplicas is v1alpha4's upToDateReplicas.
	// +optional
	UpdatedReplicas int32 `json:"updatedReplicas"`

	// readyReplicas is the number of ready control-plane Machines.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas"`

	// unavailableReplicas is replicas less v1alpha4's availableReplicas.
	// +optional
	UnavailableReplicas int32 `json:"unavailableReplicas"`

	// initialized is v1alpha4's initialization.controlPlaneInitialized.
	// +optional
	Initialized bool `json:"initialized"`

	// ready is true while v1alpha4's Available condition is True.
	// +optional
	Ready bool `json:"ready"`

	// failureReason was set by upstream on terminal problems.
	// +optional
	FailureReason *string `json:"failureReason,omitempty"`

	// failureMessage was set by upstream on terminal problems.
	// +optional
	FailureMessage *string `json:"failureMessage,omitempty"`

	// conditions are v1alpha4's conditions in the Cluster API v1beta1 form.
	// +optional
	Conditions clusterv1beta1.Conditions `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:resource:path=openshiftassistedcontrolplanes,scope=Namespaced,categories=cluster-api,shortName=oacp;oacps
// +kubebuilder:deprecatedversion:warning="controlplane.cluster.x-k8s.io/v1alpha2 OpenshiftAssistedControlPlane is deprecated; use v1alpha4"
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']",description="Cluster to which this control plane belongs"
// +kubebuilder:printcolumn:name="Initialized",type=boolean,JSONPath=".status.initialized",description="The control plane is initialized"
// +kubebuilder:printcolumn:name="API Server Available",type=boolean,JSONPath=".status.ready",description="The control plane is available"
// +kubebuilder:printcolumn:name="Desired",type=integer,JSONPath=".spec.replicas",description="Desired number of control-plane Machines",priority=10
// +kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=".status.replicas",description="Non-terminated control-plane Machines"
// +kubebuilder:printcolumn:name="Ready",type=integer,JSONPath=".status.readyReplicas",description="Ready control-plane Machines"
// +kubebuilder:printcolumn:name="Up-To-Date",type=integer,JSONPath=".status.updatedReplicas",description="Up-to-date control-plane Machines"
// +kubebuilder:printcolumn:name="Unavailable",type=integer,JSONPath=".status.unavailableReplicas",description="Unavailable control-plane Machines"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:printcolumn:name="Distribution Version",type=string,JSONPath=".spec.distributionVersion",description="OpenShift version of this control plane"

// OpenshiftAssistedControlPlane is the deprecated v1alpha2 form of
// v1alpha4.OpenshiftAssistedControlPlane.
type OpenshiftAssistedControlPlane struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is the standard object's metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec defines the desired state of OpenshiftAssistedControlPlane.
	// +optional
	Spec OpenshiftAssistedControlPlaneSpec `json:"spec,omitempty"`

	// status defines the observed state of OpenshiftAssistedControlPlane.
	// +optional
	Status OpenshiftAssistedControlPlaneStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// OpenshiftAssistedControlPlaneList contains a list of OpenshiftAssistedControlPlane.
type OpenshiftAssistedControlPlaneList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []OpenshiftAssistedControlPlane `json:"items"`
}
