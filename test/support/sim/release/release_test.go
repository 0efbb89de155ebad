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
	"archive/tar"
	"context"
	"encoding/json"
	"io"
	"testing"

	"github.com/google/go-containerregistry/pkg/crane"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

func TestPushedReleaseCarriesItsKubernetesVersion(t *testing.T) {
	r := StartRegistry()
	defer r.Close()
	ref := r.Repository() + ":4.17.3-x86_64"
	if _, err := r.PushRelease(ref, "1.30.4"); err != nil {
		t.Fatal(err)
	}
	img, err := crane.Pull(ref)
	if err != nil {
		t.Fatal(err)
	}
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			t.Fatal("release-manifests/image-references not in the image")
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Name != "release-manifests/image-references" {
			continue
		}
		var stream struct {
			Spec struct {
				Tags []struct {
					Name        string            `json:"name"`
					Annotations map[string]string `json:"annotations"`
				} `json:"tags"`
			} `json:"spec"`
		}
		if err := json.NewDecoder(tr).Decode(&stream); err != nil {
			t.Fatal(err)
		}
		for _, tag := range stream.Spec.Tags {
			if tag.Name == "hyperkube" {
				if got := tag.Annotations["io.openshift.build.versions"]; got != "kubernetes=1.30.4,kubernetes-tests=1.30.4" {
					t.Fatalf("hyperkube build versions = %q", got)
				}
				if r.BlobGets.Load() == 0 {
					t.Error("the registry counted no blob download")
				}
				return
			}
		}
		t.Fatal("no hyperkube tag in image-references")
	}
}

func TestKubernetesVersionIsReadFromTheRegistry(t *testing.T) {
	r := StartRegistry()
	defer r.Close()
	for version, kube := range map[string]string{"4.16.20": "1.29.10", "4.17.3": "1.30.4"} {
		if _, err := r.PushRelease(r.Repository()+":"+version+"-x86_64", kube); err != nil {
			t.Fatal(err)
		}
	}
	got, err := ReadPayload(context.Background(), r.Repository()+":4.17.3-x86_64")
	if err != nil {
		t.Fatal(err)
	}
	if got.KubernetesVersion != "v1.30.4" {
		t.Errorf("ReadPayload(4.17.3).KubernetesVersion = %q, want v1.30.4", got.KubernetesVersion)
	}
	// By digest, the version is the payload's release metadata, not a tag's.
	img, err := crane.Pull(r.Repository() + ":4.16.20-x86_64")
	if err != nil {
		t.Fatal(err)
	}
	digest, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	p, err := ReadPayload(context.Background(), r.Repository()+"@"+digest.String())
	if err != nil {
		t.Fatal(err)
	}
	if p != (Payload{Version: "4.16.20", KubernetesVersion: "v1.29.10"}) {
		t.Errorf("ReadPayload(4.16.20 by digest) = %+v", p)
	}
	if _, err := ReadPayload(context.Background(), r.Repository()+":4.99.0-x86_64"); err == nil {
		t.Error("ReadPayload of a release the registry does not hold: no error")
	}
	img, err = Image(map[string][]byte{"other": []byte("x")})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Push(img, r.Repository()+":no-manifests"); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadPayload(context.Background(), r.Repository()+":no-manifests"); err == nil {
		t.Error("ReadPayload of an image without image-references: no error")
	}
}

// TestPushedMultiReleaseIsAnIndexOfItsArchitectures: a multi release is an image index with one
// release image per platform, and ReadPayload reads it (by tag and by digest) even without amd64.
func TestPushedMultiReleaseIsAnIndexOfItsArchitectures(t *testing.T) {
	r := StartRegistry()
	defer r.Close()
	ref := r.Repository() + ":4.17.3-multi"
	idx, err := r.PushMultiRelease(ref, "1.30.4", "arm64", "s390x")
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var platforms []string
	for _, d := range m.Manifests {
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if d.Platform == nil || cf.Architecture != d.Platform.Architecture || cf.OS != "linux" {
			t.Errorf("index entry %s: platform %v, image config %s/%s", d.Digest, d.Platform, cf.OS, cf.Architecture)
		}
		platforms = append(platforms, cf.Architecture)
	}
	if len(platforms) != 2 || platforms[0] != "arm64" || platforms[1] != "s390x" {
		t.Errorf("platforms = %v, want [arm64 s390x]", platforms)
	}
	digest, err := idx.Digest()
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{ref, r.Repository() + "@" + digest.String()} {
		p, err := ReadPayload(context.Background(), ref)
		if err != nil {
			t.Fatal(err)
		}
		if p != (Payload{Version: "4.17.3", KubernetesVersion: "v1.30.4"}) {
			t.Errorf("ReadPayload(%s) = %+v", ref, p)
		}
	}
}
