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

package release_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/controlplane/internal/release"
)

// countingServer is a registry that answers every request with status and body, and counts them.
func countingServer(t *testing.T, status int, body string) (host string, requests *atomic.Int32) {
	t.Helper()
	requests = &atomic.Int32{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		requests.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://"), requests
}

// TestReaderContactsOnlyAllowedRegistries: a registry that is not allowed gets no request at
// all, and the error says which host and which flag.
func TestReaderContactsOnlyAllowedRegistries(t *testing.T) {
	host, requests := countingServer(t, http.StatusNotFound, `{"errors":[{"code":"MANIFEST_UNKNOWN"}]}`)
	ref := release.Image(host+"/ocp/release", "4.17.3", "x86_64")

	for name, tc := range map[string]struct {
		allowed []string
		refused bool
	}{
		"default: quay.io only":   {allowed: nil, refused: true},
		"another host":            {allowed: []string{"mirror.example.com:5000"}, refused: true},
		"the host without a port": {allowed: []string{"127.0.0.1"}, refused: true},
		"the host":                {allowed: []string{"quay.io", host}},
		"any registry":            {allowed: []string{release.AnyRegistry}},
	} {
		t.Run(name, func(t *testing.T) {
			before := requests.Load()
			_, err := allowing(tc.allowed...).Read(context.Background(), ref, release.Access{})
			if err == nil {
				t.Fatal("Read succeeded against a registry that has no image")
			}
			var notAllowed *release.RegistryNotAllowedError
			if got := errors.As(err, &notAllowed); got != tc.refused {
				t.Fatalf("Read(%s) with allowed registries %q: refused = %v, want %v (error: %v)", ref, tc.allowed, got, tc.refused, err)
			}
			sent := requests.Load() - before
			if tc.refused {
				if sent != 0 {
					t.Errorf("a registry that is not allowed got %d requests, want none", sent)
				}
				summary := release.Summary(err)
				for _, want := range []string{"registry " + host + " is not allowed", release.AllowedRegistriesFlag} {
					if !strings.Contains(summary, want) {
						t.Errorf("Summary = %q, want it to contain %q", summary, want)
					}
				}
				return
			}
			if sent == 0 {
				t.Error("an allowed registry got no request")
			}
		})
	}
}

// TestSummaryNeverQuotesTheRegistry: what a registry answers is reduced to its status and standard
// error codes in Summary (it goes into a condition), and kept, bounded, in LogMessage.
func TestSummaryNeverQuotesTheRegistry(t *testing.T) {
	const secret = "internal-host.corp:8080 says hello"
	long := strings.Repeat("x", 10000)
	for name, tc := range map[string]struct {
		status      int
		body        string
		wantSummary []string
	}{
		"401 with registry errors": {
			status:      http.StatusUnauthorized,
			body:        `{"errors":[{"code":"UNAUTHORIZED","message":"` + secret + `"},{"code":"` + secret + `"}]}`,
			wantSummary: []string{"HTTP 401 Unauthorized", "the pull secret has none for it"},
		},
		"500 with a raw body": {
			status:      http.StatusInternalServerError,
			body:        secret + long,
			wantSummary: []string{"HTTP 500 Internal Server Error"},
		},
		"404": {
			status:      http.StatusNotFound,
			body:        `{"errors":[{"code":"MANIFEST_UNKNOWN","message":"` + secret + `"}]}`,
			wantSummary: []string{"HTTP 404 Not Found", "no such image"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			host, _ := countingServer(t, tc.status, tc.body)
			ref := release.Image(host+"/ocp/release", "4.17.3", "x86_64")
			_, err := allowing(host).Read(context.Background(), ref, release.Access{})
			if err == nil {
				t.Fatal("Read succeeded")
			}
			summary := release.Summary(err)
			if strings.Contains(summary, secret) || strings.Contains(summary, "xxxx") {
				t.Errorf("Summary quotes the registry's answer: %q", summary)
			}
			for _, want := range append(tc.wantSummary, "resolving release image "+ref) {
				if !strings.Contains(summary, want) {
					t.Errorf("Summary = %q, want it to contain %q", summary, want)
				}
			}
			if msg := release.LogMessage(err); len(msg) > 2100 {
				t.Errorf("LogMessage is %d bytes long, want it cut near 2 KiB", len(msg))
			}
		})
	}

	// A HEAD answer has no body: the error codes of a GET's answer.
	t.Run("registry error codes", func(t *testing.T) {
		err := fmt.Errorf("resolving release image x: %w", &transport.Error{StatusCode: http.StatusForbidden, Errors: []transport.Diagnostic{
			{Code: transport.DeniedErrorCode, Message: secret}, {Code: transport.ErrorCode(secret), Message: secret},
		}})
		summary := release.Summary(err)
		if want := "the registry answered HTTP 403 Forbidden (DENIED): "; !strings.Contains(summary, want) || strings.Contains(summary, secret) {
			t.Errorf("Summary = %q, want it to contain %q and no text of the registry", summary, want)
		}
	})

	t.Run("connection refused", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		host := strings.TrimPrefix(srv.URL, "http://")
		srv.Close()
		_, err := allowing(host).Read(context.Background(), release.Image(host+"/ocp/release", "4.17.3", "x86_64"), release.Access{})
		if err == nil {
			t.Fatal("Read succeeded")
		}
		if summary := release.Summary(err); !strings.Contains(summary, "cannot be reached (connection refused)") {
			t.Errorf("Summary = %q, want the connection refused", summary)
		}
	})

	t.Run("not a release image", func(t *testing.T) {
		reg := startRegistry(t)
		ref := reg.Host + "/ocp-release:no-kube"
		if _, err := reg.PushRelease(ref, ""); err != nil {
			t.Fatal(err)
		}
		_, err := allowing(reg.Host).Read(context.Background(), ref, release.Access{})
		if err == nil {
			t.Fatal("Read succeeded")
		}
		if summary := release.Summary(err); !strings.Contains(summary, "names its Kubernetes version") {
			t.Errorf("Summary = %q, want the missing Kubernetes version", summary)
		}
	})
}
