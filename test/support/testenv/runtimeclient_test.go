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
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/pki"

	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	certutil "k8s.io/client-go/util/cert"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	runtimehooksv1 "sigs.k8s.io/cluster-api/api/runtime/hooks/v1alpha1"
	runtimev1 "sigs.k8s.io/cluster-api/api/runtime/v1beta2"
	runtimecatalog "sigs.k8s.io/cluster-api/exp/runtime/catalog"
	runtimeclient "sigs.k8s.io/cluster-api/exp/runtime/client"
	"sigs.k8s.io/cluster-api/exp/runtime/server"
	"sigs.k8s.io/cluster-api/util/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

const hooksAPIVersion = "hooks.runtime.cluster.x-k8s.io/v1alpha1"

// testExtension is a Runtime Extension served by Cluster API's extension server. Its UpdateMachine
// handler answers what the ExtensionConfig's settings say (retryAfterSeconds, message, fail), so
// that its answers also prove the settings arrive.
type testExtension struct {
	url                string
	caPEM              []byte // its self-signed serving certificate
	updateMachineCalls atomic.Int32
}

func (e *testExtension) updateMachine(_ context.Context, req *runtimehooksv1.UpdateMachineRequest, resp *runtimehooksv1.UpdateMachineResponse) {
	e.updateMachineCalls.Add(1)
	settings := req.GetSettings()
	resp.SetMessage(settings["message"])
	if settings["fail"] == "true" {
		resp.SetStatus(runtimehooksv1.ResponseStatusFailure)
		return
	}
	retry, _ := strconv.ParseInt(settings["retryAfterSeconds"], 10, 32)
	resp.SetStatus(runtimehooksv1.ResponseStatusSuccess)
	resp.SetRetryAfterSeconds(int32(retry))
}

func (e *testExtension) canUpdateMachineSet(_ context.Context, req *runtimehooksv1.CanUpdateMachineSetRequest, resp *runtimehooksv1.CanUpdateMachineSetResponse) {
	resp.SetStatus(runtimehooksv1.ResponseStatusSuccess)
	resp.SetMessage("can update " + req.Current.MachineSet.Name)
}

// selfSignedCert returns a serving certificate for 127.0.0.1 followed by its self-signed CA, and
// the certificate's key, in PEM (client-go's generator, as kube-apiserver's self-signed serving).
func selfSignedCert(t *testing.T) (certPEM, keyPEM []byte) {
	t.Helper()
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey("127.0.0.1", []net.IP{net.ParseIP("127.0.0.1")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return certPEM, keyPEM
}

// startTestExtension serves an UpdateMachine and a CanUpdateMachineSet handler over HTTPS on
// 127.0.0.1 until the test ends.
func startTestExtension(t *testing.T) *testExtension {
	t.Helper()
	certDir := t.TempDir()
	certPEM, keyPEM := selfSignedCert(t)
	if err := os.WriteFile(filepath.Join(certDir, "tls.crt"), certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(certDir, "tls.key"), keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()

	catalog := runtimecatalog.New()
	if err := runtimehooksv1.AddToCatalog(catalog); err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Options{Catalog: catalog, Port: port, Host: "127.0.0.1", CertDir: certDir})
	if err != nil {
		t.Fatal(err)
	}
	ext := &testExtension{url: "https://127.0.0.1:" + strconv.Itoa(port), caPEM: certPEM}
	for _, h := range []server.ExtensionHandler{
		{Hook: runtimehooksv1.UpdateMachine, Name: "update-machine", HandlerFunc: ext.updateMachine},
		{Hook: runtimehooksv1.CanUpdateMachineSet, Name: "can-update-machine-set", HandlerFunc: ext.canUpdateMachineSet},
	} {
		if err := srv.AddExtensionHandler(h); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	var startErr error
	go func() { startErr = srv.Start(ctx); close(stopped) }()
	t.Cleanup(func() { cancel(); <-stopped })

	started := srv.StartedChecker()
	for deadline := time.Now().Add(10 * time.Second); started(nil) != nil; {
		select {
		case <-stopped:
			t.Fatalf("extension server stopped: %v", startErr)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("extension server not listening: %v", started(nil))
		}
	}
	return ext
}

// runtimeTestContext is a context whose logger writes to the test's log.
func runtimeTestContext(t *testing.T) context.Context {
	t.Helper()
	return ctrl.LoggerInto(context.Background(), testr.New(t))
}

// discoveredConfig discovers the extension through an ExtensionConfig with the given name and settings.
func discoveredConfig(t *testing.T, rc *RuntimeClient, ext *testExtension, name string, settings map[string]string) *runtimev1.ExtensionConfig {
	t.Helper()
	ec := &runtimev1.ExtensionConfig{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       runtimev1.ExtensionConfigSpec{ClientConfig: runtimev1.ClientConfig{URL: ext.url, CABundle: ext.caPEM}, Settings: settings},
	}
	discovered, err := rc.Discover(runtimeTestContext(t), ec)
	if err != nil {
		t.Fatal(err)
	}
	return discovered
}

// readyRuntimeClient returns a RuntimeClient warmed up with the ExtensionConfigs.
func readyRuntimeClient(t *testing.T, reader client.Reader, configs ...*runtimev1.ExtensionConfig) *RuntimeClient {
	t.Helper()
	rc := NewRuntimeClient(reader)
	list := &runtimev1.ExtensionConfigList{}
	for _, ec := range configs {
		list.Items = append(list.Items, *ec)
	}
	if err := rc.WarmUp(list); err != nil {
		t.Fatal(err)
	}
	return rc
}

func testMachine(namespace string) *clusterv1.Machine {
	return &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "m1"}}
}

func updateMachineRequest(m *clusterv1.Machine) *runtimehooksv1.UpdateMachineRequest {
	return &runtimehooksv1.UpdateMachineRequest{Desired: runtimehooksv1.UpdateMachineRequestObjects{Machine: *m}}
}

// TestRuntimeClientBeforeWarmUp checks that the registry refuses to work until warmed up, once.
func TestRuntimeClientBeforeWarmUp(t *testing.T) {
	ctx := runtimeTestContext(t)
	rc := NewRuntimeClient(fake.NewClientBuilder().Build())
	if rc.IsReady() {
		t.Fatal("ready before WarmUp")
	}
	m := testMachine("lab")
	ec := &runtimev1.ExtensionConfig{ObjectMeta: metav1.ObjectMeta{Name: "ext"}}
	for name, call := range map[string]func() error{
		"Register":   func() error { return rc.Register(ec) },
		"Unregister": func() error { return rc.Unregister(ec) },
		"GetAllExtensions": func() error {
			_, err := rc.GetAllExtensions(ctx, runtimehooksv1.UpdateMachine, m)
			return err
		},
		"CallExtension": func() error {
			return rc.CallExtension(ctx, runtimehooksv1.UpdateMachine, m, "update-machine.ext", updateMachineRequest(m), &runtimehooksv1.UpdateMachineResponse{})
		},
		"CallAllExtensions": func() error {
			return rc.CallAllExtensions(ctx, runtimehooksv1.UpdateMachine, m, updateMachineRequest(m), &runtimehooksv1.UpdateMachineResponse{})
		},
	} {
		if err := call(); err == nil || !strings.Contains(err.Error(), "not been warmed up") {
			t.Errorf("%s before WarmUp: got %v, want a not-warmed-up error", name, err)
		}
	}
	if err := rc.WarmUp(nil); err == nil {
		t.Error("WarmUp(nil) succeeded")
	}
	if err := rc.WarmUp(&runtimev1.ExtensionConfigList{}); err != nil || !rc.IsReady() {
		t.Fatalf("WarmUp: %v, ready %v", err, rc.IsReady())
	}
	if err := rc.WarmUp(&runtimev1.ExtensionConfigList{}); err == nil {
		t.Error("second WarmUp succeeded")
	}
}

// TestRuntimeClientCallsExtensionServer discovers, registers and calls a real extension server.
func TestRuntimeClientCallsExtensionServer(t *testing.T) {
	ext := startTestExtension(t)
	ctx := runtimeTestContext(t)
	rc := readyRuntimeClient(t, fake.NewClientBuilder().Build())
	ec := discoveredConfig(t, rc, ext, "inplace", map[string]string{"retryAfterSeconds": "30", "message": "updating"})

	handlers := map[string]runtimev1.ExtensionHandler{}
	for _, h := range ec.Status.Handlers {
		handlers[h.Name] = h
	}
	for name, hook := range map[string]string{"update-machine.inplace": "UpdateMachine", "can-update-machine-set.inplace": "CanUpdateMachineSet"} {
		want := runtimev1.ExtensionHandler{Name: name, RequestHook: runtimev1.GroupVersionHook{APIVersion: hooksAPIVersion, Hook: hook},
			TimeoutSeconds: 10, FailurePolicy: runtimev1.FailurePolicyFail}
		if handlers[name] != want {
			t.Errorf("discovered handler %q = %+v, want %+v", name, handlers[name], want)
		}
	}
	if len(handlers) != 2 {
		t.Errorf("discovered %d handlers, want 2: %+v", len(handlers), ec.Status.Handlers)
	}
	if err := rc.Register(ec); err != nil {
		t.Fatal(err)
	}

	m := testMachine("lab")
	for _, tc := range []struct {
		hook runtimecatalog.Hook
		want []string
	}{
		{runtimehooksv1.UpdateMachine, []string{"update-machine.inplace"}},
		{runtimehooksv1.CanUpdateMachineSet, []string{"can-update-machine-set.inplace"}},
		{runtimehooksv1.BeforeClusterCreate, []string{}},
	} {
		got, err := rc.GetAllExtensions(ctx, tc.hook, m)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("GetAllExtensions(%s) = %v, %v; want %v", runtimecatalog.HookName(tc.hook), got, err, tc.want)
		}
	}

	resp := &runtimehooksv1.UpdateMachineResponse{}
	if err := rc.CallAllExtensions(ctx, runtimehooksv1.UpdateMachine, m, updateMachineRequest(m), resp); err != nil {
		t.Fatal(err)
	}
	if resp.Status != runtimehooksv1.ResponseStatusSuccess || resp.RetryAfterSeconds != 30 || resp.Message != "updating" {
		t.Errorf("CallAllExtensions(UpdateMachine) = %+v, want Success, retry 30s, message updating", resp.CommonRetryResponse)
	}

	ms := &clusterv1.MachineSet{ObjectMeta: metav1.ObjectMeta{Namespace: "lab", Name: "ms1"}}
	canUpdate := &runtimehooksv1.CanUpdateMachineSetResponse{}
	req := &runtimehooksv1.CanUpdateMachineSetRequest{Current: runtimehooksv1.CanUpdateMachineSetRequestObjects{MachineSet: *ms}}
	if err := rc.CallExtension(ctx, runtimehooksv1.CanUpdateMachineSet, ms, "can-update-machine-set.inplace", req, canUpdate); err != nil {
		t.Fatal(err)
	}
	if canUpdate.Message != "can update ms1" {
		t.Errorf("CanUpdateMachineSet message = %q, want %q", canUpdate.Message, "can update ms1")
	}

	for _, tc := range []struct{ name, handler, want string }{
		{"unknown handler", "nope.inplace", "has not been registered"},
		{"handler of another hook", "can-update-machine-set.inplace", "does not match GroupHook"},
	} {
		err := rc.CallExtension(ctx, runtimehooksv1.UpdateMachine, m, tc.handler, updateMachineRequest(m), &runtimehooksv1.UpdateMachineResponse{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", tc.name, err, tc.want)
		}
	}

	// WithCaching: the second call is answered from the cache.
	calls := ext.updateMachineCalls.Load()
	caching := runtimeclient.WithCaching{Cache: cache.New[runtimeclient.CallExtensionCacheEntry](time.Minute),
		CacheKeyFunc: func(name, rv string, _ runtimehooksv1.RequestObject) string { return name + "/" + rv }}
	for range 2 {
		cached := &runtimehooksv1.UpdateMachineResponse{}
		if err := rc.CallExtension(ctx, runtimehooksv1.UpdateMachine, m, "update-machine.inplace", updateMachineRequest(m), cached, caching); err != nil {
			t.Fatal(err)
		}
		if cached.RetryAfterSeconds != 30 {
			t.Errorf("cached call: retry %d, want 30", cached.RetryAfterSeconds)
		}
	}
	if n := ext.updateMachineCalls.Load() - calls; n != 1 {
		t.Errorf("two calls WithCaching reached the server %d times, want 1", n)
	}

	if err := rc.Unregister(ec); err != nil {
		t.Fatal(err)
	}
	if got, err := rc.GetAllExtensions(ctx, runtimehooksv1.UpdateMachine, m); err != nil || len(got) != 0 {
		t.Errorf("GetAllExtensions after Unregister = %v, %v; want none", got, err)
	}
}

// TestRuntimeClientAggregatesAndFails checks CallAllExtensions over several ExtensionConfigs:
// the lowest non-zero retry and the joined messages, and a Failure answer's message in the error.
func TestRuntimeClientAggregatesAndFails(t *testing.T) {
	ext := startTestExtension(t)
	ctx := runtimeTestContext(t)
	rc := NewRuntimeClient(fake.NewClientBuilder().Build())
	a := discoveredConfig(t, rc, ext, "a", map[string]string{"retryAfterSeconds": "30", "message": "first"})
	b := discoveredConfig(t, rc, ext, "b", map[string]string{"retryAfterSeconds": "5", "message": "second"})
	c := discoveredConfig(t, rc, ext, "c", nil) // retry 0, no message
	m := testMachine("lab")

	rc = readyRuntimeClient(t, fake.NewClientBuilder().Build(), a, b, c)
	resp := &runtimehooksv1.UpdateMachineResponse{}
	if err := rc.CallAllExtensions(ctx, runtimehooksv1.UpdateMachine, m, updateMachineRequest(m), resp); err != nil {
		t.Fatal(err)
	}
	if resp.Status != runtimehooksv1.ResponseStatusSuccess || resp.RetryAfterSeconds != 5 || resp.Message != "first, second" {
		t.Errorf("aggregated response = %+v, want Success, retry 5s, message %q", resp.CommonRetryResponse, "first, second")
	}

	failing := discoveredConfig(t, rc, ext, "failing", map[string]string{"fail": "true", "message": "host unreachable"})
	if err := rc.Register(failing); err != nil {
		t.Fatal(err)
	}
	err := rc.CallAllExtensions(ctx, runtimehooksv1.UpdateMachine, m, updateMachineRequest(m), &runtimehooksv1.UpdateMachineResponse{})
	if err == nil || !strings.Contains(err.Error(), "host unreachable") {
		t.Errorf("CallAllExtensions with a failing handler: got %v, want an error with its message", err)
	}
	one := &runtimehooksv1.UpdateMachineResponse{}
	err = rc.CallExtension(ctx, runtimehooksv1.UpdateMachine, m, "update-machine.failing", updateMachineRequest(m), one)
	if err == nil || !strings.Contains(err.Error(), "host unreachable") || one.Status != runtimehooksv1.ResponseStatusFailure {
		t.Errorf("CallExtension of a failing handler: got %v, status %q; want a Failure with its message", err, one.Status)
	}
}

// TestRuntimeClientTLS checks that the extension's certificate is checked against the caBundle,
// and that failurePolicy decides what a failed call becomes.
func TestRuntimeClientTLS(t *testing.T) {
	ext := startTestExtension(t)
	ctx := runtimeTestContext(t)
	otherCA, _ := selfSignedCert(t)

	rc := NewRuntimeClient(fake.NewClientBuilder().Build())
	wrong := &runtimev1.ExtensionConfig{ObjectMeta: metav1.ObjectMeta{Name: "wrong"},
		Spec: runtimev1.ExtensionConfigSpec{ClientConfig: runtimev1.ClientConfig{URL: ext.url, CABundle: otherCA}}}
	if _, err := rc.Discover(ctx, wrong); err == nil || !strings.Contains(err.Error(), "x509") {
		t.Errorf("Discover with a wrong caBundle: got %v, want an x509 error", err)
	}

	for _, tc := range []struct {
		name    string
		ca      []byte
		policy  runtimev1.FailurePolicy
		wantErr bool
		wantMsg string
	}{
		{"right CA", ext.caPEM, runtimev1.FailurePolicyFail, false, "ok"},
		{"wrong CA, Fail", otherCA, runtimev1.FailurePolicyFail, true, ""},
		{"wrong CA, Ignore", otherCA, runtimev1.FailurePolicyIgnore, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ec := &runtimev1.ExtensionConfig{ObjectMeta: metav1.ObjectMeta{Name: "ext"},
				Spec: runtimev1.ExtensionConfigSpec{ClientConfig: runtimev1.ClientConfig{URL: ext.url, CABundle: tc.ca},
					Settings: map[string]string{"message": "ok"}},
				Status: runtimev1.ExtensionConfigStatus{Handlers: []runtimev1.ExtensionHandler{{Name: "update-machine.ext",
					RequestHook: runtimev1.GroupVersionHook{APIVersion: hooksAPIVersion, Hook: "UpdateMachine"}, TimeoutSeconds: 5, FailurePolicy: tc.policy}}}}
			rc := readyRuntimeClient(t, fake.NewClientBuilder().Build(), ec)
			m := testMachine("lab")
			calls := ext.updateMachineCalls.Load()
			resp := &runtimehooksv1.UpdateMachineResponse{CommonRetryResponse: runtimehooksv1.CommonRetryResponse{
				CommonResponse: runtimehooksv1.CommonResponse{Status: runtimehooksv1.ResponseStatusFailure, Message: "stale"}}}
			err := rc.CallAllExtensions(ctx, runtimehooksv1.UpdateMachine, m, updateMachineRequest(m), resp)
			if tc.wantErr {
				if err == nil || !strings.Contains(err.Error(), "x509") {
					t.Errorf("got %v, want an x509 error", err)
				}
				return
			}
			if err != nil || resp.Status != runtimehooksv1.ResponseStatusSuccess || resp.Message != tc.wantMsg {
				t.Errorf("got %v, %+v; want Success with message %q", err, resp.CommonRetryResponse, tc.wantMsg)
			}
			if reached := ext.updateMachineCalls.Load() > calls; reached != (tc.wantMsg != "") {
				t.Errorf("server reached: %v", reached)
			}
		})
	}
}

// TestRuntimeClientNamespaceSelector checks that an ExtensionConfig's namespaceSelector, matched
// against the labels of the object's Namespace, includes or excludes its handlers.
func TestRuntimeClientNamespaceSelector(t *testing.T) {
	ext := startTestExtension(t)
	ctx := runtimeTestContext(t)
	reader := fake.NewClientBuilder().WithObjects(&corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{Name: "lab", Labels: map[string]string{"env": "lab"}}}).Build()
	base := discoveredConfig(t, NewRuntimeClient(reader), ext, "sel", map[string]string{"message": "called"})

	for _, tc := range []struct {
		name     string
		selector *metav1.LabelSelector
		match    bool
	}{
		{"nil selector", nil, true},
		{"empty selector", &metav1.LabelSelector{}, true},
		{"matching labels", &metav1.LabelSelector{MatchLabels: map[string]string{"env": "lab"}}, true},
		{"other labels", &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ec := base.DeepCopy()
			ec.Spec.NamespaceSelector = tc.selector
			rc := readyRuntimeClient(t, reader, ec)
			m := testMachine("lab")
			names, err := rc.GetAllExtensions(ctx, runtimehooksv1.UpdateMachine, m)
			if err != nil || (len(names) == 1) != tc.match {
				t.Errorf("GetAllExtensions = %v, %v; want match %v", names, err, tc.match)
			}
			resp := &runtimehooksv1.UpdateMachineResponse{}
			if err := rc.CallAllExtensions(ctx, runtimehooksv1.UpdateMachine, m, updateMachineRequest(m), resp); err != nil {
				t.Fatal(err)
			}
			if called := resp.Message == "called"; called != tc.match {
				t.Errorf("CallAllExtensions called the handler: %v, want %v", called, tc.match)
			}
			err = rc.CallExtension(ctx, runtimehooksv1.UpdateMachine, m, "update-machine.sel", updateMachineRequest(m), &runtimehooksv1.UpdateMachineResponse{})
			if tc.match != (err == nil) || (!tc.match && !strings.Contains(err.Error(), "namespaceSelector did not match")) {
				t.Errorf("CallExtension = %v, want match %v", err, tc.match)
			}
			// A selector needs the Namespace: an object in a missing one is an error, as upstream.
			if _, err := rc.GetAllExtensions(ctx, runtimehooksv1.UpdateMachine, testMachine("missing")); (err != nil) != (tc.selector != nil && len(tc.selector.MatchLabels) > 0) {
				t.Errorf("GetAllExtensions in a missing namespace: %v", err)
			}
		})
	}
}

// TestRuntimeClientPresentsItsClientCertificate: after UseClientCertificate, the client presents
// the certificate, as Cluster API's manager given --runtime-extension-client-cert-file; before,
// none, and an extension that requires one refuses the handshake.
func TestRuntimeClientPresentsItsClientCertificate(t *testing.T) {
	ctx := runtimeTestContext(t)
	ca := pki.MustIssue(t, nil, pki.Request{CommonName: "capi-client-ca", CA: true})
	cert := pki.MustIssue(t, ca, pki.Request{CommonName: "capi-runtime-client", Usages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := os.WriteFile(certFile, cert.CertPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, cert.KeyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	var presented atomic.Value
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		presented.Store(r.TLS.PeerCertificates[0].Subject.CommonName)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"apiVersion":"hooks.runtime.cluster.x-k8s.io/v1alpha1","kind":"DiscoveryResponse","status":"Success","handlers":[]}`))
	}))
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	srv.TLS = &tls.Config{ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: roots, MinVersion: tls.VersionTLS12}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	servingCA := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	ec := &runtimev1.ExtensionConfig{ObjectMeta: metav1.ObjectMeta{Name: "ext"},
		Spec: runtimev1.ExtensionConfigSpec{ClientConfig: runtimev1.ClientConfig{URL: srv.URL, CABundle: servingCA}}}

	rc := NewRuntimeClient(fake.NewClientBuilder().Build())
	if _, err := rc.Discover(ctx, ec); err == nil || presented.Load() != nil {
		t.Fatalf("Discover without a client certificate: %v, server saw %v; want a refused handshake", err, presented.Load())
	}
	rc.UseClientCertificate(certFile, keyFile)
	if _, err := rc.Discover(ctx, ec); err != nil {
		t.Fatalf("Discover with the client certificate: %v", err)
	}
	if presented.Load() != "capi-runtime-client" {
		t.Errorf("the extension saw client certificate %v, want capi-runtime-client", presented.Load())
	}
}
