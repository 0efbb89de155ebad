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
	"fmt"
	"testing"

	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	conditionsv1 "github.com/openshift/custom-resource-status/conditions/v1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	infrav1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/infrastructure/v1beta1"
	capoascheme "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/scheme"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/fuzzpick"
)

// FuzzAgentMachineReconcile: no shape of the AgentMachine, its Machine, Cluster, AgentCluster,
// bootstrap Secret and Agents that the API server accepts makes a reconcile panic: nil or empty
// label and annotation maps, claim labels and annotations that point nowhere or hold garbage,
// claims and finalizers cluster-api-provider-agent left, objects missing or being deleted, selectors the API server accepts but labels.Parse refuses,
// Agents without inventory or conditions. Errors are fine (they are reported); a panic is not.
// Nor is any read or write in another tenant's namespace (otherNS, whose free Agents, claims and
// Secrets the objects name, and elsewhereNS, where an AgentCluster may say its ClusterDeployment
// is): Agents are taken from the AgentMachine's own namespace only.
// `go test` runs the seeds in testdata/fuzz; `go test -fuzz FuzzAgentMachineReconcile` explores.
func FuzzAgentMachineReconcile(f *testing.F) {
	scheme, err := capoascheme.New(infrav1.AddToScheme)
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte{})
	f.Add([]byte{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		objs := agentMachineFuzzObjects(fuzzpick.New(data))
		// A list of every namespace is the claim index's (claims by this AgentMachine's UID or
		// name, wherever they are): it writes nothing, and Confined allows it.
		c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).
			WithInterceptorFuncs(fuzzpick.Confined(t, otherNS, elsewhereNS)).
			WithStatusSubresource(&infrav1.AgentMachine{}, &infrav1.AgentCluster{}, &clusterv1.Cluster{}, &clusterv1.Machine{}, &aiv1beta1.Agent{}).
			WithIndex(&aiv1beta1.Agent{}, agentClaimIndex, indexAgentClaim).
			WithIndex(&infrav1.AgentMachine{}, waitingIndex, indexWaiting).
			WithIndex(&infrav1.AgentMachine{}, agentMachineUIDIndex, indexAgentMachineUID).
			Build()
		r := &AgentMachineReconciler{Client: c, APIReader: c, AgentReader: c, Recorder: events.NewFakeRecorder(100)}
		fuzzpick.NoPanic(t, objs, func() {
			for range 3 {
				_, _ = r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "m1"}})
			}
		})
	})
}

// agentMachineFuzzObjects builds an AgentMachine m1 in namespace ns and what surrounds it from p.
// Every first option (the choice past the end of the input) is the healthy one, so that the empty
// input claims an Agent and each byte of an input turns one piece away from health.
func agentMachineFuzzObjects(p *fuzzpick.Picker) []client.Object {
	const ns = "ns"
	now := metav1.Now()
	deleting := func(m *metav1.ObjectMeta, finalizer string) {
		if p.Intn(4) == 3 {
			m.DeletionTimestamp = &now
			m.Finalizers = append(m.Finalizers, finalizer) // the API server keeps only objects being deleted that have one
		}
	}
	claimKeys := []string{infrav1.AgentClaimedByLabel, infrav1.FailureDomainLabel, infrav1.ArchitectureLabel, "rack", infrav1.UpstreamAgentClaimLabel}
	claimValues := []string{"am-uid", "other-uid", "", "r1", "amd64", "fd1"}
	annotationKeys := []string{infrav1.ClaimOwnerAnnotation, infrav1.PreviousSpecAnnotation, infrav1.UnbindRequestedAnnotation, clusterv1.PausedAnnotation,
		infrav1.UpstreamAgentClaimNamespaceAnnotation}
	annotationValues := []string{"ns/m1", "other/m2", "/", "", `{"clusterDeploymentName":{"name":"cd","namespace":"ns"}}`, "{", "null", "2026-11-24T00:00:00Z"}

	am := &infrav1.AgentMachine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m1", UID: "am-uid",
		Labels: map[string]string{clusterv1.ClusterNameLabel: "c1"}}}
	if p.Bool() {
		am.Labels = p.Map([]string{clusterv1.ClusterNameLabel}, []string{"c1", "c2"}, false)
	}
	if !p.Bool() {
		// Ours, or cluster-api-provider-agent's (an AgentMachine it created), or both.
		am.Finalizers = [][]string{{infrav1.AgentMachineFinalizer}, {infrav1.UpstreamAgentMachineFinalizer},
			{infrav1.AgentMachineFinalizer, infrav1.UpstreamAgentMachineFinalizer}}[p.Intn(3)]
	}
	deleting(&am.ObjectMeta, "other.example.com/finalizer")
	if !p.Bool() {
		am.OwnerReferences = []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: "m1", UID: "machine-uid"}}
	}
	am.Spec.ProviderID = p.Pick("", "agent://a1", "agent://a2", "agent://", "agent://gone", "metal3://x")
	switch p.Intn(4) {
	case 1:
		am.Spec.AgentLabelSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"rack": "r1"}}
	case 2:
		am.Spec.AgentLabelSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: p.Pick("rack", "a/b/c", ""), Operator: metav1.LabelSelectorOperator(p.Pick("In", "NotIn", "Exists", "Bogus")), Values: []string{p.Pick("r1", "")}}}}
	case 3:
		am.Spec.AgentLabelSelector = &metav1.LabelSelector{}
	}
	if p.Bool() {
		am.Status.Addresses = []clusterv1.MachineAddress{{Type: clusterv1.MachineInternalIP, Address: "192.0.2.1"}}
	}
	objs := []client.Object{am}

	if !p.Bool() {
		m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m1", UID: "machine-uid",
			Labels:      map[string]string{clusterv1.ClusterNameLabel: "c1"},
			Annotations: p.Map([]string{infrav1.PreTerminateHookAnnotation, clusterv1.PausedAnnotation}, []string{"", "x"}, true)},
			Spec: clusterv1.MachineSpec{ClusterName: p.Pick("c1", "", "c2")}}
		if p.Bool() {
			m.Labels = p.Map([]string{clusterv1.ClusterNameLabel, clusterv1.MachineControlPlaneLabel}, []string{"c1", ""}, false)
		}
		if !p.Bool() {
			m.Spec.Bootstrap.DataSecretName = ptr.To(p.Pick("data", "missing", ""))
		}
		deleting(&m.ObjectMeta, "machine.cluster.x-k8s.io")
		if p.Bool() {
			m.Status.NodeRef = clusterv1.MachineNodeReference{Name: p.Pick("worker-1", "")}
		}
		objs = append(objs, m)
	}
	if !p.Bool() {
		cl := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c1"},
			Spec: clusterv1.ClusterSpec{Paused: ptr.To(p.Intn(4) == 3), InfrastructureRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: infrav1.GroupVersion.Group, Kind: "AgentCluster", Name: p.Pick("c1", "other")}}}
		switch p.Intn(3) {
		case 0:
			cl.Status.Initialization.InfrastructureProvisioned = ptr.To(true)
		case 1:
			cl.Status.Initialization.InfrastructureProvisioned = ptr.To(false)
		}
		deleting(&cl.ObjectMeta, "cluster.cluster.x-k8s.io")
		objs = append(objs, cl)
	}
	if !p.Bool() {
		ac := &infrav1.AgentCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c1"}}
		switch p.Intn(4) {
		case 0:
			ac.Spec.ClusterDeploymentRef = &infrav1.ClusterDeploymentReference{Name: "cd"}
		case 1:
			ac.Spec.ClusterDeploymentRef = &infrav1.ClusterDeploymentReference{Name: "cd", Namespace: elsewhereNS}
		case 2:
			ac.Status.ClusterDeploymentRef = infrav1.ClusterDeploymentReference{Name: "cd", Namespace: ns}
		}
		if p.Bool() {
			ac.Status.FailureDomains = []clusterv1.FailureDomain{{Name: "fd1", ControlPlane: ptr.To(true)}}
		}
		objs = append(objs, ac)
	}
	if !p.Bool() {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "data"}}
		switch p.Intn(5) {
		case 0:
			s.Data = map[string][]byte{"format": []byte("ignition"), "value": []byte(`{"ignition":{"version":"3.1.0"}}`)}
		case 1:
			s.Data = map[string][]byte{"format": []byte("ignition"), "value": []byte(p.String(16))}
		case 2:
			s.Data = map[string][]byte{"value": []byte(`{"ignition":{"config":{"merge":[{"source":"https://x/y","httpHeaders":[{"name":"Authorization","value":"Bearer t"}]}]}}}`)}
		case 3:
			s.Data = map[string][]byte{"format": []byte("cloud-config")}
		}
		objs = append(objs, s)
	}
	for i := range []int{1, 2, 3, 0}[p.Intn(4)] {
		a := &aiv1beta1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("a%d", i+1), UID: types.UID(fmt.Sprintf("agent-%d", i)),
			Labels:      p.Map(claimKeys, claimValues, false),
			Annotations: p.Map(annotationKeys, annotationValues, true)}}
		deleting(&a.ObjectMeta, "agent.agent-install.openshift.io/ai-deprovision")
		a.Spec.Approved = !p.Bool()
		if p.Bool() {
			a.Spec.ClusterDeploymentName = &aiv1beta1.ClusterReference{Name: p.Pick("cd", "other", ""), Namespace: p.Pick(ns, "", elsewhereNS)}
		}
		for _, ct := range []conditionsv1.ConditionType{aiv1beta1.ConnectedCondition, aiv1beta1.ValidatedCondition, aiv1beta1.BoundCondition, aiv1beta1.InstalledCondition} {
			switch p.Intn(3) {
			case 0:
				if ct == aiv1beta1.ConnectedCondition || ct == aiv1beta1.ValidatedCondition {
					a.Status.Conditions = append(a.Status.Conditions, conditionsv1.Condition{Type: ct, Status: corev1.ConditionTrue})
				}
			case 2:
				a.Status.Conditions = append(a.Status.Conditions, conditionsv1.Condition{Type: ct,
					Status: corev1.ConditionStatus(p.Pick("True", "False", "Unknown", "")), Reason: p.Pick("", aiv1beta1.BoundReason, aiv1beta1.UnboundReason)})
			}
		}
		if !p.Bool() {
			a.Status.Inventory = aiv1beta1.HostInventory{Hostname: p.Pick("h1", ""), Cpu: aiv1beta1.HostCPU{Count: int64(8 - p.Intn(9)), Architecture: p.Pick("x86_64", "aarch64", "")},
				Memory:     aiv1beta1.HostMemory{PhysicalBytes: 32 << 30},
				Interfaces: []aiv1beta1.HostInterface{{Name: "eth0", IPV4Addresses: []string{p.Pick("192.0.2.5/24", "bad", "")}}}}
		}
		a.Status.DebugInfo.State = p.Pick("known", "", "installing-in-progress", "added-to-existing-cluster", "error")
		objs = append(objs, a)
	}
	// Picked last, so that the seeds recorded before it keep their meaning.
	am.Annotations = p.Map([]string{infrav1.ChosenAgentAnnotation}, []string{"ns/a1", "ns/a2", otherNS + "/a1", "ns/", "/", "a1", "ns/gone"}, true)
	return append(objs, otherTenantDecoys(p)...)
}

// The namespaces of other tenants: otherNS's Agents and Secret are named by the AgentMachine's
// chosen-agent annotation and upstream claims; elsewhereNS holds the ClusterDeployment an
// AgentCluster may name.
const (
	otherNS     = "other"
	elsewhereNS = "elsewhere"
)

// otherTenantDecoys are what other tenants have: Agents a1 and a2 of otherNS, free, approved,
// connected and validated, one perhaps carrying an upstream claim by the name of the fuzzed
// AgentMachine (m1 of ns: cluster-api-provider-agent's label and namespace annotation), a
// bootstrap Secret "data" there, and ClusterDeployment "cd" of elsewhereNS.
func otherTenantDecoys(p *fuzzpick.Picker) []client.Object {
	var objs []client.Object
	for i := range 2 {
		a := &aiv1beta1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: otherNS, Name: fmt.Sprintf("a%d", i+1), UID: types.UID(fmt.Sprintf("other-agent-%d", i))},
			Spec: aiv1beta1.AgentSpec{Approved: true}}
		for _, ct := range []conditionsv1.ConditionType{aiv1beta1.ConnectedCondition, aiv1beta1.ValidatedCondition} {
			a.Status.Conditions = append(a.Status.Conditions, conditionsv1.Condition{Type: ct, Status: corev1.ConditionTrue})
		}
		a.Status.Inventory = aiv1beta1.HostInventory{Hostname: "h", Cpu: aiv1beta1.HostCPU{Count: 8, Architecture: "x86_64"},
			Memory: aiv1beta1.HostMemory{PhysicalBytes: 32 << 30}}
		if p.Bool() {
			a.Labels = map[string]string{infrav1.UpstreamAgentClaimLabel: "m1", "rack": "r1"}
			a.Annotations = map[string]string{infrav1.UpstreamAgentClaimNamespaceAnnotation: "ns"}
		}
		if p.Bool() {
			a.Spec.ClusterDeploymentName = &aiv1beta1.ClusterReference{Name: "cd", Namespace: "ns"}
		}
		objs = append(objs, a)
	}
	objs = append(objs, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: otherNS, Name: "data"},
		Data: map[string][]byte{"format": []byte("ignition"), "value": []byte(`{"ignition":{"version":"3.1.0"}}`)}})
	return append(objs, &hivev1.ClusterDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: elsewhereNS, Name: "cd"}})
}
