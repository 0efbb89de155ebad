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

// Package release serves OpenShift-like release images from an in-process registry, for the lab
// and the tests: the control-plane provider reads a release's Kubernetes version from the image's
// release-manifests/image-references, as it does from quay.io, and nothing reaches the internet.
package release

import (
	"archive/tar"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"

	"github.com/google/go-containerregistry/pkg/crane"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// ImageReferences returns the release-manifests/image-references of a release whose Kubernetes
// version is kubeVersion: an ImageStream whose hyperkube tag names it in the
// io.openshift.build.versions annotation, as in OpenShift's release images.
func ImageReferences(kubeVersion string) []byte {
	type tag struct {
		Name        string            `json:"name"`
		Annotations map[string]string `json:"annotations"`
		From        map[string]string `json:"from"`
	}
	stream := map[string]any{
		"kind": "ImageStream", "apiVersion": "image.openshift.io/v1",
		"metadata": map[string]string{"name": "release"},
		"spec": map[string][]tag{"tags": {
			{Name: "etcd", Annotations: map[string]string{"io.openshift.build.versions": "etcd=3.5.14"},
				From: map[string]string{"kind": "DockerImage", "name": "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:1"}},
			{Name: "hyperkube", Annotations: map[string]string{
				"io.openshift.build.versions": "kubernetes=" + kubeVersion + ",kubernetes-tests=" + kubeVersion},
				From: map[string]string{"kind": "DockerImage", "name": "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:2"}},
		}},
	}
	data, err := json.Marshal(stream)
	if err != nil {
		panic(err) // a literal map of strings always marshals
	}
	return data
}

// ImageReferencesPath is where a release image holds its image-references.
const ImageReferencesPath = "release-manifests/image-references"

// MetadataPath is where a release image holds its release metadata (cincinnati-metadata-v0), the
// version that `oc adm release info`, assisted-service and the cluster-version operator read from a
// payload, whatever its tag or digest (openshift/oc pkg/cli/admin/release/image_mapper.go,
// ReleaseMetadata).
const MetadataPath = "release-manifests/release-metadata"

// Metadata returns the release metadata of OpenShift version.
func Metadata(version string) []byte {
	data, err := json.Marshal(map[string]any{"kind": "cincinnati-metadata-v0", "version": version,
		"previous": []string{}, "metadata": map[string]string{}})
	if err != nil {
		panic(err) // a literal map always marshals
	}
	return data
}

// TagVersion is the OpenShift version a release image's tag names, as OpenShift's release builds
// tag them (quay.io/openshift-release-dev/ocp-release:4.14.3-x86_64 → 4.14.3); "" for an image
// pinned by digest or without such a tag.
func TagVersion(image string) string {
	if strings.Contains(image, "@") {
		return ""
	}
	i := strings.LastIndex(image, ":")
	if i < 0 || strings.Contains(image[i:], "/") {
		return ""
	}
	tag := image[i+1:]
	for _, arch := range []string{"-x86_64", "-aarch64", "-multi", "-ppc64le", "-s390x"} {
		tag = strings.TrimSuffix(tag, arch)
	}
	return tag
}

// Payload is what a release image says of itself.
type Payload struct {
	// Version is the OpenShift version of its release metadata ("" when it has none).
	Version string
	// KubernetesVersion is the kubernetes entry of the hyperkube tag's io.openshift.build.versions
	// annotation in its image-references, with a leading v (v1.30.4), as the control-plane
	// provider reads it (controlplane/internal/release): the version of the kubelet the release's
	// RHCOS runs, which the simulators give to the Nodes of a cluster installed from it.
	KubernetesVersion string
}

// ReadPayload reads the release image ref from its registry (opts: the registry's RemoteOptions
// for a secure one), by tag or by digest.
func ReadPayload(ctx context.Context, ref string, opts ...remote.Option) (Payload, error) {
	parsed, err := name.ParseReference(ref)
	if err != nil {
		return Payload{}, fmt.Errorf("parsing release image %q: %w", ref, err)
	}
	desc, err := remote.Get(parsed, append([]remote.Option{remote.WithContext(ctx)}, opts...)...)
	if err != nil {
		return Payload{}, fmt.Errorf("reading release image %s: %w", ref, err)
	}
	img, err := payloadImage(desc)
	if err != nil {
		return Payload{}, fmt.Errorf("reading release image %s: %w", ref, err)
	}
	rc := mutate.Extract(img)
	defer func() { _ = rc.Close() }()
	tr := tar.NewReader(rc)
	var p Payload
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Payload{}, fmt.Errorf("reading release image %s: %w", ref, err)
		}
		switch strings.TrimPrefix(h.Name, "/") {
		case MetadataPath:
			var md struct {
				Version string `json:"version"`
			}
			if err := json.NewDecoder(tr).Decode(&md); err != nil {
				return Payload{}, fmt.Errorf("parsing %s of release image %s: %w", MetadataPath, ref, err)
			}
			p.Version = md.Version
		case ImageReferencesPath:
			if p.KubernetesVersion, err = hyperkubeVersion(tr); err != nil {
				return Payload{}, fmt.Errorf("release image %s: %w", ref, err)
			}
		}
	}
	if p.KubernetesVersion == "" {
		return Payload{}, fmt.Errorf("release image %s has no %s naming a Kubernetes version", ref, ImageReferencesPath)
	}
	return p, nil
}

// payloadImage is the release image desc names: itself, or the first image of a multi-architecture
// release's index (every architecture's payload says the same of the release).
func payloadImage(desc *remote.Descriptor) (v1.Image, error) {
	if !desc.MediaType.IsIndex() {
		return desc.Image()
	}
	idx, err := desc.ImageIndex()
	if err != nil {
		return nil, err
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	for _, d := range m.Manifests {
		if d.MediaType.IsImage() {
			return idx.Image(d.Digest)
		}
	}
	return nil, errors.New("the image index lists no image")
}

// hyperkubeVersion reads the Kubernetes version of an image-references ImageStream.
func hyperkubeVersion(r io.Reader) (string, error) {
	var stream struct {
		Spec struct {
			Tags []struct {
				Name        string            `json:"name"`
				Annotations map[string]string `json:"annotations"`
			} `json:"tags"`
		} `json:"spec"`
	}
	if err := json.NewDecoder(r).Decode(&stream); err != nil {
		return "", fmt.Errorf("parsing %s: %w", ImageReferencesPath, err)
	}
	for _, tag := range stream.Spec.Tags {
		if tag.Name != "hyperkube" {
			continue
		}
		for _, pair := range strings.Split(tag.Annotations["io.openshift.build.versions"], ",") {
			if k, v, ok := strings.Cut(strings.TrimSpace(pair), "="); ok && k == "kubernetes" && v != "" {
				return "v" + strings.TrimPrefix(v, "v"), nil
			}
		}
	}
	return "", fmt.Errorf("no kubernetes version on the hyperkube tag of %s", ImageReferencesPath)
}

// Image builds a release-like image: a random base layer and a top layer holding files.
func Image(files map[string][]byte) (v1.Image, error) {
	base, err := random.Layer(4096, "application/vnd.docker.image.rootfs.diff.tar.gzip")
	if err != nil {
		return nil, err
	}
	top, err := crane.Layer(files)
	if err != nil {
		return nil, err
	}
	return mutate.AppendLayers(empty.Image, base, top)
}

// Registry is an in-process registry that counts the blobs and manifests it serves: plain HTTP
// on 127.0.0.1 (StartRegistry), which go-containerregistry talks to without TLS, or HTTPS with
// token authentication (StartSecureRegistry).
type Registry struct {
	// Host is the registry's host:port.
	Host string
	// BlobGets counts the blob downloads served.
	BlobGets atomic.Int32
	// ManifestRequests counts the manifest requests served (HEAD, to resolve a tag, and GET).
	ManifestRequests atomic.Int32
	server           *httptest.Server
	// caPEM and opts: see CACertPEM and RemoteOptions.
	caPEM []byte
	opts  []remote.Option
}

// StartRegistry starts an in-process registry; Close stops it.
func StartRegistry() *Registry {
	r := &Registry{}
	r.server = newServer(r, nil)
	r.server.Start()
	r.Host = strings.TrimPrefix(r.server.URL, "http://")
	return r
}

// newServer returns the registry's unstarted server, requiring auth's tokens unless auth is nil.
func newServer(r *Registry, auth *tokenAuth) *httptest.Server {
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if auth != nil {
			if req.URL.Path == "/v2/auth" {
				auth.serveToken(w, req)
				return
			}
			if !auth.allowed(w, req) {
				return
			}
		}
		if req.Method == http.MethodGet && strings.Contains(req.URL.Path, "/blobs/") {
			r.BlobGets.Add(1)
		}
		if strings.Contains(req.URL.Path, "/manifests/") {
			r.ManifestRequests.Add(1)
		}
		reg.ServeHTTP(w, req)
	}))
	// TLS handshakes of clients that do not trust the certificate would be logged to stderr.
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	return srv
}

// Close stops the registry.
func (r *Registry) Close() { r.server.Close() }

// Push pushes img as ref.
func (r *Registry) Push(img v1.Image, ref string) error {
	parsed, err := name.ParseReference(ref)
	if err != nil {
		return err
	}
	if err := remote.Write(parsed, img, r.opts...); err != nil {
		return fmt.Errorf("pushing %s: %w", ref, err)
	}
	return nil
}

// PushRelease builds and pushes the release image ref whose Kubernetes version is kubeVersion,
// with the release metadata of the version its tag names (TagVersion), as a release build tags
// its payload.
func (r *Registry) PushRelease(ref, kubeVersion string) (v1.Image, error) {
	files := map[string][]byte{ImageReferencesPath: ImageReferences(kubeVersion)}
	if v := TagVersion(ref); v != "" {
		files[MetadataPath] = Metadata(v)
	}
	img, err := Image(files)
	if err != nil {
		return nil, err
	}
	return img, r.Push(img, ref)
}

// PushMultiRelease builds and pushes the multi-architecture release ref, as OpenShift publishes
// its multi payload (quay.io/openshift-release-dev/ocp-release:4.17.3-multi): an image index
// (OCI image index, or manifest list) with one release image per architecture (OCI platform
// names: amd64, arm64, ppc64le, s390x; linux), each built as PushRelease builds one. It returns
// the index, whose digest a ClusterImageSet pins.
func (r *Registry) PushMultiRelease(ref, kubeVersion string, architectures ...string) (v1.ImageIndex, error) {
	if len(architectures) == 0 {
		return nil, fmt.Errorf("a multi-architecture release needs architectures")
	}
	files := map[string][]byte{ImageReferencesPath: ImageReferences(kubeVersion)}
	if v := TagVersion(ref); v != "" {
		files[MetadataPath] = Metadata(v)
	}
	var idx v1.ImageIndex = empty.Index
	for _, arch := range architectures {
		img, err := Image(files)
		if err != nil {
			return nil, err
		}
		cf, err := img.ConfigFile()
		if err != nil {
			return nil, err
		}
		cf = cf.DeepCopy()
		cf.OS, cf.Architecture = "linux", arch
		if img, err = mutate.ConfigFile(img, cf); err != nil {
			return nil, err
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img,
			Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: arch}}})
	}
	return idx, r.PushIndex(idx, ref)
}

// PushIndex pushes the image index idx as ref.
func (r *Registry) PushIndex(idx v1.ImageIndex, ref string) error {
	parsed, err := name.ParseReference(ref)
	if err != nil {
		return err
	}
	if err := remote.WriteIndex(parsed, idx, r.opts...); err != nil {
		return fmt.Errorf("pushing %s: %w", ref, err)
	}
	return nil
}

// Repository returns the registry's repository of OpenShift releases, to use as the release-image
// repository override (mirror) of a control plane.
func (r *Registry) Repository() string { return r.Host + "/openshift-release-dev/ocp-release" }
