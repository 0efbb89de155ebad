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

package lab

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimev1 "sigs.k8s.io/cluster-api/api/runtime/v1beta2"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/yamlprocessor"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/pki"
)

// RuntimeExtensionFile is the control plane's ExtensionConfig, relative to the repository root,
// as a release publishes it.
const RuntimeExtensionFile = "templates/runtime-extension-openshift-assisted.yaml"

// registerRuntimeExtension applies the release's ExtensionConfig of the control-plane provider's
// runtime extension, rendered as `clusterctl generate yaml` renders it, with what the lab changes:
// the lab has no Services, so the ExtensionConfig names the webhook server's address rather than
// its Service. Its CA is injected by Cluster API from the Secret its annotation names, as in
// production, which the lab writes in place of cert-manager's.
func registerRuntimeExtension(ctx context.Context, m *management, root string) error {
	w := m.controlPlaneWebhooks
	if w == nil {
		return errors.New("the control-plane provider serves no webhooks: its runtime extension cannot be registered")
	}
	raw, err := os.ReadFile(filepath.Join(root, RuntimeExtensionFile))
	if err != nil {
		return fmt.Errorf("reading the runtime extension's ExtensionConfig: %w", err)
	}
	rendered, err := yamlprocessor.NewSimpleProcessor().Process(raw, func(k string) (string, error) {
		return "", fmt.Errorf("variable %s is not set", k) // the defaults, as a default install
	})
	if err != nil {
		return fmt.Errorf("rendering %s: %w", RuntimeExtensionFile, err)
	}
	ext := &runtimev1.ExtensionConfig{}
	if err := yaml.UnmarshalStrict(rendered, ext); err != nil {
		return fmt.Errorf("reading %s: %w", RuntimeExtensionFile, err)
	}
	svc := ext.Spec.ClientConfig.Service
	if svc.Namespace == "" || ext.Annotations[runtimev1.InjectCAFromSecretAnnotation] == "" {
		return fmt.Errorf("%s names no Service or no CA Secret", RuntimeExtensionFile)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: svc.Namespace}}
	if err := m.env.Client.Create(ctx, ns); client.IgnoreAlreadyExists(err) != nil {
		return fmt.Errorf("creating namespace %s: %w", svc.Namespace, err)
	}
	secretNamespace, secretName, ok := strings.Cut(ext.Annotations[runtimev1.InjectCAFromSecretAnnotation], "/")
	if !ok || secretNamespace == "" || secretName == "" {
		return fmt.Errorf("%s: annotation %s is not <namespace>/<name>", RuntimeExtensionFile, runtimev1.InjectCAFromSecretAnnotation)
	}
	// cert-manager's Certificate Secret: the serving certificate's CA under ca.crt.
	cert := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: secretNamespace, Name: secretName},
		Type: corev1.SecretTypeTLS, Data: map[string][]byte{"ca.crt": w.LocalServingCAData, "tls.crt": {}, "tls.key": {}}}
	if err := m.env.Client.Create(ctx, cert); err != nil {
		return fmt.Errorf("writing the webhook certificate's Secret: %w", err)
	}
	ext.Spec.ClientConfig = runtimev1.ClientConfig{URL: webhookServerURL(w)}
	if err := m.env.Client.Create(ctx, ext); err != nil {
		return fmt.Errorf("creating ExtensionConfig %s: %w", ext.Name, err)
	}
	return nil
}

// runtimeClientCertificate is the client certificate the lab gives Cluster API's runtime client,
// and the CA that issued it, which the control-plane manager's hooks trust
// (--in-place-updates-client-ca-file), in a folder of their own.
type runtimeClientCertificate struct {
	dir, caFile, certFile, keyFile string
}

// writeRuntimeClientCertificate issues a CA and a client certificate of it, as an administrator
// who turns on the hooks' client check does (docs/security.md,
// --in-place-updates-client-ca-file), and writes them to a new folder.
func writeRuntimeClientCertificate() (*runtimeClientCertificate, error) {
	ca, err := pki.Issue(nil, pki.Request{CommonName: "capoa-lab-runtime-extension-client-ca", CA: true})
	if err != nil {
		return nil, err
	}
	cert, err := pki.Issue(ca, pki.Request{CommonName: "capi-runtime-extension-client", Usages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "capoa-lab-runtime-client-")
	if err != nil {
		return nil, fmt.Errorf("creating the folder of the runtime client's certificate: %w", err)
	}
	r := &runtimeClientCertificate{dir: dir, caFile: filepath.Join(dir, "ca.crt"), certFile: filepath.Join(dir, "tls.crt"), keyFile: filepath.Join(dir, "tls.key")}
	for file, data := range map[string][]byte{r.caFile: ca.CertPEM, r.certFile: cert.CertPEM, r.keyFile: cert.KeyPEM} {
		if err := os.WriteFile(file, data, 0o600); err != nil {
			_ = os.RemoveAll(dir)
			return nil, fmt.Errorf("writing the runtime client's certificate: %w", err)
		}
	}
	return r, nil
}

// RuntimeExtensionDiscoveryStatus calls the runtime extension's discovery path on the control
// plane's webhook server as anyone who reaches the port may: trusting its serving CA, with no
// client certificate. It returns the HTTP status: 404 without in-place updates (the hooks are not
// served), 403 with them (the lab's hooks admit Cluster API's client certificate only).
func (l *Lab) RuntimeExtensionDiscoveryStatus(ctx context.Context) (int, error) {
	w := l.current().controlPlaneWebhooks
	if w == nil {
		return 0, errors.New("the control-plane provider serves no webhooks")
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(w.LocalServingCAData) {
		return 0, errors.New("the webhook server's CA does not parse")
	}
	c := &http.Client{Timeout: 10 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	defer c.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, webhookServerURL(w)+"/hooks.runtime.cluster.x-k8s.io/v1alpha1/discovery", strings.NewReader(`{}`))
	if err != nil {
		return 0, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, resp.Body.Close()
}
