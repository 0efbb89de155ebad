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
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
)

// TestResolvedProviderID: nodeRegistration.providerID with its host metadata variables resolved,
// refused when a variable cannot be, or when the result is not the providerID the
// infrastructure provider reports for the Machine (Cluster API would never find the Node).
func TestResolvedProviderID(t *testing.T) {
	env := map[string]string{"METADATA_UUID": "0f6a", "METADATA_METAL3_NAMESPACE": "ns", "METADATA_NAME": "host-0"}
	tests := []struct {
		name, providerID, machineProviderID string
		env                                 map[string]string
		want, wantErr                       string
	}{
		{name: "unset", want: ""},
		{name: "literal", providerID: "metal3://fixed", want: "metal3://fixed"},
		{name: "variable", providerID: "metal3://$METADATA_UUID", env: env, want: "metal3://0f6a"},
		{name: "variables with braces", providerID: "metal3://${METADATA_METAL3_NAMESPACE}/${METADATA_NAME}/m", env: env, want: "metal3://ns/host-0/m"},
		{name: "as the infrastructure provider reports", providerID: "metal3://$METADATA_UUID", machineProviderID: "metal3://0f6a", env: env, want: "metal3://0f6a"},
		{name: "unknown variable", providerID: "metal3://$METADATA_RACK", env: env, wantErr: "nodeRegistration.providerID: $METADATA_RACK names no metadata of the host"},
		{name: "no Metal3 host", providerID: "metal3://$METADATA_UUID", wantErr: "only a Metal3 host"},
		{name: "not what the infrastructure provider reports", providerID: "metal3://$METADATA_UUID", machineProviderID: "metal3://ns/host-0/m", env: env,
			wantErr: `nodeRegistration.providerID resolves to "metal3://0f6a", but the infrastructure provider reports "metal3://ns/host-0/m" for Machine m0`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			config := &bootstrapv1.OpenshiftAssistedConfig{Spec: bootstrapv1.OpenshiftAssistedConfigSpec{
				NodeRegistration: bootstrapv1.NodeRegistrationOptions{ProviderID: tt.providerID}}}
			machine := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "m0"}, Spec: clusterv1.MachineSpec{ProviderID: tt.machineProviderID}}
			got, err := resolvedProviderID(config, machine, tt.env)
			if tt.wantErr != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tt.wantErr)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(tt.want))
			g.Expect(usesMetadata(config)).To(Equal(strings.Contains(tt.providerID, "$")))
		})
	}
}

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
