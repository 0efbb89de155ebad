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
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestDeleteNamespace: kube-controller-manager's namespace controller empties a deleted namespace
// and removes it; an object whose finalizer nobody removes keeps it Terminating, and the error
// names that object and its finalizer; once the finalizer is gone, so is the namespace.
func TestDeleteNamespace(t *testing.T) {
	g := NewWithT(t)
	env := startCoreEnv(t)
	defer func() { g.Expect(env.Stop()).To(Succeed()) }()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	ns, err := env.CreateNamespace(ctx, "empties")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(env.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "plain"}})).To(Succeed())
	g.Expect(env.DeleteNamespace(ctx, ns, time.Minute)).To(Succeed())
	g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{}))).To(BeTrue())

	ns, err = env.CreateNamespace(ctx, "stuck")
	g.Expect(err).NotTo(HaveOccurred())
	held := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "held", Finalizers: []string{"example.com/keep"}}}
	g.Expect(env.Client.Create(ctx, held)).To(Succeed())
	err = env.DeleteNamespace(ctx, ns, 3*time.Second)
	g.Expect(err).To(MatchError(ContainSubstring("namespace " + ns + " still Terminating after 3s: ConfigMap held (finalizers [example.com/keep])")))
	got := &corev1.Namespace{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: ns}, got)).To(Succeed())
	g.Expect(got.Status.Phase).To(Equal(corev1.NamespaceTerminating))

	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(held), held)).To(Succeed())
	held.Finalizers = nil
	g.Expect(env.Client.Update(ctx, held)).To(Succeed())
	g.Expect(env.DeleteNamespace(ctx, ns, time.Minute)).To(Succeed())
	g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{}))).To(BeTrue())
}
