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

package testenv_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/spf13/pflag"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/manager"
	capoascheme "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/scheme"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/ports"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/testenv"
)

// parse reads a provider's command line into manager options, as each main package does.
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

// TestRunStartsAndStops starts a manager the way the providers' main packages do, against a
// real API server, waits until it reports ready, and stops it.
func TestRunStartsAndStops(t *testing.T) {
	s, err := capoascheme.New()
	if err != nil {
		t.Fatal(err)
	}
	env, err := testenv.Start(s)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = env.Stop() }()

	healthAddr, err := ports.Address()
	if err != nil {
		t.Fatal(err)
	}
	o := parse(t, "--health-addr="+healthAddr, "--diagnostics-address=0", "--webhook-port=0", "--namespace=default")
	ctx, cancel := context.WithCancel(context.Background())
	setupCalled := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- manager.Run(ctx, env.Config, o, env.Scheme, func(_ context.Context, mgr ctrl.Manager, got *manager.Options) error {
			if got != o || mgr == nil {
				return fmt.Errorf("setup got options %p and manager %v", got, mgr)
			}
			close(setupCalled)
			return nil
		})
	}()

	// A bound on a liveness wait, not a timing: the manager is ready in seconds, but a run of the
	// whole CI shares two cores with a dozen API servers.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+healthAddr+"/readyz", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case err := <-done:
			t.Fatalf("manager stopped before it was ready: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("manager not ready after 2 minutes")
		}
		time.Sleep(100 * time.Millisecond)
	}
	select {
	case <-setupCalled:
	default:
		t.Error("setup was not called before the manager started")
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run returned %v after its context was cancelled", err)
	}
}
