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

package simtest

import (
	"testing"

	. "github.com/onsi/gomega"
	configv1 "github.com/openshift/api/config/v1"
	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	"github.com/openshift/assisted-service/models"
	conditionsv1 "github.com/openshift/custom-resource-status/conditions/v1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	hiveagent "github.com/openshift/hive/apis/hive/v1/agent"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/assisted"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/cvo"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/inventory"
)

const releaseImage = "quay.io/openshift-release-dev/ocp-release:4.14.3-x86_64"

// releaseKubernetesVersion is the Kubernetes version of releaseImage.
const releaseKubernetesVersion = "v1.27.8"

func aciState(a *hiveextv1beta1.AgentClusterInstall) string { return a.Status.DebugInfo.State }

// createCluster creates what the control-plane provider creates for a cluster: a
// ClusterImageSet, a ClusterDeployment and its AgentClusterInstall.
func createCluster(g Gomega, ns, name string, controlPlane, workers int, mutate ...func(*hivev1.ClusterDeployment)) (*hivev1.ClusterDeployment, *hiveextv1beta1.AgentClusterInstall) {
	return createClusterWithInstall(g, ns, name, controlPlane, workers, nil, mutate...)
}

// createClusterWithInstall is createCluster with the AgentClusterInstall changed by mutateACI
// (when set) before it is created: the simulator never sees it otherwise.
func createClusterWithInstall(g Gomega, ns, name string, controlPlane, workers int, mutateACI func(*hiveextv1beta1.AgentClusterInstall),
	mutate ...func(*hivev1.ClusterDeployment)) (*hivev1.ClusterDeployment, *hiveextv1beta1.AgentClusterInstall) {
	cis := &hivev1.ClusterImageSet{ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + name},
		Spec: hivev1.ClusterImageSetSpec{ReleaseImage: releaseImage}}
	g.Expect(mgmt.Client.Create(ctx, cis)).To(Succeed())
	cd := &hivev1.ClusterDeployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: hivev1.ClusterDeploymentSpec{
			BaseDomain: "lab.sim", ClusterName: name,
			Platform: hivev1.Platform{AgentBareMetal: &hiveagent.BareMetalPlatform{
				AgentSelector: metav1.LabelSelector{MatchLabels: map[string]string{"cluster": name}}}},
			PullSecretRef: &corev1.LocalObjectReference{Name: "pull-secret"},
			ClusterInstallRef: &hivev1.ClusterInstallLocalReference{Group: hiveextv1beta1.Group, Version: hiveextv1beta1.Version,
				Kind: "AgentClusterInstall", Name: name},
		},
	}
	for _, m := range mutate {
		m(cd)
	}
	g.Expect(mgmt.Client.Create(ctx, cd)).To(Succeed())
	aci := &hiveextv1beta1.AgentClusterInstall{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: hiveextv1beta1.AgentClusterInstallSpec{
			ClusterDeploymentRef: corev1.LocalObjectReference{Name: name},
			ImageSetRef:          &hivev1.ClusterImageSetReference{Name: cis.Name},
			Networking: hiveextv1beta1.Networking{
				MachineNetwork: []hiveextv1beta1.MachineNetworkEntry{{CIDR: "192.168.111.0/24"}},
			},
			ProvisionRequirements: hiveextv1beta1.ProvisionRequirements{ControlPlaneAgents: controlPlane, WorkerAgents: workers},
		},
	}
	if controlPlane > 1 {
		aci.Spec.APIVIPs, aci.Spec.IngressVIPs = []string{"192.168.111.5"}, []string{"192.168.111.4"}
	}
	if mutateACI != nil {
		mutateACI(aci)
	}
	g.Expect(mgmt.Client.Create(ctx, aci)).To(Succeed())
	return cd, aci
}

// bootHosts makes the hosts boot the InfraEnv's ISO (self-booted hosts, as with AgentMachines).
func bootHosts(g Gomega, ie *aiv1beta1.InfraEnv, hosts []*inventory.Host) {
	for _, h := range hosts {
		g.Expect(sim.Booted(ctx, inventory.Boot{Host: h, ISOURL: ie.Status.ISODownloadURL})).To(Succeed())
	}
}

// approve approves the Agent of each host, with role, as the bootstrap provider does.
func approve(g Gomega, ns string, hosts []*inventory.Host, role models.HostRole) {
	for _, h := range hosts {
		g.Eventually(func() error {
			a := &aiv1beta1.Agent{}
			if err := mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: h.SystemUUID}, a); err != nil {
				return err
			}
			base := a.DeepCopy()
			a.Spec.Approved, a.Spec.Role = true, role
			return mgmt.Client.Patch(ctx, a, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
		}, timeout).Should(Succeed())
	}
}

func agentOf(g Gomega, ns string, h *inventory.Host) *aiv1beta1.Agent {
	a := &aiv1beta1.Agent{}
	g.Expect(mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: h.SystemUUID}, a)).To(Succeed())
	return a
}

func agentCondition(a *aiv1beta1.Agent, t conditionsv1.ConditionType) conditionsv1.Condition {
	if c := conditionsv1.FindStatusCondition(a.Status.Conditions, t); c != nil {
		return *c
	}
	return conditionsv1.Condition{}
}

func aciCondition(a *hiveextv1beta1.AgentClusterInstall, t string) hivev1.ClusterInstallCondition {
	for _, c := range a.Status.Conditions {
		if c.Type == t {
			return c
		}
	}
	return hivev1.ClusterInstallCondition{}
}

// TestClusterInstall installs a 3+1 cluster from self-booted hosts, then adds a day-2 worker, and
// checks the exact state sequences and names, the credentials, the workload cluster's Nodes and
// ClusterVersion, and that deletion leaves nothing behind.
func TestClusterInstall(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t, "install")
	hosts := inventory.Generate("install-"+ns, 5, inventory.GenerateOptions{})
	for _, h := range hosts {
		inv.Add(h)
	}
	masters, worker, day2 := hosts[:3], hosts[3:4], hosts[4]

	wc := watchClient(t, mgmt)
	aciStates := recordStates(t, wc, &hiveextv1beta1.AgentClusterInstallList{}, ns, "sim", aciState)
	masterStates := recordStates(t, wc, &aiv1beta1.AgentList{}, ns, masters[0].SystemUUID, agentState)
	workerStages := recordStates(t, wc, &aiv1beta1.AgentList{}, ns, worker[0].SystemUUID,
		func(a *aiv1beta1.Agent) string { return string(a.Status.Progress.CurrentStage) })
	day2States := recordStates(t, wc, &aiv1beta1.AgentList{}, ns, day2.SystemUUID, agentState)

	cd, aci := createCluster(g, ns, "sim", 3, 1)
	ie := createInfraEnv(t, g, ns, "sim", &aiv1beta1.ClusterReference{Name: cd.Name, Namespace: ns})
	bootHosts(g, ie, hosts[:4])

	// Bound, known, not approved: the cluster is ready but waits for approval.
	g.Eventually(func(g Gomega) {
		g.Expect(mgmt.Client.Get(ctx, client.ObjectKeyFromObject(aci), aci)).To(Succeed())
		g.Expect(aci.Status.DebugInfo.State).To(Equal(models.ClusterStatusReady))
		c := aciCondition(aci, hiveextv1beta1.ClusterRequirementsMetCondition)
		g.Expect(c.Reason).To(Equal(hiveextv1beta1.ClusterUnapprovedAgentsReason))
		g.Expect(c.Message).To(Equal("The installation is pending on the approval of 4 agents"))
	}, timeout).Should(Succeed())
	a := agentOf(g, ns, masters[0])
	inventoryMatches(g, a, masters[0])
	g.Expect(agentCondition(a, aiv1beta1.RequirementsMetCondition).Reason).To(Equal(aiv1beta1.AgentIsNotApprovedReason))
	g.Expect(agentCondition(a, aiv1beta1.BoundCondition).Status).To(Equal(corev1.ConditionTrue))
	g.Expect(agentCondition(a, aiv1beta1.ValidatedCondition).Reason).To(Equal(aiv1beta1.ValidationsPassingReason))
	g.Expect(a.Status.ValidationsInfo).To(HaveKey("hardware"))
	g.Expect(a.Status.DebugInfo.StateInfo).To(Equal("Host is ready to be installed"))

	approve(g, ns, masters, models.HostRoleMaster)
	approve(g, ns, worker, models.HostRoleWorker)
	g.Eventually(func(g Gomega) {
		g.Expect(mgmt.Client.Get(ctx, client.ObjectKeyFromObject(aci), aci)).To(Succeed())
		g.Expect(aci.Status.DebugInfo.State).To(Equal(models.ClusterStatusAddingHosts))
	}, timeout).Should(Succeed())
	g.Eventually(aciStates.States, timeout).Should(Equal([]string{models.ClusterStatusInsufficient, models.ClusterStatusReady,
		models.ClusterStatusPreparingForInstallation, models.ClusterStatusInstalling, models.ClusterStatusFinalizing,
		models.ClusterStatusInstalled, models.ClusterStatusAddingHosts}))
	g.Eventually(masterStates.States, timeout).Should(Equal([]string{models.HostStatusDiscovering, models.HostStatusKnown,
		models.HostStatusPreparingForInstallation, models.HostStatusPreparingSuccessful, models.HostStatusInstalling,
		models.HostStatusInstallingInProgress, models.HostStatusInstalled}))
	g.Eventually(workerStages.States, timeout).Should(Equal([]string{string(models.HostStageStartingInstallation), string(models.HostStageInstalling),
		string(models.HostStageWritingImageToDisk), string(models.HostStageWaitingForControlPlane), string(models.HostStageRebooting), string(models.HostStageWaitingForIgnition),
		string(models.HostStageConfiguring), string(models.HostStageJoined), string(models.HostStageDone)}))
	completed := aciCondition(aci, hiveextv1beta1.ClusterCompletedCondition)
	g.Expect(completed.Status).To(Equal(corev1.ConditionTrue))
	g.Expect(completed.Reason).To(Equal(hiveextv1beta1.ClusterInstalledReason))
	g.Expect(aciCondition(aci, hiveextv1beta1.ClusterStoppedCondition).Reason).To(Equal(hiveextv1beta1.ClusterStoppedCompletedReason))
	g.Expect(aci.Status.Progress.TotalPercentage).To(Equal(int64(100)))
	g.Expect(aci.Spec.ClusterMetadata).NotTo(BeNil())
	g.Expect(aci.Spec.ClusterMetadata.AdminKubeconfigSecretRef.Name).To(Equal("sim-admin-kubeconfig"))
	bootstraps := 0
	for _, h := range hosts[:4] {
		a := agentOf(g, ns, h)
		g.Expect(a.Status.DebugInfo.State).To(Equal(models.HostStatusInstalled))
		g.Expect(agentCondition(a, aiv1beta1.InstalledCondition).Reason).To(Equal(aiv1beta1.InstalledReason))
		if a.Status.Bootstrap {
			bootstraps++
		}
	}
	g.Expect(bootstraps).To(Equal(1))

	// Hive's part: the ClusterDeployment is installed, the kubeconfig reaches the workload cluster.
	g.Expect(mgmt.Client.Get(ctx, client.ObjectKeyFromObject(cd), cd)).To(Succeed())
	g.Expect(cd.Spec.Installed).To(BeTrue())
	g.Expect(cd.Spec.ClusterMetadata.AdminKubeconfigSecretRef.Name).To(Equal(assisted.AdminKubeconfigSecretName(cd.Name)))
	secret := &corev1.Secret{}
	g.Expect(mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "sim-admin-kubeconfig"}, secret)).To(Succeed())
	g.Expect(secret.Labels).To(HaveKeyWithValue("hive.openshift.io/secret-type", "kubeconfig"))
	g.Expect(mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "sim-admin-password"}, &corev1.Secret{})).To(Succeed())
	restCfg, err := clientcmd.RESTConfigFromKubeConfig(secret.Data[assisted.KubeconfigSecretKey])
	g.Expect(err).NotTo(HaveOccurred())
	remote, err := client.New(restCfg, client.Options{Scheme: workload.Scheme})
	g.Expect(err).NotTo(HaveOccurred())
	for _, h := range hosts[:4] {
		node := &corev1.Node{}
		g.Expect(remote.Get(ctx, client.ObjectKey{Name: h.Hostname}, node)).To(Succeed())
		g.Expect(node.Status.NodeInfo.SystemUUID).To(Equal(h.SystemUUID))
		g.Expect(node.Status.Addresses).To(ContainElement(corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: h.IPv4()}))
		// The kubelet and CRI-O of the release installed, not of another one.
		g.Expect(node.Status.NodeInfo.KubeletVersion).To(Equal(releaseKubernetesVersion))
		g.Expect(node.Status.NodeInfo.ContainerRuntimeVersion).To(Equal("cri-o://1.27.8"))
	}
	cv := &configv1.ClusterVersion{}
	g.Expect(remote.Get(ctx, client.ObjectKey{Name: cvo.ClusterVersionName}, cv)).To(Succeed())
	g.Expect(cv.Status.Desired.Version).To(Equal("4.14.3"))

	// Day 2: a host bound to the installed cluster installs alone.
	bootHosts(g, ie, []*inventory.Host{day2})
	approve(g, ns, []*inventory.Host{day2}, models.HostRoleWorker)
	g.Eventually(func(g Gomega) {
		g.Expect(agentOf(g, ns, day2).Status.DebugInfo.State).To(Equal(models.HostStatusAddedToExistingCluster))
	}, timeout).Should(Succeed())
	g.Eventually(day2States.States, timeout).Should(Equal([]string{models.HostStatusDiscovering, models.HostStatusKnown,
		models.HostStatusInstalling, models.HostStatusInstallingInProgress, models.HostStatusAddedToExistingCluster}))
	day2Node := &corev1.Node{}
	g.Expect(remote.Get(ctx, client.ObjectKey{Name: day2.Hostname}, day2Node)).To(Succeed())
	g.Expect(day2Node.Status.NodeInfo.KubeletVersion).To(Equal(releaseKubernetesVersion))
	g.Expect(mgmt.Client.Get(ctx, client.ObjectKeyFromObject(aci), aci)).To(Succeed())
	g.Expect(aci.Status.DebugInfo.State).To(Equal(models.ClusterStatusAddingHosts))

	// An installed host unbound from its cluster waits to boot the discovery image again.
	g.Eventually(func() error {
		a := agentOf(g, ns, worker[0])
		base := a.DeepCopy()
		a.Spec.ClusterDeploymentName = nil
		return mgmt.Client.Patch(ctx, a, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
	}, timeout).Should(Succeed())
	g.Eventually(func(g Gomega) {
		a := agentOf(g, ns, worker[0])
		g.Expect(a.Status.DebugInfo.State).To(Equal(models.HostStatusUnbindingPendingUserAction))
		g.Expect(agentCondition(a, aiv1beta1.BoundCondition).Reason).To(Equal(aiv1beta1.UnbindingPendingUserActionReason))
	}, timeout).Should(Succeed())

	// Deletion releases every finalizer and the credentials Secrets.
	for _, h := range hosts {
		g.Expect(mgmt.Client.Delete(ctx, agentOf(g, ns, h))).To(Succeed())
	}
	g.Expect(mgmt.Client.Delete(ctx, aci)).To(Succeed())
	g.Expect(mgmt.Client.Delete(ctx, cd)).To(Succeed())
	g.Expect(mgmt.Client.Delete(ctx, ie)).To(Succeed())
	g.Eventually(func(g Gomega) {
		for _, l := range []client.ObjectList{&aiv1beta1.AgentList{}, &aiv1beta1.InfraEnvList{},
			&hiveextv1beta1.AgentClusterInstallList{}, &hivev1.ClusterDeploymentList{}} {
			g.Expect(mgmt.Client.List(ctx, l, client.InNamespace(ns))).To(Succeed())
			g.Expect(l).To(HaveField("Items", BeEmpty()))
		}
		secrets := &corev1.SecretList{}
		g.Expect(mgmt.Client.List(ctx, secrets, client.InNamespace(ns), client.HasLabels{"hive.openshift.io/secret-type"})).To(Succeed())
		g.Expect(secrets.Items).To(BeEmpty())
	}, timeout).Should(Succeed())
}

// TestFaults injects a failing validation, a disconnection and an installation failure into a
// single-node cluster.
func TestFaults(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t, "faults")
	host := inventory.Generate("faults-"+ns, 1, inventory.GenerateOptions{})[0]
	inv.Add(host)
	wc := watchClient(t, mgmt)
	aciStates := recordStates(t, wc, &hiveextv1beta1.AgentClusterInstallList{}, ns, "sno", aciState)
	hostStates := recordStates(t, wc, &aiv1beta1.AgentList{}, ns, host.SystemUUID, agentState)

	cd, aci := createCluster(g, ns, "sno", 1, 0)
	ie := createInfraEnv(t, g, ns, "sno", &aiv1beta1.ClusterReference{Name: cd.Name, Namespace: ns})
	sim.FailValidation(ctx, host.SystemUUID, true)
	bootHosts(g, ie, []*inventory.Host{host})
	g.Eventually(func(g Gomega) {
		a := agentOf(g, ns, host)
		g.Expect(a.Status.DebugInfo.State).To(Equal(models.HostStatusInsufficient))
		v := agentCondition(a, aiv1beta1.ValidatedCondition)
		g.Expect(v.Status).To(Equal(corev1.ConditionFalse))
		g.Expect(v.Reason).To(Equal(aiv1beta1.ValidationsFailingReason))
		g.Expect(v.Message).To(ContainSubstring("Require at least 16.00 GiB RAM for role auto-assign"))
		g.Expect(a.Status.ValidationsInfo["hardware"]).To(ContainElement(HaveField("ID", string(models.HostValidationIDHasMemoryForRole))))
		g.Expect(agentCondition(a, aiv1beta1.RequirementsMetCondition).Reason).To(Equal(aiv1beta1.AgentNotReadyReason))
		g.Expect(mgmt.Client.Get(ctx, client.ObjectKeyFromObject(aci), aci)).To(Succeed())
		g.Expect(aci.Status.DebugInfo.State).To(Equal(models.ClusterStatusInsufficient))
		g.Expect(aciCondition(aci, hiveextv1beta1.ClusterRequirementsMetCondition).Reason).To(Equal(hiveextv1beta1.ClusterNotReadyReason))
	}, timeout).Should(Succeed())

	// Each step waits for the cluster too: the cluster's state follows its hosts' as a level, so
	// a step taken before the cluster has seen the last one would skip a state (as the real
	// service's cluster monitor can) and the recorded sequence below would depend on timing.
	clusterIs := func(state string) {
		t.Helper()
		g.Eventually(func(g Gomega) {
			g.Expect(mgmt.Client.Get(ctx, client.ObjectKeyFromObject(aci), aci)).To(Succeed())
			g.Expect(aci.Status.DebugInfo.State).To(Equal(state))
		}, timeout).Should(Succeed())
	}
	sim.FailValidation(ctx, host.SystemUUID, false)
	g.Eventually(func(g Gomega) {
		g.Expect(agentOf(g, ns, host).Status.DebugInfo.State).To(Equal(models.HostStatusKnown))
	}, timeout).Should(Succeed())
	clusterIs(models.ClusterStatusReady)

	sim.Disconnect(ctx, host.SystemUUID, true)
	g.Eventually(func(g Gomega) {
		a := agentOf(g, ns, host)
		g.Expect(a.Status.DebugInfo.State).To(Equal(models.HostStatusDisconnected))
		c := agentCondition(a, aiv1beta1.ConnectedCondition)
		g.Expect(c.Status).To(Equal(corev1.ConditionFalse))
		g.Expect(c.Reason).To(Equal(aiv1beta1.AgentDisconnectedReason))
	}, timeout).Should(Succeed())
	clusterIs(models.ClusterStatusInsufficient)
	sim.Disconnect(ctx, host.SystemUUID, false)
	g.Eventually(func(g Gomega) {
		g.Expect(agentOf(g, ns, host).Status.DebugInfo.State).To(Equal(models.HostStatusKnown))
	}, timeout).Should(Succeed())
	clusterIs(models.ClusterStatusReady)

	sim.FailInstall(ctx, types.NamespacedName{Namespace: ns, Name: aci.Name}, true)
	approve(g, ns, []*inventory.Host{host}, models.HostRoleMaster)
	g.Eventually(func(g Gomega) {
		g.Expect(mgmt.Client.Get(ctx, client.ObjectKeyFromObject(aci), aci)).To(Succeed())
		g.Expect(aci.Status.DebugInfo.State).To(Equal(models.ClusterStatusError))
		g.Expect(agentOf(g, ns, host).Status.DebugInfo.State).To(Equal(models.HostStatusError))
	}, timeout).Should(Succeed())
	failed := aciCondition(aci, hiveextv1beta1.ClusterFailedCondition)
	g.Expect(failed.Status).To(Equal(corev1.ConditionTrue))
	g.Expect(failed.Reason).To(Equal(hiveextv1beta1.ClusterFailedReason))
	g.Expect(aciCondition(aci, hiveextv1beta1.ClusterStoppedCondition).Reason).To(Equal(hiveextv1beta1.ClusterStoppedFailedReason))
	g.Expect(aciCondition(aci, hiveextv1beta1.ClusterCompletedCondition).Reason).To(Equal(hiveextv1beta1.ClusterInstallationFailedReason))
	// The cluster is insufficient while its only host is (failing validation, then disconnected).
	g.Eventually(aciStates.States, timeout).Should(Equal([]string{models.ClusterStatusInsufficient, models.ClusterStatusReady,
		models.ClusterStatusInsufficient, models.ClusterStatusReady,
		models.ClusterStatusPreparingForInstallation, models.ClusterStatusInstalling, models.ClusterStatusError}))
	g.Eventually(hostStates.States, timeout).Should(Equal([]string{models.HostStatusDiscovering, models.HostStatusInsufficient,
		models.HostStatusKnown, models.HostStatusDisconnected, models.HostStatusDiscovering, models.HostStatusKnown,
		models.HostStatusPreparingForInstallation, models.HostStatusPreparingSuccessful, models.HostStatusInstalling, models.HostStatusError}))
	g.Expect(mgmt.Client.Get(ctx, client.ObjectKeyFromObject(cd), cd)).To(Succeed())
	g.Expect(cd.Spec.Installed).To(BeFalse())
	g.Expect(apierrors.IsNotFound(mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "sno-admin-kubeconfig"}, &corev1.Secret{}))).To(BeTrue())
}

// TestLateBinding binds an Agent registered from an InfraEnv without a cluster, then unbinds it.
func TestLateBinding(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t, "late")
	host := inventory.Generate("late-"+ns, 1, inventory.GenerateOptions{})[0]
	inv.Add(host)
	wc := watchClient(t, mgmt)
	states := recordStates(t, wc, &aiv1beta1.AgentList{}, ns, host.SystemUUID, agentState)
	cd, _ := createCluster(g, ns, "late", 1, 0)
	ie := createInfraEnv(t, g, ns, "pool", nil)
	bootHosts(g, ie, []*inventory.Host{host})
	g.Eventually(func(g Gomega) {
		a := agentOf(g, ns, host)
		g.Expect(a.Status.DebugInfo.State).To(Equal(models.HostStatusKnownUnbound))
		g.Expect(agentCondition(a, aiv1beta1.BoundCondition).Reason).To(Equal(aiv1beta1.UnboundReason))
	}, timeout).Should(Succeed())

	setBinding := func(ref *aiv1beta1.ClusterReference) {
		g.Eventually(func() error {
			a := agentOf(g, ns, host)
			base := a.DeepCopy()
			a.Spec.ClusterDeploymentName = ref
			return mgmt.Client.Patch(ctx, a, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
		}, timeout).Should(Succeed())
	}
	setBinding(&aiv1beta1.ClusterReference{Name: cd.Name, Namespace: ns})
	g.Eventually(func(g Gomega) {
		a := agentOf(g, ns, host)
		g.Expect(a.Status.DebugInfo.State).To(Equal(models.HostStatusKnown))
		g.Expect(agentCondition(a, aiv1beta1.BoundCondition).Reason).To(Equal(aiv1beta1.BoundReason))
	}, timeout).Should(Succeed())
	setBinding(nil)
	g.Eventually(func(g Gomega) {
		g.Expect(agentOf(g, ns, host).Status.DebugInfo.State).To(Equal(models.HostStatusKnownUnbound))
	}, timeout).Should(Succeed())
	g.Eventually(states.States, timeout).Should(Equal([]string{models.HostStatusDiscoveringUnbound, models.HostStatusKnownUnbound,
		models.HostStatusBinding, models.HostStatusKnown, models.HostStatusUnbinding, models.HostStatusKnownUnbound}))

	// A reference to a ClusterDeployment that does not exist is an input error, and binds nothing.
	setBinding(&aiv1beta1.ClusterReference{Name: "missing", Namespace: ns})
	g.Eventually(func(g Gomega) {
		a := agentOf(g, ns, host)
		c := agentCondition(a, aiv1beta1.SpecSyncedCondition)
		g.Expect(c.Reason).To(Equal(aiv1beta1.InputErrorReason))
		g.Expect(c.Message).To(ContainSubstring("ClusterDeployment " + ns + "/missing not found"))
		g.Expect(a.Status.DebugInfo.State).To(Equal(models.HostStatusKnownUnbound))
	}, timeout).Should(Succeed())
}

// TestReregistration: a host that boots another InfraEnv's discovery image registers anew, as with
// assisted-service: unapproved, with no role, bound to that InfraEnv's cluster, starting over at
// discovering. While its previous Agent is being deleted, it cannot register.
func TestReregistration(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t, "rereg")
	host := inventory.Generate("rereg-"+ns, 1, inventory.GenerateOptions{})[0]
	inv.Add(host)
	cd, _ := createCluster(g, ns, "rereg", 1, 0)
	first := createInfraEnv(t, g, ns, "first", nil)
	second := createInfraEnv(t, g, ns, "second", &aiv1beta1.ClusterReference{Name: cd.Name, Namespace: ns})
	bootHosts(g, first, []*inventory.Host{host})
	approve(g, ns, []*inventory.Host{host}, models.HostRoleWorker)
	g.Eventually(func(g Gomega) {
		g.Expect(agentOf(g, ns, host).Status.DebugInfo.State).To(Equal(models.HostStatusKnownUnbound))
	}, timeout).Should(Succeed())

	bootHosts(g, second, []*inventory.Host{host})
	a := agentOf(g, ns, host)
	g.Expect(a.Labels).To(HaveKeyWithValue(aiv1beta1.InfraEnvNameLabel, "second"))
	g.Expect(a.Spec.Approved).To(BeFalse(), "a new registration is not approved")
	g.Expect(string(a.Spec.Role)).To(BeEmpty())
	g.Expect(a.Spec.ClusterDeploymentName).To(Equal(&aiv1beta1.ClusterReference{Name: cd.Name, Namespace: ns}))
	g.Eventually(func(g Gomega) {
		g.Expect(agentOf(g, ns, host).Status.DebugInfo.State).To(Equal(models.HostStatusKnown))
	}, timeout).Should(Succeed())

	// Deleting the InfraEnv deregisters the host; until its Agent is gone (held here by a
	// finalizer of the test's) it cannot register again.
	const hold = "simtest.example.com/hold"
	a = agentOf(g, ns, host)
	base := a.DeepCopy()
	controllerutil.AddFinalizer(a, hold)
	g.Expect(mgmt.Client.Patch(ctx, a, client.MergeFrom(base))).To(Succeed())
	g.Expect(mgmt.Client.Delete(ctx, second)).To(Succeed())
	g.Eventually(func(g Gomega) {
		a := agentOf(g, ns, host)
		g.Expect(a.DeletionTimestamp.IsZero()).To(BeFalse())
		g.Expect(a.Finalizers).To(ConsistOf(hold), "the service has let go of the Agent")
	}, timeout).Should(Succeed())
	g.Expect(sim.Booted(ctx, inventory.Boot{Host: host, ISOURL: first.Status.ISODownloadURL})).
		To(MatchError(ContainSubstring("is being deregistered")))
	a = agentOf(g, ns, host)
	base = a.DeepCopy()
	controllerutil.RemoveFinalizer(a, hold)
	g.Expect(mgmt.Client.Patch(ctx, a, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: host.SystemUUID}, &aiv1beta1.Agent{}))
	}, timeout).Should(BeTrue())
	bootHosts(g, first, []*inventory.Host{host})
	g.Expect(agentOf(g, ns, host).Labels).To(HaveKeyWithValue(aiv1beta1.InfraEnvNameLabel, "first"))
}

// TestMovedFromAnotherHub checks what assisted-service does with objects moved from another hub
// (clusterctl move: spec and metadata, no status): an installed multi-node cluster is imported as
// a day-2 cluster, an installed single-node one is left alone, and an Agent of a host that never
// registered with this service is deleted.
func TestMovedFromAnotherHub(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t, "moved")
	installed := func(cd *hivev1.ClusterDeployment) { cd.Spec.Installed = true }
	multi, multiACI := createCluster(g, ns, "multi", 3, 0, installed)
	_, snoACI := createCluster(g, ns, "sno", 1, 0, installed)
	host := inventory.Generate("moved-"+ns, 1, inventory.GenerateOptions{})[0]
	inv.Add(host)
	agent := &aiv1beta1.Agent{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: host.SystemUUID, Finalizers: []string{assisted.AgentFinalizer}},
		Spec:       aiv1beta1.AgentSpec{Approved: true, Role: models.HostRoleMaster, ClusterDeploymentName: &aiv1beta1.ClusterReference{Name: multi.Name, Namespace: ns}},
	}
	g.Expect(mgmt.Client.Create(ctx, agent)).To(Succeed())

	g.Eventually(func(g Gomega) {
		g.Expect(mgmt.Client.Get(ctx, client.ObjectKeyFromObject(multiACI), multiACI)).To(Succeed())
		g.Expect(aciState(multiACI)).To(Equal(models.ClusterStatusAddingHosts))
		g.Expect(aciCondition(multiACI, hiveextv1beta1.ClusterCompletedCondition).Status).To(BeEquivalentTo("True"))
		g.Expect(apierrors.IsNotFound(mgmt.Client.Get(ctx, client.ObjectKeyFromObject(agent), &aiv1beta1.Agent{}))).To(BeTrue(),
			"the Agent of a host unknown to this service is deleted")
	}, timeout).Should(Succeed())
	// The single-node cluster was reconciled at the same time as the multi-node one.
	g.Expect(mgmt.Client.Get(ctx, client.ObjectKeyFromObject(snoACI), snoACI)).To(Succeed())
	g.Expect(aciState(snoACI)).To(BeEmpty(), "an installed single-node cluster is left alone")
	g.Expect(snoACI.Finalizers).To(ContainElement(assisted.AgentClusterInstallFinalizer))
}

// TestDualStackNeedsMachineNetworks: as assisted-service, the simulator refuses a dual-stack
// cluster without machine networks (an input error: it is never registered), and takes it once
// they are set.
func TestDualStackNeedsMachineNetworks(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t, "dualstack")
	// Created dual-stack without machine networks: a valid cluster created first would be
	// registered before a change made it invalid, and stay registered (CI 34 saw it).
	_, aci := createClusterWithInstall(g, ns, "ds", 3, 0, func(aci *hiveextv1beta1.AgentClusterInstall) {
		aci.Spec.APIVIPs = []string{"192.168.111.5", "fd2e:6f44:5dd8:c956::5"}
		aci.Spec.IngressVIPs = []string{"192.168.111.4", "fd2e:6f44:5dd8:c956::4"}
		aci.Spec.Networking = hiveextv1beta1.Networking{
			ClusterNetwork: []hiveextv1beta1.ClusterNetworkEntry{{CIDR: "10.128.0.0/14", HostPrefix: 23}, {CIDR: "fd01::/48", HostPrefix: 64}},
			ServiceNetwork: []string{"172.30.0.0/16", "fd02::/112"},
		}
	})
	g.Eventually(func(g Gomega) {
		g.Expect(mgmt.Client.Get(ctx, client.ObjectKeyFromObject(aci), aci)).To(Succeed())
		c := aciCondition(aci, hiveextv1beta1.ClusterSpecSyncedCondition)
		g.Expect(c.Reason).To(Equal(hiveextv1beta1.ClusterInputErrorReason))
		g.Expect(c.Message).To(Equal(hiveextv1beta1.ClusterInputErrorMsg + " Dual-stack cluster cannot be created with empty Machine Networks"))
	}, timeout).Should(Succeed())
	g.Expect(aci.Status.DebugInfo.State).To(BeEmpty(), "never registered")

	g.Expect(mgmt.Client.Patch(ctx, aci, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"networking":{
		"machineNetwork":[{"cidr":"192.168.111.0/24"},{"cidr":"fd2e:6f44:5dd8:c956::/64"}]}}}`)))).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(mgmt.Client.Get(ctx, client.ObjectKeyFromObject(aci), aci)).To(Succeed())
		g.Expect(aciCondition(aci, hiveextv1beta1.ClusterSpecSyncedCondition).Status).To(Equal(corev1.ConditionTrue))
		g.Expect(aci.Status.DebugInfo.State).To(Equal(models.ClusterStatusInsufficient), "registered; no hosts yet")
		g.Expect(aci.Status.MachineNetwork).To(Equal([]hiveextv1beta1.MachineNetworkEntry{{CIDR: "192.168.111.0/24"}, {CIDR: "fd2e:6f44:5dd8:c956::/64"}}))
	}, timeout).Should(Succeed())
}
