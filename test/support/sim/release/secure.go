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

package release

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/pki"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// SecureOptions make a registry that a mirror of a disconnected site is: HTTPS with a
// certificate of its own CA, and token authentication (see tokenAuth).
type SecureOptions struct {
	// IP is the loopback address it listens on (default 127.0.0.2). go-containerregistry speaks
	// plain HTTP to 127.0.0.1 whatever the server does (name.Registry.Scheme), and to any other
	// address HTTPS, as to a registry on the network.
	IP string
	// Username and Password are the only credentials it accepts.
	Username, Password string
}

// StartSecureRegistry starts a registry served over HTTPS, with a certificate of its own CA
// (CACertPEM) for its IP, that answers only requests carrying a token it gave for o's
// credentials. Its own pushes and reads (Push, RemoteOptions) use them.
func StartSecureRegistry(o SecureOptions) (*Registry, error) {
	if o.IP == "" {
		o.IP = "127.0.0.2"
	}
	if o.Username == "" || o.Password == "" {
		return nil, fmt.Errorf("a secure registry needs a username and a password")
	}
	cert, certPEM, err := selfSignedCert(net.ParseIP(o.IP))
	if err != nil {
		return nil, err
	}
	l, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", net.JoinHostPort(o.IP, "0"))
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", o.IP, err)
	}
	r := &Registry{caPEM: certPEM}
	auth := &tokenAuth{username: o.Username, password: o.Password, tokens: map[string]bool{}}
	r.server = newServer(r, auth)
	_ = r.server.Listener.Close() // httptest's own listener on 127.0.0.1, replaced
	r.server.Listener = l
	r.server.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	r.server.StartTLS()
	r.Host = strings.TrimPrefix(r.server.URL, "https://")
	auth.realm = r.server.URL + "/v2/auth"
	auth.service = r.Host
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(certPEM)
	t, ok := remote.DefaultTransport.(*http.Transport)
	if !ok {
		return nil, fmt.Errorf("the registry client's default transport is not an *http.Transport")
	}
	t = t.Clone()
	t.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	r.opts = []remote.Option{remote.WithTransport(t), remote.WithAuth(&authn.Basic{Username: o.Username, Password: o.Password})}
	return r, nil
}

// CACertPEM is the PEM certificate a client of a secure registry trusts (nil for a plain one).
func (r *Registry) CACertPEM() []byte { return r.caPEM }

// RemoteOptions are the options the registry's own reads and pushes use: its credentials and
// CA (none for a plain registry).
func (r *Registry) RemoteOptions() []remote.Option { return r.opts }

// PullSecret returns a .dockerconfigjson whose auths entry for the registry holds username and
// password, beside an entry for another registry, as a cluster's pull secret holds one per
// registry.
func (r *Registry) PullSecret(username, password string) []byte {
	entry := func(u, p string) map[string]string {
		return map[string]string{"auth": base64.StdEncoding.EncodeToString([]byte(u + ":" + p)), "email": "lab@example.com"}
	}
	data, err := json.Marshal(map[string]map[string]map[string]string{"auths": {
		"cloud.openshift.com": entry("lab", "not-used"),
		r.Host:                entry(username, password),
	}})
	if err != nil {
		panic(err) // maps of strings always marshal
	}
	return data
}

// tokenAuth is the token authentication of the distribution registry and of Quay (the registry
// of quay.io and of Red Hat's mirror-registry), as in the distribution token specification
// (distribution/distribution docs/spec/auth/token.md): a request without a valid bearer token
// gets 401 with WWW-Authenticate: Bearer realm=...,service=...,scope=...; the client asks the
// realm for a token with its credentials (HTTP basic) and repeats the request with it. Tokens
// never expire here; wrong or missing credentials get 401 from the realm.
type tokenAuth struct {
	username, password string
	realm, service     string

	mu     sync.Mutex
	tokens map[string]bool
}

// serveToken answers the realm: a token for the right credentials.
func (a *tokenAuth) serveToken(w http.ResponseWriter, req *http.Request) {
	u, p, ok := req.BasicAuth()
	if !ok || subtle.ConstantTimeCompare([]byte(u), []byte(a.username)) != 1 || subtle.ConstantTimeCompare([]byte(p), []byte(a.password)) != 1 {
		w.Header().Set("WWW-Authenticate", `Basic realm="`+a.realm+`"`)
		writeRegistryError(w, http.StatusUnauthorized, "UNAUTHORIZED", "authentication required")
		return
	}
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		http.Error(w, "no randomness", http.StatusInternalServerError)
		return
	}
	token := hex.EncodeToString(b)
	a.mu.Lock()
	a.tokens[token] = true
	a.mu.Unlock()
	// The token endpoint's answer (distribution docs/spec/auth/token.md).
	type tokenResponse struct {
		Token       string `json:"token"`
		AccessToken string `json:"access_token"`
		ExpiresIn   int    `json:"expires_in"`
		IssuedAt    string `json:"issued_at"`
	}
	writeJSON(w, http.StatusOK, tokenResponse{Token: token, AccessToken: token, ExpiresIn: 3600, IssuedAt: time.Now().UTC().Format(time.RFC3339)})
}

// allowed tells whether req carries a token the realm gave; otherwise it answers 401 with the
// challenge.
func (a *tokenAuth) allowed(w http.ResponseWriter, req *http.Request) bool {
	if token, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer "); ok {
		a.mu.Lock()
		valid := a.tokens[token]
		a.mu.Unlock()
		if valid {
			return true
		}
	}
	challenge := fmt.Sprintf(`Bearer realm=%q,service=%q`, a.realm, a.service)
	if repo := repository(req.URL.Path); repo != "" {
		challenge += fmt.Sprintf(`,scope="repository:%s:pull"`, repo)
	}
	w.Header().Set("WWW-Authenticate", challenge)
	writeRegistryError(w, http.StatusUnauthorized, "UNAUTHORIZED", "authentication required")
	return false
}

// repository is the repository of a /v2/<name>/(manifests|blobs|tags)/... path ("" for others).
func repository(p string) string {
	rest, ok := strings.CutPrefix(p, "/v2/")
	if !ok {
		return ""
	}
	for _, kind := range []string{"/manifests/", "/blobs/", "/tags/"} {
		if i := strings.Index(rest, kind); i > 0 {
			return rest[:i]
		}
	}
	return ""
}

// writeRegistryError writes an error of the distribution specification.
func writeRegistryError(w http.ResponseWriter, status int, code, message string) {
	type registryError struct {
		Code    string  `json:"code"`
		Message string  `json:"message"`
		Detail  *string `json:"detail"`
	}
	type registryErrors struct {
		Errors []registryError `json:"errors"`
	}
	writeJSON(w, status, registryErrors{Errors: []registryError{{Code: code, Message: message}}})
}

// writeJSON writes v as the JSON body of an answer of status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "encoding the answer: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(data)
}

// selfSignedCert returns a certificate for ip that is its own CA, and its PEM.
func selfSignedCert(ip net.IP) (tls.Certificate, []byte, error) {
	kp, err := pki.Issue(nil, pki.Request{CommonName: "lab mirror registry", CA: true,
		Usages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IPs: []net.IP{ip}})
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("issuing the registry's certificate: %w", err)
	}
	return tls.Certificate{Certificate: [][]byte{kp.Cert.Raw}, PrivateKey: kp.Key}, kp.CertPEM, nil
}
