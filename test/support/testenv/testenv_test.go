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

package testenv

import (
	"context"
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestControlPlaneCPUIsTheEnvironmentsOwn: an environment's kube-apiserver and etcd have used
// CPU, more once it served writes; once it stopped, nothing is counted for it, although other
// test binaries' API servers (the packages of make test run side by side) may still run.
func TestControlPlaneCPUIsTheEnvironmentsOwn(t *testing.T) {
	g := NewWithT(t)
	env := startCoreEnv(t)
	stopped := false
	defer func() {
		if !stopped {
			_ = env.Stop()
		}
	}()
	apiServer, etcd, err := env.ControlPlaneCPU()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(apiServer).To(BeNumerically(">", 0), "the API server served the CRDs and the client's discovery")
	g.Expect(etcd).To(BeNumerically(">", 0))

	ctx := context.Background()
	for i := range 300 {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("cpu-%d", i)},
			Data: map[string]string{"k": fmt.Sprint(i)}}
		g.Expect(env.Client.Create(ctx, cm)).To(Succeed())
	}
	g.Eventually(func(g Gomega) {
		after, _, err := env.ControlPlaneCPU()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(after).To(BeNumerically(">", apiServer), "after 300 writes")
	}).Should(Succeed())

	g.Expect(env.Stop()).To(Succeed())
	stopped = true
	apiServer, etcd, err = env.ControlPlaneCPU()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(apiServer).To(BeZero(), "a stopped environment's API server")
	g.Expect(etcd).To(BeZero(), "a stopped environment's etcd")
}
