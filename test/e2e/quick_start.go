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
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// smokeLabel marks the specs make test runs (go test ./... without E2E_FULL); make test-e2e runs
// every spec.
const smokeLabel = "smoke"

// QuickStartSpecInput is the input of QuickStartSpec.
type QuickStartSpecInput struct {
	SpecInput
	// Flavor of the cluster template: "" (3 control planes and 2 workers by default) or "sno".
	Flavor                 string
	ControlPlanes, Workers int64
}

// QuickStartSpec is Cluster API's quick start for OpenShift on bare metal: a cluster created
// from the repository's template, with as many BareMetalHosts as it has machines, reaches
// Available, and the kubeconfig its control plane writes reaches a workload cluster with a Node
// for every Machine. The installation assisted-service runs is the one the template asks for.
func QuickStartSpec(ctx context.Context, inputGetter func() QuickStartSpecInput) {
	var (
		specName = "quick-start"
		input    QuickStartSpecInput
		spec     *SpecEnv
	)
	BeforeEach(func() {
		input = inputGetter()
		if input.Flavor != "" {
			specName += "-" + input.Flavor
		}
		spec = SetupSpec(ctx, specName, input.SpecInput)
		DeferCleanup(func() { spec.TearDown(ctx) })
	})

	It("creates an OpenShift cluster that reaches Available, with a working kubeconfig", func() {
		Expect(spec.Management.AddHosts(ctx, spec.Namespace.Name, "host", int(input.ControlPlanes+input.Workers))).To(Succeed())
		name := fmt.Sprintf("%s-%s", specName, "c1")
		result := CreateClusterAndWait(ctx, *spec, ClusterSpec{Name: name, Flavor: input.Flavor,
			ControlPlanes: input.ControlPlanes, Workers: input.Workers,
			OpenShiftVersion: input.E2EConfig.MustGetVariable("OPENSHIFT_VERSION")})

		By("Checking the workload cluster through the kubeconfig the control plane wrote")
		proxy := spec.Management.Proxy()
		Eventually(func(g Gomega) {
			g.Expect(ExpectNodesThroughKubeconfig(ctx, g, proxy, result.Cluster)).To(HaveLen(int(input.ControlPlanes + input.Workers)))
		}, input.E2EConfig.GetIntervals(specName, "wait-worker-nodes")...).Should(Succeed())

		By("Checking the installation assisted-service was asked for")
		aci := &hiveextv1beta1.AgentClusterInstall{}
		Expect(proxy.GetClient().Get(ctx, client.ObjectKey{Namespace: spec.Namespace.Name, Name: name}, aci)).To(Succeed())
		Expect(aci.Spec.ProvisionRequirements.ControlPlaneAgents).To(BeEquivalentTo(input.ControlPlanes))
		Expect(aci.Spec.ProvisionRequirements.WorkerAgents).To(BeEquivalentTo(input.Workers))
		Expect(aci.Spec.ImageSetRef).NotTo(BeNil())
		cp := GetControlPlane(ctx, Default, proxy.GetClient(), result.Cluster)
		Expect(cp.Status.DistributionVersion).To(Equal(input.E2EConfig.MustGetVariable("OPENSHIFT_VERSION")))
	})
}
