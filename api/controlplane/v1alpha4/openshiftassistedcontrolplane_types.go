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
	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
)

const (
	// InstallConfigOverrideAnnotation holds a JSON install-config override passed to the
	// AgentClusterInstall.
	InstallConfigOverrideAnnotation = "controlplane.cluster.x-k8s.io/install-config-override"
)

// OpenshiftAssistedControlPlaneMachineTemplate describes the control-plane Machines, in the shape
// of Cluster API's v1beta2 control-plane contract (spec.machineTemplate.metadata and
// spec.machineTemplate.spec), which the topology controller writes.
type OpenshiftAssistedControlPlaneMachineTemplate struct {
	// metadata is the standard object's metadata, applied to the control-plane Machines, their
	// infrastructure and their bootstrap configs.
	// +optional
	ObjectMeta clusterv1.ObjectMeta `json:"metadata,omitempty,omitzero"`

	// spec is the spec of the control-plane Machines.
	// +required
	Spec OpenshiftAssistedControlPlaneMachineTemplateSpec `json:"spec,omitempty,omitzero"`
}

// OpenshiftAssistedControlPlaneMachineTemplateSpec is the spec of the control-plane Machines.
type OpenshiftAssistedControlPlaneMachineTemplateSpec struct {
	// infrastructureRef references the infrastructure template cloned for each control-plane
	// Machine (for example a Metal3MachineTemplate or an AgentMachineTemplate).
	// +required
	InfrastructureRef clusterv1.ContractVersionedObjectReference `json:"infrastructureRef,omitempty,omitzero"`

	// readinessGates are further conditions the control-plane Machines' Ready condition includes
	// (a Machine's spec.readinessGates), for example one an external controller sets on them.
	// Set on the Machines when they are created and when the list changes.
	// +optional
	// +listType=map
	// +listMapKey=conditionType
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	ReadinessGates []clusterv1.MachineReadinessGate `json:"readinessGates,omitempty"`

	// deletion contains options for the deletion of control-plane Machines.
	// +optional
	Deletion clusterv1.MachineDeletionSpec `json:"deletion,omitempty,omitzero"`

	// taints are the Node taints Cluster API manages on the control-plane Nodes (a Machine's
	// spec.taints; Cluster API applies them with its MachineTaintPropagation feature). Set on the
	// Machines when they are created and when the list changes.
	// +optional
	// +listType=map
	// +listMapKey=key
	// +listMapKey=effect
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	Taints []clusterv1.MachineTaint `json:"taints,omitempty"`
}

// OpenshiftAssistedControlPlaneSpec defines the desired state of OpenshiftAssistedControlPlane.
// +kubebuilder:validation:XValidation:rule="(oldSelf.hasValue() && (has(oldSelf.value().replicas) ? oldSelf.value().replicas : 1) != (has(self.replicas) ? self.replicas : 1) && ((has(oldSelf.value().replicas) ? oldSelf.value().replicas : 1) < 3 || (has(self.replicas) ? self.replicas : 1) < 3)) || (oldSelf.hasValue() && (has(oldSelf.value().arbiter) != has(self.arbiter) || has(oldSelf.value().fencing) != has(self.fencing))) || !has(self.replicas) || self.replicas != 2 || has(self.arbiter) || has(self.fencing)",optionalOldSelf=true,fieldPath=".replicas",message="replicas 2 needs spec.arbiter or spec.fencing: two-node OpenShift keeps etcd's quorum either with a third, smaller arbiter node (set spec.arbiter.machineTemplate.infrastructureRef to that host's template) or by fencing, each node powering the other off through its BMC when it fails (set spec.fencing: {}, with Metal3 hosts whose BareMetalHosts have redfish BMC addresses)"
// +kubebuilder:validation:XValidation:rule="(oldSelf.hasValue() && (has(oldSelf.value().replicas) ? oldSelf.value().replicas : 1) != (has(self.replicas) ? self.replicas : 1) && ((has(oldSelf.value().replicas) ? oldSelf.value().replicas : 1) < 3 || (has(self.replicas) ? self.replicas : 1) < 3)) || (oldSelf.hasValue() && has(oldSelf.value().arbiter) != has(self.arbiter)) || !has(self.arbiter) || (has(self.replicas) && self.replicas == 2)",optionalOldSelf=true,fieldPath=".arbiter",message="spec.arbiter is for two-node OpenShift and needs replicas 2: with 3 to 5 control-plane nodes etcd keeps quorum without an arbiter; remove spec.arbiter or set replicas to 2"
// +kubebuilder:validation:XValidation:rule="(oldSelf.hasValue() && has(oldSelf.value().arbiter) != has(self.arbiter)) || !has(self.arbiter) || (has(self.config.apiVIPs) && size(self.config.apiVIPs) > 0)",optionalOldSelf=true,fieldPath=".arbiter",message="spec.arbiter needs spec.config.apiVIPs and ingressVIPs: assisted-service installs two-node OpenShift with an arbiter on the baremetal platform only (keepalived VIPs), not behind an external load balancer"
// +kubebuilder:validation:XValidation:rule="(oldSelf.hasValue() && (has(oldSelf.value().replicas) ? oldSelf.value().replicas : 1) != (has(self.replicas) ? self.replicas : 1) && ((has(oldSelf.value().replicas) ? oldSelf.value().replicas : 1) < 3 || (has(self.replicas) ? self.replicas : 1) < 3)) || (has(self.replicas) && self.replicas != 1) || !has(self.config.apiVIPs) || size(self.config.apiVIPs) == 0",optionalOldSelf=true,fieldPath=".config.apiVIPs",message="a single-node control plane (replicas 1, also when replicas is not set) takes no apiVIPs or ingressVIPs: single-node OpenShift is installed on platform None and serves its API and ingress on the node's own address, so the VIPs would be ignored; remove them, or set replicas to 3, 4 or 5 (clusterctl generate cluster sets 1 unless --control-plane-machine-count is given)"
// +kubebuilder:validation:XValidation:rule="(oldSelf.hasValue() && has(oldSelf.value().arbiter) != has(self.arbiter)) || !has(self.config.diskEncryption) || !has(self.config.diskEncryption.enableOn) || !self.config.diskEncryption.enableOn.contains('arbiters') || has(self.arbiter)",optionalOldSelf=true,fieldPath=".config.diskEncryption.enableOn",message="diskEncryption.enableOn names arbiters but the cluster has none (spec.arbiter): use masters, workers or all"
// +kubebuilder:validation:XValidation:rule="((has(oldSelf.replicas) ? oldSelf.replicas : 1) != (has(self.replicas) ? self.replicas : 1) && ((has(oldSelf.replicas) ? oldSelf.replicas : 1) < 3 || (has(self.replicas) ? self.replicas : 1) < 3)) || has(self.arbiter) == has(oldSelf.arbiter)",fieldPath=".arbiter",message="spec.arbiter cannot be added or removed: OpenShift cannot turn two nodes with an arbiter into a control plane without one, or back; create a new cluster with the topology you want"
// +kubebuilder:validation:XValidation:rule="(oldSelf.hasValue() && (has(oldSelf.value().replicas) ? oldSelf.value().replicas : 1) != (has(self.replicas) ? self.replicas : 1) && ((has(oldSelf.value().replicas) ? oldSelf.value().replicas : 1) < 3 || (has(self.replicas) ? self.replicas : 1) < 3)) || (oldSelf.hasValue() && has(oldSelf.value().fencing) != has(self.fencing)) || !has(self.fencing) || (has(self.replicas) && self.replicas == 2)",optionalOldSelf=true,fieldPath=".fencing",message="spec.fencing is for two-node OpenShift and needs replicas 2: with 3 to 5 control-plane nodes etcd keeps quorum without fencing; remove spec.fencing or set replicas to 2"
// +kubebuilder:validation:XValidation:rule="(oldSelf.hasValue() && (has(oldSelf.value().arbiter) != has(self.arbiter) || has(oldSelf.value().fencing) != has(self.fencing))) || !has(self.fencing) || !has(self.arbiter)",optionalOldSelf=true,fieldPath=".fencing",message="spec.fencing and spec.arbiter are two different two-node topologies: keep etcd's quorum with an arbiter node or by fencing, not both; remove one of them"
// +kubebuilder:validation:XValidation:rule="(oldSelf.hasValue() && (has(oldSelf.value().fencing) != has(self.fencing) || oldSelf.value().machineTemplate.spec.infrastructureRef.kind == self.machineTemplate.spec.infrastructureRef.kind)) || !has(self.fencing) || self.machineTemplate.spec.infrastructureRef.kind == 'Metal3MachineTemplate'",optionalOldSelf=true,fieldPath=".fencing",message="spec.fencing needs Metal3 control-plane hosts (a Metal3MachineTemplate): each host's fencing credentials are its BareMetalHost's BMC address and credentials, and hosts without a BareMetalHost have none; use a Metal3MachineTemplate whose hosts have redfish BMCs, or spec.arbiter"
// +kubebuilder:validation:XValidation:rule="oldSelf.hasValue() || !has(self.fencing) || self.distributionVersion.matches('^v?(4[.](2[0-9]|[3-9][0-9]|[1-9][0-9][0-9]+)|[5-9]|[1-9][0-9]+)[.]')",optionalOldSelf=true,fieldPath=".fencing",message="spec.fencing needs OpenShift 4.20 or later (assisted-service installs two-node OpenShift with fencing from 4.20, as tech preview until 4.22): set distributionVersion to 4.20 or later, or use spec.arbiter (from 4.19)"
// +kubebuilder:validation:XValidation:rule="((has(oldSelf.replicas) ? oldSelf.replicas : 1) != (has(self.replicas) ? self.replicas : 1) && ((has(oldSelf.replicas) ? oldSelf.replicas : 1) < 3 || (has(self.replicas) ? self.replicas : 1) < 3)) || has(self.fencing) == has(oldSelf.fencing)",fieldPath=".fencing",message="spec.fencing cannot be added or removed: OpenShift cannot turn two nodes with fencing into another control-plane topology, or back; create a new cluster with the topology you want"
// +kubebuilder:validation:XValidation:rule="(oldSelf.hasValue() && (has(oldSelf.value().replicas) ? oldSelf.value().replicas : 1) != (has(self.replicas) ? self.replicas : 1) && ((has(oldSelf.value().replicas) ? oldSelf.value().replicas : 1) < 3 || (has(self.replicas) ? self.replicas : 1) < 3)) || !has(self.openshiftAssistedConfigSpec) || !has(self.openshiftAssistedConfigSpec.nodeRegistration) || !has(self.openshiftAssistedConfigSpec.nodeRegistration.name) || size(self.openshiftAssistedConfigSpec.nodeRegistration.name) == 0 || self.openshiftAssistedConfigSpec.nodeRegistration.name.startsWith('$') || (has(self.replicas) && self.replicas == 1)",optionalOldSelf=true,fieldPath=".openshiftAssistedConfigSpec.nodeRegistration.name",message="nodeRegistration.name must not be a fixed name when replicas is more than 1: every control-plane host would be installed with that same hostname; leave it unset so that each host is named after its Machine, or name a host metadata variable such as METADATA_NAME with a leading dollar sign"
// +kubebuilder:validation:XValidation:rule="(oldSelf.hasValue() && (has(oldSelf.value().replicas) ? oldSelf.value().replicas : 1) != (has(self.replicas) ? self.replicas : 1) && ((has(oldSelf.value().replicas) ? oldSelf.value().replicas : 1) < 3 || (has(self.replicas) ? self.replicas : 1) < 3)) || !has(self.openshiftAssistedConfigSpec) || !has(self.openshiftAssistedConfigSpec.nodeRegistration) || !has(self.openshiftAssistedConfigSpec.nodeRegistration.providerID) || size(self.openshiftAssistedConfigSpec.nodeRegistration.providerID) == 0 || self.openshiftAssistedConfigSpec.nodeRegistration.providerID.contains('$') || (has(self.replicas) && self.replicas == 1)",optionalOldSelf=true,fieldPath=".openshiftAssistedConfigSpec.nodeRegistration.providerID",message="nodeRegistration.providerID must not be fixed when replicas is more than 1: every control-plane host would register with that same providerID; leave it unset, or build it from a host metadata variable such as METADATA_UUID written with a leading dollar sign"
// +kubebuilder:validation:XValidation:rule="has(self.config.baseDomain)",fieldPath=".config.baseDomain",reason=FieldValueRequired,message="spec.config.baseDomain is required: the cluster's domain is api.<clusterName>.<baseDomain>"
type OpenshiftAssistedControlPlaneSpec struct {
	// config holds the settings of the OpenShift cluster (ClusterDeployment and AgentClusterInstall).
	// +required
	Config OpenshiftAssistedControlPlaneConfigSpec `json:"config"`

	// machineTemplate describes the control-plane Machines.
	// +required
	MachineTemplate OpenshiftAssistedControlPlaneMachineTemplate `json:"machineTemplate"`

	// openshiftAssistedConfigSpec is the bootstrap configuration of each control-plane Machine.
	// +optional
	OpenshiftAssistedConfigSpec bootstrapv1.OpenshiftAssistedConfigSpec `json:"openshiftAssistedConfigSpec,omitempty,omitzero"`

	// replicas is the number of control-plane nodes: 1 for single-node OpenShift, 2 for two-node
	// OpenShift with an arbiter (spec.arbiter, which adds the arbiter node) or with fencing
	// (spec.fencing), or 3, 4 or 5.
	// A highly available control plane (3, 4 or 5) scales between 3, 4 and 5; it cannot become a
	// single node, nor can single-node OpenShift grow to more control-plane nodes, nor can a
	// two-node cluster change its number: OpenShift supports none of these
	// (create a new cluster instead). This holds for the scale subresource too.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:XValidation:rule="self in [1, 2, 3, 4, 5]",message="replicas must be 1 (single-node OpenShift), 2 (two-node OpenShift with spec.arbiter or spec.fencing), 3, 4 or 5: OpenShift supports no other number of control-plane nodes"
	// +kubebuilder:validation:XValidation:rule="!(oldSelf == 1 && self > 1)",message="replicas cannot change from 1 to more: single-node OpenShift cannot be grown to a highly available control plane; create a new cluster with replicas 3 (add capacity to this one with workers instead)"
	// +kubebuilder:validation:XValidation:rule="!(oldSelf > 1 && self == 1)",message="replicas cannot change from 2, 3, 4 or 5 to 1: a highly available control plane cannot be reduced to a single node: etcd would lose quorum and OpenShift does not support the change; keep the replicas, or create a new single-node cluster"
	// +kubebuilder:validation:XValidation:rule="!(oldSelf > 2 && self == 2)",message="replicas cannot change from 3, 4 or 5 to 2: a highly available control plane cannot become two-node OpenShift, which is installed with its arbiter or its fencing; keep 3, 4 or 5, or create a new cluster with replicas 2 and spec.arbiter or spec.fencing"
	// +kubebuilder:validation:XValidation:rule="!(oldSelf == 2 && self > 2)",message="replicas cannot change from 2 to 3, 4 or 5: two-node OpenShift (with an arbiter or with fencing) cannot grow its control plane; create a new cluster with replicas 3 (add capacity to this one with workers instead)"
	Replicas *int32 `json:"replicas,omitempty"`

	// distributionVersion is the OpenShift version of the cluster, for example 4.17.3 or 4.18.0-rc.2.
	// Changing it upgrades the cluster. It may end with the architecture of the release, as
	// upstream's v0.3.0 to v0.3.2 wrote it (4.19.0-ec.2-x86_64): that architecture's release is
	// installed, and the machines' cpuArchitecture must be the same (or the suffix multi).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:XValidation:rule="self.matches('^v?(0|[1-9][0-9]*)[.](0|[1-9][0-9]*)[.](0|[1-9][0-9]*)(-[0-9A-Za-z-]+([.][0-9A-Za-z-]+)*)?([+][0-9A-Za-z-]+([.][0-9A-Za-z-]+)*)?(-(x86_64|aarch64|ppc64le|s390x|multi))?$')",message="distributionVersion must be an OpenShift version such as 4.17.3 or 4.18.0-rc.2 (major.minor.patch with an optional pre-release), optionally followed by the architecture of its release as upstream's v0.3.0-v0.3.2 wrote it (4.19.0-ec.2-x86_64)"
	DistributionVersion string `json:"distributionVersion"`

	// version is the Kubernetes version of the control plane, as Cluster API's topology sets it
	// (Cluster spec.topology.version). It is optional: OpenShift's Kubernetes version follows from
	// distributionVersion. When set, it must be the Kubernetes version that distributionVersion's
	// release carries; else nothing is installed or upgraded, and ReleaseImageResolved says so.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:XValidation:rule="self.matches('^v?(0|[1-9][0-9]*)[.](0|[1-9][0-9]*)[.](0|[1-9][0-9]*)([-+][0-9A-Za-z.+-]+)?$')",message="version must be a Kubernetes version such as v1.31.6"
	Version string `json:"version,omitempty"`

	// rollout controls the replacement of control-plane Machines.
	// +optional
	Rollout OpenshiftAssistedControlPlaneRolloutSpec `json:"rollout,omitempty,omitzero"`

	// remediation controls how unhealthy control-plane Machines, marked so by a
	// MachineHealthCheck, are replaced.
	// +optional
	Remediation OpenshiftAssistedControlPlaneRemediationSpec `json:"remediation,omitempty,omitzero"`

	// arbiter makes the cluster two-node OpenShift with an arbiter (TNA): with replicas 2, a third
	// control-plane Machine, the arbiter, whose smaller host runs etcd and the control plane's
	// critical components only, so that etcd keeps quorum when one of the two nodes fails. Needs
	// a hub whose assisted-service supports arbiter clusters (its AgentClusterInstall has
	// spec.provisionRequirements.arbiterAgents; tech preview from OpenShift 4.19) and API and
	// ingress VIPs (the baremetal platform). It cannot be added to or removed from a cluster.
	// +optional
	Arbiter *OpenshiftAssistedControlPlaneArbiterSpec `json:"arbiter,omitempty"`

	// fencing makes the cluster two-node OpenShift with fencing (TNF): with replicas 2 and no
	// arbiter, etcd keeps serving when one node fails because the survivor's pacemaker powers the
	// failed node off through its BMC (fence_redfish) and carries on as a single etcd member, which
	// the returning node joins again. Each control-plane host's fencing credentials are its
	// BareMetalHost's BMC address (a redfish address) and credentials Secret, copied by the
	// bootstrap provider into a Secret beside the host's Agent (Agent spec.fencingCredentialsSecretRef).
	// Needs Metal3 hosts (a Metal3MachineTemplate), OpenShift 4.20 or later (tech preview until
	// 4.22), and a hub whose assisted-service supports it (its Agent CRD has
	// spec.fencingCredentialsSecretRef and it runs with TNF_CLUSTERS_SUPPORT=true). It cannot be
	// added to or removed from a cluster, nor combined with spec.arbiter.
	// +optional
	Fencing *OpenshiftAssistedControlPlaneFencingSpec `json:"fencing,omitempty"`
}

// DiskEncryption configures disk encryption of the cluster's nodes: the AgentClusterInstall's
// spec.diskEncryption, with the values of assisted-service releases newer than the Go types this
// project pins (the arbiter roles and role combinations; api/hiveextension/v1beta1 DiskEncryption).
type DiskEncryption struct {
	// enableOn says which nodes are encrypted: none, all, or their roles (masters, arbiters,
	// workers, in that order, comma-separated). A hub whose assisted-service predates the
	// combinations and arbiters refuses them, which the control plane reports.
	// +optional
	// +kubebuilder:default=none
	// +kubebuilder:validation:Enum=none;all;masters;arbiters;workers;"masters,arbiters";"masters,workers";"arbiters,workers";"masters,arbiters,workers"
	EnableOn *string `json:"enableOn,omitempty"`

	// mode is the disk encryption mode: tpmv2 or tang.
	// +optional
	// +kubebuilder:validation:Enum=tpmv2;tang
	Mode *string `json:"mode,omitempty"`

	// tangServers is a JSON list of the tang servers ({"url", "thumbprint"} objects), for mode tang.
	// +optional
	TangServers string `json:"tangServers,omitempty"`
}

// FencingCredentialsSource says where the fencing credentials of two-node OpenShift's hosts come from.
// +kubebuilder:validation:Enum=BareMetalHost
type FencingCredentialsSource string

// FencingCredentialsFromBareMetalHost takes them from each control-plane host's BareMetalHost (spec.bmc.address,
// spec.bmc.credentialsName and spec.bmc.disableCertificateVerification).
const FencingCredentialsFromBareMetalHost FencingCredentialsSource = "BareMetalHost"

// OpenshiftAssistedControlPlaneFencingSpec describes the fencing of two-node OpenShift with fencing.
type OpenshiftAssistedControlPlaneFencingSpec struct {
	// credentialsFrom says where each control-plane host's fencing credentials (its BMC's redfish
	// address, username, password and whether its certificate is verified) come from:
	// BareMetalHost, the only source, reads them from the host's BareMetalHost.
	// +optional
	// +kubebuilder:default=BareMetalHost
	CredentialsFrom FencingCredentialsSource `json:"credentialsFrom,omitempty"`
}

// OpenshiftAssistedControlPlaneArbiterSpec describes the arbiter node of two-node OpenShift.
type OpenshiftAssistedControlPlaneArbiterSpec struct {
	// machineTemplate describes the arbiter's Machine, as spec.machineTemplate describes the
	// control-plane Machines: its infrastructure template names the smaller host. The arbiter
	// is installed with spec.openshiftAssistedConfigSpec, like the other control-plane nodes.
	// +required
	MachineTemplate OpenshiftAssistedControlPlaneMachineTemplate `json:"machineTemplate"`
}

// The rules on the VIPs (here and on the apiVIPs and ingressVIPs fields) use the CEL IP library
// (isIP, ip), which the API server accepts in new rules from Kubernetes 1.31 on (it came in 1.30).
// The VIPs' families and order are checked against the Cluster's networks by the controller (a
// CRD rule cannot see the Cluster): condition Available False, reason InvalidSpec.

// OpenshiftAssistedControlPlaneConfigSpec holds the settings of the OpenShift cluster.
// +kubebuilder:validation:XValidation:rule="has(self.clusterName) == has(oldSelf.clusterName) && (!has(self.clusterName) || self.clusterName == oldSelf.clusterName)",message="clusterName is immutable"
// +kubebuilder:validation:XValidation:rule="has(self.apiVIPs) == has(self.ingressVIPs) && (!has(self.apiVIPs) || size(self.apiVIPs) == size(self.ingressVIPs))",message="apiVIPs and ingressVIPs must be set together, with the same number of addresses"
// +kubebuilder:validation:XValidation:rule="!has(self.clusterName) || !self.clusterName.contains('.') || !has(self.apiVIPs) || size(self.apiVIPs) == 0",fieldPath=".clusterName",messageExpression="'clusterName \"' + self.clusterName + '\" has dots, which assisted-service accepts on platform None only: with apiVIPs (the baremetal platform) the cluster name is one DNS label; remove the dots, or remove apiVIPs and ingressVIPs to install on platform None behind your own load balancer'"
// +kubebuilder:validation:XValidation:rule="!has(self.apiVIPs) || !has(self.ingressVIPs) || size(self.apiVIPs) != size(self.ingressVIPs) || ((size(self.apiVIPs) < 1 || !isIP(self.apiVIPs[0]) || !isIP(self.ingressVIPs[0]) || ip(self.apiVIPs[0]).family() == ip(self.ingressVIPs[0]).family()) && (size(self.apiVIPs) < 2 || !isIP(self.apiVIPs[1]) || !isIP(self.ingressVIPs[1]) || ip(self.apiVIPs[1]).family() == ip(self.ingressVIPs[1]).family()))",fieldPath=".ingressVIPs",message="ingressVIPs must list the same IP families as apiVIPs, in the same order (an IPv4 ingress VIP where the API VIP is IPv4, an IPv6 one where it is IPv6)"
// +kubebuilder:validation:XValidation:rule="(oldSelf.hasValue() && has(oldSelf.value().capabilities) == has(self.capabilities) && (!has(self.capabilities) || oldSelf.value().capabilities == self.capabilities)) || !has(self.apiVIPs) || size(self.apiVIPs) == 0 || !has(self.capabilities) || ((!has(self.capabilities.baselineCapability) || self.capabilities.baselineCapability == 'None') && (!has(self.capabilities.additionalEnabledCapabilities) || !self.capabilities.additionalEnabledCapabilities.exists(c, c == 'MachineAPI')))",optionalOldSelf=true,fieldPath=".capabilities",message="capabilities must leave MachineAPI out on a cluster with apiVIPs (platform baremetal): with it the installer creates master machine.openshift.io Machines, and cluster-etcd-operator then adds no etcd member for a control-plane node that no such Machine references, so scaling, rollouts and remediation never complete; leave baselineCapability unset or None (the control plane enables the release's default capabilities except MachineAPI) and remove MachineAPI from additionalEnabledCapabilities"
// +kubebuilder:validation:XValidation:rule="!has(self.machineNetworks) || !has(self.apiVIPs) || size(self.apiVIPs) < 2 || size(self.machineNetworks) == 2",fieldPath=".machineNetworks",message="two apiVIPs (dual stack) need two machineNetworks, one per IP family in the order of the VIPs: add the machine network of the other family, or remove machineNetworks to have none written (assisted-service refuses a dual-stack cluster without them)"
// +kubebuilder:validation:XValidation:rule="!has(self.machineNetworks) || !has(self.apiVIPs) || (size(self.apiVIPs) <= 0 || size(self.machineNetworks) <= 0 || !isIP(self.apiVIPs[0]) || !isCIDR(self.machineNetworks[0]) || cidr(self.machineNetworks[0]).containsIP(self.apiVIPs[0])) && (size(self.apiVIPs) <= 1 || size(self.machineNetworks) <= 1 || !isIP(self.apiVIPs[1]) || !isCIDR(self.machineNetworks[1]) || cidr(self.machineNetworks[1]).containsIP(self.apiVIPs[1]))",fieldPath=".apiVIPs",message="each API VIP must be inside the machine network at its position (apiVIPs[0] in machineNetworks[0], apiVIPs[1] in machineNetworks[1]), as assisted-service checks: correct the VIP, or the machine network and its order"
// +kubebuilder:validation:XValidation:rule="!has(self.machineNetworks) || !has(self.ingressVIPs) || (size(self.ingressVIPs) <= 0 || size(self.machineNetworks) <= 0 || !isIP(self.ingressVIPs[0]) || !isCIDR(self.machineNetworks[0]) || cidr(self.machineNetworks[0]).containsIP(self.ingressVIPs[0])) && (size(self.ingressVIPs) <= 1 || size(self.machineNetworks) <= 1 || !isIP(self.ingressVIPs[1]) || !isCIDR(self.machineNetworks[1]) || cidr(self.machineNetworks[1]).containsIP(self.ingressVIPs[1]))",fieldPath=".ingressVIPs",message="each ingress VIP must be inside the machine network at its position (ingressVIPs[0] in machineNetworks[0], ingressVIPs[1] in machineNetworks[1]), as assisted-service checks: correct the VIP, or the machine network and its order"
// +kubebuilder:validation:XValidation:rule="!has(self.networkType) || self.networkType != 'OpenShiftSDN' || ((!has(self.apiVIPs) || self.apiVIPs.all(v, !isIP(v) || ip(v).family() == 4)) && (!has(self.machineNetworks) || self.machineNetworks.all(n, !isCIDR(n) || cidr(n).ip().family() == 4)))",fieldPath=".networkType",message="networkType OpenShiftSDN does not support IPv6 (assisted-service and the OpenShift installer refuse it): use OVNKubernetes (the default) for an IPv6 or dual-stack cluster"
type OpenshiftAssistedControlPlaneConfigSpec struct {
	// apiVIPs are the virtual IPs of the cluster's API: one address, or two for dual stack (one
	// per IP family, in the order of the cluster's networks). Unset for single-node OpenShift and
	// for clusters with an external load balancer (platform None).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=2
	// +kubebuilder:validation:items:MaxLength=45
	// +kubebuilder:validation:items:XValidation:rule="isIP(self)",messageExpression="'\"' + self + '\" is not an IP address: write an IPv4 address such as 192.168.111.5 or an IPv6 address such as fd2e:6f44:5dd8::5'"
	// +kubebuilder:validation:XValidation:rule="size(self) < 2 || !isIP(self[0]) || !isIP(self[1]) || ip(self[0]).family() != ip(self[1]).family()",message="two apiVIPs must be one IPv4 and one IPv6 address (dual stack, in the order of the cluster's networks); for a single-stack cluster give one address"
	APIVIPs []string `json:"apiVIPs,omitempty"`

	// ingressVIPs are the virtual IPs of the cluster's ingress, like apiVIPs.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=2
	// +kubebuilder:validation:items:MaxLength=45
	// +kubebuilder:validation:items:XValidation:rule="isIP(self)",messageExpression="'\"' + self + '\" is not an IP address: write an IPv4 address such as 192.168.111.4 or an IPv6 address such as fd2e:6f44:5dd8::4'"
	// +kubebuilder:validation:XValidation:rule="size(self) < 2 || !isIP(self[0]) || !isIP(self[1]) || ip(self[0]).family() != ip(self[1]).family()",message="two ingressVIPs must be one IPv4 and one IPv6 address (dual stack, in the order of the cluster's networks); for a single-stack cluster give one address"
	IngressVIPs []string `json:"ingressVIPs,omitempty"`

	// machineNetworks are the networks of the cluster's hosts, as CIDRs: one, or two for dual
	// stack (one IPv4 and one IPv6, in the order of the Cluster's pod and service networks), as
	// the AgentClusterInstall's spec.networking.machineNetwork. assisted-service needs them for a
	// dual-stack cluster with apiVIPs; a single-stack cluster may leave them unset, and
	// assisted-service then takes the network of the hosts' interface that holds the API VIP
	// (single-node OpenShift: the hosts' only network of the cluster's family). Each VIP must be
	// inside the machine network at its position, and every host must have an address in each.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=2
	// +kubebuilder:validation:items:MaxLength=43
	// +kubebuilder:validation:items:XValidation:rule="isCIDR(self)",messageExpression="'\"' + self + '\" is not a network: write a CIDR such as 192.168.111.0/24 or fd2e:6f44:5dd8:c956::/64'"
	// +kubebuilder:validation:XValidation:rule="size(self) < 2 || !isCIDR(self[0]) || !isCIDR(self[1]) || cidr(self[0]).ip().family() != cidr(self[1]).ip().family()",message="two machineNetworks must be one IPv4 and one IPv6 network (dual stack, in the order of the cluster's networks); a single-stack cluster has one machine network"
	MachineNetworks []string `json:"machineNetworks,omitempty"`

	// manifestsConfigMapRefs are ConfigMaps of manifests added to, or replacing, those the
	// installer generates. Manifest names must be unique across the ConfigMaps.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=256
	ManifestsConfigMapRefs []hiveextv1beta1.ManifestsConfigMapReference `json:"manifestsConfigMapRefs,omitempty"`

	// diskEncryption configures disk encryption of the cluster's nodes.
	// +optional
	DiskEncryption *DiskEncryption `json:"diskEncryption,omitempty"`

	// proxy is the cluster-wide proxy of the installed cluster.
	// +optional
	Proxy *hiveextv1beta1.Proxy `json:"proxy,omitempty"`

	// mastersSchedulable lets workloads run on control-plane nodes.
	// +optional
	MastersSchedulable bool `json:"mastersSchedulable,omitempty"`

	// networkType is the cluster network plug-in. Defaults to OVNKubernetes.
	// +optional
	// +kubebuilder:validation:Enum=OpenShiftSDN;OVNKubernetes;CiscoACI;Cilium;Calico;None
	NetworkType string `json:"networkType,omitempty"`

	// sshAuthorizedKey holds the SSH public keys, one per line, installed on the cluster's nodes.
	// +optional
	// +kubebuilder:validation:MaxLength=65536
	SSHAuthorizedKey string `json:"sshAuthorizedKey,omitempty"`

	// clusterName is the OpenShift cluster's name, the start of its domain
	// (api.<clusterName>.<baseDomain>): one DNS label, or on platform None (no apiVIPs) several
	// joined by dots, as assisted-service takes it. Defaults to the CAPI Cluster's name. Immutable.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	ClusterName string `json:"clusterName,omitempty"`

	// baseDomain is the base domain of the cluster. Immutable. A control plane must have one; an
	// OpenshiftAssistedControlPlaneTemplate may leave it to its ClusterClass's patches.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="baseDomain is immutable"
	BaseDomain string `json:"baseDomain,omitempty"`

	// pullSecretRef names the Secret, in the control plane's namespace, holding the pull secret
	// of the installation (key .dockerconfigjson).
	// +optional
	PullSecretRef *corev1.LocalObjectReference `json:"pullSecretRef,omitempty"`

	// imageRegistryRef names a ConfigMap, in the control plane's namespace, holding the image
	// mirrors of the installed cluster: key registries.conf (containers-registries.conf format:
	// [[registry]] location with [[registry.mirror]] location, insecure, pull-from-mirror) and,
	// optionally, key ca-bundle.crt (PEM certificates of the mirrors). The control plane turns it
	// into manifests of the installed cluster (an ImageDigestMirrorSet, an ImageTagMirrorSet for
	// tag-only mirrors, the CA and image.config.openshift.io/cluster trusting it and listing the
	// insecure mirrors), as upstream's provider does, and keeps them in step with the ConfigMap until
	// the installation starts. A missing or unusable ConfigMap holds the installation back
	// (Available False, reason ImageRegistryInvalid).
	// +optional
	ImageRegistryRef *corev1.LocalObjectReference `json:"imageRegistryRef,omitempty"`

	// capabilities selects the optional OpenShift capabilities to install.
	// On platform baremetal (apiVIPs set) the cluster is installed with baseline None and the
	// release's default capabilities (its v4.<minor> set) except MachineAPI, followed by
	// additionalEnabledCapabilities: with MachineAPI the installer creates master
	// machine.openshift.io Machines, and cluster-etcd-operator would then add no etcd member for the
	// control-plane nodes this provider adds. A baseline other than None, or MachineAPI, is refused
	// there (through upstream's versions v1alpha2 and v1alpha3, MachineAPI is dropped there, as
	// upstream's provider drops it, and another baseline is installed as written). Without apiVIPs (single node, external load balancer: platform None, where the
	// installer creates no such Machines) the values are passed to the installer as written, and
	// unset means the installer's default (vCurrent).
	// +optional
	Capabilities Capabilities `json:"capabilities,omitempty,omitzero"`
}

// Capabilities selects the optional OpenShift capabilities to install.
type Capabilities struct {
	// baselineCapability is the baseline capability set: None, vCurrent or v4.x.
	// +optional
	// +kubebuilder:validation:Pattern=`^(None|vCurrent|v4\.[0-9]+)$`
	BaselineCapability string `json:"baselineCapability,omitempty"`

	// additionalEnabledCapabilities are capabilities enabled on top of the baseline.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=256
	AdditionalEnabledCapabilities []string `json:"additionalEnabledCapabilities,omitempty"`
}

// OpenshiftAssistedControlPlaneInitializationStatus provides observations of the control plane's
// initialization.
// +kubebuilder:validation:MinProperties=1
type OpenshiftAssistedControlPlaneInitializationStatus struct {
	// controlPlaneInitialized is true when the control plane accepts requests: for OpenShift, when
	// the assisted installer reports the cluster installed and its kubeconfig is available.
	// NOTE: this field is part of the Cluster API contract.
	// +optional
	ControlPlaneInitialized *bool `json:"controlPlaneInitialized,omitempty"`
}

// OpenshiftAssistedControlPlaneStatus defines the observed state of OpenshiftAssistedControlPlane.
type OpenshiftAssistedControlPlaneStatus struct {
	// conditions represent the observations of the control plane's current state. Known condition
	// types are Available, KubeconfigAvailable, MachinesReady, MachinesUpToDate, ScalingUp,
	// ScalingDown, RollingOut, Upgrading, Deleting and Paused.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// initialization provides observations of the control plane's initialization.
	// NOTE: fields in this struct are part of the Cluster API contract.
	// +optional
	Initialization OpenshiftAssistedControlPlaneInitializationStatus `json:"initialization,omitempty,omitzero"`

	// selector is the label selector of the control-plane Machines that spec.replicas counts (all
	// but the arbiter), in string form, for the scale subresource.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	Selector string `json:"selector,omitempty"`

	// replicas is the number of non-terminated control-plane Machines. These counts, like
	// spec.replicas, leave out the arbiter Machine of two-node OpenShift (spec.arbiter); the
	// MachinesReady and EtcdClusterHealthy conditions cover it.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// readyReplicas is the number of control-plane Machines whose Ready condition is true.
	// +optional
	ReadyReplicas *int32 `json:"readyReplicas,omitempty"`

	// availableReplicas is the number of control-plane Machines whose Available condition is true.
	// +optional
	AvailableReplicas *int32 `json:"availableReplicas,omitempty"`

	// upToDateReplicas is the number of control-plane Machines whose UpToDate condition is true.
	// +optional
	UpToDateReplicas *int32 `json:"upToDateReplicas,omitempty"`

	// version is the Kubernetes version of the control plane: the lowest among its Machines.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Version string `json:"version,omitempty"`

	// distributionVersion is the OpenShift version the cluster runs.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	DistributionVersion string `json:"distributionVersion,omitempty"`

	// observedGeneration is the latest generation observed by the controller.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:storageversion
// +kubebuilder:resource:path=openshiftassistedcontrolplanes,scope=Namespaced,categories=cluster-api,shortName=oacp;oacps
// +kubebuilder:metadata:labels="cluster.x-k8s.io/v1beta2=v1alpha4"
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']",description="Cluster to which this control plane belongs"
// +kubebuilder:printcolumn:name="Initialized",type="boolean",JSONPath=".status.initialization.controlPlaneInitialized",description="The control plane is initialized"
// +kubebuilder:printcolumn:name="Desired",type="integer",JSONPath=".spec.replicas",description="Desired number of control-plane Machines",priority=10
// +kubebuilder:printcolumn:name="Replicas",type="integer",JSONPath=".status.replicas",description="Non-terminated control-plane Machines"
// +kubebuilder:printcolumn:name="Ready",type="integer",JSONPath=".status.readyReplicas",description="Ready control-plane Machines"
// +kubebuilder:printcolumn:name="Up-To-Date",type="integer",JSONPath=".status.upToDateReplicas",description="Up-to-date control-plane Machines"
// +kubebuilder:printcolumn:name="Available",type="integer",JSONPath=".status.availableReplicas",description="Available control-plane Machines"
// +kubebuilder:printcolumn:name="Version",type="string",JSONPath=".spec.distributionVersion",description="Desired OpenShift version"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"

// OpenshiftAssistedControlPlane is the control plane of an OpenShift cluster installed by the
// assisted installer: it drives the ClusterDeployment, the AgentClusterInstall and the
// control-plane Machines.
type OpenshiftAssistedControlPlane struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is the standard object's metadata.
	// More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec defines the desired state of OpenshiftAssistedControlPlane.
	// +optional
	Spec OpenshiftAssistedControlPlaneSpec `json:"spec,omitempty"`

	// status defines the observed state of OpenshiftAssistedControlPlane.
	// +optional
	Status OpenshiftAssistedControlPlaneStatus `json:"status,omitempty"`
}

// GetConditions returns the conditions of the control plane.
func (cp *OpenshiftAssistedControlPlane) GetConditions() []metav1.Condition {
	return cp.Status.Conditions
}

// SetConditions sets the conditions of the control plane.
func (cp *OpenshiftAssistedControlPlane) SetConditions(conditions []metav1.Condition) {
	cp.Status.Conditions = conditions
}

// +kubebuilder:object:root=true

// OpenshiftAssistedControlPlaneList contains a list of OpenshiftAssistedControlPlane.
type OpenshiftAssistedControlPlaneList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []OpenshiftAssistedControlPlane `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &OpenshiftAssistedControlPlane{}, &OpenshiftAssistedControlPlaneList{})
}

// ReleaseImageRepository is the release image repository the control plane's annotations set
// (ReleaseImageRepositoryAnnotation, else upstream's UpstreamReleaseImageRepositoryAnnotation),
// "" for the default.
func (cp *OpenshiftAssistedControlPlane) ReleaseImageRepository() string {
	if v := cp.Annotations[ReleaseImageRepositoryAnnotation]; v != "" {
		return v
	}
	return cp.Annotations[UpstreamReleaseImageRepositoryAnnotation]
}
