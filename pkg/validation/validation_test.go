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
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/validation"
)

var path = field.NewPath("spec", "f")

// Valid values (the webhooks' tests use test/support/validationtest, which this production module
// does not require).
const (
	sshKey      = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHVcTLklbKfNxKz9xs/u2oSQF+W5+VFOmRkb1n4LDUJ2 test@example.com"
	sshECDSAKey = "ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBKD7PKf2bABQjYUGvu8yiUuF1O5CFceNF2TbuY3Lt4eZe7IRPkxds9+kAX2KL3nVoo3SVnD8cpdBypaDunVGpMA="
	// caCert is a self-signed P-256 CA certificate, valid until 2126.
	caCert = `-----BEGIN CERTIFICATE-----
MIIBezCCASGgAwIBAgIUS7s5HVYJdQpMCcagYIrd50KQYQIwCgYIKoZIzj0EAwIw
EjEQMA4GA1UEAwwHdGVzdC1jYTAgFw0yNjExMjQyMjQyNTFaGA8yMTI2MTAzMTIy
NDI1MVowEjEQMA4GA1UEAwwHdGVzdC1jYTBZMBMGByqGSM49AgEGCCqGSM49AwEH
A0IABABWA/L3oNBOlH7k9NMY1iUFEHzuf/qAPbZDJakSR6QU1lPzEygXh9rtIQOJ
TlId19NygHyM6qo1WOf4ghBF9JKjUzBRMB0GA1UdDgQWBBRbg6pZTTuIAIisfCQ4
f6JOpRExEjAfBgNVHSMEGDAWgBRbg6pZTTuIAIisfCQ4f6JOpRExEjAPBgNVHRMB
Af8EBTADAQH/MAoGCCqGSM49BAMCA0gAMEUCIBZYY5gx+fxbpo6BIYrMx3Too3iK
UyZMFS6Dznga3YLLAiEA58GZtIR3Qe07jshjMirEm+Pq1Geb6HDNKrkIGB+Q3AI=
-----END CERTIFICATE-----
`
)

// check runs one table of single-value checks: want "" means accepted, else the exact message.
func check(t *testing.T, f func(string) *field.Error, cases map[string]string) {
	t.Helper()
	for in, want := range cases {
		got := ""
		if err := f(in); err != nil {
			got = err.Error()
		}
		if got != want {
			t.Errorf("%q:\n got  %q\n want %q", in, got, want)
		}
	}
}

const sshHow = "; give one public key per line in the authorized_keys format (type, base64 key, optional comment), such as the content of ~/.ssh/id_ed25519.pub"

func TestSSHAuthorizedKeys(t *testing.T) {
	check(t, func(s string) *field.Error { return validation.SSHAuthorizedKeys(path, s) }, map[string]string{
		"":                                   "",
		"  \n":                               "",
		sshKey:                               "",
		sshECDSAKey:                          "",
		sshKey + "\n" + sshECDSAKey + "\n":   "",
		`command="echo hi",no-pty ` + sshKey: "",
		"ssh-ed25519 AAAA test":              "spec.f: Invalid value: line 1 is not an SSH public key: the key data after ssh-ed25519 is not a valid ssh-ed25519 key" + sshHow,
		sshKey + "\n\nnot a key":             "spec.f: Invalid value: line 3 is not an SSH public key: it has no key type such as ssh-ed25519, ssh-rsa or ecdsa-sha2-nistp256" + sshHow,
		"ssh-rsa":                            "spec.f: Invalid value: line 1 is not an SSH public key: it has no key data after ssh-rsa" + sshHow,
		"# my key\n" + sshKey:                "spec.f: Invalid value: line 1 is not an SSH public key: it has no key type such as ssh-ed25519, ssh-rsa or ecdsa-sha2-nistp256" + sshHow,
		"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----": "spec.f: Invalid value: line 1 is a private key: " +
			"never put a private key here; give the public key instead, such as the content of ~/.ssh/id_ed25519.pub",
	})
}

func TestCertificateBundle(t *testing.T) {
	const how = ": give one or more PEM-encoded CA certificates, each from -----BEGIN CERTIFICATE----- to -----END CERTIFICATE-----"
	cert := caCert
	check(t, func(s string) *field.Error { return validation.CertificateBundle(path, s) }, map[string]string{
		cert:                         "",
		cert + cert + "\n\n":         "",
		"# Issuer: test CA\n" + cert: "",
		"":                           "spec.f: Invalid value: holds no PEM-encoded certificate" + how,
		"-----BEGIN CERTIFICATE-----\n...\n-----END CERTIFICATE-----\n": "spec.f: Invalid value: holds no PEM-encoded certificate" + how,
		"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n": "spec.f: Invalid value: certificate 1 does not parse as an X.509 certificate " +
			"(x509: malformed certificate)" + how,
		cert + "-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n": "spec.f: Invalid value: PEM block 2 is a private key: remove it; the bundle holds CA certificates only",
		cert + "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n":           "spec.f: Invalid value: PEM block 2 is a PUBLIC KEY, not a CERTIFICATE" + how,
		cert + "-----BEGIN CERTIFICATE-----\nAAAA\n":                                    "spec.f: Invalid value: the text after certificate 1 is not a complete PEM block" + how,
	})
}

func TestProxyURL(t *testing.T) {
	httpOnly := func(s string) *field.Error { return validation.ProxyURL(path, s, "http") }
	check(t, httpOnly, map[string]string{
		"http://proxy.example.com:3128":  "",
		"http://user:pass@proxy:3128":    "",
		"http://[fd00::1]:3128":          "",
		"proxy.example.com:3128":         `spec.f: Invalid value: "proxy.example.com:3128": is not a URL with a scheme and a host: write the proxy as http://<host>:<port>, such as http://proxy.example.com:3128`,
		"not a url":                      `spec.f: Invalid value: "not a url": is not a URL with a scheme and a host: write the proxy as http://<host>:<port>, such as http://proxy.example.com:3128`,
		"https://proxy.example.com:3128": `spec.f: Invalid value: "https://proxy.example.com:3128": the scheme must be http, not https: write the proxy as http://<host>:<port>, such as http://proxy.example.com:3128`,
		"https://user:secret@proxy:3128": `spec.f: Invalid value: "https://user:xxxxx@proxy:3128": the scheme must be http, not https: write the proxy as http://<host>:<port>, such as http://proxy.example.com:3128`,
		"http://user:sec ret@proxy:3128": `spec.f: Invalid value: is not a URL with a scheme and a host: write the proxy as http://<host>:<port>, such as http://proxy.example.com:3128`,
	})
	check(t, func(s string) *field.Error { return validation.ProxyURL(path, s, "http", "https") }, map[string]string{
		"https://proxy.example.com:3128": "",
		"socks5://proxy:1080":            `spec.f: Invalid value: "socks5://proxy:1080": the scheme must be http or https, not socks5: write the proxy as http://<host>:<port>, such as http://proxy.example.com:3128`,
	})
}

func TestNoProxy(t *testing.T) {
	const how = ": is not a domain, an IP address or a CIDR: noProxy is a comma-separated list such as .example.com,10.0.0.0/16,192.168.1.5 " +
		"(a leading dot includes the subdomains; * bypasses the proxy for every destination)"
	check(t, func(s string) *field.Error { return validation.NoProxy(path, s) }, map[string]string{
		"*": "",
		".example.com,10.0.0.0/16,192.168.1.5,fd00::/48,fd00::1,Example.COM , api": "",
		"example.com,exa mple.com": `spec.f: Invalid value: "exa mple.com"` + how,
		"10.0.0.0/33":              `spec.f: Invalid value: "10.0.0.0/33"` + how,
		"*.example.com":            `spec.f: Invalid value: "*.example.com"` + how,
		"example.com,":             `spec.f: Invalid value: "example.com,": has an empty entry (two commas in a row, or one at an end): remove it`,
	})
}

func TestNames(t *testing.T) {
	check(t, func(s string) *field.Error { return validation.ObjectName(path, s) }, map[string]string{
		"":            "",
		"pull-secret": "",
		"Pull_Secret": `spec.f: Invalid value: "Pull_Secret": is not a valid object name: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', ` +
			`and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
	})
	check(t, func(s string) *field.Error { return validation.BaseDomain(path, s) }, map[string]string{
		"example.com": "",
		"lab":         "",
		"example_com": `spec.f: Invalid value: "example_com": is not a DNS domain name: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', ` +
			`and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'); ` +
			"write the domain the cluster's names end with, such as example.com (the API is then api.<clusterName>.example.com)",
	})
}

func TestKubeletLabel(t *testing.T) {
	const how = "; write key=value, such as node-role.kubernetes.io/infra= or topology.kubernetes.io/zone=rack1"
	check(t, func(s string) *field.Error { return validation.KubeletLabel(path, s) }, map[string]string{
		"rack=r1":                        "",
		"node-role.kubernetes.io/infra=": "",
		"node-role.kubernetes.io/infra":  "",
		"uuid=$METADATA_UUID":            "",
		"uuid=${METADATA_UUID}":          "",
		`uuid="${METADATA_UUID}"`:        "",
		`rack="r1"`:                      "",
		"=r1":                            `spec.f: Invalid value: "=r1": the label key "" is not valid: name part must be non-empty; name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')` + how,
		"rack=r 1":                       `spec.f: Invalid value: "rack=r 1": the label value "r 1" is not valid: a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')` + how,
		`rack="r1`:                       `spec.f: Invalid value: "rack=\"r1": the label value "\"r1" is not valid: a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')` + how,
		"uuid=$(METADATA_UUID)":          `spec.f: Invalid value: "uuid=$(METADATA_UUID)": the label value "$(METADATA_UUID)" is not valid: a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')` + how,
	})
}

func TestTangServers(t *testing.T) {
	const how = `: write a JSON list such as [{"url":"http://tang.example.com:7500","thumbprint":"<the server's key thumbprint>"}]`
	check(t, func(s string) *field.Error { return validation.TangServers(path, s) }, map[string]string{
		`[{"url":"http://tang.example.com:7500","thumbprint":"PLjNyRdGw03zlRoGjQYMahSZGu9"}]`: "",
		`{"url":"http://tang:7500"}`:               "spec.f: Invalid value: is not a JSON list of tang servers (json: cannot unmarshal object into Go value of type []validation.tangServer)" + how,
		`[{"url":"tang:7500","thumbprint":"x"}]`:   `spec.f: Invalid value: server 1: url "tang:7500" is not an http or https URL with a host` + how,
		`[{"url":"http://tang.example.com:7500"}]`: "spec.f: Invalid value: server 1 has no thumbprint" + how,
	})
}
