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

package crd_test

import (
	"context"
	"maps"
	"testing"

	"sigs.k8s.io/yaml"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/schemadiff"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/testenv"
)

// TestConstraintsOnUpstreamPathsAreInventoried lists every constraint our schemas add on a path
// that upstream's schema of the same kind and version has (a value upstream accepted that ours
// may refuse) and fails, naming the path and constraint, unless docs/migration.md lists it
// with what happens to upstream's value.
func TestConstraintsOnUpstreamPathsAreInventoried(t *testing.T) {
	schemadiff.CheckInventory(t, upstreamKindCRDs(t)...)
}

// upstreamKindCRDs are the CRDs of the kinds upstream's bootstrap provider served.
func upstreamKindCRDs(tb testing.TB) []*apiextensionsv1.CustomResourceDefinition {
	tb.Helper()
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, plural := range []string{"openshiftassistedconfigs", "openshiftassistedconfigtemplates"} {
		crd, err := testenv.ProviderCRD("bootstrap", bootstrapv1.GroupVersion.Group, plural)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, crd)
	}
	return out
}

// validSpecs are the specs of a config at each version of the inventory, with an item in every
// list (what TestInventoriedRefusals copies); a template's spec.template.spec is the same.
const validSpecs = `
v1alpha1:
  cpuArchitecture: x86_64
  pullSecretRef: {name: pull-secret}
  sshAuthorizedKey: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHVcTLklbKfNxKz9xs/u2oSQF+W5+VFOmRkb1n4LDUJ2 user@example.com
  osImageVersion: "4.17"
  nodeRegistration:
    name: $METADATA_NAME
    kubeletExtraLabels: [metal3.io/uuid=$METADATA_UUID]
  additionalNTPSources: [ntp.example.com]
  kernelArguments: [{operation: append, value: quiet}]
v1alpha2:
  cpuArchitecture: x86_64
  pullSecretRef: {name: pull-secret}
  sshAuthorizedKey: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHVcTLklbKfNxKz9xs/u2oSQF+W5+VFOmRkb1n4LDUJ2 user@example.com
  osImageVersion: "4.17"
  nodeRegistration:
    name: $METADATA_NAME
    providerID: metal3://$METADATA_UUID
    kubeletExtraLabels: [metal3.io/uuid=$METADATA_UUID]
  additionalNTPSources: [ntp.example.com]
  kernelArguments: [{operation: append, value: quiet}]
  preBootstrapCommands: [echo before]
  postBootstrapCommands: [echo after]
  postBootstrapKubeconfigPath: /etc/kubernetes/kubeconfig
  bootstrapCommandSentinelDir: /var/lib/capoa
`

// validStatuses are a config's status at each version, for the rows on its status.
const validStatuses = `
v1alpha1:
  ready: false
  conditions:
  - {type: Ready, status: "False", severity: Info, reason: Waiting, message: waiting, lastTransitionTime: "2026-01-01T00:00:00Z"}
v1alpha2:
  initialization: {dataSecretCreated: false}
`

// TestInventoriedRefusals tries every refused inventory row of a simple keyword (required,
// bounds, pattern, enum, format) against the API server: a valid object with that one
// constraint broken must be refused with the row's message.
func TestInventoriedRefusals(t *testing.T) {
	ns, err := env.CreateNamespace(context.Background(), "refusals")
	if err != nil {
		t.Fatal(err)
	}
	var specs, statuses map[string]map[string]any
	if err := yaml.Unmarshal([]byte(validSpecs), &specs); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal([]byte(validStatuses), &statuses); err != nil {
		t.Fatal(err)
	}
	valid := func(kind, version string) map[string]any {
		spec := maps.Clone(specs[version])
		if spec == nil {
			return nil
		}
		if kind == "OpenshiftAssistedConfigTemplate" {
			return map[string]any{"spec": map[string]any{"template": map[string]any{"spec": spec}}}
		}
		return map[string]any{"spec": spec, "status": statuses[version]}
	}
	schemadiff.CheckRefusals(t, env.Client, ns, upstreamKindCRDs(t), valid)
}
