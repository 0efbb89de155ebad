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
	"sigs.k8s.io/controller-runtime/pkg/client"

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

// TestIPStacks: an IPv6 cluster is the default flavor with IPv6 networks and VIPs; a dual-stack
// one adds the IPv6 networks and VIPs after the IPv4 ones, and the hosts' networks of both
// families as machine networks.
func TestIPStacks(t *testing.T) {
	g := NewWithT(t)
	v6 := ClusterOptions{Name: "six", IPStack: IPv6}.variables()
	g.Expect(v6).To(HaveKeyWithValue("POD_CIDR", "fd01::/48"))
	g.Expect(v6).To(HaveKeyWithValue("SERVICE_CIDR", "fd02::/112"))
	g.Expect(v6).To(HaveKeyWithValue("API_VIP", "fd2e:6f44:5dd8:c956::5"))
	g.Expect(v6).To(HaveKeyWithValue("INGRESS_VIP", "fd2e:6f44:5dd8:c956::4"))
	g.Expect(ClusterOptions{Name: "four"}.variables()).NotTo(HaveKey("POD_CIDR"), "IPv4 keeps the template's defaults")

	cluster := &clusterv1.Cluster{}
	cluster.Spec.ClusterNetwork.Pods.CIDRBlocks = []string{"10.128.0.0/14"}
	cluster.Spec.ClusterNetwork.Services.CIDRBlocks = []string{"172.30.0.0/16"}
	cp := &controlplanev1.OpenshiftAssistedControlPlane{}
	cp.Spec.Config.APIVIPs, cp.Spec.Config.IngressVIPs = []string{"192.168.111.5"}, []string{"192.168.111.4"}
	g.Expect(dualStack([]client.Object{cluster, cp})).To(Succeed())
	g.Expect(cluster.Spec.ClusterNetwork.Pods.CIDRBlocks).To(Equal([]string{"10.128.0.0/14", "fd01::/48"}))
	g.Expect(cluster.Spec.ClusterNetwork.Services.CIDRBlocks).To(Equal([]string{"172.30.0.0/16", "fd02::/112"}))
	g.Expect(cp.Spec.Config.APIVIPs).To(Equal([]string{"192.168.111.5", "fd2e:6f44:5dd8:c956::5"}))
	g.Expect(cp.Spec.Config.IngressVIPs).To(Equal([]string{"192.168.111.4", "fd2e:6f44:5dd8:c956::4"}))
	g.Expect(cp.Spec.Config.MachineNetworks).To(Equal([]string{"192.168.111.0/24", "fd2e:6f44:5dd8:c956::/64"}))
	g.Expect(dualStack([]client.Object{cluster})).To(MatchError(ContainSubstring("dual stack needs a flavor with a Cluster and a control plane")))
}

// TestAutomatedCleaningMode: the templates' default (disabled) unless a cluster asks for another.
func TestAutomatedCleaningMode(t *testing.T) {
	g := NewWithT(t)
	g.Expect(ClusterOptions{Name: "default"}.variables()).NotTo(HaveKey("AUTOMATED_CLEANING_MODE"))
	g.Expect(ClusterOptions{Name: "cleaned", AutomatedCleaningMode: "metadata"}.variables()).To(HaveKeyWithValue("AUTOMATED_CLEANING_MODE", "metadata"))
}
