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
	"bytes"
	"context"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	conditionsv1 "github.com/openshift/custom-resource-status/conditions/v1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	hiveagent "github.com/openshift/hive/apis/hive/v1/agent"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	infrav1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/infrastructure/v1beta1"
	setup "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/infrastructure/setup"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/manager"
	capoascheme "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/scheme"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/testenv"
)

const (
	timeout  = 60 * time.Second
	interval = 100 * time.Millisecond
)

var env *testenv.Environment

func TestMain(m *testing.M) {
	s, err := capoascheme.New(infrav1.AddToScheme)
	if err != nil {
		panic(err)
	}
	if os.Getenv("TEST_LOG") != "" {
		ctrl.SetLogger(zap.New(zap.UseDevMode(true)))
	} else {
		ctrl.SetLogger(logr.Discard())
	}
	os.Exit(testenv.Main(m, s, &env))
}

// Every test whose manager watches only its own namespaces (isolated, or WatchNamespace set) calls
// t.Parallel: those tests run side by side once the others are done (as many at once as the
// test command's -test.parallel), so that the package takes far less than their sum (about 250
// s). Such a manager sees only its namespace's objects (its Agents included), and a node test's
// workload cluster is its own API server, so they cannot see each other's objects. A test must
// stay sequential when it starts a manager watching every namespace (TestClaimAndInstall,
// TestWatchFilter) or changes what every test shares: the Agent CRD
// (TestNewerAgentCRDFieldsSurvive), the environment, a package variable.

// managerConfig is how a test starts the provider.
type managerConfig struct {
	opts  manager.Options
	infra setup.Options
	// restConfig, when set, replaces the environment's (e.g. to count requests).
	restConfig *rest.Config
	// noCAPI skips Cluster API's core controllers.
	noCAPI bool
}

// startManager runs the provider (through setup.Setup, as main.go does) and
// Cluster API's core controllers in a manager; the returned function stops it and waits.
func startManager(tb testing.TB, mc managerConfig) (stop func()) {
	tb.Helper()
	stop, err := tryStartManager(tb, mc)
	if err != nil {
		tb.Fatal(err)
	}
	return stop
}

// tryStartManager is startManager returning why the manager could not be set up (behind a fault
// injector, as a pod whose container exits and is restarted).
func tryStartManager(tb testing.TB, mc managerConfig) (stop func(), err error) {
	tb.Helper()
	if mc.opts.CacheByObject == nil {
		mc.opts.CacheByObject = setup.CacheByObject() // as in production
	}
	if mc.opts.Concurrency == 0 {
		mc.opts.Concurrency = 10
	}
	cfg := mc.restConfig
	if cfg == nil {
		cfg = rest.CopyConfig(env.Config)
		cfg.QPS, cfg.Burst = 200, 300
	}
	// The provider's production manager options (cache, namespace, uncached kinds), for a test.
	opts, err := env.ManagerOptions(&mc.opts)
	if err != nil {
		return nil, err
	}
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	if !mc.noCAPI {
		capi, err := testenv.SetupCAPIControllers(ctx, mgr, 5)
		if err != nil {
			cancel()
			return nil, err
		}
		// The provider shares Cluster API's ClusterCache, as the lab does.
		mc.infra.ClusterCache = capi.ClusterCache
	}
	if err := setup.Setup(ctx, mgr, &mc.opts, mc.infra); err != nil {
		cancel()
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	var once bool
	stop = func() {
		if once {
			return
		}
		once = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				tb.Errorf("manager: %v", err)
			}
			return
		case <-time.After(20 * time.Second):
		}
		// Slow shutdown: keep the goroutines for diagnosis.
		var dump bytes.Buffer
		_ = pprof.Lookup("goroutine").WriteTo(&dump, 2)
		_ = os.WriteFile(filepath.Join(os.TempDir(), "capoa-infra-shutdown-goroutines.txt"), dump.Bytes(), 0o600) //nolint:gosec // a fixed, documented name: a person reads it after a slow shutdown
		err := <-done
		switch {
		case err == nil:
		case strings.Contains(dump.String(), "clustercache.(*clusterCache).sendEventsToClusterSources"):
			// Cluster API's ClusterCache (v1.13, cluster_cache.go sendEventsToClusterSources)
			// sends a Cluster's probe event on an unbuffered channel without watching its
			// context; a controller whose source stopped first never receives it, and the
			// manager's grace period runs out. The manager and its controllers stopped; only
			// that send is left behind.
			tb.Logf("manager: %v (Cluster API's ClusterCache blocked on a send at shutdown)", err)
		default:
			tb.Errorf("manager: %v", err)
		}
	}
	tb.Cleanup(stop)
	return stop, nil
}

// fixture is a Cluster with an AgentCluster that references a ClusterDeployment, in its own
// namespace.
type fixture struct {
	ns      string
	cluster string
	cd      string
}

func newFixture(tb testing.TB, ctx context.Context, prefix string, labels map[string]string) fixture {
	tb.Helper()
	return newFixtureWith(tb, ctx, prefix, labels, nil)
}

// newFixtureWith is newFixture with a change to the AgentCluster before it is created.
func newFixtureWith(tb testing.TB, ctx context.Context, prefix string, labels map[string]string, mutate func(*infrav1.AgentCluster)) fixture {
	tb.Helper()
	g := NewWithT(tb)
	ns, err := env.CreateNamespace(ctx, prefix)
	g.Expect(err).NotTo(HaveOccurred())
	f := fixture{ns: ns, cluster: "c1", cd: "c1-cd"}
	ac := &infrav1.AgentCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c1", Labels: merge(labels, map[string]string{clusterv1.ClusterNameLabel: "c1"})},
		Spec: infrav1.AgentClusterSpec{
			ControlPlaneEndpoint: infrav1.APIEndpoint{Host: "api.c1.example.com", Port: 6443},
			ClusterDeploymentRef: &infrav1.ClusterDeploymentReference{Name: f.cd},
		},
	}
	if mutate != nil {
		mutate(ac)
	}
	g.Expect(env.Client.Create(ctx, clusterDeployment(ns, f.cd, "c1"))).To(Succeed())
	g.Expect(env.Client.Create(ctx, ac)).To(Succeed())
	cluster := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c1", Labels: labels},
		Spec: clusterv1.ClusterSpec{
			Paused: ptr.To(false),
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: infrav1.GroupVersion.Group, Kind: "AgentCluster", Name: "c1",
			},
		},
	}
	g.Expect(env.Client.Create(ctx, cluster)).To(Succeed())
	secret := &corev1.Secret{
		// Labelled with its Cluster, as Cluster API's bootstrap providers (ours included) label
		// bootstrap data: read from the provider's cache of such Secrets.
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bootstrap-data", Labels: map[string]string{clusterv1.ClusterNameLabel: f.cluster}},
		Data: map[string][]byte{
			"format": []byte("ignition"),
			"value": []byte(`{"ignition":{"version":"3.1.0","config":{"merge":[{"source":"https://api.c1.example.com:22623/config/worker",` +
				`"httpHeaders":[{"name":"Authorization","value":"Bearer tok3n"},{"name":"X-Cluster","value":"c1"}]}]}}}`),
		},
	}
	g.Expect(env.Client.Create(ctx, secret)).To(Succeed())
	return f
}

// machine creates a Machine of the fixture's Cluster and its AgentMachine.
func (f fixture) machine(tb testing.TB, ctx context.Context, name string, mutate func(*clusterv1.Machine, *infrav1.AgentMachine)) {
	tb.Helper()
	g := NewWithT(tb)
	m := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name, Labels: map[string]string{clusterv1.ClusterNameLabel: f.cluster}},
		Spec: clusterv1.MachineSpec{
			ClusterName: f.cluster,
			Bootstrap:   clusterv1.Bootstrap{DataSecretName: ptr.To("bootstrap-data")},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: infrav1.GroupVersion.Group, Kind: "AgentMachine", Name: name,
			},
		},
	}
	am := &infrav1.AgentMachine{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name,
		Labels: map[string]string{clusterv1.ClusterNameLabel: f.cluster}}}
	if mutate != nil {
		mutate(m, am)
	}
	g.Expect(env.Client.Create(ctx, am)).To(Succeed())
	g.Expect(env.Client.Create(ctx, m)).To(Succeed())
}

// createAgent registers an Agent as assisted-service does for a host that booted the discovery
// ISO and was approved: Connected, Validated and RequirementsMet, with an inventory.
func createAgent(tb testing.TB, ctx context.Context, ns, name string, labels map[string]string, cpus int64) {
	tb.Helper()
	g := NewWithT(tb)
	a := &aiv1beta1.Agent{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec:       aiv1beta1.AgentSpec{Approved: true, Role: "worker"},
	}
	g.Expect(env.Client.Create(ctx, a)).To(Succeed())
	a.Status = smallStatus(name, cpus)
	g.Expect(env.Client.Status().Update(ctx, a)).To(Succeed())
}

// smallStatus is the status of a ready Agent with the least inventory the controllers read: one
// NIC, no disks, no CPU flags (see realisticStatus for a real server's).
func smallStatus(name string, cpus int64) aiv1beta1.AgentStatus {
	idx := agentIndex(name)
	return aiv1beta1.AgentStatus{
		Conditions: readyAgentConditions(),
		Inventory: aiv1beta1.HostInventory{
			Hostname: "host-" + name,
			Cpu:      aiv1beta1.HostCPU{Count: cpus, Architecture: "x86_64", Flags: []string{}},
			Memory:   aiv1beta1.HostMemory{PhysicalBytes: 32 << 30},
			Interfaces: []aiv1beta1.HostInterface{{
				Name: "eth0", MacAddress: fmt.Sprintf("52:54:00:00:00:%02x", idx),
				IPV4Addresses: []string{fmt.Sprintf("192.168.111.%d/24", idx+1)},
				IPV6Addresses: []string{fmt.Sprintf("fd00::%x/64", idx+1)},
				Flags:         []string{},
			}},
			SystemVendor: aiv1beta1.HostSystemVendor{Manufacturer: "Red Hat", ProductName: "KVM", SerialNumber: name},
		},
	}
}

// readyAgentConditions are the conditions of an Agent that is connected, validated and unbound.
func readyAgentConditions() []conditionsv1.Condition {
	now := metav1.Now()
	cond := func(t conditionsv1.ConditionType, s corev1.ConditionStatus, reason string) conditionsv1.Condition {
		return conditionsv1.Condition{Type: t, Status: s, Reason: reason, Message: reason, LastHeartbeatTime: now, LastTransitionTime: now}
	}
	return []conditionsv1.Condition{
		cond(aiv1beta1.ConnectedCondition, corev1.ConditionTrue, aiv1beta1.AgentConnectedReason),
		cond(aiv1beta1.ValidatedCondition, corev1.ConditionTrue, aiv1beta1.ValidationsPassingReason),
		cond(aiv1beta1.RequirementsMetCondition, corev1.ConditionTrue, aiv1beta1.AgentReadyReason),
		cond(aiv1beta1.SpecSyncedCondition, corev1.ConditionTrue, aiv1beta1.SyncedOkReason),
		cond(aiv1beta1.InstalledCondition, corev1.ConditionFalse, aiv1beta1.InstallationNotStartedReason),
		cond(aiv1beta1.BoundCondition, corev1.ConditionFalse, aiv1beta1.UnboundReason),
	}
}

// setAgentCondition plays assisted-service reporting a condition of an Agent.
func setAgentCondition(tb testing.TB, ctx context.Context, key client.ObjectKey, typ conditionsv1.ConditionType, status corev1.ConditionStatus, reason string) {
	tb.Helper()
	g := NewWithT(tb)
	g.Eventually(func() error {
		a := &aiv1beta1.Agent{}
		if err := env.Client.Get(ctx, key, a); err != nil {
			return err
		}
		conditionsv1.SetStatusCondition(&a.Status.Conditions, conditionsv1.Condition{Type: typ, Status: status, Reason: reason, Message: reason})
		return env.Client.Status().Update(ctx, a)
	}, timeout, interval).Should(Succeed())
}

// clusterDeployment is a ClusterDeployment as a hosted control plane (or the control plane
// provider) creates it.
func clusterDeployment(ns, name, clusterName string) *hivev1.ClusterDeployment {
	return &hivev1.ClusterDeployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: hivev1.ClusterDeploymentSpec{
			ClusterName: clusterName,
			BaseDomain:  "example.com",
			Platform: hivev1.Platform{AgentBareMetal: &hiveagent.BareMetalPlatform{
				AgentSelector: metav1.LabelSelector{MatchLabels: map[string]string{"cluster": clusterName}},
			}},
		},
	}
}

// agentIndex derives the last byte of an Agent's addresses from its name.
func agentIndex(name string) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(name))
	return int(h.Sum32() % 250)
}

func merge(maps ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range maps {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}
