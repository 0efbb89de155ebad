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

package assisted

import (
	"bytes"
	"compress/gzip"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
)

const (
	testServiceURL = "https://127.0.0.1:8443"
	testInfraEnvID = "5c8d4d9a-0e3b-4f6e-9e2c-7c1f2a3b4c5d"
)

// config is an Ignition config of that version with the units and merge/replace sources given.
func config(version string, units []ignitionUnit, replace string, merge ...string) []byte {
	cfg := ignitionConfig{Ignition: ignitionSection{Version: version}, Systemd: ignitionSystemd{Units: units}}
	if replace != "" {
		cfg.Ignition.Config.Replace = &ignitionResource{Source: ptrTo(replace)}
	}
	for _, m := range merge {
		cfg.Ignition.Config.Merge = append(cfg.Ignition.Config.Merge, ignitionResource{Source: ptrTo(m)})
	}
	out, err := json.Marshal(cfg)
	if err != nil {
		panic(err)
	}
	return out
}

func base64URL(data []byte) string  { return "data:;base64," + base64.StdEncoding.EncodeToString(data) }
func percentURL(data []byte) string { return "data:," + url.PathEscape(string(data)) }

// TestDiscoveryAgentOf: the discovery agent a host's Ignition config starts, once rendered as
// Ignition renders it, or why none starts.
func TestDiscoveryAgentOf(t *testing.T) {
	enabled, disabled := true, false
	agent := func(serviceURL string) ignitionUnit {
		return ignitionUnit{Name: agentUnit, Enabled: &enabled, Contents: ptrTo(agentServiceUnit(serviceURL, testInfraEnvID, "tok", nil))}
	}
	discovery := config("3.1.0", []ignitionUnit{agent(testServiceURL)}, "")
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	if _, err := zw.Write(discovery); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	gzipped, err := json.Marshal(map[string]any{"ignition": map[string]any{"version": "3.2.0", "config": map[string]any{
		"merge": []map[string]string{{"source": base64URL(gz.Bytes()), "compression": "gzip"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		userData []byte
		wantURL  string // "" when no agent starts
		wantErr  string
	}{
		{name: "the discovery ignition itself", userData: discovery, wantURL: testServiceURL},
		{name: "merged, base64 data URL", userData: config("3.1.0", nil, "", base64URL(discovery)), wantURL: testServiceURL},
		{name: "merged, percent-encoded data URL", userData: config("3.4.0", nil, "", percentURL(discovery)), wantURL: testServiceURL},
		{name: "merged, gzip-compressed", userData: gzipped, wantURL: testServiceURL},
		{name: "merged twice: the later one wins", wantURL: "https://other:8443", userData: config("3.1.0", nil, "",
			base64URL(discovery), base64URL(config("3.1.0", []ignitionUnit{agent("https://other:8443")}, "")))},
		{name: "replaced", userData: config("3.1.0", []ignitionUnit{agent("https://other:8443")}, base64URL(discovery)), wantURL: testServiceURL},
		{name: "replaced by a config that merges it", wantURL: testServiceURL,
			userData: config("3.1.0", nil, percentURL(config("3.1.0", nil, "", base64URL(discovery))))},
		// The merged config's fields override the merging one's (latest.Merge(parent, child)).
		{name: "disabled by the config's own unit, enabled by the merged one", wantURL: testServiceURL,
			userData: config("3.1.0", []ignitionUnit{{Name: agentUnit, Enabled: &disabled}}, "", base64URL(discovery))},
		{name: "merged, then disabled by a later merge", wantErr: "agent.service is not enabled", userData: config("3.1.0", nil, "",
			base64URL(discovery), base64URL(config("3.1.0", []ignitionUnit{{Name: agentUnit, Enabled: &disabled}}, "")))},
		{name: "masked", wantErr: "agent.service is not enabled",
			userData: config("3.1.0", []ignitionUnit{{Name: agentUnit, Mask: &enabled}}, "", base64URL(discovery))},
		{name: "an https reference", userData: config("3.1.0", nil, "", testServiceURL+"/discovery.ign"),
			wantErr: "cannot fetch a config from a https URL"},
		{name: "no agent", userData: config("3.1.0", []ignitionUnit{{Name: "kubelet.service", Enabled: &enabled}}, ""),
			wantErr: "the config has no agent.service"},
		{name: "a spec 2 config", userData: config("2.2.0", []ignitionUnit{agent(testServiceURL)}, ""), wantErr: `unsupported config version "2.2.0"`},
		{name: "cloud-init", userData: []byte("#cloud-config\nusers: []\n"), wantErr: "the config is not an Ignition config"},
		{name: "nothing", userData: nil, wantErr: "the config is not an Ignition config"},
		{name: "a config that merges itself", userData: selfMerging(), wantErr: "too many nested config references"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := discoveryAgentOf(tc.userData)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if a.serviceURL != tc.wantURL || a.infraEnvID != testInfraEnvID || a.token != "tok" {
				t.Fatalf("agent %+v, want --url %s --infra-env-id %s and token tok", a, tc.wantURL, testInfraEnvID)
			}
		})
	}
}

// selfMerging is a config that merges, eleven times nested, a config merging the next.
func selfMerging() []byte {
	cfg := config("3.1.0", nil, "")
	for range maxConfigDepth + 1 {
		cfg = config("3.1.0", nil, "", base64URL(cfg))
	}
	return cfg
}

// TestReadsConfigDrive: which RHCOS disk images' Ignition reads the config drive.
func TestReadsConfigDrive(t *testing.T) {
	for image, want := range map[string]bool{
		"https://mirror/rhcos-4.20.0-x86_64-openstack.x86_64.qcow2":             true,
		"https://mirror/rhcos-4.20.0-x86_64-nutanix.x86_64.qcow2?raw=1":         true,
		"https://mirror/rhcos-4.20.0-x86_64-metal.x86_64.raw.gz":                false,
		"https://mirror/rhcos-4.20.0-x86_64-qemu.x86_64.qcow2":                  false,
		"https://mirror/openstack/rhcos-4.20.0-x86_64-metal.x86_64.raw.gz":      false,
		"https://mirror/rhcos-4.20.0-x86_64-metal.x86_64.raw.gz?from=openstack": false,
	} {
		if got := readsConfigDrive(image); got != want {
			t.Errorf("readsConfigDrive(%s) = %t, want %t", image, got, want)
		}
	}
}

// TestTokens: the service verifies the tokens it signed, with their scope and resource, and no
// other: altered, or signed with another key.
func TestTokens(t *testing.T) {
	newSim := func() *Simulator {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return &Simulator{api: &restAPI{key: key}}
	}
	s, other := newSim(), newSim()
	tok, err := s.token(infraEnvScope, testInfraEnvID)
	if err != nil {
		t.Fatal(err)
	}
	scope, id, err := s.verifyToken(tok)
	if err != nil || scope != infraEnvScope || id != testInfraEnvID {
		t.Fatalf("verifyToken = %s, %s, %v; want the InfraEnv's", scope, id, err)
	}
	parts := strings.Split(tok, ".")
	claims, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil || string(claims) != `{"infra_env_id":"`+testInfraEnvID+`"}` {
		t.Fatalf("claims %s (%v), want gencrypto.LocalJWT's", claims, err)
	}
	if again, _ := s.token(infraEnvScope, testInfraEnvID); again == tok {
		t.Error("two tokens are the same: ES256 signatures are randomised")
	}
	if tok2, _ := s.token(clusterScope, "c1"); !s.isInfraEnvToken(tok) || s.isInfraEnvToken(tok2) {
		t.Error("isInfraEnvToken tells an InfraEnv's token from a cluster's wrongly")
	}
	forged := parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"infra_env_id":"another"}`)) + "." + parts[2]
	otherTok, err := other.token(infraEnvScope, testInfraEnvID)
	if err != nil {
		t.Fatal(err)
	}
	for name, bad := range map[string]string{"altered claims": forged, "another key": otherTok, "not a JWT": "abc", "empty": ""} {
		if _, _, err := s.verifyToken(bad); err == nil {
			t.Errorf("%s: verified", name)
		}
	}
}
