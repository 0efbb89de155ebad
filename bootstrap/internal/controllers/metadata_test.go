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
	"context"
	"strings"
	"testing"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
)

// TestVariable: a whole value $NAME or ${NAME} names the variable NAME; anything else names none.
func TestVariable(t *testing.T) {
	for _, tc := range []struct {
		value, want string
		ok          bool
	}{
		{value: "$METADATA_NAME", want: "METADATA_NAME", ok: true},
		{value: "${METADATA_NAME}", want: "METADATA_NAME", ok: true},
		{value: "$metadata_local_hostname", want: "metadata_local_hostname", ok: true},
		{value: "${METADATA_NAME"},
		{value: "host-$METADATA_NAME"},
		{value: "$METADATA_NAME.example.com"},
		{value: "$1"},
		{value: "METADATA_NAME"},
		{value: ""},
	} {
		t.Run(tc.value, func(t *testing.T) {
			g := NewWithT(t)
			got, ok := variable(tc.value)
			g.Expect(got).To(Equal(tc.want))
			g.Expect(ok).To(Equal(tc.ok))
			g.Expect(isVariable(tc.value)).To(Equal(tc.ok))
		})
	}
}

// TestUsesMetadata: a config names host metadata variables when its nodeRegistration.name is
// one, its providerID contains one, or the value of one of its kubeletExtraLabels (without its
// quotes) is one.
func TestUsesMetadata(t *testing.T) {
	for _, tc := range []struct {
		name string
		reg  bootstrapv1.NodeRegistrationOptions
		want bool
	}{
		{name: "nothing set"},
		{name: "literal values", reg: bootstrapv1.NodeRegistrationOptions{Name: "host-0", ProviderID: "metal3://fixed", KubeletExtraLabels: []string{"rack=r1", "infra"}}},
		{name: "name", reg: bootstrapv1.NodeRegistrationOptions{Name: "${METADATA_NAME}"}, want: true},
		{name: "name with a variable inside", reg: bootstrapv1.NodeRegistrationOptions{Name: "host-$METADATA_NAME"}},
		{name: "providerID with a variable inside", reg: bootstrapv1.NodeRegistrationOptions{ProviderID: "metal3://ns/${METADATA_NAME}/m"}, want: true},
		{name: "providerID with another variable", reg: bootstrapv1.NodeRegistrationOptions{ProviderID: "metal3://$HOME"}},
		{name: "a label value", reg: bootstrapv1.NodeRegistrationOptions{KubeletExtraLabels: []string{"rack=r1", "uuid=$METADATA_UUID"}}, want: true},
		{name: "a quoted label value", reg: bootstrapv1.NodeRegistrationOptions{KubeletExtraLabels: []string{`metal3.io/uuid="${METADATA_UUID}"`}}, want: true},
		{name: "a label key", reg: bootstrapv1.NodeRegistrationOptions{KubeletExtraLabels: []string{"$METADATA_UUID=x"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(usesMetadata(&bootstrapv1.OpenshiftAssistedConfig{Spec: bootstrapv1.OpenshiftAssistedConfigSpec{NodeRegistration: tc.reg}})).To(Equal(tc.want))
		})
	}
}

// TestMetadataEnv reads a host's metadata variables as baremetal-operator writes its config
// drive: the BareMetalHost's defaults, overridden by its metaData Secret.
func TestMetadataEnv(t *testing.T) {
	g := NewWithT(t)
	bmh := &bmov1alpha1.BareMetalHost{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "host-7", UID: "bmh-uid"}}
	c := fake.NewClientBuilder().WithObjects(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m-metadata"},
		Data: map[string][]byte{"metaData": []byte("name: machine-0\nrack-id: r7\n")}}).Build()
	env, err := metadataEnv(context.Background(), c, bmh)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(env).To(Equal(map[string]string{"METADATA_UUID": "bmh-uid", "METADATA_METAL3_NAMESPACE": "ns", "METADATA_METAL3_NAME": "host-7",
		"METADATA_LOCAL_HOSTNAME": "host-7", "METADATA_NAME": "host-7"}), "without a metaData Secret: the host's defaults")

	bmh.Spec.MetaData = &corev1.SecretReference{Name: "m-metadata"}
	env, err = metadataEnv(context.Background(), c, bmh)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(env).To(HaveKeyWithValue("METADATA_NAME", "machine-0"), "the Secret overrides the defaults")
	g.Expect(env).To(HaveKeyWithValue("METADATA_RACK_ID", "r7"))
	g.Expect(env).To(HaveKeyWithValue("METADATA_LOCAL_HOSTNAME", "host-7"))

	bmh.Spec.MetaData = &corev1.SecretReference{Name: "not-yet"}
	_, err = metadataEnv(context.Background(), c, bmh)
	g.Expect(err).To(MatchError(ContainSubstring("reading the metaData Secret not-yet of BareMetalHost host-7")))
}

// TestMetadataEnvFromTheSecret: the metaData Secret is read from the host's namespace, and one
// that the reference puts in another namespace is refused without being read; a Secret without the metaData key leaves the defaults; each key becomes
// METADATA_<KEY in upper case, "-" as "_"> with the value as baremetal-operator writes it into
// meta_data.json; where two keys name one variable, the Secret's wins over a default, and the
// last in sorted order over the Secret's others, in every reconcile; a value that is no YAML map is
// an error that names the Secret.
func TestMetadataEnvFromTheSecret(t *testing.T) {
	defaults := map[string]string{"METADATA_UUID": "bmh-uid", "METADATA_METAL3_NAMESPACE": "hosts", "METADATA_METAL3_NAME": "host-7",
		"METADATA_LOCAL_HOSTNAME": "host-7", "METADATA_NAME": "host-7"}
	with := func(extra map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range defaults {
			out[k] = v
		}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	secret := func(ns string, data map[string][]byte) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m-metadata"}, Data: data}
	}
	for _, tc := range []struct {
		name    string
		refNS   string
		secret  *corev1.Secret
		want    map[string]string
		wantErr string
	}{
		{name: "in the host's namespace", secret: secret("hosts", map[string][]byte{"metaData": []byte("rack-id: r7\n")}),
			want: with(map[string]string{"METADATA_RACK_ID": "r7"})},
		{name: "in the host's namespace, which the reference names", refNS: "hosts", secret: secret("hosts", map[string][]byte{"metaData": []byte("rack-id: r7\n")}),
			want: with(map[string]string{"METADATA_RACK_ID": "r7"})},
		// Another tenant's Secret: refused without reading it, as baremetal-operator's webhook does.
		{name: "in another namespace, which the reference names", refNS: "machines", secret: secret("machines", map[string][]byte{"metaData": []byte("rack-id: r7\n")}),
			wantErr: "the metaData Secret of BareMetalHost host-7 is in another namespace, which is never read (baremetal-operator refuses cross-namespace Secret references too): reference a Secret of namespace hosts"},
		{name: "not in the host's namespace", secret: secret("machines", map[string][]byte{"metaData": []byte("rack-id: r7\n")}),
			wantErr: `reading the metaData Secret m-metadata of BareMetalHost host-7: secrets "m-metadata" not found`},
		{name: "without the metaData key", secret: secret("hosts", map[string][]byte{"userData": []byte("rack-id: r7\n")}), want: defaults},
		{name: "an empty metaData", secret: secret("hosts", map[string][]byte{"metaData": {}}), want: defaults},
		{name: "values that are not strings", secret: secret("hosts", map[string][]byte{"metaData": []byte(
			"serial: 12345678\nrack: 7\nratio: 1.5\nenabled: true\nzone: \"0042\"\n")}),
			want: with(map[string]string{"METADATA_SERIAL": "12345678", "METADATA_RACK": "7", "METADATA_RATIO": "1.5", "METADATA_ENABLED": "true", "METADATA_ZONE": "0042"})},
		{name: "keys in upper case, dashes as underscores", secret: secret("hosts", map[string][]byte{"metaData": []byte("My-Key: v\nname: machine-7\n")}),
			want: with(map[string]string{"METADATA_MY_KEY": "v", "METADATA_NAME": "machine-7"})},
		{name: "the Secret's key over a default of the same variable", secret: secret("hosts", map[string][]byte{"metaData": []byte("local-hostname: node-7\n")}),
			want: with(map[string]string{"METADATA_LOCAL_HOSTNAME": "node-7"})},
		{name: "the last of the Secret's keys of the same variable", secret: secret("hosts", map[string][]byte{"metaData": []byte("rack_id: r2\nrack-id: r1\n")}),
			want: with(map[string]string{"METADATA_RACK_ID": "r2"})},
		{name: "not a YAML map", secret: secret("hosts", map[string][]byte{"metaData": []byte("- a\n- b\n")}),
			wantErr: "the metaData Secret m-metadata of BareMetalHost host-7 is not a YAML map: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			bmh := &bmov1alpha1.BareMetalHost{ObjectMeta: metav1.ObjectMeta{Namespace: "hosts", Name: "host-7", UID: "bmh-uid"},
				Spec: bmov1alpha1.BareMetalHostSpec{MetaData: &corev1.SecretReference{Namespace: tc.refNS, Name: "m-metadata"}}}
			c := fake.NewClientBuilder().WithObjects(tc.secret).Build()
			// Several times: the same in every reconcile, whatever the order of a map.
			for range 10 {
				env, err := metadataEnv(context.Background(), c, bmh)
				if tc.wantErr != "" {
					g.Expect(err).To(MatchError(HavePrefix(tc.wantErr)))
					return
				}
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(env).To(Equal(tc.want))
			}
		})
	}
}

// TestExpand: a value that names no variable is kept as it is; a variable is resolved from the
// host's metadata; one without Metal3 metadata, or one the metadata lacks, is an error that says
// what to do (and which keys the host has, sorted).
func TestExpand(t *testing.T) {
	env := map[string]string{"METADATA_UUID": "8f0c", "METADATA_NAME": "host-7", "METADATA_EMPTY": ""}
	for _, tc := range []struct {
		name, value string
		env         map[string]string
		want        string
		wantErr     string
	}{
		{name: "a literal", value: "rack-1", env: env, want: "rack-1"},
		{name: "a literal without metadata", value: "rack-1", want: "rack-1"},
		{name: "a variable inside a value", value: "host-$METADATA_NAME", env: env, want: "host-$METADATA_NAME"},
		{name: "a variable", value: "$METADATA_NAME", env: env, want: "host-7"},
		{name: "a variable in braces", value: "${METADATA_UUID}", env: env, want: "8f0c"},
		{name: "an empty value", value: "$METADATA_EMPTY", env: env, want: ""},
		{name: "without metadata", value: "$METADATA_NAME",
			wantErr: "$METADATA_NAME names a host metadata variable, which only a Metal3 host (a BareMetalHost's metadata) provides; this Machine has none: write the value itself"},
		{name: "unknown", value: "${METADATA_RACK}", env: env,
			wantErr: "${METADATA_RACK} names no metadata of the host (it has METADATA_EMPTY, METADATA_NAME, METADATA_UUID): " +
				"correct the variable or add the key to the Metal3DataTemplate's metaData"},
		{name: "unknown, with empty metadata", value: "$METADATA_RACK", env: map[string]string{},
			wantErr: "$METADATA_RACK names no metadata of the host (it has ): correct the variable or add the key to the Metal3DataTemplate's metaData"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			got, err := expand(tc.value, tc.env)
			if tc.wantErr != "" {
				g.Expect(err).To(MatchError(tc.wantErr))
				g.Expect(got).To(BeEmpty())
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(tc.want))
		})
	}
}

// TestExpandAll: every $METADATA_X and ${METADATA_X} inside a value is resolved, the rest of the
// value (other variables included) kept; the first variable that cannot be resolved is the error.
func TestExpandAll(t *testing.T) {
	env := map[string]string{"METADATA_UUID": "8f0c", "METADATA_METAL3_NAMESPACE": "ns", "METADATA_NAME": "host-7"}
	for _, tc := range []struct {
		name, value string
		env         map[string]string
		want        string
		wantErr     string
	}{
		{name: "no variable", value: "metal3://fixed", env: env, want: "metal3://fixed"},
		{name: "no variable, no metadata", value: "metal3://fixed", want: "metal3://fixed"},
		{name: "one", value: "metal3://$METADATA_UUID", env: env, want: "metal3://8f0c"},
		{name: "several, with and without braces", value: "metal3://${METADATA_METAL3_NAMESPACE}/$METADATA_NAME/${METADATA_UUID}x", env: env,
			want: "metal3://ns/host-7/8f0cx"},
		{name: "the same twice", value: "$METADATA_NAME-$METADATA_NAME", env: env, want: "host-7-host-7"},
		{name: "other variables are kept", value: "$HOME/${USER}/$metadata_name", env: env, want: "$HOME/${USER}/$metadata_name"},
		{name: "unknown", value: "metal3://$METADATA_RACK/$METADATA_ROW", env: env,
			wantErr: "$METADATA_RACK names no metadata of the host (it has METADATA_METAL3_NAMESPACE, METADATA_NAME, METADATA_UUID): " +
				"correct the variable or add the key to the Metal3DataTemplate's metaData"},
		{name: "without metadata", value: "metal3://${METADATA_UUID}",
			wantErr: "${METADATA_UUID} names a host metadata variable, which only a Metal3 host (a BareMetalHost's metadata) provides; this Machine has none: write the value itself"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			got, err := expandAll(tc.value, tc.env)
			if tc.wantErr != "" {
				g.Expect(err).To(MatchError(tc.wantErr))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(tc.want))
		})
	}
}

// TestResolvedHostname: nodeRegistration.name resolved from the host's metadata, else the
// Machine's name; a name that cannot be resolved, or that resolves to no hostname, is an error
// that names the field.
func TestResolvedHostname(t *testing.T) {
	env := map[string]string{"METADATA_NAME": "host-7", "METADATA_BAD": "Host_7"}
	for _, tc := range []struct {
		name, nodeName string
		env            map[string]string
		want           string
		wantErr        string
	}{
		{name: "unset: the Machine's name", want: "machine-0"},
		{name: "unset, with metadata: the Machine's name", env: env, want: "machine-0"},
		{name: "a literal", nodeName: "worker-a.example.com", want: "worker-a.example.com"},
		{name: "a variable", nodeName: "$METADATA_NAME", env: env, want: "host-7"},
		{name: "a literal that is no hostname", nodeName: "Worker_A",
			wantErr: `nodeRegistration.name Worker_A resolves to "Worker_A", which is not a hostname: `},
		{name: "a variable that resolves to no hostname", nodeName: "${METADATA_BAD}", env: env,
			wantErr: `nodeRegistration.name ${METADATA_BAD} resolves to "Host_7", which is not a hostname: `},
		{name: "a variable without metadata", nodeName: "$METADATA_NAME",
			wantErr: "nodeRegistration.name: $METADATA_NAME names a host metadata variable, which only a Metal3 host"},
		{name: "an unknown variable", nodeName: "$METADATA_RACK", env: env,
			wantErr: "nodeRegistration.name: $METADATA_RACK names no metadata of the host (it has METADATA_BAD, METADATA_NAME)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			config := &bootstrapv1.OpenshiftAssistedConfig{Spec: bootstrapv1.OpenshiftAssistedConfigSpec{
				NodeRegistration: bootstrapv1.NodeRegistrationOptions{Name: tc.nodeName}}}
			got, err := resolvedHostname(config, "machine-0", tc.env)
			if tc.wantErr != "" {
				g.Expect(err).To(MatchError(HavePrefix(tc.wantErr)))
				g.Expect(got).To(BeEmpty())
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(tc.want))
		})
	}
}

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
