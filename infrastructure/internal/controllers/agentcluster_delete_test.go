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
	"testing"
	"time"

	. "github.com/onsi/gomega"

	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/infrastructure/v1beta1"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/infrastructure/setup"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/manager"
)

// TestAgentClusterDeletionIsBounded: the ClusterDeployment and AgentClusterInstall an
// AgentCluster created keep Hive's and assisted-service's finalizers. While something still acts
// on them the deletion waits and says for what; once nothing has for the timeout, their
// finalizers are removed with a Warning event and the AgentCluster goes, leaving no orphan.
func TestAgentClusterDeletionIsBounded(t *testing.T) {
	t.Parallel() // see suite_test.go
	g := NewWithT(t)
	ctx := context.Background()
	ns, err := env.CreateNamespace(ctx, "acdelete")
	g.Expect(err).NotTo(HaveOccurred())
	const idle = 4 * time.Second
	startManager(t, managerConfig{opts: manager.Options{WatchNamespace: ns}, infra: setup.Options{ForeignFinalizerTimeout: ptr.To(idle)}})
	g.Expect(env.Client.Create(ctx, &infrav1.AgentCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c1"},
		Spec:       infrav1.AgentClusterSpec{ControlPlaneEndpoint: infrav1.APIEndpoint{Host: "api.c1.example.com", Port: 6443}},
	})).To(Succeed())
	g.Expect(env.Client.Create(ctx, newCluster(ns, nil))).To(Succeed())
	key := client.ObjectKey{Namespace: ns, Name: "c1"}
	const hiveFinalizer, aciFinalizer = "hive.openshift.io/deprovision", "agentclusterinstall.agent-install.openshift.io/ai-deprovision"
	// Play Hive and assisted-service: each puts its finalizer on its object.
	for obj, finalizer := range map[client.Object]string{&hivev1.ClusterDeployment{}: hiveFinalizer, &hiveextv1beta1.AgentClusterInstall{}: aciFinalizer} {
		g.Eventually(func(g Gomega) {
			g.Expect(env.Client.Get(ctx, key, obj)).To(Succeed())
			base := obj.DeepCopyObject().(client.Object)
			obj.SetFinalizers([]string{finalizer})
			g.Expect(env.Client.Patch(ctx, obj, client.MergeFrom(base))).To(Succeed())
		}, timeout, interval).Should(Succeed())
	}

	g.Expect(env.Client.Delete(ctx, &infrav1.AgentCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c1"}})).To(Succeed())
	// Hive is alive: it writes the ClusterDeployment's status every second for twice the timeout.
	deadline := time.Now().Add(2 * idle)
	for time.Now().Before(deadline) {
		cd := &hivev1.ClusterDeployment{}
		g.Expect(env.Client.Get(ctx, key, cd)).To(Succeed())
		g.Expect(cd.Finalizers).To(ContainElement(hiveFinalizer), "Hive's finalizer was removed while Hive was acting on the ClusterDeployment")
		base := cd.DeepCopy()
		cd.Status.InstallRestarts++
		g.Expect(env.Client.Status().Patch(ctx, cd, client.MergeFrom(base))).To(Succeed())
		time.Sleep(time.Second)
	}
	ac := &infrav1.AgentCluster{}
	g.Expect(env.Client.Get(ctx, key, ac)).To(Succeed())
	c := conditions.Get(ac, infrav1.ClusterDeploymentReadyCondition)
	g.Expect(c).NotTo(BeNil())
	g.Expect(c.Reason).To(Equal(infrav1.DeletingClusterDeploymentReason))
	g.Expect(c.Message).To(ContainSubstring("Waiting for Hive to remove the finalizers " + hiveFinalizer + " of ClusterDeployment " + ns + "/c1"))

	// Hive stops: the deletion ends once nothing has acted for the timeout.
	g.Eventually(func(g Gomega) {
		for _, obj := range []client.Object{&infrav1.AgentCluster{}, &hivev1.ClusterDeployment{}, &hiveextv1beta1.AgentClusterInstall{}} {
			g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, key, obj))).To(BeTrue(), "%T still exists", obj)
		}
	}, timeout, interval).Should(Succeed())
	g.Eventually(func(g Gomega) {
		list := &eventsv1.EventList{}
		g.Expect(env.Client.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		var removed []string
		for _, e := range list.Items {
			if e.Reason == "ForeignFinalizersRemoved" && e.Type == corev1.EventTypeWarning && e.Regarding.Kind == "AgentCluster" {
				removed = append(removed, e.Note)
			}
		}
		g.Expect(removed).To(ContainElements(
			ContainSubstring("No controller acted on ClusterDeployment "+ns+"/c1"),
			ContainSubstring("No controller acted on AgentClusterInstall "+ns+"/c1"),
		))
	}, timeout, interval).Should(Succeed())
}
