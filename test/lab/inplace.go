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
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimev1 "sigs.k8s.io/cluster-api/api/runtime/v1beta2"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/yamlprocessor"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
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
