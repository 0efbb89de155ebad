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

package inplace

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	runtimehooksv1 "sigs.k8s.io/cluster-api/api/runtime/hooks/v1alpha1"
	runtimecatalog "sigs.k8s.io/cluster-api/exp/runtime/catalog"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/pki"
)

// clientAuth is a CA that issues Cluster API's client certificate, and the file it is in.
type clientAuth struct {
	ca   *pki.KeyPair
	file string
}

func newClientAuth(t *testing.T, dir, name string) clientAuth {
	t.Helper()
	ca := pki.MustIssue(t, nil, pki.Request{CommonName: name, CA: true})
	file := filepath.Join(dir, name+".crt")
	if err := os.WriteFile(file, ca.CertPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return clientAuth{ca: ca, file: file}
}

// client returns an HTTPS client of srv that presents cert (none when nil).
func tlsClient(t *testing.T, srv *httptest.Server, cert *pki.KeyPair) *http.Client {
	t.Helper()
	c := srv.Client()
	transport := c.Transport.(*http.Transport).Clone()
	if cert != nil {
		pair, err := tls.X509KeyPair(cert.CertPEM, cert.KeyPEM)
		if err != nil {
			t.Fatal(err)
		}
		transport.TLSClientConfig.Certificates = []tls.Certificate{pair}
	}
	return &http.Client{Transport: transport}
}

// TestHooksAdmitOnlyClusterAPIsClientCertificate serves the extension as the manager does with
// --in-place-updates-client-ca-file (a TLS server that asks for a client certificate and does
// not verify it) and calls its discovery with each kind of certificate.
func TestHooksAdmitOnlyClusterAPIsClientCertificate(t *testing.T) {
	dir := t.TempDir()
	capi := newClientAuth(t, dir, "capi-runtime-client-ca")
	other := newClientAuth(t, dir, "other-ca")
	ca := &ClientCA{File: capi.file}
	h, catalog := extensionHandler(t, ca)
	srv := httptest.NewUnstartedServer(h)
	srv.TLS = &tls.Config{ClientAuth: tls.RequestClientCert, MinVersion: tls.VersionTLS12}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	gvh, err := catalog.GroupVersionHook(runtimehooksv1.Discovery)
	if err != nil {
		t.Fatal(err)
	}
	discover := func(t *testing.T, cert *pki.KeyPair) (int, string) {
		t.Helper()
		req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, srv.URL+runtimecatalog.GVHToPath(gvh, ""), strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		r, err := tlsClient(t, srv, cert).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = r.Body.Close() }()
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			t.Fatal(err)
		}
		return r.StatusCode, string(body)
	}
	clientUsage := []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	capiClient := pki.MustIssue(t, capi.ca, pki.Request{CommonName: "capi-runtime-client", Usages: clientUsage})
	intermediate := pki.MustIssue(t, capi.ca, pki.Request{CommonName: "intermediate", CA: true})
	viaIntermediate := pki.MustIssue(t, intermediate, pki.Request{CommonName: "capi-runtime-client", Usages: clientUsage})
	viaIntermediate.CertPEM = append(viaIntermediate.CertPEM, intermediate.CertPEM...)

	for _, tc := range []struct {
		name  string
		cert  *pki.KeyPair
		admit bool
	}{
		{name: "no certificate (the API server, anyone)", cert: nil},
		{name: "a client certificate of another CA", cert: pki.MustIssue(t, other.ca, pki.Request{CommonName: "capi-runtime-client", Usages: clientUsage})},
		{name: "a serving certificate of the CA", cert: pki.MustIssue(t, capi.ca, pki.Request{CommonName: "webhook",
			Usages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IPs: []net.IP{net.IPv4(127, 0, 0, 1)}})},
		{name: "Cluster API's client certificate", cert: capiClient, admit: true},
		{name: "a client certificate of an intermediate of the CA, with its chain", cert: viaIntermediate, admit: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := discover(t, tc.cert)
			if !tc.admit {
				if code != http.StatusForbidden || !strings.Contains(body, "--"+ClientCAFlag) {
					t.Fatalf("HTTP %d %q, want 403 naming --%s", code, body, ClientCAFlag)
				}
				if strings.Contains(body, "capi-runtime-client") || strings.Contains(body, "x509") {
					t.Errorf("the refusal %q tells the caller what the check found", body)
				}
				return
			}
			resp := &runtimehooksv1.DiscoveryResponse{}
			if code != http.StatusOK || json.Unmarshal([]byte(body), resp) != nil || resp.GetStatus() != runtimehooksv1.ResponseStatusSuccess {
				t.Fatalf("HTTP %d %q, want a successful discovery", code, body)
			}
		})
	}

	t.Run("a rotated CA bundle, without a restart", func(t *testing.T) {
		if err := os.WriteFile(capi.file, other.ca.CertPEM, 0o600); err != nil {
			t.Fatal(err)
		}
		if code, _ := discover(t, capiClient); code != http.StatusForbidden {
			t.Errorf("the certificate of a CA no longer in the bundle: HTTP %d, want 403", code)
		}
		if code, body := discover(t, pki.MustIssue(t, other.ca, pki.Request{CommonName: "c", Usages: clientUsage})); code != http.StatusOK {
			t.Errorf("the certificate of the new CA: HTTP %d %q, want 200", code, body)
		}
	})
	t.Run("a CA file that is gone admits no one", func(t *testing.T) {
		if err := os.Remove(capi.file); err != nil {
			t.Fatal(err)
		}
		if code, _ := discover(t, capiClient); code != http.StatusForbidden {
			t.Errorf("HTTP %d, want 403", code)
		}
	})
}

// TestRefusedHookRequestsAreNotRead: a request without a certificate is refused before a byte
// of its body is read.
func TestRefusedHookRequestsAreNotRead(t *testing.T) {
	h, catalog := extensionHandler(t, &ClientCA{File: newClientAuth(t, t.TempDir(), "ca").file})
	gvh, err := catalog.GroupVersionHook(runtimehooksv1.UpdateMachine)
	if err != nil {
		t.Fatal(err)
	}
	body := &countingReader{r: io.LimitReader(spaces{}, maxHookRequestBytes)}
	req := httptest.NewRequestWithContext(context.Background(), http.MethodPost, runtimecatalog.GVHToPath(gvh, UpdateMachineHandler), body)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusForbidden {
		t.Fatalf("HTTP %d, want 403", rec.Code)
	}
	if body.n != 0 {
		t.Errorf("read %d bytes of a refused request", body.n)
	}
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

func TestClientCACheck(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage")
	if err := os.WriteFile(garbage, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	large := filepath.Join(dir, "large")
	if err := os.WriteFile(large, make([]byte, maxClientCABytes+1), 0o600); err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]string{
		filepath.Join(dir, "missing"):         "reading the client CA file",
		garbage:                               "holds no PEM certificate",
		large:                                 "larger than",
		newClientAuth(t, dir, "good-ca").file: "",
	} {
		err := ClientCA{File: file}.Check()
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("Check(%s) = %v, want an error containing %q", filepath.Base(file), err, want)
		}
	}
}
