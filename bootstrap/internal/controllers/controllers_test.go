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
	"maps"
	"os"
	"testing"
	"time"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	capm3v1beta2 "github.com/metal3-io/cluster-api-provider-metal3/api/v1beta2"
	. "github.com/onsi/gomega"
	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	"github.com/openshift/assisted-service/models"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	setup "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/bootstrap/setup"
	capoascheme "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/scheme"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/pause"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/testenv"
)

const timeout = 60 * time.Second

var (
	env       *testenv.Environment
	simulator *sim
)

// TestMain starts the API server, a manager running the provider through setup.Setup
// (as main.go does) and the simulator.
func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if os.Getenv("TEST_LOG") != "" {
		ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.UseDevMode(true)))
	}
	if testenv.Fuzzing() {
		// Fuzz targets use fake clients: no API server for each fuzz worker to start.
		return m.Run()
	}
	s, err := capoascheme.New(bootstrapv1.AddToScheme)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if env, err = testenv.Start(s); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping envtest:", err)
		}
	}()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opts := setup.NewManagerOptions() // as in production: bootstrap data Secrets cached
	opts.LeaderElectionID = "test"
	opts.Concurrency = 2
	mgr, err := env.NewManager(opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := setup.Setup(ctx, mgr, opts, setup.Options{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	simulator = newSim(env.Client)
	defer simulator.service.Close()
	// Where the provider looks for the CA of assisted-service's certificate by default.
	if err := trustService(ctx, simulator.service); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	go simulator.run(ctx)
	return testenv.RunWithManager(ctx, m, mgr, nil)
}

// lab is one cluster's objects in its own namespace.
type lab struct {
	ns      string
	cluster *clusterv1.Cluster
	cd      *hivev1.ClusterDeployment
	aci     *hiveextv1beta1.AgentClusterInstall
}

// newLab creates a Cluster whose infrastructure is provisioned, the ClusterDeployment and
// AgentClusterInstall the control-plane provider would create, with the installation in aciState.
func newLab(t *testing.T, aciState string) *lab {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	ns, err := env.CreateNamespace(ctx, "oac")
	g.Expect(err).NotTo(HaveOccurred())
	l := &lab{ns: ns}
	l.cluster = &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c1"},
		Spec: clusterv1.ClusterSpec{ControlPlaneRef: clusterv1.ContractVersionedObjectReference{
			APIGroup: "controlplane.cluster.x-k8s.io", Kind: "OpenshiftAssistedControlPlane", Name: "c1"}},
	}
	g.Expect(env.Client.Create(ctx, l.cluster)).To(Succeed())
	l.cluster.Status.Initialization.InfrastructureProvisioned = ptr.To(true)
	g.Expect(env.Client.Status().Update(ctx, l.cluster)).To(Succeed())

	l.cd = &hivev1.ClusterDeployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c1"},
		Spec: hivev1.ClusterDeploymentSpec{
			ClusterName: "c1", BaseDomain: "example.com",
			PullSecretRef:     &corev1.LocalObjectReference{Name: "pull-secret"},
			ClusterInstallRef: &hivev1.ClusterInstallLocalReference{Group: hiveextv1beta1.Group, Version: "v1beta1", Kind: "AgentClusterInstall", Name: "c1"},
		},
	}
	g.Expect(env.Client.Create(ctx, l.cd)).To(Succeed())
	l.aci = &hiveextv1beta1.AgentClusterInstall{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c1"},
		Spec: hiveextv1beta1.AgentClusterInstallSpec{
			ClusterDeploymentRef:  corev1.LocalObjectReference{Name: "c1"},
			ProvisionRequirements: hiveextv1beta1.ProvisionRequirements{ControlPlaneAgents: 1},
		},
	}
	g.Expect(env.Client.Create(ctx, l.aci)).To(Succeed())
	l.setInstallState(t, aciState)
	return l
}

func (l *lab) setInstallState(t *testing.T, state string) {
	t.Helper()
	g := NewWithT(t)
	l.aci.Status.DebugInfo.State = state
	g.Expect(env.Client.Status().Update(context.Background(), l.aci)).To(Succeed())
}

// host is a Machine of the lab with its config and, for Metal3 hosts, its Metal3Machine and
// BareMetalHost.
type host struct {
	machine *clusterv1.Machine
	config  *bootstrapv1.OpenshiftAssistedConfig
	m3m     *capm3v1beta2.Metal3Machine
	bmh     *bmov1alpha1.BareMetalHost
}

type hostOptions struct {
	controlPlane bool
	// mac is the boot MAC of the Metal3 host; empty for an AgentMachine host (booted by the user).
	mac   string
	hints *bmov1alpha1.RootDeviceHints
	spec  bootstrapv1.OpenshiftAssistedConfigSpec
	// image is the Metal3Machine's image: by default a live-iso placeholder, which the provider
	// replaces with the discovery ISO; a disk image is booted with the discovery ignition.
	image *capm3v1beta2.Image
	// bmc is the BareMetalHost's BMC address (default: redfish virtual media).
	bmc      string
	bootMode bmov1alpha1.BootMode
	// bmcCredentials names the BareMetalHost's BMC credentials Secret.
	bmcCredentials string
	// labels are further labels of the Machine (the control plane's, such as its fencing label).
	labels map[string]string
}

// newHost creates a Machine named name owning its config, as Cluster API would (owner
// reference, cluster-name label), with a Metal3Machine and a BareMetalHost when o.mac is set.
func (l *lab) newHost(t *testing.T, name string, o hostOptions) *host {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	h := &host{}
	infraRef := clusterv1.ContractVersionedObjectReference{APIGroup: "capi-provider.agent-install.openshift.io", Kind: "AgentMachine", Name: name}
	if o.mac != "" {
		infraRef = clusterv1.ContractVersionedObjectReference{APIGroup: capm3v1beta2.GroupVersion.Group, Kind: "Metal3Machine", Name: name}
		h.bmh = &bmov1alpha1.BareMetalHost{
			ObjectMeta: metav1.ObjectMeta{Namespace: l.ns, Name: "bmh-" + name, Labels: map[string]string{"host": name}},
			Spec: bmov1alpha1.BareMetalHostSpec{BootMACAddress: o.mac, RootDeviceHints: o.hints, BootMode: o.bootMode,
				BMC: bmov1alpha1.BMCDetails{Address: "redfish-virtualmedia+https://bmc.lab.sim/redfish/v1/Systems/" + name}},
		}
		if o.bmc != "" {
			h.bmh.Spec.BMC.Address = o.bmc
		}
		h.bmh.Spec.BMC.CredentialsName = o.bmcCredentials
		g.Expect(env.Client.Create(ctx, h.bmh)).To(Succeed())
	}
	labels := map[string]string{clusterv1.ClusterNameLabel: l.cluster.Name}
	if o.controlPlane {
		labels[clusterv1.MachineControlPlaneLabel] = ""
	}
	maps.Copy(labels, o.labels)
	h.machine = &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: l.ns, Name: name, Labels: labels},
		Spec: clusterv1.MachineSpec{
			ClusterName: l.cluster.Name,
			Bootstrap: clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: bootstrapv1.GroupVersion.Group, Kind: "OpenshiftAssistedConfig", Name: name}},
			InfrastructureRef: infraRef,
		},
	}
	g.Expect(env.Client.Create(ctx, h.machine)).To(Succeed())
	owner := metav1.OwnerReference{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: name, UID: h.machine.UID}
	if o.mac != "" {
		h.m3m = &capm3v1beta2.Metal3Machine{
			ObjectMeta: metav1.ObjectMeta{Namespace: l.ns, Name: name, OwnerReferences: []metav1.OwnerReference{owner}},
			Spec: capm3v1beta2.Metal3MachineSpec{
				HostSelector: &capm3v1beta2.HostSelector{MatchLabels: map[string]string{"host": name}},
				// CAPM3 requires an image or a custom deploy; the bootstrap provider replaces it.
				Image: capm3v1beta2.Image{URL: "https://discovery-iso.invalid/placeholder.iso", DiskFormat: capm3v1beta2.LiveIsoDiskFormat, Checksum: ptr.To("")},
			},
		}
		if o.image != nil {
			h.m3m.Spec.Image = *o.image
		}
		g.Expect(env.Client.Create(ctx, h.m3m)).To(Succeed())
	}
	h.config = &bootstrapv1.OpenshiftAssistedConfig{
		ObjectMeta: metav1.ObjectMeta{Namespace: l.ns, Name: name, Labels: map[string]string{clusterv1.ClusterNameLabel: l.cluster.Name},
			OwnerReferences: []metav1.OwnerReference{owner}},
		Spec: o.spec,
	}
	g.Expect(env.Client.Create(ctx, h.config)).To(Succeed())
	return h
}

func get[T client.Object](g Gomega, obj T) T {
	g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)).To(Succeed())
	return obj
}

func condition(g Gomega, config *bootstrapv1.OpenshiftAssistedConfig, t string) metav1.Condition {
	c := conditions.Get(get(g, config), t)
	g.Expect(c).NotTo(BeNil(), "condition %s", t)
	return *c
}

// agentOf waits until the config reports its Agent and returns it.
func agentOf(t *testing.T, h *host) *aiv1beta1.Agent {
	t.Helper()
	g := NewWithT(t)
	agent := &aiv1beta1.Agent{}
	g.Eventually(func(g Gomega) {
		cfg := get(g, h.config)
		g.Expect(cfg.Status.AgentRef).NotTo(BeNil())
		g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: cfg.Namespace, Name: cfg.Status.AgentRef.Name}, agent)).To(Succeed())
	}, timeout).Should(Succeed())
	return agent
}

// TestMachineToInstallingAgent follows a control-plane and a worker Machine on Metal3 from
// creation to an approved Agent that installs: the InfraEnv, the ISO on the Metal3Machine, the
// bootstrap data Secret, the Agent's role, hostname, disk and providerID label, the
// conditions and the events.
func TestMachineToInstallingAgent(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	l := newLab(t, models.ClusterStatusInsufficient)
	cp := l.newHost(t, "cp-0", hostOptions{controlPlane: true, mac: "52:54:00:00:00:01",
		hints: &bmov1alpha1.RootDeviceHints{DeviceName: "/dev/sdb"},
		spec:  bootstrapv1.OpenshiftAssistedConfigSpec{SSHAuthorizedKey: "ssh-ed25519 AAAA", AdditionalNTPSources: []string{"ntp.example.com"}}})
	worker := l.newHost(t, "worker-0", hostOptions{mac: "52:54:00:00:00:02",
		spec: bootstrapv1.OpenshiftAssistedConfigSpec{NodeRegistration: bootstrapv1.NodeRegistrationOptions{Name: "worker-0.example.com"}}})

	for _, tc := range []struct {
		h           *host
		role        models.HostRole
		hostname    string
		installDisk string
		sshKey      string
	}{
		{cp, models.HostRoleMaster, "cp-0", "/dev/disk/by-id/sdb", "ssh-ed25519 AAAA"},
		{worker, models.HostRoleWorker, "worker-0.example.com", "", ""},
	} {
		t.Run(tc.h.machine.Name, func(t *testing.T) {
			g := NewWithT(t)
			// The Agent installs, and the config says so with the assisted-service state.
			g.Eventually(func(g Gomega) {
				c := condition(g, tc.h.config, bootstrapv1.InstallingCondition)
				g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
				g.Expect(c.Message).To(ContainSubstring(`"installing-in-progress"`))
			}, timeout).Should(Succeed())
			for _, ct := range []string{bootstrapv1.ReadyCondition, bootstrapv1.InfraEnvReadyCondition, bootstrapv1.DataSecretAvailableCondition,
				bootstrapv1.AgentRegisteredCondition, bootstrapv1.AgentApprovedCondition} {
				g.Expect(condition(g, tc.h.config, ct).Status).To(Equal(metav1.ConditionTrue), ct)
			}
			g.Expect(condition(g, tc.h.config, bootstrapv1.InstalledCondition).Status).To(Equal(metav1.ConditionFalse))
			// Healthy: Ready in a word, nothing that would flow into the Machine's conditions.
			ready := condition(g, tc.h.config, bootstrapv1.ReadyCondition)
			g.Expect(ready.Reason).To(Equal(bootstrapv1.ReadyReason))
			g.Expect(ready.Message).To(BeEmpty())

			// One InfraEnv, owned by the config, bound to the ClusterDeployment.
			cfg := get(g, tc.h.config)
			ie := get(g, &aiv1beta1.InfraEnv{ObjectMeta: metav1.ObjectMeta{Namespace: l.ns, Name: cfg.Name}})
			g.Expect(metav1.IsControlledBy(ie, cfg)).To(BeTrue())
			g.Expect(ie.Spec.ClusterRef).To(Equal(&aiv1beta1.ClusterReference{Namespace: l.ns, Name: "c1"}))
			g.Expect(ie.Spec.PullSecretRef).To(Equal(&corev1.LocalObjectReference{Name: "pull-secret"}))
			g.Expect(ie.Spec.SSHAuthorizedKey).To(Equal(tc.sshKey))
			// The URL, which carries a download token, is on the Metal3Machine (CAPM3 boots it),
			// not in the config's status, which only a person booting a host by hand needs.
			g.Expect(ie.Status.ISODownloadURL).NotTo(BeEmpty())
			g.Expect(cfg.Status.ISODownloadURL).To(BeEmpty())

			// The Metal3Machine boots that ISO as a live ISO.
			m3m := get(g, tc.h.m3m)
			g.Expect(m3m.Spec.Image.URL).To(Equal(ie.Status.ISODownloadURL))
			g.Expect(m3m.Spec.Image.DiskFormat).To(Equal("live-iso"))

			// The bootstrap data Secret.
			g.Expect(cfg.Status.DataSecretName).To(Equal(cfg.Name))
			g.Expect(cfg.Status.Initialization.DataSecretCreated).To(Equal(ptr.To(true)))
			secret := get(g, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: l.ns, Name: cfg.Status.DataSecretName}})
			g.Expect(secret.Type).To(Equal(clusterv1.ClusterSecretType))
			g.Expect(secret.Labels).To(HaveKeyWithValue(clusterv1.ClusterNameLabel, "c1"))
			g.Expect(metav1.IsControlledBy(secret, cfg)).To(BeTrue())
			g.Expect(string(secret.Data["format"])).To(Equal("ignition"))
			g.Expect(string(secret.Data["value"])).To(ContainSubstring(`"path":"/etc/hostname"`))

			// The Agent: the one that booted from this Machine's BareMetalHost.
			agent := agentOf(t, tc.h)
			bmh := get(g, tc.h.bmh)
			g.Expect(agent.Name).To(Equal("agent-" + bmh.Name))
			g.Expect(agent.Spec.Approved).To(BeTrue())
			g.Expect(agent.Spec.Role).To(Equal(tc.role))
			g.Expect(agent.Spec.Hostname).To(Equal(tc.hostname))
			g.Expect(agent.Spec.InstallationDiskID).To(Equal(tc.installDisk))
			g.Expect(agent.Spec.NodeLabels).To(HaveKeyWithValue("metal3.io/uuid", string(bmh.UID)))
			g.Expect(agent.Labels).To(HaveKeyWithValue(bootstrapv1.AgentConfigLabel, cfg.Name))

			// Events for the notable transitions.
			g.Eventually(func(g Gomega) {
				events := &corev1.EventList{}
				g.Expect(env.Client.List(ctx, events, client.InNamespace(l.ns))).To(Succeed())
				reasons := map[string]bool{}
				for _, e := range events.Items {
					if e.InvolvedObject.Name == cfg.Name {
						reasons[e.Reason] = true
					}
				}
				g.Expect(reasons).To(HaveKey("InfraEnvCreated"))
				g.Expect(reasons).To(HaveKey("DiscoveryISOSet"))
				g.Expect(reasons).To(HaveKey("DataSecretCreated"))
				g.Expect(reasons).To(HaveKey("AgentApproved"))
			}, timeout).Should(Succeed())
		})
	}
	g.Expect(t.Failed()).To(BeFalse())
}

// TestISOReachesMetal3MachineBeforeProvisioning checks that when CAPM3 (simulated: it waits for
// the Machine's bootstrap data, as CAPM3 does) associated the BareMetalHost, the Metal3Machine
// already had the InfraEnv's ISO as a live ISO: the host never booted the placeholder image.
func TestISOReachesMetal3MachineBeforeProvisioning(t *testing.T) {
	g := NewWithT(t)
	l := newLab(t, models.ClusterStatusInsufficient)
	h := l.newHost(t, "worker-iso", hostOptions{mac: "52:54:00:00:01:01"})
	var img capm3v1beta2.Image
	g.Eventually(func() bool {
		var ok bool
		img, ok = simulator.imageAtProvisioning(client.ObjectKeyFromObject(h.bmh))
		return ok
	}, timeout).Should(BeTrue())
	ie := get(g, &aiv1beta1.InfraEnv{ObjectMeta: metav1.ObjectMeta{Namespace: l.ns, Name: h.config.Name}})
	g.Expect(img.URL).To(Equal(ie.Status.ISODownloadURL))
	g.Expect(img.DiskFormat).To(Equal("live-iso"))
	g.Expect(get(g, h.bmh).Spec.Image.URL).To(Equal(ie.Status.ISODownloadURL))
}

// TestUnknownAgentLeftUnapproved checks that Agents that match no Machine are never approved:
// with Metal3, a host that booted the config's ISO but is not the Machine's BareMetalHost (other
// boot MAC); without Metal3, hosts that booted the config's ISO until a person approves the one
// they booted (which one is the Machine's cannot be told otherwise), with a condition saying so.
func TestUnknownAgentLeftUnapproved(t *testing.T) {
	ctx := context.Background()
	l := newLab(t, models.ClusterStatusInsufficient)

	t.Run("metal3 host with another MAC", func(t *testing.T) {
		g := NewWithT(t)
		h := l.newHost(t, "worker-m", hostOptions{mac: "52:54:00:00:02:01"})
		var ie *aiv1beta1.InfraEnv
		g.Eventually(func(g Gomega) {
			ie = get(g, &aiv1beta1.InfraEnv{ObjectMeta: metav1.ObjectMeta{Namespace: l.ns, Name: h.config.Name}})
			g.Expect(ie.Status.ISODownloadURL).NotTo(BeEmpty())
		}, timeout).Should(Succeed())
		// A stranger boots the same ISO before the Machine's host does.
		g.Expect(simulator.register(ctx, ie, "stranger", "52:54:00:00:02:99")).To(Succeed())

		agent := agentOf(t, h)
		g.Expect(agent.Name).To(Equal("agent-" + h.bmh.Name))
		g.Eventually(func(g Gomega) { g.Expect(get(g, agent).Spec.Approved).To(BeTrue()) }, timeout).Should(Succeed())
		stranger := get(g, &aiv1beta1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: l.ns, Name: "stranger"}})
		g.Expect(stranger.Spec.Approved).To(BeFalse())
		g.Expect(stranger.Labels).NotTo(HaveKey(bootstrapv1.AgentConfigLabel))
		g.Expect(stranger.Spec.Role).To(Equal(models.HostRoleAutoAssign))
	})

	t.Run("two hosts booted a user-booted config's ISO", func(t *testing.T) {
		g := NewWithT(t)
		// Both hosts register through the config's InfraEnv (named after the config) before the
		// controller looks for the Machine's Agent.
		ie := &aiv1beta1.InfraEnv{ObjectMeta: metav1.ObjectMeta{Namespace: l.ns, Name: "worker-a"}}
		g.Expect(simulator.register(ctx, ie, "booted-1", "52:54:00:00:03:01")).To(Succeed())
		g.Expect(simulator.register(ctx, ie, "booted-2", "52:54:00:00:03:02")).To(Succeed())
		h := l.newHost(t, "worker-a", hostOptions{})
		// Without a BareMetalHost nothing tells the Machine's host: the person who booted it
		// approves its Agent.
		g.Eventually(func(g Gomega) {
			c := condition(g, h.config, bootstrapv1.AgentRegisteredCondition)
			g.Expect(c.Reason).To(Equal(bootstrapv1.WaitingForApprovalReason))
			g.Expect(c.Message).To(ContainSubstring("Agent booted-1 (host 525400000301, MAC 52:54:00:00:03:01"))
			g.Expect(c.Message).To(ContainSubstring("Agent booted-2 (host 525400000302, MAC 52:54:00:00:03:02"))
			g.Expect(c.Message).To(ContainSubstring("approve its Agent"))
			// The person boots the host from the URL in the config's status.
			g.Expect(get(g, h.config).Status.ISODownloadURL).To(Equal(get(g, ie).Status.ISODownloadURL))
			g.Expect(get(g, h.config).Status.ISODownloadURL).NotTo(BeEmpty())
		}, timeout).Should(Succeed())
		for _, name := range []string{"booted-1", "booted-2"} {
			a := get(g, &aiv1beta1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: l.ns, Name: name}})
			g.Expect(a.Spec.Approved).To(BeFalse())
			g.Expect(a.Labels).NotTo(HaveKey(bootstrapv1.AgentConfigLabel))
		}
		// The person approves the host they booted: the config takes it and configures it.
		a := get(g, &aiv1beta1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: l.ns, Name: "booted-1"}})
		before := a.DeepCopy()
		a.Spec.Approved = true
		g.Expect(env.Client.Patch(ctx, a, client.MergeFrom(before))).To(Succeed())
		g.Eventually(func(g Gomega) {
			a := get(g, &aiv1beta1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: l.ns, Name: "booted-1"}})
			g.Expect(a.Spec.Role).To(Equal(models.HostRoleWorker))
			g.Expect(a.Labels).To(HaveKeyWithValue(bootstrapv1.AgentConfigLabel, h.config.Name))
		}, timeout).Should(Succeed())
		other := get(g, &aiv1beta1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: l.ns, Name: "booted-2"}})
		g.Expect(other.Spec.Approved).To(BeFalse())
		g.Expect(other.Labels).NotTo(HaveKey(bootstrapv1.AgentConfigLabel))
	})
}

// TestDay2WorkerWaitsForInstallation checks that a Machine created while the cluster's
// installation runs waits, with a condition saying so and without an InfraEnv, and joins as a
// day-2 worker once the installation completes.
func TestDay2WorkerWaitsForInstallation(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	l := newLab(t, models.ClusterStatusInstalling)
	h := l.newHost(t, "worker-day2", hostOptions{mac: "52:54:00:00:04:01"})

	g.Eventually(func(g Gomega) {
		c := condition(g, h.config, bootstrapv1.InfraEnvReadyCondition)
		g.Expect(c.Reason).To(Equal(bootstrapv1.WaitingForInstallationToCompleteReason))
		g.Expect(c.Message).To(ContainSubstring(`state "installing"`))
		g.Expect(c.Message).To(ContainSubstring("day-2"))
	}, timeout).Should(Succeed())
	// The condition is set by the reconcile that decided not to create the InfraEnv.
	err := env.Client.Get(ctx, client.ObjectKey{Namespace: l.ns, Name: h.config.Name}, &aiv1beta1.InfraEnv{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "no InfraEnv while the installation runs, got %v", err)

	// The installation completes: the cluster takes day-2 hosts.
	l.cd.Spec.Installed = true
	g.Expect(env.Client.Update(ctx, l.cd)).To(Succeed())
	l.setInstallState(t, models.ClusterStatusAddingHosts)

	agent := agentOf(t, h)
	g.Eventually(func(g Gomega) {
		a := get(g, agent)
		g.Expect(a.Spec.Approved).To(BeTrue())
		g.Expect(a.Spec.Role).To(Equal(models.HostRoleWorker))
		g.Expect(a.Spec.ClusterDeploymentName).To(Equal(&aiv1beta1.ClusterReference{Namespace: l.ns, Name: "c1"}))
	}, timeout).Should(Succeed())
}

// TestInfraEnvDeletedByHandIsRecreated checks that an InfraEnv deleted by hand is re-created
// under the same name and that its new ISO reaches the Metal3Machine.
func TestInfraEnvDeletedByHandIsRecreated(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	l := newLab(t, models.ClusterStatusInsufficient)
	h := l.newHost(t, "worker-re", hostOptions{mac: "52:54:00:00:05:01"})
	key := client.ObjectKey{Namespace: l.ns, Name: h.config.Name}

	old := &aiv1beta1.InfraEnv{}
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, key, old)).To(Succeed())
		g.Expect(old.Status.ISODownloadURL).NotTo(BeEmpty())
		g.Expect(get(g, h.m3m).Spec.Image.URL).To(Equal(old.Status.ISODownloadURL))
	}, timeout).Should(Succeed())

	g.Expect(env.Client.Delete(ctx, old)).To(Succeed())
	g.Eventually(func(g Gomega) {
		ie := &aiv1beta1.InfraEnv{}
		g.Expect(env.Client.Get(ctx, key, ie)).To(Succeed())
		g.Expect(ie.UID).NotTo(Equal(old.UID))
		g.Expect(ie.Status.ISODownloadURL).NotTo(BeEmpty())
		g.Expect(ie.Status.ISODownloadURL).NotTo(Equal(old.Status.ISODownloadURL))
		g.Expect(get(g, h.m3m).Spec.Image.URL).To(Equal(ie.Status.ISODownloadURL))
		g.Expect(get(g, h.config).Status.InfraEnvRef.UID).To(Equal(ie.UID))
	}, timeout).Should(Succeed())
}

// TestDeletionWithAssistedServiceGone checks that deleting a config whose InfraEnv can no longer
// be finalized (assisted-service is gone and its finalizer stays) neither blocks nor leaves the
// Agent approved; and that a config whose Agent is gone is deleted too.
func TestDeletionWithAssistedServiceGone(t *testing.T) {
	ctx := context.Background()
	l := newLab(t, models.ClusterStatusInsufficient)
	withAgent := l.newHost(t, "worker-del", hostOptions{mac: "52:54:00:00:06:01"})
	agentGone := l.newHost(t, "worker-gone", hostOptions{mac: "52:54:00:00:06:02"})
	agents := map[string]*aiv1beta1.Agent{}
	for _, h := range []*host{withAgent, agentGone} {
		agents[h.config.Name] = agentOf(t, h)
		g := NewWithT(t)
		g.Eventually(func(g Gomega) { g.Expect(get(g, agents[h.config.Name]).Spec.Approved).To(BeTrue()) }, timeout).Should(Succeed())
	}

	// assisted-service and the hosts disappear; the InfraEnvs keep its finalizer.
	simulator.setGone(l.ns)
	for _, h := range []*host{withAgent, agentGone} {
		g := NewWithT(t)
		ie := get(g, &aiv1beta1.InfraEnv{ObjectMeta: metav1.ObjectMeta{Namespace: l.ns, Name: h.config.Name}})
		ie.Finalizers = append(ie.Finalizers, "infraenv.agent-install.openshift.io/ai-deprovision")
		g.Expect(env.Client.Update(ctx, ie)).To(Succeed())
	}
	g := NewWithT(t)
	g.Expect(env.Client.Delete(ctx, agents[agentGone.config.Name])).To(Succeed())

	for _, h := range []*host{withAgent, agentGone} {
		g.Expect(env.Client.Delete(ctx, h.config)).To(Succeed())
	}
	for _, h := range []*host{withAgent, agentGone} {
		g.Eventually(func() bool {
			err := env.Client.Get(ctx, client.ObjectKeyFromObject(h.config), &bootstrapv1.OpenshiftAssistedConfig{})
			return apierrors.IsNotFound(err)
		}, timeout).Should(BeTrue(), "config %s is deleted", h.config.Name)
		ie := get(g, &aiv1beta1.InfraEnv{ObjectMeta: metav1.ObjectMeta{Namespace: l.ns, Name: h.config.Name}})
		g.Expect(ie.DeletionTimestamp.IsZero()).To(BeFalse(), "InfraEnv %s deleted", ie.Name)
	}
	released := get(g, agents[withAgent.config.Name])
	g.Expect(released.Spec.Approved).To(BeFalse())
	g.Expect(released.Labels).NotTo(HaveKey(bootstrapv1.AgentConfigLabel))
	g.Expect(released.Labels).NotTo(HaveKey(clusterv1.ClusterNameLabel))
}

// TestPause checks that a paused Cluster pauses the config (Paused condition, no InfraEnv) and
// that unpausing resumes it.
func TestPause(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	l := newLab(t, models.ClusterStatusInsufficient)
	g.Expect(pause.SetCluster(ctx, env.Client, client.ObjectKeyFromObject(l.cluster), true)).To(Succeed())
	h := l.newHost(t, "worker-p", hostOptions{})
	g.Eventually(func(g Gomega) {
		g.Expect(condition(g, h.config, clusterv1.PausedCondition).Status).To(Equal(metav1.ConditionTrue))
	}, timeout).Should(Succeed())
	err := env.Client.Get(ctx, client.ObjectKey{Namespace: l.ns, Name: h.config.Name}, &aiv1beta1.InfraEnv{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "no InfraEnv while paused, got %v", err)

	g.Expect(pause.SetCluster(ctx, env.Client, client.ObjectKeyFromObject(l.cluster), false)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(condition(g, h.config, clusterv1.PausedCondition).Status).To(Equal(metav1.ConditionFalse))
		g.Expect(condition(g, h.config, bootstrapv1.InfraEnvReadyCondition).Status).To(Equal(metav1.ConditionTrue))
	}, timeout).Should(Succeed())
}
