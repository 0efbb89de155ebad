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

package reconciler

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func TestAdoptOwned(t *testing.T) {
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "owner", UID: "u-owner"}}
	gvk := corev1.SchemeGroupVersion.WithKind("ConfigMap")
	plain := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "owner", UID: "u-owner"}
	other := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "other", UID: "u-other", Controller: ptr.To(true)}
	for name, tc := range map[string]struct {
		owners      []metav1.OwnerReference
		wantAdopted bool
	}{
		"created by the upstream provider for owner": {owners: []metav1.OwnerReference{plain}, wantAdopted: true},
		"not owned by owner":                         {owners: nil},
		"controlled by another":                      {owners: []metav1.OwnerReference{plain, other}},
	} {
		t.Run(name, func(t *testing.T) {
			obj := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "s", OwnerReferences: tc.owners,
				Labels: map[string]string{"upstream": "kept"}}, StringData: map[string]string{"spec": "kept"}}
			c := fake.NewClientBuilder().WithScheme(newScheme(t)).WithObjects(obj).Build()
			got := &corev1.Secret{}
			if err := c.Get(context.Background(), client.ObjectKeyFromObject(obj), got); err != nil {
				t.Fatal(err)
			}
			adopted, err := AdoptOwned(context.Background(), c, owner, gvk, got, map[string]string{"ours": "added"})
			if err != nil || adopted != tc.wantAdopted {
				t.Fatalf("AdoptOwned = %v, %v; want %v, nil", adopted, err, tc.wantAdopted)
			}
			stored := &corev1.Secret{}
			if err := c.Get(context.Background(), client.ObjectKeyFromObject(obj), stored); err != nil {
				t.Fatal(err)
			}
			controlled := metav1.IsControlledBy(stored, owner)
			if controlled != tc.wantAdopted {
				t.Errorf("controlled by owner = %v, want %v (owners %v)", controlled, tc.wantAdopted, stored.OwnerReferences)
			}
			if tc.wantAdopted && (len(stored.OwnerReferences) != 1 || stored.Labels["ours"] != "added" || stored.Labels["upstream"] != "kept") {
				t.Errorf("adopted: owners %v, labels %v: want one controller reference, both labels", stored.OwnerReferences, stored.Labels)
			}
			if !tc.wantAdopted && stored.Labels["ours"] != "" {
				t.Errorf("left alone, yet labelled: %v", stored.Labels)
			}
		})
	}
}

func TestOwnedByAndCreatedFor(t *testing.T) {
	owner := &metav1.ObjectMeta{Name: "owner", UID: "u-owner"}
	plain := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "owner", UID: "u-owner"}
	controller := plain
	controller.Controller = ptr.To(true)
	other := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "other", UID: "u-other", Controller: ptr.To(true)}
	for name, tc := range map[string]struct {
		owners                   []metav1.OwnerReference
		ownedBy, createdForOwner bool
	}{
		"no owners":                          {},
		"a plain reference (upstream's)":     {owners: []metav1.OwnerReference{plain}, ownedBy: true, createdForOwner: true},
		"the owner is the controller":        {owners: []metav1.OwnerReference{controller}, ownedBy: true},
		"another object is the controller":   {owners: []metav1.OwnerReference{plain, other}, ownedBy: true},
		"only another object, as controller": {owners: []metav1.OwnerReference{other}},
	} {
		obj := &metav1.ObjectMeta{Name: "obj", OwnerReferences: tc.owners}
		if got := OwnedBy(obj, owner); got != tc.ownedBy {
			t.Errorf("%s: OwnedBy = %v, want %v", name, got, tc.ownedBy)
		}
		if got := CreatedFor(obj, owner); got != tc.createdForOwner {
			t.Errorf("%s: CreatedFor = %v, want %v", name, got, tc.createdForOwner)
		}
	}
}

func TestReplaceFinalizer(t *testing.T) {
	for name, tc := range map[string]struct {
		finalizers   []string
		wantReplaced bool
		want         []string
	}{
		"upstream's finalizer": {finalizers: []string{"other", "upstream/deprovision"}, wantReplaced: true, want: []string{"other", "ours"}},
		"ours already":         {finalizers: []string{"ours"}, want: []string{"ours"}},
		"none":                 {want: nil},
	} {
		t.Run(name, func(t *testing.T) {
			obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c", Finalizers: tc.finalizers}}
			c := fake.NewClientBuilder().WithScheme(newScheme(t)).WithObjects(obj).Build()
			got := &corev1.ConfigMap{}
			if err := c.Get(context.Background(), types.NamespacedName{Namespace: "ns", Name: "c"}, got); err != nil {
				t.Fatal(err)
			}
			replaced, err := ReplaceFinalizer(context.Background(), c, got, "upstream/deprovision", "ours")
			if err != nil || replaced != tc.wantReplaced {
				t.Fatalf("ReplaceFinalizer = %v, %v; want %v, nil", replaced, err, tc.wantReplaced)
			}
			stored := &corev1.ConfigMap{}
			if err := c.Get(context.Background(), types.NamespacedName{Namespace: "ns", Name: "c"}, stored); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(stored.Finalizers, tc.want) {
				t.Errorf("finalizers %v, want %v", stored.Finalizers, tc.want)
			}
		})
	}
}

func newScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}
