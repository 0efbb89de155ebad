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
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	capoascheme "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/scheme"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/assisted"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/baremetal"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/cvo"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/inventory"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/testenv"
)

const timeout = 60 * time.Second

var (
	mgmt, workload *testenv.Environment
	inv            = inventory.New()
	sim            *assisted.Simulator
	ctx            context.Context
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	if os.Getenv("SIM_TEST_VERBOSE") != "" {
		ctrl.SetLogger(zap.New(zap.UseDevMode(true)))
	} else {
		ctrl.SetLogger(zap.New(zap.WriteTo(io.Discard)))
	}
	mgmtScheme, err := capoascheme.New()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	workloadScheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, configv1.Install} {
		if err := add(workloadScheme); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	// The kinds the simulators read and write: not the providers', Cluster API's or Metal3's
	// (each CRD an API server installs costs it CPU).
	if mgmt, err = testenv.StartWithOptions(testenv.Options{Scheme: mgmtScheme, CRDPaths: []string{
		testenv.ThirdPartyCRDDir + "/assisted-service", testenv.ThirdPartyCRDDir + "/baremetal-operator", testenv.ThirdPartyCRDDir + "/hive",
	}}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer stop(mgmt)
	if workload, err = testenv.StartWorkload(workloadScheme); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer stop(workload)
	if err := cvo.InstallCRD(context.Background(), workload.Config); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}

	var cancel context.CancelFunc
	ctx, cancel = context.WithCancel(ctrl.SetupSignalHandler())
	defer cancel()
	opts := controller.Options{MaxConcurrentReconciles: 2, SkipNameValidation: ptrTo(true)}

	mgr, err := ctrl.NewManager(mgmt.Config, ctrl.Options{Scheme: mgmtScheme, Metrics: metricsserver.Options{BindAddress: "0"},
		Controller: testenv.ControllerConfig()})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	sim = &assisted.Simulator{
		Inventory: inv, Workload: workload.Config,
		// The release registry's answer for the tests' release (OpenShift 4.14.3 is Kubernetes
		// 1.27.8); the release package's own test reads it from a registry.
		KubernetesVersion: func(_ context.Context, image string) (string, error) {
			if image != releaseImage {
				return "", fmt.Errorf("no release %s in the tests' registry", image)
			}
			return releaseKubernetesVersion, nil
		},
		OnClusterInstalled: func(ctx context.Context, c assisted.InstalledCluster) error {
			return cvo.EnsureClusterVersion(ctx, c.Workload, cvo.Release("", c.ReleaseImage), "")
		},
	}
	if err := sim.SetupWithManager(ctx, mgr, opts); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := (&baremetal.Reconciler{Inventory: inv, Hosts: sim}).SetupWithManager(mgr, opts); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	wmgr, err := ctrl.NewManager(workload.Config, ctrl.Options{Scheme: workloadScheme, Metrics: metricsserver.Options{BindAddress: "0"},
		Controller: testenv.ControllerConfig()})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := (&cvo.Reconciler{Updates: testUpdateService, Signatures: testSignatureStore}).SetupWithManager(wmgr, opts); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	var wg sync.WaitGroup
	for _, m := range []ctrl.Manager{mgr, wmgr} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := m.Start(ctx); err != nil {
				fmt.Fprintln(os.Stderr, "manager:", err)
			}
		}()
	}
	code := m.Run()
	cancel()
	wg.Wait()
	return code
}

func stop(e *testenv.Environment) {
	if err := e.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping envtest:", err)
	}
}

func ptrTo[T any](v T) *T { return &v }

// stateRecorder records, from a watch, the successive distinct states of one object.
type stateRecorder struct {
	mu     sync.Mutex
	states []string
}

// recordStates watches list in namespace ns and records state(obj) of the object named name
// each time it changes. It stops when the test ends.
func recordStates[T client.Object](t *testing.T, cfg client.WithWatch, list client.ObjectList, ns, name string, state func(T) string) *stateRecorder {
	t.Helper()
	wctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	opts := []client.ListOption{}
	if ns != "" {
		opts = append(opts, client.InNamespace(ns))
	}
	w, err := cfg.Watch(wctx, list, opts...)
	if err != nil {
		t.Fatalf("watching: %v", err)
	}
	r := &stateRecorder{}
	go func() {
		defer w.Stop()
		for {
			select {
			case <-wctx.Done():
				return
			case ev, ok := <-w.ResultChan():
				if !ok {
					return
				}
				if ev.Type != watch.Added && ev.Type != watch.Modified {
					continue
				}
				obj, ok := ev.Object.(T)
				if !ok || obj.GetName() != name {
					continue
				}
				r.add(state(obj))
			}
		}
	}()
	return r
}

func (r *stateRecorder) add(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s == "" || len(r.states) > 0 && r.states[len(r.states)-1] == s {
		return
	}
	r.states = append(r.states, s)
}

// States returns the states recorded so far.
func (r *stateRecorder) States() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.states...)
}

func watchClient(t *testing.T, e *testenv.Environment) client.WithWatch {
	t.Helper()
	c, err := client.NewWithWatch(e.Config, client.Options{Scheme: e.Scheme})
	if err != nil {
		t.Fatalf("creating a watch client: %v", err)
	}
	return c
}

func newNamespace(t *testing.T, prefix string) string {
	t.Helper()
	ns, err := mgmt.CreateNamespace(ctx, prefix)
	if err != nil {
		t.Fatal(err)
	}
	// The BMC credentials the tests' BareMetalHosts name, as an administrator creates them with
	// the hosts: BMO (and the simulator) registers no host whose credentials Secret is missing.
	// The generated hosts' BMCs accept any credentials.
	creds := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bmc-credentials"},
		StringData: map[string]string{"username": "admin", "password": "lab"}}
	if err := mgmt.Client.Create(ctx, creds); err != nil {
		t.Fatal(err)
	}
	return ns
}
