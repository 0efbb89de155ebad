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
	"os"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// startCoreEnv starts an API server with Kubernetes' own kinds only (Workload: no CRDs), for
// the tests of what kube-controller-manager does; the test is skipped without envtest.
func startCoreEnv(t *testing.T) *Environment {
	t.Helper()
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Skip("needs envtest (KUBEBUILDER_ASSETS)")
	}
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	env, err := StartWithOptions(Options{Scheme: s, Workload: true})
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// TestControllerManagerCollectsGarbage: with kube-controller-manager's garbage collector, a
// foreground deletion ends: the dependent goes, then the owner and its foregroundDeletion
// finalizer. Without it (as before), the owner would keep the finalizer for ever.
func TestControllerManagerCollectsGarbage(t *testing.T) {
	g := NewWithT(t)
	env := startCoreEnv(t)
	defer func() { _ = env.Stop() }()
	kcm, err := env.StartControllerManager(t.Context(), t.Output(), "garbagecollector")
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { g.Expect(kcm.Stop()).To(Succeed()) }()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "owner"}}
	g.Expect(env.Client.Create(ctx, owner)).To(Succeed())
	dependent := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "dependent",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID,
			BlockOwnerDeletion: ptr.To(true)}}}}
	g.Expect(env.Client.Create(ctx, dependent)).To(Succeed())
	g.Expect(env.Client.Delete(ctx, owner, client.PropagationPolicy(metav1.DeletePropagationForeground))).To(Succeed())
	for _, o := range []client.Object{dependent, owner} {
		g.Eventually(func() bool {
			return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(o), &corev1.ConfigMap{}))
		}, 45*time.Second, 200*time.Millisecond).Should(BeTrue(), "%s is collected", o.GetName())
	}
	g.Expect(kcm.Running()).To(Succeed())
}
