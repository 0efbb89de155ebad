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
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"

	ctrl "sigs.k8s.io/controller-runtime"
)

// maxClientCABytes bounds the client CA file: a bundle of a few CAs is a few KiB.
const maxClientCABytes = 1 << 20

// ClientCA admits the hook requests of Cluster API's runtime client alone: those that present a
// client certificate that one of the CAs in a file signed for client authentication. Cluster
// API's managers present one when started with --runtime-extension-client-cert-file and
// --runtime-extension-client-key-file (v1.13, internal/runtime/client/client.go
// createHTTPClient).
//
// The webhook server only asks for a certificate (tls.RequestClientCert, manager.Options.
// WebhookRequestClientCert): the admission and conversion requests it also serves come from the
// API server, which presents none, and must not be refused at the handshake. The hooks verify it
// here, before they read a byte of the body.
type ClientCA struct {
	// File is the PEM file of the CAs. It is read at every request, so that a rotated bundle
	// needs no restart; one that cannot be read or holds no certificate admits no one.
	File string
}

// errNoClientCertificate is the refusal of a request that presents no certificate.
var errNoClientCertificate = errors.New("no client certificate")

// Check checks the file: that it can be read and holds a certificate.
func (c ClientCA) Check() error {
	_, err := c.pool()
	return err
}

// pool reads the CAs of the file.
func (c ClientCA) pool() (*x509.CertPool, error) {
	f, err := os.Open(c.File)
	if err != nil {
		return nil, fmt.Errorf("reading the client CA file: %w", err)
	}
	defer func() { _ = f.Close() }()
	data, err := io.ReadAll(io.LimitReader(f, maxClientCABytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading the client CA file %s: %w", c.File, err)
	}
	if len(data) > maxClientCABytes {
		return nil, fmt.Errorf("the client CA file %s is larger than %d bytes", c.File, maxClientCABytes)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, fmt.Errorf("the client CA file %s holds no PEM certificate", c.File)
	}
	return pool, nil
}

// verify returns nil when r presents a client certificate one of the CAs issued for client
// authentication.
func (c ClientCA) verify(r *http.Request) error {
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return errNoClientCertificate
	}
	roots, err := c.pool()
	if err != nil {
		return err
	}
	intermediates := x509.NewCertPool()
	for _, cert := range r.TLS.PeerCertificates[1:] {
		intermediates.AddCert(cert)
	}
	leaf := r.TLS.PeerCertificates[0]
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, Intermediates: intermediates,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		return fmt.Errorf("client certificate %q: %w", leaf.Subject.CommonName, err)
	}
	return nil
}

// admit wraps next with the check of the client certificate when c is not nil: a request that
// fails it is answered 403, with a message that names the flag but nothing of the check.
func (c *ClientCA) admit(next http.Handler) http.Handler {
	if c == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := c.verify(r); err != nil {
			ctrl.Log.WithName("inplace").V(1).Info("Refused a hook request", "path", r.URL.Path, "remote", r.RemoteAddr, "reason", err.Error())
			http.Error(w, "a client certificate signed by a CA of --"+ClientCAFlag+" is required", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// ClientCAFlag is the control-plane manager's flag of the client CA file.
const ClientCAFlag = "in-place-updates-client-ca-file"
