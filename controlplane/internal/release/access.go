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
	"io/fs"
	"net/http"
	"os"
	"strings"

	"github.com/docker/cli/cli/config/configfile"
	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Access is what one read may use beyond the Reader's own settings: the credentials, the trust
// and the mirrors of the cluster whose release it is.
type Access struct {
	// Scope names where Load's answer comes from (for example the namespace and names of the pull
	// secret and of the image registry ConfigMap). The Reader keeps its answers per scope: reads
	// of other scopes never share them, and a read whose answer is kept loads nothing.
	Scope string
	// Load returns the read's Config. Called only when a registry is asked; nil: anonymous, the
	// Reader's trust, no mirrors. Its errors are shown to users (Summary): they must not quote
	// secrets.
	Load func(ctx context.Context) (Config, error)
}

// Config is the credentials, trust and mirrors of a read.
type Config struct {
	// PullSecret is a .dockerconfigjson, the cluster's pull secret: its auths entry for each
	// registry asked (matched as docker matches it: the host, with or without a scheme or path)
	// authenticates the requests to it. Empty, or no entry for a registry: anonymous.
	PullSecret []byte
	// CABundle holds PEM certificates trusted beside the system's and the Reader's CABundle: the
	// CA of the cluster's mirror.
	CABundle []byte
	// Mirrors are the cluster's mirrors (its registries.conf): a read tries the mirrors of its
	// repository first, then the repository itself.
	Mirrors []MirrorRule
}

// MirrorRule is a [[registry]] of containers-registries.conf(5): the mirrors of a source.
type MirrorRule struct {
	// Source is a registry host, a repository or a prefix of repositories (its location): it
	// applies to the repositories it names or that start with it and a "/"; of several, the
	// longest applies.
	Source string
	// Mirrors are tried in order, before the source.
	Mirrors []Mirror
}

// Mirror is a [[registry.mirror]]: its location replaces the rule's source in the repository.
type Mirror struct {
	Location string
	// PullFromMirror is "" or "all" (reads by digest and by tag), "digest-only" or "tag-only".
	PullFromMirror string
}

// serves tells whether m serves reads by digest (byDigest) or by tag.
func (m Mirror) serves(byDigest bool) bool {
	switch m.PullFromMirror {
	case "digest-only":
		return byDigest
	case "tag-only":
		return !byDigest
	default:
		return true
	}
}

// candidates returns the repositories a read of repo tries, in order: the mirrors of the longest
// rule that applies to it and serve such reads, then repo itself. A mirror whose location does
// not make a repository is skipped.
func candidates(rules []MirrorRule, repo name.Repository, byDigest bool, opts ...name.Option) []name.Repository {
	full := repo.Name()
	var rule *MirrorRule
	for i := range rules {
		src := strings.TrimSuffix(rules[i].Source, "/")
		if (full == src || strings.HasPrefix(full, src+"/")) && (rule == nil || len(src) > len(strings.TrimSuffix(rule.Source, "/"))) {
			rule = &rules[i]
		}
	}
	var out []name.Repository
	if rule != nil {
		rest := strings.TrimPrefix(full, strings.TrimSuffix(rule.Source, "/"))
		for _, m := range rule.Mirrors {
			if !m.serves(byDigest) {
				continue
			}
			if mr, err := name.NewRepository(strings.TrimSuffix(m.Location, "/")+rest, opts...); err == nil {
				out = append(out, mr)
			}
		}
	}
	return append(out, repo)
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

// accessError is an error of Access.Load.
type accessError struct{ err error }

func (e *accessError) Error() string { return e.err.Error() }
func (e *accessError) Unwrap() error { return e.err }

// route is a repository a read tries, with the options of the calls to its registry.
type route struct {
	repo      name.Repository
	opts      []remote.Option
	anonymous bool
}

// routes returns what a read of source (by digest or by tag) with cfg tries, in order: the
// allowed candidates, each with the credentials of its registry. None allowed:
// RegistryNotAllowedError, naming the first candidate's registry, and nothing is contacted.
func (r *Reader) routes(ctx context.Context, source name.Repository, byDigest bool, cfg Config) ([]route, error) {
	fileCAs, err := r.fileCAs()
	if err != nil {
		return nil, err
	}
	t, err := r.transport(r.CABundle, fileCAs, cfg.CABundle)
	if err != nil {
		return nil, &stageError{stage: "reading the CA bundle", err: err}
	}
	repos := candidates(cfg.Mirrors, source, byDigest, r.NameOptions...)
	var out []route
	for _, repo := range repos {
		registry := repo.RegistryStr()
		if r.checkRegistry(registry) != nil {
			continue
		}
		auth, err := authFor(cfg.PullSecret, registry)
		if err != nil {
			return nil, &stageError{stage: "reading the credentials for " + registry, err: err}
		}
		opts := append([]remote.Option{remote.WithContext(ctx)}, r.Options...)
		opts = append(opts, remote.WithAuth(auth))
		if t != nil {
			opts = append(opts, remote.WithTransport(t))
		}
		out = append(out, route{repo: repo, opts: opts, anonymous: auth == authn.Anonymous})
	}
	if len(out) == 0 {
		return nil, r.checkRegistry(repos[0].RegistryStr())
	}
	return out, nil
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
	_, _, transports := r.caches()
	r.mu.Lock() // one transport per key, however many reads ask at once
	defer r.mu.Unlock()
	if t, ok := transports.Get(key); ok {
		if t, ok := t.(http.RoundTripper); ok {
			return t, nil
		}
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
	transports.Add(key, t)
	return t, nil
}

// fileCAs reads the Reader's CAFile (nil without one, or when it does not exist).
func (r *Reader) fileCAs() ([]byte, error) {
	if r.CAFile == "" {
		return nil, nil
	}
	data, err := os.ReadFile(r.CAFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		// The cause reaches the manager's log (LogMessage), not the condition (Summary).
		return nil, &stageError{stage: "reading the manager's " + CAFileFlag, err: fmt.Errorf("%w: %w", errUnreadableCAFile, err)}
	case len(bytes.TrimSpace(data)) > 0 && !x509.NewCertPool().AppendCertsFromPEM(data):
		return nil, &stageError{stage: "reading the manager's " + CAFileFlag, err: errBadCABundle}
	}
	return data, nil
}

// errUnreadableCAFile: the manager's CA file exists but cannot be read.
var errUnreadableCAFile = errors.New("the file cannot be read (see the control-plane manager's log)")

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
