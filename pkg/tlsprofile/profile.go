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

// Package tlsprofile makes a manager serve its webhooks and metrics with an OpenShift hub's TLS
// security profile: the spec.tlsSecurityProfile of the config.openshift.io/v1 APIServer named
// "cluster" (Old, Intermediate, Modern or Custom; unset means Intermediate, as OpenShift defaults
// it), and stop when that profile changes, so that its Deployment starts it again with the new one.
//
// It follows what openshift/controller-runtime-common does for OpenShift's operators (pkg/tls/tls.go:
// GetTLSProfileSpec, NewTLSConfigFromProfile; pkg/tls/controller.go: SecurityProfileWatcher, which
// cancels the manager's context on a change). That module needs newer Kubernetes and
// controller-runtime lines than the ones this repository is pinned to, so this package is a small
// rewrite of the same rules on the pinned github.com/openshift/api.
package tlsprofile

import (
	"crypto/tls"
	"errors"
	"fmt"
	"slices"

	configv1 "github.com/openshift/api/config/v1"
)

// APIServerName is the name of the one APIServer object of an OpenShift cluster.
const APIServerName = "cluster"

// Spec returns the settings a TLS security profile stands for: nil or a profile without a type is
// Intermediate, OpenShift's default (controller-runtime-common pkg/tls/tls.go GetTLSProfileSpec
// does the same). The Old, Intermediate and Modern settings are those of the pinned
// github.com/openshift/api (configv1.TLSProfiles).
func Spec(p *configv1.TLSSecurityProfile) (configv1.TLSProfileSpec, error) {
	if p == nil || p.Type == "" {
		return *configv1.TLSProfiles[configv1.TLSProfileIntermediateType], nil
	}
	if p.Type == configv1.TLSProfileCustomType {
		if p.Custom == nil {
			return configv1.TLSProfileSpec{}, errors.New("the profile is of type Custom but has no custom settings")
		}
		return p.Custom.TLSProfileSpec, nil
	}
	spec, ok := configv1.TLSProfiles[p.Type]
	if !ok {
		return configv1.TLSProfileSpec{}, fmt.Errorf("unknown profile type %q", p.Type)
	}
	return *spec, nil
}

// Name is how logs name a profile: its type, Intermediate when unset.
func Name(p *configv1.TLSSecurityProfile) string {
	if p == nil || p.Type == "" {
		return string(configv1.TLSProfileIntermediateType) + " (default)"
	}
	return string(p.Type)
}

// Settings are what a profile sets on a Go TLS server.
type Settings struct {
	// MinVersion is the profile's minTLSVersion.
	MinVersion uint16
	// CipherSuites are the TLS 1.0-1.2 suites of the profile that Go implements, in the
	// profile's order; nil when MinVersion is TLS 1.3, where Go takes no list (see SettingsFor).
	CipherSuites []uint16
	// Unsupported are the profile's cipher names that Go does not implement or that are unknown
	// (the DHE suites of the Old and Intermediate profiles, for instance): they are skipped.
	Unsupported []string
}

var tlsVersions = map[configv1.TLSProtocolVersion]uint16{
	configv1.VersionTLS10: tls.VersionTLS10,
	configv1.VersionTLS11: tls.VersionTLS11,
	configv1.VersionTLS12: tls.VersionTLS12,
	configv1.VersionTLS13: tls.VersionTLS13,
}

// SettingsFor turns a profile's settings into Go's. Cipher names are OpenSSL's, as OpenShift's
// profiles write them, or IANA's (Go's); each is looked up in Go's crypto/tls suites.
//
// TLS 1.3 suites cannot be configured in Go: crypto/tls always enables its three TLS 1.3 suites
// and ignores tls.Config.CipherSuites for TLS 1.3 (golang/go#29349). The profile's TLS 1.3 names
// (TLS_AES_128_GCM_SHA256, ...) are therefore neither listed nor reported unsupported, and with a
// minimum of TLS 1.3 no list is set at all, as controller-runtime-common's
// NewTLSConfigFromProfile does.
func SettingsFor(spec configv1.TLSProfileSpec) (Settings, error) {
	minVersion, ok := tlsVersions[spec.MinTLSVersion]
	if !ok {
		return Settings{}, fmt.Errorf("unknown minTLSVersion %q", spec.MinTLSVersion)
	}
	s := Settings{MinVersion: minVersion}
	for _, name := range spec.Ciphers {
		id, ok := goSuites[ianaName(name)]
		switch {
		case !ok:
			s.Unsupported = append(s.Unsupported, name)
		case minVersion < tls.VersionTLS13 && !slices.Contains(tls13Suites, id) && !slices.Contains(s.CipherSuites, id):
			s.CipherSuites = append(s.CipherSuites, id)
		}
	}
	return s, nil
}

// Explicit says which TLS settings the user gave on the command line (--tls-min-version,
// --tls-cipher-suites): those win over the hub's profile.
type Explicit struct {
	MinVersion, CipherSuites bool
}

// Option returns a controller-runtime TLSOpts function that applies the settings to a server's
// tls.Config, except what explicit says the user set by flag. A profile whose suites Go does not
// implement at all leaves the list unset: Go's defaults.
func (s Settings) Option(explicit Explicit) func(*tls.Config) {
	return func(c *tls.Config) {
		if !explicit.MinVersion {
			c.MinVersion = s.MinVersion
		}
		if !explicit.CipherSuites && len(s.CipherSuites) > 0 {
			c.CipherSuites = slices.Clone(s.CipherSuites)
		}
	}
}

// tls13Suites are Go's TLS 1.3 suites, which are always enabled and not configurable.
var tls13Suites = []uint16{tls.TLS_AES_128_GCM_SHA256, tls.TLS_AES_256_GCM_SHA384, tls.TLS_CHACHA20_POLY1305_SHA256}

// goSuites are the suites Go implements, by IANA name: the secure ones and those crypto/tls
// offers only when asked (tls.InsecureCipherSuites: CBC with SHA-1, 3DES, RC4, RSA key exchange),
// which the Old profile lists. Go names the ChaCha20 suites with a _SHA256 suffix.
var goSuites = func() map[string]uint16 {
	m := map[string]uint16{}
	for _, s := range append(tls.CipherSuites(), tls.InsecureCipherSuites()...) {
		m[s.Name] = s.ID
	}
	return m
}()

// ianaName returns the IANA name of an OpenSSL cipher name, or the name itself when it is not
// one of OpenSSL's (an IANA name, as a Custom profile may give, or an unknown one).
func ianaName(name string) string {
	if iana, ok := openSSLToIANA[name]; ok {
		return iana
	}
	return name
}

// openSSLToIANA maps the OpenSSL names of OpenShift's TLS profiles to IANA's. It is the table of
// openshift/library-go pkg/crypto/crypto.go (openSSLToIANACiphersMap, used by
// OpenSSLToIANACipherSuites), which OpenShift's own components use for the same conversion; the DHE
// suites are listed so that their names read right in logs, though Go implements none of them.
var openSSLToIANA = map[string]string{
	// TLS 1.2 (AEAD and CBC with SHA-2)
	"ECDHE-ECDSA-AES128-GCM-SHA256": "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
	"ECDHE-RSA-AES128-GCM-SHA256":   "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
	"ECDHE-ECDSA-AES256-GCM-SHA384": "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
	"ECDHE-RSA-AES256-GCM-SHA384":   "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
	"ECDHE-ECDSA-CHACHA20-POLY1305": "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
	"ECDHE-RSA-CHACHA20-POLY1305":   "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
	"ECDHE-ECDSA-AES128-SHA256":     "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256",
	"ECDHE-RSA-AES128-SHA256":       "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256",
	"ECDHE-ECDSA-AES256-SHA384":     "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384",
	"ECDHE-RSA-AES256-SHA384":       "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384",
	"DHE-RSA-AES128-GCM-SHA256":     "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256",
	"DHE-RSA-AES256-GCM-SHA384":     "TLS_DHE_RSA_WITH_AES_256_GCM_SHA384",
	"DHE-RSA-CHACHA20-POLY1305":     "TLS_DHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
	"DHE-RSA-AES128-SHA256":         "TLS_DHE_RSA_WITH_AES_128_CBC_SHA256",
	"DHE-RSA-AES256-SHA256":         "TLS_DHE_RSA_WITH_AES_256_CBC_SHA256",
	"AES128-GCM-SHA256":             "TLS_RSA_WITH_AES_128_GCM_SHA256",
	"AES256-GCM-SHA384":             "TLS_RSA_WITH_AES_256_GCM_SHA384",
	"AES128-SHA256":                 "TLS_RSA_WITH_AES_128_CBC_SHA256",
	"AES256-SHA256":                 "TLS_RSA_WITH_AES_256_CBC_SHA256",
	// TLS 1.0 (CBC with SHA-1)
	"ECDHE-ECDSA-AES128-SHA": "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA",
	"ECDHE-RSA-AES128-SHA":   "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",
	"ECDHE-ECDSA-AES256-SHA": "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA",
	"ECDHE-RSA-AES256-SHA":   "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA",
	// SSL 3
	"AES128-SHA":             "TLS_RSA_WITH_AES_128_CBC_SHA",
	"AES256-SHA":             "TLS_RSA_WITH_AES_256_CBC_SHA",
	"DES-CBC3-SHA":           "TLS_RSA_WITH_3DES_EDE_CBC_SHA",
	"ECDHE-RSA-DES-CBC3-SHA": "TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA",
}
