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
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
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

// TestRetryingIsTheInstallersPolicy: what assisted-installer's inventory client sends again, and
// how often: a failed connection and 408, 429 and 5xx up to 360 times, 404, 423 and 425 up to 10,
// anything else never; delays within min·2^n and max.
func TestRetryingIsTheInstallersPolicy(t *testing.T) {
	r := retrying{}
	for _, c := range []struct {
		err   error
		calls int
	}{
		{errors.New("dial tcp 127.0.0.1:1: connect: connection refused"), 361},
		{&APIError{Code: http.StatusServiceUnavailable}, 361},
		{&APIError{Code: http.StatusTooManyRequests}, 361},
		{&APIError{Code: http.StatusRequestTimeout}, 361},
		{&APIError{Code: http.StatusNotFound}, 11},
		{&APIError{Code: http.StatusLocked}, 11},
		{&APIError{Code: http.StatusTooEarly}, 11},
		{&APIError{Code: http.StatusBadRequest}, 1},
		{&APIError{Code: http.StatusConflict}, 1},
	} {
		calls := 0
		err := r.do(context.Background(), func() error { calls++; return c.err })
		if !errors.Is(err, c.err) || calls != c.calls {
			t.Errorf("%v: %d calls, then %v; want %d calls", c.err, calls, err, c.calls)
		}
	}
	calls := 0
	if err := r.do(context.Background(), func() error {
		calls++
		if calls < 3 {
			return &APIError{Code: http.StatusBadGateway}
		}
		return nil
	}); err != nil || calls != 3 {
		t.Errorf("a request that succeeds on its third try: %v after %d calls", err, calls)
	}
	d := retrying{min: 2 * time.Second, max: 10 * time.Second}
	for n := range 40 {
		ceiling := min(10*time.Second, 2*time.Second<<min(n, 10))
		for range 50 {
			if got := d.delay(n); got < 0 || got >= ceiling {
				t.Fatalf("delay %d: %s, want in [0, %s)", n, got, ceiling)
			}
		}
	}
}
