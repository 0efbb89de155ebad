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
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/manager"
)

// TestCachesDropManagedFields: the manager's cache stores an object without its managed fields,
// unless its kind is set to KeepManagedFields; the rest of its metadata stays.
func TestCachesDropManagedFields(t *testing.T) {
	o := parse(t)
	o.CacheByObject = map[client.Object]cache.ByObject{&corev1.ConfigMap{}: manager.KeepManagedFields()}
	mo, err := o.ManagerOptions(runtime.NewScheme())
	if err != nil {
		t.Fatal(err)
	}
	meta := metav1.ObjectMeta{Name: "a", Labels: map[string]string{"k": "v"},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "hive", Operation: metav1.ManagedFieldsOperationUpdate}}}
	if mo.Cache.DefaultTransform == nil {
		t.Fatal("the cache has no default transform")
	}
	got, err := mo.Cache.DefaultTransform(&corev1.Secret{ObjectMeta: *meta.DeepCopy()})
	if err != nil {
		t.Fatal(err)
	}
	if s := got.(*corev1.Secret); s.ManagedFields != nil || s.Labels["k"] != "v" {
		t.Errorf("cached as %+v, want its labels and no managed fields", s.ObjectMeta)
	}
	var kept *cache.ByObject
	for obj, by := range mo.Cache.ByObject {
		if _, ok := obj.(*corev1.ConfigMap); ok {
			kept = &by
		}
	}
	if kept == nil || kept.Transform == nil {
		t.Fatalf("ConfigMaps have no transform of their own (%+v): the default would strip them", kept)
	}
	got, err = kept.Transform(&corev1.ConfigMap{ObjectMeta: *meta.DeepCopy()})
	if err != nil {
		t.Fatal(err)
	}
	if cm := got.(*corev1.ConfigMap); len(cm.ManagedFields) != 1 || cm.ManagedFields[0].Manager != "hive" {
		t.Errorf("managed fields %+v, want hive's kept", cm.ManagedFields)
	}
}
