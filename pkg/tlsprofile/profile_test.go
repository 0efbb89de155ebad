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

package tlsprofile

import (
	"crypto/tls"
	"slices"
	"strings"
	"testing"

	"github.com/go-logr/logr/testr"
	configv1 "github.com/openshift/api/config/v1"
)

// intermediateSuites are the suites Go implements of the pinned Intermediate profile, in its order:
// its TLS 1.3 names are always on (not listed), its two DHE suites are not implemented by Go.
var intermediateSuites = []uint16{
	tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
	tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
}

func custom(minVersion configv1.TLSProtocolVersion, ciphers ...string) *configv1.TLSSecurityProfile {
	return &configv1.TLSSecurityProfile{Type: configv1.TLSProfileCustomType, Custom: &configv1.CustomTLSProfile{
		TLSProfileSpec: configv1.TLSProfileSpec{Ciphers: ciphers, MinTLSVersion: minVersion},
	}}
}

func TestProfileSettings(t *testing.T) {
	tests := []struct {
		name        string
		profile     *configv1.TLSSecurityProfile
		wantErr     bool
		minVersion  uint16
		suites      []uint16
		unsupported []string
		// contains: suites that must be listed, when the whole list is too long to write out.
		contains []uint16
	}{
		{
			name: "unset is Intermediate", profile: nil, minVersion: tls.VersionTLS12, suites: intermediateSuites,
			unsupported: []string{"DHE-RSA-AES128-GCM-SHA256", "DHE-RSA-AES256-GCM-SHA384"},
		},
		{
			name: "a profile without a type is Intermediate", profile: &configv1.TLSSecurityProfile{}, minVersion: tls.VersionTLS12,
			suites: intermediateSuites, unsupported: []string{"DHE-RSA-AES128-GCM-SHA256", "DHE-RSA-AES256-GCM-SHA384"},
		},
		{
			name: "Intermediate", profile: &configv1.TLSSecurityProfile{Type: configv1.TLSProfileIntermediateType},
			minVersion: tls.VersionTLS12, suites: intermediateSuites,
			unsupported: []string{"DHE-RSA-AES128-GCM-SHA256", "DHE-RSA-AES256-GCM-SHA384"},
		},
		{
			name:       "Old: TLS 1.0 and the CBC, RSA and 3DES suites Go offers only when asked",
			profile:    &configv1.TLSSecurityProfile{Type: configv1.TLSProfileOldType},
			minVersion: tls.VersionTLS10,
			contains: []uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA, tls.TLS_RSA_WITH_AES_128_GCM_SHA256,
				tls.TLS_RSA_WITH_3DES_EDE_CBC_SHA, tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256},
			unsupported: []string{"DHE-RSA-AES128-GCM-SHA256", "DHE-RSA-AES256-GCM-SHA384", "DHE-RSA-CHACHA20-POLY1305",
				"ECDHE-ECDSA-AES256-SHA384", "ECDHE-RSA-AES256-SHA384", "DHE-RSA-AES128-SHA256", "DHE-RSA-AES256-SHA256", "AES256-SHA256"},
		},
		{
			name: "Modern: TLS 1.3, whose suites Go does not let be chosen", profile: &configv1.TLSSecurityProfile{Type: configv1.TLSProfileModernType},
			minVersion: tls.VersionTLS13,
		},
		{
			name: "Custom with OpenSSL and IANA names, in the profile's order, without repeats",
			profile: custom(configv1.VersionTLS12, "ECDHE-RSA-AES256-GCM-SHA384", "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
				"TLS_AES_128_GCM_SHA256", "ECDHE-RSA-AES256-GCM-SHA384"),
			minVersion: tls.VersionTLS12,
			suites:     []uint16{tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384, tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256},
		},
		{
			name:        "Custom with unknown cipher names: skipped and reported",
			profile:     custom(configv1.VersionTLS11, "NOT-A-CIPHER", "ECDHE-RSA-AES128-SHA", "TLS_FAKE_WITH_NOTHING"),
			minVersion:  tls.VersionTLS11,
			suites:      []uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA},
			unsupported: []string{"NOT-A-CIPHER", "TLS_FAKE_WITH_NOTHING"},
		},
		{
			name:        "Custom with TLS 1.3 sets no list even of TLS 1.2 suites",
			profile:     custom(configv1.VersionTLS13, "ECDHE-RSA-AES128-GCM-SHA256", "UNKNOWN"),
			minVersion:  tls.VersionTLS13,
			unsupported: []string{"UNKNOWN"},
		},
		{name: "Custom without settings", profile: &configv1.TLSSecurityProfile{Type: configv1.TLSProfileCustomType}, wantErr: true},
		{name: "unknown type", profile: &configv1.TLSSecurityProfile{Type: "Paranoid"}, wantErr: true},
		{name: "unknown version", profile: custom("VersionTLS14"), wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec, err := Spec(tt.profile)
			var s Settings
			if err == nil {
				s, err = SettingsFor(spec)
			}
			if tt.wantErr {
				if err == nil {
					t.Fatalf("want an error, got settings %+v", s)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.MinVersion != tt.minVersion {
				t.Errorf("MinVersion = %s, want %s", tls.VersionName(s.MinVersion), tls.VersionName(tt.minVersion))
			}
			if tt.contains != nil {
				for _, id := range tt.contains {
					if !slices.Contains(s.CipherSuites, id) {
						t.Errorf("CipherSuites lacks %s", tls.CipherSuiteName(id))
					}
				}
			} else if !slices.Equal(s.CipherSuites, tt.suites) {
				t.Errorf("CipherSuites = %v, want %v", names(s.CipherSuites), names(tt.suites))
			}
			if !slices.Equal(s.Unsupported, tt.unsupported) {
				t.Errorf("Unsupported = %q, want %q", s.Unsupported, tt.unsupported)
			}
		})
	}
}

// TestEveryOpenSSLNameIsGoOrDHE checks the OpenSSL table against Go: each name maps to a suite
// crypto/tls knows, but for the suites Go does not implement (DHE, CBC with SHA-384, AES-256-CBC
// with SHA-256), which must stay reported as unsupported rather than be mistyped.
func TestEveryOpenSSLNameIsGoOrDHE(t *testing.T) {
	notInGo := map[string]bool{
		"TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384": true, "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384": true,
		"TLS_RSA_WITH_AES_256_CBC_SHA256": true,
	}
	for openssl, iana := range openSSLToIANA {
		_, inGo := goSuites[iana]
		want := !notInGo[iana] && !strings.HasPrefix(openssl, "DHE-")
		if inGo != want {
			t.Errorf("%s -> %s: in Go's suites %v, want %v", openssl, iana, inGo, want)
		}
	}
}

func TestFlagsWinOverTheProfile(t *testing.T) {
	profile := Settings{MinVersion: tls.VersionTLS13, CipherSuites: []uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256}}
	flags := func(c *tls.Config) { // what --tls-min-version=VersionTLS12 --tls-cipher-suites=... set before
		c.MinVersion = tls.VersionTLS12
		c.CipherSuites = []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384}
	}
	tests := []struct {
		name       string
		explicit   Explicit
		settings   Settings
		minVersion uint16
		suites     []uint16
	}{
		{name: "no flag given: the profile", settings: profile, minVersion: tls.VersionTLS13, suites: profile.CipherSuites},
		{
			name: "--tls-min-version given", explicit: Explicit{MinVersion: true}, settings: profile,
			minVersion: tls.VersionTLS12, suites: profile.CipherSuites,
		},
		{
			name: "--tls-cipher-suites given", explicit: Explicit{CipherSuites: true}, settings: profile,
			minVersion: tls.VersionTLS13, suites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384},
		},
		{
			name: "both given", explicit: Explicit{MinVersion: true, CipherSuites: true}, settings: profile,
			minVersion: tls.VersionTLS12, suites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384},
		},
		{
			name: "a profile without a suite Go implements leaves the list alone", settings: Settings{MinVersion: tls.VersionTLS12},
			minVersion: tls.VersionTLS12, suites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &tls.Config{}
			flags(c)
			tt.settings.Option(tt.explicit)(c)
			if c.MinVersion != tt.minVersion {
				t.Errorf("MinVersion = %s, want %s", tls.VersionName(c.MinVersion), tls.VersionName(tt.minVersion))
			}
			if !slices.Equal(c.CipherSuites, tt.suites) {
				t.Errorf("CipherSuites = %v, want %v", names(c.CipherSuites), names(tt.suites))
			}
		})
	}
}

func names(ids []uint16) []string {
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		out = append(out, tls.CipherSuiteName(id))
	}
	return out
}

// TestWhatRestartsTheManager: the watcher stops the manager when, and only when, the servers
// would be configured otherwise, the flags' settings aside.
func TestWhatRestartsTheManager(t *testing.T) {
	typed := func(t configv1.TLSProfileType) *configv1.TLSSecurityProfile {
		return &configv1.TLSSecurityProfile{Type: t}
	}
	tests := []struct {
		name     string
		explicit Explicit
		from, to *configv1.TLSSecurityProfile
		restart  bool
	}{
		{name: "unset to Intermediate by name", from: nil, to: typed(configv1.TLSProfileIntermediateType)},
		{name: "Intermediate to Modern", from: nil, to: typed(configv1.TLSProfileModernType), restart: true},
		{name: "Modern to Old", from: typed(configv1.TLSProfileModernType), to: typed(configv1.TLSProfileOldType), restart: true},
		{name: "Intermediate to a Custom of other suites", from: nil, to: custom(configv1.VersionTLS12, "ECDHE-RSA-AES128-GCM-SHA256"), restart: true},
		{
			name: "Modern to a Custom TLS 1.3 of other names: Go serves the same", from: typed(configv1.TLSProfileModernType),
			to: custom(configv1.VersionTLS13, "TLS_AES_128_GCM_SHA256"),
		},
		{name: "a Custom gaining only a name Go lacks", from: custom(configv1.VersionTLS12, "ECDHE-RSA-AES128-GCM-SHA256"),
			to: custom(configv1.VersionTLS12, "ECDHE-RSA-AES128-GCM-SHA256", "DHE-RSA-AES128-GCM-SHA256")},
		{
			name: "a change of the minimum only, when --tls-min-version is given", explicit: Explicit{MinVersion: true},
			from: custom(configv1.VersionTLS12, "ECDHE-RSA-AES128-GCM-SHA256"), to: custom(configv1.VersionTLS11, "ECDHE-RSA-AES128-GCM-SHA256"),
		},
		{
			name: "a change of the suites, when only --tls-min-version is given", explicit: Explicit{MinVersion: true},
			from: nil, to: custom(configv1.VersionTLS12, "ECDHE-RSA-AES128-GCM-SHA256"), restart: true,
		},
		{name: "deleted (Intermediate) after Modern", from: typed(configv1.TLSProfileModernType), to: nil, restart: true},
		{name: "a Custom without settings is Intermediate", from: nil, to: &configv1.TLSSecurityProfile{Type: configv1.TLSProfileCustomType}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &Hub{Explicit: tt.explicit, log: testr.New(t)}
			if got := Changed(h.settingsOf(tt.from), h.settingsOf(tt.to)); got != tt.restart {
				t.Errorf("Changed = %v, want %v", got, tt.restart)
			}
		})
	}
}
