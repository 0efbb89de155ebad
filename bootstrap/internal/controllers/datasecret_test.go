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

package controllers

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	capoascheme "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/scheme"
)

// TestDataSecretUpToDate: the bootstrap data Secret is read from the API server again unless the
// cached copy is exactly what reconcileDataSecret writes, for a config that wrote it.
func TestDataSecretUpToDate(t *testing.T) {
	data := []byte(`{"ignition":{"version":"3.1.0"}}`)
	config := func() *bootstrapv1.OpenshiftAssistedConfig {
		c := &bootstrapv1.OpenshiftAssistedConfig{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m1", UID: "config-uid"}}
		c.Status.Initialization.DataSecretCreated = ptr.To(true)
		return c
	}
	secret := func() *corev1.Secret {
		return &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m1", Labels: map[string]string{clusterv1.ClusterNameLabel: "c1"},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: bootstrapv1.GroupVersion.String(), Kind: "OpenshiftAssistedConfig",
					Name: "m1", UID: "config-uid", Controller: ptr.To(true)}}},
			Type: clusterv1.ClusterSecretType,
			Data: map[string][]byte{"value": data, "format": []byte(bootstrapv1.BootstrapDataFormatIgnition)},
		}
	}
	for _, tc := range []struct {
		name     string
		noReader bool
		// infraEnvUID is the InfraEnv whose discovery ignition the data carries (disk image).
		infraEnvUID string
		config      func(*bootstrapv1.OpenshiftAssistedConfig)
		secret      func(*corev1.Secret) *corev1.Secret
		want        bool
	}{
		{name: "the cached copy is what would be written", want: true},
		{name: "no cache", noReader: true},
		{name: "the config has not written it yet", config: func(c *bootstrapv1.OpenshiftAssistedConfig) { c.Status.Initialization.DataSecretCreated = nil }},
		{name: "not in the cache", secret: func(*corev1.Secret) *corev1.Secret { return nil }},
		{name: "other data", secret: func(s *corev1.Secret) *corev1.Secret { s.Data["value"] = []byte("{}"); return s }},
		{name: "data trimmed by the cache", secret: func(s *corev1.Secret) *corev1.Secret { s.Data = nil; return s }},
		{name: "another format", secret: func(s *corev1.Secret) *corev1.Secret { s.Data["format"] = []byte("cloud-config"); return s }},
		{name: "a key more", secret: func(s *corev1.Secret) *corev1.Secret { s.Data["extra"] = []byte("x"); return s }},
		{name: "another cluster's label", secret: func(s *corev1.Secret) *corev1.Secret { s.Labels[clusterv1.ClusterNameLabel] = "c2"; return s }},
		{name: "another type", secret: func(s *corev1.Secret) *corev1.Secret { s.Type = corev1.SecretTypeOpaque; return s }},
		{name: "not controlled by the config", secret: func(s *corev1.Secret) *corev1.Secret { s.OwnerReferences = nil; return s }},
		{name: "carries the discovery ignition of the InfraEnv", infraEnvUID: "ie-2", want: true,
			secret: func(s *corev1.Secret) *corev1.Secret {
				s.Annotations = map[string]string{discoveryInfraEnvAnnotation: "ie-2"}
				return s
			}},
		{name: "carries the discovery ignition of a former InfraEnv", infraEnvUID: "ie-2",
			secret: func(s *corev1.Secret) *corev1.Secret {
				s.Annotations = map[string]string{discoveryInfraEnvAnnotation: "ie-1"}
				return s
			}},
		{name: "no discovery ignition yet, and the host boots a disk image", infraEnvUID: "ie-2"},
		{name: "a discovery ignition, and the host boots the ISO",
			secret: func(s *corev1.Secret) *corev1.Secret {
				s.Annotations = map[string]string{discoveryInfraEnvAnnotation: "ie-1"}
				return s
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := config()
			if tc.config != nil {
				tc.config(c)
			}
			s := secret()
			if tc.secret != nil {
				s = tc.secret(s)
			}
			scheme, err := capoascheme.New(bootstrapv1.AddToScheme)
			if err != nil {
				t.Fatal(err)
			}
			b := fake.NewClientBuilder().WithScheme(scheme)
			if s != nil {
				b = b.WithObjects(s)
			}
			r := &OpenshiftAssistedConfigReconciler{}
			if !tc.noReader {
				r.SecretReader = b.Build()
			}
			if got := dataSecretUpToDate(r.cachedDataSecret(context.Background(), c, "c1"), map[string][]byte{"value": data, "format": []byte(bootstrapv1.BootstrapDataFormatIgnition)}, tc.infraEnvUID); got != tc.want {
				t.Fatalf("up to date: %v, want %v", got, tc.want)
			}
		})
	}
}
