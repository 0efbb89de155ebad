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

package controllers

import (
	"encoding/json"
	"testing"

	. "github.com/onsi/gomega"
	configv1 "github.com/openshift/api/config/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/validationtest"
)

// TestRegistryManifests: the manifests made from an image registry ConfigMap are upstream CAPOA's
// (GenerateImageRegistryData), and a ConfigMap that cannot be used says which key and why.
func TestRegistryManifests(t *testing.T) {
	ca := validationtest.Certificate()
	const mirrors = `
[[registry]]
location = "quay.io/openshift-release-dev/ocp-release"
  [[registry.mirror]]
  location = "mirror.example:5000/ocp/release"
  [[registry.mirror]]
  location = "tags.example:5000/ocp/release"
  pull-from-mirror = "tag-only"
[[registry]]
location = "quay.io/openshift-release-dev/ocp-v4.0-art-dev"
  [[registry.mirror]]
  location = "insecure.example:5000/ocp/art"
  insecure = true
`
	for _, tc := range []struct {
		name string
		data map[string]string
		// want are the manifests' keys; wantErr, when set, the error.
		want    []string
		wantErr string
	}{
		{name: "digest and tag mirrors, an insecure one", data: map[string]string{registriesConfKey: mirrors},
			want: []string{idmsManifestKey, itmsManifestKey, imageConfigManifestKey}},
		{name: "with the mirrors' CA", data: map[string]string{registriesConfKey: mirrors, registryCAKey: ca},
			want: []string{idmsManifestKey, itmsManifestKey, registryCAManifestKey, imageConfigManifestKey}},
		{name: "digest mirror only, no CA: no image config",
			data: map[string]string{registriesConfKey: "[[registry]]\nlocation = \"quay.io\"\n[[registry.mirror]]\nlocation = \"m.example\"\n"},
			want: []string{idmsManifestKey}},
		{name: "no registries.conf", data: map[string]string{registryCAKey: ca}, wantErr: "it has no registries.conf key"},
		{name: "not TOML", data: map[string]string{registriesConfKey: "[[registry"}, wantErr: "its registries.conf is not valid TOML"},
		{name: "no mirror at all", data: map[string]string{registriesConfKey: "unqualified-search-registries = [\"quay.io\"]\n"}, wantErr: "names no mirror"},
		{name: "a registry without mirrors", data: map[string]string{registriesConfKey: "[[registry]]\nlocation = \"quay.io\"\n"},
			wantErr: "registry quay.io of its registries.conf has no [[registry.mirror]]"},
		{name: "a registry without location", data: map[string]string{registriesConfKey: "[[registry]]\n[[registry.mirror]]\nlocation = \"m\"\n"},
			wantErr: "registry 1 of its registries.conf has no location"},
		{name: "an unknown pull-from-mirror",
			data:    map[string]string{registriesConfKey: "[[registry]]\nlocation = \"quay.io\"\n[[registry.mirror]]\nlocation = \"m\"\npull-from-mirror = \"sometimes\"\n"},
			wantErr: `has pull-from-mirror "sometimes": use all, digest-only or tag-only`},
		{name: "a CA that is not PEM", data: map[string]string{registriesConfKey: mirrors, registryCAKey: "not a certificate"},
			wantErr: "its ca-bundle.crt: holds no PEM-encoded certificate"},
		{name: "a private key in the CA bundle", data: map[string]string{registriesConfKey: mirrors, registryCAKey: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"},
			wantErr: "its ca-bundle.crt: PEM block 1 is a private key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			data, err := registryManifests(&corev1.ConfigMap{Data: tc.data})
			if tc.wantErr != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tc.wantErr)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			keys := make([]string, 0, len(data))
			for k := range data {
				keys = append(keys, k)
			}
			g.Expect(keys).To(ConsistOf(tc.want))
		})
	}

	t.Run("the manifests' contents", func(t *testing.T) {
		g := NewWithT(t)
		data, err := registryManifests(&corev1.ConfigMap{Data: map[string]string{registriesConfKey: mirrors, registryCAKey: ca}})
		g.Expect(err).NotTo(HaveOccurred())
		var idms configv1.ImageDigestMirrorSet
		g.Expect(json.Unmarshal([]byte(data[idmsManifestKey]), &idms)).To(Succeed())
		g.Expect(idms.Kind).To(Equal("ImageDigestMirrorSet"))
		g.Expect(idms.APIVersion).To(Equal("config.openshift.io/v1"))
		g.Expect(idms.Name).To(Equal("additional-registry"))
		g.Expect(idms.Spec.ImageDigestMirrors).To(Equal([]configv1.ImageDigestMirrors{
			{Source: "quay.io/openshift-release-dev/ocp-release", Mirrors: []configv1.ImageMirror{"mirror.example:5000/ocp/release"}},
			{Source: "quay.io/openshift-release-dev/ocp-v4.0-art-dev", Mirrors: []configv1.ImageMirror{"insecure.example:5000/ocp/art"}},
		}))
		var itms configv1.ImageTagMirrorSet
		g.Expect(json.Unmarshal([]byte(data[itmsManifestKey]), &itms)).To(Succeed())
		g.Expect(itms.Spec.ImageTagMirrors).To(Equal([]configv1.ImageTagMirrors{
			{Source: "quay.io/openshift-release-dev/ocp-release", Mirrors: []configv1.ImageMirror{"tags.example:5000/ocp/release"}},
		}))
		var caCM corev1.ConfigMap
		g.Expect(json.Unmarshal([]byte(data[registryCAManifestKey]), &caCM)).To(Succeed())
		g.Expect(caCM.Namespace).To(Equal("openshift-config"))
		g.Expect(caCM.Name).To(Equal("additional-registry-certificate"))
		g.Expect(caCM.Data).To(Equal(map[string]string{"ca-bundle.crt": ca}))
		var image configv1.Image
		g.Expect(json.Unmarshal([]byte(data[imageConfigManifestKey]), &image)).To(Succeed())
		g.Expect(image.Name).To(Equal("cluster"))
		g.Expect(image.Spec.AdditionalTrustedCA.Name).To(Equal("additional-registry-certificate"))
		g.Expect(image.Spec.RegistrySources.InsecureRegistries).To(Equal([]string{"insecure.example:5000/ocp/art"}))
	})
}

// TestAssistedKeepsMirrors: a hub's assisted-service, given the ConfigMap through
// spec.mirrorRegistryRef, drops mirrors with pull-from-mirror "all": such a ConfigMap is refused
// with what to change; the values it keeps pass.
func TestAssistedKeepsMirrors(t *testing.T) {
	conf := func(pull string) string {
		c := "[[registry]]\nlocation = \"quay.io/ocp\"\n[[registry.mirror]]\nlocation = \"mirror:5000/ocp\"\n"
		if pull != "" {
			c += "pull-from-mirror = \"" + pull + "\"\n"
		}
		return c
	}
	for pull, wantErr := range map[string]string{
		"": "", "digest-only": "", "tag-only": "",
		"all": `mirror mirror:5000/ocp of registry quay.io/ocp in its registries.conf has pull-from-mirror "all", which the hub's assisted-service ignores: remove that line`,
	} {
		t.Run("pull-from-mirror "+pull, func(t *testing.T) {
			g := NewWithT(t)
			err := assistedKeepsMirrors(conf(pull))
			if wantErr == "" {
				g.Expect(err).NotTo(HaveOccurred())
				return
			}
			g.Expect(err).To(MatchError(ContainSubstring(wantErr)))
		})
	}
}
