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
	"fmt"
	"net/http"
	"os"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/manager"
)

// ManagerOptions returns the options of a manager that runs a provider under test on the
// environment: the provider's production options, o.ManagerOptions(e.Scheme) (so the cache, the
// client's uncached kinds, the watched namespace, the sync period and the priority queue are
// the ones the provider runs with), with only what a test process needs changed:
//
//   - no metrics server and no health probes: nothing scrapes or probes a test, and fixed
//     addresses would clash between managers and packages running at the same time;
//   - no leader election: each test's manager is the only one that runs its controllers;
//   - o runs in-process (o.InProcess, which sets SkipNameValidation, as ControllerConfig: the
//     same controllers start more than once in one process, a manager per test, -count), so a
//     ClusterCache that setup creates from o shuts down with the manager: its watches would
//     otherwise keep a workload API server from stopping for its whole stop timeout;
//   - unless o sets one, its ClusterCache retries a workload cluster after
//     ClusterCacheRetryInterval, as in the lab, not after Cluster API's 30 s;
//   - when the environment installed webhook configurations (Options.WebhookManifestDirs), a
//     webhook server on envtest's host, port and certificates (WebhookServerOptions), which
//     those configurations call, instead of --webhook-port and --webhook-cert-dir.
//
// The rate limits of the rest config are left to the caller (NewManager uses the environment's).
//
// o is changed in place (InProcess, ClusterCacheRetryInterval): setup reads them from it.
func (e *Environment) ManagerOptions(o *manager.Options) (ctrl.Options, error) {
	o.InProcess = true
	if o.ClusterCacheRetryInterval == 0 {
		o.ClusterCacheRetryInterval = ClusterCacheRetryInterval
	}
	opts, err := o.ManagerOptions(e.Scheme)
	if err != nil {
		return ctrl.Options{}, err
	}
	opts.Metrics = metricsserver.Options{BindAddress: "0"}
	opts.HealthProbeBindAddress = "0"
	opts.LeaderElection = false
	if w := e.env.WebhookInstallOptions; len(w.ValidatingWebhooks)+len(w.MutatingWebhooks) > 0 {
		opts.WebhookServer = webhook.NewServer(e.WebhookServerOptions())
	}
	return opts, nil
}

// NewManager creates a manager on the environment's API server with ManagerOptions(o), for a
// provider under test; register the provider with its setup.Setup and the same o.
func (e *Environment) NewManager(o *manager.Options) (ctrl.Manager, error) {
	opts, err := e.ManagerOptions(o)
	if err != nil {
		return nil, err
	}
	mgr, err := ctrl.NewManager(e.Config, opts)
	if err != nil {
		return nil, fmt.Errorf("creating the manager: %w", err)
	}
	return mgr, nil
}

// WebhookMain starts an environment with o (its WebhookManifestDirs: the webhook configurations
// to install) and a manager that serves the webhooks setup registers, waits until the webhook
// server answers, runs the package's tests and stops both; call it from TestMain and exit with
// what it returns. The environment is stored in *env for the tests.
func WebhookMain(m *testing.M, o Options, setup func(ctrl.Manager) error, env **Environment) int {
	return mainWith(o, env, func(e *Environment) int {
		mgr, err := e.NewManager(manager.NewOptions("capoa-webhook-test"))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if err := setup(mgr); err != nil {
			fmt.Fprintln(os.Stderr, "setting up the webhooks:", err)
			return 1
		}
		return RunWithManager(context.Background(), m, mgr, func() error { return waitForWebhookServer(mgr, time.Minute) })
	})
}

// RunWithManager runs the package's tests while mgr runs: it starts mgr (with a context that
// ends with ctx or after the tests), waits until ready, when given, returns nil, runs the tests,
// then stops mgr and waits for it. It returns the tests' exit code, or 1 when mgr failed or was
// not ready.
func RunWithManager(ctx context.Context, m *testing.M, mgr ctrl.Manager, ready func() error) int {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	if ready != nil {
		readyErr := make(chan error, 1)
		go func() { readyErr <- ready() }()
		select {
		case err := <-readyErr:
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
		case err := <-done:
			fmt.Fprintln(os.Stderr, "manager stopped before it was ready:", err)
			return 1
		}
	}
	code := m.Run()
	cancel()
	if err := <-done; err != nil {
		fmt.Fprintln(os.Stderr, "manager:", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// waitForWebhookServer waits until mgr's webhook server accepts TLS connections, or timeout passes.
func waitForWebhookServer(mgr ctrl.Manager, timeout time.Duration) error {
	started := mgr.GetWebhookServer().StartedChecker()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, "/", nil)
	if err != nil {
		return err
	}
	var lastErr error
	if err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		lastErr = started(req)
		return lastErr == nil, nil
	}); err != nil {
		return fmt.Errorf("webhook server not started after %s: %w", timeout, lastErr)
	}
	return nil
}

// StartWebhookManager starts, for one test, a manager with the webhooks setup registers
// (validation, and conversion for the kinds the scheme can convert), on the webhook
// configurations the environment installed, and waits until its webhook server answers. stop
// stops the manager and waits for it: call it before stopping the environment, whose API server
// otherwise waits for the manager's watches to end.
func (e *Environment) StartWebhookManager(ctx context.Context, setup func(ctrl.Manager) error) (stop func(), err error) {
	mgr, err := e.NewManager(manager.NewOptions("capoa-webhook-test"))
	if err != nil {
		return nil, err
	}
	if err := setup(mgr); err != nil {
		return nil, fmt.Errorf("setting up the webhooks: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	stop = func() {
		cancel()
		if err := <-done; err != nil {
			fmt.Fprintln(os.Stderr, "webhook manager:", err)
		}
	}
	ready := make(chan error, 1)
	go func() { ready <- waitForWebhookServer(mgr, time.Minute) }()
	select {
	case err := <-ready:
		if err != nil {
			stop()
			return nil, err
		}
		return stop, nil
	case err := <-done:
		cancel()
		return nil, fmt.Errorf("manager stopped before its webhook server answered: %w", err)
	}
}

// StartWithWebhooks starts an environment with o and a manager serving the webhooks setup
// registers (StartWebhookManager); stop stops the manager, then the environment.
func StartWithWebhooks(ctx context.Context, o Options, setup func(ctrl.Manager) error) (env *Environment, stop func(), err error) {
	env, err = StartWithOptions(o)
	if err != nil {
		return nil, nil, err
	}
	stopManager, err := env.StartWebhookManager(ctx, setup)
	if err != nil {
		_ = env.Stop()
		return nil, nil, err
	}
	return env, func() { stopManager(); _ = env.Stop() }, nil
}
