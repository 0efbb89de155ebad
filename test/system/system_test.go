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

	eventsv1 "k8s.io/api/events/v1"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	gomegatypes "github.com/onsi/gomega/types"
	configv1 "github.com/openshift/api/config/v1"
	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	"github.com/openshift/assisted-service/models"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	infrav1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/infrastructure/v1beta1"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/metrics"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/lab"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/faults"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/inventory"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/release"
)

// startLab starts a lab for the specs of one container and stops it after them.
func startLab() *lab.Lab {
	return startLabWithOptions(lab.Options{})
}

// startLabWithOptions is startLab with o.
func startLabWithOptions(o lab.Options) *lab.Lab {
	l, err := lab.Start(ctx, o)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(l.Stop()).To(Succeed()) })
	return l
}

// startLabWithHosts starts a lab (see startLab), creates a namespace named after namespace and
// adds n BareMetalHosts named <prefix>-<i> to it.
func startLabWithHosts(namespace, prefix string, n int) (*lab.Lab, string) {
	return addHosts(startLab(), namespace, prefix, n)
}

// addHosts creates a namespace of l named after namespace and adds n BareMetalHosts named
// <prefix>-<i> to it.
func addHosts(l *lab.Lab, namespace, prefix string, n int) (*lab.Lab, string) {
	ns, err := l.Mgmt.CreateNamespace(ctx, namespace)
	Expect(err).NotTo(HaveOccurred())
	_, err = l.AddHosts(ctx, ns, prefix, n)
	Expect(err).NotTo(HaveOccurred())
	return l, ns
}

// expectNoneLeft checks that c holds no object of the kinds of lists in ns; where says where
// (for the failure message).
func expectNoneLeft(g Gomega, c client.Client, ns, where string, lists ...client.ObjectList) {
	for _, list := range lists {
		g.Expect(c.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		g.Expect(meta.LenList(list)).To(BeZero(), "%T left %s: %s", list, where, describeObjects(list))
	}
}

// describeObjects names each object of list with what keeps it: its deletion timestamp,
// finalizers and owners.
func describeObjects(list client.ObjectList) string {
	items, err := meta.ExtractList(list)
	if err != nil {
		return err.Error()
	}
	var out []string
	for _, item := range items {
		o, ok := item.(client.Object)
		if !ok {
			continue
		}
		var owners []string
		for _, ref := range o.GetOwnerReferences() {
			owners = append(owners, fmt.Sprintf("%s/%s(controller=%v)", ref.Kind, ref.Name, ptr.Deref(ref.Controller, false)))
		}
		deleted := "not deleted"
		if t := o.GetDeletionTimestamp(); t != nil {
			deleted = "deleted at " + t.UTC().Format(time.RFC3339)
		}
		out = append(out, fmt.Sprintf("%s (created %s, %s, finalizers %v, owners %v)", o.GetName(),
			o.GetCreationTimestamp().UTC().Format(time.RFC3339), deleted, o.GetFinalizers(), owners))
	}
	return strings.Join(out, "; ")
}

// reportOnFailure prints, when a spec fails, what a person would look at first: every object of
// the namespace with why it waits.
func reportOnFailure(l *lab.Lab, ns string) {
	DeferCleanup(func() {
		if CurrentSpecReport().Failed() {
			s, err := l.Snapshot(ctx, ns)
			AddReportEntry("lab state", fmt.Sprintf("%s\n(snapshot error: %v, manager errors: %v)", s, err, l.Err()))
		}
	})
}

// eventNote returns the note of an event of type eventType and reason in ns about an object of
// that kind and name (any name when name is ""), or "".
func eventNote(g Gomega, l *lab.Lab, ns, eventType, reason, kind, name string) string {
	list := &eventsv1.EventList{}
	g.Expect(l.Mgmt.Client.List(ctx, list, client.InNamespace(ns))).To(Succeed())
	for _, e := range list.Items {
		if e.Type == eventType && e.Reason == reason && e.Regarding.Kind == kind && (name == "" || e.Regarding.Name == name) {
			return e.Note
		}
	}
	return ""
}

// controlPlane reads the control plane of Cluster name (the one its spec.controlPlaneRef names:
// a topology's has a name of its own), or the control plane name when no such Cluster exists.
func controlPlane(l *lab.Lab, ns, name string) func(Gomega) *controlplanev1.OpenshiftAssistedControlPlane {
	return func(g Gomega) *controlplanev1.OpenshiftAssistedControlPlane {
		cluster := &clusterv1.Cluster{}
		if err := l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cluster); err == nil && cluster.Spec.ControlPlaneRef.Name != "" {
			name = cluster.Spec.ControlPlaneRef.Name
		}
		cp := &controlplanev1.OpenshiftAssistedControlPlane{}
		g.Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cp)).To(Succeed())
		return cp
	}
}

func conditionTrue(conds []metav1.Condition, t string) bool {
	for _, c := range conds {
		if c.Type == t {
			return c.Status == "True"
		}
	}
	return false
}

// expectAvailable waits until the control plane is available with want ready replicas, the
// Cluster reports it initialized, and the kubeconfig Secret reaches the workload cluster, whose
// Nodes are returned.
func expectAvailable(l *lab.Lab, ns, name string, controlPlanes, nodes int) {
	Eventually(func(g Gomega) {
		cp := controlPlane(l, ns, name)(g)
		g.Expect(conditionTrue(cp.Status.Conditions, "Available")).To(BeTrue(), "control plane not Available")
		g.Expect(cp.Status.ReadyReplicas).To(HaveValue(BeEquivalentTo(controlPlanes)))
		cluster := &clusterv1.Cluster{}
		g.Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cluster)).To(Succeed())
		g.Expect(cluster.Status.Initialization.ControlPlaneInitialized).To(Equal(ptr.To(true)))
		g.Expect(workloadNodes(g, l, ns, name)).To(HaveLen(nodes))
	}, timeout, interval).Should(Succeed())
}

// expectAvailableMachines waits until the control plane is available with controlPlanes ready
// replicas and the cluster runs machines Machines: for a cluster of a lab whose one workload API
// server also holds other clusters' Nodes (expectAvailable counts every Node).
func expectAvailableMachines(l *lab.Lab, ns, name string, controlPlanes, machines int) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		cp := controlPlane(l, ns, name)(g)
		g.Expect(conditionTrue(cp.Status.Conditions, "Available")).To(BeTrue(), "control plane not Available")
		g.Expect(cp.Status.ReadyReplicas).To(HaveValue(BeEquivalentTo(controlPlanes)))
		g.Expect(runningMachines(g, l, ns, client.MatchingLabels{clusterv1.ClusterNameLabel: name})).To(Equal(machines))
	}, timeout, interval).Should(Succeed())
}

// workloadNodes lists the workload cluster's Nodes through the kubeconfig the control plane wrote.
func workloadNodes(g Gomega, l *lab.Lab, ns, name string) []string {
	secret := &corev1.Secret{}
	g.Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name + "-kubeconfig"}, secret)).To(Succeed())
	g.Expect(secret.Type).To(Equal(clusterv1.ClusterSecretType))
	cfg, err := clientcmd.RESTConfigFromKubeConfig(secret.Data["value"])
	g.Expect(err).NotTo(HaveOccurred())
	c, err := client.New(cfg, client.Options{Scheme: l.Workload.Scheme})
	g.Expect(err).NotTo(HaveOccurred())
	nodes := &corev1.NodeList{}
	g.Expect(c.List(ctx, nodes)).To(Succeed())
	names := []string{}
	for _, n := range nodes.Items {
		if n.DeletionTimestamp == nil {
			names = append(names, n.Name)
		}
	}
	return names
}

func machines(g Gomega, l *lab.Lab, ns string, labels client.MatchingLabels) []clusterv1.Machine {
	list := &clusterv1.MachineList{}
	g.Expect(l.Mgmt.Client.List(ctx, list, client.InNamespace(ns), labels)).To(Succeed())
	return list.Items
}

func runningMachines(g Gomega, l *lab.Lab, ns string, labels client.MatchingLabels) int {
	n := 0
	for _, m := range machines(g, l, ns, labels) {
		if m.Status.Phase == string(clusterv1.MachinePhaseRunning) && m.DeletionTimestamp == nil {
			n++
		}
	}
	return n
}

// The core specs on the real components: the real assisted-service (lab.AssistedReal: the service
// at the commit test/support/assistedservice pins, its hosts played over its REST API by
// test/support/sim/discovery) and the real baremetal-operator (lab.BareMetalReal: CAPM3 meets
// BMO's own state machine through install, scale up, scale down, deprovisioning and cleaning a
// host that is then provisioned again, and deletion). The clusters install one after another in
// one lab, each in a namespace of its own: the 3+2 cluster, a single-node one, the image flavor's,
// one that the upstream providers installed, and one through API faults, provider restarts and
// assisted-service restarts. (One real assisted-service runs on a machine at a time:
// assistedservice.lockMachine.)
var _ = Describe("The real assisted-service and baremetal-operator: a cluster of 3 control-plane nodes and 2 workers, a single-node one, the image flavor, a switch from the upstream providers and a cluster through faults", Ordered, startsFirst, func() {
	var (
		l     *lab.Lab
		ns    string
		start time.Time
	)
	const name = "prod"
	workers := client.MatchingLabels{clusterv1.MachineDeploymentNameLabel: name + "-worker"}
	controlPlanes := client.MatchingLabels{clusterv1.MachineControlPlaneLabel: ""}
	// The fault spec's injectors, off until its Context.
	in := newFaultInjection()

	BeforeAll(func() {
		// The rest of a real management cluster's control plane too: kube-controller-manager's
		// garbage collector and namespace controller.
		l, ns = addHosts(startLabWithOptions(lab.Options{BareMetal: lab.BareMetalReal, Assisted: lab.AssistedReal,
			ControllerManager: true, ProviderTransport: in.transport}), "prod", "host", 5)
		start = time.Now()
		// Automated cleaning (metadata, the BareMetalHost's own default): Ironic wipes the disks
		// of the hosts the workers free before the control plane takes them. The templates'
		// default (disabled: the disks are kept, the hosts boot the ISO again and register
		// again) is what the image flavor's cluster below and the simulated labs run. With it,
		// the scale specs here took 76 s each instead of 29 on the real service (2026-11-30, not
		// traced yet).
		Expect(l.CreateCluster(ctx, lab.ClusterOptions{Namespace: ns, Name: name, ControlPlanes: 3, Workers: 2, Version: "4.17.3",
			AutomatedCleaningMode: "metadata"})).To(Succeed())
	})
	BeforeEach(func() { reportOnFailure(l, ns) })

	It("installs to Available, its version fixed while it installs", func() {
		// As soon as the controller reports the installation, another version is refused. The
		// controller writes the object meanwhile: an update of a stale copy is a conflict
		// (checked before admission), so it is read again until the webhook answers.
		Eventually(func(g Gomega) {
			cp := controlPlane(l, ns, name)(g)
			c := meta.FindStatusCondition(cp.Status.Conditions, controlplanev1.AvailableCondition)
			g.Expect(c).NotTo(BeNil())
			g.Expect(string(c.Status)).To(Equal("False"))
		}, timeout, 100*time.Millisecond).Should(Succeed())
		Eventually(func(g Gomega) {
			cp := controlPlane(l, ns, name)(g)
			cp.Spec.DistributionVersion = "4.17.5"
			err := l.Mgmt.Client.Update(ctx, cp)
			g.Expect(apierrors.IsConflict(err)).To(BeFalse(), "stale copy: %v", err)
			g.Expect(err).To(MatchError(And(
				ContainSubstring("changing distributionVersion from 4.17.3 to 4.17.5 is not allowed while the cluster is being installed"),
				ContainSubstring("the change will be carried out as an upgrade"))))
		}, timeout, interval).Should(Succeed())
		expectAvailable(l, ns, name, 3, 5)
		// Pinned by digest: the payload says which version it is.
		sets := &hivev1.ClusterImageSetList{}
		Expect(l.Mgmt.Client.List(ctx, sets, client.MatchingLabels{controlplanev1.ImageSetNamespaceLabel: ns,
			controlplanev1.ImageSetControlPlaneLabel: name})).To(Succeed())
		Expect(sets.Items).To(HaveLen(1))
		installed, err := release.ReadPayload(ctx, sets.Items[0].Spec.ReleaseImage, l.Releases.RemoteOptions()...)
		Expect(err).NotTo(HaveOccurred())
		Expect(installed.Version).To(Equal("4.17.3"), "installed with the version it started with")
		AddReportEntry("3+2 install on the real assisted-service and baremetal-operator", time.Since(start).Round(time.Second).String())
		aci := &hiveextv1beta1.AgentClusterInstall{}
		Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, aci)).To(Succeed())
		Expect(aci.Spec.ProvisionRequirements.ControlPlaneAgents).To(Equal(3))
		Expect(aci.Spec.ProvisionRequirements.WorkerAgents).To(Equal(2))
		expectNoMachineAPI(l)
		// Metal3 hosts: the bootstrap provider approved their Agents (counted in this process's
		// registry, which the lab's managers share).
		Expect(metricValue(metrics.AgentsApprovedName, nil)).To(BeNumerically(">=", 5))
		expectGauge(metrics.ControlPlanesName, map[string]string{"namespace": ns, "reason": "Installed"}, BeEquivalentTo(1))
	})

	It("scales the workers from 2 to 4 as day-2 hosts, and back to 1", func() {
		_, err := l.AddHosts(ctx, ns, "day2", 2)
		Expect(err).NotTo(HaveOccurred())
		scaleWorkersUp(l, ns, name, 4, 7)
		expectDay2Agents(l, ns, 2, "the two new workers install as day-2 hosts")

		scaleMachineDeployment(l, ns, name+"-worker", 1)
		Eventually(func(g Gomega) {
			g.Expect(machines(g, l, ns, workers)).To(HaveLen(1))
			g.Expect(runningMachines(g, l, ns, workers)).To(Equal(1))
		}, timeout, interval).Should(Succeed())
	})

	It("scales the control plane from 3 to 5 as day-2 hosts, on hosts the workers freed, and back to 3, never losing etcd quorum", func() {
		expectEtcdMembersMatchMachines(l, ns, controlPlanes)
		watchQuorum(l, "3->5->3")
		scaleControlPlane(l, ns, name, 5)
		expectAvailable(l, ns, name, 5, 6)
		Eventually(func(g Gomega) {
			g.Expect(runningMachines(g, l, ns, controlPlanes)).To(Equal(5))
			aci := &hiveextv1beta1.AgentClusterInstall{}
			g.Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, aci)).To(Succeed())
			g.Expect(aci.Status.DebugInfo.State).To(Equal("adding-hosts"), "the installed cluster takes day-2 hosts")
		}, timeout, interval).Should(Succeed())
		// The service writes an Agent's status after the host's progress (expectDay2Agents).
		Eventually(func(g Gomega) {
			agents := &aiv1beta1.AgentList{}
			g.Expect(l.Mgmt.Client.List(ctx, agents, client.InNamespace(ns))).To(Succeed())
			masters := 0
			for _, a := range agents.Items {
				if a.Spec.Role == "master" && a.Status.DebugInfo.State == "added-to-existing-cluster" {
					masters++
				}
			}
			g.Expect(masters).To(Equal(2), "the two new control-plane hosts install as day-2 masters")
		}, timeout, interval).Should(Succeed())

		expectEtcdMembersMatchMachines(l, ns, controlPlanes)

		scaleControlPlane(l, ns, name, 3)
		Eventually(func(g Gomega) {
			g.Expect(machines(g, l, ns, controlPlanes)).To(HaveLen(3))
			cp := controlPlane(l, ns, name)(g)
			g.Expect(cp.Status.Replicas).To(HaveValue(BeEquivalentTo(3)))
			g.Expect(conditionTrue(cp.Status.Conditions, "Available")).To(BeTrue())
		}, timeout, interval).Should(Succeed())
		expectEtcdMembersMatchMachines(l, ns, controlPlanes)
	})

	It("refuses to scale the control plane from 3 to 1, which would lose etcd quorum", func() {
		cp := &controlplanev1.OpenshiftAssistedControlPlane{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		scale := &autoscalingv1.Scale{Spec: autoscalingv1.ScaleSpec{Replicas: 1}}
		err := l.Mgmt.Client.SubResource("scale").Update(ctx, cp, client.WithSubResourceBody(scale))
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("a highly available control plane cannot be reduced to a single node"))
		Expect(machines(Default, l, ns, controlPlanes)).To(HaveLen(3))
		expectEtcdMembersMatchMachines(l, ns, controlPlanes)
	})

	It("upgrades the distribution version through the workload cluster's ClusterVersion", func() {
		// The controller writes the control plane meanwhile: a stale copy is read again.
		cp := controlPlane(l, ns, name)(Default)
		updateObject(l.Mgmt.Client, cp, func() error {
			cp.Spec.DistributionVersion = "4.17.5"
			return nil
		})
		Eventually(func(g Gomega) {
			cv := &configv1.ClusterVersion{}
			g.Expect(l.Workload.Client.Get(ctx, types.NamespacedName{Name: "version"}, cv)).To(Succeed())
			g.Expect(cv.Spec.DesiredUpdate).NotTo(BeNil())
			g.Expect(cv.Spec.DesiredUpdate.Version).To(Equal("4.17.5"))
			g.Expect(cv.Status.History).NotTo(BeEmpty())
			g.Expect(cv.Status.History[0].Version).To(Equal("4.17.5"))
			g.Expect(cv.Status.History[0].State).To(Equal(configv1.CompletedUpdate))
			cp := controlPlane(l, ns, name)(g)
			g.Expect(cp.Status.DistributionVersion).To(Equal("4.17.5"))
			g.Expect(cp.Status.Version).To(Equal("v1.30.6"))
		}, timeout, interval).Should(Succeed())
		Expect(metricValue(metrics.UpgradesName, nil)).To(BeNumerically(">=", 1))
	})

	It("leaves nothing behind when the Cluster is deleted", func() {
		deleteClusterAndExpectNothingLeft(l, ns, name)
	})
	It("installs single-node OpenShift on one host, named from its metadata as upstream's manifests name it", func() {
		// After the multi-node cluster: the lab's clusters share one workload API server, whose
		// Nodes are every cluster's.
		snoNS, err := l.Mgmt.CreateNamespace(ctx, "real-sno")
		Expect(err).NotTo(HaveOccurred())
		reportOnFailure(l, snoNS)
		hosts, err := l.AddHosts(ctx, snoNS, "real-sno", 1)
		Expect(err).NotTo(HaveOccurred())
		// A second host, whose BMC refuses the credentials of its BareMetalHost: BMO fails its
		// registration as Ironic fails it, and it goes no further.
		_, err = l.AddHosts(ctx, snoNS, "wrong-creds", 1, func(h *inventory.Host, _ *bmov1alpha1.BareMetalHost) {
			h.BMCPassword = "not-what-the-secret-says"
		})
		Expect(err).NotTo(HaveOccurred())
		start := time.Now()
		objs, err := l.ClusterObjects(lab.ClusterOptions{Namespace: snoNS, Name: "sno", ControlPlanes: 1, Version: "4.17.3"})
		Expect(err).NotTo(HaveOccurred())
		for _, o := range objs {
			if cp, ok := o.(*controlplanev1.OpenshiftAssistedControlPlane); ok {
				// Host metadata variables, resolved from the BareMetalHost's metadata as the
				// upstream provider resolves them from the host's config drive.
				cp.Spec.OpenshiftAssistedConfigSpec.NodeRegistration.Name = "$METADATA_LOCAL_HOSTNAME"
				cp.Spec.OpenshiftAssistedConfigSpec.NodeRegistration.KubeletExtraLabels = []string{"example.com/host-uid=${METADATA_UUID}"}
			}
			Expect(l.Mgmt.Client.Create(ctx, o, client.FieldValidation(metav1.FieldValidationStrict))).To(Succeed())
		}
		expectAvailableMachines(l, snoNS, "sno", 1, 1)
		AddReportEntry("single-node install on the real assisted-service and baremetal-operator", time.Since(start).Round(time.Second).String())
		host := &bmov1alpha1.BareMetalHost{}
		Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: snoNS, Name: "real-sno-0"}, host)).To(Succeed())
		// BMO's status of the host it provisioned: the hardware Ironic's inspection reported, the
		// live ISO, the credentials it verified, and the HostFirmwareSettings it created.
		Expect(host.Status.Provisioning.State).To(Equal(bmov1alpha1.StateProvisioned))
		Expect(host.Status.HardwareDetails).To(Equal(hosts[0].HardwareDetails()))
		Expect(host.Status.GoodCredentials.Reference).NotTo(BeNil())
		Expect(host.Status.PoweredOn).To(BeTrue())
		Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: snoNS, Name: "real-sno-0"}, &bmov1alpha1.HostFirmwareSettings{})).To(Succeed())
		wrong := &bmov1alpha1.BareMetalHost{}
		Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: snoNS, Name: "wrong-creds-0"}, wrong)).To(Succeed())
		Expect(wrong.Status.Provisioning.State).To(Equal(bmov1alpha1.StateRegistering))
		Expect(wrong.Status.ErrorType).To(Equal(bmov1alpha1.RegistrationError))
		Expect(wrong.Status.ErrorMessage).To(ContainSubstring("returned code 401"))
		// BMO's webhook refuses at admission a host whose disk image has no checksum.
		refused := hosts[0].BareMetalHost(snoNS, "real-sno-bmc")
		refused.Name = "no-checksum"
		refused.Spec.BMC.Address += "-other"
		refused.Spec.BootMACAddress = "52:54:00:ff:ff:01"
		refused.Spec.Image = &bmov1alpha1.Image{URL: "https://images.lab/rhcos.qcow2"}
		Expect(l.Mgmt.Client.Create(ctx, refused)).To(MatchError(ContainSubstring("checksum is required for normal images")))
		node := &corev1.Node{}
		Eventually(func(g Gomega) {
			g.Expect(l.Workload.Client.Get(ctx, client.ObjectKey{Name: "real-sno-0"}, node)).To(Succeed(), "the node is named after the host's local-hostname, not the Machine")
			g.Expect(node.Labels).To(HaveKeyWithValue("example.com/host-uid", string(host.UID)))
		}, timeout, interval).Should(Succeed())

		aci := &hiveextv1beta1.AgentClusterInstall{}
		Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: snoNS, Name: "sno"}, aci)).To(Succeed())
		Expect(aci.Spec.ProvisionRequirements.ControlPlaneAgents).To(Equal(1))
		Expect(aci.Spec.ProvisionRequirements.WorkerAgents).To(Equal(0))
		Expect(aci.Spec.PlatformType).To(Equal(hiveextv1beta1.NonePlatformType))
	})

	Context("The image flavor: hosts booting an RHCOS disk image", func() {
		imageFlavorSpecs(func() *lab.Lab { return l })
	})

	Context("A cluster that cluster-api-provider-openshift-assisted installed", func() {
		upstreamSwitchSpecs(func() *lab.Lab { return l })
	})

	Context("A cluster installed and deleted through API faults, provider restarts and assisted-service restarts", func() {
		faultSpecs(func() *lab.Lab { return l }, in)
	})
})

// deleteClusterAndExpectNothingLeft deletes the Cluster and waits until none of the objects of
// the cluster are left in ns (expectNothingLeft).
func deleteClusterAndExpectNothingLeft(l *lab.Lab, ns, name string) {
	deleteCluster(l, ns, name)
	expectNothingLeft(l, ns, name)
}

// deleteCluster deletes the Cluster name of ns, which must exist.
func deleteCluster(l *lab.Lab, ns, name string) {
	cluster := &clusterv1.Cluster{}
	Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cluster)).To(Succeed())
	Expect(l.Mgmt.Client.Delete(ctx, cluster)).To(Succeed())
}

// expectNothingLeft waits until none of the objects of the deleted cluster name are left in ns
// (the Agents stay, as hosts do, but unbound and unclaimed), and no Secret of the cluster but the
// user's pull secret, or one that garbage collection removes (envtest runs no garbage collector:
// its owner is gone).
func expectNothingLeft(l *lab.Lab, ns, name string) {
	c := l.Mgmt.Client
	Eventually(func(g Gomega) {
		expectNoneLeft(g, c, ns, "behind",
			&clusterv1.ClusterList{}, &clusterv1.MachineList{}, &clusterv1.MachineDeploymentList{},
			&controlplanev1.OpenshiftAssistedControlPlaneList{}, &bootstrapv1.OpenshiftAssistedConfigList{},
			&infrav1.AgentMachineList{}, &infrav1.AgentClusterList{}, &aiv1beta1.InfraEnvList{},
			&hivev1.ClusterDeploymentList{}, &hiveextv1beta1.AgentClusterInstallList{})
		agents := &aiv1beta1.AgentList{}
		g.Expect(c.List(ctx, agents, client.InNamespace(ns))).To(Succeed())
		for _, a := range agents.Items {
			g.Expect(a.Spec.ClusterDeploymentName).To(BeNil(), "Agent %s still bound", a.Name)
			g.Expect(a.Labels).NotTo(HaveKey(infrav1.AgentClaimedByLabel), "Agent %s still claimed", a.Name)
		}
		secrets := &corev1.SecretList{}
		g.Expect(c.List(ctx, secrets, client.InNamespace(ns), client.MatchingLabels{clusterv1.ClusterNameLabel: name})).To(Succeed())
		for _, s := range secrets.Items {
			if s.Name == name+"-pull-secret" {
				continue
			}
			g.Expect(s.OwnerReferences).NotTo(BeEmpty(), "Secret %s left behind with no owner", s.Name)
			for _, ref := range s.OwnerReferences {
				owner := &metav1.PartialObjectMetadata{}
				owner.SetGroupVersionKind(schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind))
				err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: ref.Name}, owner)
				g.Expect(apierrors.IsNotFound(err) || (err == nil && owner.UID != ref.UID)).To(BeTrue(),
					"Secret %s left behind: its owner %s %s still exists", s.Name, ref.Kind, ref.Name)
			}
		}
	}, timeout, interval).Should(Succeed())
}

// expectEtcdMembersMatchMachines waits until the workload cluster's etcd members are exactly the
// nodes of the control-plane Machines, every one a healthy voting member.
func expectEtcdMembersMatchMachines(l *lab.Lab, ns string, controlPlanes client.MatchingLabels) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		list := &clusterv1.MachineList{}
		g.Expect(l.Mgmt.Client.List(ctx, list, client.InNamespace(ns), controlPlanes)).To(Succeed())
		var nodes []string
		for _, m := range list.Items {
			g.Expect(m.Status.NodeRef.IsDefined()).To(BeTrue(), "Machine %s has no node yet", m.Name)
			nodes = append(nodes, m.Status.NodeRef.Name)
		}
		members, err := l.Etcd.Members(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		var names []string
		for _, m := range members {
			g.Expect(m.IsLearner).To(BeFalse(), "member %s is a learner", m.Name)
			g.Expect(m.Healthy).To(BeTrue(), "member %s is unhealthy (process running: %v; members %+v)", m.Name, l.Etcd.Running(m.Name), members)
			names = append(names, m.Name)
		}
		g.Expect(names).To(ConsistOf(nodes))
	}, timeout, interval).Should(Succeed())
}

// scaleControlPlane sets the replicas of a control plane through its scale subresource, as
// `kubectl scale` does.
func scaleControlPlane(l *lab.Lab, ns, name string, replicas int32) {
	cp := &controlplanev1.OpenshiftAssistedControlPlane{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	scale := &autoscalingv1.Scale{Spec: autoscalingv1.ScaleSpec{Replicas: replicas}}
	Expect(l.Mgmt.Client.SubResource("scale").Update(ctx, cp, client.WithSubResourceBody(scale))).To(Succeed())
}

// scaleMachineDeployment sets the replicas of a MachineDeployment.
func scaleMachineDeployment(l *lab.Lab, ns, name string, replicas int32) {
	md := &clusterv1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	updateObject(l.Mgmt.Client, md, func() error {
		md.Spec.Replicas = ptr.To(replicas)
		return nil
	})
}

// scaleWorkersUp scales the <name>-worker MachineDeployment of cluster name to replicas and waits
// until that many of its Machines run and the workload cluster has nodes Nodes.
func scaleWorkersUp(l *lab.Lab, ns, name string, replicas int32, nodes int) {
	GinkgoHelper()
	workers := client.MatchingLabels{clusterv1.MachineDeploymentNameLabel: name + "-worker"}
	scaleMachineDeployment(l, ns, name+"-worker", replicas)
	Eventually(func(g Gomega) {
		g.Expect(runningMachines(g, l, ns, workers)).To(Equal(int(replicas)))
		g.Expect(workloadNodes(g, l, ns, name)).To(HaveLen(nodes))
	}, timeout, interval).Should(Succeed())
}

// expectDay2Agents waits until n Agents of ns are hosts that assisted-service added to an
// installed cluster (why says what that shows). The service writes an Agent's status from its
// database on its own reconcile, after the host's progress: a Machine can run on its Node before
// its Agent says so.
func expectDay2Agents(l *lab.Lab, ns string, n int, why string) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		agents := &aiv1beta1.AgentList{}
		g.Expect(l.Mgmt.Client.List(ctx, agents, client.InNamespace(ns))).To(Succeed())
		added := 0
		for _, a := range agents.Items {
			if a.Status.DebugInfo.State == models.HostStatusAddedToExistingCluster {
				added++
			}
		}
		g.Expect(added).To(Equal(n), why)
	}, timeout, interval).Should(Succeed())
}

var _ = Describe("A cluster of self-booted hosts (AgentMachine)", Ordered, startsFirst, func() {
	var (
		l  *lab.Lab
		ns string
	)
	const name = "edge"

	BeforeAll(func() {
		l = startLab()
		var err error
		ns, err = l.Mgmt.CreateNamespace(ctx, "edge")
		Expect(err).NotTo(HaveOccurred())
		Expect(l.AddSelfBootedHosts("edge", 4)).To(Succeed())
	})
	BeforeEach(func() { reportOnFailure(l, ns) })

	It("installs to Available, each Machine on the host booted from its own discovery ISO", func() {
		Expect(l.CreateCluster(ctx, lab.ClusterOptions{Namespace: ns, Name: name, ControlPlanes: 3, Workers: 1,
			Version: "4.17.3", Infrastructure: lab.Agent})).To(Succeed())
		expectAvailable(l, ns, name, 3, 4)
		Eventually(func(g Gomega) {
			g.Expect(runningMachines(g, l, ns, nil)).To(Equal(4))
		}, timeout, interval).Should(Succeed())

		for _, m := range machines(Default, l, ns, nil) {
			am := &infrav1.AgentMachine{}
			Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: m.Spec.InfrastructureRef.Name}, am)).To(Succeed())
			Expect(am.Status.Initialization.Provisioned).To(Equal(ptr.To(true)), "AgentMachine %s provisioned", am.Name)
			Expect(am.Spec.ProviderID).To(HavePrefix("agent://"))
			Expect(m.Spec.ProviderID).To(Equal(am.Spec.ProviderID))
			agent := &aiv1beta1.Agent{}
			Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: strings.TrimPrefix(am.Spec.ProviderID, "agent://")}, agent)).To(Succeed())
			// The Agent the Machine claimed is the one its own bootstrap config recognized and
			// approved, with the Machine's role: never another Machine's.
			Expect(agent.Labels).To(HaveKeyWithValue(bootstrapv1.AgentConfigLabel, m.Spec.Bootstrap.ConfigRef.Name))
			wantRole := "worker"
			if _, ok := m.Labels[clusterv1.MachineControlPlaneLabel]; ok {
				wantRole = "master"
			}
			Expect(string(agent.Spec.Role)).To(Equal(wantRole), "role of the Agent of Machine %s", m.Name)
			Expect(agent.Spec.ClusterDeploymentName).NotTo(BeNil())
			Expect(agent.Spec.ClusterDeploymentName.Name).To(Equal(name))
		}

		// The providers' metrics say so (the lab's managers share this process's registry, which
		// their metrics endpoints serve; counters and histograms add up over the specs).
		expectGauge(metrics.AgentsName, map[string]string{"namespace": ns, "availability": "claimed"}, BeEquivalentTo(4))
		expectGauge(metrics.AgentsName, map[string]string{"namespace": ns, "availability": "free"}, BeZero())
		Expect(metricValue(metrics.AgentMachineClaimSecondsName, nil)).To(BeNumerically(">=", 4))
		Expect(metricValue(metrics.InstallSecondsName, nil)).To(BeNumerically(">=", 1))
		expectGauge(metrics.ControlPlanesName, map[string]string{"namespace": ns, "reason": "Installed"}, BeEquivalentTo(1))
	})

	It("moves to another management cluster: the AgentMachines stay provisioned without their Agents", func() {
		providerIDs, _ := hostsOf(Default, l.Mgmt.Client, ns)
		from, err := l.Move(ctx, ns)
		Expect(err).NotTo(HaveOccurred())
		expectNoneLeft(Default, from.Client, ns, "on the old management cluster", &infrav1.AgentMachineList{},
			&infrav1.AgentClusterList{}, &bootstrapv1.OpenshiftAssistedConfigList{}, &aiv1beta1.AgentList{})
		expectAvailable(l, ns, name, 3, 4)
		Eventually(func(g Gomega) {
			ids, _ := hostsOf(g, l.Mgmt.Client, ns)
			g.Expect(ids).To(Equal(providerIDs))
			g.Expect(runningMachines(g, l, ns, nil)).To(Equal(4))
			ams := &infrav1.AgentMachineList{}
			g.Expect(l.Mgmt.Client.List(ctx, ams, client.InNamespace(ns))).To(Succeed())
			g.Expect(ams.Items).To(HaveLen(4))
			for _, am := range ams.Items {
				g.Expect(am.Status.Initialization.Provisioned).To(Equal(ptr.To(true)), "AgentMachine %s provisioned", am.Name)
				g.Expect(conditionTrue(am.Status.Conditions, "Ready")).To(BeTrue(), "AgentMachine %s Ready", am.Name)
				// The move carried no status: the addresses are the Node's again.
				g.Expect(am.Status.Addresses).To(ContainElement(HaveField("Type", clusterv1.MachineInternalIP)), "AgentMachine %s addresses", am.Name)
			}
			machines := &clusterv1.MachineList{}
			g.Expect(l.Mgmt.Client.List(ctx, machines, client.InNamespace(ns))).To(Succeed())
			for _, m := range machines.Items {
				g.Expect(m.Status.Addresses).NotTo(BeEmpty(), "Machine %s addresses", m.Name)
			}
			// The new hub's assisted-service deleted the Agents: no AgentMachine claimed another.
			agents := &aiv1beta1.AgentList{}
			g.Expect(l.Mgmt.Client.List(ctx, agents, client.InNamespace(ns))).To(Succeed())
			g.Expect(agents.Items).To(BeEmpty())
		}, timeout, interval).Should(Succeed())
	})

	It("releases every host when the Cluster is deleted", func() {
		deleteClusterAndExpectNothingLeft(l, ns, name)
	})
})

// metricValue is faults.SumMetric: the lab runs the providers in this process, so
// controller-runtime's registry is what their metrics endpoints serve.
func metricValue(name string, want map[string]string) float64 {
	GinkgoHelper()
	v, err := faults.SumMetric(name, want)
	Expect(err).NotTo(HaveOccurred())
	return v
}

// expectGauge waits for a gauge that a provider counts from its cache at each scrape (Agents,
// control planes) to match: the cache follows the API server, which the spec reads directly, by
// a moment.
func expectGauge(name string, want map[string]string, matcher gomegatypes.GomegaMatcher) {
	GinkgoHelper()
	Eventually(func(g Gomega) float64 {
		v, err := faults.SumMetric(name, want)
		g.Expect(err).NotTo(HaveOccurred())
		return v
	}, timeout, interval).Should(matcher, "metric %s%v", name, want)
}

var _ = Describe("Single-node OpenShift on a self-booted host (agent-sno flavor)", Ordered, func() {
	var (
		l  *lab.Lab
		ns string
	)
	const name = "agent-sno"

	BeforeAll(func() {
		l = startLab()
		var err error
		ns, err = l.Mgmt.CreateNamespace(ctx, "agent-sno")
		Expect(err).NotTo(HaveOccurred())
		Expect(l.AddSelfBootedHosts("agent-sno", 1)).To(Succeed())
	})
	BeforeEach(func() { reportOnFailure(l, ns) })

	It("installs to Available: one control-plane Machine bound to the one Agent, no VIPs, no workers", func() {
		o := lab.ClusterOptions{Namespace: ns, Name: name, ControlPlanes: 1, Version: "4.17.3", Infrastructure: lab.Agent}
		template, err := o.Template()
		Expect(err).NotTo(HaveOccurred())
		Expect(template).To(HaveSuffix("cluster-template-agent-sno.yaml"))
		Expect(l.CreateCluster(ctx, o)).To(Succeed())
		expectAvailable(l, ns, name, 1, 1)
		Eventually(func(g Gomega) {
			g.Expect(runningMachines(g, l, ns, nil)).To(Equal(1))
		}, timeout, interval).Should(Succeed())

		// One Machine, the control plane's, on an AgentMachine that claimed the one Agent.
		all := machines(Default, l, ns, nil)
		Expect(all).To(HaveLen(1))
		m := all[0]
		Expect(m.Labels).To(HaveKey(clusterv1.MachineControlPlaneLabel))
		Expect(m.Spec.InfrastructureRef.Kind).To(Equal("AgentMachine"))
		am := &infrav1.AgentMachine{}
		Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: m.Spec.InfrastructureRef.Name}, am)).To(Succeed())
		Expect(am.Status.Initialization.Provisioned).To(Equal(ptr.To(true)), "AgentMachine %s provisioned", am.Name)
		Expect(am.Spec.ProviderID).To(HavePrefix("agent://"))
		Expect(m.Spec.ProviderID).To(Equal(am.Spec.ProviderID))
		agents := &aiv1beta1.AgentList{}
		Expect(l.Mgmt.Client.List(ctx, agents, client.InNamespace(ns))).To(Succeed())
		Expect(agents.Items).To(HaveLen(1))
		agent := agents.Items[0]
		Expect(am.Spec.ProviderID).To(Equal("agent://" + agent.Name))
		Expect(agent.Spec.Approved).To(BeTrue())
		Expect(string(agent.Spec.Role)).To(Equal("master"))
		Expect(agent.Labels).To(HaveKeyWithValue(bootstrapv1.AgentConfigLabel, m.Spec.Bootstrap.ConfigRef.Name))
		Expect(agent.Labels).To(HaveKeyWithValue(infrav1.AgentClaimedByLabel, string(am.UID)))
		Expect(agent.Spec.ClusterDeploymentName).NotTo(BeNil())
		Expect(agent.Spec.ClusterDeploymentName.Name).To(Equal(name))
		Expect(m.Status.NodeRef.IsDefined()).To(BeTrue())
		Expect(workloadNodes(Default, l, ns, name)).To(ConsistOf(m.Status.NodeRef.Name))

		// Single-node OpenShift: platform None, no VIPs, one control-plane Agent and no worker;
		// the API is reached at api.<name>.<base domain>.
		aci := &hiveextv1beta1.AgentClusterInstall{}
		Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, aci)).To(Succeed())
		Expect(aci.Spec.ProvisionRequirements.ControlPlaneAgents).To(Equal(1))
		Expect(aci.Spec.ProvisionRequirements.WorkerAgents).To(Equal(0))
		Expect(aci.Spec.PlatformType).To(Equal(hiveextv1beta1.NonePlatformType))
		Expect(aci.Spec.APIVIPs).To(BeEmpty())
		Expect(aci.Spec.IngressVIPs).To(BeEmpty())
		ac := &infrav1.AgentCluster{}
		Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, ac)).To(Succeed())
		Expect(ac.Spec.ControlPlaneEndpoint.Host).To(Equal("api." + name + ".lab.example.com"))
		cluster := &clusterv1.Cluster{}
		Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cluster)).To(Succeed())
		Expect(cluster.Spec.ControlPlaneEndpoint.Host).To(Equal(ac.Spec.ControlPlaneEndpoint.Host))
		mds := &clusterv1.MachineDeploymentList{}
		Expect(l.Mgmt.Client.List(ctx, mds, client.InNamespace(ns))).To(Succeed())
		Expect(mds.Items).To(BeEmpty())
	})

	It("releases its host when the Cluster is deleted", func() {
		deleteClusterAndExpectNothingLeft(l, ns, name)
	})
})
