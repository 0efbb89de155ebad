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
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestAPIClient: requests go under the v2 base path with the agent's headers; replies outside 2xx
// are APIErrors with their status.
func TestAPIClient(t *testing.T) {
	var gotPath, gotKey, gotVersion, gotQuery string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotPath, gotKey, gotVersion, gotQuery = r.URL.Path, r.Header.Get("X-Secret-Key"), r.Header.Get("discovery_agent_version"), r.URL.RawQuery
		if r.URL.Path == apiBase+"/missing" {
			http.Error(w, `{"reason":"gone"}`, http.StatusNotFound)
			return
		}
		_, _ = w.Write([]byte(`{"name":"x"}`))
	}))
	defer srv.Close()
	c := &apiClient{base: srv.URL + "/", token: "tok"}
	var out struct{ Name string }
	if err := c.do(context.Background(), http.MethodGet, "/clusters/1", map[string][]string{"a": {"b"}}, nil, &out); err != nil {
		t.Fatal(err)
	}
	if out.Name != "x" || gotPath != apiBase+"/clusters/1" || gotKey != "tok" || gotVersion != AgentVersion || gotQuery != "a=b" {
		t.Fatalf("reply %+v, request %s?%s key %q version %q", out, gotPath, gotQuery, gotKey, gotVersion)
	}
	err := c.do(context.Background(), http.MethodGet, "/missing", nil, nil, nil)
	if statusOf(err) != http.StatusNotFound {
		t.Fatalf("error %v, want a 404 APIError", err)
	}
	if err := (&apiClient{base: srv.URL}).do(context.Background(), http.MethodGet, "/x", nil, nil, nil); err != nil || gotKey != "" {
		t.Fatalf("X-Secret-Key %q sent without a token (%v)", gotKey, err)
	}
}
