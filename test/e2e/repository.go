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
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/cluster-api/test/framework/clusterctl"
	"sigs.k8s.io/yaml"
)

// PrepareRepository readies the local clusterctl repository of the clusterctl config at
// configPath for the suite, as Cluster API's clusterctl.CreateRepository does for its suites,
// and returns the path of the config the specs use:
//   - the e2e flavors (e2eFlavors), made of the templates this project ships, are written beside
//     them, in the folder of the infrastructure provider named provider (a file:// repository);
//   - the config is written anew into dir with the e2e config's variables added, so that
//     clusterctl finds them for the specs of Cluster API that take no variables of their own.
func PrepareRepository(configPath, provider string, e2e *clusterctl.E2EConfig, dir string) (string, error) {
	raw, err := os.ReadFile(configPath)
	if err != nil {
		return "", fmt.Errorf("reading the clusterctl config: %w", err)
	}
	config := map[string]any{}
	if err := yaml.Unmarshal(raw, &config); err != nil {
		return "", fmt.Errorf("parsing the clusterctl config %s: %w", configPath, err)
	}
	folder, err := providerFolder(config, provider)
	if err != nil {
		return "", fmt.Errorf("%s: %w", configPath, err)
	}
	flavors, err := e2eFlavors(folder)
	if err != nil {
		return "", err
	}
	for name, data := range flavors {
		if err := os.WriteFile(filepath.Join(folder, "cluster-template-"+name+".yaml"), data, 0o600); err != nil {
			return "", fmt.Errorf("adding the e2e flavor %s to the repository: %w", name, err)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(e2e.Variables)) {
		if _, ok := config[k]; !ok {
			config[k] = e2e.GetVariableOrEmpty(k)
		}
	}
	out, err := yaml.Marshal(config)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "clusterctl-e2e.yaml")
	if err := os.WriteFile(path, out, 0o600); err != nil {
		return "", fmt.Errorf("writing the clusterctl config of the suite: %w", err)
	}
	return path, nil
}

// workerMachineHealthCheck remediates the workers of the MachineDeployment of the default flavor
// when their Node has had the condition Cluster API's MachineDeploymentRemediationSpec sets
// (framework.DiscoverMachineHealthChecksAndWaitForRemediation) for 10 s: the MachineHealthCheck
// of Cluster API's own md-remediation flavor (test/e2e/data/infrastructure-docker/main/
// cluster-template-md-remediation/mhc.yaml at v1.13.4), selecting the workers by the
// MachineDeployment's label.
const workerMachineHealthCheck = `apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineHealthCheck
metadata:
  name: ${CLUSTER_NAME}-mhc-0
  namespace: ${NAMESPACE}
spec:
  clusterName: ${CLUSTER_NAME}
  selector:
    matchLabels:
      cluster.x-k8s.io/deployment-name: ${CLUSTER_NAME}-worker
  checks:
    unhealthyNodeConditions:
    - type: e2e.remediation.condition
      status: "False"
      timeoutSeconds: 10
  remediation:
    triggerIf:
      unhealthyLessThanOrEqualTo: 100%
`

// e2eFlavors are the flavors that Cluster API's own specs ask for by name and that no user needs,
// made of the shipped templates in folder (as Cluster API's and CAPM3's suites keep theirs in
// their e2e data, not in their releases), so that they follow the templates users get:
//   - md-remediation (MachineDeploymentRemediationSpec, which asks for 1 control plane and 1
//     worker): the sno flavor's single-node control plane, the default flavor's workers, and
//     workerMachineHealthCheck;
//   - ha (for MachineDeploymentScaleSpec, which asks for 1 control plane and workers): the
//     default flavor with its control plane fixed at 3 replicas, since a highly available
//     control plane (with API and ingress VIPs) has 3 to 5 and a single-node one takes no
//     workers' VIPs.
func e2eFlavors(folder string) (map[string][]byte, error) {
	read := func(name string) ([]string, error) {
		data, err := os.ReadFile(filepath.Join(folder, name))
		if err != nil {
			return nil, fmt.Errorf("reading the shipped template %s: %w", name, err)
		}
		return strings.Split(string(data), "\n---\n"), nil
	}
	def, err := read("cluster-template.yaml")
	if err != nil {
		return nil, err
	}
	sno, err := read("cluster-template-sno.yaml")
	if err != nil {
		return nil, err
	}
	remediation := slices.Clone(sno)
	for _, doc := range def {
		if strings.Contains(doc, "\n  name: ${CLUSTER_NAME}-worker\n") {
			remediation = append(remediation, doc)
		}
	}
	remediation = append(remediation, workerMachineHealthCheck)
	ha := strings.Join(def, "\n---\n")
	const replicas = "replicas: ${CONTROL_PLANE_MACHINE_COUNT}"
	if strings.Count(ha, replicas) != 1 || len(remediation) != len(sno)+4 {
		return nil, fmt.Errorf("the shipped templates in %s no longer have the shape the e2e flavors are made from: update e2eFlavors", folder)
	}
	return map[string][]byte{
		"md-remediation": []byte(strings.Join(remediation, "\n---\n")),
		"ha":             []byte(strings.Replace(ha, replicas, "replicas: 3", 1)),
	}, nil
}

// providerFolder is the folder of the components of the infrastructure provider called name in a
// clusterctl config's providers, where clusterctl looks for its templates.
func providerFolder(config map[string]any, name string) (string, error) {
	providers, _ := config["providers"].([]any)
	for _, p := range providers {
		p, _ := p.(map[string]any)
		if p["name"] != name || p["type"] != "InfrastructureProvider" {
			continue
		}
		u, err := url.Parse(fmt.Sprint(p["url"]))
		if err != nil || u.Scheme != "file" {
			return "", fmt.Errorf("infrastructure provider %s: want a file:// url, got %v", name, p["url"])
		}
		return filepath.Dir(u.Path), nil
	}
	return "", fmt.Errorf("no infrastructure provider %s", name)
}
