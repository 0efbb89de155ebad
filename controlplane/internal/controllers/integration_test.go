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
	"time"

	capm3v1beta2 "github.com/metal3-io/cluster-api-provider-metal3/api/v1beta2"
	. "github.com/onsi/gomega"
	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/controlplane/internal/controllers"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/reconciler"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/pause"
)

// expectInstalled waits for the control plane to report the cluster installed and checks the
// kubeconfig Secret and the status.
func expectInstalled(ctx context.Context, t *testing.T, f *fixture, wantReplicas int32) {
	t.Helper()
	g := NewWithT(t)
	g.Eventually(func(g Gomega) {
		o := f.getOACP(ctx, g)
		g.Expect(conditions.IsTrue(o, controlplanev1.AvailableCondition)).To(BeTrue(), "Available: %+v", conditions.Get(o, controlplanev1.AvailableCondition))
		g.Expect(conditions.IsTrue(o, controlplanev1.KubeconfigAvailableCondition)).To(BeTrue())
		g.Expect(o.Status.Initialization.ControlPlaneInitialized).To(Equal(ptr.To(true)))
		g.Expect(o.Status.DistributionVersion).To(Equal("4.17.3"))
		g.Expect(o.Status.Version).To(Equal("v1.30.4"))
		g.Expect(o.Status.Replicas).To(Equal(ptr.To(wantReplicas)))
		g.Expect(o.Status.Selector).To(ContainSubstring(clusterv1.MachineControlPlaneNameLabel + "=" + f.oacp.Name))
	}, timeout, interval).Should(Succeed())

	s := &corev1.Secret{}
	g.Expect(mgmt.Client.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: f.cluster.Name + "-kubeconfig"}, s)).To(Succeed())
	g.Expect(s.Type).To(Equal(clusterv1.ClusterSecretType))
	g.Expect(s.Data).To(HaveKeyWithValue("value", workloadKubeconfig))
	g.Expect(s.Labels).To(HaveKeyWithValue(clusterv1.ClusterNameLabel, f.cluster.Name))
	g.Expect(metav1.IsControlledBy(s, f.getOACP(ctx, g))).To(BeTrue(), "the kubeconfig Secret is owned by the control plane")
}

// TestInstallSingleNode installs single-node OpenShift (1 replica, no workers) to Available.
func TestInstallSingleNode(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	f := newFixture(ctx, t, fixtureOptions{replicas: 1})
	created := f.oacp.Spec.DeepCopy()

	aci := f.aci(ctx, g)
	g.Expect(aci.Spec.PlatformType).To(Equal(hiveextv1beta1.NonePlatformType))
	g.Expect(aci.Spec.Networking.UserManagedNetworking).To(Equal(ptr.To(true)))
	g.Expect(aci.Spec.ProvisionRequirements).To(Equal(hiveextv1beta1.ProvisionRequirements{ControlPlaneAgents: 1}))
	g.Expect(aci.Spec.Networking.ClusterNetwork).To(Equal([]hiveextv1beta1.ClusterNetworkEntry{{CIDR: "10.128.0.0/14", HostPrefix: 23}}))
	g.Expect(aci.Spec.ImageSetRef).To(Equal(&hivev1.ClusterImageSetReference{Name: controllers.ImageSetName(f.oacp)}))
	g.Expect(metav1.IsControlledBy(aci, f.oacp)).To(BeTrue())

	cd := &hivev1.ClusterDeployment{}
	g.Eventually(func() error { return mgmt.Client.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "c1"}, cd) }, timeout, interval).Should(Succeed())
	g.Expect(cd.Spec.ClusterName).To(Equal("c1"))
	g.Expect(cd.Spec.BaseDomain).To(Equal("example.com"))
	g.Expect(cd.Spec.PullSecretRef).To(Equal(&corev1.LocalObjectReference{Name: "pull-secret"}))
	g.Expect(cd.Spec.Platform.AgentBareMetal).NotTo(BeNil())
	g.Expect(cd.Spec.ClusterInstallRef).To(Equal(&hivev1.ClusterInstallLocalReference{
		Group: "extensions.hive.openshift.io", Version: "v1beta1", Kind: "AgentClusterInstall", Name: "c1"}))
	g.Expect(metav1.IsControlledBy(cd, f.oacp)).To(BeTrue())

	cis := &hivev1.ClusterImageSet{}
	g.Expect(mgmt.Client.Get(ctx, client.ObjectKey{Name: controllers.ImageSetName(f.oacp)}, cis)).To(Succeed())
	g.Expect(cis.Spec.ReleaseImage).To(Equal(pinnedRelease("4.17.3")), "pinned by digest")

	var machine clusterv1.Machine
	g.Eventually(func(g Gomega) {
		ms := f.machines(ctx, g)
		g.Expect(ms).To(HaveLen(1))
		machine = ms[0]
	}, timeout, interval).Should(Succeed())
	g.Expect(machine.Spec.Version).To(Equal("v1.30.4"), "the Machine carries the release's Kubernetes version")
	g.Expect(machine.Labels).To(HaveKeyWithValue(clusterv1.MachineControlPlaneLabel, ""))
	g.Expect(machine.Spec.Bootstrap.ConfigRef).To(Equal(clusterv1.ContractVersionedObjectReference{
		APIGroup: "bootstrap.cluster.x-k8s.io", Kind: "OpenshiftAssistedConfig", Name: machine.Name}))
	oac := &bootstrapv1.OpenshiftAssistedConfig{}
	g.Expect(mgmt.Client.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: machine.Name}, oac)).To(Succeed())
	g.Expect(oac.Spec.PullSecretRef).To(Equal(&corev1.LocalObjectReference{Name: "pull-secret"}))
	m3m := &capm3v1beta2.Metal3Machine{}
	g.Expect(mgmt.Client.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: machine.Spec.InfrastructureRef.Name}, m3m)).To(Succeed())
	g.Expect(m3m.Spec.Image.URL).To(Equal("http://images.example.com/live.iso"))
	// As KubeadmControlPlane: the Cluster owns the infrastructure template, so that it goes with
	// the Cluster (deletion, clusterctl move).
	tmpl := &capm3v1beta2.Metal3MachineTemplate{}
	g.Expect(mgmt.Client.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: f.oacp.Spec.MachineTemplate.Spec.InfrastructureRef.Name}, tmpl)).To(Succeed())
	g.Expect(tmpl.OwnerReferences).To(ContainElement(metav1.OwnerReference{
		APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: f.cluster.Name, UID: f.cluster.UID}))

	g.Eventually(func(g Gomega) {
		c := conditions.Get(f.getOACP(ctx, g), controlplanev1.ReleaseImageResolvedCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(c.Message).To(BeEmpty(), "a healthy condition has no message")
		// The release's Kubernetes version, resolved, is the Machines'.
		for _, m := range f.machines(ctx, g) {
			g.Expect(m.Spec.Version).To(Equal("v1.30.4"))
		}
	}, timeout, interval).Should(Succeed())

	f.simulateInstall(ctx, t)
	expectInstalled(ctx, t, f, 1)
	g.Expect(f.getOACP(ctx, g).Spec).To(Equal(*created), "the controller never edits the user's spec")
}

// TestInstallThreeControlPlanesTwoWorkers installs a 3-node control plane with VIPs, with two
// workers at day 1, spread across three failure domains.
func TestInstallThreeControlPlanesTwoWorkers(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := newFixture(ctx, t, fixtureOptions{replicas: 3, workers: 2, vips: []string{"192.168.111.5"}, failureDomains: []string{"rack-a", "rack-b", "rack-c"}})

	aci := f.aci(ctx, g)
	g.Expect(aci.Spec.PlatformType).To(Equal(hiveextv1beta1.BareMetalPlatformType))
	g.Expect(aci.Spec.APIVIPs).To(Equal([]string{"192.168.111.5"}))
	g.Expect(aci.Spec.IngressVIPs).To(Equal([]string{"192.168.111.5"}))
	g.Expect(aci.Spec.ProvisionRequirements).To(Equal(hiveextv1beta1.ProvisionRequirements{ControlPlaneAgents: 3, WorkerAgents: 2}))
	g.Eventually(func(g Gomega) {
		fds := []string{}
		for _, m := range f.machines(ctx, g) {
			fds = append(fds, m.Spec.FailureDomain)
		}
		g.Expect(fds).To(ConsistOf("rack-a", "rack-b", "rack-c"))
	}, timeout, interval).Should(Succeed())

	f.simulateInstall(ctx, t)
	f.simulateMachinesReady(ctx)
	expectInstalled(ctx, t, f, 3)
	g.Eventually(func(g Gomega) {
		o := f.getOACP(ctx, g)
		g.Expect(o.Status.ReadyReplicas).To(Equal(ptr.To[int32](3)))
		g.Expect(o.Status.AvailableReplicas).To(Equal(ptr.To[int32](3)))
		g.Expect(o.Status.UpToDateReplicas).To(Equal(ptr.To[int32](3)))
		g.Expect(conditions.IsTrue(o, controlplanev1.MachinesReadyCondition)).To(BeTrue())
	}, timeout, interval).Should(Succeed())
}

// TestIPv6Networking checks the AgentClusterInstall networking of an IPv6 Cluster.
func TestIPv6Networking(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	f := newFixture(ctx, t, fixtureOptions{replicas: 1, pods: []string{"fd01::/48"}, services: []string{"fd02::/112"}})
	aci := f.aci(ctx, g)
	g.Expect(aci.Spec.Networking.ClusterNetwork).To(Equal([]hiveextv1beta1.ClusterNetworkEntry{{CIDR: "fd01::/48", HostPrefix: 64}}))
	g.Expect(aci.Spec.Networking.ServiceNetwork).To(Equal([]string{"fd02::/112"}))
}

// TestScaleThroughScaleSubresource scales an installed control plane from 3 to 5 and back to 3
// through the scale subresource (what kubectl scale uses), honoring the delete annotation.
func TestScaleThroughScaleSubresource(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := newFixture(ctx, t, fixtureOptions{replicas: 3, vips: []string{"192.168.111.5"}})
	f.simulateMachinesReady(ctx)
	f.simulateInstall(ctx, t)
	expectInstalled(ctx, t, f, 3)

	scaleTo := func(n int32) {
		scale := &autoscalingv1.Scale{}
		g.Expect(mgmt.Client.SubResource("scale").Get(ctx, f.getOACP(ctx, g), scale)).To(Succeed())
		scale.Spec.Replicas = n
		g.Expect(mgmt.Client.SubResource("scale").Update(ctx, f.getOACP(ctx, g), client.WithSubResourceBody(scale))).To(Succeed())
	}
	scaleTo(5)
	g.Eventually(func(g Gomega) {
		o := f.getOACP(ctx, g)
		g.Expect(f.machines(ctx, g)).To(HaveLen(5))
		g.Expect(o.Status.Replicas).To(Equal(ptr.To[int32](5)))
		g.Expect(o.Status.ReadyReplicas).To(Equal(ptr.To[int32](5)))
		g.Expect(conditions.IsFalse(o, controlplanev1.ScalingUpCondition)).To(BeTrue())
	}, timeout, interval).Should(Succeed())

	scale := &autoscalingv1.Scale{}
	g.Expect(mgmt.Client.SubResource("scale").Get(ctx, f.getOACP(ctx, g), scale)).To(Succeed())
	g.Expect(scale.Status.Replicas).To(Equal(int32(5)))
	g.Expect(scale.Status.Selector).To(ContainSubstring(clusterv1.MachineControlPlaneLabel))

	// The newest Machine is marked for deletion: it must go first, though the oldest would otherwise.
	ms := f.machines(ctx, g)
	newest := ms[0]
	for _, m := range ms {
		if newest.CreationTimestamp.Before(&m.CreationTimestamp) {
			newest = m
		}
	}
	marked := newest.DeepCopy()
	marked.Annotations = map[string]string{clusterv1.DeleteMachineAnnotation: "yes"}
	g.Expect(mgmt.Client.Patch(ctx, marked, client.MergeFrom(&newest))).To(Succeed())

	scaleTo(3)
	g.Eventually(func(g Gomega) {
		names := []string{}
		for _, m := range f.machines(ctx, g) {
			names = append(names, m.Name)
		}
		g.Expect(names).To(HaveLen(3))
		g.Expect(names).NotTo(ContainElement(marked.Name))
		o := f.getOACP(ctx, g)
		g.Expect(o.Status.Replicas).To(Equal(ptr.To[int32](3)))
		g.Expect(conditions.IsFalse(o, controlplanev1.ScalingDownCondition)).To(BeTrue())
	}, timeout, interval).Should(Succeed())
}

// TestUpgradeAndRefusedDowngrade upgrades an installed cluster from 4.17.3 to 4.18.0 through the
// workload cluster's ClusterVersion, then refuses a downgrade.
func TestUpgradeAndRefusedDowngrade(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	f := newInstalledFixture(ctx, t, "4.17.3")

	setVersion := func(v string) {
		g.Eventually(func(g Gomega) {
			o := f.getOACP(ctx, g)
			o.Spec.DistributionVersion = v
			g.Expect(mgmt.Client.Update(ctx, o)).To(Succeed())
		}, timeout, interval).Should(Succeed())
	}
	setVersion("4.18.0")
	g.Eventually(func(g Gomega) {
		cv := getClusterVersion(ctx, g)
		g.Expect(cv.Spec.DesiredUpdate).NotTo(BeNil())
		g.Expect(cv.Spec.DesiredUpdate.Version).To(Equal("4.18.0"))
		o := f.getOACP(ctx, g)
		g.Expect(conditions.IsTrue(o, controlplanev1.UpgradingCondition)).To(BeTrue())
		g.Expect(conditions.GetMessage(o, controlplanev1.UpgradingCondition)).To(ContainSubstring("from 4.17.3 to 4.18.0"))
		g.Expect(o.Status.DistributionVersion).To(Equal("4.17.3"))
		g.Expect(o.Status.UpToDateReplicas).To(Equal(ptr.To[int32](0)), "Machines are updated in place: not up to date during the upgrade")
	}, timeout, interval).Should(Succeed())
	ms := f.machines(ctx, g)
	g.Expect(ms).To(HaveLen(1))
	g.Expect(conditions.GetReason(&ms[0], clusterv1.MachineUpToDateCondition)).To(Equal(clusterv1.MachineUpToDateUpdatingReason))
	before := ms[0]
	g.Expect(before.Spec.Version).NotTo(Equal("v1.31.2"), "the Machine keeps its version while its node updates")

	// The cluster-version operator completes the update.
	g.Expect(completeUpdate(ctx, "4.18.0", "4.17.3")).To(Succeed())
	g.Eventually(func(g Gomega) {
		o := f.getOACP(ctx, g)
		g.Expect(o.Status.DistributionVersion).To(Equal("4.18.0"))
		g.Expect(o.Status.Version).To(Equal("v1.31.2"))
		g.Expect(o.Status.UpToDateReplicas).To(Equal(ptr.To[int32](1)))
		g.Expect(conditions.IsFalse(o, controlplanev1.UpgradingCondition)).To(BeTrue())
		g.Expect(conditions.GetReason(o, controlplanev1.UpgradingCondition)).To(Equal(controlplanev1.NotUpgradingReason))
		// Updated in place: the same Machine, at the release's Kubernetes version.
		ms := f.machines(ctx, g)
		g.Expect(ms).To(HaveLen(1))
		g.Expect(ms[0].UID).To(Equal(before.UID))
		g.Expect(ms[0].Spec.Version).To(Equal("v1.31.2"))
	}, 2*timeout, interval).Should(Succeed())

	setVersion("4.17.3")
	g.Eventually(func(g Gomega) {
		o := f.getOACP(ctx, g)
		c := conditions.Get(o, controlplanev1.UpgradingCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(controlplanev1.UpgradeRefusedReason))
		g.Expect(c.Message).To(ContainSubstring("downgrading OpenShift from 4.18.0 to 4.17.3 is not supported"))
		g.Expect(o.Status.DistributionVersion).To(Equal("4.18.0"))
		events := &eventsv1.EventList{}
		g.Expect(mgmt.Client.List(ctx, events, client.InNamespace(f.ns))).To(Succeed())
		reasons := []string{}
		for _, e := range events.Items {
			reasons = append(reasons, e.Reason)
		}
		g.Expect(reasons).To(ContainElement("UpgradeRefused"))
	}, timeout, interval).Should(Succeed())
	g.Expect(getClusterVersion(ctx, g).Spec.DesiredUpdate.Version).To(Equal("4.18.0"), "a refused downgrade does not reach the cluster")
}

// TestDeleteLeavesNothingBehind deletes an installed control plane and checks that everything it
// created is gone.
func TestDeleteLeavesNothingBehind(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := newFixture(ctx, t, fixtureOptions{replicas: 3, vips: []string{"192.168.111.5"}})
	f.simulateMachinesReady(ctx)
	f.simulateInstall(ctx, t)
	expectInstalled(ctx, t, f, 3)

	g.Expect(mgmt.Client.Delete(ctx, f.getOACP(ctx, g))).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(mgmt.Client.Get(ctx, f.key(), &controlplanev1.OpenshiftAssistedControlPlane{}))
	}, timeout, interval).Should(BeTrue())

	inNS := client.InNamespace(f.ns)
	for _, list := range []client.ObjectList{
		&clusterv1.MachineList{}, &bootstrapv1.OpenshiftAssistedConfigList{}, &capm3v1beta2.Metal3MachineList{},
		&hivev1.ClusterDeploymentList{}, &hiveextv1beta1.AgentClusterInstallList{},
	} {
		g.Expect(mgmt.Client.List(ctx, list, inNS)).To(Succeed())
		g.Expect(list).To(HaveField("Items", BeEmpty()), "%T", list)
	}
	g.Expect(apierrors.IsNotFound(mgmt.Client.Get(ctx, client.ObjectKey{Name: controllers.ImageSetName(f.oacp)}, &hivev1.ClusterImageSet{}))).To(BeTrue())
	g.Expect(apierrors.IsNotFound(mgmt.Client.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "c1-kubeconfig"}, &corev1.Secret{}))).To(BeTrue())
}

// TestSameNameInTwoNamespaces runs two clusters with the same name in two namespaces: their
// cluster-scoped ClusterImageSets must not collide, and deleting one leaves the other intact.
func TestSameNameInTwoNamespaces(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	a := newFixture(ctx, t, fixtureOptions{replicas: 1})
	b := newFixture(ctx, t, fixtureOptions{replicas: 1, version: "4.18.0"})
	aciA, aciB := a.aci(ctx, g), b.aci(ctx, g)
	g.Expect(aciA.Spec.ImageSetRef.Name).NotTo(Equal(aciB.Spec.ImageSetRef.Name))
	for _, tc := range []struct {
		aci     *hiveextv1beta1.AgentClusterInstall
		version string
	}{{aciA, "4.17.3"}, {aciB, "4.18.0"}} {
		cis := &hivev1.ClusterImageSet{}
		g.Expect(mgmt.Client.Get(ctx, client.ObjectKey{Name: tc.aci.Spec.ImageSetRef.Name}, cis)).To(Succeed())
		g.Expect(cis.Spec.ReleaseImage).To(Equal(pinnedRelease(tc.version)))
	}

	g.Expect(mgmt.Client.Delete(ctx, a.getOACP(ctx, g))).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(mgmt.Client.Get(ctx, client.ObjectKey{Name: aciA.Spec.ImageSetRef.Name}, &hivev1.ClusterImageSet{}))
	}, timeout, interval).Should(BeTrue())
	g.Expect(mgmt.Client.Get(ctx, client.ObjectKey{Name: aciB.Spec.ImageSetRef.Name}, &hivev1.ClusterImageSet{})).To(Succeed())
	g.Expect(mgmt.Client.Get(ctx, client.ObjectKeyFromObject(aciB), &hiveextv1beta1.AgentClusterInstall{})).To(Succeed())
}

// TestPauseIsHonored creates a control plane whose Cluster is paused: it reports Paused and
// creates nothing until the Cluster is unpaused.
func TestPauseIsHonored(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	f := newFixture(ctx, t, fixtureOptions{replicas: 1, paused: true})
	g.Eventually(func(g Gomega) {
		g.Expect(conditions.IsTrue(f.getOACP(ctx, g), clusterv1.PausedCondition)).To(BeTrue())
	}, timeout, interval).Should(Succeed())
	g.Expect(apierrors.IsNotFound(mgmt.Client.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "c1"}, &hiveextv1beta1.AgentClusterInstall{}))).To(BeTrue(),
		"nothing is created while paused")
	g.Expect(f.getOACP(ctx, g).Finalizers).To(BeEmpty())

	g.Expect(pause.SetCluster(ctx, mgmt.Client, client.ObjectKeyFromObject(f.cluster), false)).To(Succeed())
	f.aci(ctx, g)
	g.Eventually(func(g Gomega) {
		g.Expect(conditions.IsFalse(f.getOACP(ctx, g), clusterv1.PausedCondition)).To(BeTrue())
	}, timeout, interval).Should(Succeed())
}

// TestDeleteAfterTheClusterIsGone deletes the control plane after its Cluster object disappeared:
// the deletion still finishes and leaves nothing behind.
func TestDeleteAfterTheClusterIsGone(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	f := newFixture(ctx, t, fixtureOptions{replicas: 1})
	f.simulateInstall(ctx, t)
	expectInstalled(ctx, t, f, 1)

	g.Expect(mgmt.Client.Delete(ctx, f.cluster)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(mgmt.Client.Get(ctx, client.ObjectKeyFromObject(f.cluster), &clusterv1.Cluster{}))
	}, timeout, interval).Should(BeTrue())
	g.Expect(mgmt.Client.Delete(ctx, f.getOACP(ctx, g))).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(mgmt.Client.Get(ctx, f.key(), &controlplanev1.OpenshiftAssistedControlPlane{}))
	}, timeout, interval).Should(BeTrue())
	for _, list := range []client.ObjectList{&clusterv1.MachineList{}, &hiveextv1beta1.AgentClusterInstallList{}, &hivev1.ClusterDeploymentList{}} {
		g.Expect(mgmt.Client.List(ctx, list, client.InNamespace(f.ns))).To(Succeed())
		g.Expect(list).To(HaveField("Items", BeEmpty()), "%T", list)
	}
	g.Expect(apierrors.IsNotFound(mgmt.Client.Get(ctx, client.ObjectKey{Name: controllers.ImageSetName(f.oacp)}, &hivev1.ClusterImageSet{}))).To(BeTrue())
}

// unreachableRegistry is an allowed registry (see main_test.go) that does not answer.
const unreachableRegistry = "127.0.0.1:1"

// TestUnreachableReleaseImageDoesNotBlockTheInstall points the release image at a registry that
// does not answer: the control plane says so in a condition, in its own words, and still installs.
func TestUnreachableReleaseImageDoesNotBlockTheInstall(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	f := newFixture(ctx, t, fixtureOptions{replicas: 1, releaseRepository: unreachableRegistry + "/ocp-release"})
	g.Eventually(func(g Gomega) {
		c := conditions.Get(f.getOACP(ctx, g), controlplanev1.ReleaseImageResolvedCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Reason).To(Equal(controlplanev1.ReleaseImageNotResolvedReason))
		g.Expect(c.Message).To(ContainSubstring("Cannot read the Kubernetes version of release image 127.0.0.1:1/ocp-release:4.17.3-x86_64"))
		g.Expect(c.Message).To(ContainSubstring("the registry cannot be reached (connection refused)"))
		g.Expect(c.Message).NotTo(ContainSubstring("dial tcp"), "the condition quotes the network error")
		g.Expect(f.machines(ctx, g)).To(HaveLen(1))
	}, timeout, interval).Should(Succeed())
	f.aci(ctx, g)
}

// TestReleaseImageOnARegistryNotAllowedIsNotRead: the release-image-repository annotation names a
// registry that is not in the manager's --allowed-release-registries. The manager does not
// contact it (the host does not even resolve), says which host and which flag in the condition,
// and installs nothing: no ClusterImageSet would send the hub to that registry.
func TestReleaseImageOnARegistryNotAllowedIsNotRead(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	f := newFixture(ctx, t, fixtureOptions{replicas: 1, releaseRepository: "mirror.example.invalid:5000/ocp-release"})
	g.Eventually(func(g Gomega) {
		c := conditions.Get(f.getOACP(ctx, g), controlplanev1.ReleaseImageResolvedCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Reason).To(Equal(controlplanev1.ReleaseImageRegistryNotAllowedReason))
		g.Expect(c.Message).To(ContainSubstring("Release image mirror.example.invalid:5000/ocp-release:4.17.3-x86_64"))
		g.Expect(c.Message).To(ContainSubstring("registry mirror.example.invalid:5000 is not allowed"))
		g.Expect(c.Message).To(ContainSubstring("--allowed-release-registries"))
		available := conditions.Get(f.getOACP(ctx, g), controlplanev1.AvailableCondition)
		g.Expect(available).NotTo(BeNil())
		g.Expect(available.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(available.Reason).To(Equal(controlplanev1.ReleaseImageRegistryNotAllowedReason))
		g.Expect(available.Message).To(ContainSubstring("the hub would pull it from there"))
	}, timeout, interval).Should(Succeed())
	g.Consistently(func(g Gomega) {
		err := mgmt.Client.Get(ctx, client.ObjectKey{Name: controllers.ImageSetName(f.oacp)}, &hivev1.ClusterImageSet{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "a ClusterImageSet on the registry: %v", err)
		g.Expect(f.machines(ctx, g)).To(BeEmpty())
	}, 2*time.Second, interval).Should(Succeed())
}

// TestEmptyKubeconfigSecretCreatedAheadIsAdoptedAndFilled: a <cluster>-kubeconfig Secret without
// data that exists before the install (a user or a tool created it) neither panics the reconcile
// nor stays empty.
func TestEmptyKubeconfigSecretCreatedAheadIsAdoptedAndFilled(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := newFixture(ctx, t, fixtureOptions{replicas: 1})
	empty := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: f.cluster.Name + "-kubeconfig",
		Labels: map[string]string{clusterv1.ClusterNameLabel: f.cluster.Name}}, Type: clusterv1.ClusterSecretType}
	g.Expect(mgmt.Client.Create(ctx, empty)).To(Succeed())

	f.simulateInstall(ctx, t)
	f.simulateMachinesReady(ctx)
	expectInstalled(ctx, t, f, 1)
}

// TestInstallSpecRejectedIsShown: when assisted-service cannot apply the AgentClusterInstall's
// spec (SpecSynced False, InputError), the control plane says so in Available, with its
// message, and raises a Warning event; it does not claim to be installing.
func TestInstallSpecRejectedIsShown(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := newFixture(ctx, t, fixtureOptions{replicas: 1})
	aci := f.aci(ctx, g)
	const why = "The Spec could not be synced due to an input error: Cluster network CIDR prefix 14 does not contain enough addresses for 1 hosts each one with 23 prefix"
	g.Eventually(func(g Gomega) {
		g.Expect(mgmt.Client.Get(ctx, client.ObjectKeyFromObject(aci), aci)).To(Succeed())
		aci.Status.Conditions = []hivev1.ClusterInstallCondition{{
			Type: hiveextv1beta1.ClusterSpecSyncedCondition, Status: corev1.ConditionFalse, Reason: hiveextv1beta1.ClusterInputErrorReason,
			Message: why, LastTransitionTime: metav1.Now(), LastProbeTime: metav1.Now(),
		}}
		g.Expect(mgmt.Client.Status().Update(ctx, aci)).To(Succeed())
	}, timeout, interval).Should(Succeed())
	g.Eventually(func(g Gomega) {
		c := conditions.Get(f.getOACP(ctx, g), controlplanev1.AvailableCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(controlplanev1.InstallSpecRejectedReason))
		g.Expect(c.Message).To(ContainSubstring("SpecSynced InputError): " + why))
		g.Expect(c.Message).To(ContainSubstring("correct them"))
		events := &eventsv1.EventList{}
		g.Expect(mgmt.Client.List(ctx, events, client.InNamespace(f.ns))).To(Succeed())
		var warned bool
		seen := []string{}
		for _, e := range events.Items {
			seen = append(seen, e.Regarding.Kind+"/"+e.Regarding.Name+" "+e.Type+" "+e.Reason)
			warned = warned || (e.Regarding.Name == f.oacp.Name && e.Type == corev1.EventTypeWarning && e.Reason == controlplanev1.InstallSpecRejectedReason)
		}
		g.Expect(warned).To(BeTrue(), "a Warning event on the control plane; events: %v", seen)
	}, timeout, interval).Should(Succeed())
}

// TestSpecErrorsAreShown: a reconcile error the user has to fix reaches the control plane, not
// only the manager's log: a pod network too small for the nodes, and an AgentClusterInstall of the
// Cluster's name that belongs to someone else, each set Available False with a reason and a
// message that says what to fix, and raise a Warning event.
func TestSpecErrorsAreShown(t *testing.T) {
	for name, tc := range map[string]struct {
		o           fixtureOptions
		before      func(ctx context.Context, g Gomega, ns string)
		wantReason  string
		wantMessage string
	}{
		"pod network too small": {
			o:          fixtureOptions{replicas: 1, pods: []string{"10.128.0.0/26"}, services: []string{"172.30.0.0/16"}},
			wantReason: controlplanev1.InvalidSpecReason,
			wantMessage: "Creating or updating AgentClusterInstall c1: cluster network 10.128.0.0/26 is too small: it must be a /25 or larger; " +
				"correct the Cluster's spec.clusterNetwork",
		},
		"the image registry ConfigMap does not exist": {
			o:           fixtureOptions{replicas: 1, imageRegistry: "mirrors"},
			wantReason:  controlplanev1.ImageRegistryInvalidReason,
			wantMessage: "ConfigMap mirrors, which spec.config.imageRegistryRef names, does not exist: create it (keys registries.conf and, optionally, ca-bundle.crt)",
		},
		"the image registry ConfigMap has no mirrors": {
			o: fixtureOptions{replicas: 1, imageRegistry: "mirrors"},
			before: func(ctx context.Context, g Gomega, ns string) {
				g.Expect(mgmt.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mirrors"},
					Data: map[string]string{"registries.conf": "[[registry]]\nlocation = \"quay.io\"\n"}})).To(Succeed())
			},
			wantReason:  controlplanev1.ImageRegistryInvalidReason,
			wantMessage: "ConfigMap mirrors, which spec.config.imageRegistryRef names, cannot be used: registry quay.io of its registries.conf has no [[registry.mirror]]",
		},
		"an AgentClusterInstall of that name belongs to someone else": {
			o: fixtureOptions{replicas: 1},
			before: func(ctx context.Context, g Gomega, ns string) {
				g.Expect(mgmt.Client.Create(ctx, &hiveextv1beta1.AgentClusterInstall{
					ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c1"},
					Spec:       hiveextv1beta1.AgentClusterInstallSpec{ClusterDeploymentRef: corev1.LocalObjectReference{Name: "c1"}},
				})).To(Succeed())
			},
			wantReason:  controlplanev1.NotOwnedReason,
			wantMessage: "AgentClusterInstall c1 exists and is not owned by this control plane: it is not taken over; delete it, or name the Cluster otherwise",
		},
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := context.Background()
			ns, err := mgmt.CreateNamespace(ctx, "cperr")
			g.Expect(err).NotTo(HaveOccurred())
			if tc.before != nil {
				tc.before(ctx, g, ns)
			}
			tc.o.namespace = ns
			f := newFixture(ctx, t, tc.o)
			g.Eventually(func(g Gomega) {
				c := conditions.Get(f.getOACP(ctx, g), controlplanev1.AvailableCondition)
				g.Expect(c).NotTo(BeNil())
				g.Expect(c.Reason).To(Equal(tc.wantReason))
				g.Expect(c.Message).To(Equal(tc.wantMessage))
				events := &eventsv1.EventList{}
				g.Expect(mgmt.Client.List(ctx, events, client.InNamespace(f.ns))).To(Succeed())
				var notes []string
				for _, e := range events.Items {
					if e.Regarding.Name == f.oacp.Name && e.Type == corev1.EventTypeWarning && e.Reason == reconciler.ReconcileErrorEvent {
						notes = append(notes, e.Note)
					}
				}
				g.Expect(notes).To(ContainElement(tc.wantMessage))
			}, timeout, interval).Should(Succeed())
		})
	}
}

// TestImageRegistryReachesTheInstall: the mirrors of spec.config.imageRegistryRef reach the
// installed cluster as manifests (an ImageDigestMirrorSet, the CA and the image config) that the
// AgentClusterInstall references; no AgentClusterInstall is written while the ConfigMap is missing,
// and a change to it before the install starts is carried over.
func TestImageRegistryReachesTheInstall(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	f := newFixture(ctx, t, fixtureOptions{replicas: 1, imageRegistry: "mirrors"})
	g.Eventually(func(g Gomega) {
		g.Expect(conditions.GetReason(f.getOACP(ctx, g), controlplanev1.AvailableCondition)).To(Equal(controlplanev1.ImageRegistryInvalidReason))
	}, timeout, interval).Should(Succeed())
	err := mgmt.Client.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: f.cluster.Name}, &hiveextv1beta1.AgentClusterInstall{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "no AgentClusterInstall without its mirrors: %v", err)

	conf := "[[registry]]\nlocation = \"quay.io/openshift-release-dev/ocp-release\"\n[[registry.mirror]]\nlocation = \"mirror.example:5000/ocp\"\n"
	registry := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "mirrors"}, Data: map[string]string{"registries.conf": conf}}
	g.Expect(mgmt.Client.Create(ctx, registry)).To(Succeed())
	manifests := &corev1.ConfigMap{}
	g.Eventually(func(g Gomega) {
		aci := f.aci(ctx, g)
		g.Expect(aci.Spec.ManifestsConfigMapRefs).To(ContainElement(hiveextv1beta1.ManifestsConfigMapReference{Name: "c1-additional-registry-config"}))
		g.Expect(mgmt.Client.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "c1-additional-registry-config"}, manifests)).To(Succeed())
		g.Expect(manifests.Data).To(HaveKey("image-digest-mirror-set.json"))
	}, timeout, interval).Should(Succeed())
	g.Expect(metav1.IsControlledBy(manifests, f.getOACP(ctx, g))).To(BeTrue())
	g.Expect(manifests.Labels).To(HaveKeyWithValue(clusterv1.ClusterNameLabel, "c1"))
	g.Expect(manifests.Data["image-digest-mirror-set.json"]).To(ContainSubstring("mirror.example:5000/ocp"))

	// Before the install starts, the ConfigMap's changes are carried over (at the next reconcile:
	// the spec change of the control plane below makes one at once).
	registry.Data["registries.conf"] = strings.ReplaceAll(conf, "mirror.example:5000", "mirror2.example:5000")
	g.Expect(mgmt.Client.Update(ctx, registry)).To(Succeed())
	oacp := f.getOACP(ctx, g)
	before := oacp.DeepCopy()
	oacp.Spec.Config.SSHAuthorizedKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIMi4c5B4pUq1mBNmRWQQPG/6Wj1v5yXw5kq2Rz3ZcK2E test"
	g.Expect(mgmt.Client.Patch(ctx, oacp, client.MergeFrom(before))).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(mgmt.Client.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "c1-additional-registry-config"}, manifests)).To(Succeed())
		g.Expect(manifests.Data["image-digest-mirror-set.json"]).To(ContainSubstring("mirror2.example:5000/ocp"))
	}, timeout, interval).Should(Succeed())
}

// TestReleaseImageFromAnAuthenticatedTLSMirror: a disconnected cluster's release, OpenShift's
// release on quay.io (which the manager may not reach), is mirrored, per the registries.conf of its
// image registry ConfigMap, to a mirror served over HTTPS by a private CA and requiring
// credentials. With the mirror's auths entry in the pull secret and its CA in the ConfigMap, the
// control plane reads it there and installs it pinned by digest in quay.io (where the cluster's
// ImageDigestMirrorSet sends it to the mirror); with a wrong password, it says which registry
// refused which credentials, without quoting them, in a condition and a Warning event, and
// nothing is installed.
func TestReleaseImageFromAnAuthenticatedTLSMirror(t *testing.T) {
	ctx := context.Background()
	registries := fmt.Sprintf("[[registry]]\nlocation = \"quay.io/openshift-release-dev/ocp-release\"\n[[registry.mirror]]\nlocation = \"%s/ocp-release\"\n", mirror.Host)
	for name, tc := range map[string]struct {
		password string
		want     func(g Gomega, f *fixture, c *metav1.Condition)
	}{
		"the pull secret's credentials": {password: mirrorPassword, want: func(g Gomega, f *fixture, c *metav1.Condition) {
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
			cis := &hivev1.ClusterImageSet{}
			g.Expect(mgmt.Client.Get(ctx, client.ObjectKey{Name: controllers.ImageSetName(f.oacp)}, cis)).To(Succeed())
			g.Expect(cis.Spec.ReleaseImage).To(Equal("quay.io/openshift-release-dev/ocp-release@"+mirrorDigest.String()), "the source, pinned by the mirror's digest")
			f.aci(ctx, g)
			machines := f.machines(ctx, g)
			g.Expect(machines).To(HaveLen(1))
			g.Expect(machines[0].Spec.Version).To(Equal("v1.30.4"), "the release's Kubernetes version, read from the mirror")
		}},
		"a wrong password": {password: "not-the-password", want: func(g Gomega, f *fixture, c *metav1.Condition) {
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(c.Reason).To(Equal(controlplanev1.ReleaseImageNotResolvedReason))
			g.Expect(c.Message).To(ContainSubstring("registry " + mirror.Host + " refused the pull secret's credentials for it"))
			g.Expect(c.Message).NotTo(ContainSubstring("not-the-password"))
			// The refusal is also a Warning event on the control plane.
			events := &eventsv1.EventList{}
			g.Expect(mgmt.Client.List(ctx, events, client.InNamespace(f.ns))).To(Succeed())
			g.Expect(events.Items).To(ContainElement(And(HaveField("Type", corev1.EventTypeWarning), HaveField("Reason", c.Reason), HaveField("Note", c.Message))))
			// Nothing is installed without the digest.
			o := f.getOACP(ctx, g)
			g.Expect(conditions.GetReason(o, controlplanev1.AvailableCondition)).To(Equal(controlplanev1.ReleaseImageNotResolvedReason))
			g.Expect(conditions.GetMessage(o, controlplanev1.AvailableCondition)).To(ContainSubstring("installs its release by digest"))
			err := mgmt.Client.Get(ctx, client.ObjectKey{Name: controllers.ImageSetName(f.oacp)}, &hivev1.ClusterImageSet{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "no ClusterImageSet: %v", err)
			err = mgmt.Client.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: f.cluster.Name}, &hiveextv1beta1.AgentClusterInstall{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "no AgentClusterInstall: %v", err)
		}},
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			ns, err := mgmt.CreateNamespace(ctx, "cp")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(mgmt.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mirrors"},
				Data: map[string]string{"registries.conf": registries, "ca-bundle.crt": string(mirror.CACertPEM())}})).To(Succeed())
			f := newFixture(ctx, t, fixtureOptions{namespace: ns, replicas: 1, imageRegistry: "mirrors",
				releaseRepository: "-", pullSecret: mirror.PullSecret(mirrorUser, tc.password)})
			g.Eventually(func(g Gomega) {
				c := conditions.Get(f.getOACP(ctx, g), controlplanev1.ReleaseImageResolvedCondition)
				g.Expect(c).NotTo(BeNil())
				tc.want(g, f, c)
			}, timeout, interval).Should(Succeed())
		})
	}
}
