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
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/test/framework"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// MachineDeploymentScaleSpecInput is the input of MachineDeploymentScaleSpec.
type MachineDeploymentScaleSpecInput struct {
	SpecInput
}

// MachineDeploymentScaleSpec scales the workers of an installed cluster out and in: the new
// workers join the running cluster as day-2 hosts (assisted-service adds them to the existing
// cluster) on hosts added after the installation, and scaling in removes their Machines and Nodes.
func MachineDeploymentScaleSpec(ctx context.Context, inputGetter func() MachineDeploymentScaleSpecInput) {
	const specName = "md-scale"
	var (
		input MachineDeploymentScaleSpecInput
		spec  *SpecEnv
	)
	BeforeEach(func() {
		input = inputGetter()
		spec = SetupSpec(ctx, specName, input.SpecInput)
		DeferCleanup(func() { spec.TearDown(ctx) })
	})

	It("scales the workers out from 1 to 3 as day-2 hosts, then in to 1", func() {
		Expect(spec.Management.AddHosts(ctx, spec.Namespace.Name, "host", 4)).To(Succeed())
		result := CreateClusterAndWait(ctx, *spec, ClusterSpec{Name: "md-scale", ControlPlanes: 3, Workers: 1,
			OpenShiftVersion: input.E2EConfig.MustGetVariable("OPENSHIFT_VERSION")})
		Expect(result.MachineDeployments).To(HaveLen(1))
		proxy := spec.Management.Proxy()
		intervals := input.E2EConfig.GetIntervals(specName, "wait-worker-nodes")

		By("Adding 2 hosts and scaling the workers out to 3")
		Expect(spec.Management.AddHosts(ctx, spec.Namespace.Name, "day2", 2)).To(Succeed())
		framework.ScaleAndWaitMachineDeployment(ctx, framework.ScaleAndWaitMachineDeploymentInput{
			ClusterProxy: proxy, Cluster: result.Cluster, MachineDeployment: result.MachineDeployments[0],
			Replicas: 3, WaitForMachineDeployments: intervals,
		})
		Eventually(func(g Gomega) {
			g.Expect(ExpectNodesThroughKubeconfig(ctx, g, proxy, result.Cluster)).To(HaveLen(6))
		}, intervals...).Should(Succeed())
		agents := &aiv1beta1.AgentList{}
		Expect(proxy.GetClient().List(ctx, agents, client.InNamespace(spec.Namespace.Name))).To(Succeed())
		day2 := 0
		for _, a := range agents.Items {
			if a.Status.DebugInfo.State == "added-to-existing-cluster" && a.Spec.Role == "worker" {
				day2++
			}
		}
		Expect(day2).To(Equal(2), "the two new workers join the installed cluster as day-2 hosts")

		By("Scaling the workers in to 1")
		framework.ScaleAndWaitMachineDeployment(ctx, framework.ScaleAndWaitMachineDeploymentInput{
			ClusterProxy: proxy, Cluster: result.Cluster, MachineDeployment: result.MachineDeployments[0],
			Replicas: 1, WaitForMachineDeployments: intervals,
		})
		Eventually(func(g Gomega) {
			workers := &clusterv1.MachineList{}
			g.Expect(proxy.GetClient().List(ctx, workers, client.InNamespace(spec.Namespace.Name),
				client.MatchingLabels{clusterv1.MachineDeploymentNameLabel: result.MachineDeployments[0].Name})).To(Succeed())
			g.Expect(workers.Items).To(HaveLen(1))
			g.Expect(ExpectNodesThroughKubeconfig(ctx, g, proxy, result.Cluster)).To(HaveLen(4))
		}, intervals...).Should(Succeed())
	})
}
