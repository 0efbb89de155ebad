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
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"

	"github.com/docker/cli/cli/config/configfile"
	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Access is what one read may use beyond the Reader's own settings: the credentials and the trust
// of the cluster whose release it is.
type Access struct {
	// Scope names where Credentials come from (for example the namespace and names of the pull
	// secret and of the CA ConfigMap). The Reader keeps its answers per scope: reads of other
	// scopes never share them, and a read whose answer is kept asks for no credentials.
	Scope string
	// Credentials returns the pull secret (a .dockerconfigjson, whose auths entry for the image's
	// registry authenticates the read, matched as docker matches it: the host, with or without a
	// scheme or path) and PEM certificates trusted beside the system's and the Reader's
	// CABundle (the CA of the cluster's mirror). Called only when the registry is asked. nil, or
	// empty answers: anonymous, with the Reader's trust. Its errors are shown to users (Summary):
	// they must not quote secrets.
	Credentials func(ctx context.Context) (pullSecret, caBundle []byte, err error)
}

// errBadPullSecret: the pull secret is not a .dockerconfigjson.
var errBadPullSecret = errors.New("the pull secret is not a valid .dockerconfigjson")

// authFor returns the authenticator that pullSecret gives for registry: anonymous when it is
// empty or has no entry for it.
func authFor(pullSecret []byte, registry string) (authn.Authenticator, error) {
	if len(bytes.TrimSpace(pullSecret)) == 0 {
		return authn.Anonymous, nil
	}
	cf := configfile.New("")
	if err := cf.LoadFromReader(bytes.NewReader(pullSecret)); err != nil {
		// Not wrapped: a parse error may quote the secret.
		return nil, errBadPullSecret
	}
	ac, err := cf.GetAuthConfig(registry)
	if err != nil {
		return nil, errBadPullSecret
	}
	cfg := authn.AuthConfig{Username: ac.Username, Password: ac.Password, Auth: ac.Auth,
		IdentityToken: ac.IdentityToken, RegistryToken: ac.RegistryToken}
	if cfg == (authn.AuthConfig{}) {
		return authn.Anonymous, nil
	}
	return authn.FromConfig(cfg), nil
}

// accessError is an error of Access.Credentials.
type accessError struct{ err error }

func (e *accessError) Error() string { return e.err.Error() }
func (e *accessError) Unwrap() error { return e.err }

// connection is how a read reaches a registry: the options of its calls, and whether they carry
// credentials.
type connection struct {
	opts      []remote.Option
	anonymous bool
}

// connect returns the connection of a read of registry with access, asking for its credentials.
func (r *Reader) connect(ctx context.Context, registry string, access Access) (connection, error) {
	var pullSecret, caBundle []byte
	if access.Credentials != nil {
		var err error
		if pullSecret, caBundle, err = access.Credentials(ctx); err != nil {
			return connection{}, &stageError{stage: "reading the credentials for " + registry, err: &accessError{err: err}}
		}
	}
	auth, err := authFor(pullSecret, registry)
	if err != nil {
		return connection{}, &stageError{stage: "reading the credentials for " + registry, err: err}
	}
	t, err := r.transport(r.CABundle, caBundle)
	if err != nil {
		return connection{}, &stageError{stage: "reading the CA bundle", err: err}
	}
	opts := append([]remote.Option{remote.WithContext(ctx)}, r.Options...)
	opts = append(opts, remote.WithAuth(auth))
	if t != nil {
		opts = append(opts, remote.WithTransport(t))
	}
	return connection{opts: opts, anonymous: auth == authn.Anonymous}, nil
}

// transport returns the HTTP transport of reads that trust the system's CAs and the PEM
// certificates of bundles (nil, the registry client's default, when bundles are empty). One
// transport per set of bundles is kept, so that reads with the same trust share connections.
func (r *Reader) transport(bundles ...[]byte) (http.RoundTripper, error) {
	h := sha256.New()
	empty := true
	for _, b := range bundles {
		if len(bytes.TrimSpace(b)) > 0 {
			empty = false
		}
		h.Write(b)
		h.Write([]byte{0})
	}
	if empty {
		return nil, nil
	}
	key := hex.EncodeToString(h.Sum(nil))
	r.mu.Lock()
	defer r.mu.Unlock()
	if t, ok := r.transports[key]; ok {
		return t, nil
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	for _, b := range bundles {
		if len(bytes.TrimSpace(b)) > 0 && !pool.AppendCertsFromPEM(b) {
			return nil, errBadCABundle
		}
	}
	base, ok := remote.DefaultTransport.(*http.Transport)
	if !ok {
		return nil, errors.New("the registry client's default transport is not an *http.Transport")
	}
	t := base.Clone() // keeps the proxy from the environment (HTTPS_PROXY, NO_PROXY)
	t.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if r.transports == nil {
		r.transports = map[string]http.RoundTripper{}
	}
	r.transports[key] = t
	return t, nil
}

// errBadCABundle: a CA bundle holds no PEM certificate.
var errBadCABundle = errors.New("the CA bundle holds no PEM certificate")

// credentialsError is the error of a read that the registry refused (HTTP 401 or 403), with
// whether credentials were sent.
type credentialsError struct {
	registry string
	sent     bool
	err      error
}

func (e *credentialsError) Error() string { return e.err.Error() }
func (e *credentialsError) Unwrap() error { return e.err }

// summary names what to do about the refusal.
func (e *credentialsError) summary(status string) string {
	if e.sent {
		return fmt.Sprintf("registry %s refused the pull secret's credentials for it: correct its auths entry in the pull secret (the registry answered %s)", e.registry, status)
	}
	return fmt.Sprintf("registry %s requires credentials and the pull secret has none for it: add an auths entry for %s to the pull secret (the registry answered %s)", e.registry, e.registry, status)
}
