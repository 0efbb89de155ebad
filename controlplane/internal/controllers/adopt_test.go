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
	"testing"
	"time"

	capm3v1beta2 "github.com/metal3-io/cluster-api-provider-metal3/api/v1beta2"
	. "github.com/onsi/gomega"
	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	hiveagent "github.com/openshift/hive/apis/hive/v1/agent"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/pause"
)

// TestAdoptsWhatTheUpstreamProviderInstalled: a three-node cluster that
// openshift-assisted/cluster-api-provider-openshift-assisted installed, as that provider leaves it
// (ensureClusterDeployment, ensureAgentClusterInstall, computeDesiredMachine,
// generateOpenshiftAssistedConfig): its finalizer on the control plane, the ClusterDeployment and
// AgentClusterInstall named after the control plane and owned by it without a controller
// reference (platform agentBareMetal without a selector, the ClusterImageSet of the control
// plane's name), its Machines with a controller reference and configs that copy
// openshiftAssistedConfigSpec as it is (no pull secret). After the switch the control plane
// adopts both objects, keeps their spec, replaces the finalizer and reports the cluster
// Available with its three Machines up to date: no Machine is created or deleted. Before, it
// reported "exists and is not owned" and the cluster could not be taken over.
func TestAdoptsWhatTheUpstreamProviderInstalled(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := newFixture(ctx, t, fixtureOptions{replicas: 3, paused: true})
	// The controller writes the paused control plane's Paused condition meanwhile: read again on
	// a conflict.
	var oacp *controlplanev1.OpenshiftAssistedControlPlane
	g.Eventually(func(g Gomega) {
		oacp = f.getOACP(ctx, g)
		controllerutil.AddFinalizer(oacp, controlplanev1.UpstreamOpenshiftAssistedControlPlaneFinalizer)
		g.Expect(mgmt.Client.Update(ctx, oacp)).To(Succeed())
	}).Should(Succeed())

	upstreamLabels := map[string]string{
		clusterv1.ClusterNameLabel: f.cluster.Name, clusterv1.MachineControlPlaneLabel: "", clusterv1.MachineControlPlaneNameLabel: oacp.Name,
	}
	owned := func(obj client.Object) {
		obj.SetLabels(upstreamLabels)
		g.Expect(controllerutil.SetOwnerReference(oacp, obj, mgmt.Client.Scheme())).To(Succeed())
	}
	admin := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: oacp.Name + "-admin-kubeconfig"},
		Data:       map[string][]byte{"kubeconfig": workloadKubeconfig},
	}
	g.Expect(mgmt.Client.Create(ctx, admin)).To(Succeed())
	cd := &hivev1.ClusterDeployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: oacp.Name},
		Spec: hivev1.ClusterDeploymentSpec{
			ClusterName: f.cluster.Name, BaseDomain: "example.com", Installed: true,
			Platform:      hivev1.Platform{AgentBareMetal: &hiveagent.BareMetalPlatform{}},
			PullSecretRef: &corev1.LocalObjectReference{Name: "pull-secret"},
			ClusterInstallRef: &hivev1.ClusterInstallLocalReference{
				Group: hiveextv1beta1.Group, Version: hiveextv1beta1.Version, Kind: "AgentClusterInstall", Name: oacp.Name},
		},
	}
	owned(cd)
	g.Expect(mgmt.Client.Create(ctx, cd)).To(Succeed())
	aci := &hiveextv1beta1.AgentClusterInstall{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: oacp.Name},
		Spec: hiveextv1beta1.AgentClusterInstallSpec{
			ClusterDeploymentRef:  corev1.LocalObjectReference{Name: cd.Name},
			ImageSetRef:           &hivev1.ClusterImageSetReference{Name: oacp.Name},
			PlatformType:          hiveextv1beta1.NonePlatformType,
			ProvisionRequirements: hiveextv1beta1.ProvisionRequirements{ControlPlaneAgents: 3},
			ClusterMetadata: &hivev1.ClusterMetadata{ClusterID: "9b1e9e1c-0000-4000-8000-000000000001", InfraID: "c1-x1",
				AdminKubeconfigSecretRef: corev1.LocalObjectReference{Name: admin.Name}},
		},
	}
	owned(aci)
	g.Expect(mgmt.Client.Create(ctx, aci)).To(Succeed())
	aci.Status.DebugInfo.State = "adding-hosts"
	aci.Status.Conditions = []hivev1.ClusterInstallCondition{{Type: hivev1.ClusterInstallCompleted, Status: corev1.ConditionTrue,
		Reason: "InstallationCompleted", Message: "The installation has completed: Cluster is installed", LastTransitionTime: metav1.Now(), LastProbeTime: metav1.Now()}}
	g.Expect(mgmt.Client.Status().Update(ctx, aci)).To(Succeed())
	g.Expect(createClusterVersion(ctx, oacp.Spec.DistributionVersion)).To(Succeed())
	wantCDSpec, wantACISpec := cd.Spec, aci.Spec

	var names []string
	for i := range 3 {
		name := fmt.Sprintf("%s-%05d", oacp.Name, i)
		names = append(names, name)
		oac := &bootstrapv1.OpenshiftAssistedConfig{
			ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name},
			Spec:       *oacp.Spec.OpenshiftAssistedConfigSpec.DeepCopy(),
		}
		owned(oac)
		g.Expect(mgmt.Client.Create(ctx, oac)).To(Succeed())
		m3m := &capm3v1beta2.Metal3Machine{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name, Annotations: map[string]string{
			clusterv1.TemplateClonedFromNameAnnotation:      oacp.Spec.MachineTemplate.Spec.InfrastructureRef.Name,
			clusterv1.TemplateClonedFromGroupKindAnnotation: "Metal3MachineTemplate.infrastructure.cluster.x-k8s.io",
		}}}
		owned(m3m)
		g.Expect(mgmt.Client.Create(ctx, m3m)).To(Succeed())
		m := &clusterv1.Machine{
			ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name, Labels: upstreamLabels},
			Spec: clusterv1.MachineSpec{
				ClusterName: f.cluster.Name, Version: "v1.30.4",
				Bootstrap: clusterv1.Bootstrap{
					ConfigRef:      clusterv1.ContractVersionedObjectReference{APIGroup: bootstrapv1.GroupVersion.Group, Kind: bootstrapv1.ConfigKind, Name: name},
					DataSecretName: ptr.To(name),
				},
				InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: capm3v1beta2.GroupVersion.Group, Kind: "Metal3Machine", Name: name},
			},
		}
		g.Expect(controllerutil.SetControllerReference(oacp, m, mgmt.Client.Scheme())).To(Succeed())
		g.Expect(mgmt.Client.Create(ctx, m)).To(Succeed())
	}
	f.simulateMachinesReady(ctx)

	g.Expect(pause.SetCluster(ctx, mgmt.Client, client.ObjectKeyFromObject(f.cluster), false)).To(Succeed())

	g.Eventually(func(g Gomega) {
		o := f.getOACP(ctx, g)
		g.Expect(o.Finalizers).To(ConsistOf(controlplanev1.OpenshiftAssistedControlPlaneFinalizer))
		g.Expect(conditions.IsTrue(o, controlplanev1.AvailableCondition)).To(BeTrue(), "Available: %+v", conditions.Get(o, controlplanev1.AvailableCondition))
		g.Expect(o.Status.UpToDateReplicas).To(Equal(ptr.To[int32](3)))
		g.Expect(o.Status.ReadyReplicas).To(Equal(ptr.To[int32](3)))
		for _, obj := range []client.Object{&hivev1.ClusterDeployment{}, &hiveextv1beta1.AgentClusterInstall{}} {
			g.Expect(mgmt.Client.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: oacp.Name}, obj)).To(Succeed())
			g.Expect(metav1.IsControlledBy(obj, o)).To(BeTrue(), "%T is adopted", obj)
		}
	}, timeout, interval).Should(Succeed())
	g.Expect(mgmt.Client.Get(ctx, client.ObjectKeyFromObject(cd), cd)).To(Succeed())
	g.Expect(cd.Spec).To(Equal(wantCDSpec), "the upstream provider's ClusterDeployment spec is kept (Hive refuses changes)")
	g.Expect(mgmt.Client.Get(ctx, client.ObjectKeyFromObject(aci), aci)).To(Succeed())
	g.Expect(aci.Spec).To(Equal(wantACISpec), "the installed cluster's AgentClusterInstall is left as it is")

	// Nothing rolls out: the same three Machines stay, none is created or deleted.
	g.Consistently(func(g Gomega) {
		var got []string
		for _, m := range f.machines(ctx, g) {
			g.Expect(m.DeletionTimestamp.IsZero()).To(BeTrue(), "Machine %s is not deleted", m.Name)
			got = append(got, m.Name)
		}
		g.Expect(got).To(ConsistOf(names))
	}, 3*time.Second, interval).Should(Succeed())
	events := &eventsv1.EventList{}
	g.Expect(mgmt.Client.List(ctx, events, client.InNamespace(f.ns))).To(Succeed())
	var adopted []string
	for _, e := range events.Items {
		if e.Reason == "Adopted" && e.Regarding.Name == oacp.Name {
			adopted = append(adopted, e.Note)
		}
	}
	g.Expect(adopted).To(ConsistOf(
		"Adopted ClusterDeployment c1, which cluster-api-provider-openshift-assisted created for this control plane",
		"Adopted AgentClusterInstall c1, which cluster-api-provider-openshift-assisted created for this control plane"))
}
