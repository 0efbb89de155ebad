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

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	utilyaml "sigs.k8s.io/cluster-api/util/yaml"

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
)

// TestAdapt: what Cluster API's defaulting webhooks write (a MachineDeployment's rollout
// strategy, a MachineHealthCheck's cluster-name label and node startup timeout) is added where
// missing and kept where written; the control plane reads releases from the lab's registry.
func TestAdapt(t *testing.T) {
	g := NewWithT(t)
	objs, err := utilyaml.ToUnstructured([]byte(`apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineHealthCheck
metadata: {name: c1-mhc}
spec: {clusterName: c1, checks: {unhealthyNodeConditions: [{type: Ready, status: "False", timeoutSeconds: 300}]}}
---
apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineHealthCheck
metadata: {name: c1-mhc-2, labels: {team: a}}
spec: {clusterName: c1, checks: {nodeStartupTimeoutSeconds: 60}}
---
apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineDeployment
metadata: {name: c1-workers}
spec: {clusterName: c1}
---
apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineDeployment
metadata: {name: c1-workers-2}
spec: {clusterName: c1, rollout: {strategy: {type: OnDelete}}}
---
apiVersion: controlplane.cluster.x-k8s.io/v1alpha4
kind: OpenshiftAssistedControlPlane
metadata: {name: c1}
`))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(Adapt(objs, "registry.lab:5000/ocp-release")).To(Succeed())
	field := func(o unstructured.Unstructured, path ...string) any {
		v, _, _ := unstructured.NestedFieldNoCopy(o.Object, path...)
		return v
	}
	g.Expect(objs[0].GetLabels()).To(Equal(map[string]string{clusterv1.ClusterNameLabel: "c1"}))
	g.Expect(field(objs[0], "spec", "checks", "nodeStartupTimeoutSeconds")).To(BeEquivalentTo(600))
	g.Expect(objs[1].GetLabels()).To(Equal(map[string]string{"team": "a", clusterv1.ClusterNameLabel: "c1"}))
	g.Expect(field(objs[1], "spec", "checks", "nodeStartupTimeoutSeconds")).To(BeEquivalentTo(60))
	g.Expect(field(objs[2], "spec", "rollout", "strategy", "type")).To(Equal(string(clusterv1.RollingUpdateMachineDeploymentStrategyType)))
	g.Expect(field(objs[3], "spec", "rollout", "strategy", "type")).To(Equal("OnDelete"))
	g.Expect(objs[4].GetAnnotations()).To(HaveKeyWithValue(controlplanev1.ReleaseImageRepositoryAnnotation, "registry.lab:5000/ocp-release"))
}
