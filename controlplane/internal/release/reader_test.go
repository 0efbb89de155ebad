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
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/empty"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/controlplane/internal/release"
	simrelease "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/release"
)

// allowing returns a Reader that may contact the registries hosts.
func allowing(hosts ...string) *release.Reader {
	r := release.NewReader()
	r.AllowedRegistries = hosts
	return r
}

func startRegistry(t *testing.T) *simrelease.Registry {
	t.Helper()
	reg := simrelease.StartRegistry()
	t.Cleanup(reg.Close)
	return reg
}

// TestReaderReadsKubernetesVersionFromRegistry reads a release image the test built from an
// in-process registry, through a repository override (a mirror), and checks the per-digest cache.
func TestReaderReadsKubernetesVersionFromRegistry(t *testing.T) {
	reg := startRegistry(t)
	repo := reg.Host + "/mirror/ocp-release"
	ref := release.Image(repo, "4.17.3", "x86_64")
	img, err := reg.PushRelease(ref, "1.30.4")
	if err != nil {
		t.Fatal(err)
	}
	// The same payload under a second tag: the digest cache must answer for it.
	if err := reg.Push(img, release.Image(repo, "4.17.3", "aarch64")); err != nil {
		t.Fatal(err)
	}
	wantDigest, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}

	r := allowing(reg.Host)
	info, err := r.Read(context.Background(), ref, release.Access{})
	if err != nil {
		t.Fatal(err)
	}
	if info.KubernetesVersion != "v1.30.4" {
		t.Errorf("KubernetesVersion = %q, want v1.30.4", info.KubernetesVersion)
	}
	if info.Digest != wantDigest.String() {
		t.Errorf("Digest = %q, want %q", info.Digest, wantDigest)
	}
	if want := repo + "@" + wantDigest.String(); info.DigestImage != want {
		t.Errorf("DigestImage = %q, want %q", info.DigestImage, want)
	}
	first := reg.BlobGets.Load()
	if first == 0 {
		t.Fatal("the reader fetched no blob: the in-process registry was not used")
	}

	for _, again := range []string{ref, release.Image(repo, "4.17.3", "arm64"), info.DigestImage} {
		got, err := r.Read(context.Background(), again, release.Access{})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, info) {
			t.Errorf("Read(%s) = %+v, want %+v", again, got, info)
		}
	}
	if n := reg.BlobGets.Load(); n != first {
		t.Errorf("reading the same digest again fetched %d more blobs, want 0 (cached per digest)", n-first)
	}
}

func TestReaderErrors(t *testing.T) {
	reg := startRegistry(t)
	repo := reg.Host + "/ocp-release"
	for tag, files := range map[string]map[string][]byte{
		"no-manifests": {"other/file": []byte("x")},
		"no-kube":      {release.ImageReferencesPath: []byte(`{"spec":{"tags":[{"name":"etcd"}]}}`)},
		"not-json":     {release.ImageReferencesPath: []byte(`not json`)},
	} {
		img, err := simrelease.Image(files)
		if err != nil {
			t.Fatal(err)
		}
		if err := reg.Push(img, repo+":"+tag); err != nil {
			t.Fatal(err)
		}
	}

	for name, tc := range map[string]struct{ ref, wantErr string }{
		"missing image":         {ref: repo + ":4.99.0-x86_64", wantErr: "resolving release image"},
		"no image-references":   {ref: repo + ":no-manifests", wantErr: "file not found"},
		"no kubernetes version": {ref: repo + ":no-kube", wantErr: "naming kubernetes"},
		"not an ImageStream":    {ref: repo + ":not-json", wantErr: "parsing release-manifests/image-references"},
		"invalid reference":     {ref: "Not A Reference", wantErr: "parsing release image"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := allowing(reg.Host).Read(context.Background(), tc.ref, release.Access{})
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Read(%s) error = %v, want one containing %q", tc.ref, err, tc.wantErr)
			}
		})
	}
}

// TestReaderReadsOKDAndMultiReleases reads, from the in-process registry (through a repository
// override, as a mirror), an OKD release and a multi-architecture release: an image index whose
// digest is the release's, its Kubernetes version read from one platform's image, and its
// platforms listed.
func TestReaderReadsOKDAndMultiReleases(t *testing.T) {
	reg := startRegistry(t)
	okdRef := release.Image(reg.Host+"/okd/scos-release", "4.18.0-okd-scos.1", "x86_64")
	okd, err := reg.PushRelease(okdRef, "1.31.6")
	if err != nil {
		t.Fatal(err)
	}
	multiRef := release.Image(reg.Host+"/ocp-release", "4.17.3", release.MultiArchitecture)
	idx, err := reg.PushMultiRelease(multiRef, "1.30.4", "arm64", "amd64", "s390x")
	if err != nil {
		t.Fatal(err)
	}
	noPlatform := reg.Host + "/ocp-release:no-platform"
	if err := reg.PushIndex(empty.Index, noPlatform); err != nil {
		t.Fatal(err)
	}
	okdDigest, err := okd.Digest()
	if err != nil {
		t.Fatal(err)
	}
	idxDigest, err := idx.Digest()
	if err != nil {
		t.Fatal(err)
	}

	r := allowing(reg.Host)
	for _, tc := range []struct {
		name, ref, repo, wantDigest, wantKube string
		wantPlatforms                         []string
		wantErr                               string
	}{
		{name: "OKD", ref: okdRef, repo: reg.Host + "/okd/scos-release", wantDigest: okdDigest.String(), wantKube: "v1.31.6"},
		{name: "multi", ref: multiRef, repo: reg.Host + "/ocp-release", wantDigest: idxDigest.String(), wantKube: "v1.30.4", wantPlatforms: []string{"amd64", "arm64", "s390x"}},
		{name: "multi by digest", ref: reg.Host + "/ocp-release@" + idxDigest.String(), repo: reg.Host + "/ocp-release", wantDigest: idxDigest.String(), wantKube: "v1.30.4",
			wantPlatforms: []string{"amd64", "arm64", "s390x"}},
		{name: "index without platforms", ref: noPlatform, wantErr: "lists no image of a platform"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			info, err := r.Read(context.Background(), tc.ref, release.Access{})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(release.Summary(err), tc.wantErr) {
					t.Fatalf("Read(%s) error = %v, want one whose summary contains %q", tc.ref, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if info.Digest != tc.wantDigest || info.KubernetesVersion != tc.wantKube || !slices.Equal(info.Platforms, tc.wantPlatforms) {
				t.Errorf("Read(%s) = %+v, want digest %s, Kubernetes %s, platforms %v", tc.ref, info, tc.wantDigest, tc.wantKube, tc.wantPlatforms)
			}
			if want := tc.repo + "@" + tc.wantDigest; info.DigestImage != want {
				t.Errorf("DigestImage = %s, want %s", info.DigestImage, want)
			}
		})
	}
}

// BenchmarkReaderRead measures a release read from an in-process registry: cold (a new Reader:
// resolve the tag, fetch the manifest and the top layer) and cached (the tag's digest and the
// digest's version are known).
func BenchmarkReaderRead(b *testing.B) {
	reg := simrelease.StartRegistry()
	defer reg.Close()
	ref := release.Image(reg.Host+"/ocp-release", "4.17.3", "x86_64")
	if _, err := reg.PushRelease(ref, "1.30.4"); err != nil {
		b.Fatal(err)
	}
	b.Run("cold", func(b *testing.B) {
		for b.Loop() {
			if _, err := allowing(reg.Host).Read(context.Background(), ref, release.Access{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cached", func(b *testing.B) {
		r := allowing(reg.Host)
		for b.Loop() {
			if _, err := r.Read(context.Background(), ref, release.Access{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestReaderReadsOnceForConcurrentCallers: the control planes of a fleet created at once on one
// release read it together; the registry sees one tag resolution and one read of the image.
func TestReaderReadsOnceForConcurrentCallers(t *testing.T) {
	reg := startRegistry(t)
	ref := release.Image(reg.Host+"/ocp-release", "4.17.3", "x86_64")
	if _, err := reg.PushRelease(ref, "1.30.4"); err != nil {
		t.Fatal(err)
	}
	// What one read costs, from a Reader of its own.
	m0, b0 := reg.ManifestRequests.Load(), reg.BlobGets.Load()
	if _, err := allowing(reg.Host).Read(context.Background(), ref, release.Access{}); err != nil {
		t.Fatal(err)
	}
	oneManifests, oneBlobs := reg.ManifestRequests.Load()-m0, reg.BlobGets.Load()-b0
	m0, b0 = reg.ManifestRequests.Load(), reg.BlobGets.Load()

	r := allowing(reg.Host)
	const callers = 50
	start := make(chan struct{})
	var wg sync.WaitGroup
	infos := make([]release.Info, callers)
	errs := make([]error, callers)
	for i := range callers {
		wg.Go(func() {
			<-start
			infos[i], errs[i] = r.Read(context.Background(), ref, release.Access{})
		})
	}
	close(start)
	wg.Wait()
	for i := range callers {
		if errs[i] != nil || infos[i].KubernetesVersion != "v1.30.4" {
			t.Fatalf("caller %d: %+v, %v", i, infos[i], errs[i])
		}
	}
	manifests, blobs := reg.ManifestRequests.Load()-m0, reg.BlobGets.Load()-b0
	// The callers that come after the first read ends find the caches; those during it wait for it.
	if manifests != oneManifests || blobs != oneBlobs {
		t.Errorf("%d concurrent reads cost %d manifest requests and %d blob reads; one read costs %d and %d",
			callers, manifests, blobs, oneManifests, oneBlobs)
	}
}

// TestReaderKeepsAFleet: a fleet of 1,000 clusters, each in a namespace of its own (a scope), on
// one release tag: once each has read it, reading it again costs neither a registry request nor
// a read of its credentials (the pull secret, from the API server), in any scope. With the caches
// of 512 digests this fleet read both at every reconcile.
func TestReaderKeepsAFleet(t *testing.T) {
	reg := startRegistry(t)
	ref := release.Image(reg.Host+"/ocp-release", "4.17.3", "x86_64")
	if _, err := reg.PushRelease(ref, "1.30.4"); err != nil {
		t.Fatal(err)
	}
	r := allowing(reg.Host)
	var loads atomic.Int64
	access := func(i int) release.Access {
		return release.Access{Scope: fmt.Sprintf("fleet-%04d/pull-secret/", i), Load: func(context.Context) (release.Config, error) {
			loads.Add(1)
			return release.Config{}, nil
		}}
	}
	const clusters = 1000
	for i := range clusters {
		if _, err := r.Read(context.Background(), ref, access(i)); err != nil {
			t.Fatalf("cluster %d: %v", i, err)
		}
	}
	m0, l0 := reg.ManifestRequests.Load(), loads.Load()
	for i := range clusters {
		if info, err := r.Read(context.Background(), ref, access(i)); err != nil || info.KubernetesVersion != "v1.30.4" {
			t.Fatalf("cluster %d again: %+v, %v", i, info, err)
		}
	}
	if m, l := reg.ManifestRequests.Load()-m0, loads.Load()-l0; m != 0 || l != 0 {
		t.Errorf("the fleet's second reads cost %d manifest requests and %d credential reads, want none", m, l)
	}
}

// TestReaderTimesOut: a registry that accepts requests and never answers holds a read no longer
// than the Reader's Timeout, and the error says the registry did not answer in time.
func TestReaderTimesOut(t *testing.T) {
	stop := make(chan struct{})
	stalled := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	defer stalled.Close()
	defer close(stop)
	host := strings.TrimPrefix(stalled.URL, "http://")
	r := allowing(host)
	r.Timeout = 300 * time.Millisecond
	done := make(chan error, 1)
	go func() {
		_, err := r.Read(context.Background(), host+"/ocp-release:4.17.3-x86_64", release.Access{})
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("Read of a registry that never answers succeeded")
		}
		if got := release.Summary(err); !strings.Contains(got, "did not answer in time") {
			t.Errorf("Summary = %q, want it to say the registry did not answer in time (error %v)", got, err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Read of a registry that never answers did not end within 30 s of a 300 ms timeout")
	}
}
