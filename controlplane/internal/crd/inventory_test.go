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

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/schemadiff"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/testenv"
)

// TestConstraintsOnUpstreamPathsAreInventoried lists every constraint our schemas add on a path
// that upstream's schema of the same kind and version has (a value upstream accepted that ours
// may refuse) and fails, naming the path and constraint, unless docs/migration.md lists it
// with what happens to upstream's value.
func TestConstraintsOnUpstreamPathsAreInventoried(t *testing.T) {
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, plural := range []string{"openshiftassistedcontrolplanes"} {
		crd, err := testenv.ProviderCRD("controlplane", controlplanev1.GroupVersion.Group, plural)
		if err != nil {
			t.Fatal(err)
		}
		crds = append(crds, crd)
	}
	schemadiff.CheckInventory(t, crds...)
}

// validObjects are control planes at each version of the inventory, status included, with an
// item in every list: what TestInventoriedRefusals breaks, one constraint at a time.
const validObjects = `
v1alpha2:
  spec:
    distributionVersion: 4.19.0
    replicas: 3
    openshiftAssistedConfigSpec: &config
      pullSecretRef: {name: pull-secret}
      osImageVersion: "4.19"
      nodeRegistration:
        name: $METADATA_NAME
        kubeletExtraLabels: [metal3.io/uuid=$METADATA_UUID]
      additionalNTPSources: [ntp.example.com]
      kernelArguments: [{operation: append, value: quiet}]
    config: &clusterConfig
      baseDomain: lab.home
      clusterName: prod
      apiVIPs: [192.168.222.40]
      ingressVIPs: [192.168.222.41]
      pullSecretRef: {name: pull-secret}
      manifestsConfigMapRefs: [{name: manifests}]
      capabilities: {baselineCapability: None, additionalEnabledCapabilities: [marketplace]}
    machineTemplate:
      infrastructureRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: Metal3MachineTemplate, name: cp}
  status:
    conditions:
    - {type: Ready, status: "False", severity: Info, reason: Waiting, message: waiting, lastTransitionTime: "2026-01-01T00:00:00Z"}
v1alpha3:
  spec:
    distributionVersion: 4.19.0
    replicas: 3
    openshiftAssistedConfigSpec:
      <<: *config
      nodeRegistration:
        name: $METADATA_NAME
        providerID: metal3://$METADATA_UUID
        kubeletExtraLabels: [metal3.io/uuid=$METADATA_UUID]
      preBootstrapCommands: [echo before]
      postBootstrapCommands: [echo after]
      postBootstrapKubeconfigPath: /etc/kubernetes/kubeconfig
      bootstrapCommandSentinelDir: /var/lib/capoa
    config: *clusterConfig
    machineTemplate:
      infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: Metal3MachineTemplate, name: cp}
  status:
    distributionVersion: 4.19.0
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
	crd, err := testenv.ProviderCRD("controlplane", controlplanev1.GroupVersion.Group, "openshiftassistedcontrolplanes")
	if err != nil {
		t.Fatal(err)
	}
	schemadiff.CheckRefusals(t, env.Client, ns, []*apiextensionsv1.CustomResourceDefinition{crd},
		func(_, version string) map[string]any { return valid[version] })
}
