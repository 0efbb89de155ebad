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
	"net/http"
	"net/url"
	"strings"
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
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%s %s: reading the reply: %w", method, path, err)
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
