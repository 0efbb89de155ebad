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
	"reflect"
	"slices"
	"testing"

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/capabilities"
)

func TestDefaultBareMetalCapabilitiesLeaveMachineAPIOut(t *testing.T) {
	for version, want := range map[string][]string{
		"4.14.0": {"baremetal", "marketplace", "openshift-samples", "Console", "Insights", "Storage", "CSISnapshot", "NodeTuning",
			"Build", "DeploymentConfig", "ImageRegistry"},
		"4.17.3-x86_64": {"baremetal", "marketplace", "openshift-samples", "Console", "Insights", "Storage", "CSISnapshot", "NodeTuning",
			"Build", "DeploymentConfig", "ImageRegistry", "OperatorLifecycleManager", "CloudCredential", "Ingress", "CloudControllerManager"},
		"4.21.0-ec.1": {"baremetal", "marketplace", "openshift-samples", "Console", "Insights", "Storage", "CSISnapshot", "NodeTuning",
			"Build", "DeploymentConfig", "ImageRegistry", "OperatorLifecycleManager", "CloudCredential", "Ingress", "CloudControllerManager",
			"OperatorLifecycleManagerV1"},
		"4.10.0": {"baremetal", "marketplace", "openshift-samples"},
	} {
		if got := defaultBareMetalCapabilities(version); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %v, want %v", version, got, want)
		}
	}
	if got := defaultBareMetalCapabilities("4.18.1"); slices.Contains(got, machineAPICapability) {
		t.Errorf("the default lists MachineAPI: %v", got)
	}
	// The table is not changed by the defaults taken from it.
	if !slices.Contains(capabilities.Recommended("4.18.1"), machineAPICapability) {
		t.Error("defaultBareMetalCapabilities changed the recommended set")
	}
}

func TestInstallCapabilities(t *testing.T) {
	def := defaultBareMetalCapabilities("4.17.3")
	for name, tc := range map[string]struct {
		replicas     int32
		vips         []string
		caps         controlplanev1.Capabilities
		wantBaseline string
		wantAdd      []string
	}{
		"baremetal, nothing set: None and the release's set without MachineAPI": {
			replicas: 3, vips: []string{"192.168.1.5"}, wantBaseline: "None", wantAdd: def},
		"baremetal, the user's additional ones come after the defaults, once": {
			replicas: 3, vips: []string{"192.168.1.5"}, caps: controlplanev1.Capabilities{AdditionalEnabledCapabilities: []string{"Console", "OperatorLifecycleManagerV1"}},
			wantBaseline: "None", wantAdd: append(slices.Clone(def), "OperatorLifecycleManagerV1")},
		"baremetal, baseline None written: the same as unset": {
			replicas: 5, vips: []string{"192.168.1.5"}, caps: controlplanev1.Capabilities{BaselineCapability: "None"}, wantBaseline: "None", wantAdd: def},
		"two nodes with an arbiter are on platform baremetal too": {
			replicas: 2, vips: []string{"192.168.1.5"}, wantBaseline: "None", wantAdd: def},
		"baremetal, vCurrent stored through an upstream version: honoured": {
			replicas: 3, vips: []string{"192.168.1.5"}, caps: controlplanev1.Capabilities{BaselineCapability: "vCurrent"}, wantBaseline: "vCurrent"},
		"baremetal, MachineAPI stored through an upstream version: dropped, as upstream drops it": {
			replicas: 3, vips: []string{"192.168.1.5"}, caps: controlplanev1.Capabilities{AdditionalEnabledCapabilities: []string{"MachineAPI", "machineapi", "Console"}},
			wantBaseline: "None", wantAdd: def},
		"single node: the installer's default":                            {replicas: 1},
		"external load balancer (platform None): the installer's default": {replicas: 3},
		"platform None: the user's capabilities as written": {
			replicas: 3, caps: controlplanev1.Capabilities{BaselineCapability: "v4.14", AdditionalEnabledCapabilities: []string{"Console"}},
			wantBaseline: "v4.14", wantAdd: []string{"Console"}},
	} {
		o := testOACP(tc.replicas, tc.vips...)
		o.Spec.Config.Capabilities = tc.caps
		baseline, add := installCapabilities(o)
		if baseline != tc.wantBaseline || !reflect.DeepEqual(add, tc.wantAdd) {
			t.Errorf("%s: %q %v, want %q %v", name, baseline, add, tc.wantBaseline, tc.wantAdd)
		}
	}
}

func TestInstallConfigOverridesCarryTheBareMetalDefaults(t *testing.T) {
	o := testOACP(3, "192.168.1.5")
	got, err := installConfigOverrides(o)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Capabilities struct {
			Baseline   string   `json:"baselineCapabilitySet"`
			Additional []string `json:"additionalEnabledCapabilities"`
		} `json:"capabilities"`
	}
	if err := json.Unmarshal([]byte(got), &m); err != nil {
		t.Fatal(err)
	}
	if m.Capabilities.Baseline != "None" || !slices.Contains(m.Capabilities.Additional, "baremetal") ||
		!slices.Contains(m.Capabilities.Additional, "Ingress") || slices.Contains(m.Capabilities.Additional, machineAPICapability) {
		t.Errorf("install-config overrides %s: want baseline None with baremetal and Ingress (the installer requires both) and without MachineAPI", got)
	}
	if got, err := installConfigOverrides(testOACP(1)); err != nil || got != "" {
		t.Errorf("single node: overrides %q (%v), want none (the installer's default)", got, err)
	}
}
