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

package tlsprofile_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/manager"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/tlsprofile"
)

// apiServerCRD is the APIServer CRD the pinned github.com/openshift/api module ships (its Go
// types carry no CRD markers), read from the module cache: a published file of the module, not a
// copy in this repository.
func apiServerCRD(t *testing.T) string {
	t.Helper()
	out, err := exec.CommandContext(t.Context(), "go", "list", "-m", "-f", "{{.Dir}}", "github.com/openshift/api").Output()
	if err != nil {
		t.Fatalf("finding github.com/openshift/api in the module cache: %v", err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "config", "v1", "0000_10_config-operator_01_apiserver.crd.yaml")
}

// TestManagersFollowTheHubsProfile runs manager.Run, as the providers' main.go do, against an API
// server without and then with OpenShift's APIServer: the webhook and metrics servers refuse a
// client whose highest TLS version is below the profile's minimum, a change of the profile ends
// the manager cleanly (its Deployment would start it again), the next start serves the new
// profile, and --tls-min-version wins over it.
func TestManagersFollowTheHubsProfile(t *testing.T) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Skip("needs envtest (KUBEBUILDER_ASSETS)")
	}
	ctrl.SetLogger(klog.Background())
	env := &envtest.Environment{}
	cfg, err := env.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	ctx := t.Context()

	t.Run("plain Kubernetes: nothing to follow", func(t *testing.T) {
		hub, err := tlsprofile.Observe(ctx, cfg, tlsprofile.Explicit{})
		if err != nil || hub != nil {
			t.Fatalf("Observe = %+v, %v; want nil, nil", hub, err)
		}
	})

	if _, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{Paths: []string{apiServerCRD(t)}}); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: tlsprofile.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	apiServer := &configv1.APIServer{
		ObjectMeta: metav1.ObjectMeta{Name: tlsprofile.APIServerName},
		Spec:       configv1.APIServerSpec{TLSSecurityProfile: &configv1.TLSSecurityProfile{Type: configv1.TLSProfileModernType}},
	}
	if err := c.Create(ctx, apiServer); err != nil {
		t.Fatal(err)
	}

	t.Run("Modern: TLS 1.2 refused; a change of the profile stops the manager", func(t *testing.T) {
		m := start(ctx, t, cfg)
		m.refuses(t, tls.VersionTLS12)
		m.accepts(t, tls.VersionTLS13)
		apiServer.Spec.TLSSecurityProfile = &configv1.TLSSecurityProfile{Type: configv1.TLSProfileOldType}
		if err := c.Update(ctx, apiServer); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-m.done:
			if err != nil {
				t.Fatalf("the manager ended with %v, want a clean stop", err)
			}
		case <-time.After(time.Minute): // a bound on a hang, not a timing expectation
			t.Fatal("the manager still runs after the profile changed")
		}
		if ctx.Err() != nil {
			t.Fatal("the test's context ended, not the manager's")
		}
	})

	t.Run("Old, once restarted: TLS 1.1 accepted", func(t *testing.T) {
		m := start(ctx, t, cfg)
		m.accepts(t, tls.VersionTLS11)
		m.stop(t)
	})

	t.Run("--tls-min-version wins over the profile", func(t *testing.T) {
		m := start(ctx, t, cfg, "--tls-min-version=VersionTLS12")
		m.refuses(t, tls.VersionTLS11)
		m.accepts(t, tls.VersionTLS12)
		m.stop(t)
	})
}

// running is a manager started by manager.Run with its webhook and metrics servers' addresses.
type running struct {
	webhook, metrics string
	cancel           context.CancelFunc
	done             chan error
}

// start runs a manager that follows the hub's TLS profile, with a webhook server and secure
// metrics, and waits until both servers accept connections.
func start(ctx context.Context, t *testing.T, cfg *rest.Config, args ...string) *running {
	t.Helper()
	w := &envtest.WebhookInstallOptions{LocalServingHost: "127.0.0.1"}
	if err := w.PrepWithoutInstalling(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Cleanup() })
	metricsAddr, healthAddr := freeAddress(t), freeAddress(t)
	o := manager.NewOptions("tlsprofile-test")
	o.FollowTLSProfile = true
	fs := pflag.NewFlagSet("manager", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse(append([]string{
		fmt.Sprintf("--webhook-port=%d", w.LocalServingPort), "--webhook-cert-dir=" + w.LocalServingCertDir,
		"--diagnostics-address=" + metricsAddr, "--health-addr=" + healthAddr,
	}, args...)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctx)
	m := &running{webhook: fmt.Sprintf("127.0.0.1:%d", w.LocalServingPort), metrics: metricsAddr, cancel: cancel, done: make(chan error, 1)}
	t.Cleanup(cancel)
	go func() { m.done <- manager.Run(ctx, rest.CopyConfig(cfg), o, clientgoscheme.Scheme, nil) }()
	ready, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+healthAddr+"/readyz", http.NoBody)
	if err != nil {
		t.Fatal(err)
	}
	// Ready once the webhook server serves (Run's ready check); the metrics server then accepts
	// connections too, or the first handshake below waits for it.
	for {
		resp, err := http.DefaultClient.Do(ready)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return m
			}
		}
		select {
		case err := <-m.done:
			t.Fatalf("the manager ended before it was ready: %v", err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (m *running) stop(t *testing.T) {
	t.Helper()
	m.cancel()
	if err := <-m.done; err != nil {
		t.Fatal(err)
	}
}

// handshake connects to addr with TLS versions up to maxVersion, waiting while the server does
// not listen yet.
func handshake(ctx context.Context, addr string, maxVersion uint16) error {
	for {
		d := &tls.Dialer{Config: &tls.Config{
			InsecureSkipVerify: true, //nolint:gosec // the servers' self-signed certificates: their TLS version is what is checked
			MinVersion:         tls.VersionTLS10, MaxVersion: maxVersion,
		}}
		conn, err := d.DialContext(ctx, "tcp", addr)
		var opErr *net.OpError
		if errors.As(err, &opErr) && opErr.Op == "dial" {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		if err == nil {
			_ = conn.Close()
		}
		return err
	}
}

func (m *running) refuses(t *testing.T, maxVersion uint16) {
	t.Helper()
	for name, addr := range map[string]string{"webhook": m.webhook, "metrics": m.metrics} {
		if err := handshake(t.Context(), addr, maxVersion); err == nil {
			t.Errorf("the %s server accepted a client of at most %s", name, tls.VersionName(maxVersion))
		} else if !strings.Contains(err.Error(), "protocol version") {
			t.Errorf("the %s server refused a client of at most %s, but not for its version: %v", name, tls.VersionName(maxVersion), err)
		}
	}
}

func (m *running) accepts(t *testing.T, maxVersion uint16) {
	t.Helper()
	for name, addr := range map[string]string{"webhook": m.webhook, "metrics": m.metrics} {
		if err := handshake(t.Context(), addr, maxVersion); err != nil {
			t.Errorf("the %s server refused a client of at most %s: %v", name, tls.VersionName(maxVersion), err)
		}
	}
}

func freeAddress(t *testing.T) string {
	t.Helper()
	l, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String()
}
