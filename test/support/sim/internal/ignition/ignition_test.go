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

package ignition

import (
	"bytes"
	"compress/gzip"
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
func config(version string, units []Unit, replace string, merge ...string) []byte {
	cfg := Config{Ignition: Section{Version: version}, Systemd: Systemd{Units: units}}
	if replace != "" {
		cfg.Ignition.Config.Replace = &Resource{Source: Ptr(replace)}
	}
	for _, m := range merge {
		cfg.Ignition.Config.Merge = append(cfg.Ignition.Config.Merge, Resource{Source: Ptr(m)})
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
	agent := func(serviceURL string) Unit {
		return Unit{Name: AgentUnit, Enabled: &enabled, Contents: Ptr(agentService(serviceURL, testInfraEnvID, "tok"))}
	}
	discovery := config("3.1.0", []Unit{agent(testServiceURL)}, "")
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
			base64URL(discovery), base64URL(config("3.1.0", []Unit{agent("https://other:8443")}, "")))},
		{name: "replaced", userData: config("3.1.0", []Unit{agent("https://other:8443")}, base64URL(discovery)), wantURL: testServiceURL},
		{name: "replaced by a config that merges it", wantURL: testServiceURL,
			userData: config("3.1.0", nil, percentURL(config("3.1.0", nil, "", base64URL(discovery))))},
		// The merged config's fields override the merging one's (latest.Merge(parent, child)).
		{name: "disabled by the config's own unit, enabled by the merged one", wantURL: testServiceURL,
			userData: config("3.1.0", []Unit{{Name: AgentUnit, Enabled: &disabled}}, "", base64URL(discovery))},
		{name: "merged, then disabled by a later merge", wantErr: "agent.service is not enabled", userData: config("3.1.0", nil, "",
			base64URL(discovery), base64URL(config("3.1.0", []Unit{{Name: AgentUnit, Enabled: &disabled}}, "")))},
		{name: "masked", wantErr: "agent.service is not enabled",
			userData: config("3.1.0", []Unit{{Name: AgentUnit, Mask: &enabled}}, "", base64URL(discovery))},
		{name: "an https reference", userData: config("3.1.0", nil, "", testServiceURL+"/discovery.ign"),
			wantErr: "cannot fetch a config from a https URL"},
		{name: "no agent", userData: config("3.1.0", []Unit{{Name: "kubelet.service", Enabled: &enabled}}, ""),
			wantErr: "the config has no agent.service"},
		{name: "a spec 2 config", userData: config("2.2.0", []Unit{agent(testServiceURL)}, ""), wantErr: `unsupported config version "2.2.0"`},
		{name: "cloud-init", userData: []byte("#cloud-config\nusers: []\n"), wantErr: "the config is not an Ignition config"},
		{name: "nothing", userData: nil, wantErr: "the config is not an Ignition config"},
		{name: "a config that merges itself", userData: selfMerging(), wantErr: "too many nested config references"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := DiscoveryAgentOf(tc.userData)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if a.ServiceURL != tc.wantURL || a.InfraEnvID != testInfraEnvID || a.Token != "tok" {
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
		if got := ReadsConfigDrive(image); got != want {
			t.Errorf("ReadsConfigDrive(%s) = %t, want %t", image, got, want)
		}
	}
}

// agentService is internal/ignition/templates/agent.service of openshift/assisted-service at
// 780deffb6a35, rendered with that URL, InfraEnv ID and token (none: the line is left out, as
// under AUTH_TYPE=none).
func agentService(serviceURL, infraEnvID, token string) string {
	env := ""
	if token != "" {
		env = "\nEnvironment=PULL_SECRET_TOKEN=" + token
	}
	img := "quay.io/edge-infrastructure/assisted-installer-agent:latest"
	return `[Service]
Type=simple
Restart=always
RestartSec=3
StartLimitInterval=0
Environment=HTTP_PROXY=
Environment=http_proxy=
Environment=HTTPS_PROXY=
Environment=https_proxy=
Environment=NO_PROXY=
Environment=no_proxy=` + env + `
TimeoutStartSec=600
ExecStartPre=/usr/local/bin/agent-fix-bz1964591 ` + img + `
ExecStartPre=podman run --privileged --rm -v /usr/local/bin:/hostbin ` + img + ` cp /usr/bin/agent /hostbin
ExecStart=/usr/local/bin/agent --url ` + serviceURL + ` --infra-env-id ` + infraEnvID + ` --agent-version ` + img + ` --insecure=false  

[Unit]
Wants=network-online.target
After=network-online.target

[Install]
WantedBy=multi-user.target
`
}

// TestAgentCACert: the agent trusts the CA file its --cacert names, as the config writes it
// (merged configs' files override by path).
func TestAgentCACert(t *testing.T) {
	enabled := true
	unit := strings.Replace(agentService(testServiceURL, testInfraEnvID, "tok"), "--insecure=false", "--insecure=false --cacert /etc/assisted-service/service-ca-cert.crt", 1)
	file := func(pem string) File {
		return File{Path: "/etc/assisted-service/service-ca-cert.crt", Contents: Resource{Source: Ptr(base64URL([]byte(pem)))}}
	}
	cfg, err := json.Marshal(Config{Ignition: Section{Version: "3.1.0"}, Systemd: Systemd{Units: []Unit{{Name: AgentUnit, Enabled: &enabled, Contents: &unit}}},
		Storage: &Files{Files: []File{file("old")}}})
	if err != nil {
		t.Fatal(err)
	}
	over, err := json.Marshal(Config{Ignition: Section{Version: "3.1.0"}, Storage: &Files{Files: []File{file("PEM")}}})
	if err != nil {
		t.Fatal(err)
	}
	a, err := DiscoveryAgentOf(config("3.1.0", nil, "", base64URL(cfg), base64URL(over)))
	if err != nil || a.CACertPath != "/etc/assisted-service/service-ca-cert.crt" || string(a.CACert) != "PEM" {
		t.Fatalf("agent %+v, %v", a, err)
	}
}

// TestParseAgentUnitWithoutToken: under AUTH_TYPE=none the unit has no PULL_SECRET_TOKEN.
func TestParseAgentUnitWithoutToken(t *testing.T) {
	a, err := ParseAgentUnit(agentService("http://127.0.0.1:8090", testInfraEnvID, ""))
	if err != nil || a.ServiceURL != "http://127.0.0.1:8090" || a.InfraEnvID != testInfraEnvID || a.Token != "" {
		t.Fatalf("ParseAgentUnit = %+v, %v", a, err)
	}
}
