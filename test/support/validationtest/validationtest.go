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
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"sync"
	"time"
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
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			panic(err)
		}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
			IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
		if err != nil {
			panic(err)
		}
		cert = string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	})
	return cert
}
