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

package webhooks

import (
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// TestContractAPIVersion: the version a v1alpha2 infrastructureRef gets is the one Cluster API
// would use, from the template CRD's contract labels.
func TestContractAPIVersion(t *testing.T) {
	gk := schema.GroupKind{Group: "infrastructure.cluster.x-k8s.io", Kind: "Metal3MachineTemplate"}
	for _, tc := range []struct {
		name    string
		labels  map[string]string
		noCRD   bool
		want    string
		wantErr bool
	}{
		{name: "the newest version of the v1beta2 contract", labels: map[string]string{"cluster.x-k8s.io/v1beta2": "v1alpha1_v1beta2_v1beta1"}, want: "infrastructure.cluster.x-k8s.io/v1beta2"},
		{name: "the v1beta2 contract before v1beta1", labels: map[string]string{"cluster.x-k8s.io/v1beta1": "v1alpha5", "cluster.x-k8s.io/v1beta2": "v1beta1"}, want: "infrastructure.cluster.x-k8s.io/v1beta1"},
		{name: "only the v1beta1 contract", labels: map[string]string{"cluster.x-k8s.io/v1beta1": "v1alpha4_v1beta1"}, want: "infrastructure.cluster.x-k8s.io/v1beta1"},
		{name: "no contract label", labels: map[string]string{"other": "x"}, wantErr: true},
		{name: "no CRD", noCRD: true, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := runtime.NewScheme()
			if err := apiextensionsv1.AddToScheme(s); err != nil {
				t.Fatal(err)
			}
			b := fake.NewClientBuilder().WithScheme(s)
			if !tc.noCRD {
				b = b.WithObjects(&apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{
					Name: "metal3machinetemplates.infrastructure.cluster.x-k8s.io", Labels: tc.labels}})
			}
			got, err := ContractAPIVersion(b.Build())(gk)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("got %q, %v; want %q (error %v)", got, err, tc.want, tc.wantErr)
			}
		})
	}
}
