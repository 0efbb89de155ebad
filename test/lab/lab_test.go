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
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha3"
)

// TestSingleNodeClusterInstalls creates a single-node OpenShift cluster on one simulated host,
// through every real controller, and waits for the control plane to be initialized with its
// kubeconfig Secret.
func TestSingleNodeClusterInstalls(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l, err := Start(ctx, Options{})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { g.Expect(l.Stop()).To(Succeed()) }()

	ns, err := l.Mgmt.CreateNamespace(ctx, "sno")
	g.Expect(err).NotTo(HaveOccurred())
	_, err = l.AddHosts(ctx, ns, "sno-host", 1)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(l.CreateCluster(ctx, ClusterOptions{Namespace: ns, Name: "sno", ControlPlanes: 1, Version: "4.17.3"})).To(Succeed())

	defer func() {
		if t.Failed() {
			s, _ := l.Snapshot(ctx, ns)
			t.Logf("lab state:\n%s\nmanager errors: %v", s, l.Err())
		}
	}()
	g.Eventually(func(g Gomega) {
		cp := &controlplanev1.OpenshiftAssistedControlPlane{}
		g.Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "sno"}, cp)).To(Succeed())
		g.Expect(cp.Status.Initialization.ControlPlaneInitialized).To(Equal(ptr.To(true)))
		kubeconfig := &corev1.Secret{}
		g.Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "sno-kubeconfig"}, kubeconfig)).To(Succeed())
		g.Expect(kubeconfig.Data).To(HaveKey("value"))
		cluster := &clusterv1.Cluster{}
		g.Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "sno"}, cluster)).To(Succeed())
		g.Expect(cluster.Status.Initialization.ControlPlaneInitialized).To(Equal(ptr.To(true)))
	}, 3*time.Minute, time.Second).Should(Succeed())

	// The host's Node runs the kubelet of the release installed: the Kubernetes version of
	// OpenShift 4.17.3, which its Machine names.
	g.Eventually(func(g Gomega) {
		machines := &clusterv1.MachineList{}
		g.Expect(l.Mgmt.Client.List(ctx, machines, client.InNamespace(ns))).To(Succeed())
		g.Expect(machines.Items).To(HaveLen(1))
		m := machines.Items[0]
		g.Expect(m.Spec.Version).To(Equal("v" + Releases["4.17.3"]))
		g.Expect(m.Status.NodeInfo).NotTo(BeNil())
		g.Expect(m.Status.NodeInfo.KubeletVersion).To(Equal(m.Spec.Version))
	}, time.Minute, time.Second).Should(Succeed())
}
