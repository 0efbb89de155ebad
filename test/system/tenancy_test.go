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

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	capm3v1beta2 "github.com/metal3-io/cluster-api-provider-metal3/api/v1beta2"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	conditionsv1 "github.com/openshift/custom-resource-status/conditions/v1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	infrav1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/infrastructure/v1beta1"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/lab"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/inventory"
)

// Two teams share one hub (docs/security.md, "Who may write what"): team A installs a
// single-node cluster on a BareMetalHost, and its host owner offers a free Agent in its namespace;
// team B installs one on a self-booted host, and, with everything a tenant may write in its own
// namespace, tries every path into team A's: a Metal3Machine naming A's BareMetalHost, a
// BareMetalHost whose metaData Secret is A's, an AgentMachine choosing A's Agent, AgentClusters
// naming A's ClusterDeployment and a Secret of A's, and a release on a registry the hub may not
// contact. Each is refused where it is read, with the documented reason; nothing of team A's is
// claimed, bound, owned, written or quoted; both clusters install, and both go without a trace.
var _ = Describe("Two tenants on one hub, one of them hostile", Ordered, func() {
	const (
		a, b = "a", "b"
		// The label team A's host owner gives the Agent it offers, which team B's AgentMachine
		// selects, so that only A's Agent would fit it.
		poolLabel = "example.com/pool"
		// evilRegistry is a registry the lab's control-plane manager is not allowed to contact.
		evilRegistry = "registry.evil.example"
		// Team A's host metadata, which only A's hosts may name.
		metadataSecret  = "a-host-metadata"
		privateHostname = "a-private-hostname"
		privateValue    = "team-a-private-value"
		// Team B's objects aimed at team A's.
		evilHost, evilAgent, evilCD, evilCA, evilRelease = "evil-host", "evil-agent", "evil-cd", "evil-ca", "evil-release"
	)
	var (
		l        *lab.Lab
		nsA, nsB string
		// aHost is team A's BareMetalHost's host, metaHost the host of team B's BareMetalHost
		// whose metaData Secret is A's, poolHost the host of the Agent A offers.
		aHost, metaHost, poolHost *inventory.Host
		poolAgent                 client.ObjectKey
		// versions are the resourceVersions of team A's objects that nothing but team A writes,
		// taken before team B's objects exist.
		versions map[client.ObjectKey]string
	)

	BeforeAll(func() {
		l = startLab()
		var err error
		nsA, err = l.Mgmt.CreateNamespace(ctx, "tenant-a")
		Expect(err).NotTo(HaveOccurred())
		nsB, err = l.Mgmt.CreateNamespace(ctx, "tenant-b")
		Expect(err).NotTo(HaveOccurred())
		hosts, err := l.AddHosts(ctx, nsA, "a-host", 1)
		Expect(err).NotTo(HaveOccurred())
		aHost = hosts[0]
		Expect(l.AddSelfBootedHosts("b-host", 1)).To(Succeed())
		// Both installs start now, and run while team B tries every path below.
		Expect(l.CreateCluster(ctx, lab.ClusterOptions{Namespace: nsA, Name: a, ControlPlanes: 1, Version: "4.17.3"})).To(Succeed())
		Expect(l.CreateCluster(ctx, lab.ClusterOptions{Namespace: nsB, Name: b, ControlPlanes: 1, Version: "4.17.3", Infrastructure: lab.Agent})).To(Succeed())

		c := l.Mgmt.Client
		Expect(c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: nsA, Name: metadataSecret},
			StringData: map[string]string{"metaData": fmt.Sprintf("local-hostname: %s\nprivate: %s\n", privateHostname, privateValue)}})).To(Succeed())
		poolHost, poolAgent = offerAgent(l, nsA, a+"-pull-secret", poolLabel)

		versions = map[client.ObjectKey]string{}
		for _, name := range []string{metadataSecret, a + "-pull-secret"} {
			s := &corev1.Secret{}
			Expect(c.Get(ctx, client.ObjectKey{Namespace: nsA, Name: name}, s)).To(Succeed())
			versions[client.ObjectKeyFromObject(s)] = s.ResourceVersion
		}

		// Team B's host owner: a BareMetalHost whose metaData Secret is team A's.
		hosts, err = l.AddHosts(ctx, nsB, "b-meta", 1, func(_ *inventory.Host, bmh *bmov1alpha1.BareMetalHost) {
			bmh.Spec.MetaData = &corev1.SecretReference{Namespace: nsA, Name: metadataSecret}
		})
		Expect(err).NotTo(HaveOccurred())
		metaHost = hosts[0]
		createHostileObjects(l, nsA, nsB, b, poolAgent, poolLabel, evilRegistry)
	})
	BeforeEach(func() {
		reportOnFailure(l, nsA)
		reportOnFailure(l, nsB)
		reportClaimsOnFailure(l, nsA, nsB)
	})

	It("refuses team B's Metal3Machine that names team A's BareMetalHost, and reads nothing of it", func() {
		Eventually(func(g Gomega) {
			config := &bootstrapv1.OpenshiftAssistedConfig{}
			g.Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: nsB, Name: evilHost}, config)).To(Succeed())
			cond := meta.FindStatusCondition(config.Status.Conditions, bootstrapv1.AgentRegisteredCondition)
			g.Expect(cond).NotTo(BeNil())
			g.Expect(cond.Reason).To(Equal(bootstrapv1.BareMetalHostRefusedReason), cond.Message)
			g.Expect(cond.Message).To(ContainSubstring("names a BareMetalHost in another namespace, which is never read"))
			g.Expect(eventNote(g, l, nsB, corev1.EventTypeWarning, bootstrapv1.BareMetalHostRefusedReason, "OpenshiftAssistedConfig", evilHost)).To(Equal(cond.Message))
			g.Expect(config.Status.AgentRef).To(BeNil())
		}, timeout, interval).Should(Succeed())
	})

	It("keeps team B's AgentMachine to team B's Agents, even when it names team A's, and counts only B's", func() {
		Eventually(func(g Gomega) {
			am := &infrav1.AgentMachine{}
			g.Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: nsB, Name: evilAgent}, am)).To(Succeed())
			cond := meta.FindStatusCondition(am.Status.Conditions, infrav1.AgentReservedCondition)
			g.Expect(cond).NotTo(BeNil())
			g.Expect(cond.Reason).To(Equal(infrav1.NoSuitableAgentsReason), cond.Message)
			agents := &aiv1beta1.AgentList{}
			g.Expect(l.Mgmt.Client.List(ctx, agents, client.InNamespace(nsB))).To(Succeed())
			g.Expect(cond.Message).To(HavePrefix(fmt.Sprintf("0 of %d agents fit", len(agents.Items))), "only team B's Agents are counted")
			// The choice of A's Agent is refused (a Warning event says so), forgotten, never claimed.
			g.Expect(am.Annotations).NotTo(HaveKey(infrav1.ChosenAgentAnnotation))
			g.Expect(eventNote(g, l, nsB, corev1.EventTypeWarning, "ChosenAgentRefused", "AgentMachine", evilAgent)).
				To(ContainSubstring("of another namespace, which this AgentMachine may not take"))
			g.Expect(am.Status.AgentRef).To(BeNil())
			g.Expect(am.Spec.ProviderID).To(BeEmpty())
		}, timeout, interval).Should(Succeed())
		expectOffered(Default, l, poolAgent, poolLabel)
	})

	It("refuses team B's AgentClusters that name team A's ClusterDeployment or Secret", func() {
		for name, refused := range map[string]string{
			evilCD: fmt.Sprintf("spec.clusterDeploymentRef names ClusterDeployment %s/%s, outside the AgentCluster's namespace %s: refused", nsA, a, nsB),
			evilCA: fmt.Sprintf("spec.ignitionEndpoint.caCertificateReference names Secret %s/%s-pull-secret, outside the AgentCluster's namespace %s: refused", nsA, a, nsB),
		} {
			Eventually(func(g Gomega) {
				ac := &infrav1.AgentCluster{}
				g.Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: nsB, Name: name}, ac)).To(Succeed())
				cond := meta.FindStatusCondition(ac.Status.Conditions, infrav1.ClusterDeploymentReadyCondition)
				g.Expect(cond).NotTo(BeNil())
				g.Expect(cond.Reason).To(Equal(infrav1.CrossNamespaceReferenceRefusedReason), cond.Message)
				g.Expect(cond.Message).To(HavePrefix(refused))
				g.Expect(eventNote(g, l, nsB, corev1.EventTypeWarning, infrav1.CrossNamespaceReferenceRefusedReason, "AgentCluster", name)).To(Equal(cond.Message))
				g.Expect(ac.Status.ClusterDeploymentRef).To(BeZero())
				g.Expect(ptr.Deref(ac.Status.Initialization.Provisioned, false)).To(BeFalse())
			}, timeout, interval).Should(Succeed(), "AgentCluster %s", name)
		}
	})

	It("installs nothing from a registry the hub may not contact: no ClusterImageSet names it", func() {
		Eventually(func(g Gomega) {
			cp := controlPlane(l, nsB, evilRelease)(g)
			for _, t := range []string{controlplanev1.ReleaseImageResolvedCondition, controlplanev1.AvailableCondition} {
				cond := meta.FindStatusCondition(cp.Status.Conditions, t)
				g.Expect(cond).NotTo(BeNil(), t)
				g.Expect(cond.Reason).To(Equal(controlplanev1.ReleaseImageRegistryNotAllowedReason), "%s: %s", t, cond.Message)
				g.Expect(cond.Message).To(ContainSubstring("registry " + evilRegistry + " is not allowed"))
			}
			g.Expect(eventNote(g, l, nsB, corev1.EventTypeWarning, "ReconcileError", "OpenshiftAssistedControlPlane", evilRelease)).
				To(ContainSubstring("is not installed"))
		}, timeout, interval).Should(Succeed())
		expectNoImageSetFrom(Default, l, evilRegistry)
		cd := &hivev1.ClusterDeployment{}
		Expect(apierrors.IsNotFound(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: nsB, Name: evilRelease}, cd))).To(BeTrue(),
			"no ClusterDeployment of a release that is not installed")
	})

	It("installs both teams' clusters to Available meanwhile, each on its own host", func() {
		expectTenantAvailable(l, nsA, a)
		expectTenantAvailable(l, nsB, b)
		// A's host is A's Metal3 host; B's the self-booted host its own AgentMachine claimed.
		bmh := &bmov1alpha1.BareMetalHost{}
		Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: nsA, Name: aHost.Name}, bmh)).To(Succeed())
		Expect(bmh.Spec.ConsumerRef).NotTo(BeNil())
		Expect(bmh.Spec.ConsumerRef.Namespace).To(Equal(nsA))
		for ns, name := range map[string]string{nsA: a, nsB: b} {
			Expect(boundAgents(Default, l, ns, name)).To(HaveLen(1), "the Agents bound to ClusterDeployment %s/%s", ns, name)
		}
		Expect(boundAgents(Default, l, nsB, b)[0].Labels).To(HaveKey(infrav1.AgentClaimedByLabel))
	})

	It("refuses team B's BareMetalHost whose metaData Secret is team A's, and quotes nothing of it", func() {
		c := l.Mgmt.Client
		// Team B names its own host now; the host boots the ISO its Metal3Machine carries.
		m3m := &capm3v1beta2.Metal3Machine{ObjectMeta: metav1.ObjectMeta{Namespace: nsB, Name: evilHost}}
		updateObject(c, m3m, func() error {
			m3m.Annotations[metal3HostAnnotation] = nsB + "/" + metaHost.Name
			return nil
		})
		Expect(m3m.Spec.Image.URL).NotTo(BeEmpty(), "the bootstrap provider gave the Metal3Machine its discovery ISO")
		Expect(l.Assisted.Booted(ctx, inventory.Boot{Host: metaHost, ISOURL: m3m.Spec.Image.URL})).To(Succeed())
		agentKey := client.ObjectKey{Namespace: nsB, Name: strings.ToLower(metaHost.SystemUUID)}
		Eventually(func(g Gomega) {
			config := &bootstrapv1.OpenshiftAssistedConfig{}
			g.Expect(c.Get(ctx, client.ObjectKey{Namespace: nsB, Name: evilHost}, config)).To(Succeed())
			registered := meta.FindStatusCondition(config.Status.Conditions, bootstrapv1.AgentRegisteredCondition)
			g.Expect(registered).NotTo(BeNil())
			g.Expect(registered.Status).To(Equal(metav1.ConditionTrue), registered.Message)
			approved := meta.FindStatusCondition(config.Status.Conditions, bootstrapv1.AgentApprovedCondition)
			g.Expect(approved).NotTo(BeNil())
			g.Expect(approved.Reason).To(Equal(bootstrapv1.WaitingForApprovalReason), approved.Message)
			g.Expect(approved.Message).To(ContainSubstring(fmt.Sprintf("the metaData Secret of BareMetalHost %s is in another namespace, which is never read", metaHost.Name)))
		}, timeout, interval).Should(Succeed())
		agent := &aiv1beta1.Agent{}
		Expect(c.Get(ctx, agentKey, agent)).To(Succeed())
		Expect(agent.Spec.Approved).To(BeFalse(), "nothing installs on a host whose metadata cannot be read")
		Expect(agent.Spec.Hostname).NotTo(Equal(privateHostname))
	})

	It("leaves team A's Agents, hosts, Secrets and ClusterDeployment as they were, and quotes none of them to team B", func() {
		c := l.Mgmt.Client
		expectOffered(Default, l, poolAgent, poolLabel)
		for key, rv := range versions {
			s := &corev1.Secret{}
			Expect(c.Get(ctx, key, s)).To(Succeed())
			Expect(s.ResourceVersion).To(Equal(rv), "Secret %s was written", key)
			Expect(s.OwnerReferences).To(BeEmpty(), "Secret %s", key)
		}
		// No Agent of any namespace but A's is bound to A's cluster, none of A's to another.
		all := &aiv1beta1.AgentList{}
		Expect(c.List(ctx, all)).To(Succeed())
		for _, agent := range all.Items {
			if ref := agent.Spec.ClusterDeploymentName; ref != nil {
				Expect(ref.Namespace).To(Equal(agent.Namespace), "Agent %s/%s is bound to ClusterDeployment %s/%s", agent.Namespace, agent.Name, ref.Namespace, ref.Name)
			}
			if agent.Namespace == nsA {
				Expect(agent.Labels).NotTo(HaveKey(infrav1.AgentClaimedByLabel), "Agent %s of team A", agent.Name)
				Expect(agent.Annotations).NotTo(HaveKey(infrav1.ClaimOwnerAnnotation), "Agent %s of team A", agent.Name)
			}
		}
		cd := &hivev1.ClusterDeployment{}
		Expect(c.Get(ctx, client.ObjectKey{Namespace: nsA, Name: a}, cd)).To(Succeed())
		Expect(cd.Labels).NotTo(HaveKey(infrav1.AgentClusterLabel))
		for _, ref := range cd.OwnerReferences {
			Expect(ref.Kind).To(Equal("OpenshiftAssistedControlPlane"), "ClusterDeployment %s/%s is owned by %s %s", nsA, a, ref.Kind, ref.Name)
			Expect(ref.Name).To(Equal(a))
		}
		// Nothing team B reads names an object of A's as its related object, or quotes what
		// identifies A's hosts or what A's Secrets hold.
		events := &eventsv1.EventList{}
		Expect(c.List(ctx, events, client.InNamespace(nsB))).To(Succeed())
		for _, e := range events.Items {
			Expect(e.Regarding.Namespace).NotTo(Equal(nsA), "event %s %s: %s", e.Reason, e.Regarding.Name, e.Note)
			if e.Related != nil {
				Expect(e.Related.Namespace).NotTo(Equal(nsA), "event %s about %s %s: %s", e.Reason, e.Related.Kind, e.Related.Name, e.Note)
			}
		}
		texts := tenantTexts(Default, l, nsB)
		Expect(texts).NotTo(BeEmpty())
		for _, secret := range []string{privateHostname, privateValue, aHost.BootMAC(), aHost.SerialNumber, poolHost.BootMAC(), poolHost.SerialNumber} {
			for _, t := range texts {
				Expect(t).NotTo(ContainSubstring(secret))
			}
		}
	})

	It("leaves nothing behind when both teams delete everything", func() {
		c := l.Mgmt.Client
		for _, name := range []string{evilCD, evilCA, evilRelease} {
			Expect(c.Delete(ctx, &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: nsB, Name: name}})).To(Succeed())
		}
		// Team B's own bootstrap data, which nothing owns.
		Expect(c.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: nsB, Name: evilAgent + "-bootstrap"}})).To(Succeed())
		Expect(c.Delete(ctx, &aiv1beta1.InfraEnv{ObjectMeta: metav1.ObjectMeta{Namespace: nsA, Name: poolInfraEnv}})).To(Succeed())
		deleteClusterAndExpectNothingLeft(l, nsA, a)
		deleteClusterAndExpectNothingLeft(l, nsB, b)
		Eventually(func(g Gomega) {
			sets := &hivev1.ClusterImageSetList{}
			g.Expect(c.List(ctx, sets)).To(Succeed())
			for _, s := range sets.Items {
				g.Expect(s.Labels[controlplanev1.ImageSetNamespaceLabel]).NotTo(BeElementOf(nsA, nsB), "ClusterImageSet %s left", s.Name)
			}
		}, timeout, interval).Should(Succeed())
	})
})

// metal3HostAnnotation is the annotation by which CAPM3 records a Metal3Machine's BareMetalHost
// (<namespace>/<name>), which whoever edits the Metal3Machine can write.
const metal3HostAnnotation = "metal3.io/BareMetalHost"

// poolInfraEnv is the InfraEnv of the Agents a host owner offers in its namespace (offerAgent).
const poolInfraEnv = "pool"

// offerAgent plays the host owner of ns who offers a host to any of the namespace's Machines: a
// host booted from the discovery ISO of an InfraEnv bound to no cluster, its Agent approved and
// labelled label=shared. It returns the host and its Agent once the Agent is free (as the
// infrastructure provider judges: approved, connected, validated, unclaimed).
func offerAgent(l *lab.Lab, ns, pullSecret, label string) (*inventory.Host, client.ObjectKey) {
	GinkgoHelper()
	c := l.Mgmt.Client
	ie := &aiv1beta1.InfraEnv{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: poolInfraEnv},
		Spec: aiv1beta1.InfraEnvSpec{PullSecretRef: &corev1.LocalObjectReference{Name: pullSecret}}}
	Expect(c.Create(ctx, ie)).To(Succeed())
	Eventually(func(g Gomega) {
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(ie), ie)).To(Succeed())
		g.Expect(ie.Status.ISODownloadURL).NotTo(BeEmpty())
	}, timeout, interval).Should(Succeed())
	host := inventory.Generate(ns+"-pool", 1, inventory.GenerateOptions{FirstIP: 20 + len(l.Inventory.Hosts())})[0]
	l.Inventory.Add(host)
	Expect(l.Assisted.Booted(ctx, inventory.Boot{Host: host, ISOURL: ie.Status.ISODownloadURL})).To(Succeed())
	agent := &aiv1beta1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: strings.ToLower(host.SystemUUID)}}
	Eventually(func() error { return c.Get(ctx, client.ObjectKeyFromObject(agent), agent) }, timeout, interval).Should(Succeed())
	updateObject(c, agent, func() error {
		agent.Spec.Approved = true
		metav1.SetMetaDataLabel(&agent.ObjectMeta, label, "shared")
		return nil
	})
	Eventually(func(g Gomega) {
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(agent), agent)).To(Succeed())
		g.Expect(conditionsv1.IsStatusConditionTrue(agent.Status.Conditions, aiv1beta1.ConnectedCondition)).To(BeTrue(), "Agent connected")
		g.Expect(conditionsv1.IsStatusConditionTrue(agent.Status.Conditions, aiv1beta1.ValidatedCondition)).To(BeTrue(), "Agent validated")
	}, timeout, interval).Should(Succeed())
	return host, client.ObjectKeyFromObject(agent)
}

// expectOffered checks that the Agent offerAgent made is as its host owner left it: approved,
// labelled, bound to no cluster, claimed by nothing, owned by nothing.
func expectOffered(g Gomega, l *lab.Lab, key client.ObjectKey, label string) {
	agent := &aiv1beta1.Agent{}
	g.Expect(l.Mgmt.Client.Get(ctx, key, agent)).To(Succeed())
	g.Expect(agent.Spec.Approved).To(BeTrue())
	g.Expect(agent.Labels).To(HaveKeyWithValue(label, "shared"))
	for _, k := range []string{infrav1.AgentClaimedByLabel, infrav1.UpstreamAgentClaimLabel, bootstrapv1.AgentConfigLabel} {
		g.Expect(agent.Labels).NotTo(HaveKey(k), "Agent %s", key)
	}
	for _, k := range []string{infrav1.ClaimOwnerAnnotation, infrav1.PreviousSpecAnnotation, infrav1.UpstreamAgentClaimNamespaceAnnotation} {
		g.Expect(agent.Annotations).NotTo(HaveKey(k), "Agent %s", key)
	}
	g.Expect(agent.Spec.ClusterDeploymentName).To(BeNil(), "Agent %s is bound", key)
	g.Expect(agent.Spec.IgnitionEndpointTokenReference).To(BeNil(), "Agent %s", key)
	g.Expect(agent.OwnerReferences).To(BeEmpty(), "Agent %s", key)
}

// createHostileObjects creates, in nsB, team B's objects aimed at team A's (in nsA), beside
// team B's cluster cluster:
//   - evil-host: a Machine of cluster whose OpenshiftAssistedConfig would prepare the
//     BareMetalHost that its Metal3Machine's metal3.io/BareMetalHost annotation names, team A's
//     (paused for CAPM3, which would otherwise associate one of B's own and rewrite it);
//   - evil-agent: a Machine of cluster, with bootstrap data of its own, whose AgentMachine chose
//     team A's Agent agent and selects Agents labelled label=shared, as only that one is;
//   - evil-cd and evil-ca: Clusters whose AgentClusters name A's ClusterDeployment, and A's pull
//     secret as the CA of their ignition endpoint;
//   - evil-release: a single-node cluster whose release is on registry, which the hub may not
//     contact.
func createHostileObjects(l *lab.Lab, nsA, nsB, cluster string, agent client.ObjectKey, label, registry string) {
	GinkgoHelper()
	c := l.Mgmt.Client
	bootstrapRef := func(name string) clusterv1.ContractVersionedObjectReference {
		return clusterv1.ContractVersionedObjectReference{APIGroup: bootstrapv1.GroupVersion.Group, Kind: bootstrapv1.ConfigKind, Name: name}
	}
	infraRef := func(group, kind, name string) clusterv1.ContractVersionedObjectReference {
		return clusterv1.ContractVersionedObjectReference{APIGroup: group, Kind: kind, Name: name}
	}
	machine := func(name string, bootstrap clusterv1.Bootstrap, infra clusterv1.ContractVersionedObjectReference) *clusterv1.Machine {
		return &clusterv1.Machine{
			ObjectMeta: metav1.ObjectMeta{Namespace: nsB, Name: name, Labels: map[string]string{clusterv1.ClusterNameLabel: cluster}},
			Spec:       clusterv1.MachineSpec{ClusterName: cluster, Bootstrap: bootstrap, InfrastructureRef: infra},
		}
	}
	objs := []client.Object{
		&bootstrapv1.OpenshiftAssistedConfig{
			ObjectMeta: metav1.ObjectMeta{Namespace: nsB, Name: "evil-host", Labels: map[string]string{clusterv1.ClusterNameLabel: cluster}},
			Spec: bootstrapv1.OpenshiftAssistedConfigSpec{
				PullSecretRef: &corev1.LocalObjectReference{Name: cluster + "-pull-secret"},
				// Named from the host's metadata: what the metaData Secret holds would be read.
				NodeRegistration: bootstrapv1.NodeRegistrationOptions{Name: "$METADATA_LOCAL_HOSTNAME"},
			},
		},
		&capm3v1beta2.Metal3Machine{ObjectMeta: metav1.ObjectMeta{Namespace: nsB, Name: "evil-host",
			Annotations: map[string]string{metal3HostAnnotation: nsA + "/a-host-0", clusterv1.PausedAnnotation: ""}}},
		machine("evil-host", clusterv1.Bootstrap{ConfigRef: bootstrapRef("evil-host")},
			infraRef(capm3v1beta2.GroupVersion.Group, "Metal3Machine", "evil-host")),

		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: nsB, Name: "evil-agent-bootstrap", Labels: map[string]string{clusterv1.ClusterNameLabel: cluster}},
			Type: clusterv1.ClusterSecretType,
			StringData: map[string]string{"format": bootstrapv1.BootstrapDataFormatIgnition,
				"value": `{"ignition":{"version":"3.2.0","config":{"merge":[{"source":"https://ignition.evil.example/ignition","httpHeaders":[{"name":"Authorization","value":"Bearer evil"}]}]}}}`}},
		&infrav1.AgentMachine{ObjectMeta: metav1.ObjectMeta{Namespace: nsB, Name: "evil-agent",
			Annotations: map[string]string{infrav1.ChosenAgentAnnotation: agent.String()}},
			Spec: infrav1.AgentMachineSpec{AgentLabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{label: "shared"}}}},
		machine("evil-agent", clusterv1.Bootstrap{DataSecretName: ptr.To("evil-agent-bootstrap")},
			infraRef(infrav1.GroupVersion.Group, "AgentMachine", "evil-agent")),

		&infrav1.AgentCluster{ObjectMeta: metav1.ObjectMeta{Namespace: nsB, Name: "evil-cd"},
			Spec: infrav1.AgentClusterSpec{ClusterDeploymentRef: &infrav1.ClusterDeploymentReference{Namespace: nsA, Name: "a"}}},
		&infrav1.AgentCluster{ObjectMeta: metav1.ObjectMeta{Namespace: nsB, Name: "evil-ca"},
			Spec: infrav1.AgentClusterSpec{
				ClusterDeploymentRef: &infrav1.ClusterDeploymentReference{Name: "evil-ca"},
				IgnitionEndpoint: &infrav1.IgnitionEndpoint{Url: "https://ignition.evil.example/ignition",
					CaCertificateReference: &infrav1.CaCertificateReference{Namespace: nsA, Name: "a-pull-secret"}},
			}},
	}
	for _, name := range []string{"evil-cd", "evil-ca"} {
		objs = append(objs, &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: nsB, Name: name},
			Spec: clusterv1.ClusterSpec{InfrastructureRef: infraRef(infrav1.GroupVersion.Group, "AgentCluster", name)}})
	}
	release, err := l.ClusterObjects(lab.ClusterOptions{Namespace: nsB, Name: "evil-release", ControlPlanes: 1, Version: "4.17.3", Infrastructure: lab.Agent})
	Expect(err).NotTo(HaveOccurred())
	for _, o := range release {
		if cp, ok := o.(*controlplanev1.OpenshiftAssistedControlPlane); ok {
			cp.Annotations[controlplanev1.ReleaseImageRepositoryAnnotation] = registry + "/ocp-release"
		}
	}
	for _, o := range append(objs, release...) {
		Expect(c.Create(ctx, o)).To(Succeed(), "creating %T %s", o, o.GetName())
	}
}

// tenantTexts is what the tenant of ns reads of the providers: the messages of its objects'
// conditions and the notes of the events in ns.
func tenantTexts(g Gomega, l *lab.Lab, ns string) []string {
	c := l.Mgmt.Client
	var texts []string
	add := func(conds []metav1.Condition) {
		for _, cond := range conds {
			texts = append(texts, cond.Message)
		}
	}
	configs := &bootstrapv1.OpenshiftAssistedConfigList{}
	g.Expect(c.List(ctx, configs, client.InNamespace(ns))).To(Succeed())
	for _, o := range configs.Items {
		add(o.Status.Conditions)
	}
	ams := &infrav1.AgentMachineList{}
	g.Expect(c.List(ctx, ams, client.InNamespace(ns))).To(Succeed())
	for _, o := range ams.Items {
		add(o.Status.Conditions)
	}
	acs := &infrav1.AgentClusterList{}
	g.Expect(c.List(ctx, acs, client.InNamespace(ns))).To(Succeed())
	for _, o := range acs.Items {
		add(o.Status.Conditions)
	}
	cps := &controlplanev1.OpenshiftAssistedControlPlaneList{}
	g.Expect(c.List(ctx, cps, client.InNamespace(ns))).To(Succeed())
	for _, o := range cps.Items {
		add(o.Status.Conditions)
	}
	events := &eventsv1.EventList{}
	g.Expect(c.List(ctx, events, client.InNamespace(ns))).To(Succeed())
	for _, e := range events.Items {
		texts = append(texts, e.Note)
	}
	return texts
}

// expectNoImageSetFrom checks that no ClusterImageSet of the hub names a release on registry.
func expectNoImageSetFrom(g Gomega, l *lab.Lab, registry string) {
	sets := &hivev1.ClusterImageSetList{}
	g.Expect(l.Mgmt.Client.List(ctx, sets)).To(Succeed())
	for _, s := range sets.Items {
		g.Expect(s.Spec.ReleaseImage).NotTo(ContainSubstring(registry), "ClusterImageSet %s", s.Name)
	}
}

// boundAgents returns the Agents bound to ClusterDeployment ns/name, of any namespace.
func boundAgents(g Gomega, l *lab.Lab, ns, name string) []aiv1beta1.Agent {
	all := &aiv1beta1.AgentList{}
	g.Expect(l.Mgmt.Client.List(ctx, all)).To(Succeed())
	var out []aiv1beta1.Agent
	for _, agent := range all.Items {
		if ref := agent.Spec.ClusterDeploymentName; ref != nil && ref.Namespace == ns && ref.Name == name {
			out = append(out, agent)
		}
	}
	return out
}

// expectTenantAvailable waits until the single-node cluster name of ns is Available, its Cluster
// initialized and its control-plane Machine a Node of the workload API server (which the lab's
// clusters share), whatever other Machines the namespace holds.
func expectTenantAvailable(l *lab.Lab, ns, name string) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		cp := controlPlane(l, ns, name)(g)
		g.Expect(conditionTrue(cp.Status.Conditions, controlplanev1.AvailableCondition)).To(BeTrue(), "control plane %s/%s not Available", ns, name)
		g.Expect(cp.Status.ReadyReplicas).To(HaveValue(BeEquivalentTo(1)))
		cluster := &clusterv1.Cluster{}
		g.Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cluster)).To(Succeed())
		g.Expect(cluster.Status.Initialization.ControlPlaneInitialized).To(Equal(ptr.To(true)))
		ms := machines(g, l, ns, client.MatchingLabels{clusterv1.ClusterNameLabel: name, clusterv1.MachineControlPlaneLabel: ""})
		g.Expect(ms).To(HaveLen(1))
		g.Expect(ms[0].Status.NodeRef.IsDefined()).To(BeTrue(), "Machine %s is no Node yet", ms[0].Name)
		g.Expect(workloadNodes(g, l, ns, name)).To(ContainElement(ms[0].Status.NodeRef.Name))
	}, timeout, interval).Should(Succeed())
}

// reportClaimsOnFailure adds, when a spec fails, what tells who claimed which Agent: the
// AgentMachines and Agents of the namespaces, and their events.
func reportClaimsOnFailure(l *lab.Lab, namespaces ...string) {
	DeferCleanup(func() {
		if !CurrentSpecReport().Failed() {
			return
		}
		c := l.Mgmt.Client
		var out []string
		for _, ns := range namespaces {
			ams := &infrav1.AgentMachineList{}
			_ = c.List(ctx, ams, client.InNamespace(ns))
			for _, am := range ams.Items {
				out = append(out, fmt.Sprintf("AgentMachine %s/%s uid=%s annotations=%v providerID=%q agentRef=%+v conditions=%+v",
					ns, am.Name, am.UID, am.Annotations, am.Spec.ProviderID, am.Status.AgentRef, am.Status.Conditions))
			}
			agents := &aiv1beta1.AgentList{}
			_ = c.List(ctx, agents, client.InNamespace(ns))
			for _, a := range agents.Items {
				out = append(out, fmt.Sprintf("Agent %s/%s labels=%v annotations=%v approved=%v cd=%+v state=%s",
					ns, a.Name, a.Labels, a.Annotations, a.Spec.Approved, a.Spec.ClusterDeploymentName, a.Status.DebugInfo.State))
			}
			events := &eventsv1.EventList{}
			_ = c.List(ctx, events, client.InNamespace(ns))
			for _, e := range events.Items {
				related := ""
				if e.Related != nil {
					related = e.Related.Kind + " " + e.Related.Namespace + "/" + e.Related.Name
				}
				out = append(out, fmt.Sprintf("Event %s %s %s %s/%s related=%s by=%s: %s", e.EventTime.Format("15:04:05.000"), e.Type, e.Reason,
					e.Regarding.Kind, e.Regarding.Name, related, e.ReportingController, e.Note))
			}
		}
		AddReportEntry("claims", strings.Join(out, "\n"))
	})
}
