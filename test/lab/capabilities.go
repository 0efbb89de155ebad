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

package lab

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	configv1 "github.com/openshift/api/config/v1"
	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/assisted"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/cvo"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/machineapi"
)

// installConfigOverrides is the AgentClusterInstall annotation whose JSON assisted-service merges
// into the install-config (openshift/assisted-service api/hiveextension/v1beta1, "install-config
// overrides"; internal/cluster/capabilities.go reads its capabilities).
const installConfigOverrides = "agent-install.openshift.io/install-config-overrides"

// installCapabilities reads the install-config capabilities of an AgentClusterInstall (nil: none
// given, the installer's default vCurrent).
func installCapabilities(aci *hiveextv1beta1.AgentClusterInstall) (*configv1.ClusterVersionCapabilitiesSpec, error) {
	raw := aci.Annotations[installConfigOverrides]
	if raw == "" {
		return nil, nil
	}
	var ic struct {
		Capabilities *configv1.ClusterVersionCapabilitiesSpec `json:"capabilities"`
	}
	if err := json.Unmarshal([]byte(raw), &ic); err != nil {
		return nil, fmt.Errorf("reading the install-config overrides of AgentClusterInstall %s: %w", aci.Name, err)
	}
	return ic.Capabilities, nil
}

// installedCapabilities leaves the workload cluster as the installer and the cluster-version
// operator leave it for the install-config's capabilities: the ClusterVersion records them
// (cvo.EnsureCapabilities), and on platform baremetal with the MachineAPI capability the installer's
// master machine.openshift.io Machines exist, Running, one per control-plane node of the
// installation (machineapi.EnsureInstallerMachines), which puts cluster-etcd-operator in Machine API
// mode (the lab's etcd simulator then adds no member for a node no such Machine references).
func installedCapabilities(ctx context.Context, c assisted.InstalledCluster, version string) error {
	aci := c.AgentClusterInstall
	spec, err := installCapabilities(aci)
	if err != nil {
		return err
	}
	if err := cvo.EnsureCapabilities(ctx, c.Workload, version, spec); err != nil {
		return err
	}
	if aci.Spec.PlatformType != hiveextv1beta1.BareMetalPlatformType ||
		!slices.Contains(cvo.EnabledCapabilities(version, spec), machineapi.Capability) || c.WorkloadConfig == nil {
		return nil
	}
	if err := machineapi.InstallCRD(ctx, c.WorkloadConfig); err != nil {
		return err
	}
	nodes := &corev1.NodeList{}
	if err := c.Workload.List(ctx, nodes, client.HasLabels{"node-role.kubernetes.io/master"}); err != nil {
		return fmt.Errorf("listing the control-plane Nodes: %w", err)
	}
	infraID := aci.Name
	if md := aci.Spec.ClusterMetadata; md != nil && md.InfraID != "" {
		infraID = md.InfraID
	}
	return machineapi.EnsureInstallerMachines(ctx, c.Workload, infraID, nodes.Items)
}
