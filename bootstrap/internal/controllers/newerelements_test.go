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

package controllers_test

import (
	"context"
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	"github.com/openshift/assisted-service/models"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/testenv"
)

// TestNewerFieldsOfKernelArgumentsSurviveAChange: on a hub whose InfraEnv CRD has a field in the
// elements of spec.kernelArguments that the pinned Go types lack, a kernel argument added to the
// config (before its host installs) keeps the field in the InfraEnv's unchanged argument. A JSON
// merge patch from the typed InfraEnv would send the array as the types encode it, without it.
func TestNewerFieldsOfKernelArgumentsSurviveAChange(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	restore, err := testenv.AddHypotheticalKernelArgumentField(ctx, env.Client, "default")
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { g.Expect(restore(context.Background())).To(Succeed()) })

	// A Machine whose host never boots: its config stays before the bootstrap data.
	l := newLab(t, models.ClusterStatusInsufficient)
	h := l.newHost(t, "cp-0", hostOptions{controlPlane: true, spec: bootstrapv1.OpenshiftAssistedConfigSpec{
		KernelArguments: []aiv1beta1.KernelArgument{{Operation: "append", Value: "console=ttyS0"}},
	}})
	key := client.ObjectKey{Namespace: l.ns, Name: h.config.Name}
	kernelArguments := func(g Gomega) []any {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(aiv1beta1.GroupVersion.WithKind("InfraEnv"))
		g.Expect(env.Client.Get(ctx, key, u)).To(Succeed())
		args, _, err := unstructured.NestedSlice(u.Object, "spec", "kernelArguments")
		g.Expect(err).NotTo(HaveOccurred())
		return args
	}
	console := map[string]any{"operation": "append", "value": "console=ttyS0"}
	g.Eventually(kernelArguments, timeout).Should(Equal([]any{console}))

	// What a newer assisted-service (or a user) writes into the element.
	withField := map[string]any{"operation": "append", "value": "console=ttyS0", testenv.HypotheticalElementField: "kept"}
	g.Expect(env.Client.Patch(ctx, &aiv1beta1.InfraEnv{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}},
		client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"spec":{"kernelArguments":[{"operation":"append","value":"console=ttyS0",%q:"kept"}]}}`,
			testenv.HypotheticalElementField)))).To(Succeed())
	g.Expect(kernelArguments(g)).To(Equal([]any{withField}))

	config := &bootstrapv1.OpenshiftAssistedConfig{}
	g.Expect(env.Client.Get(ctx, key, config)).To(Succeed())
	before := config.DeepCopy()
	config.Spec.KernelArguments = append(config.Spec.KernelArguments, aiv1beta1.KernelArgument{Operation: "append", Value: "rd.net.timeout.carrier=60"})
	g.Expect(env.Client.Patch(ctx, config, client.MergeFrom(before))).To(Succeed())

	g.Eventually(func(g Gomega) {
		args := kernelArguments(g)
		g.Expect(args).To(HaveLen(2), "the InfraEnv gets the new argument")
		g.Expect(args[0]).To(Equal(withField), "the unchanged argument keeps the newer field")
		g.Expect(args[1]).To(Equal(map[string]any{"operation": "append", "value": "rd.net.timeout.carrier=60"}))
	}, timeout).Should(Succeed())
}
