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
	"encoding/json"
	"fmt"
	"maps"
	"strings"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	"github.com/openshift/assisted-service/models"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	capoavalidation "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/validation"
)

// metal3ProviderIDLabel is the Node label from which CAPM3 derives a Node's providerID when the
// kubelet does not set one: CAPM3 finds the Node labelled metal3.io/uuid=<BareMetalHost UID>
// (baremetal.ProviderLabelPrefix in CAPM3).
const metal3ProviderIDLabel = "metal3.io/uuid"

// agentSettings are what the controller sets on a recognized Agent.
type agentSettings struct {
	Role                    models.HostRole
	Hostname                string
	InstallationDiskID      string
	IgnitionConfigOverrides string
	// NodeLabels are merged into the Agent's nodeLabels (others are kept).
	NodeLabels map[string]string
	// Labels are merged into the Agent's labels.
	Labels map[string]string
}

// staticHostname is the hostname the Machine's host is installed with when the hub knows it
// before the host is chosen: nodeRegistration.name, else the Machine's name; "" when the name is
// a host metadata variable (resolved once the host is known, see metadata.go).
func staticHostname(config *bootstrapv1.OpenshiftAssistedConfig, machine *clusterv1.Machine) string {
	if _, ok := variable(config.Spec.NodeRegistration.Name); ok {
		return ""
	}
	if config.Spec.NodeRegistration.Name != "" {
		return config.Spec.NodeRegistration.Name
	}
	return machine.Name
}

// hostRoleArbiter is assisted-service's host role of the arbiter node of two-node OpenShift
// (models.HostRoleArbiter in assisted-service from 2025, docs/enhancements/arbiter-clusters.md;
// the models this project pins predate it).
const hostRoleArbiter models.HostRole = "arbiter"

// role is master for control-plane Machines (the cluster.x-k8s.io/control-plane label), arbiter
// for the arbiter Machine of two-node OpenShift (also labelled controlplane.cluster.x-k8s.io/arbiter
// by the control plane), worker otherwise.
func role(machine *clusterv1.Machine) models.HostRole {
	switch {
	case !util.IsControlPlaneMachine(machine):
		return models.HostRoleWorker
	case metav1.HasLabel(machine.ObjectMeta, controlplanev1.ArbiterMachineLabel):
		return hostRoleArbiter
	}
	return models.HostRoleMaster
}

// desiredAgentSettings maps the config, its Machine and, with Metal3, its BareMetalHost and the
// host's metadata variables (nil otherwise) onto the settings of the Machine's Agent.
func desiredAgentSettings(config *bootstrapv1.OpenshiftAssistedConfig, machine *clusterv1.Machine,
	bmh *bmov1alpha1.BareMetalHost, env map[string]string, agent *aiv1beta1.Agent) (agentSettings, error) {
	name, err := resolvedHostname(config, machine.Name, env)
	if err != nil {
		return agentSettings{}, err
	}
	providerID, err := resolvedProviderID(config, machine, env)
	if err != nil {
		return agentSettings{}, err
	}
	overrides, err := installIgnitionOverride(config, providerID)
	if err != nil {
		return agentSettings{}, err
	}
	s := agentSettings{
		Role:                    role(machine),
		Hostname:                name,
		IgnitionConfigOverrides: overrides,
		NodeLabels:              map[string]string{},
		Labels: map[string]string{
			bootstrapv1.AgentConfigLabel: config.Name,
			clusterv1.ClusterNameLabel:   machine.Spec.ClusterName,
		},
	}
	for _, kv := range config.Spec.NodeRegistration.KubeletExtraLabels {
		k, v, _ := strings.Cut(kv, "=")
		if k == "" {
			return s, fmt.Errorf("nodeRegistration.kubeletExtraLabels entry %q has no key (want key=value)", kv)
		}
		if v, err = expand(capoavalidation.KubeletLabelValue(v), env); err != nil {
			return s, fmt.Errorf("nodeRegistration.kubeletExtraLabels entry %q: %w", kv, err)
		}
		if msgs := validation.IsValidLabelValue(v); len(msgs) > 0 {
			return s, fmt.Errorf("nodeRegistration.kubeletExtraLabels entry %q resolves to %q, which is not a label value: %s", kv, v, strings.Join(msgs, "; "))
		}
		s.NodeLabels[k] = v
	}
	if bmh != nil {
		s.NodeLabels[metal3ProviderIDLabel] = string(bmh.UID)
		if hints := bmh.Spec.RootDeviceHints; hints != nil {
			disk, err := diskMatchingHints(agent.Status.Inventory.Disks, hints)
			if err != nil {
				return s, fmt.Errorf("BareMetalHost %s rootDeviceHints: %w", bmh.Name, err)
			}
			s.InstallationDiskID = disk
		}
	}
	return s, nil
}

// applyAgentSettings sets s on agent and approves it.
func applyAgentSettings(agent *aiv1beta1.Agent, s agentSettings) {
	agent.Spec.Role = s.Role
	agent.Spec.Hostname = s.Hostname
	if s.InstallationDiskID != "" {
		agent.Spec.InstallationDiskID = s.InstallationDiskID
	}
	agent.Spec.IgnitionConfigOverrides = s.IgnitionConfigOverrides
	if len(s.NodeLabels) > 0 {
		if agent.Spec.NodeLabels == nil {
			agent.Spec.NodeLabels = map[string]string{}
		}
		maps.Copy(agent.Spec.NodeLabels, s.NodeLabels)
	}
	if agent.Labels == nil {
		agent.Labels = map[string]string{}
	}
	maps.Copy(agent.Labels, s.Labels)
	agent.Spec.Approved = true
}

// releaseAgent unapproves agent and removes the labels this provider set on it.
func releaseAgent(agent *aiv1beta1.Agent) {
	agent.Spec.Approved = false
	delete(agent.Labels, bootstrapv1.AgentConfigLabel)
	delete(agent.Labels, clusterv1.ClusterNameLabel)
}

// diskMatchingHints returns the ID of the first installation-eligible disk of the inventory
// that matches every set field of hints (as Ironic does: exact matches, and a minimum size).
func diskMatchingHints(disks []aiv1beta1.HostDisk, hints *bmov1alpha1.RootDeviceHints) (string, error) {
	for _, d := range disks {
		if d.InstallationEligibility.Eligible && diskMatches(d, hints) {
			return d.ID, nil
		}
	}
	// The hints as JSON: %+v would print the address of rotational, a new one in each reconcile,
	// and so a new condition message each time.
	raw, err := json.Marshal(hints)
	if err != nil {
		return "", err
	}
	return "", fmt.Errorf("no disk of the Agent's inventory matches %s", raw)
}

func diskMatches(d aiv1beta1.HostDisk, h *bmov1alpha1.RootDeviceHints) bool {
	eq := func(hint, value string) bool { return hint == "" || hint == value }
	deviceNameOK := h.DeviceName == "" || h.DeviceName == d.Path || h.DeviceName == d.ByPath ||
		"/dev/"+d.Name == h.DeviceName || h.DeviceName == d.ByID
	// The inventory has no separate vendor extension: wwnVendorExtension is not checked.
	wwnOK := eq(h.WWN, d.Wwn) && eq(h.WWNWithExtension, d.Wwn)
	sizeOK := h.MinSizeGigabytes == 0 || d.SizeBytes >= int64(h.MinSizeGigabytes)*1000*1000*1000
	rotationalOK := h.Rotational == nil || *h.Rotational == (d.DriveType == string(models.DriveTypeHDD))
	return deviceNameOK && wwnOK && sizeOK && rotationalOK &&
		eq(h.HCTL, d.Hctl) && eq(h.Model, d.Model) && eq(h.Vendor, d.Vendor) && eq(h.SerialNumber, d.Serial)
}

// hasMAC tells whether one of the agent's inventory interfaces has the MAC address mac.
func hasMAC(agent *aiv1beta1.Agent, mac string) bool {
	for _, nic := range agent.Status.Inventory.Interfaces {
		if mac != "" && strings.EqualFold(nic.MacAddress, mac) {
			return true
		}
	}
	return false
}
