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

package controllers

import (
	"context"
	"errors"
	"testing"

	. "github.com/onsi/gomega"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	conditionsv1 "github.com/openshift/custom-resource-status/conditions/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/controllers/clustercache"
	"sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	infrav1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/infrastructure/v1beta1"
)

// mirroredTypes are the AgentMachine conditions that mirror the Agent's, in mirrored's order.
var mirroredTypes = []string{infrav1.AgentConnectedCondition, infrav1.AgentSpecSyncedCondition, infrav1.AgentValidatedCondition,
	infrav1.AgentRequirementsMetCondition, infrav1.InstalledCondition}

// condition returns am's condition of that type without its transition time, or nil.
func condition(am *infrav1.AgentMachine, typ string) *metav1.Condition {
	c := conditions.Get(am, typ)
	if c == nil {
		return nil
	}
	out := *c
	out.LastTransitionTime = metav1.Time{}
	return &out
}

// TestMirrorAgent: each of the Agent's five conditions becomes the AgentMachine's (its reason,
// or its status when it has none); one assisted-service has not reported is Unknown; an installed
// host makes the AgentMachine provisioned and ready; the addresses are the Agent's.
func TestMirrorAgent(t *testing.T) {
	g := NewWithT(t)
	agent := testAgent("a1")
	agent.Status.Conditions = []conditionsv1.Condition{
		{Type: aiv1beta1.ConnectedCondition, Status: corev1.ConditionTrue, Reason: aiv1beta1.AgentConnectedReason, Message: "The agent's connection to the installation service is unimpaired"},
		{Type: aiv1beta1.SpecSyncedCondition, Status: corev1.ConditionFalse, Message: "sync failed"},
		{Type: aiv1beta1.ValidatedCondition, Status: corev1.ConditionTrue, Reason: aiv1beta1.ValidationsPassingReason},
		{Type: aiv1beta1.InstalledCondition, Status: corev1.ConditionFalse, Reason: aiv1beta1.InstallationInProgressReason, Message: "Installing"},
	}
	agent.Status.Inventory.Hostname = "worker-0"
	agent.Status.Inventory.Interfaces = []aiv1beta1.HostInterface{{IPV4Addresses: []string{"192.168.1.10/24"}}}
	am := &infrav1.AgentMachine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m1"}}
	clearAgentConditions(am, "No Agent is claimed yet") // mirrorAgent replaces them all

	mirrorAgent(am, agent)
	g.Expect(condition(am, infrav1.AgentConnectedCondition)).To(Equal(&metav1.Condition{Type: infrav1.AgentConnectedCondition,
		Status: metav1.ConditionTrue, Reason: aiv1beta1.AgentConnectedReason, Message: "The agent's connection to the installation service is unimpaired"}))
	g.Expect(condition(am, infrav1.AgentSpecSyncedCondition)).To(Equal(&metav1.Condition{Type: infrav1.AgentSpecSyncedCondition,
		Status: metav1.ConditionFalse, Reason: "False", Message: "sync failed"}), "no reason: the status is the reason")
	g.Expect(condition(am, infrav1.AgentValidatedCondition)).To(Equal(&metav1.Condition{Type: infrav1.AgentValidatedCondition,
		Status: metav1.ConditionTrue, Reason: aiv1beta1.ValidationsPassingReason}))
	g.Expect(condition(am, infrav1.AgentRequirementsMetCondition)).To(Equal(&metav1.Condition{Type: infrav1.AgentRequirementsMetCondition,
		Status: metav1.ConditionUnknown, Reason: "NotReported", Message: "assisted-service has not reported RequirementsMet for Agent a1 yet"}))
	g.Expect(condition(am, infrav1.InstalledCondition)).To(Equal(&metav1.Condition{Type: infrav1.InstalledCondition,
		Status: metav1.ConditionFalse, Reason: aiv1beta1.InstallationInProgressReason, Message: "Installing"}))
	g.Expect(am.Status.Addresses).To(Equal([]clusterv1.MachineAddress{
		{Type: clusterv1.MachineInternalIP, Address: "192.168.1.10"},
		{Type: clusterv1.MachineHostName, Address: "worker-0"},
		{Type: clusterv1.MachineInternalDNS, Address: "worker-0"},
	}))
	g.Expect(am.Status.Initialization.Provisioned).To(BeNil(), "not installed yet")
	g.Expect(am.Status.Ready).To(BeFalse()) //nolint:staticcheck // the v1beta1 contract's field
	g.Expect(machineProvisioned(am)).To(BeFalse())

	conditionsv1.SetStatusConditionNoHeartbeat(&agent.Status.Conditions, conditionsv1.Condition{Type: aiv1beta1.InstalledCondition,
		Status: corev1.ConditionTrue, Reason: aiv1beta1.InstalledReason, Message: "The installation has completed: Done"})
	mirrorAgent(am, agent)
	g.Expect(condition(am, infrav1.InstalledCondition)).To(Equal(&metav1.Condition{Type: infrav1.InstalledCondition,
		Status: metav1.ConditionTrue, Reason: aiv1beta1.InstalledReason, Message: "The installation has completed: Done"}))
	g.Expect(am.Status.Initialization.Provisioned).To(Equal(ptr.To(true)))
	g.Expect(am.Status.Ready).To(BeTrue()) //nolint:staticcheck // the v1beta1 contract's field
	g.Expect(machineProvisioned(am)).To(BeTrue())
}

// TestMirrorAgentKeepsProvisioned: a host once installed stays provisioned when its Agent
// disconnects (the AgentMachine shows it, provisioned is never taken back).
func TestMirrorAgentKeepsProvisioned(t *testing.T) {
	g := NewWithT(t)
	am := &infrav1.AgentMachine{}
	am.Status.Initialization.Provisioned = ptr.To(true)
	agent := testAgent("a1", withCondition(aiv1beta1.ConnectedCondition, corev1.ConditionFalse))
	mirrorAgent(am, agent)
	g.Expect(am.Status.Initialization.Provisioned).To(Equal(ptr.To(true)))
	g.Expect(conditions.Get(am, infrav1.AgentConnectedCondition)).To(HaveField("Status", metav1.ConditionFalse))
}

func TestMachineProvisioned(t *testing.T) {
	for _, tt := range []struct {
		name        string
		provisioned *bool
		ready       bool
		want        bool
	}{
		{"nothing reported", nil, false, false},
		{"provisioned false", ptr.To(false), false, false},
		{"provisioned", ptr.To(true), false, true},
		// HyperShift's copy of the CRD serves the v1beta1 status only.
		{"ready alone", nil, true, true},
		{"both", ptr.To(true), true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			am := &infrav1.AgentMachine{}
			am.Status.Initialization.Provisioned = tt.provisioned
			am.Status.Ready = tt.ready //nolint:staticcheck // the v1beta1 contract's field
			NewWithT(t).Expect(machineProvisioned(am)).To(Equal(tt.want))
		})
	}
}

// TestSetNodeJoined: an AgentMachine whose host is a Node and whose Agent is gone is provisioned,
// every condition True with reason NodeJoined and one message naming the Machine and Node, and it
// no longer refers to the Agent.
func TestSetNodeJoined(t *testing.T) {
	g := NewWithT(t)
	am := &infrav1.AgentMachine{}
	am.Status.AgentRef = &infrav1.AgentReference{Namespace: "agents", Name: "a1"}
	clearAgentConditions(am, "The claimed Agent no longer exists")
	m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "m1"}}
	m.Status.NodeRef = clusterv1.MachineNodeReference{Name: "worker-0"}
	setNodeJoined(am, m)
	const msg = "Machine m1 is Node worker-0; its Agent is gone (after a clusterctl move, assisted-service deletes the Agents of hosts installed from another hub)"
	for _, typ := range append([]string{infrav1.AgentReservedCondition}, mirroredTypes...) {
		g.Expect(condition(am, typ)).To(Equal(&metav1.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: infrav1.NodeJoinedReason, Message: msg}), typ)
	}
	g.Expect(am.Status.AgentRef).To(BeNil())
	g.Expect(am.Status.Initialization.Provisioned).To(Equal(ptr.To(true)))
	g.Expect(am.Status.Ready).To(BeTrue()) //nolint:staticcheck // the v1beta1 contract's field
}

func TestClearAgentConditions(t *testing.T) {
	g := NewWithT(t)
	am := &infrav1.AgentMachine{}
	mirrorAgent(am, testAgent("a1"))
	setReserved(am, metav1.ConditionTrue, infrav1.AgentReservedReason, "")
	clearAgentConditions(am, "The Agent is released")
	for _, typ := range mirroredTypes {
		g.Expect(condition(am, typ)).To(Equal(&metav1.Condition{Type: typ, Status: metav1.ConditionUnknown, Reason: infrav1.NoAgentReason,
			Message: "The Agent is released"}), typ)
	}
	g.Expect(condition(am, infrav1.AgentReservedCondition)).To(Equal(&metav1.Condition{Type: infrav1.AgentReservedCondition,
		Status: metav1.ConditionTrue, Reason: infrav1.AgentReservedReason}), "AgentReserved is not a mirrored condition")
}

// TestSetReady: Ready summarizes AgentReserved, AgentConnected and Installed only.
func TestSetReady(t *testing.T) {
	set := func(am *infrav1.AgentMachine, typ string, status metav1.ConditionStatus, reason, msg string) {
		conditions.Set(am, metav1.Condition{Type: typ, Status: status, Reason: reason, Message: msg})
	}
	for _, tt := range []struct {
		name   string
		setup  func(*infrav1.AgentMachine)
		want   metav1.ConditionStatus
		reason string
		msg    string
	}{
		{"installed", func(am *infrav1.AgentMachine) {
			set(am, infrav1.AgentReservedCondition, metav1.ConditionTrue, infrav1.AgentReservedReason, "")
			set(am, infrav1.AgentConnectedCondition, metav1.ConditionTrue, "AgentIsConnected", "")
			set(am, infrav1.InstalledCondition, metav1.ConditionTrue, "InstallationCompleted", "done")
			// Not summarized: a host whose spec is out of sync or that fails a validation after
			// its install is still ready.
			set(am, infrav1.AgentSpecSyncedCondition, metav1.ConditionFalse, "SyncFailed", "")
			set(am, infrav1.AgentValidatedCondition, metav1.ConditionFalse, "ValidationsFailing", "")
			set(am, infrav1.AgentRequirementsMetCondition, metav1.ConditionFalse, "NotReady", "")
		}, metav1.ConditionTrue, clusterv1.ReadyReason, ""},
		{"no suitable Agent", func(am *infrav1.AgentMachine) {
			setReserved(am, metav1.ConditionFalse, infrav1.NoSuitableAgentsReason, "0 of 3 agents fit: 3 claimed")
			clearAgentConditions(am, "No Agent is claimed yet")
		}, metav1.ConditionFalse, "IssuesReported",
			"* AgentReserved: 0 of 3 agents fit: 3 claimed\n* AgentConnected: No Agent is claimed yet\n* Installed: No Agent is claimed yet"},
		{"installing", func(am *infrav1.AgentMachine) {
			setReserved(am, metav1.ConditionTrue, infrav1.AgentReservedReason, "")
			set(am, infrav1.AgentConnectedCondition, metav1.ConditionTrue, "AgentIsConnected", "")
			set(am, infrav1.InstalledCondition, metav1.ConditionFalse, "InstallationInProgress", "Installing: writing image to disk")
		}, metav1.ConditionFalse, "IssuesReported", "* Installed: Installing: writing image to disk"},
		{"nothing reported", func(*infrav1.AgentMachine) {}, metav1.ConditionUnknown, "UnknownReported",
			"* AgentReserved: Condition not yet reported\n* AgentConnected: Condition not yet reported\n* Installed: Condition not yet reported"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			am := &infrav1.AgentMachine{ObjectMeta: metav1.ObjectMeta{Generation: 2}}
			tt.setup(am)
			g.Expect(setReady(am)).To(Succeed())
			c := conditions.Get(am, clusterv1.ReadyCondition)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Status).To(Equal(tt.want))
			g.Expect(c.Reason).To(Equal(tt.reason))
			g.Expect(c.Message).To(Equal(tt.msg))
		})
	}
}

func TestNodeAddresses(t *testing.T) {
	g := NewWithT(t)
	node := &corev1.Node{Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{
		{Type: corev1.NodeInternalIP, Address: "192.168.1.10"},
		{Type: corev1.NodeExternalIP, Address: "203.0.113.10"},
		{Type: corev1.NodeHostName, Address: "worker-0"},
		{Type: corev1.NodeInternalDNS, Address: "worker-0.cluster.local"},
		{Type: corev1.NodeExternalDNS, Address: "worker-0.example.com"},
	}}}
	g.Expect(nodeAddresses(node)).To(Equal([]clusterv1.MachineAddress{
		{Type: clusterv1.MachineInternalIP, Address: "192.168.1.10"},
		{Type: clusterv1.MachineExternalIP, Address: "203.0.113.10"},
		{Type: clusterv1.MachineHostName, Address: "worker-0"},
		{Type: clusterv1.MachineInternalDNS, Address: "worker-0.cluster.local"},
		{Type: clusterv1.MachineExternalDNS, Address: "worker-0.example.com"},
	}))
	g.Expect(nodeAddresses(&corev1.Node{})).To(BeEmpty())
}

func TestAgentAddresses(t *testing.T) {
	g := NewWithT(t)
	a := testAgent("a")
	a.Status.Inventory.Hostname = "worker-0"
	a.Status.Inventory.Interfaces = []aiv1beta1.HostInterface{
		{IPV4Addresses: []string{"192.168.1.10/24"}, IPV6Addresses: []string{"fd00::10/64"}},
		{IPV4Addresses: []string{"192.168.1.10/24", "10.0.0.1"}},
	}
	g.Expect(agentAddresses(a)).To(Equal([]clusterv1.MachineAddress{
		{Type: clusterv1.MachineInternalIP, Address: "192.168.1.10"},
		{Type: clusterv1.MachineInternalIP, Address: "fd00::10"},
		{Type: clusterv1.MachineInternalIP, Address: "10.0.0.1"},
		{Type: clusterv1.MachineHostName, Address: "worker-0"},
		{Type: clusterv1.MachineInternalDNS, Address: "worker-0"},
	}))
	a.Spec.Hostname = "requested"
	g.Expect(agentAddresses(a)).To(ContainElement(clusterv1.MachineAddress{Type: clusterv1.MachineHostName, Address: "requested"}))
}

// TestAgentAddressesOfAnUnknownHost: an Agent without inventory has no addresses; one with
// addresses but no hostname has only its IPs; empty addresses are skipped.
func TestAgentAddressesOfAnUnknownHost(t *testing.T) {
	g := NewWithT(t)
	a := testAgent("a")
	g.Expect(agentAddresses(a)).To(BeEmpty())
	a.Status.Inventory.Interfaces = []aiv1beta1.HostInterface{{IPV4Addresses: []string{"", "10.0.0.1/8"}, IPV6Addresses: []string{"fd00:0:0::1/64"}}}
	g.Expect(agentAddresses(a)).To(Equal([]clusterv1.MachineAddress{
		{Type: clusterv1.MachineInternalIP, Address: "10.0.0.1"},
		{Type: clusterv1.MachineInternalIP, Address: "fd00::1"},
	}))
}

func TestStripPrefix(t *testing.T) {
	for in, want := range map[string]string{
		"10.0.0.5/24":        "10.0.0.5",
		"fd00::10/64":        "fd00::10",
		"fd00:0:0::10/64":    "fd00::10",
		"10.0.0.5":           "10.0.0.5",
		" 10.0.0.5 ":         "10.0.0.5",
		"fd00::10":           "fd00::10",
		"not an address/24x": "not an address/24x",
		"":                   "",
	} {
		if got := stripPrefix(in); got != want {
			t.Errorf("stripPrefix(%q) = %q, want %q", in, got, want)
		}
	}
}

// fakeClusterCache hands out one workload client, or an error.
type fakeClusterCache struct {
	clustercache.ClusterCache
	client client.Client
	err    error
	asked  []client.ObjectKey
}

func (f *fakeClusterCache) GetClient(_ context.Context, cluster client.ObjectKey) (client.Client, error) {
	f.asked = append(f.asked, cluster)
	return f.client, f.err
}

// TestReconcileNodeAddresses: the addresses of a host whose Agent is gone are its Node's, read
// from the workload cluster; until it is reachable, or when the Node is gone or has none, they are
// kept.
func TestReconcileNodeAddresses(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	kept := []clusterv1.MachineAddress{{Type: clusterv1.MachineInternalIP, Address: "192.168.1.10"}}
	node := func(addresses ...corev1.NodeAddress) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "worker-0"}, Status: corev1.NodeStatus{Addresses: addresses}}
	}
	for _, tt := range []struct {
		name      string
		noCache   bool
		cacheErr  error
		nodes     []client.Object
		nodeErr   error
		want      ctrl.Result
		wantErr   string
		wantAddrs []clusterv1.MachineAddress
	}{
		{name: "no ClusterCache", noCache: true, wantAddrs: kept},
		{name: "not connected yet", cacheErr: clustercache.ErrClusterNotConnected, want: ctrl.Result{RequeueAfter: workloadRetry}, wantAddrs: kept},
		{name: "no client", cacheErr: errors.New("boom"), wantErr: "getting a client for Cluster c1: boom", wantAddrs: kept},
		{name: "the Node is gone", wantAddrs: kept},
		{name: "the Node cannot be read", nodeErr: errors.New("boom"), wantErr: "reading Node worker-0 of Cluster c1: boom", wantAddrs: kept},
		{name: "the Node has no addresses", nodes: []client.Object{node()}, wantAddrs: kept},
		{name: "the Node's addresses", nodes: []client.Object{node(
			corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: "192.168.1.20"},
			corev1.NodeAddress{Type: corev1.NodeHostName, Address: "worker-0"})},
			wantAddrs: []clusterv1.MachineAddress{{Type: clusterv1.MachineInternalIP, Address: "192.168.1.20"}, {Type: clusterv1.MachineHostName, Address: "worker-0"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			remote := fake.NewClientBuilder().WithScheme(scheme).WithObjects(tt.nodes...).WithInterceptorFuncs(interceptor.Funcs{
				Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
					if tt.nodeErr != nil {
						return tt.nodeErr
					}
					return c.Get(ctx, key, obj, opts...)
				},
			}).Build()
			cache := &fakeClusterCache{client: remote, err: tt.cacheErr}
			r := &AgentMachineReconciler{}
			if !tt.noCache {
				r.ClusterCache = cache
			}
			am := &infrav1.AgentMachine{}
			am.Status.Addresses = kept
			m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m1"}}
			m.Status.NodeRef = clusterv1.MachineNodeReference{Name: "worker-0"}
			s := &scope{agentMachine: am, machine: m, cluster: &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c1"}}}
			res, err := r.reconcileNodeAddresses(context.Background(), s)
			if tt.wantErr != "" {
				g.Expect(err).To(MatchError(tt.wantErr))
			} else {
				g.Expect(err).NotTo(HaveOccurred())
			}
			g.Expect(res).To(Equal(tt.want))
			g.Expect(am.Status.Addresses).To(Equal(tt.wantAddrs))
			if !tt.noCache {
				g.Expect(cache.asked).To(Equal([]client.ObjectKey{{Namespace: "ns", Name: "c1"}}))
			}
		})
	}
}
