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

package setup_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	conditionsv1 "github.com/openshift/custom-resource-status/conditions/v1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	hiveagent "github.com/openshift/hive/apis/hive/v1/agent"
	"github.com/spf13/pflag"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	logsv1 "k8s.io/component-base/logs/api/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/infrastructure/v1beta1"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/infrastructure/setup"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/manager"
	capoascheme "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/scheme"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/testenv"
)

func freeAddress(t *testing.T) string {
	t.Helper()
	l, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// get returns the status and body of an HTTP GET of url ("" and the error when it fails).
func get(ctx context.Context, url string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// TestStartsWithHyperShiftArguments starts the provider's manager, as main does, with the
// arguments HyperShift gives the agent provider's Deployment (hypershift-operator
// controllers/hostedcluster/internal/platform/agent/agent.go CAPIProviderDeploymentSpec, and the
// TLS flags that control-plane-operator's capi_provider component adds for newer payloads):
// it starts without webhook certificates, takes its lease, answers HyperShift's probes
// (/healthz and /readyz on the --health-probe-bind-address port) and serves metrics over plain
// HTTP on --metrics-bind-address. Ports are local ones, and the lease namespace is given since
// the test does not run in a pod (in a pod, the pod's namespace is used).
//
// It runs on a hub with our CRDs and on one where `hypershift install` has put its own copy of
// upstream's CRDs in their place (test/support/testenv/hypershift-crds), whose status schema
// refuses ours: there the AgentCluster and AgentMachine are written in upstream's v1beta1 shape,
// which Cluster API reads through the v1beta1 contract. And it runs where upstream's controllers
// of the v1beta1 era had claimed a host and written their status before our CRDs replaced
// upstream's: what upstream made is adopted, and the first status write, carrying Cluster API
// v1beta1 conditions that our schema refuses as stored, succeeds in our shape.
func TestStartsWithHyperShiftArguments(t *testing.T) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Skip("needs envtest (KUBEBUILDER_ASSETS)")
	}
	// Each run applies the same logging flags, as main does once.
	logsv1.ReapplyHandling = logsv1.ReapplyHandlingIgnoreUnchanged
	// One API server for the three runs, in this order: each run's namespaces are its own, and
	// each installs the CRDs it needs over the previous run's, as a hub changes under a user.
	scheme, err := capoascheme.New(infrav1.AddToScheme)
	if err != nil {
		t.Fatal(err)
	}
	env, err := testenv.Start(scheme)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	for _, tc := range []struct {
		name string
		crds crdSet
	}{
		{"our CRDs", ourCRDs},
		{"HyperShift's copy of the CRDs", hyperShiftCRDs},
		{"our CRDs over objects upstream stored", upstreamStoredThenOurs},
	} {
		t.Run(tc.name, func(t *testing.T) { startWithHyperShiftArguments(t, env, tc.crds) })
	}
}

// crdSet is the agent provider's CRDs a run of startWithHyperShiftArguments has on its hub.
type crdSet int

const (
	// ourCRDs: this project's.
	ourCRDs crdSet = iota
	// hyperShiftCRDs: HyperShift's copy of upstream's (test/support/testenv/hypershift-crds).
	hyperShiftCRDs
	// upstreamStoredThenOurs: upstream's v1beta1-era CRDs, under which upstream's controller
	// claimed a host for the node pool and wrote its status (upstreamClaimed), then ours in their
	// place, as a user's switch leaves the hub, before the manager starts.
	upstreamStoredThenOurs
)

func startWithHyperShiftArguments(t *testing.T, env *testenv.Environment, crds crdSet) {
	t.Helper()
	g := NewWithT(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	switch crds {
	case ourCRDs:
		g.Expect(installOurAgentCRDs(ctx, env.Client, env.Config)).To(Succeed())
	default:
		g.Expect(testenv.InstallHyperShiftAgentCRDs(ctx, env.Client, env.Config)).To(Succeed())
	}
	hcp, err := env.CreateNamespace(ctx, "clusters-hc1")
	g.Expect(err).NotTo(HaveOccurred())
	agents, err := env.CreateNamespace(ctx, "agents")
	g.Expect(err).NotTo(HaveOccurred())
	if crds == upstreamStoredThenOurs {
		g.Expect(testenv.InstallHostedControlPlaneCRD(ctx, env.Client)).To(Succeed())
		g.Expect(createHostedCluster(ctx, env.Client, hcp)).To(Succeed())
		g.Expect(createNodePoolMachine(ctx, env.Client, hcp, agents)).To(Succeed())
		g.Expect(upstreamClaimed(ctx, env.Client, hcp, agents)).To(Succeed())
		g.Expect(installOurAgentCRDs(ctx, env.Client, env.Config)).To(Succeed())
	}

	// The manager runs as HyperShift's capi-provider service account, with only the Roles
	// HyperShift grants it: no cluster-scoped rights.
	g.Expect(grantHyperShiftRoles(ctx, env.Client, hcp, agents)).To(Succeed())
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + hcp + ":capi-provider"}
	if crds != upstreamStoredThenOurs {
		g.Expect(testenv.InstallHostedControlPlaneCRD(ctx, env.Client)).To(Succeed())
	}

	health, metrics := freeAddress(t), freeAddress(t)
	args := []string{
		"--namespace", hcp,
		"--health-probe-bind-address=" + health,
		"--metrics-bind-address=" + metrics,
		"--leader-elect",
		"--agent-namespace", agents,
		"--tls-min-version=VersionTLS12",
		"--tls-cipher-suites=TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
		"--leader-elect-namespace", hcp,
	}
	opts := setup.NewManagerOptions()
	var providerOpts setup.Options
	fs := pflag.NewFlagSet("manager", pflag.ContinueOnError)
	opts.AddFlags(fs)
	providerOpts.AddFlags(fs)
	g.Expect(fs.Parse(args)).To(Succeed())
	g.Expect(opts.Validate()).To(Succeed())
	// This process runs the provider's manager once per CRD set: as the lab does, it says so.
	opts.InProcess = true

	done := make(chan error, 1)
	go func() {
		done <- manager.Run(ctx, cfg, opts, env.Scheme, manager.SetupWith(setup.Setup, providerOpts))
	}()
	g.Eventually(func(g Gomega) {
		select {
		case err := <-done:
			g.Expect(err).NotTo(HaveOccurred(), "the manager stopped")
			g.Expect(false).To(BeTrue(), "the manager stopped")
		default:
		}
		for _, path := range []string{"/healthz", "/readyz"} {
			code, _, err := get(ctx, "http://"+health+path)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(code).To(Equal(http.StatusOK), path)
		}
		code, body, err := get(ctx, "http://"+metrics+"/metrics")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(code).To(Equal(http.StatusOK))
		g.Expect(body).To(ContainSubstring("controller_runtime_"))
		lease := &coordinationv1.Lease{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: hcp, Name: setup.LeaderElectionID}, lease)).To(Succeed())
		g.Expect(lease.Spec.HolderIdentity).NotTo(BeNil())
	}, 60*time.Second, 200*time.Millisecond).Should(Succeed())
	g.Expect(opts.WebhookPort).To(BeZero(), "no webhook server: the provider has no webhooks and HyperShift gives it no certificates")
	if crds == upstreamStoredThenOurs {
		// The Cluster was paused for the switch: the first writes are the Paused conditions,
		// which go out with every condition upstream stored; then the Cluster goes on.
		g.Eventually(func(g Gomega) {
			am := &infrav1.AgentMachine{}
			g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: hcp, Name: "hc1-np-1"}, am)).To(Succeed())
			g.Expect(conditions.IsTrue(am, clusterv1.PausedCondition)).To(BeTrue(), "%+v", am.Status.Conditions)
		}, 30*time.Second, 200*time.Millisecond).Should(Succeed())
		cluster := &clusterv1.Cluster{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: hcp, Name: "hc1-x1"}, cluster)).To(Succeed())
		cluster.Spec.Paused = nil
		g.Expect(env.Client.Update(ctx, cluster)).To(Succeed())
	}

	// The controllers work under those Roles: the AgentCluster of a hosted cluster gets the
	// installed cluster's ClusterDeployment, made of its HostedControlPlane, and a NodePool's
	// Machine claims an Agent of the agent namespace.
	if crds != upstreamStoredThenOurs {
		g.Expect(createHostedCluster(ctx, env.Client, hcp)).To(Succeed())
		g.Expect(createNodePoolMachine(ctx, env.Client, hcp, agents)).To(Succeed())
	}
	g.Eventually(func(g Gomega) {
		select {
		case err := <-done:
			g.Expect(err).NotTo(HaveOccurred(), "the manager stopped")
			g.Expect(false).To(BeTrue(), "the manager stopped")
		default:
		}
		ac := &infrav1.AgentCluster{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: hcp, Name: "hc1"}, ac)).To(Succeed())
		g.Expect(ac.Status.Ready).To(BeTrue(), "%+v", ac.Status.Conditions) //nolint:staticcheck // the v1beta1 contract's, which HyperShift's CRD has
		if crds != hyperShiftCRDs {
			g.Expect(ac.Status.Initialization.Provisioned).To(Equal(ptr.To(true)), "%+v", ac.Status.Conditions)
		}
		cd := &hivev1.ClusterDeployment{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: hcp, Name: "hc1"}, cd)).To(Succeed())
		g.Expect(cd.Spec.Installed).To(BeTrue())
		g.Expect(cd.Spec.ClusterMetadata.AdminKubeconfigSecretRef.Name).To(Equal("admin-kubeconfig"))
	}, 60*time.Second, 200*time.Millisecond).Should(Succeed())
	// What Cluster API's Cluster controller reports then.
	cluster := &clusterv1.Cluster{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: hcp, Name: "hc1-x1"}, cluster)).To(Succeed())
	cluster.Status.Initialization.InfrastructureProvisioned = ptr.To(true)
	g.Expect(env.Client.Status().Update(ctx, cluster)).To(Succeed())
	g.Eventually(func(g Gomega) {
		am := &infrav1.AgentMachine{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: hcp, Name: "hc1-np-1"}, am)).To(Succeed())
		g.Expect(am.Spec.ProviderID).To(Equal("agent://host-1"), "%+v", am.Status.Conditions)
		agent := &aiv1beta1.Agent{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: agents, Name: "host-1"}, agent)).To(Succeed())
		g.Expect(agent.Spec.ClusterDeploymentName).To(Equal(&aiv1beta1.ClusterReference{Namespace: hcp, Name: "hc1"}))
		g.Expect(agent.Spec.MachineConfigPool).To(Equal("ignition"), "the last segment of HyperShift's ignition URL")
		g.Expect(agent.Spec.IgnitionEndpointHTTPHeaders).To(HaveKeyWithValue("NodePool", hcp+"/np"))
	}, 60*time.Second, 200*time.Millisecond).Should(Succeed())
	// The host installs: assisted-service reports the Agent bound and installed, and the
	// AgentMachine says it is provisioned.
	g.Expect(installAgent(ctx, env.Client, agents, "host-1")).To(Succeed())
	g.Eventually(func(g Gomega) {
		am := &infrav1.AgentMachine{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: hcp, Name: "hc1-np-1"}, am)).To(Succeed())
		g.Expect(am.Status.Ready).To(BeTrue(), "%+v", am.Status.Conditions) //nolint:staticcheck // the v1beta1 contract's, which HyperShift's CRD has
		if crds != hyperShiftCRDs {
			g.Expect(am.Status.Initialization.Provisioned).To(Equal(ptr.To(true)), "%+v", am.Status.Conditions)
		}
	}, 30*time.Second, 200*time.Millisecond).Should(Succeed())
	switch crds {
	case hyperShiftCRDs:
		expectUpstreamV1Beta1Status(ctx, g, env.Client, hcp)
	case upstreamStoredThenOurs:
		expectOurStatus(ctx, g, env.Client, hcp)
	}
	// HyperShift's Role grants core events only: the manager writes its events there, where
	// `oc describe` and HyperShift's users see them (events.k8s.io ones would be refused). What
	// upstream made is adopted, not made again.
	events := []string{"AgentCluster/hc1 Provisioned"}
	if crds == upstreamStoredThenOurs {
		events = []string{"AgentCluster/hc1 Adopted", "AgentMachine/hc1-np-1 AgentClaimAdopted"}
	}
	g.Eventually(func(g Gomega) {
		list := &corev1.EventList{}
		g.Expect(env.Client.List(ctx, list, client.InNamespace(hcp))).To(Succeed())
		var got []string
		for _, e := range list.Items {
			got = append(got, e.InvolvedObject.Kind+"/"+e.InvolvedObject.Name+" "+e.Reason)
		}
		g.Expect(got).To(ContainElements(events))
	}, 30*time.Second, 200*time.Millisecond).Should(Succeed())

	cancel()
	select {
	case err := <-done:
		g.Expect(err).NotTo(HaveOccurred())
	case <-time.After(30 * time.Second):
		t.Fatalf("the manager did not stop: %s", strings.Join(args, " "))
	}
}

// expectUpstreamV1Beta1Status checks, as stored, what Cluster API's v1beta1 contract and
// upstream's clients read of the hosted cluster's AgentCluster and AgentMachine: status.ready,
// the AgentCluster's clusterDeploymentReference, the AgentMachine's spec.providerID and
// addresses, and Cluster API v1beta1 conditions (reason and message absent rather than empty, a
// severity on each False one).
func expectUpstreamV1Beta1Status(ctx context.Context, g Gomega, c client.Client, ns string) {
	g.Eventually(func(g Gomega) {
		for _, o := range []struct{ kind, name string }{{"AgentCluster", "hc1"}, {"AgentMachine", "hc1-np-1"}} {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(infrav1.GroupVersion.WithKind(o.kind))
			g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: o.name}, u)).To(Succeed())
			ready, _, _ := unstructured.NestedBool(u.Object, "status", "ready")
			g.Expect(ready).To(BeTrue(), o.kind)
			conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
			g.Expect(conds).NotTo(BeEmpty(), o.kind)
			for _, c := range conds {
				cond, ok := c.(map[string]any)
				g.Expect(ok).To(BeTrue())
				g.Expect(cond).NotTo(HaveKey("observedGeneration"), "%s %v", o.kind, cond)
				for _, k := range []string{"reason", "message"} {
					if v, ok := cond[k]; ok {
						g.Expect(v).NotTo(BeEmpty(), "%s %v", o.kind, cond)
					}
				}
				if cond["status"] == "False" {
					g.Expect(cond).To(HaveKey("severity"), "%s %v", o.kind, cond)
				}
			}
			g.Expect(u.Object).To(HaveKeyWithValue("status", Not(HaveKey("initialization"))), o.kind)
			switch o.kind {
			case "AgentCluster":
				cd, _, _ := unstructured.NestedString(u.Object, "status", "clusterDeploymentReference", "name")
				g.Expect(cd).To(Equal("hc1"))
			case "AgentMachine":
				id, _, _ := unstructured.NestedString(u.Object, "spec", "providerID")
				g.Expect(id).To(Equal("agent://host-1"))
				addrs, _, _ := unstructured.NestedSlice(u.Object, "status", "addresses")
				g.Expect(addrs).NotTo(BeEmpty())
			}
		}
	}, 30*time.Second, 200*time.Millisecond).Should(Succeed())
}

// installAgent reports the Agent as assisted-service does once its host has installed: bound and
// installed.
func installAgent(ctx context.Context, c client.Client, ns, name string) error {
	agent := &aiv1beta1.Agent{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, agent); err != nil {
		return err
	}
	conditionsv1.SetStatusCondition(&agent.Status.Conditions, conditionsv1.Condition{Type: aiv1beta1.BoundCondition,
		Status: corev1.ConditionTrue, Reason: aiv1beta1.BoundReason, Message: "The agent is bound to a cluster deployment"})
	conditionsv1.SetStatusCondition(&agent.Status.Conditions, conditionsv1.Condition{Type: aiv1beta1.InstalledCondition,
		Status: corev1.ConditionTrue, Reason: aiv1beta1.InstalledReason, Message: "The installation has completed: Done"})
	return c.Status().Update(ctx, agent)
}

// grantHyperShiftRoles grants the capi-provider service account of the hosted control plane's
// namespace what HyperShift grants the agent provider: its Role capi-provider
// (control-plane-operator .../v2/assets/capi-provider/role.yaml) with the agent platform's
// CAPIProviderPolicyRules, and agent access in the agent namespace (ReconcileCAPIProviderRole).
func grantHyperShiftRoles(ctx context.Context, c client.Client, hcp, agents string) error {
	all := []string{rbacv1.VerbAll}
	roles := map[string][]rbacv1.PolicyRule{
		hcp: {
			{APIGroups: []string{""}, Resources: []string{"events", "secrets", "configmaps"}, Verbs: all},
			{APIGroups: []string{"bootstrap.cluster.x-k8s.io", "controlplane.cluster.x-k8s.io", "infrastructure.cluster.x-k8s.io",
				"machines.cluster.x-k8s.io", "exp.infrastructure.cluster.x-k8s.io", "addons.cluster.x-k8s.io", "exp.cluster.x-k8s.io",
				"cluster.x-k8s.io"}, Resources: []string{"*", "*/status"}, Verbs: all},
			{APIGroups: []string{"hypershift.openshift.io"}, Resources: []string{"*"}, Verbs: all},
			{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: all},
			{APIGroups: []string{"extensions.hive.openshift.io"}, Resources: []string{"agentclusterinstalls"}, Verbs: all},
			{APIGroups: []string{infrav1.GroupVersion.Group}, Resources: []string{"*"}, Verbs: all},
			{APIGroups: []string{"hive.openshift.io"}, Resources: []string{"clusterdeployments"}, Verbs: all},
		},
		agents: {{APIGroups: []string{"agent-install.openshift.io"}, Resources: []string{"agents"},
			Verbs: []string{"get", "list", "watch", "update", "patch"}}},
	}
	for ns, rules := range roles {
		role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "capi-provider"}, Rules: rules}
		binding := &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "capi-provider"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: hcp, Name: "capi-provider"}},
		}
		for _, obj := range []client.Object{role, binding} {
			if err := c.Create(ctx, obj); err != nil {
				return err
			}
		}
	}
	return nil
}

// createHostedCluster creates what HyperShift creates for a hosted cluster hc1 of the agent
// platform (hostedcluster_controller.go reconcileCAPICluster and reconcileAgentCluster): its
// HostedControlPlane with the fields it reports once started, the Cluster and the AgentCluster,
// owned by the Cluster as Cluster API's Cluster controller makes it.
func createHostedCluster(ctx context.Context, c client.Client, ns string) error {
	hcp := testenv.HostedControlPlane(ns, "hc1", ns)
	if err := c.Create(ctx, hcp); err != nil {
		return err
	}
	if err := testenv.HostedControlPlaneStarted(hcp); err != nil {
		return err
	}
	if err := c.Status().Update(ctx, hcp); err != nil {
		return err
	}
	cluster := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hc1-x1"},
		Spec: clusterv1.ClusterSpec{
			ControlPlaneRef:   clusterv1.ContractVersionedObjectReference{APIGroup: "hypershift.openshift.io", Kind: "HostedControlPlane", Name: "hc1"},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "AgentCluster", Name: "hc1"},
		},
	}
	if err := c.Create(ctx, cluster); err != nil {
		return err
	}
	return c.Create(ctx, &infrav1.AgentCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hc1", OwnerReferences: []metav1.OwnerReference{{
			APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: cluster.Name, UID: cluster.UID}}},
		Spec: infrav1.AgentClusterSpec{
			ControlPlaneEndpoint: infrav1.APIEndpoint{Host: "api.hc1.example.com", Port: 6443},
			IgnitionEndpoint:     &infrav1.IgnitionEndpoint{Url: "https://ignition.hc1.example.com/ignition"},
		},
	})
}

// createNodePoolMachine creates what HyperShift's NodePool controller and Cluster API make for one
// node of NodePool np (nodepool/agent.go: an AgentMachineTemplate with the pool's
// agentLabelSelector; the Machine's bootstrap data is HyperShift's pointer ignition with its
// token and headers), and one approved Agent in the agent namespace, as assisted-service
// registers it.
func createNodePoolMachine(ctx context.Context, c client.Client, ns, agents string) error {
	selector := &metav1.LabelSelector{MatchLabels: map[string]string{"pool": "np"}}
	amt := &infrav1.AgentMachineTemplate{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "np-5f7c9"},
		Spec:       infrav1.AgentMachineTemplateSpec{Template: infrav1.AgentMachineTemplateResource{Spec: infrav1.AgentMachineSpec{AgentLabelSelector: selector}}},
	}
	data := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "user-data-np-1"},
		Data: map[string][]byte{"format": []byte("ignition"), "value": []byte(`{"ignition":{"version":"3.2.0","config":{"merge":[{` +
			`"source":"https://ignition.hc1.example.com/ignition","httpHeaders":[{"name":"Authorization","value":"Bearer dG9rZW4="},` +
			`{"name":"NodePool","value":"` + ns + `/np"},{"name":"TargetConfigVersionHash","value":"4a1d2b3c"}]}]}}}`)},
	}
	m := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hc1-np-1", Labels: map[string]string{clusterv1.ClusterNameLabel: "hc1-x1"}},
		Spec: clusterv1.MachineSpec{
			ClusterName:       "hc1-x1",
			Bootstrap:         clusterv1.Bootstrap{DataSecretName: ptr.To(data.Name)},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: infrav1.GroupVersion.Group, Kind: "AgentMachine", Name: "hc1-np-1"},
		},
	}
	for _, obj := range []client.Object{amt, data, m} {
		if err := c.Create(ctx, obj); err != nil {
			return err
		}
	}
	// As Cluster API's MachineSet controller clones it from the template, owned by the Machine.
	am := &infrav1.AgentMachine{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: m.Name, Labels: map[string]string{clusterv1.ClusterNameLabel: "hc1-x1"},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(m, clusterv1.GroupVersion.WithKind("Machine"))}},
		Spec: *amt.Spec.Template.Spec.DeepCopy(),
	}
	if err := c.Create(ctx, am); err != nil {
		return err
	}
	agent := &aiv1beta1.Agent{
		ObjectMeta: metav1.ObjectMeta{Namespace: agents, Name: "host-1", Labels: map[string]string{"pool": "np"}},
		Spec:       aiv1beta1.AgentSpec{Approved: true, Role: "worker"},
	}
	if err := c.Create(ctx, agent); err != nil {
		return err
	}
	now := metav1.Now()
	for _, cond := range []struct {
		t      conditionsv1.ConditionType
		s      corev1.ConditionStatus
		reason string
	}{
		{aiv1beta1.ConnectedCondition, corev1.ConditionTrue, aiv1beta1.AgentConnectedReason},
		{aiv1beta1.ValidatedCondition, corev1.ConditionTrue, aiv1beta1.ValidationsPassingReason},
		{aiv1beta1.RequirementsMetCondition, corev1.ConditionTrue, aiv1beta1.AgentReadyReason},
		{aiv1beta1.SpecSyncedCondition, corev1.ConditionTrue, aiv1beta1.SyncedOkReason},
		{aiv1beta1.InstalledCondition, corev1.ConditionFalse, aiv1beta1.InstallationNotStartedReason},
		{aiv1beta1.BoundCondition, corev1.ConditionFalse, aiv1beta1.UnboundReason},
	} {
		agent.Status.Conditions = append(agent.Status.Conditions, conditionsv1.Condition{Type: cond.t, Status: cond.s, Reason: cond.reason,
			Message: cond.reason, LastHeartbeatTime: now, LastTransitionTime: now})
	}
	agent.Status.Inventory = aiv1beta1.HostInventory{
		Hostname: "host-1",
		Cpu:      aiv1beta1.HostCPU{Count: 8, Architecture: "x86_64", Flags: []string{}},
		Memory:   aiv1beta1.HostMemory{PhysicalBytes: 32 << 30},
		Interfaces: []aiv1beta1.HostInterface{{Name: "eth0", MacAddress: "52:54:00:00:00:01",
			IPV4Addresses: []string{"192.168.111.11/24"}, IPV6Addresses: []string{}, Flags: []string{}}},
	}
	return c.Status().Update(ctx, agent)
}

// upstreamClaimed leaves the hosted cluster and its node pool Machine as upstream's controllers
// of the v1beta1 era (cluster-api-provider-agent 3ad45588, controllers/agentcluster_controller.go
// and agentmachine_controller.go) leave them once the AgentMachine has claimed host-1 and before
// the host installs: the ClusterDeployment it made of the HostedControlPlane
// (createClusterDeploymentObject), the AgentCluster's status, the Agent's claim
// (updateFoundAgent: the AgentMachine's name in a label, its namespace in an annotation), and
// the AgentMachine's finalizer, providerID and status, whose conditions are Cluster API v1beta1
// ones (setConditionByAgentCondition, setAgentReservedCondition, setStatus: True without reason
// or message, False with a severity); and the Cluster paused, as a user may pause it while the
// provider is switched.
func upstreamClaimed(ctx context.Context, c client.Client, ns, agents string) error {
	ac := &infrav1.AgentCluster{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "hc1"}, ac); err != nil {
		return err
	}
	cd := &hivev1.ClusterDeployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hc1", Labels: map[string]string{"agentClusterRef": "hc1"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: infrav1.GroupVersion.String(), Kind: "AgentCluster", Name: ac.Name, UID: ac.UID}}},
		Spec: hivev1.ClusterDeploymentSpec{
			Installed: true, ClusterName: "hc1", BaseDomain: "hc1.example.com",
			Platform: hivev1.Platform{AgentBareMetal: &hiveagent.BareMetalPlatform{}},
			ClusterInstallRef: &hivev1.ClusterInstallLocalReference{Kind: "AgentClusterInstall", Group: "extensions.hive.openshift.io",
				Version: "v1beta1", Name: "hc1"},
			PullSecretRef: &corev1.LocalObjectReference{Name: "pull-secret"},
			ClusterMetadata: &hivev1.ClusterMetadata{ClusterID: string(ac.OwnerReferences[0].UID), InfraID: string(ac.OwnerReferences[0].UID),
				AdminKubeconfigSecretRef: corev1.LocalObjectReference{Name: "admin-kubeconfig"},
				AdminPasswordSecretRef:   &corev1.LocalObjectReference{Name: "kubeadmin-password"}},
		},
	}
	if err := c.Create(ctx, cd); err != nil {
		return err
	}
	now := metav1.Now().UTC().Format(time.RFC3339)
	statuses := map[string]map[string]any{
		"AgentCluster": {"ready": true, "clusterDeploymentReference": map[string]any{"namespace": ns, "name": "hc1"}},
		"AgentMachine": {
			"ready":    false,
			"agentRef": map[string]any{"namespace": agents, "name": "host-1"},
			"conditions": []any{
				map[string]any{"type": "AgentReserved", "status": "True", "lastTransitionTime": now},
				map[string]any{"type": "AgentRequirementsMet", "status": "True", "lastTransitionTime": now},
				map[string]any{"type": "AgentSpecSynced", "status": "True", "lastTransitionTime": now},
				map[string]any{"type": "AgentValidated", "status": "True", "lastTransitionTime": now},
				map[string]any{"type": "Installed", "status": "False", "severity": "Info", "lastTransitionTime": now,
					"reason": aiv1beta1.InstallationNotStartedReason, "message": "The installation has not yet started"},
				map[string]any{"type": "Ready", "status": "False", "severity": "Info", "lastTransitionTime": now,
					"reason": aiv1beta1.InstallationNotStartedReason, "message": "4 of 5 completed"},
			},
		},
	}
	for _, kind := range []string{"AgentCluster", "AgentMachine"} {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(infrav1.GroupVersion.WithKind(kind))
		name := "hc1"
		if kind == "AgentMachine" {
			name = "hc1-np-1"
		}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
			return err
		}
		if kind == "AgentMachine" {
			u.SetFinalizers([]string{"agentmachine.agent-install.openshift.io/deprovision"})
			if err := unstructured.SetNestedField(u.Object, "agent://host-1", "spec", "providerID"); err != nil {
				return err
			}
			if err := c.Update(ctx, u); err != nil {
				return err
			}
		}
		u.Object["status"] = statuses[kind]
		if err := c.Status().Update(ctx, u); err != nil {
			return fmt.Errorf("writing %s's status as upstream does: %w", kind, err)
		}
	}
	// Paused, as a user may pause a Cluster while its provider is switched.
	cluster := &clusterv1.Cluster{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "hc1-x1"}, cluster); err != nil {
		return err
	}
	cluster.Spec.Paused = ptr.To(true)
	if err := c.Update(ctx, cluster); err != nil {
		return err
	}
	agent := &aiv1beta1.Agent{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: agents, Name: "host-1"}, agent); err != nil {
		return err
	}
	agent.Labels["agentMachineRef"] = "hc1-np-1"
	agent.Annotations = map[string]string{"agentMachineRefNamespace": ns}
	agent.Spec.ClusterDeploymentName = &aiv1beta1.ClusterReference{Namespace: ns, Name: "hc1"}
	agent.Spec.MachineConfigPool = "ignition"
	agent.Spec.IgnitionEndpointTokenReference = &aiv1beta1.IgnitionEndpointTokenReference{Namespace: ns, Name: "agent-user-data-np-1"}
	agent.Spec.IgnitionEndpointHTTPHeaders = map[string]string{"NodePool": ns + "/np", "TargetConfigVersionHash": "4a1d2b3c"}
	return c.Update(ctx, agent)
}

// installOurAgentCRDs puts this project's CRDs of the agent provider back in place of upstream's,
// as applying our release's manifests does, and waits until the API server publishes them.
func installOurAgentCRDs(ctx context.Context, c client.Client, cfg *rest.Config) error {
	for _, plural := range []string{"agentclusters", "agentmachines", "agentmachinetemplates"} {
		crd, err := testenv.ProviderCRD("infrastructure", infrav1.GroupVersion.Group, plural)
		if err != nil {
			return err
		}
		live := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(ctx, client.ObjectKey{Name: crd.Name}, live); err != nil {
			return err
		}
		live.Labels = crd.Labels
		live.Spec = crd.Spec
		if err := c.Update(ctx, live); err != nil {
			return fmt.Errorf("replacing CRD %s: %w", crd.Name, err)
		}
	}
	// The API server publishes the changed schemas a moment later: ours have
	// status.initialization and no Cluster API v1beta1 conditions.
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		paths, err := dc.OpenAPIV3().Paths()
		if err != nil {
			return false, nil //nolint:nilerr // not published yet: poll again
		}
		gv, ok := paths["apis/"+infrav1.GroupVersion.String()]
		if !ok {
			return false, nil
		}
		doc, err := gv.Schema("application/json")
		if err != nil {
			return false, nil //nolint:nilerr // not published yet: poll again
		}
		return !strings.Contains(string(doc), `"severity"`) && strings.Contains(string(doc), `"initialization"`), nil
	})
}

// expectOurStatus checks, as stored, that the status upstream wrote (upstreamClaimed) is now in
// our shape: conditions that our schema accepts (a reason on each, no severity), and
// status.initialization; and that the AgentMachine carries our finalizer in place of upstream's.
func expectOurStatus(ctx context.Context, g Gomega, c client.Client, ns string) {
	am := &infrav1.AgentMachine{}
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "hc1-np-1"}, am)).To(Succeed())
	g.Expect(am.Finalizers).To(ConsistOf(infrav1.AgentMachineFinalizer))
	for _, o := range []struct{ kind, name string }{{"AgentCluster", "hc1"}, {"AgentMachine", "hc1-np-1"}} {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(infrav1.GroupVersion.WithKind(o.kind))
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: o.name}, u)).To(Succeed())
		provisioned, _, _ := unstructured.NestedBool(u.Object, "status", "initialization", "provisioned")
		g.Expect(provisioned).To(BeTrue(), o.kind)
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		g.Expect(conds).NotTo(BeEmpty(), o.kind)
		for _, c := range conds {
			cond, ok := c.(map[string]any)
			g.Expect(ok).To(BeTrue())
			g.Expect(cond).NotTo(HaveKey("severity"), "%s %v", o.kind, cond)
			g.Expect(cond).To(HaveKeyWithValue("reason", Not(BeEmpty())), "%s %v", o.kind, cond)
		}
	}
}
