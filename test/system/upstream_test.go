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

package system

import (
	"fmt"
	"strings"
	"time"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	"github.com/openshift/assisted-service/models"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/lab"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/pause"
)

// upstreamSwitchSpecs are the switch from the upstream providers, in the lab that labOf returns
// (the real assisted-service's): a cluster that
// openshift-assisted/cluster-api-provider-openshift-assisted installed, switched to these
// providers. The lab installs it from upstream's manifests: its multinode example, at the
// versions upstream stores (lab.ClusterOptions.Upstream), through the conversion webhooks. Then,
// with the Cluster paused, it leaves the objects as the upstream providers leave them (their
// ensureClusterDeployment, ensureAgentClusterInstall and bootstrap controller): their finalizers
// on the control plane and on every OpenshiftAssistedConfig; the ClusterDeployment,
// AgentClusterInstall and InfraEnvs labelled as upstream labels them and owned without a
// controller reference; the Agents without our labels. The managers are restarted (the upstream
// ones replaced by ours) and the Cluster unpaused. The object shapes and the envtest of each step
// are in the controlplane's adopt_test.go; here the whole cluster goes through the switch, a
// scale-up and a deletion. The lab's workload API server holds other clusters' Nodes too: the
// specs count Machines.
func upstreamSwitchSpecs(labOf func() *lab.Lab) {
	var (
		l  *lab.Lab
		ns string
		// before is each Machine's UID before the switch: the switch replaces none.
		before map[string]types.UID
	)
	const name = "legacy"

	BeforeAll(func() {
		l, ns = addHosts(labOf(), "legacy", "upstream", 5)
	})
	BeforeEach(func() { reportOnFailure(l, ns) })

	It("installs from upstream's manifests, at the versions upstream stores, through the conversion webhooks", func() {
		// 4.17.5: the lab's clusters share one workload API server and so one ClusterVersion,
		// which the 3+2 cluster's upgrade left at 4.17.5 (a control plane of 4.17.3 would read
		// it as a downgrade and refuse it).
		Expect(l.CreateCluster(ctx, lab.ClusterOptions{Namespace: ns, Name: name, ControlPlanes: 3, Workers: 1, Version: "4.17.5", Upstream: true})).To(Succeed())
		expectAvailableMachines(l, ns, name, 3, 4)

		// Upstream's per-host variables: metal3.io/uuid is the BareMetalHost's UID, written
		// quoted for the control plane and bare for the workers, as upstream's example does.
		hosts := &bmov1alpha1.BareMetalHostList{}
		Expect(l.Mgmt.Client.List(ctx, hosts, client.InNamespace(ns))).To(Succeed())
		uids := map[string]string{}
		for _, h := range hosts.Items {
			uids[h.Name] = string(h.UID)
		}
		nodes := &corev1.NodeList{}
		Expect(l.Workload.Client.List(ctx, nodes)).To(Succeed())
		labelled := 0
		for _, n := range nodes.Items {
			// metal3://<namespace>/<host>/<Metal3Machine>
			parts := strings.Split(strings.TrimPrefix(n.Spec.ProviderID, "metal3://"), "/")
			if len(parts) != 3 || parts[0] != ns {
				continue
			}
			Expect(n.Labels).To(HaveKeyWithValue("metal3.io/uuid", uids[parts[1]]), "Node %s", n.Name)
			labelled++
		}
		Expect(labelled).To(Equal(4))

		// Read at upstream's version, as upstream's clients read it.
		old := &unstructured.Unstructured{}
		old.SetAPIVersion("controlplane.cluster.x-k8s.io/v1alpha2")
		old.SetKind("OpenshiftAssistedControlPlane")
		Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, old)).To(Succeed())
		Expect(old.Object).To(HaveKeyWithValue("status", HaveKeyWithValue("ready", true)))
		Expect(old.GetAnnotations()).To(HaveKeyWithValue(controlplanev1.UpstreamReleaseImageRepositoryAnnotation, l.Releases.Repository()))
	})

	It("is taken over by these providers without a reinstall or a replaced Machine", func() {
		Expect(pause.SetCluster(ctx, l.Mgmt.Client, client.ObjectKey{Namespace: ns, Name: name}, true)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(conditionTrue(controlPlane(l, ns, name)(g).Status.Conditions, clusterv1.PausedCondition)).To(BeTrue())
		}, timeout, interval).Should(Succeed())
		leaveAsUpstreamLeavesIt(l, ns, name)
		before = map[string]types.UID{}
		for _, m := range machines(Default, l, ns, nil) {
			before[m.Name] = m.UID
		}
		for _, p := range []string{"infrastructure", "bootstrap", "controlplane"} {
			Expect(l.RestartProvider(p)).To(Succeed())
		}
		Expect(pause.SetCluster(ctx, l.Mgmt.Client, client.ObjectKey{Namespace: ns, Name: name}, false)).To(Succeed())

		c := l.Mgmt.Client
		Eventually(func(g Gomega) {
			cp := controlPlane(l, ns, name)(g)
			g.Expect(cp.Finalizers).To(ConsistOf(controlplanev1.OpenshiftAssistedControlPlaneFinalizer))
			g.Expect(conditionTrue(cp.Status.Conditions, "Available")).To(BeTrue(), "control plane not Available")
			for _, obj := range []client.Object{&hivev1.ClusterDeployment{}, &hiveextv1beta1.AgentClusterInstall{}} {
				g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj)).To(Succeed())
				g.Expect(metav1.IsControlledBy(obj, cp)).To(BeTrue(), "%T adopted", obj)
			}
			configs := &bootstrapv1.OpenshiftAssistedConfigList{}
			g.Expect(c.List(ctx, configs, client.InNamespace(ns))).To(Succeed())
			g.Expect(configs.Items).To(HaveLen(4))
			for _, oac := range configs.Items {
				g.Expect(oac.Finalizers).To(ConsistOf(bootstrapv1.ConfigFinalizer), "finalizers of OpenshiftAssistedConfig %s", oac.Name)
			}
		}, timeout, interval).Should(Succeed())
		expectAvailableMachines(l, ns, name, 3, 4)

		after := map[string]types.UID{}
		for _, m := range machines(Default, l, ns, nil) {
			after[m.Name] = m.UID
		}
		Expect(after).To(Equal(before), "no Machine is replaced")
		agents := &aiv1beta1.AgentList{}
		Expect(c.List(ctx, agents, client.InNamespace(ns))).To(Succeed())
		installed := 0
		for _, a := range agents.Items {
			if a.Status.DebugInfo.State == models.HostStatusInstalled || a.Status.DebugInfo.State == models.HostStatusAddedToExistingCluster {
				installed++
				Expect(a.Spec.ClusterDeploymentName).NotTo(BeNil(), "Agent %s stays bound", a.Name)
			}
		}
		Expect(installed).To(Equal(4), "no host is reinstalled")

		Eventually(func(g Gomega) {
			events := &eventsv1.EventList{}
			g.Expect(c.List(ctx, events, client.InNamespace(ns))).To(Succeed())
			var adopted []string
			for _, e := range events.Items {
				if e.Reason == "Adopted" && e.Regarding.Name == name {
					adopted = append(adopted, e.Note)
				}
			}
			g.Expect(adopted).To(ConsistOf(
				"Adopted ClusterDeployment "+name+", which cluster-api-provider-openshift-assisted created for this control plane",
				"Adopted AgentClusterInstall "+name+", which cluster-api-provider-openshift-assisted created for this control plane"))
		}, timeout, interval).Should(Succeed())
	})

	It("then scales the workers by one, as a day-2 host", func() {
		scaleMachineDeployment(l, ns, name+"-worker", 2)
		expectAvailableMachines(l, ns, name, 3, 5)
		for _, m := range machines(Default, l, ns, nil) {
			if uid, ok := before[m.Name]; ok {
				Expect(m.UID).To(Equal(uid), "Machine %s is the one installed before the switch", m.Name)
			}
		}
		expectDay2Agents(l, ns, 1, "the new worker installs as a day-2 host of the installed cluster")
	})

	It("leaves nothing behind when the Cluster is deleted", func() {
		deleteClusterAndExpectNothingLeft(l, ns, name)
	})
}

// updateObject reads obj (by its namespace and name), applies mutate and updates it, again until
// the update succeeds (a conflict with a controller's write) or 30 s have passed.
func updateObject(c client.Client, obj client.Object, mutate func() error) {
	GinkgoHelper()
	Eventually(func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		if err := mutate(); err != nil {
			return err
		}
		return c.Update(ctx, obj)
	}, 30*time.Second, interval).Should(Succeed())
}

// leaveAsUpstreamLeavesIt rewrites the objects of the cluster name as
// cluster-api-provider-openshift-assisted v0.4.0 leaves them: the control plane and every
// OpenshiftAssistedConfig with upstream's finalizer instead of ours; the InfraEnvs, the
// ClusterDeployment and the AgentClusterInstall with upstream's labels and owned without a
// controller reference (upstream's controllerutil.SetOwnerReference); the Agents without the
// labels this project's bootstrap provider adds. (Specs are left: the API refuses spec changes
// of an installed host's config, and the adoption envtests cover upstream's spec shapes.)
func leaveAsUpstreamLeavesIt(l *lab.Lab, ns, name string) {
	GinkgoHelper()
	c := l.Mgmt.Client
	replaceFinalizer := func(obj client.Object, ours, upstream string) {
		updateObject(c, obj, func() error {
			controllerutil.RemoveFinalizer(obj, ours)
			controllerutil.AddFinalizer(obj, upstream)
			return nil
		})
	}
	cp := controlPlane(l, ns, name)(Default)
	replaceFinalizer(cp, controlplanev1.OpenshiftAssistedControlPlaneFinalizer, controlplanev1.UpstreamOpenshiftAssistedControlPlaneFinalizer)
	configs := &bootstrapv1.OpenshiftAssistedConfigList{}
	Expect(c.List(ctx, configs, client.InNamespace(ns))).To(Succeed())
	for i := range configs.Items {
		replaceFinalizer(&configs.Items[i], bootstrapv1.ConfigFinalizer, bootstrapv1.UpstreamConfigFinalizer)
	}
	// Upstream's InfraEnv (GetInfraEnvFromConfig, named after the Machine, which is the config's
	// name) carries its config label and a plain owner reference; the Agents it approved carry no
	// label of a config (its AgentReconciler finds the Machine by the InfraEnv's name).
	infraEnvs := &aiv1beta1.InfraEnvList{}
	Expect(c.List(ctx, infraEnvs, client.InNamespace(ns))).To(Succeed())
	Expect(infraEnvs.Items).To(HaveLen(len(configs.Items)))
	for i := range infraEnvs.Items {
		ie := &infraEnvs.Items[i]
		updateObject(c, ie, func() error {
			owner := metav1.GetControllerOf(ie)
			if owner == nil {
				return fmt.Errorf("InfraEnv %s has no controller", ie.Name)
			}
			owner.Controller, owner.BlockOwnerDeletion = nil, nil
			ie.OwnerReferences = []metav1.OwnerReference{*owner}
			ie.Labels = map[string]string{"bootstrap.cluster.x-k8s.io/openshiftAssistedConfig": owner.Name, clusterv1.ClusterNameLabel: name}
			return nil
		})
	}
	agents := &aiv1beta1.AgentList{}
	Expect(c.List(ctx, agents, client.InNamespace(ns))).To(Succeed())
	for i := range agents.Items {
		a := &agents.Items[i]
		updateObject(c, a, func() error {
			delete(a.Labels, bootstrapv1.AgentConfigLabel)
			delete(a.Labels, clusterv1.ClusterNameLabel)
			return nil
		})
	}
	upstreamLabels := map[string]string{
		clusterv1.ClusterNameLabel: name, clusterv1.MachineControlPlaneLabel: "", clusterv1.MachineControlPlaneNameLabel: cp.Name,
	}
	for _, obj := range []client.Object{&hivev1.ClusterDeployment{}, &hiveextv1beta1.AgentClusterInstall{}} {
		obj.SetNamespace(ns)
		obj.SetName(cp.Name)
		updateObject(c, obj, func() error {
			obj.SetLabels(upstreamLabels)
			obj.SetOwnerReferences(nil)
			return controllerutil.SetOwnerReference(cp, obj, c.Scheme())
		})
		Expect(metav1.IsControlledBy(obj, cp)).To(BeFalse())
	}
}
