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
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
)

// TestProviderIDDropIn: a resolved providerID reaches the installed host as the kubelet drop-in
// that sets KUBELET_PROVIDERID (systemd's quoting and specifier escaped), with the upstream
// ignition-override annotation's config merged; no providerID and no commands leave the annotation
// as it is.
func TestProviderIDDropIn(t *testing.T) {
	g := NewWithT(t)
	config := &bootstrapv1.OpenshiftAssistedConfig{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
		bootstrapv1.IgnitionOverrideAnnotation: `{"ignition":{"version":"3.1.0"},"storage":{"files":[{"path":"/etc/motd","contents":{"source":"data:,hi"}}]}}`,
	}}}
	raw, err := installIgnitionOverride(config, "")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(raw).To(Equal(config.Annotations[bootstrapv1.IgnitionOverrideAnnotation]))

	raw, err = installIgnitionOverride(config, `metal3://ns/host%1/"q"`)
	g.Expect(err).NotTo(HaveOccurred())
	var ign ignitionConfig
	g.Expect(json.Unmarshal([]byte(raw), &ign)).To(Succeed())
	paths := map[string]file{}
	for _, f := range ign.Storage.Files {
		paths[f.Path] = f
	}
	g.Expect(ign.Ignition.Config).NotTo(BeNil())
	g.Expect(ign.Ignition.Config.Merge).To(HaveLen(1), "the annotation's config is merged")
	merged, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(ign.Ignition.Config.Merge[0].Source, "data:;base64,"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(merged)).To(Equal(config.Annotations[bootstrapv1.IgnitionOverrideAnnotation]))
	g.Expect(paths).To(HaveKey(providerIDDropIn))
	dropIn := paths[providerIDDropIn]
	g.Expect(dropIn.Mode).To(Equal(0o644))
	contents, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(dropIn.Contents.Source, "data:;base64,"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(contents)).To(HaveSuffix("[Service]\nEnvironment=\"KUBELET_PROVIDERID=metal3://ns/host%%1/\\\"q\\\"\"\n"))
}
