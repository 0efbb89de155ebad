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

package scheme_test

import (
	"errors"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"

	capoascheme "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/scheme"
)

// thirdParty names one kind of each API group AddToScheme promises, at the version it registers.
var thirdParty = []k8sschema.GroupVersionKind{
	{Group: "", Version: "v1", Kind: "Secret"},
	{Group: "apps", Version: "v1", Kind: "Deployment"},
	{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"},
	{Group: "cluster.x-k8s.io", Version: "v1beta2", Kind: "Cluster"},
	{Group: "cluster.x-k8s.io", Version: "v1beta2", Kind: "Machine"},
	{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta2", Kind: "Metal3Machine"},
	{Group: "metal3.io", Version: "v1alpha1", Kind: "BareMetalHost"},
	{Group: "agent-install.openshift.io", Version: "v1beta1", Kind: "Agent"},
	{Group: "agent-install.openshift.io", Version: "v1beta1", Kind: "InfraEnv"},
	{Group: "extensions.hive.openshift.io", Version: "v1beta1", Kind: "AgentClusterInstall"},
	{Group: "hive.openshift.io", Version: "v1", Kind: "ClusterDeployment"},
}

func TestAddToScheme(t *testing.T) {
	s := runtime.NewScheme()
	if err := capoascheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	for _, gvk := range thirdParty {
		if !s.Recognizes(gvk) {
			t.Errorf("the scheme does not recognize %v", gvk)
		}
	}
	// Only the versions it names: Cluster API's v1beta1 is not served by this project's scheme.
	if gvk := (k8sschema.GroupVersionKind{Group: "cluster.x-k8s.io", Version: "v1beta1", Kind: "Cluster"}); s.Recognizes(gvk) {
		t.Errorf("the scheme recognizes %v", gvk)
	}
}

func TestNew(t *testing.T) {
	thing := k8sschema.GroupVersionKind{Group: "example.test", Version: "v1", Kind: "Thing"}
	var calls []string
	adder := func(name string, err error) func(*runtime.Scheme) error {
		return func(s *runtime.Scheme) error {
			calls = append(calls, name)
			// The third-party APIs are there before the provider's own.
			if !s.Recognizes(corev1.SchemeGroupVersion.WithKind("Secret")) {
				t.Errorf("adder %s ran before the third-party APIs were added", name)
			}
			if err == nil {
				s.AddKnownTypeWithName(thing, &corev1.ConfigMap{})
			}
			return err
		}
	}

	t.Run("no adders", func(t *testing.T) {
		s, err := capoascheme.New()
		if err != nil {
			t.Fatal(err)
		}
		for _, gvk := range thirdParty {
			if !s.Recognizes(gvk) {
				t.Errorf("the scheme does not recognize %v", gvk)
			}
		}
		if s.Recognizes(thing) {
			t.Errorf("a new scheme recognizes %v", thing)
		}
	})

	t.Run("adders, in order", func(t *testing.T) {
		calls = nil
		s, err := capoascheme.New(adder("first", nil), adder("second", nil))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(calls, []string{"first", "second"}) {
			t.Errorf("adders ran %v, want first, second", calls)
		}
		if !s.Recognizes(thing) {
			t.Errorf("the scheme does not recognize the adder's %v", thing)
		}
		// Each call makes its own scheme.
		other, err := capoascheme.New()
		if err != nil {
			t.Fatal(err)
		}
		if other.Recognizes(thing) {
			t.Error("a second scheme shares the first one's types")
		}
	})

	t.Run("an adder's error", func(t *testing.T) {
		calls = nil
		boom := errors.New("boom")
		s, err := capoascheme.New(adder("first", boom), adder("second", nil))
		if !errors.Is(err, boom) || s != nil {
			t.Errorf("New = %v, %v; want nil and the adder's error", s, err)
		}
		if !slices.Equal(calls, []string{"first"}) {
			t.Errorf("adders ran %v, want only first (New stops at the first error)", calls)
		}
	})
}
