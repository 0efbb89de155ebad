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

package manager_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/controllers/clustercache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/config"
	crmanager "sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/manager"
	capoascheme "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/scheme"
)

// testManager is the ctrl.Manager the functions of this package are given: it answers with the
// client, cache and event recorders a test sets, records what is added to it, and passes every
// other call to Manager (a real manager that is never started, or nil where a test needs none).
type testManager struct {
	ctrl.Manager
	client   client.Client // the hub's objects, as its API server holds them
	cache    cache.Cache
	noConfig bool  // GetConfig returns nil
	addErr   error // what Add answers for a RunnableFunc (the ClusterCache's shutdown)
	funcs    []crmanager.RunnableFunc
	added    []crmanager.Runnable // the others

	recorder          events.EventRecorder
	coreRecorder      record.EventRecorder
	recorderNames     []string // asked of GetEventRecorder
	coreRecorderNames []string // asked of GetEventRecorderFor
}

func (m *testManager) GetClient() client.Client { return m.client }

func (m *testManager) GetCache() cache.Cache { return m.cache }

func (m *testManager) GetConfig() *rest.Config {
	if m.noConfig {
		return nil
	}
	return m.Manager.GetConfig()
}

func (m *testManager) Add(r crmanager.Runnable) error {
	if f, ok := r.(crmanager.RunnableFunc); ok {
		m.funcs = append(m.funcs, f)
		return m.addErr
	}
	m.added = append(m.added, r)
	return m.Manager.Add(r)
}

func (m *testManager) GetEventRecorder(name string) events.EventRecorder {
	m.recorderNames = append(m.recorderNames, name)
	return m.recorder
}

func (m *testManager) GetEventRecorderFor(name string) record.EventRecorder {
	m.coreRecorderNames = append(m.coreRecorderNames, name)
	return m.coreRecorder
}

// readerCache is a manager's cache whose reads are those of a client (what the cache holds).
type readerCache struct {
	cache.Cache
	client.Reader
}

func (c readerCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return c.Reader.Get(ctx, key, obj, opts...)
}

func (c readerCache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return c.Reader.List(ctx, list, opts...)
}

// workloadServer stands for a workload cluster's API server: it refuses every request and
// records each one's User-Agent.
type workloadServer struct {
	*httptest.Server
	mu         sync.Mutex
	userAgents []string
}

func startWorkloadServer(t *testing.T) *workloadServer {
	t.Helper()
	s := &workloadServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.userAgents = append(s.userAgents, r.Header.Get("User-Agent"))
		s.mu.Unlock()
		http.Error(w, "refused", http.StatusForbidden)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *workloadServer) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.userAgents...)
}

// kubeconfigSecret is Cluster API's <cluster>-kubeconfig Secret of cluster ns/c1 for server.
func kubeconfigSecret(server string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: ctrl.ObjectMeta{Namespace: "ns", Name: "c1-kubeconfig", Labels: map[string]string{clusterv1.ClusterNameLabel: "c1"}},
		Data: map[string][]byte{"value": fmt.Appendf(nil, `apiVersion: v1
kind: Config
clusters: [{name: c1, cluster: {server: %q}}]
users: [{name: admin, user: {token: t}}]
contexts: [{name: c1, context: {cluster: c1, user: admin}}]
current-context: c1
`, server)},
	}
}

// newTestManager returns a testManager around a real manager of s that is never started (its
// API server does not exist), whose hub holds hub and whose cache holds cached.
func newTestManager(t *testing.T, s *runtime.Scheme, hub, cached []client.Object) *testManager {
	t.Helper()
	mgr, err := ctrl.NewManager(&rest.Config{Host: "https://127.0.0.1:1"}, ctrl.Options{
		Scheme:  s,
		Metrics: metricsserver.Options{BindAddress: "0"},
		// A default that SetupClusterCache's own (at least 1) overrides.
		Controller: config.Controller{SkipNameValidation: ptr.To(true), MaxConcurrentReconciles: 5},
	})
	if err != nil {
		t.Fatal(err)
	}
	return &testManager{
		Manager: mgr,
		client:  fake.NewClientBuilder().WithScheme(s).WithObjects(hub...).Build(),
		cache:   readerCache{Cache: mgr.GetCache(), Reader: fake.NewClientBuilder().WithScheme(s).WithObjects(cached...).Build()},
	}
}

func testScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s, err := capoascheme.New()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSetupClusterCache sets up the ClusterCache on a manager whose hub holds a provisioned
// Cluster and its kubeconfig Secret, and reconciles that Cluster once: the connection attempt
// shows which client the kubeconfig was read through (the hub's Secret names one workload
// server, the cache's another), the user agent, and the retry interval after the refusal.
func TestSetupClusterCache(t *testing.T) {
	for _, tc := range []struct {
		name          string
		opts          manager.Options
		wantCached    bool
		wantRequeue   time.Duration
		wantShutdowns int
		wantWorkers   int
	}{
		{name: "defaults: the kubeconfig from the API server, Cluster API's 30 s",
			wantRequeue: 30 * time.Second, wantWorkers: 1},
		{name: "cached cluster Secrets: the kubeconfig from the cache",
			opts:       manager.Options{CacheByObject: map[client.Object]cache.ByObject{&corev1.Secret{}: manager.ClusterSecretsCache()}},
			wantCached: true, wantRequeue: 30 * time.Second, wantWorkers: 1},
		{name: "in process, with a retry interval",
			opts:        manager.Options{InProcess: true, ClusterCacheRetryInterval: 1500 * time.Millisecond, Concurrency: 3},
			wantRequeue: 1500 * time.Millisecond, wantShutdowns: 1, wantWorkers: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hubServer, cacheServer := startWorkloadServer(t), startWorkloadServer(t)
			cluster := &clusterv1.Cluster{ObjectMeta: ctrl.ObjectMeta{Namespace: "ns", Name: "c1"}}
			cluster.Status.Initialization.InfrastructureProvisioned = ptr.To(true)
			mgr := newTestManager(t, testScheme(t),
				[]client.Object{cluster, kubeconfigSecret(hubServer.URL)}, []client.Object{kubeconfigSecret(cacheServer.URL)})
			ctx := ctrl.LoggerInto(context.Background(), logr.Discard())

			o := tc.opts
			cc, err := o.SetupClusterCache(ctx, mgr, "test-agent")
			if err != nil {
				t.Fatal(err)
			}
			if len(mgr.funcs) != tc.wantShutdowns {
				t.Errorf("%d runnables added for the shutdown, want %d", len(mgr.funcs), tc.wantShutdowns)
			}
			if got := maxConcurrentReconciles(t, mgr.added); got != tc.wantWorkers {
				t.Errorf("the ClusterCache's controller has %d workers, want %d", got, tc.wantWorkers)
			}
			res, err := cc.(reconcile.Reconciler).Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(cluster)})
			if err != nil {
				t.Fatal(err)
			}
			if res.RequeueAfter != tc.wantRequeue {
				t.Errorf("requeued after %s, want %s (ClusterCacheRetryInterval)", res.RequeueAfter, tc.wantRequeue)
			}
			used, unused := hubServer, cacheServer
			if tc.wantCached {
				used, unused = cacheServer, hubServer
			}
			if got := used.requests(); len(got) != 1 || got[0] != "test-agent" {
				t.Errorf("the workload server of the expected kubeconfig had requests with user agents %q, want one with test-agent", got)
			}
			if got := unused.requests(); len(got) != 0 {
				t.Errorf("the other workload server had requests %q: the kubeconfig was read through the wrong client", got)
			}
		})
	}
}

// maxConcurrentReconciles is the MaxConcurrentReconciles of the one controller among added
// (controller-runtime's controller is an internal type: its exported field is read by reflection).
func maxConcurrentReconciles(t *testing.T, added []crmanager.Runnable) int {
	t.Helper()
	var found []int
	for _, r := range added {
		v := reflect.Indirect(reflect.ValueOf(r))
		if v.Kind() != reflect.Struct {
			continue
		}
		if f := v.FieldByName("MaxConcurrentReconciles"); f.IsValid() && f.CanInt() {
			found = append(found, int(f.Int()))
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d controllers among the %d runnables added to the manager, want 1", len(found), len(added))
	}
	return found[0]
}

func TestSetupClusterCacheErrors(t *testing.T) {
	cachedSecrets := map[client.Object]cache.ByObject{&corev1.Secret{}: manager.ClusterSecretsCache()}
	for _, tc := range []struct {
		name    string
		opts    manager.Options
		scheme  func(*testing.T) *runtime.Scheme
		prepare func(*testManager)
		want    string
	}{
		{name: "the Secret client", opts: manager.Options{CacheByObject: cachedSecrets}, prepare: func(m *testManager) { m.noConfig = true },
			want: "creating the ClusterCache's Secret client: must provide non-nil rest.Config to client.New"},
		{name: "the ClusterCache", scheme: func(*testing.T) *runtime.Scheme {
			s := runtime.NewScheme()
			_ = corev1.AddToScheme(s)
			return s
		}, want: "setting up the ClusterCache: failed setting up ClusterCache with a controller manager: "},
		{name: "the shutdown", opts: manager.Options{InProcess: true}, prepare: func(m *testManager) { m.addErr = errors.New("boom") },
			want: "adding the ClusterCache shutdown to the manager: boom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := testScheme
			if tc.scheme != nil {
				s = tc.scheme
			}
			mgr := newTestManager(t, s(t), nil, nil)
			if tc.prepare != nil {
				tc.prepare(mgr)
			}
			o := tc.opts
			cc, err := o.SetupClusterCache(ctrl.LoggerInto(context.Background(), logr.Discard()), mgr, "test-agent")
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) || cc != nil {
				t.Errorf("SetupClusterCache = %v, %v; want no ClusterCache and an error starting with %q", cc, err, tc.want)
			}
		})
	}
}

// fakeClusterCache is a ClusterCache with Cluster API's two methods outside the interface.
type fakeClusterCache struct {
	clustercache.ClusterCache
	interval time.Duration
	shutdown chan struct{}
}

func (c *fakeClusterCache) SetConnectionCreationRetryInterval(d time.Duration) { c.interval = d }

func (c *fakeClusterCache) Shutdown() { close(c.shutdown) }

// plainClusterCache has neither.
type plainClusterCache struct{ clustercache.ClusterCache }

func TestSetConnectionRetryInterval(t *testing.T) {
	cc := &fakeClusterCache{}
	manager.SetConnectionRetryInterval(cc, 2*time.Second)
	if cc.interval != 2*time.Second {
		t.Errorf("retry interval %s, want 2s", cc.interval)
	}
	// A ClusterCache without the method is left as it is.
	manager.SetConnectionRetryInterval(plainClusterCache{}, 2*time.Second)
}

func TestShutdownWhenStopped(t *testing.T) {
	t.Run("shut down when the manager stops", func(t *testing.T) {
		mgr, cc := &testManager{}, &fakeClusterCache{shutdown: make(chan struct{})}
		if err := manager.ShutdownWhenStopped(mgr, cc); err != nil {
			t.Fatal(err)
		}
		if len(mgr.funcs) != 1 {
			t.Fatalf("%d runnables added, want 1", len(mgr.funcs))
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- mgr.funcs[0](ctx) }()
		select {
		case <-cc.shutdown:
			t.Fatal("the ClusterCache was shut down while the manager runs")
		case err := <-done:
			t.Fatalf("the runnable returned (%v) while the manager runs", err)
		case <-time.After(20 * time.Millisecond):
		}
		cancel()
		select {
		case <-cc.shutdown:
		case <-time.After(time.Second):
			t.Fatal("the ClusterCache was not shut down when the manager stopped")
		}
		if err := <-done; err != nil {
			t.Errorf("the runnable returned %v", err)
		}
	})
	t.Run("a ClusterCache that cannot shut down", func(t *testing.T) {
		mgr := &testManager{addErr: errors.New("not to be called")}
		if err := manager.ShutdownWhenStopped(mgr, plainClusterCache{}); err != nil || len(mgr.funcs) != 0 {
			t.Errorf("ShutdownWhenStopped = %v with %d runnables added, want nil and none", err, len(mgr.funcs))
		}
	})
	t.Run("the manager refuses", func(t *testing.T) {
		mgr := &testManager{addErr: errors.New("boom")}
		err := manager.ShutdownWhenStopped(mgr, &fakeClusterCache{})
		if want := "adding the ClusterCache shutdown to the manager: boom"; err == nil || err.Error() != want || !errors.Is(err, mgr.addErr) {
			t.Errorf("ShutdownWhenStopped = %v, want %q wrapping the manager's error", err, want)
		}
	})
}
