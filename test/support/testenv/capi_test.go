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

package testenv

import (
	"context"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/api/core/v1beta2/index"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	capoascheme "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/scheme"
)

// TestCAPIControllersRun starts Cluster API's core controllers on the harness and checks that
// they reconcile: the Machine controller adds its finalizer and the Cluster controller reports
// the Cluster's phase. Its API server is started with ProfileDirEnv set, and serves its profiles
// on the socket that asks for.
func TestCAPIControllersRun(t *testing.T) {
	s, err := capoascheme.New()
	if err != nil {
		t.Fatal(err)
	}
	profiles := t.TempDir()
	t.Setenv(ProfileDirEnv, profiles)
	env, err := Start(s)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = env.Stop() }()
	expectProfilingSocket(t, profiles)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logs := &logTail{}
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: s, Metrics: metricsserver.Options{BindAddress: "0"},
		Controller: ControllerConfig(), Logger: funcr.New(logs.add, funcr.Options{Verbosity: 4})})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := SetupCAPIControllers(ctx, mgr, 1); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	// The manager stops before the API server: an API server with open watches waits its whole
	// stop timeout for them.
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v; its last log lines:\n%s", err, logs)
		}
	}()

	ns, err := env.CreateNamespace(ctx, "capi")
	if err != nil {
		t.Fatal(err)
	}
	cluster := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c1"},
		Spec:       clusterv1.ClusterSpec{Paused: ptr.To(false)},
	}
	if err := env.Client.Create(ctx, cluster); err != nil {
		t.Fatal(err)
	}
	machine := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m1"},
		Spec: clusterv1.MachineSpec{
			ClusterName: "c1",
			Bootstrap:   clusterv1.Bootstrap{DataSecretName: ptr.To("data")},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "Metal3Machine", Name: "m1",
			},
		},
	}
	if err := env.Client.Create(ctx, machine); err != nil {
		t.Fatal(err)
	}

	// A bound on a liveness wait, not a timing: the first reconciles take seconds, but a run of
	// the whole CI shares two cores with a dozen API servers.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		gotMachine := &clusterv1.Machine{}
		gotCluster := &clusterv1.Cluster{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(machine), gotMachine); err != nil {
			t.Fatal(err)
		}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(cluster), gotCluster); err != nil {
			t.Fatal(err)
		}
		if len(gotMachine.Finalizers) > 0 && gotCluster.Status.Phase != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Cluster API's controllers did not reconcile in 2 minutes: machine finalizers %v, cluster phase %q; the manager's last log lines:\n%s",
				gotMachine.Finalizers, gotCluster.Status.Phase, logs)
		}
		time.Sleep(200 * time.Millisecond)
	}

	// The lookups by which Cluster API's Machine and MachineHealthCheck controllers map a Node
	// to its Machine answer only when the manager has Cluster API's indexes (an unindexed field
	// is an error, and the Node event is dropped).
	for field, value := range map[string]string{index.MachineNodeNameField: "n1", index.MachineProviderIDField: "agent://x"} {
		if err := mgr.GetCache().List(ctx, &clusterv1.MachineList{}, client.MatchingFields{field: value}); err != nil {
			t.Errorf("listing Machines by %s: %v", field, err)
		}
	}
}

// expectProfilingSocket checks that the one API server socket in dir serves /debug/pprof.
func expectProfilingSocket(t *testing.T, dir string) {
	t.Helper()
	socks, err := filepath.Glob(filepath.Join(dir, "apiserver-*.sock"))
	if err != nil || len(socks) != 1 {
		t.Fatalf("profiling sockets in %s: %v (%v), want one", dir, socks, err)
	}
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", socks[0])
		}}}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://apiserver/debug/pprof/cmdline", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil || resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "kube-apiserver") {
		t.Fatalf("GET /debug/pprof/cmdline on %s: %d %q (%v)", socks[0], resp.StatusCode, body, err)
	}
}

// logTail keeps the last lines a logger wrote, for a failure to show what the manager did.
type logTail struct {
	mu    sync.Mutex
	lines []string
}

const logTailLines = 200

func (l *logTail) add(prefix, args string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.lines) == logTailLines {
		l.lines = l.lines[1:]
	}
	l.lines = append(l.lines, prefix+" "+args)
}

func (l *logTail) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}
