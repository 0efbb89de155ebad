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

// Package assisted reads what the bootstrap provider needs from assisted-service's REST API: the
// discovery ignition of an InfraEnv, which a host booting an RHCOS disk image (the image-based
// flow) gets as its bootstrap data instead of booting the discovery ISO.
package assisted

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The defaults of ServiceConfig are upstream CAPOA's (assistedinstaller/config.go), whose
// environment variables the bootstrap provider's flags also read.
const (
	DefaultServiceName       = "assisted-service"
	DefaultCABundleResource  = "secret"
	DefaultCABundleNamespace = "assisted-installer"
	DefaultCABundleName      = "assisted-installer-ca"
	DefaultCABundleKey       = "ca.crt"
	// internalServicePort is assisted-service's plain-HTTP port inside the hub (its Service's
	// port 8090, as upstream CAPOA reaches it with USE_INTERNAL_IMAGE_URL).
	internalServicePort = "8090"
	// maxIgnitionBytes bounds what is read: a discovery ignition is tens to hundreds of KiB (a
	// full-iso one carries the static network configuration and trust bundle), and the bootstrap
	// data Secret that holds it must stay under the API server's 1 MiB object limit.
	maxIgnitionBytes = 768 << 10
	requestTimeout   = 30 * time.Second
)

// ServiceConfig says how the provider reaches assisted-service's REST API. Empty fields take
// the defaults above (Defaulted).
type ServiceConfig struct {
	// UseInternalURL reaches assisted-service through its Service inside the hub
	// (http://<ServiceName>.<ServiceNamespace>.svc.cluster.local:8090) rather than at the URL it
	// advertises in the InfraEnv's status (its route).
	UseInternalURL bool
	// ServiceName and ServiceNamespace name assisted-service's Service; the namespace defaults to
	// the InfraEnv's.
	ServiceName, ServiceNamespace string
	// CABundle is where the CA that signed assisted-service's certificate is kept, beside the
	// system's roots. A bundle that does not exist is skipped: the system's roots then apply.
	CABundle CABundleRef
}

// CABundleRef names a key of a Secret or ConfigMap that holds PEM certificates.
type CABundleRef struct {
	// Resource is "secret" or "configmap".
	Resource, Namespace, Name, Key string
}

// Defaulted returns c with every empty field set to its default.
func (c ServiceConfig) Defaulted() ServiceConfig {
	def := func(s *string, d string) {
		if *s == "" {
			*s = d
		}
	}
	def(&c.ServiceName, DefaultServiceName)
	def(&c.CABundle.Resource, DefaultCABundleResource)
	def(&c.CABundle.Namespace, DefaultCABundleNamespace)
	def(&c.CABundle.Name, DefaultCABundleName)
	def(&c.CABundle.Key, DefaultCABundleKey)
	c.CABundle.Resource = strings.ToLower(c.CABundle.Resource)
	return c
}

// Validate tells what is wrong with c (after Defaulted).
func (c ServiceConfig) Validate() error {
	if r := c.CABundle.Resource; r != "secret" && r != "configmap" {
		return fmt.Errorf("the assisted-service CA bundle resource is %q: use secret or configmap", r)
	}
	return nil
}

// String says where the CA bundle is looked up, for messages.
func (r CABundleRef) String() string {
	kind := "Secret"
	if r.Resource == "configmap" {
		kind = "ConfigMap"
	}
	return fmt.Sprintf("%s %s/%s key %s", kind, r.Namespace, r.Name, r.Key)
}

// Client fetches discovery ignitions.
type Client struct {
	// Reader reads the CA bundle. It should not be a cache: the bundle is read once per fetch,
	// and a cache would watch every Secret of the hub.
	Reader client.Reader
	Config ServiceConfig
}

// DiscoveryIgnitionURL is the URL of the InfraEnv's discovery ignition on assisted-service's
// REST API: GET /v2/infra-envs/{infra_env_id}/downloads/files?file_name=discovery.ign
// (assisted-service swagger.yaml, V2DownloadInfraEnvFiles), authenticated with the api_key that
// assisted-service puts in the InfraEnv's events URL (a token scoped to the InfraEnv, as
// upstream CAPOA's GetIgnitionURLFromInfraEnv uses it). It fails while the events URL is not
// published. The URL carries the token: it is never logged nor shown.
func DiscoveryIgnitionURL(cfg ServiceConfig, ie *aiv1beta1.InfraEnv) (*url.URL, error) {
	events := ie.Status.InfraEnvDebugInfo.EventsURL
	if events == "" {
		return nil, fmt.Errorf("InfraEnv %s has no events URL yet (status.debugInfo.eventsURL), which carries assisted-service's address and the InfraEnv's token", ie.Name)
	}
	u, err := url.Parse(events)
	if err != nil {
		return nil, fmt.Errorf("the events URL of InfraEnv %s cannot be parsed", ie.Name)
	}
	q := u.Query()
	apiKey, id := q.Get("api_key"), q.Get("infra_env_id")
	if apiKey == "" || id == "" {
		return nil, fmt.Errorf("the events URL of InfraEnv %s has no api_key and infra_env_id: assisted-service runs without local authentication, "+
			"which the image-based flow needs to download the discovery ignition", ie.Name)
	}
	out := &url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/api/assisted-install/v2/infra-envs/" + url.PathEscape(id) + "/downloads/files"}
	if cfg.UseInternalURL {
		ns := cfg.ServiceNamespace
		if ns == "" {
			ns = ie.Namespace
		}
		out.Scheme, out.Host = "http", fmt.Sprintf("%s.%s.svc.cluster.local:%s", cfg.ServiceName, ns, internalServicePort)
	}
	out.RawQuery = url.Values{"file_name": {"discovery.ign"}, "api_key": {apiKey}}.Encode()
	return out, nil
}

// DiscoveryIgnition downloads the InfraEnv's discovery ignition. Its errors say what to fix and
// never contain the token.
func (c *Client) DiscoveryIgnition(ctx context.Context, ie *aiv1beta1.InfraEnv) ([]byte, error) {
	cfg := c.Config.Defaulted()
	u, err := DiscoveryIgnitionURL(cfg, ie)
	if err != nil {
		return nil, err
	}
	where := redacted(u)
	httpClient, err := c.httpClient(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer httpClient.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("building the request to %s", where)
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return nil, requestError(where, cfg, err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxIgnitionBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading the discovery ignition from %s: %w", where, err)
	}
	// The status is named by its code: the text after it is the server's, and ends up in a condition.
	status := fmt.Sprintf("%d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return nil, fmt.Errorf("assisted-service at %s refused the InfraEnv's token (%s): the InfraEnv may have been recreated; its events URL is read again on the next try",
			where, status)
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		return nil, fmt.Errorf("assisted-service at %s answered %s, a redirect, which is not followed: assisted-service serves the discovery ignition itself; "+
			"check that its URL (the InfraEnv's, or --use-internal-assisted-service-url) reaches assisted-service and not a proxy", where, status)
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("assisted-service at %s answered %s", where, status)
	case len(body) > maxIgnitionBytes:
		return nil, fmt.Errorf("the discovery ignition at %s is larger than %d KiB, too large for a bootstrap data Secret", where, maxIgnitionBytes>>10)
	}
	var ign struct {
		Ignition struct {
			Version string `json:"version"`
		} `json:"ignition"`
	}
	if err := json.Unmarshal(body, &ign); err != nil || ign.Ignition.Version == "" {
		return nil, fmt.Errorf("what assisted-service at %s answered is not an Ignition config", where)
	}
	return body, nil
}

// httpClient trusts the system's roots and the CA bundle, when it exists.
func (c *Client) httpClient(ctx context.Context, cfg ServiceConfig) (*http.Client, error) {
	pem, err := c.caBundle(ctx, cfg.CABundle)
	if err != nil {
		return nil, err
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if len(pem) > 0 && !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s holds no PEM certificate", cfg.CABundle)
	}
	t, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		return nil, errors.New("http.DefaultTransport is not an *http.Transport")
	}
	t = t.Clone()
	t.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	// No redirect is followed: assisted-service serves the discovery ignition itself
	// (v2/infra-envs/{id}/downloads/files), so a redirect comes from something else on the way,
	// and following it would carry the request, and its token, to any host it names.
	return &http.Client{Transport: t, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}, nil
}

// caBundle reads the CA bundle; nil when it does not exist.
func (c *Client) caBundle(ctx context.Context, ref CABundleRef) ([]byte, error) {
	if c.Reader == nil {
		return nil, nil
	}
	key := client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}
	var data []byte
	var err error
	if ref.Resource == "configmap" {
		cm := &corev1.ConfigMap{}
		if err = c.Reader.Get(ctx, key, cm); err == nil {
			data = []byte(cm.Data[ref.Key])
		}
	} else {
		s := &corev1.Secret{}
		if err = c.Reader.Get(ctx, key, s); err == nil {
			data = s.Data[ref.Key]
		}
	}
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("reading the assisted-service CA bundle (%s): %w", ref, err)
	}
	return data, nil
}

// requestError explains a failed request; an unknown certificate authority names where the CA
// bundle is read.
func requestError(where string, cfg ServiceConfig, err error) error {
	var unknownCA x509.UnknownAuthorityError
	var invalid x509.CertificateInvalidError
	var hostname x509.HostnameError
	cause := err
	var ue *url.Error
	if errors.As(err, &ue) {
		cause = ue.Err // the url.Error's message would carry the token
	}
	switch {
	case errors.As(err, &unknownCA):
		return fmt.Errorf("cannot verify the certificate of assisted-service at %s (signed by an unknown authority): put the CA that signed it in %s "+
			"(the bootstrap provider's --assisted-ca-bundle-* flags name another place)", where, cfg.CABundle)
	case errors.As(err, &invalid), errors.As(err, &hostname):
		return fmt.Errorf("the certificate of assisted-service at %s is not valid: %v", where, cause)
	}
	return fmt.Errorf("cannot reach assisted-service at %s: %v", where, cause)
}

// redacted is u without its query, which carries the token.
func redacted(u *url.URL) string {
	r := *u
	r.RawQuery = ""
	return r.String()
}
