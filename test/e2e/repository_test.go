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

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/cluster-api/test/framework/clusterctl"
	utilyaml "sigs.k8s.io/cluster-api/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/testenv"
)

// TestPrepareRepository: the e2e flavors are made of the shipped templates (templates/) and
// written beside them, and the suite's clusterctl config keeps the providers and gains the e2e
// config's variables, without overriding the config's own.
func TestPrepareRepository(t *testing.T) {
	g := NewWithT(t)
	root, err := testenv.RepoRoot()
	g.Expect(err).NotTo(HaveOccurred())
	dir := t.TempDir()
	folder := filepath.Join(dir, "repository", "infrastructure-agent", "v0.1.0")
	g.Expect(os.MkdirAll(folder, 0o750)).To(Succeed())
	for _, name := range []string{"cluster-template.yaml", "cluster-template-sno.yaml"} {
		data, err := os.ReadFile(filepath.Join(root, "templates", name))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(os.WriteFile(filepath.Join(folder, name), data, 0o600)).To(Succeed())
	}
	config := filepath.Join(dir, "clusterctl.yaml")
	g.Expect(os.WriteFile(config, []byte(`providers:
- name: agent
  type: InfrastructureProvider
  url: file://`+folder+`/infrastructure-components.yaml
BASE_DOMAIN: from.config
`), 0o600)).To(Succeed())
	e2e := &clusterctl.E2EConfig{Variables: map[string]string{"BASE_DOMAIN": "from.e2e", "OPENSHIFT_VERSION": "4.17.3"}}

	path, err := PrepareRepository(config, "agent", e2e, dir)
	g.Expect(err).NotTo(HaveOccurred())
	raw, err := os.ReadFile(path)
	g.Expect(err).NotTo(HaveOccurred())
	got := map[string]any{}
	g.Expect(yaml.Unmarshal(raw, &got)).To(Succeed())
	g.Expect(got).To(HaveKeyWithValue("BASE_DOMAIN", "from.config"))
	g.Expect(got).To(HaveKeyWithValue("OPENSHIFT_VERSION", "4.17.3"))
	g.Expect(got).To(HaveKey("providers"))

	kinds := func(flavor string) []string {
		data, err := os.ReadFile(filepath.Join(folder, "cluster-template-"+flavor+".yaml"))
		g.Expect(err).NotTo(HaveOccurred())
		objs, err := utilyaml.ToUnstructured([]byte(strings.NewReplacer("${", "", "}", "").Replace(string(data))))
		g.Expect(err).NotTo(HaveOccurred())
		var out []string
		for _, o := range objs {
			out = append(out, o.GetKind()+"/"+o.GetName())
		}
		return out
	}
	g.Expect(kinds("md-remediation")).To(ConsistOf(
		"Cluster/CLUSTER_NAME", "Metal3Cluster/CLUSTER_NAME", "Metal3DataTemplate/CLUSTER_NAME",
		"OpenshiftAssistedControlPlane/CLUSTER_NAME", "Metal3MachineTemplate/CLUSTER_NAME-control-plane",
		"MachineDeployment/CLUSTER_NAME-worker", "OpenshiftAssistedConfigTemplate/CLUSTER_NAME-worker",
		"Metal3MachineTemplate/CLUSTER_NAME-worker", "MachineHealthCheck/CLUSTER_NAME-mhc-0"))
	ha, err := os.ReadFile(filepath.Join(folder, "cluster-template-ha.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(ha)).To(ContainSubstring("replicas: 3\n"))
	g.Expect(string(ha)).NotTo(ContainSubstring("${CONTROL_PLANE_MACHINE_COUNT}"))
}
