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

package validation_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/validation"
)

// errorStrings is what a test compares: the errors' messages, in order.
func errorStrings(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

const proxyHow = ": write the proxy as http://<host>:<port>, such as http://proxy.example.com:3128"

func TestProxy(t *testing.T) {
	const noProxyHow = ": is not a domain, an IP address or a CIDR: noProxy is a comma-separated list such as .example.com,10.0.0.0/16,192.168.1.5 " +
		"(a leading dot includes the subdomains; * bypasses the proxy for every destination)"
	valid := &validation.ProxySettings{HTTPProxy: "http://proxy:3128", HTTPSProxy: "https://proxy:3129", NoProxy: ".cluster.local,10.0.0.0/8"}
	invalid := &validation.ProxySettings{HTTPProxy: "https://proxy:3128", HTTPSProxy: "ftp://proxy", NoProxy: "a b"}
	allInvalid := []string{
		`p.httpProxy: Invalid value: "https://proxy:3128": the scheme must be http, not https` + proxyHow,
		`p.httpsProxy: Invalid value: "ftp://proxy": the scheme must be http or https, not ftp` + proxyHow,
		`p.noProxy: Invalid value: "a b"` + noProxyHow,
	}
	for _, tc := range []struct {
		name   string
		p, old *validation.ProxySettings
		want   []string
	}{
		{name: "no proxy", p: nil, old: invalid},
		{name: "valid, on create", p: valid},
		{name: "empty settings", p: &validation.ProxySettings{}},
		// httpProxy takes http only, httpsProxy http or https.
		{name: "invalid, on create", p: invalid, want: allInvalid},
		{name: "invalid, changed from valid ones", p: invalid, old: valid, want: allInvalid},
		{name: "invalid, unchanged", p: invalid, old: invalid},
		{name: "removed", p: &validation.ProxySettings{}, old: invalid},
		{name: "one changed", p: &validation.ProxySettings{HTTPProxy: invalid.HTTPProxy, HTTPSProxy: "ftp://other", NoProxy: invalid.NoProxy}, old: invalid,
			want: []string{`p.httpsProxy: Invalid value: "ftp://other": the scheme must be http or https, not ftp` + proxyHow}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := errorStrings(validation.Proxy(field.NewPath("p"), tc.p, tc.old)); !slices.Equal(got, tc.want) {
				t.Errorf("Proxy:\n got  %q\n want %q", got, tc.want)
			}
		})
	}
}

// TestConfigSpec checks each field's rule of ConfigSpec on create and on update: what is checked,
// with what message, and what is left alone.
func TestConfigSpec(t *testing.T) {
	const labelHow = "; write key=value, such as node-role.kubernetes.io/infra= or topology.kubernetes.io/zone=rack1"
	badName := `spec.pullSecretRef.name: Invalid value: "Pull": is not a valid object name: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', ` +
		`and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`
	badSelector := metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: "Equals"}}}
	spec := func(f func(*bootstrapv1.OpenshiftAssistedConfigSpec)) *bootstrapv1.OpenshiftAssistedConfigSpec {
		s := &bootstrapv1.OpenshiftAssistedConfigSpec{}
		f(s)
		return s
	}
	none := func(*bootstrapv1.OpenshiftAssistedConfigSpec) {}
	for _, tc := range []struct {
		name      string
		spec, old *bootstrapv1.OpenshiftAssistedConfigSpec
		want      []string
	}{
		{name: "an empty spec, on create", spec: spec(none)},
		{name: "proxy removed", spec: spec(none), old: spec(func(s *bootstrapv1.OpenshiftAssistedConfigSpec) {
			s.Proxy = &aiv1beta1.Proxy{HTTPProxy: "proxy:3128", NoProxy: "a b"}
		})},
		// The stored httpsProxy and noProxy are compared with the new ones, not with nothing.
		{name: "proxy: only the changed field", spec: spec(func(s *bootstrapv1.OpenshiftAssistedConfigSpec) {
			s.Proxy = &aiv1beta1.Proxy{HTTPProxy: "https://proxy:3128", HTTPSProxy: "ftp://proxy", NoProxy: "a b"}
		}), old: spec(func(s *bootstrapv1.OpenshiftAssistedConfigSpec) {
			s.Proxy = &aiv1beta1.Proxy{HTTPProxy: "http://proxy:3128", HTTPSProxy: "ftp://proxy", NoProxy: "a b"}
		}), want: []string{`spec.proxy.httpProxy: Invalid value: "https://proxy:3128": the scheme must be http, not https` + proxyHow}},
		{name: "pull secret: set on update", spec: spec(func(s *bootstrapv1.OpenshiftAssistedConfigSpec) {
			s.PullSecretRef = &corev1.LocalObjectReference{Name: "Pull"}
		}), old: spec(none), want: []string{badName}},
		{name: "pull secret: renamed", spec: spec(func(s *bootstrapv1.OpenshiftAssistedConfigSpec) {
			s.PullSecretRef = &corev1.LocalObjectReference{Name: "Pull"}
		}), old: spec(func(s *bootstrapv1.OpenshiftAssistedConfigSpec) {
			s.PullSecretRef = &corev1.LocalObjectReference{Name: "pull-secret"}
		}), want: []string{badName}},
		{name: "pull secret: kept", spec: spec(func(s *bootstrapv1.OpenshiftAssistedConfigSpec) {
			s.PullSecretRef = &corev1.LocalObjectReference{Name: "Pull"}
		}), old: spec(func(s *bootstrapv1.OpenshiftAssistedConfigSpec) {
			s.PullSecretRef = &corev1.LocalObjectReference{Name: "Pull"}
		})},
		{name: "pull secret: removed", spec: spec(none), old: spec(func(s *bootstrapv1.OpenshiftAssistedConfigSpec) {
			s.PullSecretRef = &corev1.LocalObjectReference{Name: "Pull"}
		})},
		{name: "SSH key: changed", spec: spec(func(s *bootstrapv1.OpenshiftAssistedConfigSpec) { s.SSHAuthorizedKey = "ssh-rsa" }),
			old:  spec(func(s *bootstrapv1.OpenshiftAssistedConfigSpec) { s.SSHAuthorizedKey = sshKey }),
			want: []string{"spec.sshAuthorizedKey: Invalid value: line 1 is not an SSH public key: it has no key data after ssh-rsa" + sshHow}},
		{name: "SSH key: cleared", spec: spec(none), old: spec(func(s *bootstrapv1.OpenshiftAssistedConfigSpec) { s.SSHAuthorizedKey = "ssh-rsa" })},
		{name: "trust bundle: changed", spec: spec(func(s *bootstrapv1.OpenshiftAssistedConfigSpec) { s.AdditionalTrustBundle = "none" }),
			old: spec(func(s *bootstrapv1.OpenshiftAssistedConfigSpec) { s.AdditionalTrustBundle = caCert }),
			want: []string{"spec.additionalTrustBundle: Invalid value: holds no PEM-encoded certificate: give one or more PEM-encoded CA certificates, " +
				"each from -----BEGIN CERTIFICATE----- to -----END CERTIFICATE-----"}},
		{name: "trust bundle: removed", spec: spec(none), old: spec(func(s *bootstrapv1.OpenshiftAssistedConfigSpec) { s.AdditionalTrustBundle = "none" })},
		{name: "NMState selector: changed", spec: spec(func(s *bootstrapv1.OpenshiftAssistedConfigSpec) { s.NMStateConfigLabelSelector = badSelector }),
			old:  spec(none),
			want: []string{`spec.nmStateConfigLabelSelector.matchExpressions[0].operator: Invalid value: "Equals": not a valid selector operator`}},
		{name: "NMState selector: kept", spec: spec(func(s *bootstrapv1.OpenshiftAssistedConfigSpec) { s.NMStateConfigLabelSelector = badSelector }),
			old: spec(func(s *bootstrapv1.OpenshiftAssistedConfigSpec) { s.NMStateConfigLabelSelector = badSelector })},
		// A new label is checked at its index in the new list; a kept one, wherever it moved, is not.
		{name: "kubelet labels: a new one", spec: spec(func(s *bootstrapv1.OpenshiftAssistedConfigSpec) {
			s.NodeRegistration.KubeletExtraLabels = []string{"a b=c", "rack=r 1"}
		}), old: spec(func(s *bootstrapv1.OpenshiftAssistedConfigSpec) {
			s.NodeRegistration.KubeletExtraLabels = []string{"a b=c"}
		}), want: []string{`spec.nodeRegistration.kubeletExtraLabels[1]: Invalid value: "rack=r 1": the label value "r 1" is not valid: a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')` + labelHow}},
		{name: "kubelet labels: reordered", spec: spec(func(s *bootstrapv1.OpenshiftAssistedConfigSpec) {
			s.NodeRegistration.KubeletExtraLabels = []string{"rack=r1", "a b=c"}
		}), old: spec(func(s *bootstrapv1.OpenshiftAssistedConfigSpec) {
			s.NodeRegistration.KubeletExtraLabels = []string{"a b=c", "rack=r1"}
		})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := errorStrings(validation.ConfigSpec(field.NewPath("spec"), tc.spec, tc.old)); !slices.Equal(got, tc.want) {
				t.Errorf("ConfigSpec:\n got  %q\n want %q", got, tc.want)
			}
		})
	}
}

func TestConfigSpecChecksOnlyWhatChanged(t *testing.T) {
	root := field.NewPath("spec")
	bad := bootstrapv1.OpenshiftAssistedConfigSpec{
		Proxy:                      &aiv1beta1.Proxy{HTTPProxy: "proxy:3128", HTTPSProxy: "ftp://proxy", NoProxy: "a b"},
		PullSecretRef:              &corev1.LocalObjectReference{Name: "Pull"},
		SSHAuthorizedKey:           "ssh-ed25519 AAAA",
		NMStateConfigLabelSelector: metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: "Equals"}}},
		AdditionalTrustBundle:      "not a certificate",
		NodeRegistration:           bootstrapv1.NodeRegistrationOptions{KubeletExtraLabels: []string{"rack=r1", "a b=c"}},
	}
	fields := func(errs field.ErrorList) string {
		var out []string
		for _, e := range errs {
			out = append(out, e.Field)
		}
		return strings.Join(out, ",")
	}
	const all = "spec.proxy.httpProxy,spec.proxy.httpsProxy,spec.proxy.noProxy,spec.pullSecretRef.name,spec.sshAuthorizedKey," +
		"spec.nmStateConfigLabelSelector.matchExpressions[0].operator,spec.additionalTrustBundle,spec.nodeRegistration.kubeletExtraLabels[1]"
	if got := fields(validation.ConfigSpec(root, &bad, nil)); got != all {
		t.Errorf("create: got errors on %s, want %s", got, all)
	}
	// A stored object with the same invalid values can still be updated (finalizers, labels, other fields).
	changed := bad.DeepCopy()
	changed.CpuArchitecture = "aarch64"
	if got := fields(validation.ConfigSpec(root, changed, &bad)); got != "" {
		t.Errorf("update of other fields: got errors on %s, want none", got)
	}
	// A changed value is checked; a new list item is, the kept ones are not.
	changed.Proxy.NoProxy = "c d"
	changed.NodeRegistration.KubeletExtraLabels = append(changed.NodeRegistration.KubeletExtraLabels, "x y=z")
	if got, want := fields(validation.ConfigSpec(root, changed, &bad)), "spec.proxy.noProxy,spec.nodeRegistration.kubeletExtraLabels[2]"; got != want {
		t.Errorf("update: got errors on %s, want %s", got, want)
	}
	good := bootstrapv1.OpenshiftAssistedConfigSpec{
		Proxy:                 &aiv1beta1.Proxy{HTTPProxy: "http://proxy:3128", HTTPSProxy: "https://proxy:3129", NoProxy: ".cluster.local,10.0.0.0/8"},
		PullSecretRef:         &corev1.LocalObjectReference{Name: "pull-secret"},
		SSHAuthorizedKey:      sshKey,
		AdditionalTrustBundle: caCert,
		NMStateConfigLabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"infraenv": "lab"},
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "rack", Operator: metav1.LabelSelectorOpIn, Values: []string{"r1"}}}},
		NodeRegistration: bootstrapv1.NodeRegistrationOptions{KubeletExtraLabels: []string{"rack=r1"}},
	}
	if errs := validation.ConfigSpec(root, &good, nil); len(errs) > 0 {
		t.Errorf("a valid spec: got %v", errs)
	}
}

func TestProxyChecksOnlyWhatChanged(t *testing.T) {
	old := &validation.ProxySettings{HTTPProxy: "bad", NoProxy: "a b"}
	updated := &validation.ProxySettings{HTTPProxy: "bad", NoProxy: "a b", HTTPSProxy: "also bad"}
	errs := validation.Proxy(field.NewPath("p"), updated, old)
	if len(errs) != 1 || errs[0].Field != "p.httpsProxy" {
		t.Errorf("got %v, want one error on p.httpsProxy", errs)
	}
	if errs := validation.Proxy(field.NewPath("p"), nil, old); errs != nil {
		t.Errorf("no proxy: got %v", errs)
	}
}

func TestAppend(t *testing.T) {
	first := field.Invalid(path, "x", "first")
	second := field.Required(path, "second")
	if got := validation.Append(nil, nil); got != nil {
		t.Errorf("Append(nil, nil) = %v, want nil", got)
	}
	errs := validation.Append(nil, first)
	errs = validation.Append(errs, nil)
	errs = validation.Append(errs, second)
	if len(errs) != 2 || errs[0] != first || errs[1] != second {
		t.Errorf("Append kept %v, want [%v %v]", errs, first, second)
	}
}

func TestInvalid(t *testing.T) {
	gk := schema.GroupKind{Group: "bootstrap.cluster.x-k8s.io", Kind: "OpenshiftAssistedConfig"}
	if err := validation.Invalid(gk, "cfg", nil); err != nil {
		t.Errorf("no errors: got %v, want nil", err)
	}
	if err := validation.Invalid(gk, "cfg", field.ErrorList{}); err != nil {
		t.Errorf("an empty list: got %v, want nil", err)
	}
	err := validation.Invalid(gk, "cfg", field.ErrorList{field.Invalid(path, "x", "bad"), field.Required(path.Child("g"), "")})
	if !apierrors.IsInvalid(err) {
		t.Fatalf("got %v, want an Invalid status error", err)
	}
	const want = `OpenshiftAssistedConfig.bootstrap.cluster.x-k8s.io "cfg" is invalid: [spec.f: Invalid value: "x": bad, spec.f.g: Required value]`
	if err.Error() != want {
		t.Errorf("got %q, want %q", err.Error(), want)
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		t.Fatalf("%T is not an APIStatus", err)
	}
	d := status.Status().Details
	if d == nil || d.Group != gk.Group || d.Kind != gk.Kind || d.Name != "cfg" || len(d.Causes) != 2 || d.Causes[1].Field != "spec.f.g" {
		t.Errorf("details %+v, want the group, kind, name and one cause per error", d)
	}
}
