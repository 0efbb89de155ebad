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

	. "github.com/onsi/gomega"
	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	infrav1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/infrastructure/v1beta1"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/manager"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/pause"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/testenv"
)

func newCluster(ns string, controlPlane *clusterv1.ContractVersionedObjectReference) *clusterv1.Cluster {
	c := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c1"},
		Spec: clusterv1.ClusterSpec{
			Paused: ptr.To(false),
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: infrav1.GroupVersion.Group, Kind: "AgentCluster", Name: "c1",
			},
		},
	}
	if controlPlane != nil {
		c.Spec.ControlPlaneRef = *controlPlane
	}
	return c
}

// TestAgentClusterCreatesClusterDeployment: without a control plane that provides one, the
// AgentCluster creates the ClusterDeployment and AgentClusterInstall (ignition endpoint with the
// IPv6 host bracketed), records the reference in spec, reports provisioned (which Cluster API's
// Cluster controller picks up), and deletes both when it is deleted.
func TestAgentClusterCreatesClusterDeployment(t *testing.T) {
	t.Parallel() // see suite_test.go
	g := NewWithT(t)
	ctx := context.Background()
	ns, err := env.CreateNamespace(ctx, "acluster")
	g.Expect(err).NotTo(HaveOccurred())
	// Agents in two failure domains: the AgentCluster offers both.
	createAgent(t, ctx, ns, agentName(1), map[string]string{infrav1.FailureDomainLabel: "rack-b"}, 8)
	createAgent(t, ctx, ns, agentName(2), map[string]string{infrav1.FailureDomainLabel: "rack-a"}, 8)
	startManager(t, managerConfig{opts: manager.Options{WatchNamespace: ns}})
	g.Expect(env.Client.Create(ctx, &infrav1.AgentCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c1"},
		Spec: infrav1.AgentClusterSpec{
			ControlPlaneEndpoint: infrav1.APIEndpoint{Host: "api.c1.example.com", Port: 6443},
			IgnitionEndpoint: &infrav1.IgnitionEndpoint{Url: "https://fd00::5/config/worker",
				CaCertificateReference: &infrav1.CaCertificateReference{Namespace: ns, Name: "ca"}},
		},
	})).To(Succeed())
	g.Expect(env.Client.Create(ctx, newCluster(ns, nil))).To(Succeed())

	key := client.ObjectKey{Namespace: ns, Name: "c1"}
	g.Eventually(func(g Gomega) {
		ac := &infrav1.AgentCluster{}
		g.Expect(env.Client.Get(ctx, key, ac)).To(Succeed())
		g.Expect(ac.Spec.ClusterDeploymentRef).To(Equal(&infrav1.ClusterDeploymentReference{Namespace: ns, Name: "c1"}))
		g.Expect(ac.Status.Initialization.Provisioned).To(Equal(ptr.To(true)))
		g.Expect(ac.Labels).To(HaveKeyWithValue(infrav1.BackupLabel, "true"), "in ACM's hub backups, as cluster-api-provider-agent labels it")
		g.Expect(conditions.IsTrue(ac, infrav1.ClusterDeploymentReadyCondition)).To(BeTrue())
		g.Expect(ac.Status.FailureDomains).To(Equal([]clusterv1.FailureDomain{
			{Name: "rack-a", ControlPlane: ptr.To(true)}, {Name: "rack-b", ControlPlane: ptr.To(true)},
		}))
		cluster := &clusterv1.Cluster{}
		g.Expect(env.Client.Get(ctx, key, cluster)).To(Succeed())
		g.Expect(cluster.Status.Initialization.InfrastructureProvisioned).To(Equal(ptr.To(true)))
	}, timeout, interval).Should(Succeed())
	cd := &hivev1.ClusterDeployment{}
	g.Expect(env.Client.Get(ctx, key, cd)).To(Succeed())
	g.Expect(cd.Spec.Platform.AgentBareMetal).NotTo(BeNil())
	g.Expect(cd.Spec.BaseDomain).To(Equal("example.com"))
	g.Expect(cd.Spec.ClusterInstallRef.Kind).To(Equal("AgentClusterInstall"))
	aci := &hiveextv1beta1.AgentClusterInstall{}
	g.Expect(env.Client.Get(ctx, key, aci)).To(Succeed())
	g.Expect(aci.Spec.IgnitionEndpoint).NotTo(BeNil())
	g.Expect(aci.Spec.IgnitionEndpoint.Url).To(Equal("https://[fd00::5]/config"), "assisted-service appends the pool, worker")
	g.Expect(aci.Spec.IgnitionEndpoint.CaCertificateReference.Name).To(Equal("ca"))

	g.Expect(env.Client.Delete(ctx, &infrav1.AgentCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c1"}})).To(Succeed())
	g.Eventually(func(g Gomega) {
		for _, obj := range []client.Object{&infrav1.AgentCluster{}, &hivev1.ClusterDeployment{}, &hiveextv1beta1.AgentClusterInstall{}} {
			g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, key, obj))).To(BeTrue(), "%T still exists", obj)
		}
	}, timeout, interval).Should(Succeed())
}

// TestAgentClusterUsesControlPlaneClusterDeployment: under an OpenshiftAssistedControlPlane the
// AgentCluster waits for the ClusterDeployment that provider creates (named after the Cluster),
// records it, creates nothing, and leaves it in place when deleted.
func TestAgentClusterUsesControlPlaneClusterDeployment(t *testing.T) {
	t.Parallel() // see suite_test.go
	g := NewWithT(t)
	ctx := context.Background()
	ns, err := env.CreateNamespace(ctx, "acluster-oacp")
	g.Expect(err).NotTo(HaveOccurred())
	startManager(t, managerConfig{opts: manager.Options{WatchNamespace: ns}})
	g.Expect(env.Client.Create(ctx, &infrav1.AgentCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c1-infra"},
		Spec: infrav1.AgentClusterSpec{
			ControlPlaneEndpoint: infrav1.APIEndpoint{Host: "192.168.111.5", Port: 6443},
		},
	})).To(Succeed())
	cluster := newCluster(ns, &clusterv1.ContractVersionedObjectReference{
		APIGroup: "controlplane.cluster.x-k8s.io", Kind: controlplanev1.ControlPlaneKind, Name: "c1",
	})
	cluster.Spec.InfrastructureRef.Name = "c1-infra"
	g.Expect(env.Client.Create(ctx, cluster)).To(Succeed())
	acKey := client.ObjectKey{Namespace: ns, Name: "c1-infra"}
	g.Eventually(func(g Gomega) {
		ac := &infrav1.AgentCluster{}
		g.Expect(env.Client.Get(ctx, acKey, ac)).To(Succeed())
		c := conditions.Get(ac, infrav1.ClusterDeploymentReadyCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(infrav1.WaitingForControlPlaneClusterDeploymentReason))
		g.Expect(ac.Spec.ClusterDeploymentRef).To(BeNil())
	}, timeout, interval).Should(Succeed())

	// The control plane provider creates its ClusterDeployment: the watch wakes the AgentCluster.
	g.Expect(env.Client.Create(ctx, clusterDeployment(ns, "c1", "c1"))).To(Succeed())
	g.Eventually(func(g Gomega) {
		ac := &infrav1.AgentCluster{}
		g.Expect(env.Client.Get(ctx, acKey, ac)).To(Succeed())
		g.Expect(ac.Spec.ClusterDeploymentRef).To(Equal(&infrav1.ClusterDeploymentReference{Namespace: ns, Name: "c1"}))
		g.Expect(ac.Status.Initialization.Provisioned).To(Equal(ptr.To(true)))
	}, timeout, interval).Should(Succeed())
	acis := &hiveextv1beta1.AgentClusterInstallList{}
	g.Expect(env.Client.List(ctx, acis, client.InNamespace(ns))).To(Succeed())
	g.Expect(acis.Items).To(BeEmpty())

	g.Expect(env.Client.Delete(ctx, &infrav1.AgentCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c1-infra"}})).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, acKey, &infrav1.AgentCluster{}))).To(BeTrue())
	}, timeout, interval).Should(Succeed())
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "c1"}, &hivev1.ClusterDeployment{})).To(Succeed())
}

// TestAgentClusterPause: a paused Cluster pauses its AgentCluster, which says so.
func TestAgentClusterPause(t *testing.T) {
	t.Parallel() // see suite_test.go
	g := NewWithT(t)
	ctx := context.Background()
	ns, err := env.CreateNamespace(ctx, "acluster-pause")
	g.Expect(err).NotTo(HaveOccurred())
	startManager(t, managerConfig{opts: manager.Options{WatchNamespace: ns}})
	g.Expect(env.Client.Create(ctx, &infrav1.AgentCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c1"},
		Spec:       infrav1.AgentClusterSpec{ControlPlaneEndpoint: infrav1.APIEndpoint{Host: "api.c1.example.com", Port: 6443}},
	})).To(Succeed())
	cluster := newCluster(ns, nil)
	g.Expect(env.Client.Create(ctx, cluster)).To(Succeed())
	key := client.ObjectKey{Namespace: ns, Name: "c1"}
	g.Eventually(func(g Gomega) {
		ac := &infrav1.AgentCluster{}
		g.Expect(env.Client.Get(ctx, key, ac)).To(Succeed())
		g.Expect(conditions.IsFalse(ac, clusterv1.PausedCondition)).To(BeTrue())
		g.Expect(ac.Status.Initialization.Provisioned).To(Equal(ptr.To(true)))
	}, timeout, interval).Should(Succeed())
	g.Expect(pause.SetCluster(ctx, env.Client, key, true)).To(Succeed())
	g.Eventually(func(g Gomega) {
		ac := &infrav1.AgentCluster{}
		g.Expect(env.Client.Get(ctx, key, ac)).To(Succeed())
		g.Expect(conditions.IsTrue(ac, clusterv1.PausedCondition)).To(BeTrue())
	}, timeout, interval).Should(Succeed())
}

// TestAgentClusterAdoptsUpstreamClusterDeployment: under HyperShift, openshift/cluster-api-provider-agent
// created the ClusterDeployment (installed, labelled agentClusterRef) and the AgentClusterInstall
// for the AgentCluster, owned without a controller reference, and recorded them in status only.
// After the switch the AgentCluster adopts both (it becomes their controller, their spec is kept),
// hands them its ignition endpoint and is provisioned; before, it reported the endpoint unused.
func TestAgentClusterAdoptsUpstreamClusterDeployment(t *testing.T) {
	t.Parallel() // see suite_test.go
	g := NewWithT(t)
	ctx := context.Background()
	ns, err := env.CreateNamespace(ctx, "acluster-upstream")
	g.Expect(err).NotTo(HaveOccurred())
	ac := &infrav1.AgentCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hosted"},
		Spec: infrav1.AgentClusterSpec{
			ControlPlaneEndpoint: infrav1.APIEndpoint{Host: "api.hosted.example.com", Port: 6443},
			IgnitionEndpoint: &infrav1.IgnitionEndpoint{Url: "https://ignition.hosted.example.com/ignition",
				CaCertificateReference: &infrav1.CaCertificateReference{Namespace: ns, Name: "ignition-server-ca-cert"}},
		},
	}
	g.Expect(env.Client.Create(ctx, ac)).To(Succeed())
	owner := []metav1.OwnerReference{{APIVersion: infrav1.GroupVersion.String(), Kind: "AgentCluster", Name: ac.Name, UID: ac.UID}}
	cd := clusterDeployment(ns, "hosted", "hosted")
	cd.Labels = map[string]string{"agentClusterRef": "hosted"}
	cd.OwnerReferences = owner
	cd.Spec.Installed = true
	cd.Spec.BaseDomain = "hosted.example.com"
	cd.Spec.ClusterInstallRef = &hivev1.ClusterInstallLocalReference{Group: hiveextv1beta1.Group, Version: hiveextv1beta1.Version, Kind: "AgentClusterInstall", Name: "hosted"}
	g.Expect(env.Client.Create(ctx, cd)).To(Succeed())
	aci := &hiveextv1beta1.AgentClusterInstall{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hosted", OwnerReferences: owner},
		Spec: hiveextv1beta1.AgentClusterInstallSpec{
			ClusterDeploymentRef:  corev1.LocalObjectReference{Name: "hosted"},
			ProvisionRequirements: hiveextv1beta1.ProvisionRequirements{ControlPlaneAgents: 3},
		},
	}
	g.Expect(env.Client.Create(ctx, aci)).To(Succeed())
	cluster := newCluster(ns, &clusterv1.ContractVersionedObjectReference{
		APIGroup: "hypershift.openshift.io", Kind: "HostedControlPlane", Name: "hosted",
	})
	cluster.Spec.InfrastructureRef.Name = "hosted"
	g.Expect(env.Client.Create(ctx, cluster)).To(Succeed())
	startManager(t, managerConfig{opts: manager.Options{WatchNamespace: ns}})

	key := client.ObjectKey{Namespace: ns, Name: "hosted"}
	g.Eventually(func(g Gomega) {
		got := &infrav1.AgentCluster{}
		g.Expect(env.Client.Get(ctx, key, got)).To(Succeed())
		g.Expect(got.Spec.ClusterDeploymentRef).To(Equal(&infrav1.ClusterDeploymentReference{Namespace: ns, Name: "hosted"}))
		g.Expect(conditions.IsTrue(got, infrav1.ClusterDeploymentReadyCondition)).To(BeTrue(), "%v", conditions.Get(got, infrav1.ClusterDeploymentReadyCondition))
		g.Expect(got.Status.Initialization.Provisioned).To(Equal(ptr.To(true)))
		gotACI := &hiveextv1beta1.AgentClusterInstall{}
		g.Expect(env.Client.Get(ctx, key, gotACI)).To(Succeed())
		g.Expect(metav1.IsControlledBy(gotACI, got)).To(BeTrue())
		g.Expect(gotACI.Spec.IgnitionEndpoint).NotTo(BeNil())
		// As cluster-api-provider-agent writes it: assisted-service appends the Agent's machine
		// config pool ("ignition", the last segment of the Machine's ignition URL).
		g.Expect(gotACI.Spec.IgnitionEndpoint.Url).To(Equal("https://ignition.hosted.example.com"))
	}, timeout, interval).Should(Succeed())
	gotCD := &hivev1.ClusterDeployment{}
	g.Expect(env.Client.Get(ctx, key, gotCD)).To(Succeed())
	g.Expect(metav1.IsControlledBy(gotCD, ac)).To(BeTrue())
	g.Expect(gotCD.Spec.Installed).To(BeTrue(), "upstream's spec is kept")
	g.Expect(gotCD.Spec.BaseDomain).To(Equal("hosted.example.com"))
	g.Expect(gotCD.Labels).To(HaveKeyWithValue("agentClusterRef", "hosted"))
	g.Expect(gotCD.Labels).To(HaveKeyWithValue(infrav1.AgentClusterLabel, "hosted"))
}

// TestAgentClusterOfAHostedControlPlane: under HyperShift the Cluster's control plane is a
// HostedControlPlane (HyperShift's own CRD), and the AgentCluster's ClusterDeployment describes
// the running hosted cluster, as cluster-api-provider-agent writes it: installed, named after the
// HostedControlPlane, with its base domain, pull secret and admin kubeconfig, and an
// AgentClusterInstall with user-managed networking. Until the HostedControlPlane reports its
// kubeconfig, the AgentCluster says it waits. Before, it created a day-1 ClusterDeployment with
// a base domain guessed from the API host.
func TestAgentClusterOfAHostedControlPlane(t *testing.T) {
	t.Parallel() // see suite_test.go
	g := NewWithT(t)
	ctx := context.Background()
	g.Expect(testenv.InstallHostedControlPlaneCRD(ctx, env.Client)).To(Succeed())
	ns, err := env.CreateNamespace(ctx, "acluster-hcp")
	g.Expect(err).NotTo(HaveOccurred())
	// As HyperShift's reconcileAgentCluster writes it before the hosted API server has an
	// endpoint: host and port written, empty (its Cluster API v1beta1 types have no omitempty).
	ac := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
		"controlPlaneEndpoint": map[string]any{"host": "", "port": int64(0)},
		"ignitionEndpoint": map[string]any{"url": "https://ignition.hosted.example.com/ignition",
			"caCertificateReference": map[string]any{"namespace": ns, "name": "ignition-server-ca-cert"}},
	}}}
	ac.SetGroupVersionKind(infrav1.GroupVersion.WithKind("AgentCluster"))
	ac.SetNamespace(ns)
	ac.SetName("hosted")
	g.Expect(env.Client.Create(ctx, ac)).To(Succeed())
	cluster := newCluster(ns, &clusterv1.ContractVersionedObjectReference{
		APIGroup: "hypershift.openshift.io", Kind: "HostedControlPlane", Name: "hosted",
	})
	cluster.Spec.InfrastructureRef.Name = "hosted"
	g.Expect(env.Client.Create(ctx, cluster)).To(Succeed())
	startManager(t, managerConfig{opts: manager.Options{WatchNamespace: ns}})
	key := client.ObjectKey{Namespace: ns, Name: "hosted"}

	g.Eventually(func(g Gomega) {
		got := &infrav1.AgentCluster{}
		g.Expect(env.Client.Get(ctx, key, got)).To(Succeed())
		c := conditions.Get(got, infrav1.ClusterDeploymentReadyCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(infrav1.WaitingForHostedControlPlaneReason))
		g.Expect(c.Message).To(ContainSubstring("HostedControlPlane hosted"))
	}, timeout, interval).Should(Succeed())
	g.Expect(apierrors.IsNotFound(env.Client.Get(ctx, key, &hivev1.ClusterDeployment{}))).To(BeTrue(), "no ClusterDeployment before the HostedControlPlane")

	// A HostedControlPlane as HyperShift writes it for the agent platform.
	hcp := testenv.HostedControlPlane(ns, "hosted", ns)
	g.Expect(env.Client.Create(ctx, hcp)).To(Succeed())
	g.Eventually(func(g Gomega) {
		got := &infrav1.AgentCluster{}
		g.Expect(env.Client.Get(ctx, key, got)).To(Succeed())
		g.Expect(conditions.Get(got, infrav1.ClusterDeploymentReadyCondition).Message).To(ContainSubstring(".status.kubeConfig.name"))
	}, timeout, interval).Should(Succeed())
	g.Expect(testenv.HostedControlPlaneStarted(hcp)).To(Succeed())
	g.Expect(env.Client.Status().Update(ctx, hcp)).To(Succeed())

	// The empty endpoint is read as not known yet, until HyperShift writes the one its
	// HostedControlPlane reports.
	g.Eventually(func(g Gomega) {
		got := &infrav1.AgentCluster{}
		g.Expect(env.Client.Get(ctx, key, got)).To(Succeed())
		g.Expect(conditions.Get(got, infrav1.ClusterDeploymentReadyCondition).Reason).To(Equal(infrav1.WaitingForControlPlaneEndpointReason))
		g.Expect(got.Status.Initialization.Provisioned).NotTo(Equal(ptr.To(true)))
	}, timeout, interval).Should(Succeed())
	g.Expect(env.Client.Patch(ctx, ac, client.RawPatch(types.MergePatchType,
		[]byte(`{"spec":{"controlPlaneEndpoint":{"host":"api.hosted.example.com","port":6443}}}`)))).To(Succeed())

	g.Eventually(func(g Gomega) {
		got := &infrav1.AgentCluster{}
		g.Expect(env.Client.Get(ctx, key, got)).To(Succeed())
		g.Expect(got.Status.Initialization.Provisioned).To(Equal(ptr.To(true)))
	}, timeout, interval).Should(Succeed())
	cd := &hivev1.ClusterDeployment{}
	g.Expect(env.Client.Get(ctx, key, cd)).To(Succeed())
	g.Expect(cd.Spec.Installed).To(BeTrue())
	g.Expect(cd.Spec.ClusterName).To(Equal("hosted"))
	g.Expect(cd.Spec.BaseDomain).To(Equal("hosted.example.com"))
	g.Expect(cd.Spec.PullSecretRef).To(Equal(&corev1.LocalObjectReference{Name: "pull-secret"}))
	g.Expect(cd.Spec.ClusterMetadata).NotTo(BeNil())
	g.Expect(cd.Spec.ClusterMetadata.AdminKubeconfigSecretRef.Name).To(Equal("admin-kubeconfig"))
	g.Expect(cd.Spec.ClusterMetadata.AdminPasswordSecretRef).To(Equal(&corev1.LocalObjectReference{Name: "kubeadmin-password"}))
	live := &clusterv1.Cluster{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(cluster), live)).To(Succeed())
	g.Expect(cd.Spec.ClusterMetadata.InfraID).To(Equal(string(live.UID)))
	aci := &hiveextv1beta1.AgentClusterInstall{}
	g.Expect(env.Client.Get(ctx, key, aci)).To(Succeed())
	g.Expect(aci.Spec.Networking.UserManagedNetworking).To(Equal(ptr.To(true)))
	g.Expect(aci.Spec.IgnitionEndpoint.Url).To(Equal("https://ignition.hosted.example.com"))
}
