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
	"crypto/tls"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/manager"
)

func parse(t *testing.T, args ...string) *manager.Options {
	t.Helper()
	o := manager.NewOptions("test-leader-election")
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("parsing %v: %v", args, err)
	}
	return o
}

func TestFlagsBecomeManagerOptions(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		check func(t *testing.T, o *manager.Options, mo ctrl.Options)
	}{
		{"defaults watch every namespace", nil, func(t *testing.T, o *manager.Options, mo ctrl.Options) {
			t.Helper()
			if len(mo.Cache.DefaultNamespaces) != 0 {
				t.Errorf("DefaultNamespaces = %v, want none (all namespaces)", mo.Cache.DefaultNamespaces)
			}
			if mo.LeaderElection || mo.LeaderElectionID != "test-leader-election" {
				t.Errorf("leader election = %v %q", mo.LeaderElection, mo.LeaderElectionID)
			}
			if o.Concurrency != 10 || mo.HealthProbeBindAddress != ":9440" || mo.Metrics.BindAddress != ":8443" {
				t.Errorf("concurrency %d health %q metrics %q", o.Concurrency, mo.HealthProbeBindAddress, mo.Metrics.BindAddress)
			}
			if !mo.Metrics.SecureServing {
				t.Error("metrics are served without TLS and authentication by default")
			}
			if mo.Controller.UsePriorityQueue == nil || *mo.Controller.UsePriorityQueue {
				t.Errorf("UsePriorityQueue = %v, want false (controller-runtime#3538)", mo.Controller.UsePriorityQueue)
			}
			if mo.PprofBindAddress != "" {
				t.Errorf("PprofBindAddress = %q, want the profiler off", mo.PprofBindAddress)
			}
		}},
		{"profiler", []string{"--profiler-address=localhost:6060"}, func(t *testing.T, _ *manager.Options, mo ctrl.Options) {
			t.Helper()
			if mo.PprofBindAddress != "localhost:6060" {
				t.Errorf("PprofBindAddress = %q, want localhost:6060", mo.PprofBindAddress)
			}
		}},
		{"priority queue", []string{"--use-priority-queue"}, func(t *testing.T, _ *manager.Options, mo ctrl.Options) {
			t.Helper()
			if mo.Controller.UsePriorityQueue == nil || !*mo.Controller.UsePriorityQueue {
				t.Errorf("UsePriorityQueue = %v, want true", mo.Controller.UsePriorityQueue)
			}
		}},
		{"namespace scopes the cache", []string{"--namespace=lab"}, func(t *testing.T, _ *manager.Options, mo ctrl.Options) {
			t.Helper()
			if _, ok := mo.Cache.DefaultNamespaces["lab"]; !ok || len(mo.Cache.DefaultNamespaces) != 1 {
				t.Errorf("DefaultNamespaces = %v, want only lab", mo.Cache.DefaultNamespaces)
			}
		}},
		{"leader election and filter", []string{"--leader-elect", "--watch-filter=team-a", "--concurrency=3",
			"--leader-elect-lease-duration=30s"}, func(t *testing.T, o *manager.Options, mo ctrl.Options) {
			t.Helper()
			if !mo.LeaderElection || *mo.LeaseDuration != 30*time.Second {
				t.Errorf("leader election %v lease %v", mo.LeaderElection, *mo.LeaseDuration)
			}
			if o.WatchFilterValue != "team-a" || o.Concurrency != 3 {
				t.Errorf("watch filter %q concurrency %d", o.WatchFilterValue, o.Concurrency)
			}
		}},
		{"insecure diagnostics", []string{"--insecure-diagnostics", "--diagnostics-address=:8080"},
			func(t *testing.T, _ *manager.Options, mo ctrl.Options) {
				t.Helper()
				if mo.Metrics.SecureServing || mo.Metrics.BindAddress != ":8080" {
					t.Errorf("metrics %+v", mo.Metrics)
				}
			}},
		{"upstream's metrics and health flags, as HyperShift passes them", []string{"--health-probe-bind-address=:8081", "--metrics-bind-address=127.0.0.1:8080"},
			func(t *testing.T, _ *manager.Options, mo ctrl.Options) {
				t.Helper()
				if mo.HealthProbeBindAddress != ":8081" {
					t.Errorf("health %q, want :8081", mo.HealthProbeBindAddress)
				}
				if mo.Metrics.SecureServing || mo.Metrics.BindAddress != "127.0.0.1:8080" {
					t.Errorf("metrics %+v, want plain HTTP on 127.0.0.1:8080", mo.Metrics)
				}
			}},
		{"webhook server off", []string{"--webhook-port=0"}, func(t *testing.T, _ *manager.Options, mo ctrl.Options) {
			t.Helper()
			if mo.WebhookServer != nil {
				t.Error("webhook server created with --webhook-port=0")
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := parse(t, tt.args...)
			mo, err := o.ManagerOptions(runtime.NewScheme())
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, o, mo)
		})
	}
}

func TestInvalidFlagsAreRefused(t *testing.T) {
	if err := parse(t, "--concurrency=0").Validate(); err == nil {
		t.Error("--concurrency=0 accepted")
	}
	if err := parse(t, "--kube-api-qps=50", "--kube-api-burst=0").Validate(); err == nil || !strings.Contains(err.Error(), "--kube-api-burst") {
		t.Errorf("--kube-api-qps=50 --kube-api-burst=0: %v, want the burst refused", err)
	}
	// (Validate applies the logging flags once per process: a later call may refuse that, not the limits.)
	if err := parse(t, "--kube-api-qps=-1", "--kube-api-burst=-1").Validate(); err != nil && strings.Contains(err.Error(), "kube-api") {
		t.Errorf("no client-side limit refused: %v", err)
	}
	for _, args := range [][]string{
		{"--tls-min-version=TLS9"},
		{"--metrics-bind-address=:8080", "--diagnostics-address=:8443"},
		{"--metrics-bind-address=:8080", "--insecure-diagnostics"},
		{"--health-addr=:9440", "--health-probe-bind-address=:8081"},
	} {
		if _, err := parse(t, args...).ManagerOptions(runtime.NewScheme()); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}

// TestWebhookRequestClientCert: a provider that sets it gets a webhook server that asks for a
// client certificate and verifies none (the API server presents none); the metrics server, and
// every other provider's webhook server, ask for none.
func TestWebhookRequestClientCert(t *testing.T) {
	for _, request := range []bool{false, true} {
		o := parse(t, "--tls-min-version=VersionTLS13")
		o.WebhookRequestClientCert = request
		mo, err := o.ManagerOptions(runtime.NewScheme())
		if err != nil {
			t.Fatal(err)
		}
		apply := func(opts []func(*tls.Config)) *tls.Config {
			c := &tls.Config{}
			for _, f := range opts {
				f(c)
			}
			return c
		}
		hooks := apply(mo.WebhookServer.(*webhook.DefaultServer).Options.TLSOpts)
		want := tls.NoClientCert
		if request {
			want = tls.RequestClientCert
		}
		if hooks.ClientAuth != want || hooks.MinVersion != tls.VersionTLS13 {
			t.Errorf("WebhookRequestClientCert=%v: webhook server ClientAuth %v MinVersion %x, want %v and the TLS flags", request, hooks.ClientAuth, hooks.MinVersion, want)
		}
		if metrics := apply(mo.Metrics.TLSOpts); metrics.ClientAuth != tls.NoClientCert {
			t.Errorf("WebhookRequestClientCert=%v: the metrics server asks for a client certificate (%v)", request, metrics.ClientAuth)
		}
	}
}
