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

// assisted-service's REST API, as far as the lab uses it, served over HTTPS with the local
// authentication that assisted-service runs with beside the Kubernetes API (AUTH_TYPE=local):
//   - Tokens are ES256 JWTs whose one claim names the resource they were issued for
//     (internal/gencrypto/token.go LocalJWT: {"infra_env_id": <id>} or {"cluster_id": <id>}), signed
//     with the service's EC key; URLs carry them in the api_key query parameter (SignURL), which
//     the swagger's urlAuth security definition reads.
//   - pkg/auth/local_authenticator.go AuthAgentAuth: a missing or invalid token, or one for an
//     InfraEnv the service no longer has, is 401. pkg/auth/local_authz_handler.go
//     verifyResourceScope (LOCAL_AUTH_ENFORCE_RESOURCE_SCOPE, true by default): a valid token of
//     another resource than the one the path names is 404 "Object Not Found".
//   - Only then are the parameters bound and validated (go-swagger's generated handler authorizes
//     before BindValidRequest); assisted-service answers a validation failure 400, not go-openapi's
//     422 (pkg/app/middleware.go WrapServeError). Errors of both steps are {"code","message"} JSON.
//   - GET /v2/infra-envs/{infra_env_id}/downloads/files (operation v2DownloadInfraEnvFiles,
//     internal/bminventory/inventory.go V2DownloadInfraEnvFiles) serves the discovery ignition
//     (discovery.ign), the iPXE script (ipxe-script) and the static network config archive
//     (static-network-config, empty when the InfraEnv has none, as always in the lab) as
//     application/octet-stream, with Content-Disposition naming the file
//     (pkg/filemiddleware NewResponder).

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"

	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	ctrl "sigs.k8s.io/controller-runtime"
)

// apiBasePath is the base path of assisted-service's REST API (restclient.DefaultBasePath).
const apiBasePath = "/api/assisted-install"

// tokenScope is the claim that names what a local-authentication token was issued for
// (gencrypto.LocalJWTKeyType).
type tokenScope string

const (
	infraEnvScope tokenScope = "infra_env_id" // gencrypto.InfraEnvKey
	clusterScope  tokenScope = "cluster_id"   // gencrypto.ClusterKey
)

// The files an InfraEnv serves: the file_name enum of v2DownloadInfraEnvFiles (swagger.yaml).
const (
	fileDiscoveryIgnition   = "discovery.ign"
	fileIPXEScript          = "ipxe-script"
	fileStaticNetworkConfig = "static-network-config"
)

var infraEnvFiles = []string{fileDiscoveryIgnition, fileIPXEScript, fileStaticNetworkConfig}

// restAPI is the service's REST API server and the key it signs its tokens with.
type restAPI struct {
	server *httptest.Server
	key    *ecdsa.PrivateKey
}

// startAPI starts the REST API server, over HTTPS with httptest's certificate (for 127.0.0.1,
// its own CA), and stops it when mgr stops.
func (s *Simulator) startAPI(mgr ctrl.Manager) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("generating the REST API's token signing key: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+apiBasePath+"/v2/infra-envs/{infra_env_id}/downloads/files", s.downloadInfraEnvFiles)
	srv := httptest.NewUnstartedServer(mux)
	// TLS handshakes of clients that do not trust the certificate would be logged to stderr.
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	s.api = &restAPI{server: srv, key: key}
	if err := mgr.Add(stopAtEnd(srv.Close)); err != nil {
		srv.Close()
		return fmt.Errorf("adding the REST API's shutdown to the manager: %w", err)
	}
	return nil
}

// stopAtEnd runs stop when the manager's context ends, leader or not.
type stopAtEnd func()

func (f stopAtEnd) Start(ctx context.Context) error {
	<-ctx.Done()
	f()
	return nil
}

func (stopAtEnd) NeedLeaderElection() bool { return false }

// ServiceURL is the base URL of the service's REST API (assisted-service's SERVICE_BASE_URL):
// https://127.0.0.1:<port>, serving the certificate CACertPEM. "" before SetupWithManager.
func (s *Simulator) ServiceURL() string {
	if s.api == nil {
		return ""
	}
	return s.api.server.URL
}

// CACertPEM is the PEM-encoded certificate of the REST API, its own certificate authority: what
// a client of ServiceURL trusts. nil before SetupWithManager.
func (s *Simulator) CACertPEM() []byte {
	if s.api == nil {
		return nil
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.api.server.Certificate().Raw})
}

// jwtHeader is the header jwt-go writes for ES256 (keys in alphabetical order).
var jwtHeader = base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"ES256","typ":"JWT"}`))

// token is a local-authentication token for the resource id, as gencrypto.LocalJWT makes it:
// an ES256 JWT whose one claim is {scope: id}. ECDSA signatures are randomised: each call gives
// another token, every one valid.
func (s *Simulator) token(scope tokenScope, id string) (string, error) {
	claims, err := json.Marshal(map[string]string{string(scope): id})
	if err != nil {
		return "", fmt.Errorf("encoding the token's claims: %w", err)
	}
	signed := jwtHeader + "." + base64.RawURLEncoding.EncodeToString(claims)
	sum := sha256.Sum256([]byte(signed))
	r, sig, err := ecdsa.Sign(rand.Reader, s.api.key, sum[:])
	if err != nil {
		return "", fmt.Errorf("signing a token: %w", err)
	}
	raw := make([]byte, 64)
	r.FillBytes(raw[:32])
	sig.FillBytes(raw[32:])
	return signed + "." + base64.RawURLEncoding.EncodeToString(raw), nil
}

// verifyToken checks that tok is a token this service signed and returns its scope and resource.
func (s *Simulator) verifyToken(tok string) (tokenScope, string, error) {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 || parts[0] != jwtHeader {
		return "", "", errors.New("token is malformed")
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || len(raw) != 64 {
		return "", "", errors.New("signature is malformed")
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if !ecdsa.Verify(&s.api.key.PublicKey, sum[:], new(big.Int).SetBytes(raw[:32]), new(big.Int).SetBytes(raw[32:])) {
		return "", "", errors.New("signature is invalid")
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return "", "", errors.New("claims are malformed")
	}
	claims := map[string]any{}
	if err := json.Unmarshal(payload, &claims); err != nil {
		return "", "", errors.New("claims are malformed")
	}
	for _, scope := range []tokenScope{infraEnvScope, clusterScope} {
		if id, ok := claims[string(scope)].(string); ok {
			return scope, id, nil
		}
	}
	return "", "", errors.New("claims are incorrectly formatted")
}

// isInfraEnvToken tells whether tok is an InfraEnv's token this service signed.
func (s *Simulator) isInfraEnvToken(tok string) bool {
	scope, _, err := s.verifyToken(tok)
	return err == nil && scope == infraEnvScope
}

// signedURL is ServiceURL + path with query and the api_key of the resource id, its query
// encoded in order as SignURL leaves it.
func (s *Simulator) signedURL(path string, query url.Values, scope tokenScope, id string) (string, error) {
	tok, err := s.token(scope, id)
	if err != nil {
		return "", err
	}
	q := url.Values{"api_key": {tok}}
	for k, v := range query {
		q[k] = v
	}
	return s.ServiceURL() + apiBasePath + path + "?" + q.Encode(), nil
}

// eventsURL is the events URL assisted-service publishes in an object's debug info, filtered by
// filter=id and signed for the resource of scope authID (internal/controller/controllers/common.go
// generateEventsURL: <SERVICE_BASE_URL>/api/assisted-install/v2/events?api_key=…&<filter>=…).
func (s *Simulator) eventsURL(filter, id string, scope tokenScope, authID string) (string, error) {
	return s.signedURL("/v2/events", url.Values{filter: {id}}, scope, authID)
}

// downloadInfraEnvFiles is GET /v2/infra-envs/{infra_env_id}/downloads/files.
func (s *Simulator) downloadInfraEnvFiles(w http.ResponseWriter, r *http.Request) {
	if s.down.Load() {
		// No pod behind the service: the route answers 503.
		http.Error(w, "Application is not available", http.StatusServiceUnavailable)
		return
	}
	ctx := r.Context()
	id, q := r.PathValue("infra_env_id"), r.URL.Query()
	tok := q.Get("api_key")
	if tok == "" {
		writeAPIError(w, http.StatusUnauthorized, "unauthenticated for invalid credentials")
		return
	}
	scope, tokenID, err := s.verifyToken(tok)
	if err != nil {
		writeAPIError(w, http.StatusUnauthorized, "Failed to parse token: "+err.Error())
		return
	}
	var ie *aiv1beta1.InfraEnv
	if scope == infraEnvScope {
		if ie, err = s.infraEnvByUID(ctx, tokenID); err != nil {
			writeAPIError(w, http.StatusInternalServerError, err.Error())
			return
		}
		if ie == nil {
			writeAPIError(w, http.StatusUnauthorized, fmt.Sprintf("infraEnv %s does not exist", tokenID))
			return
		}
	}
	if scope != infraEnvScope || tokenID != id {
		writeAPIError(w, http.StatusNotFound, "Object Not Found")
		return
	}
	name := q.Get("file_name")
	switch {
	case !q.Has("file_name"):
		writeAPIError(w, http.StatusBadRequest, "file_name in query is required")
		return
	case !slices.Contains(infraEnvFiles, name):
		writeAPIError(w, http.StatusBadRequest, fmt.Sprintf("file_name in query should be one of [%s]", strings.Join(infraEnvFiles, " ")))
		return
	}
	var content []byte
	filename := name
	switch name {
	case fileDiscoveryIgnition:
		content, err = s.discoveryIgnition(ctx, ie)
	case fileIPXEScript:
		content = []byte(s.ipxeScript(ie))
		filename = id + "-" + name
	case fileStaticNetworkConfig:
		filename = "" // no static network config: nothing, as assisted-service serves it
	}
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Serving an InfraEnv file", "infraEnv", ie.Name, "file", name)
		writeAPIError(w, http.StatusInternalServerError, "failed to format the "+name+" file")
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", filename))
	if len(content) > 0 {
		w.Header().Set("Content-Length", strconv.Itoa(len(content)))
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(content)
}

// writeAPIError writes an error as go-openapi's ServeError does: {"code": …, "message": …}.
func writeAPIError(w http.ResponseWriter, code int, msg string) {
	body, err := json.Marshal(struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, msg})
	if err != nil {
		body = []byte(`{"code":` + strconv.Itoa(code) + `}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(body)
}

// infraEnvByUID is the InfraEnv whose UID (the service's InfraEnv ID) is uid, nil when none.
func (s *Simulator) infraEnvByUID(ctx context.Context, uid string) (*aiv1beta1.InfraEnv, error) {
	list := &aiv1beta1.InfraEnvList{}
	if err := s.Client.List(ctx, list); err != nil {
		return nil, fmt.Errorf("listing InfraEnvs: %w", err)
	}
	for i := range list.Items {
		if string(list.Items[i].UID) == uid {
			return &list.Items[i], nil
		}
	}
	return nil, nil
}
