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

package servedschema

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/yaml"
)

// hyperShiftAgentCRDDir holds HyperShift's copy of the agent provider's CRDs (testenv.HyperShiftAgentCRDDir).
const hyperShiftAgentCRDDir = "test/support/testenv/hypershift-crds"

// crdSchema returns the v1beta1 schema of the CRD file (a path from the repository's root) as
// the API server publishes it in OpenAPI v3 (the same properties, items, required and limits).
func crdSchema(t *testing.T, path string) Schema {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", path))
	if err != nil {
		t.Fatal(err)
	}
	crd := map[string]any{}
	if err := yaml.Unmarshal(data, &crd); err != nil {
		t.Fatal(err)
	}
	s := FromCRD(crd, "v1beta1")
	if s == nil {
		t.Fatalf("%s has no v1beta1 schema", path)
	}
	return s
}

func hyperShiftSchema(t *testing.T, plural string) Schema {
	t.Helper()
	return crdSchema(t, filepath.Join(hyperShiftAgentCRDDir, "capi-provider.agent-install.openshift.io_"+plural+".yaml"))
}

func oursSchema(t *testing.T, plural string) Schema {
	t.Helper()
	return crdSchema(t, filepath.Join("infrastructure", "config", "crd", "bases", "capi-provider.agent-install.openshift.io_"+plural+".yaml"))
}

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	out := map[string]any{}
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestOursIsToldFromHyperShifts(t *testing.T) {
	g := NewWithT(t)
	for _, plural := range []string{"agentclusters", "agentmachines"} {
		g.Expect(oursSchema(t, plural).Declares("status", "initialization")).To(BeTrue(), plural)
		g.Expect(hyperShiftSchema(t, plural).Declares("status", "initialization")).To(BeFalse(), plural)
		g.Expect(hyperShiftSchema(t, plural).Declares("status", "conditions", "[]", "severity")).To(BeTrue(), plural)
	}
}

func TestAdaptToHyperShiftsSchema(t *testing.T) {
	const now = `"lastTransitionTime":"2026-11-26T10:00:00Z"`
	for _, tc := range []struct {
		name, plural, patch, want string
	}{
		{
			name:   "a healthy condition: no empty message, no observedGeneration, no severity",
			plural: "agentclusters",
			patch:  `{"status":{"conditions":[{"type":"Ready","status":"True","reason":"Ready","message":"","observedGeneration":2,` + now + `}]}}`,
			want:   `{"status":{"clusterDeploymentReference":{},"conditions":[{"type":"Ready","status":"True","reason":"Ready",` + now + `}]}}`,
		},
		{
			name:   "a False condition gets a severity: Info for a wait",
			plural: "agentclusters",
			patch: `{"status":{"conditions":[{"type":"ClusterDeploymentReady","status":"False","reason":"WaitingForHostedControlPlane",` +
				`"message":"Waiting for HostedControlPlane hc1",` + now + `}]}}`,
			want: `{"status":{"clusterDeploymentReference":{},"conditions":[{"type":"ClusterDeploymentReady","status":"False",` +
				`"reason":"WaitingForHostedControlPlane","message":"Waiting for HostedControlPlane hc1","severity":"Info",` + now + `}]}}`,
		},
		{
			name:   "a False condition gets a severity: Warning for a refusal",
			plural: "agentmachines",
			patch:  `{"status":{"conditions":[{"type":"AgentClaimed","status":"False","reason":"NoSuitableAgent","message":"none",` + now + `}]}}`,
			want:   `{"status":{"conditions":[{"type":"AgentClaimed","status":"False","reason":"NoSuitableAgent","message":"none","severity":"Warning",` + now + `}]}}`,
		},
		{
			name:   "v1beta2 contract fields, failure domains as a list: left out; ready kept",
			plural: "agentclusters",
			patch: `{"status":{"initialization":{"provisioned":true},"ready":true,"observedGeneration":3,` +
				`"failureDomains":[{"name":"rack1","controlPlane":true}],"clusterDeploymentReference":{"name":"hc1","namespace":"ns"}}}`,
			want: `{"status":{"ready":true,"clusterDeploymentReference":{"name":"hc1","namespace":"ns"}}}`,
		},
		{
			name:   "a removed clusterDeploymentReference is emptied, not removed (it is required)",
			plural: "agentclusters",
			patch:  `{"status":{"clusterDeploymentReference":null}}`,
			want:   `{"status":{"clusterDeploymentReference":{"name":null,"namespace":null}}}`,
		},
		{
			name:   "metadata and the spec it declares are kept; spec.clusterDeploymentRef is left out",
			plural: "agentclusters",
			patch: `{"metadata":{"finalizers":["agentcluster.infrastructure.cluster.x-k8s.io"],"labels":{"a":"b"},"resourceVersion":"7"},` +
				`"spec":{"clusterDeploymentRef":{"name":"hc1"},"controlPlaneEndpoint":{"host":"api.hc1.example.com","port":6443}}}`,
			want: `{"metadata":{"finalizers":["agentcluster.infrastructure.cluster.x-k8s.io"],"labels":{"a":"b"},"resourceVersion":"7"},` +
				`"spec":{"controlPlaneEndpoint":{"host":"api.hc1.example.com","port":6443}}}`,
		},
		{
			name:   "an AgentMachine's providerID, addresses and agentRef are kept; its failureDomain is left out",
			plural: "agentmachines",
			patch: `{"spec":{"providerID":"agent://host-1"},"status":{"ready":true,"failureDomain":"rack1",` +
				`"addresses":[{"type":"InternalIP","address":"192.168.111.11"}],"agentRef":{"namespace":"agents","name":"host-1"}}}`,
			want: `{"spec":{"providerID":"agent://host-1"},"status":{"ready":true,` +
				`"addresses":[{"type":"InternalIP","address":"192.168.111.11"}],"agentRef":{"namespace":"agents","name":"host-1"}}}`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			got, err := json.Marshal(hyperShiftSchema(t, tc.plural).Adapt(decode(t, tc.patch)))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(MatchJSON(tc.want))
		})
	}
}

func TestChangesNothing(t *testing.T) {
	for patch, want := range map[string]bool{
		`{}`:                                   true,
		`{"metadata":{"resourceVersion":"7"}}`: true,
		`{"status":{},"spec":{}}`:              true,
		`{"metadata":{"resourceVersion":"7"},"status":{"ready":true}}`: false,
		`{"metadata":{"finalizers":null}}`:                             false,
		`{"status":{"clusterDeploymentReference":{}}}`:                 true,
	} {
		if got := changesNothing(decode(t, patch)); got != want {
			t.Errorf("changesNothing(%s) = %v, want %v", patch, got, want)
		}
	}
}
