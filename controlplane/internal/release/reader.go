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

// Package release reads OpenShift release images: the Kubernetes version a release carries, from
// the image-references ImageStream inside the release payload.
package release

import (
	"archive/tar"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	imagev1 "github.com/openshift/api/image/v1"
	"golang.org/x/sync/singleflight"
	"k8s.io/utils/lru"
)

const (
	// DefaultRepository is the repository of OpenShift's release images.
	DefaultRepository = "quay.io/openshift-release-dev/ocp-release"
	// ImageReferencesPath is the file, in the release image, listing the images of the release.
	ImageReferencesPath = "release-manifests/image-references"
	// BuildVersionsAnnotation is the annotation of an image-references tag listing the versions
	// of the components built into the image, as name=version pairs separated by commas.
	BuildVersionsAnnotation = "io.openshift.build.versions"
	// tagCacheTTL bounds how long a tag is trusted to point at the same digest.
	tagCacheTTL = 30 * time.Minute
)

// kubernetesTags are the image-references tags whose build versions name the Kubernetes version,
// in order of preference.
var kubernetesTags = []string{"hyperkube", "kube-apiserver"}

// Info is what the reader learned about a release image.
type Info struct {
	// Digest is the digest of the release image's manifest (sha256:...).
	Digest string
	// DigestImage is the release image pinned by digest (<repository>@<digest>).
	DigestImage string
	// KubernetesVersion is the Kubernetes version of the release as Cluster API writes versions,
	// with a leading v: for example v1.30.4.
	KubernetesVersion string
	// Platforms are the OCI platform architectures (amd64, arm64, ...) of the images of a
	// multi-architecture release, whose digest is that of its image index (manifest list); empty
	// for the release image of one architecture.
	Platforms []string
}

// content is what a release image's digest holds (cached per digest).
type content struct {
	kubernetesVersion string
	platforms         []string
}

// DefaultTimeout bounds a Read: enough to resolve a tag and read the release's top layer
// (release-manifests, tens of megabytes) over a slow link, through mirrors tried in turn.
const DefaultTimeout = 2 * time.Minute

// Reader resolves release images through a registry client. It caches what it reads per image
// digest (a digest's content never changes) and trusts a tag's digest for a while. It is safe for
// concurrent use: a cached answer costs a lock, and concurrent reads of one tag or digest cost one
// registry read.
type Reader struct {
	// Options are passed to every registry call (authentication, transport, platform).
	Options []remote.Option
	// NameOptions are used to parse image references (for example name.Insecure).
	NameOptions []name.Option
	// CABundle holds PEM certificates every read trusts beside the system's.
	CABundle []byte
	// CAFile is a PEM file of certificates every read trusts too (the manager's
	// --release-registry-ca-file: the CA of a hub-wide mirror, from a ConfigMap mounted as a
	// volume). It is read whenever a registry is asked, so a ConfigMap created or changed later
	// is followed without a restart; a file that does not exist adds nothing.
	CAFile string
	// AllowedRegistries are the registries (host or host:port, as image references spell them)
	// the Reader may contact; a read from any other is refused before anything is sent
	// (RegistryNotAllowedError). Empty: DefaultRegistry only. AnyRegistry allows every registry.
	AllowedRegistries []string
	// Timeout bounds a whole Read, registry requests and transfers included (0: DefaultTimeout).
	// A registry that accepts a connection and never answers would otherwise hold the reconcile,
	// and every reconcile waiting on the same read, for good.
	Timeout time.Duration

	mu sync.Mutex
	// byDigest (content) and byTag (tagEntry) are keyed by the Access scope and the image: reads
	// of another scope (other credentials or trust) never share an answer. transports
	// (*http.Transport) are keyed by the trusted CAs (see transport). Their keys come from what
	// tenants write (any tag or digest a spec names, any CA bundle), so each is a least recently
	// used cache of a fixed size, not a map that grows with them; created on first use (caches).
	byDigest, byTag, transports *lru.Cache
	bounds                      cacheBounds
	now                         func() time.Time
	// tags and reads collapse concurrent resolutions of one tag and reads of one digest into
	// one registry request. A waiter shares the reading call's context: reconciles of the same
	// manager, whose contexts end together.
	tags, reads singleflight.Group
}

// The caches' sizes. Digests and tags are kept per scope, and a scope is a cluster's namespace
// and pull secret: a fleet of clusters each in a namespace of its own holds a digest and a tag
// per cluster, two of each while it upgrades. The bounds hold a fleet of 2,000 clusters (1,000
// upgrading), and cap what a tenant's stream of made-up tags, digests or CA bundles can make the
// manager hold: about 300 bytes per digest or tag (2.5 MB in all), and a transport's idle
// connections per CA bundle. The bounds were 512 and 1,024: a fleet of 1,000 clusters on one
// release evicted every scope's digest before its next reconcile, which then read the pull
// secret and the registry again (35 pull secret reads per cluster in make bench's fleet).
const (
	maxCachedDigests    = 4096
	maxCachedTags       = 4096
	maxCachedTransports = 32
)

// caches returns the Reader's caches, created on first use, of the bounds above or of those a
// test set (bounds).
func (r *Reader) caches() (byDigest, byTag, transports *lru.Cache) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byDigest == nil {
		b := r.bounds
		if b == (cacheBounds{}) {
			b = cacheBounds{digests: maxCachedDigests, tags: maxCachedTags, transports: maxCachedTransports}
		}
		r.byDigest = lru.New(b.digests)
		r.byTag = lru.New(b.tags)
		// An evicted transport's idle connections are closed: nothing would use them again.
		r.transports = lru.NewWithEvictionFunc(b.transports, func(_ lru.Key, v any) {
			if t, ok := v.(*http.Transport); ok {
				t.CloseIdleConnections()
			}
		})
	}
	return r.byDigest, r.byTag, r.transports
}

// cacheBounds are the caches' sizes (zero: the constants above).
type cacheBounds struct{ digests, tags, transports int }

type tagEntry struct {
	digest  string
	fetched time.Time
}

// NewReader returns a Reader using opts for every registry call.
func NewReader(opts ...remote.Option) *Reader {
	return &Reader{Options: opts}
}

// Read returns the digest and Kubernetes version of the release image ref, read with access (the
// cluster's pull secret, CA bundle and mirrors: the mirrors of its repository are tried first).
// A registry that is not allowed is never contacted (RegistryNotAllowedError when no candidate
// is). Summary describes an error of Read without quoting a registry. Info names the image in
// ref's repository, wherever it was read.
func (r *Reader) Read(ctx context.Context, ref string, access Access) (Info, error) {
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	parsed, err := name.ParseReference(ref, r.NameOptions...)
	if err != nil {
		return Info{}, &stageError{stage: fmt.Sprintf("parsing release image %q", ref), err: err}
	}
	// The Config is loaded once, and only if a registry is asked.
	var (
		cfg     Config
		loadErr error
		loaded  bool
	)
	load := func() (Config, error) {
		if !loaded {
			loaded = true
			if access.Load != nil {
				if cfg, loadErr = access.Load(ctx); loadErr != nil {
					loadErr = &stageError{stage: "reading the credentials for " + parsed.Context().RegistryStr(), err: &accessError{err: loadErr}}
				}
			}
		}
		return cfg, loadErr
	}

	digest, err := r.digest(ctx, parsed, access.Scope, load)
	if err != nil {
		return Info{}, err
	}
	pinned := parsed.Context().Digest(digest)
	info := Info{Digest: digest, DigestImage: pinned.String()}
	key := access.Scope + " " + digest
	if c, ok := r.cached(key); ok {
		info.KubernetesVersion, info.Platforms = c.kubernetesVersion, slices.Clone(c.platforms)
		return info, nil
	}
	// The clusters of a fleet created at once on one release ask for the same digest together:
	// one of them reads it, the others wait for its answer (issue 19). The key is the pinned
	// image, not the digest alone: a caller never waits on a read from another repository, or
	// of another scope.
	v, err, _ := r.reads.Do(access.Scope+" "+pinned.String(), func() (any, error) {
		if c, ok := r.cached(key); ok {
			return c, nil // read by a flight that ended after this caller looked
		}
		cfg, err := load()
		if err != nil {
			return content{}, err
		}
		routes, err := r.routes(ctx, pinned.Context(), true, cfg)
		if err != nil {
			return content{}, err
		}
		var errs []error
		for _, rt := range routes {
			c, err := readContent(rt.repo.Digest(digest), rt)
			if err == nil {
				byDigest, _, _ := r.caches()
				byDigest.Add(key, c)
				return c, nil
			}
			errs = append(errs, err)
			if errors.Is(err, errNoImageReferences) || errors.Is(err, errNotImageStream) || errors.Is(err, errNoKubernetesVersion) ||
				errors.Is(err, errNoPlatformImage) {
				break // the same digest holds the same content everywhere
			}
		}
		return content{}, errors.Join(errs...)
	})
	if err != nil {
		return Info{}, err
	}
	c := v.(content) //nolint:forcetypeassert // the function above returns a content
	info.KubernetesVersion, info.Platforms = c.kubernetesVersion, slices.Clone(c.platforms)
	return info, nil
}

// refused wraps an error of the registry refusing a read (HTTP 401 or 403) with whether
// credentials were sent.
func refused(err error, rt route) error {
	var terr *transport.Error
	if errors.As(err, &terr) && (terr.StatusCode == http.StatusUnauthorized || terr.StatusCode == http.StatusForbidden) {
		return &credentialsError{registry: rt.repo.RegistryStr(), sent: !rt.anonymous, err: err}
	}
	return err
}

// readContent reads the Kubernetes version of the release pinned, through rt. A multi-architecture
// release is an image index (OpenShift's multi payload: one release image per architecture,
// each carrying the same release manifests): its platforms are listed, and the Kubernetes version
// is read from the image of one of them, the first the index lists.
func readContent(pinned name.Digest, rt route) (content, error) {
	desc, err := remote.Get(pinned, rt.opts...)
	if err != nil {
		return content{}, &stageError{stage: "reading release image " + pinned.String(), err: refused(err, rt)}
	}
	var c content
	img, err := desc.Image()
	if desc.MediaType.IsIndex() {
		img, c.platforms, err = platformImage(desc)
	}
	if err != nil {
		return content{}, &stageError{stage: "reading release image " + pinned.String(), err: refused(err, rt)}
	}
	data, err := findFile(img, ImageReferencesPath)
	if err != nil {
		return content{}, &stageError{stage: fmt.Sprintf("reading %s from release image %s", ImageReferencesPath, pinned), err: refused(err, rt)}
	}
	if c.kubernetesVersion, err = KubernetesVersionFromImageReferences(data); err != nil {
		return content{}, &stageError{stage: "release image " + pinned.String(), err: err}
	}
	return c, nil
}

// platformImage returns the image of the first platform of the image index desc, and the
// architectures of its platforms (entries without a platform, such as attestations, are not
// release images).
func platformImage(desc *remote.Descriptor) (v1.Image, []string, error) {
	idx, err := desc.ImageIndex()
	if err != nil {
		return nil, nil, err
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, nil, fmt.Errorf("reading the image index: %w", err)
	}
	var (
		first     *v1.Hash
		platforms []string
	)
	for _, d := range m.Manifests {
		if d.Platform == nil || d.Platform.Architecture == "" || d.Platform.Architecture == "unknown" || !d.MediaType.IsImage() {
			continue
		}
		if first == nil {
			first = &d.Digest
		}
		if !slices.Contains(platforms, d.Platform.Architecture) {
			platforms = append(platforms, d.Platform.Architecture)
		}
	}
	if first == nil {
		return nil, nil, errNoPlatformImage
	}
	img, err := idx.Image(*first)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the image of %s: %w", platforms[0], err)
	}
	slices.Sort(platforms)
	return img, platforms, nil
}

func (r *Reader) cached(key string) (content, bool) {
	byDigest, _, _ := r.caches()
	v, ok := byDigest.Get(key)
	if !ok {
		return content{}, false
	}
	c, ok := v.(content)
	return c, ok
}

// cachedTag returns the digest tag key was resolved to, if that was less than tagCacheTTL ago.
func (r *Reader) cachedTag(key string) (string, bool) {
	_, byTag, _ := r.caches()
	v, ok := byTag.Get(key)
	if !ok {
		return "", false
	}
	e, ok := v.(tagEntry)
	if !ok || r.clock().Sub(e.fetched) >= tagCacheTTL {
		return "", false
	}
	return e.digest, true
}

func (r *Reader) clock() time.Time {
	if r.now != nil {
		return r.now()
	}
	return time.Now()
}

// digest returns the manifest digest ref points at: its own digest when pinned, else the tag's,
// asked of the registries (mirrors first) at most once per tagCacheTTL.
func (r *Reader) digest(ctx context.Context, ref name.Reference, scope string, load func() (Config, error)) (string, error) {
	if d, ok := ref.(name.Digest); ok {
		return d.DigestStr(), nil
	}
	key := scope + " " + ref.String()
	if d, ok := r.cachedTag(key); ok {
		return d, nil
	}
	d, err, _ := r.tags.Do(key, func() (any, error) {
		if d, ok := r.cachedTag(key); ok {
			return d, nil // resolved by a flight that ended after this caller looked
		}
		cfg, err := load()
		if err != nil {
			return "", err
		}
		routes, err := r.routes(ctx, ref.Context(), false, cfg)
		if err != nil {
			return "", err
		}
		var errs []error
		for _, rt := range routes {
			tagged := rt.repo.Tag(ref.Identifier())
			desc, err := remote.Head(tagged, rt.opts...)
			if err != nil {
				errs = append(errs, &stageError{stage: "resolving release image " + tagged.String(), err: refused(err, rt)})
				continue
			}
			_, byTag, _ := r.caches()
			byTag.Add(key, tagEntry{digest: desc.Digest.String(), fetched: r.clock()})
			return desc.Digest.String(), nil
		}
		return "", errors.Join(errs...)
	})
	if err != nil {
		return "", err
	}
	return d.(string), nil //nolint:forcetypeassert // the function above returns a string
}

// findFile returns the content of file p in img, reading the layers from the top: the release
// manifests are in the image's last layer, so the large layers below are rarely read.
func findFile(img v1.Image, p string) ([]byte, error) {
	layers, err := img.Layers()
	if err != nil {
		return nil, fmt.Errorf("listing layers: %w", err)
	}
	want := path.Clean(p)
	for i := len(layers) - 1; i >= 0; i-- {
		data, found, err := fileInLayer(layers[i], want)
		if err != nil {
			return nil, err
		}
		if found {
			return data, nil
		}
	}
	return nil, errNoImageReferences
}

func fileInLayer(layer v1.Layer, want string) ([]byte, bool, error) {
	rc, err := layer.Uncompressed()
	if err != nil {
		return nil, false, fmt.Errorf("opening layer: %w", err)
	}
	defer func() { _ = rc.Close() }()
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil, false, nil
		}
		if err != nil {
			return nil, false, fmt.Errorf("reading layer: %w", err)
		}
		if path.Clean(strings.TrimPrefix(hdr.Name, "/")) != want || hdr.Typeflag != tar.TypeReg {
			continue
		}
		// image-references is a few hundred kilobytes; refuse anything absurd.
		data, err := io.ReadAll(io.LimitReader(tr, 64<<20))
		if err != nil {
			return nil, false, fmt.Errorf("reading %s: %w", want, err)
		}
		return data, true, nil
	}
}

// KubernetesVersionFromImageReferences returns the Kubernetes version named by the
// io.openshift.build.versions annotation of the hyperkube (or kube-apiserver) tag of an
// image-references ImageStream, with a leading v (v1.30.4), the form Cluster API uses in
// Machine.spec.version and a control plane's status.version.
func KubernetesVersionFromImageReferences(data []byte) (string, error) {
	is := &imagev1.ImageStream{}
	if err := json.Unmarshal(data, is); err != nil {
		return "", fmt.Errorf("parsing %s: %w: %w", ImageReferencesPath, errNotImageStream, err)
	}
	for _, want := range kubernetesTags {
		for _, tag := range is.Spec.Tags {
			if tag.Name != want {
				continue
			}
			for _, pair := range strings.Split(tag.Annotations[BuildVersionsAnnotation], ",") {
				k, v, ok := strings.Cut(strings.TrimSpace(pair), "=")
				if ok && k == "kubernetes" && v != "" {
					return "v" + strings.TrimPrefix(v, "v"), nil
				}
			}
		}
	}
	return "", fmt.Errorf("%w: no %q annotation naming kubernetes on the tags %v of %s",
		errNoKubernetesVersion, BuildVersionsAnnotation, kubernetesTags, ImageReferencesPath)
}
