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

package discovery

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestParseISOURL: the InfraEnv each form of ISO URL names; others are refused.
func TestParseISOURL(t *testing.T) {
	s := &ImageService{BaseURL: "http://images.lab:8080/"}
	tok := "h." + base64.RawURLEncoding.EncodeToString([]byte(`{"infra_env_id":"ie2"}`)) + ".sig"
	for url, want := range map[string]isoRef{
		"http://images.lab:8080/byid/ie1/4.16/x86_64/minimal.iso":          {infraEnvID: "ie1"},
		"http://images.lab:8080/byapikey/" + tok + "/4.16/x86_64/full.iso": {infraEnvID: "ie2", token: tok},
		"http://images.lab:8080/images/ie3?arch=x86_64&type=minimal-iso":   {infraEnvID: "ie3"},
	} {
		got, err := s.parseISOURL(url)
		if err != nil || got != want {
			t.Errorf("parseISOURL(%s) = %+v, %v; want %+v", url, got, err, want)
		}
	}
	for _, bad := range []string{
		"http://other:8080/byid/ie1/4.16/x86_64/minimal.iso",
		"http://images.lab:8080/byid/ie1/4.16/x86_64/minimal.img",
		"http://images.lab:8080/byapikey/notajwt/4.16/x86_64/full.iso",
		"http://images.lab:8080/",
	} {
		if got, err := s.parseISOURL(bad); err == nil {
			t.Errorf("parseISOURL(%s) = %+v, want an error", bad, got)
		}
	}
}

// TestDiscoveryIgnition: the image service asks the service for the InfraEnv's discovery.ign,
// with the URL's token as api_key; a refusal is an error.
func TestDiscoveryIgnition(t *testing.T) {
	var gotQuery string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotQuery = r.URL.RawQuery
		if r.URL.Path != apiBase+"/infra-envs/ie1/downloads/files" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(`{"ignition":{"version":"3.1.0"}}`))
	}))
	defer srv.Close()
	s := &ImageService{BaseURL: "http://images.lab", ServiceURL: srv.URL}
	ign, err := s.DiscoveryIgnition(context.Background(), "http://images.lab/byid/ie1/4.16/x86_64/minimal.iso")
	if err != nil || !strings.Contains(string(ign), "3.1.0") || gotQuery != "file_name=discovery.ign" {
		t.Fatalf("ignition %s, %v (query %s)", ign, err, gotQuery)
	}
	if _, err := s.DiscoveryIgnition(context.Background(), "http://images.lab/byid/gone/4.16/x86_64/minimal.iso"); statusOf(err) != http.StatusNotFound {
		t.Fatalf("an unknown InfraEnv: %v, want the service's 404", err)
	}
}
