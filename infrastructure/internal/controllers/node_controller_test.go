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
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/kubeconfig"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/infrastructure/v1beta1"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/testenv"
)

// startWorkload starts a second API server to play a workload cluster. Start it before the
// manager: it is stopped after the manager then, once nothing watches it.
func startWorkload(t *testing.T, g Gomega) *testenv.Environment {
	t.Helper()
	workload, err := testenv.StartWorkload(env.Scheme)
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = workload.Stop() })
	return workload
}

// connectWorkload makes workload the workload cluster of f's Cluster, reached through Cluster
// API's ClusterCache (its <cluster>-kubeconfig Secret).
func connectWorkload(g Gomega, ctx context.Context, f fixture, workload *testenv.Environment) {
	cluster := &clusterv1.Cluster{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: f.cluster}, cluster)).To(Succeed())
	g.Expect(env.Client.Create(ctx, kubeconfig.GenerateSecret(cluster, kubeconfig.FromEnvTestConfig(workload.Config, cluster)))).To(Succeed())
}

// TestNodeProviderID: a second API server plays the workload cluster, reached through Cluster
// API's ClusterCache (its <cluster>-kubeconfig Secret). The Node of each installed host gets the
// AgentMachine's providerID, matched by system UUID or by address, never by hostname alone, and a
// providerID already set is kept.
func TestNodeProviderID(t *testing.T) {
	t.Parallel() // see suite_test.go
	g := NewWithT(t)
	ctx := context.Background()
	workload := startWorkload(t, g)
	f := newFixture(t, ctx, "node", nil)
	connectWorkload(g, ctx, f, workload)

	node := func(name, uuid, ip, providerID string) {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{ProviderID: providerID}}
		g.Expect(workload.Client.Create(ctx, n)).To(Succeed())
		n.Status.NodeInfo.SystemUUID = uuid
		if ip != "" {
			n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}}
		}
		g.Expect(workload.Client.Status().Update(ctx, n)).To(Succeed())
	}
	a := []string{agentName(1), agentName(2), agentName(3), agentName(4)}
	node("by-uuid", strings.ToUpper(a[0]), "", "")
	node("by-ip", "00000000-dead-beef-0000-000000000000", fmt.Sprintf("192.168.111.%d", agentIndex(a[1])+1), "")
	node("host-"+a[2], "00000000-dead-beef-0000-000000000001", "10.0.0.1", "") // same hostname only
	node("preset", a[3], "", "baremetal://keep")

	startManager(t, isolated(f, 0))
	for i, name := range a {
		createAgent(t, ctx, f.ns, name, map[string]string{"host": fmt.Sprint(i)}, 8)
		f.machine(t, ctx, fmt.Sprintf("m%d", i), func(_ *clusterv1.Machine, am *infrav1.AgentMachine) {
			am.Spec.AgentLabelSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"host": fmt.Sprint(i)}}
		})
	}
	for _, name := range a {
		// assisted-service installs the hosts.
		setAgentCondition(t, ctx, client.ObjectKey{Namespace: f.ns, Name: name}, aiv1beta1.InstalledCondition, corev1.ConditionTrue, aiv1beta1.InstalledReason)
	}

	providerID := func(g Gomega, name string) string {
		n := &corev1.Node{}
		g.Expect(workload.Client.Get(ctx, client.ObjectKey{Name: name}, n)).To(Succeed())
		return n.Spec.ProviderID
	}
	g.Eventually(func(g Gomega) {
		g.Expect(providerID(g, "by-uuid")).To(Equal("agent://" + a[0]))
		g.Expect(providerID(g, "by-ip")).To(Equal("agent://" + a[1]))
		// The host matched by hostname only is installed too, and still gets no Node.
		am := getAM(g, ctx, f.ns, "m2")
		g.Expect(am.Status.Initialization.Provisioned).NotTo(BeNil())
	}, timeout, interval).Should(Succeed())
	g.Expect(providerID(g, "host-"+a[2])).To(BeEmpty())
	g.Expect(providerID(g, "preset")).To(Equal("baremetal://keep"))
}

// TestNodeAddressesWhenTheAgentIsGone: an AgentMachine whose Agent is gone after its Machine
// became a Node (after a clusterctl move, which carries no status) reports the Node's addresses,
// which Cluster API copies to the Machine.
func TestNodeAddressesWhenTheAgentIsGone(t *testing.T) {
	t.Parallel() // see suite_test.go
	g := NewWithT(t)
	ctx := context.Background()
	workload := startWorkload(t, g)
	f := claimedOne(t, g, ctx, "node-addresses")
	connectWorkload(g, ctx, f, workload)
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "worker-1"}}
	g.Expect(workload.Client.Create(ctx, n)).To(Succeed())
	n.Status.Addresses = []corev1.NodeAddress{
		{Type: corev1.NodeInternalIP, Address: "10.1.2.3"},
		{Type: corev1.NodeHostName, Address: "worker-1"},
	}
	g.Expect(workload.Client.Status().Update(ctx, n)).To(Succeed())

	nodeJoinedAgentGone(g, ctx, f, "worker-1")
	g.Eventually(func(g Gomega) {
		am := getAM(g, ctx, f.ns, "m1")
		g.Expect(am.Status.Addresses).To(ConsistOf(
			clusterv1.MachineAddress{Type: clusterv1.MachineInternalIP, Address: "10.1.2.3"},
			clusterv1.MachineAddress{Type: clusterv1.MachineHostName, Address: "worker-1"},
		))
	}, timeout, interval).Should(Succeed())
}
