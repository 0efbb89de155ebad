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
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/spf13/pflag"
	coordinationv1 "k8s.io/api/coordination/v1"
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
func TestStartsWithHyperShiftArguments(t *testing.T) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Skip("needs envtest (KUBEBUILDER_ASSETS)")
	}
	g := NewWithT(t)
	scheme, err := capoascheme.New(infrav1.AddToScheme)
	g.Expect(err).NotTo(HaveOccurred())
	env, err := testenv.Start(scheme)
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = env.Stop() }()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hcp, err := env.CreateNamespace(ctx, "clusters-hc1")
	g.Expect(err).NotTo(HaveOccurred())
	agents, err := env.CreateNamespace(ctx, "agents")
	g.Expect(err).NotTo(HaveOccurred())

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

	done := make(chan error, 1)
	go func() {
		done <- manager.Run(ctx, env.Config, opts, env.Scheme, manager.SetupWith(setup.Setup, providerOpts))
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

	cancel()
	select {
	case err := <-done:
		g.Expect(err).NotTo(HaveOccurred())
	case <-time.After(30 * time.Second):
		t.Fatalf("the manager did not stop: %s", strings.Join(args, " "))
	}
}
