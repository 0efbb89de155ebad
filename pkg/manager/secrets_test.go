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

package manager_test

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/manager"
)

func TestClusterSecretsCache(t *testing.T) {
	byObject := manager.ClusterSecretsCache()
	if got := byObject.Label.String(); got != "cluster.x-k8s.io/cluster-name" {
		t.Errorf("label selector %q, want cluster.x-k8s.io/cluster-name (the label exists)", got)
	}
	for _, tc := range []struct {
		labels map[string]string
		want   bool
	}{
		{map[string]string{"cluster.x-k8s.io/cluster-name": "c1"}, true},
		{map[string]string{"cluster.x-k8s.io/cluster-name": "", "other": "x"}, true},
		{nil, false},
		{map[string]string{"cluster.x-k8s.io/cluster": "c1"}, false},
	} {
		if got := byObject.Label.Matches(labels.Set(tc.labels)); got != tc.want {
			t.Errorf("selects the labels %v: %v, want %v", tc.labels, got, tc.want)
		}
	}
	if byObject.Field != nil || byObject.Namespaces != nil || byObject.UnsafeDisableDeepCopy != nil {
		t.Errorf("ByObject %+v sets more than a label and a transform", byObject)
	}
	// The transform is TrimClusterSecret.
	if byObject.Transform == nil {
		t.Fatal("no transform")
	}
	s := &corev1.Secret{Data: map[string][]byte{"tls.key": []byte("k")}}
	if _, err := byObject.Transform(s); err != nil || s.Data != nil {
		t.Errorf("the transform kept the data %v (error %v), want it dropped", s.Data, err)
	}
}

func TestTrimClusterSecret(t *testing.T) {
	managed := []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply}}
	meta := func(annotations map[string]string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: "ns", Name: "s", Labels: map[string]string{"cluster.x-k8s.io/cluster-name": "c1"},
			Annotations: annotations, ManagedFields: managed, ResourceVersion: "7"}
	}
	trimmed := func(annotations map[string]string) metav1.ObjectMeta {
		m := meta(annotations)
		m.ManagedFields = nil
		return m
	}
	for _, tc := range []struct {
		name string
		in   *corev1.Secret
		want *corev1.Secret
	}{
		{name: "bootstrap data: kept with its format",
			in: &corev1.Secret{ObjectMeta: meta(map[string]string{"a": "b"}), Type: "cluster.x-k8s.io/secret",
				Data: map[string][]byte{"value": []byte("ignition"), "format": []byte("ignition")}},
			want: &corev1.Secret{ObjectMeta: trimmed(map[string]string{"a": "b"}), Type: "cluster.x-k8s.io/secret",
				Data: map[string][]byte{"value": []byte("ignition"), "format": []byte("ignition")}}},
		{name: "a kubeconfig: kept",
			in:   &corev1.Secret{ObjectMeta: meta(nil), Data: map[string][]byte{"value": []byte("kubeconfig")}},
			want: &corev1.Secret{ObjectMeta: trimmed(nil), Data: map[string][]byte{"value": []byte("kubeconfig")}}},
		{name: "an empty value: kept",
			in:   &corev1.Secret{ObjectMeta: meta(nil), Data: map[string][]byte{"value": nil}},
			want: &corev1.Secret{ObjectMeta: trimmed(nil), Data: map[string][]byte{"value": nil}}},
		{name: "a certificate: metadata only",
			in:   &corev1.Secret{ObjectMeta: meta(nil), Type: corev1.SecretTypeTLS, Data: map[string][]byte{"tls.crt": []byte("c"), "tls.key": []byte("k")}},
			want: &corev1.Secret{ObjectMeta: trimmed(nil), Type: corev1.SecretTypeTLS}},
		{name: "kubectl's last applied configuration: dropped, the other annotations kept",
			in: &corev1.Secret{ObjectMeta: meta(map[string]string{corev1.LastAppliedConfigAnnotation: `{"data":{"password":"cGFzcw=="}}`, "a": "b"}),
				Data: map[string][]byte{"password": []byte("pass")}},
			want: &corev1.Secret{ObjectMeta: trimmed(map[string]string{"a": "b"})}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := manager.TrimClusterSecret(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.in {
				t.Errorf("returned %p, want the Secret it was given (%p), trimmed in place", got, tc.in)
			}
			if !reflect.DeepEqual(tc.in, tc.want) {
				t.Errorf("trimmed to\n %+v\nwant\n %+v", tc.in, tc.want)
			}
		})
	}
	t.Run("not a Secret: as it is", func(t *testing.T) {
		cm := &corev1.ConfigMap{ObjectMeta: meta(map[string]string{corev1.LastAppliedConfigAnnotation: "{}"}), Data: map[string]string{"k": "v"}}
		want := cm.DeepCopy()
		got, err := manager.TrimClusterSecret(cm)
		if err != nil || got != cm || !reflect.DeepEqual(cm, want) {
			t.Errorf("TrimClusterSecret(ConfigMap) = %+v, %v; want it unchanged", got, err)
		}
	})
}

func TestCachesClusterSecrets(t *testing.T) {
	secrets := manager.ClusterSecretsCache()
	for _, tc := range []struct {
		name     string
		byObject map[client.Object]cache.ByObject
		want     bool
	}{
		{name: "no cache options"},
		{name: "other kinds", byObject: map[client.Object]cache.ByObject{&corev1.ConfigMap{}: {}}},
		{name: "Secrets", byObject: map[client.Object]cache.ByObject{&corev1.Secret{}: secrets}, want: true},
		{name: "Secrets among others", byObject: map[client.Object]cache.ByObject{&corev1.ConfigMap{}: {}, &corev1.Secret{}: secrets}, want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := &manager.Options{CacheByObject: tc.byObject}
			if got := o.CachesClusterSecrets(); got != tc.want {
				t.Errorf("CachesClusterSecrets() = %v, want %v", got, tc.want)
			}
		})
	}
}

// sentinelCache is a manager's cache that is never read.
type sentinelCache struct{ cache.Cache }

func TestClusterSecretReader(t *testing.T) {
	mgr := &testManager{cache: &sentinelCache{}}
	uncached := &manager.Options{CacheByObject: map[client.Object]cache.ByObject{&corev1.ConfigMap{}: {}}}
	if r := uncached.ClusterSecretReader(mgr); r != nil {
		t.Errorf("without cached Secrets: %#v, want nil (read from the API server)", r)
	}
	cached := &manager.Options{CacheByObject: map[client.Object]cache.ByObject{&corev1.Secret{}: manager.ClusterSecretsCache()}}
	if r := cached.ClusterSecretReader(mgr); r != mgr.cache {
		t.Errorf("with cached Secrets: %#v, want the manager's cache", r)
	}
}
