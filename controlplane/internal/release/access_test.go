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

package release_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/controlplane/internal/release"
	simrelease "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/release"
)

const (
	mirrorUser     = "mirror-reader"
	mirrorPassword = "s3cr3t-mirror-password"
	// unreachable is a registry that refuses connections.
	unreachable = "127.0.0.1:1"
)

// startMirror starts a registry as a disconnected site's mirror is (HTTPS with its own CA, token
// authentication) holding the release 4.17.3 of Kubernetes 1.30.4.
func startMirror(t *testing.T) (*simrelease.Registry, string) {
	t.Helper()
	reg, err := simrelease.StartSecureRegistry(simrelease.SecureOptions{Username: mirrorUser, Password: mirrorPassword})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(reg.Close)
	ref := release.Image(reg.Host+"/ocp/release", "4.17.3", "x86_64")
	if _, err := reg.PushRelease(ref, "1.30.4"); err != nil {
		t.Fatal(err)
	}
	return reg, ref
}

// access returns the Access of a cluster whose pull secret and CA bundle are these.
func access(scope string, pullSecret, ca []byte) release.Access {
	return release.Access{Scope: scope, Load: func(context.Context) (release.Config, error) {
		return release.Config{PullSecret: pullSecret, CABundle: ca}, nil
	}}
}

// TestReaderThroughAnAuthenticatedTLSMirror: the reader reads a release from a mirror served over
// HTTPS by a private CA and requiring credentials, with the cluster's pull secret and CA bundle
// (or the manager's CA); each way it can fail ends in a Summary that names the registry and the
// class of failure, with no credential in it.
func TestReaderThroughAnAuthenticatedTLSMirror(t *testing.T) {
	reg, ref := startMirror(t)
	good := reg.PullSecret(mirrorUser, mirrorPassword)
	wrong := reg.PullSecret(mirrorUser, "not-the-password")
	otherOnly := []byte(`{"auths":{"quay.io":{"auth":"` + "cXVheTpwYXNz" + `"}}}`)

	for name, tc := range map[string]struct {
		access     release.Access
		readerCA   bool
		wantErr    []string
		wantNoText []string
	}{
		"pull secret and the cluster's CA": {access: access("a", good, reg.CACertPEM())},
		"pull secret and the manager's CA": {access: access("a", good, nil), readerCA: true},
		"no CA": {access: access("a", good, nil),
			wantErr: []string{"TLS certificate is not trusted", "ca-bundle.crt", release.CAFileFlag}},
		"no entry for the registry": {access: access("a", otherOnly, reg.CACertPEM()),
			wantErr: []string{"registry " + reg.Host + " requires credentials", "add an auths entry for " + reg.Host, "HTTP 401 Unauthorized"}},
		"no pull secret": {access: release.Access{Scope: "a"}, readerCA: true,
			wantErr: []string{"requires credentials", "the pull secret has none for it"}},
		"wrong password": {access: access("a", wrong, reg.CACertPEM()),
			wantErr: []string{"registry " + reg.Host + " refused the pull secret's credentials", "HTTP 401"}, wantNoText: []string{"not-the-password"}},
		"a pull secret that is not JSON": {access: access("a", []byte(`{"auths": `+mirrorPassword), reg.CACertPEM()),
			wantErr: []string{"reading the credentials for " + reg.Host, "the pull secret is not a valid .dockerconfigjson"}},
		"a CA bundle without certificates": {access: access("a", good, []byte("not PEM")),
			wantErr: []string{"the CA bundle holds no PEM certificate"}},
		"the credentials cannot be read": {access: release.Access{Scope: "a", Load: func(context.Context) (release.Config, error) {
			return release.Config{}, errors.New("the pull secret lab-pull-secret (spec.config.pullSecretRef) does not exist")
		}}, wantErr: []string{"reading the credentials for " + reg.Host + ": the pull secret lab-pull-secret (spec.config.pullSecretRef) does not exist"}},
	} {
		t.Run(name, func(t *testing.T) {
			r := allowing(reg.Host)
			if tc.readerCA {
				r.CABundle = reg.CACertPEM()
			}
			info, err := r.Read(context.Background(), ref, tc.access)
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Fatalf("Read: %v", err)
				}
				if info.KubernetesVersion != "v1.30.4" || !strings.HasPrefix(info.DigestImage, reg.Host+"/ocp/release@sha256:") {
					t.Errorf("Read = %+v, want Kubernetes v1.30.4 pinned in the mirror", info)
				}
				return
			}
			if err == nil {
				t.Fatalf("Read succeeded: %+v", info)
			}
			summary := release.Summary(err)
			for _, want := range tc.wantErr {
				if !strings.Contains(summary, want) {
					t.Errorf("Summary = %q, want it to contain %q", summary, want)
				}
			}
			for _, secret := range append(tc.wantNoText, mirrorPassword, "authentication required") {
				if strings.Contains(summary, secret) || strings.Contains(release.LogMessage(err), mirrorPassword) {
					t.Errorf("Summary %q or the log message quotes %q", summary, secret)
				}
			}
		})
	}
}

// TestReaderKeepsAnswersPerScope: a read answered from what the reader keeps asks for no
// credentials, and another scope (another cluster's pull secret) is never answered from it.
func TestReaderKeepsAnswersPerScope(t *testing.T) {
	reg, ref := startMirror(t)
	r := allowing(reg.Host)
	r.CABundle = reg.CACertPEM()
	var asked atomic.Int32
	withCreds := release.Access{Scope: "ns/pull-secret/", Load: func(context.Context) (release.Config, error) {
		asked.Add(1)
		return release.Config{PullSecret: reg.PullSecret(mirrorUser, mirrorPassword)}, nil
	}}
	for range 3 {
		if _, err := r.Read(context.Background(), ref, withCreds); err != nil {
			t.Fatal(err)
		}
	}
	if n := asked.Load(); n != 1 {
		t.Errorf("the credentials were read %d times for 3 reads of one release, want 1 (the answer is kept)", n)
	}
	_, err := r.Read(context.Background(), ref, release.Access{Scope: "other/no-pull-secret/"})
	if err == nil || !strings.Contains(release.Summary(err), "requires credentials") {
		t.Errorf("a scope without credentials read %v (%v), want the registry's refusal, not another scope's answer", err, release.Summary(err))
	}
}

// TestReaderReadsThroughTheClustersMirrors: a release of quay.io, which the manager may not (or
// cannot) reach, is read through the mirrors of the cluster's registries.conf, in order, each
// as its pull-from-mirror allows; the answer names the image in quay.io, pinned by digest, as the
// cluster's ImageDigestMirrorSet resolves it.
func TestReaderReadsThroughTheClustersMirrors(t *testing.T) {
	reg, _ := startMirror(t)
	const source = "quay.io/openshift-release-dev/ocp-release"
	ref := release.Image(source, "4.17.3", "x86_64")
	mirrored := reg.Host + "/ocp/ocp-release"
	img, err := reg.PushRelease(release.Image(mirrored, "4.17.3", "x86_64"), "1.30.4")
	if err != nil {
		t.Fatal(err)
	}
	digest, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	// quay.io is not allowed: were it asked, the read would fail with RegistryNotAllowedError.
	r := allowing(reg.Host, unreachable)
	withMirrors := func(mirrors ...release.Mirror) release.Access {
		return release.Access{Scope: fmt.Sprint(mirrors), Load: func(context.Context) (release.Config, error) {
			return release.Config{PullSecret: reg.PullSecret(mirrorUser, mirrorPassword), CABundle: reg.CACertPEM(),
				Mirrors: []release.MirrorRule{
					{Source: "quay.io", Mirrors: []release.Mirror{{Location: unreachable + "/everything"}}},
					{Source: "quay.io/openshift-release-dev", Mirrors: mirrors},
				}}, nil
		}}
	}
	for name, tc := range map[string]struct {
		ref     string
		access  release.Access
		wantErr string
	}{
		"a mirror of tags and digests": {ref: ref, access: withMirrors(release.Mirror{Location: reg.Host + "/ocp"})},
		"an unreachable mirror, then one that answers": {ref: ref, access: withMirrors(
			release.Mirror{Location: unreachable + "/ocp"}, release.Mirror{Location: reg.Host + "/ocp", PullFromMirror: "all"})},
		"a tag-only mirror resolves the tag, a digest-only one reads the digest": {ref: ref, access: withMirrors(
			release.Mirror{Location: reg.Host + "/ocp", PullFromMirror: "tag-only"}, release.Mirror{Location: reg.Host + "/ocp", PullFromMirror: "digest-only"})},
		"a digest through a digest-only mirror": {ref: source + "@" + digest.String(), access: withMirrors(
			release.Mirror{Location: reg.Host + "/ocp", PullFromMirror: "digest-only"})},
		"a tag and only a digest-only mirror": {ref: ref, access: withMirrors(release.Mirror{Location: reg.Host + "/ocp", PullFromMirror: "digest-only"}),
			wantErr: "registry quay.io is not allowed"},
		"a mirror without the release": {ref: ref, access: withMirrors(release.Mirror{Location: reg.Host + "/elsewhere"}),
			wantErr: "resolving release image " + reg.Host + "/elsewhere/ocp-release:4.17.3-x86_64: the registry answered HTTP 404"},
	} {
		t.Run(name, func(t *testing.T) {
			info, err := r.Read(context.Background(), tc.ref, tc.access)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(release.Summary(err), tc.wantErr) {
					t.Fatalf("Read = %+v, %v; want an error saying %q", info, release.Summary(err), tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Read: %s", release.Summary(err))
			}
			if want := source + "@" + digest.String(); info.DigestImage != want || info.KubernetesVersion != "v1.30.4" {
				t.Errorf("Read = %+v, want %s of Kubernetes v1.30.4", info, want)
			}
		})
	}
}

// TestReaderFollowsItsCAFile: the manager's CA file (a mounted ConfigMap) adds nothing while it
// does not exist, and is trusted from the first read after it appears, without a new Reader.
func TestReaderFollowsItsCAFile(t *testing.T) {
	reg, ref := startMirror(t)
	r := allowing(reg.Host)
	r.CAFile = filepath.Join(t.TempDir(), "ca-bundle.crt")
	creds := access("a", reg.PullSecret(mirrorUser, mirrorPassword), nil)
	if _, err := r.Read(context.Background(), ref, creds); err == nil || !strings.Contains(release.Summary(err), "not trusted") {
		t.Fatalf("Read without the CA file: %v, want the certificate not trusted", release.Summary(err))
	}
	// A CA file that cannot be read: the condition says so, the manager's log says why.
	dir := r.CAFile
	r.CAFile = t.TempDir()
	_, err := r.Read(context.Background(), ref, creds)
	if summary := release.Summary(err); err == nil || !strings.Contains(summary, release.CAFileFlag+": the file cannot be read") || strings.Contains(summary, "directory") {
		t.Fatalf("Read with a CA file that cannot be read: %q", summary)
	}
	if msg := release.LogMessage(err); !strings.Contains(msg, "is a directory") {
		t.Errorf("LogMessage = %q, want the cause", msg)
	}
	r.CAFile = dir
	if err := os.WriteFile(r.CAFile, []byte("not PEM"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Read(context.Background(), ref, creds); err == nil || !strings.Contains(release.Summary(err), release.CAFileFlag+": the CA bundle holds no PEM certificate") {
		t.Fatalf("Read with a CA file that is not PEM: %v", release.Summary(err))
	}
	if err := os.WriteFile(r.CAFile, reg.CACertPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	if info, err := r.Read(context.Background(), ref, creds); err != nil || info.KubernetesVersion != "v1.30.4" {
		t.Fatalf("Read with the CA file: %+v, %v", info, release.Summary(err))
	}
}

// TestReaderCachesAreBounded: what the reader keeps is keyed by what tenants write (each cluster's
// scope, release and CA bundle), so a stream of new keys must not grow it without end: past each
// bound, the least recently used entries go, and a read of a forgotten key still succeeds.
func TestReaderCachesAreBounded(t *testing.T) {
	reg, ref := startMirror(t)
	const digests, tags, transports = 12, 16, 4 // the production bounds take thousands of reads to fill
	r := release.WithCacheBounds(allowing(reg.Host), digests, tags, transports)
	good := reg.PullSecret(mirrorUser, mirrorPassword)
	read := func(scope string, ca []byte) {
		t.Helper()
		if _, err := r.Read(context.Background(), ref, access(scope, good, ca)); err != nil {
			t.Fatalf("Read in scope %s: %v", scope, err)
		}
	}
	// Each CA bundle its own transport (the same certificate, told apart by a trailing comment).
	for i := range transports + 8 {
		read(fmt.Sprintf("ca-%d", i), append(reg.CACertPEM(), fmt.Sprintf("\n# bundle %d\n", i)...))
	}
	// Each scope its own tag and content entries.
	for i := range tags + 8 {
		read(fmt.Sprintf("scope-%d", i), reg.CACertPEM())
	}
	d, tg, tr := r.CachedEntries()
	if d != digests || tg != tags || tr != transports {
		t.Errorf("the reader keeps %d contents, %d tags and %d transports, want each at its bound (%d, %d, %d)", d, tg, tr, digests, tags, transports)
	}
	read("ca-0", append(reg.CACertPEM(), "\n# bundle 0\n"...)) // forgotten: read again
}
