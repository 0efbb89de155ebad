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

func TestBootstrapData(t *testing.T) {
	override := `{"ignition":{"version":"3.2.0"},"passwd":{"users":[{"name":"core"}]}}`
	discovery := `{"ignition":{"version":"3.1.0"},"systemd":{"units":[{"name":"agent.service"}]}}`
	for _, tc := range []struct {
		name        string
		annotations map[string]string
		discovery   string
		// wantMerge are the configs merged, in order.
		wantMerge []string
		wantErr   string
	}{
		{name: "hostname only"},
		{name: "with ignition override", annotations: map[string]string{bootstrapv1.IgnitionOverrideAnnotation: override}, wantMerge: []string{override}},
		{name: "a disk image's: the discovery ignition", discovery: discovery, wantMerge: []string{discovery}},
		{name: "a disk image's, with ignition override: the override last, so that it wins", discovery: discovery,
			annotations: map[string]string{bootstrapv1.IgnitionOverrideAnnotation: override}, wantMerge: []string{discovery, override}},
		{name: "override not JSON", annotations: map[string]string{bootstrapv1.IgnitionOverrideAnnotation: "{"}, wantErr: "not a JSON Ignition config"},
		{name: "override not ignition", annotations: map[string]string{bootstrapv1.IgnitionOverrideAnnotation: `{"a":1}`}, wantErr: "no \"ignition\" section"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			config := &bootstrapv1.OpenshiftAssistedConfig{ObjectMeta: metav1.ObjectMeta{Name: "c", Annotations: tc.annotations}}
			data, err := bootstrapData(config, "worker-0", []byte(tc.discovery))
			if tc.wantErr != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tc.wantErr)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			var ign ignitionConfig
			g.Expect(json.Unmarshal(data, &ign)).To(Succeed())
			g.Expect(ign.Ignition.Version).To(Equal("3.2.0"))
			g.Expect(ign.Storage.Files).To(HaveLen(1))
			g.Expect(ign.Storage.Files[0].Path).To(Equal("/etc/hostname"))
			g.Expect(ign.Storage.Files[0].Contents.Source).To(Equal("data:,worker-0%0A"))
			if tc.discovery != "" {
				// What reconcileDataSecret reads back from the Secret rather than download it again.
				g.Expect(string(discoveryIgnitionOf(data))).To(Equal(tc.discovery))
			}
			if len(tc.wantMerge) == 0 {
				g.Expect(ign.Ignition.Config).To(BeNil())
				return
			}
			g.Expect(ign.Ignition.Config.Merge).To(HaveLen(len(tc.wantMerge)))
			for i, want := range tc.wantMerge {
				src := ign.Ignition.Config.Merge[i].Source
				g.Expect(src).To(HavePrefix("data:;base64,"))
				decoded, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(src, "data:;base64,"))
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(string(decoded)).To(Equal(want))
			}
		})
	}
}
