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
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// ImageService is the stand-in for assisted-image-service, which nothing in the lab runs: it
// tells what the ISO at a URL of IMAGE_SERVICE_BASE_URL holds, the InfraEnv's discovery ignition,
// which the real image service fetches from assisted-service when a host downloads the ISO and
// embeds in it (openshift/assisted-image-service README: ASSISTED_SERVICE_SCHEME and _HOST name
// the service it asks; REQUEST_AUTH_TYPE=param passes the URL's token as api_key). The ISO URLs
// are those assisted-service computes (internal/imageservice/urls.go at 780deffb6a35):
// <base>/byid/<infra-env-id>/<version>/<arch>/<type>.iso under AUTH_TYPE=none,
// <base>/byapikey/<token>/... under local authentication, whose token names the InfraEnv
// (gencrypto.LocalJWT's infra_env_id claim), or the long form <base>/images/<infra-env-id>?....
type ImageService struct {
	// BaseURL is the image service's URL: assisted-service's IMAGE_SERVICE_BASE_URL.
	BaseURL string
	// ServiceURL is the assisted-service it asks for the ignition.
	ServiceURL string
	// HTTP is its client of the service (default http.DefaultClient).
	HTTP *http.Client
}

// isoRef is what an ISO URL names: the InfraEnv, and the token that authorizes the download.
type isoRef struct {
	infraEnvID, token string
}

// parseISOURL reads the InfraEnv an ISO URL of this image service names. A URL of another
// server, or of no image, is an error: the host's firmware would not boot it.
func (s *ImageService) parseISOURL(isoURL string) (isoRef, error) {
	base := strings.TrimSuffix(s.BaseURL, "/")
	rest, ok := strings.CutPrefix(isoURL, base+"/")
	if !ok || base == "" {
		return isoRef{}, fmt.Errorf("%s is not an image of the image service at %s", isoURL, s.BaseURL)
	}
	rest, _, _ = strings.Cut(rest, "?")
	parts := strings.Split(rest, "/")
	switch {
	case len(parts) == 2 && parts[0] == "images":
		return isoRef{infraEnvID: parts[1]}, nil
	case len(parts) == 5 && parts[0] == "byid" && strings.HasSuffix(parts[4], ".iso"):
		return isoRef{infraEnvID: parts[1]}, nil
	case len(parts) == 5 && parts[0] == "byapikey" && strings.HasSuffix(parts[4], ".iso"):
		id, err := infraEnvOfToken(parts[1])
		return isoRef{infraEnvID: id, token: parts[1]}, err
	}
	return isoRef{}, fmt.Errorf("%s names no InfraEnv image the image service serves", isoURL)
}

// infraEnvOfToken is the infra_env_id claim of a token signed by assisted-service (the image
// service reads it; assisted-service verifies the signature when the ignition is fetched).
func infraEnvOfToken(token string) (string, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return "", fmt.Errorf("the image URL's token is not a JWT")
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return "", fmt.Errorf("the image URL's token: %w", err)
	}
	var claims struct {
		InfraEnvID string `json:"infra_env_id"`
	}
	if err := json.Unmarshal(payload, &claims); err != nil || claims.InfraEnvID == "" {
		return "", fmt.Errorf("the image URL's token names no InfraEnv")
	}
	return claims.InfraEnvID, nil
}

// DiscoveryIgnition is the Ignition config embedded in the ISO at isoURL: the InfraEnv's
// discovery ignition as assisted-service serves it now (GET /v2/infra-envs/{id}/downloads/files
// ?file_name=discovery.ign).
func (s *ImageService) DiscoveryIgnition(ctx context.Context, isoURL string) ([]byte, error) {
	ref, err := s.parseISOURL(isoURL)
	if err != nil {
		return nil, err
	}
	q := url.Values{"file_name": {"discovery.ign"}}
	if ref.token != "" {
		q.Set("api_key", ref.token)
	}
	c := &apiClient{base: s.ServiceURL, http: s.HTTP}
	var ign []byte
	if err := c.do(ctx, http.MethodGet, "/infra-envs/"+url.PathEscape(ref.infraEnvID)+"/downloads/files", q, nil, &ign); err != nil {
		return nil, fmt.Errorf("the image service cannot build the ISO %s: %w", isoURL, err)
	}
	return ign, nil
}
