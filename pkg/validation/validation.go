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

// Package validation checks the formats of spec fields that the CRD schema cannot check (the
// formats that need parsing: SSH keys, PEM certificate bundles, proxy URLs, no-proxy lists,
// object and domain names in third-party types, label selectors, kubelet labels), for the
// admission webhooks of the bootstrap and control-plane providers.
//
// Each check returns field errors whose message says what is wrong and what to write instead. A
// check accepts every value that assisted-service and the OpenShift installer accept, so that an
// object that works with the upstream providers is never refused. Values that may be secret (SSH
// keys, certificate bundles, passwords in proxy URLs) are never quoted in a message.
//
// On update, the webhooks check only the fields that changed (the old spec is given): an object
// stored before a check existed can still have its finalizers and metadata written.
package validation

import (
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/crypto/ssh"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// omit stands for a value a message must not quote.
var omit = field.OmitValueType{}

// SSHAuthorizedKeys checks that every non-empty line of keys is an SSH public key in the
// authorized_keys format (type, base64 key, optional comment), as assisted-service requires.
func SSHAuthorizedKeys(path *field.Path, keys string) *field.Error {
	for i, line := range strings.Split(keys, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if strings.Contains(line, "PRIVATE KEY") {
			return field.Invalid(path, omit, fmt.Sprintf("line %d is a private key: never put a private key here; "+
				"give the public key instead, such as the content of ~/.ssh/id_ed25519.pub", i+1))
		}
		if _, _, _, _, err := ssh.ParseAuthorizedKey([]byte(line)); err != nil {
			return field.Invalid(path, omit, fmt.Sprintf("line %d is not an SSH public key: %s; give one public key per line "+
				"in the authorized_keys format (type, base64 key, optional comment), such as the content of ~/.ssh/id_ed25519.pub", i+1, whyNotAKey(line)))
		}
	}
	return nil
}

// whyNotAKey says what is wrong with an authorized_keys line that does not parse.
func whyNotAKey(line string) string {
	fields := strings.Fields(line)
	for i, f := range fields {
		if !isSSHKeyType(f) {
			continue
		}
		if i == len(fields)-1 {
			return "it has no key data after " + f
		}
		return fmt.Sprintf("the key data after %s is not a valid %s key", f, f)
	}
	return "it has no key type such as ssh-ed25519, ssh-rsa or ecdsa-sha2-nistp256"
}

// isSSHKeyType tells whether t names an SSH public key or certificate algorithm.
func isSSHKeyType(t string) bool {
	switch strings.TrimSuffix(t, "-cert-v01@openssh.com") {
	case ssh.KeyAlgoRSA, ssh.KeyAlgoECDSA256, ssh.KeyAlgoECDSA384, ssh.KeyAlgoECDSA521,
		ssh.KeyAlgoED25519, ssh.KeyAlgoSKECDSA256, ssh.KeyAlgoSKED25519:
		return true
	}
	return false
}

// CertificateBundle checks that bundle holds one or more PEM-encoded X.509 certificates and
// nothing else but text before a certificate (as assisted-service and the installer require).
func CertificateBundle(path *field.Path, bundle string) *field.Error {
	const how = "give one or more PEM-encoded CA certificates, each from -----BEGIN CERTIFICATE----- to -----END CERTIFICATE-----"
	rest := []byte(bundle)
	n := 0
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		n++
		if strings.Contains(block.Type, "PRIVATE KEY") {
			return field.Invalid(path, omit, fmt.Sprintf("PEM block %d is a private key: remove it; the bundle holds CA certificates only", n))
		}
		if block.Type != "CERTIFICATE" {
			return field.Invalid(path, omit, fmt.Sprintf("PEM block %d is a %s, not a CERTIFICATE: %s", n, block.Type, how))
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			return field.Invalid(path, omit, fmt.Sprintf("certificate %d does not parse as an X.509 certificate (%v): %s", n, err, how))
		}
	}
	if n == 0 {
		return field.Invalid(path, omit, "holds no PEM-encoded certificate: "+how)
	}
	if strings.TrimSpace(string(rest)) != "" {
		return field.Invalid(path, omit, fmt.Sprintf("the text after certificate %d is not a complete PEM block: %s", n, how))
	}
	return nil
}

// ProxyURL checks that raw is a URL with a host and one of schemes. A password in the URL is
// never quoted.
func ProxyURL(path *field.Path, raw string, schemes ...string) *field.Error {
	example := "http://proxy.example.com:3128"
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Scheme == "" {
		var shown any = raw
		if strings.Contains(raw, "@") {
			shown = omit
		}
		return field.Invalid(path, shown, fmt.Sprintf("is not a URL with a scheme and a host: write the proxy as %s://<host>:<port>, such as %s",
			schemes[0], example))
	}
	if !slices.Contains(schemes, u.Scheme) {
		return field.Invalid(path, u.Redacted(), fmt.Sprintf("the scheme must be %s, not %s: write the proxy as %s://<host>:<port>, such as %s",
			strings.Join(schemes, " or "), u.Scheme, schemes[0], example))
	}
	return nil
}

// NoProxy checks a comma-separated no-proxy list: each entry a domain (a leading dot includes its
// subdomains), an IP address, a CIDR, or *.
func NoProxy(path *field.Path, raw string) *field.Error {
	for entry := range strings.SplitSeq(raw, ",") {
		e := strings.TrimSpace(entry)
		if e == "" {
			return field.Invalid(path, raw, "has an empty entry (two commas in a row, or one at an end): remove it")
		}
		d := strings.TrimPrefix(e, ".")
		if e == "*" || net.ParseIP(d) != nil || isCIDR(d) || len(validation.IsDNS1123Subdomain(strings.ToLower(d))) == 0 {
			continue
		}
		return field.Invalid(path, e, "is not a domain, an IP address or a CIDR: noProxy is a comma-separated list such as "+
			".example.com,10.0.0.0/16,192.168.1.5 (a leading dot includes the subdomains; * bypasses the proxy for every destination)")
	}
	return nil
}

func isCIDR(s string) bool {
	_, _, err := net.ParseCIDR(s)
	return err == nil
}

// ObjectName checks that name, when set, is a valid name for a Secret or a ConfigMap (a DNS-1123
// subdomain).
func ObjectName(path *field.Path, name string) *field.Error {
	if name == "" {
		return nil
	}
	if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
		return field.Invalid(path, name, "is not a valid object name: "+strings.Join(msgs, "; "))
	}
	return nil
}

// BaseDomain checks that domain is a DNS domain name (a DNS-1123 subdomain), as the cluster's
// names are <name>.<clusterName>.<domain>.
func BaseDomain(path *field.Path, domain string) *field.Error {
	if msgs := validation.IsDNS1123Subdomain(domain); len(msgs) > 0 {
		return field.Invalid(path, domain, "is not a DNS domain name: "+strings.Join(msgs, "; ")+
			"; write the domain the cluster's names end with, such as example.com (the API is then api.<clusterName>.example.com)")
	}
	return nil
}

// LabelSelector checks the label keys, values and operators of sel.
func LabelSelector(path *field.Path, sel *metav1.LabelSelector) field.ErrorList {
	return metav1validation.ValidateLabelSelector(sel, metav1validation.LabelSelectorValidationOptions{}, path)
}

// metadataVariable is a reference to a host metadata variable ($NAME or ${NAME}), which the
// bootstrap provider resolves from the host's metadata (as the upstream one does on the host).
var metadataVariable = regexp.MustCompile(`^\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))$`)

// MetadataVariable returns the variable a whole value names ($NAME or ${NAME}), if it is one.
func MetadataVariable(value string) (string, bool) {
	m := metadataVariable.FindStringSubmatch(value)
	if m == nil {
		return "", false
	}
	return m[1] + m[2], true
}

// KubeletLabelValue returns what the value of a kubeletExtraLabels entry means: the value without
// one pair of enclosing double quotes. Upstream's examples write metal3.io/uuid="${METADATA_UUID}";
// its host script puts the entry inside a double-quoted shell echo, so the shell removes the quotes
// (and expands the variable) before the kubelet sees the label.
func KubeletLabelValue(v string) string {
	if len(v) >= 2 && strings.HasPrefix(v, `"`) && strings.HasSuffix(v, `"`) {
		return v[1 : len(v)-1]
	}
	return v
}

// KubeletLabel checks a kubelet label written key=value (key alone means an empty value): the key
// a label key, the value (KubeletLabelValue) a label value or a host metadata variable ($NAME or
// ${NAME}).
func KubeletLabel(path *field.Path, kv string) *field.Error {
	const how = "; write key=value, such as node-role.kubernetes.io/infra= or topology.kubernetes.io/zone=rack1"
	k, v, _ := strings.Cut(kv, "=")
	v = KubeletLabelValue(v)
	if msgs := validation.IsQualifiedName(k); len(msgs) > 0 {
		return field.Invalid(path, kv, fmt.Sprintf("the label key %q is not valid: %s%s", k, strings.Join(msgs, "; "), how))
	}
	if metadataVariable.MatchString(v) {
		return nil
	}
	if msgs := validation.IsValidLabelValue(v); len(msgs) > 0 {
		return field.Invalid(path, kv, fmt.Sprintf("the label value %q is not valid: %s%s", v, strings.Join(msgs, "; "), how))
	}
	return nil
}

// tangServer is one entry of a disk encryption's tangServers (assisted-service's format).
type tangServer struct {
	URL        string `json:"url"`
	Thumbprint string `json:"thumbprint"`
}

// TangServers checks a disk encryption's tangServers: a JSON list of {"url", "thumbprint"}
// objects, each URL http or https.
func TangServers(path *field.Path, raw string) *field.Error {
	const how = `: write a JSON list such as [{"url":"http://tang.example.com:7500","thumbprint":"<the server's key thumbprint>"}]`
	var servers []tangServer
	if err := json.Unmarshal([]byte(raw), &servers); err != nil {
		return field.Invalid(path, omit, fmt.Sprintf("is not a JSON list of tang servers (%v)%s", err, how))
	}
	for i, s := range servers {
		u, err := url.Parse(s.URL)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return field.Invalid(path, omit, fmt.Sprintf("server %d: url %q is not an http or https URL with a host%s", i+1, s.URL, how))
		}
		if s.Thumbprint == "" {
			return field.Invalid(path, omit, fmt.Sprintf("server %d has no thumbprint%s", i+1, how))
		}
	}
	return nil
}
