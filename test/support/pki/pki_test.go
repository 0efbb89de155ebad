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

package pki

import (
	"crypto/x509"
	"net"
	"testing"
)

func TestIssuedCertificatesVerifyAgainstTheirCA(t *testing.T) {
	ca := MustIssue(t, nil, Request{CommonName: "ca", CA: true})
	other := MustIssue(t, nil, Request{CommonName: "other-ca", CA: true})
	leaf := MustIssue(t, ca, Request{CommonName: "client", Usages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		DNSNames: []string{"localhost"}, IPs: []net.IP{net.IPv4(127, 0, 0, 1)}})
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(ca.CertPEM) {
		t.Fatal("the CA's PEM does not parse")
	}
	if _, err := leaf.Cert.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("a client certificate the CA issued does not verify: %v", err)
	}
	if _, err := leaf.Cert.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err == nil {
		t.Error("a client certificate verifies for server authentication")
	}
	others := x509.NewCertPool()
	others.AddCert(other.Cert)
	if _, err := leaf.Cert.Verify(x509.VerifyOptions{Roots: others, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err == nil {
		t.Error("a certificate verifies against a CA that did not issue it")
	}
	if leaf.Cert.SerialNumber.Cmp(MustIssue(t, ca, Request{CommonName: "client"}).Cert.SerialNumber) == 0 {
		t.Error("two certificates of one CA have the same serial number")
	}
}
