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

package controllers

import (
	"slices"
	"strings"

	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/capabilities"
)

// The capabilities a cluster is installed with decide whether its control plane can change on day
// 2. The installer creates master machine.openshift.io Machines (and their BareMetalHosts) on
// platform baremetal only while the MachineAPI capability is enabled (openshift/installer
// pkg/asset/machines/master.go, case baremetaltypes.Name: "if
// !enabledCaps.Has(ClusterVersionCapabilityMachineAPI) { break }"); with those Machines Running,
// cluster-etcd-operator is in Machine API mode (pkg/operator/ceohelpers/machine_api.go
// IsFunctional) and adds no etcd member for a node that no such Machine references (see
// machineapi.go). Every control-plane Machine this provider adds (scale up, rollout, remediation)
// would never join etcd. So on platform baremetal the control plane installs with baseline None and
// every capability of the release's recommended set except MachineAPI, as upstream's provider
// does with a shorter list (controlplane/internal/controller/clusterdeployment_controller.go
// getAdditionalCapabilities, at 24cdcec); the CRD refuses a spec that would enable MachineAPI
// there. The installer accepts that: with baseline None on platform baremetal it requires the
// baremetal capability (and marketplace needs OperatorLifecycleManager, and from 4.16 Ingress is
// required: pkg/types/validation/installconfig.go), and it refuses a cluster without MachineAPI
// only in its installer-provisioned path (pkg/asset/installconfig/platformprovisioncheck.go "IPI
// requires MachineAPI capability"), while assisted-service runs "create manifests" and "create
// ignition-configs" (internal/ignition/installmanifests.go). Upstream sources with commits are in
// the research note capabilities.md.
//
// On platform None the installer creates no master Machines (master.go, case nonetypes.Name), so
// Machine API is never functional for cluster-etcd-operator and the installer's default (vCurrent)
// is kept unless the user sets capabilities.

// capabilitySetNone is the baseline capability set that enables nothing by itself.
const capabilitySetNone = "None"

// defaultBareMetalCapabilities is the recommended set of the release's minor version
// (capabilities.Recommended) without MachineAPI. A release newer than the newest set openshift/api
// names gets that newest set (capabilities it adds later stay off, as with a v4.18 baseline); an
// unparsable version the newest set too.
func defaultBareMetalCapabilities(distributionVersion string) []string {
	return slices.DeleteFunc(capabilities.Recommended(distributionVersion), func(c string) bool { return c == machineAPICapability })
}

// installCapabilities is the install-config capabilities of the cluster ("" baseline and no
// additional capabilities: none written, the installer's default). On platform baremetal a
// baseline left unset or None becomes None with defaultBareMetalCapabilities and the user's
// additional capabilities after them, without MachineAPI: the CRD refuses it there, and an object
// written through an upstream API version (v1alpha2, v1alpha3) loses it as upstream's provider
// drops it (getAdditionalCapabilities, any case). A baseline vCurrent or v4.x there (refused by the
// CRD too) is honoured as written, as upstream does: MachineAPI is then on, and the etcd check
// reports MemberNotAdded when a control-plane Machine is added.
func installCapabilities(oacp *controlplanev1.OpenshiftAssistedControlPlane) (string, []string) {
	caps := oacp.Spec.Config.Capabilities
	if platformType(oacp) != hiveextv1beta1.BareMetalPlatformType ||
		(caps.BaselineCapability != "" && caps.BaselineCapability != capabilitySetNone) {
		return caps.BaselineCapability, caps.AdditionalEnabledCapabilities
	}
	additional := defaultBareMetalCapabilities(oacp.Spec.DistributionVersion)
	for _, c := range caps.AdditionalEnabledCapabilities {
		if !strings.EqualFold(c, machineAPICapability) && !slices.Contains(additional, c) {
			additional = append(additional, c)
		}
	}
	return capabilitySetNone, additional
}
