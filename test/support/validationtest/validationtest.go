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

// Package validationtest holds valid values of the formats pkg/validation checks (SSH
// public keys, a CA certificate), for the tests of the webhooks and of the objects they admit.
package validationtest

import (
	"sync"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/pki"
)

const (
	// SSHKey is an ed25519 SSH public key (of a private key nobody keeps).
	SSHKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHVcTLklbKfNxKz9xs/u2oSQF+W5+VFOmRkb1n4LDUJ2 test@example.com"
	// SSHECDSAKey is an ECDSA (nistp256) SSH public key.
	SSHECDSAKey = "ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBKD7PKf2bABQjYUGvu8yiUuF1O5CFceNF2TbuY3Lt4eZe7IRPkxds9+kAX2KL3nVoo3SVnD8cpdBypaDunVGpMA="
)

var (
	certOnce sync.Once
	cert     string
)

// Certificate returns a PEM-encoded self-signed CA certificate, made once per process.
func Certificate() string {
	certOnce.Do(func() {
		ca, err := pki.Issue(nil, pki.Request{CommonName: "test CA", CA: true})
		if err != nil {
			panic(err)
		}
		cert = string(ca.CertPEM)
	})
	return cert
}
