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

import (
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func infraEnv(eventsURL string) *aiv1beta1.InfraEnv {
	ie := &aiv1beta1.InfraEnv{ObjectMeta: metav1.ObjectMeta{Namespace: "hosts", Name: "m1"}}
	ie.Status.InfraEnvDebugInfo.EventsURL = eventsURL
	return ie
}

func TestDiscoveryIgnitionURL(t *testing.T) {
	const events = "https://assisted-service-mce.apps.hub.example:443/api/assisted-install/v2/events?api_key=tok&infra_env_id=ie-1"
	for _, tc := range []struct {
		name, events string
		cfg          ServiceConfig
		want, err    string
	}{
		{name: "from the events URL", events: events,
			want: "https://assisted-service-mce.apps.hub.example:443/api/assisted-install/v2/infra-envs/ie-1/downloads/files?api_key=tok&file_name=discovery.ign"},
		{name: "through the Service, in the InfraEnv's namespace", events: events, cfg: ServiceConfig{UseInternalURL: true},
			want: "http://assisted-service.hosts.svc.cluster.local:8090/api/assisted-install/v2/infra-envs/ie-1/downloads/files?api_key=tok&file_name=discovery.ign"},
		{name: "through a named Service", events: events, cfg: ServiceConfig{UseInternalURL: true, ServiceName: "ai", ServiceNamespace: "mce"},
			want: "http://ai.mce.svc.cluster.local:8090/api/assisted-install/v2/infra-envs/ie-1/downloads/files?api_key=tok&file_name=discovery.ign"},
		{name: "no events URL yet", err: "has no events URL yet"},
		{name: "no token: no local authentication", events: "https://as.example/api/assisted-install/v2/events?infra_env_id=ie-1", err: "without local authentication"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, err := DiscoveryIgnitionURL(tc.cfg.Defaulted(), infraEnv(tc.events))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if u.String() != tc.want {
				t.Fatalf("URL %s\nwant %s", u, tc.want)
			}
		})
	}
}

// TestDiscoveryIgnition downloads from a TLS server as assisted-service's: the CA bundle makes
// its certificate trusted; every failure says what to do and never shows the token.
func TestDiscoveryIgnition(t *testing.T) {
	const token = "secret-token"
	var body, redirect string
	var elsewhere atomic.Int32
	other := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		elsewhere.Add(1)
		_, _ = w.Write([]byte(`{"ignition":{"version":"3.1.0"}}`))
	}))
	defer other.Close()
	server := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case redirect != "":
			http.Redirect(w, r, redirect, http.StatusFound)
		case r.URL.Path != "/api/assisted-install/v2/infra-envs/ie-1/downloads/files" || r.URL.Query().Get("file_name") != "discovery.ign":
			http.NotFound(w, r)
		case r.URL.Query().Get("api_key") != token:
			http.Error(w, "unauthorized", http.StatusUnauthorized)
		default:
			_, _ = w.Write([]byte(body))
		}
	}))
	defer server.Close()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: server.Certificate().Raw})
	ignition := `{"ignition":{"version":"3.1.0"}}`
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	secret := func(data []byte) client.Object {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: DefaultCABundleNamespace, Name: DefaultCABundleName},
			Data: map[string][]byte{DefaultCABundleKey: data}}
	}
	for _, tc := range []struct {
		name     string
		objects  []client.Object
		cfg      ServiceConfig
		token    string
		body     string
		redirect string
		err      string
	}{
		{name: "trusted through the Secret", objects: []client.Object{secret(ca)}},
		{name: "trusted through a ConfigMap", cfg: ServiceConfig{CABundle: CABundleRef{Resource: "configmap", Namespace: "mce", Name: "ca", Key: "bundle"}},
			objects: []client.Object{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "mce", Name: "ca"}, Data: map[string]string{"bundle": string(ca)}}}},
		{name: "no CA bundle", err: "signed by an unknown authority): put the CA that signed it in Secret assisted-installer/assisted-installer-ca key ca.crt"},
		{name: "a CA bundle without certificates", objects: []client.Object{secret([]byte("not PEM"))}, err: "holds no PEM certificate"},
		{name: "a token assisted-service refuses", objects: []client.Object{secret(ca)}, token: "stale", err: "refused the InfraEnv's token (401 Unauthorized)"},
		{name: "not an Ignition config", objects: []client.Object{secret(ca)}, body: "<html>login</html>", err: "is not an Ignition config"},
		// Something on the way (a proxy, a route) that sends the request, token and all, to
		// another host: not followed, and said.
		{name: "a redirect", objects: []client.Object{secret(ca)}, redirect: other.URL + "/capture",
			err: "answered 302 Found, a redirect, which is not followed"},
		{name: "too large", objects: []client.Object{secret(ca)}, body: `{"ignition":{"version":"3.1.0"},"x":"` + strings.Repeat("a", maxIgnitionBytes) + `"}`,
			err: "too large for a bootstrap data Secret"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body, redirect = ignition, tc.redirect
			if tc.body != "" {
				body = tc.body
			}
			tok := token
			if tc.token != "" {
				tok = tc.token
			}
			c := &Client{Reader: fake.NewClientBuilder().WithScheme(scheme).WithObjects(tc.objects...).Build(), Config: tc.cfg}
			got, err := c.DiscoveryIgnition(context.Background(),
				infraEnv(server.URL+"/api/assisted-install/v2/events?api_key="+tok+"&infra_env_id=ie-1"))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one saying %q", err, tc.err)
				}
				if strings.Contains(err.Error(), tok) {
					t.Fatalf("the error shows the token: %v", err)
				}
				if n := elsewhere.Load(); n != 0 {
					t.Fatalf("the redirect was followed (%d requests to its target)", n)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != ignition {
				t.Fatalf("got %s", got)
			}
		})
	}
}

func TestServiceConfigValidate(t *testing.T) {
	if err := (ServiceConfig{}).Defaulted().Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	if err := (ServiceConfig{CABundle: CABundleRef{Resource: "ConfigMap"}}).Defaulted().Validate(); err != nil {
		t.Fatalf("ConfigMap: %v", err)
	}
	err := (ServiceConfig{CABundle: CABundleRef{Resource: "vault"}}).Defaulted().Validate()
	if err == nil || !strings.Contains(err.Error(), "use secret or configmap") {
		t.Fatalf("vault: %v", err)
	}
}
