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
	"testing"

	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestInstallCapabilitiesReadsTheOverrides(t *testing.T) {
	aci := &hiveextv1beta1.AgentClusterInstall{ObjectMeta: metav1.ObjectMeta{Name: "c", Annotations: map[string]string{
		installConfigOverrides: `{"fips":true,"capabilities":{"baselineCapabilitySet":"None","additionalEnabledCapabilities":["baremetal","Ingress"]}}`,
	}}}
	spec, err := installCapabilities(aci)
	if err != nil || spec == nil || spec.BaselineCapabilitySet != "None" || len(spec.AdditionalEnabledCapabilities) != 2 {
		t.Errorf("capabilities %+v (%v)", spec, err)
	}
	aci.Annotations[installConfigOverrides] = `{"fips":true}`
	if spec, err := installCapabilities(aci); err != nil || spec != nil {
		t.Errorf("no capabilities: %+v (%v), want nil (the installer's default)", spec, err)
	}
	aci.Annotations[installConfigOverrides] = `{not json`
	if _, err := installCapabilities(aci); err == nil {
		t.Error("want an error for overrides that are not JSON")
	}
}
