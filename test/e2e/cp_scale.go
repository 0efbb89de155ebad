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
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
)

// ControlPlaneScaleSpecInput is the input of ControlPlaneScaleSpec.
type ControlPlaneScaleSpecInput struct {
	SpecInput
}

// ControlPlaneScaleSpec scales the control plane of an installed cluster from 3 to 5 nodes (the
// two new ones join as day-2 masters) and back to 3, through its scale subresource, as
// `kubectl scale` does.
func ControlPlaneScaleSpec(ctx context.Context, inputGetter func() ControlPlaneScaleSpecInput) {
	const specName = "control-plane-scale"
	var (
		input ControlPlaneScaleSpecInput
		spec  *SpecEnv
	)
	BeforeEach(func() {
		input = inputGetter()
		spec = SetupSpec(ctx, specName, input.SpecInput)
		DeferCleanup(func() { spec.TearDown(ctx) })
	})

	It("scales the control plane from 3 to 5 as day-2 masters, then back to 3", func() {
		Expect(spec.Management.AddHosts(ctx, spec.Namespace.Name, "host", 3)).To(Succeed())
		result := CreateClusterAndWait(ctx, *spec, ClusterSpec{Name: "cp-scale", ControlPlanes: 3, Workers: 0,
			OpenShiftVersion: input.E2EConfig.MustGetVariable("OPENSHIFT_VERSION")})
		proxy := spec.Management.Proxy()
		intervals := input.E2EConfig.GetIntervals(specName, "wait-control-plane")

		By("Adding 2 hosts and scaling the control plane to 5")
		Expect(spec.Management.AddHosts(ctx, spec.Namespace.Name, "day2", 2)).To(Succeed())
		cp := GetControlPlane(ctx, Default, proxy.GetClient(), result.Cluster)
		scaleControlPlane(ctx, proxy.GetClient(), cp, 5)
		WaitForControlPlaneAvailable(ctx, proxy.GetClient(), result.Cluster, 5, intervals...)
		Eventually(func(g Gomega) {
			g.Expect(ExpectNodesThroughKubeconfig(ctx, g, proxy, result.Cluster)).To(HaveLen(5))
		}, intervals...).Should(Succeed())
		agents := &aiv1beta1.AgentList{}
		Expect(proxy.GetClient().List(ctx, agents, client.InNamespace(spec.Namespace.Name))).To(Succeed())
		masters := 0
		for _, a := range agents.Items {
			if a.Spec.Role == "master" && a.Status.DebugInfo.State == "added-to-existing-cluster" {
				masters++
			}
		}
		Expect(masters).To(Equal(2), "the two new control-plane hosts join the installed cluster as day-2 masters")

		By("Scaling the control plane back to 3")
		scaleControlPlane(ctx, proxy.GetClient(), cp, 3)
		WaitForControlPlaneAvailable(ctx, proxy.GetClient(), result.Cluster, 3, intervals...)
		Eventually(func(g Gomega) {
			g.Expect(ExpectNodesThroughKubeconfig(ctx, g, proxy, result.Cluster)).To(HaveLen(3))
		}, intervals...).Should(Succeed())
	})
}

// scaleControlPlane sets the replicas of a control plane through its scale subresource.
func scaleControlPlane(ctx context.Context, c client.Client, cp *controlplanev1.OpenshiftAssistedControlPlane, replicas int32) {
	By(fmt.Sprintf("Scaling control plane %s to %d replicas", cp.Name, replicas))
	target := &controlplanev1.OpenshiftAssistedControlPlane{ObjectMeta: metav1.ObjectMeta{Namespace: cp.Namespace, Name: cp.Name}}
	scale := &autoscalingv1.Scale{Spec: autoscalingv1.ScaleSpec{Replicas: replicas}}
	Expect(c.SubResource("scale").Update(ctx, target, client.WithSubResourceBody(scale))).To(Succeed())
}
