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
	"testing"

	"sigs.k8s.io/yaml"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	infrav1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/infrastructure/v1beta1"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/schemadiff"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/testenv"
)

// TestConstraintsOnUpstreamPathsAreInventoried lists every constraint our schemas add on a path
// that upstream's schema of the same kind and version has (a value upstream accepted that ours
// may refuse) and fails, naming the path and constraint, unless docs/migration.md lists it
// with what happens to upstream's value.
func TestConstraintsOnUpstreamPathsAreInventoried(t *testing.T) {
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, plural := range []string{"agentclusters", "agentmachines", "agentmachinetemplates"} {
		crd, err := testenv.ProviderCRD("infrastructure", infrav1.GroupVersion.Group, plural)
		if err != nil {
			t.Fatal(err)
		}
		crds = append(crds, crd)
	}
	schemadiff.CheckInventory(t, crds...)
}

// validObjects are objects of each upstream kind that the API server accepts at every version
// of the inventory (v1alpha1 and v1beta1 have one schema), status included: what
// TestInventoriedRefusals breaks, one constraint at a time. Each list holds an item to copy.
const validObjects = `
AgentCluster:
  spec:
    controlPlaneEndpoint: {host: api.example.com, port: 6443}
    ignitionEndpoint:
      url: https://ignition.example.com/ignition
      caCertificateReference: {namespace: tenant, name: ignition-ca}
  status:
    clusterDeploymentReference: {name: cd, namespace: tenant}
    conditions:
    - {type: Ready, status: "True", reason: Ready, message: ready, lastTransitionTime: "2026-01-01T00:00:00Z"}
    failureDomains:
    - {name: rack1, controlPlane: true}
AgentMachine:
  spec:
    providerID: agent://0d2f6d7c-1111-2222-3333-444455556666
    agentLabelSelector: {matchLabels: {rack: r1}}
  status:
    agentRef: {name: agent, namespace: tenant}
    addresses:
    - {type: InternalIP, address: fd00::10}
    conditions:
    - {type: Ready, status: "True", reason: Ready, message: ready, lastTransitionTime: "2026-01-01T00:00:00Z"}
AgentMachineTemplate:
  spec:
    template:
      spec:
        agentLabelSelector: {matchLabels: {rack: r1}}
`

// TestInventoriedRefusals tries every refused inventory row of a simple keyword (required,
// bounds, pattern, enum, format) against the API server: a valid object with that one
// constraint broken must be refused with the row's message.
func TestInventoriedRefusals(t *testing.T) {
	ns, err := env.CreateNamespace(context.Background(), "refusals")
	if err != nil {
		t.Fatal(err)
	}
	var valid map[string]map[string]any
	if err := yaml.Unmarshal([]byte(validObjects), &valid); err != nil {
		t.Fatal(err)
	}
	schemadiff.CheckRefusals(t, env.Client, ns, upstreamCRDs(t), func(kind, _ string) map[string]any { return valid[kind] })
}

func upstreamCRDs(t *testing.T) []*apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, plural := range upstreamPlurals {
		crds = append(crds, ourCRD(t, plural))
	}
	return crds
}
