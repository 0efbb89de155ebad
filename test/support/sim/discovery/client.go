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
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// apiBase is the path of assisted-service's v2 REST API under its base URL (swagger.yaml's
// basePath, /api/assisted-install, and the v2 paths).
const apiBase = "/api/assisted-install/v2"

// AgentVersion is the discovery agent image the hosts say they run: assisted-service's default
// AGENT_DOCKER_IMAGE, which the discovery ignition's agent.service names (--agent-version) and the
// agent sends as discovery_agent_version.
const AgentVersion = "quay.io/edge-infrastructure/assisted-installer-agent:latest"

// apiClient is a client of assisted-service's REST API as the discovery agent, the installer and
// the installer controller use it: agentAuth, the InfraEnv's token in the X-Secret-Key header
// (swagger.yaml securityDefinitions), none under AUTH_TYPE=none.
type apiClient struct {
	base  string
	token string
	http  *http.Client
}

// APIError is a reply of the service other than the one expected.
type APIError struct {
	Method, Path string
	Code         int
	Body         string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("%s %s: %d %s", e.Method, e.Path, e.Code, strings.TrimSpace(e.Body))
}

// statusOf is the HTTP status of an APIError, 0 for any other error.
func statusOf(err error) int {
	var e *APIError
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}

// maxReply bounds what the hosts read of a reply (a discovery ignition is the largest: tens of
// kilobytes).
const maxReply = 16 << 20

// do sends in (JSON, none when nil) and decodes the reply into out (when not nil); a status
// outside 2xx is an *APIError.
func (c *apiClient) do(ctx context.Context, method, path string, query url.Values, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("encoding the body of %s %s: %w", method, path, err)
		}
		body = bytes.NewReader(b)
	}
	u := strings.TrimSuffix(c.base, "/") + apiBase + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	// The file downloads produce application/octet-stream, and the service refuses (406) a
	// request that accepts JSON only.
	if _, raw := out.(*[]byte); !raw {
		req.Header.Set("Accept", "application/json")
	}
	req.Header.Set("discovery_agent_version", AgentVersion)
	if c.token != "" {
		req.Header.Set("X-Secret-Key", c.token)
	}
	hc := c.http
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxReply+1))
	if err != nil {
		return fmt.Errorf("%s %s: reading the reply: %w", method, path, err)
	}
	if len(data) > maxReply {
		return fmt.Errorf("%s %s: the reply is over %d bytes", method, path, maxReply)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return &APIError{Method: method, Path: path, Code: resp.StatusCode, Body: string(data)}
	}
	if out == nil || len(data) == 0 {
		return nil
	}
	if raw, ok := out.(*[]byte); ok {
		*raw = data
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s %s: decoding the reply: %w", method, path, err)
	}
	return nil
}

// retrying is the retry policy of assisted-installer's inventory client, through which the
// installer and its controller reach the service (src/inventory_client/inventory_client.go
// CreateInventoryClientWithDelay, a rehttp transport): a request whose connection failed
// (refused, reset, timed out: RetryConnectionRefusedErr, RetryTemporaryErr) or that got 408, 429
// or 5xx is sent again up to 360 times (DefaultMaxRetries), one that got 404, 423 or 425 up to 10
// times (DefaultMinRetries), each after a delay of exponential backoff with full jitter between 0
// and min(max, min·2^n) (rehttp.ExpJitterDelay(DefaultRetryMinDelay 2 s, DefaultRetryMaxDelay
// 10 s)); any other reply is final. So a restart of the service delays an installation, and
// does not end it.
type retrying struct{ min, max time.Duration }

// do runs attempt until it succeeds, its error is final, its retries are spent, or ctx ends.
func (r retrying) do(ctx context.Context, attempt func() error) error {
	for n := 0; ; n++ {
		err := attempt()
		if err == nil || ctx.Err() != nil {
			return err
		}
		limit := 0
		switch code := statusOf(err); {
		case code == 0, code == http.StatusRequestTimeout, code == http.StatusTooManyRequests, code >= 500:
			limit = 360
		case code == http.StatusNotFound, code == http.StatusLocked, code == http.StatusTooEarly:
			limit = 10
		}
		if n >= limit {
			return err
		}
		sleep(ctx, r.delay(n))
	}
}

// delay is rehttp.ExpJitterDelay's: a random time up to min·2^n, at most max.
func (r retrying) delay(n int) time.Duration {
	ceiling := r.max
	if n < 30 && r.min<<n < r.max {
		ceiling = r.min << n
	}
	if ceiling <= 0 {
		return 0
	}
	return rand.N(ceiling) //nolint:gosec // jitter, not a secret
}
