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

package v1alpha1_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/apitesting/fuzzer"
	"k8s.io/apimachinery/pkg/runtime"
	runtimeserializer "k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/utils/ptr"
	utilconversion "sigs.k8s.io/cluster-api/util/conversion"
	"sigs.k8s.io/randfill"

	bootstrapv1alpha1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha1"
	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/internal/conversiontest"
)

// TestFuzzyConversion converts random objects v1alpha2 -> v1alpha1 -> v1alpha2 (nothing may be
// lost: v1alpha1 clients must not damage what v1alpha2 holds) and v1alpha1 -> v1alpha2 -> v1alpha1
// (nothing may be lost but what v1alpha2 has no place for, which spokeFuzzFuncs leaves unset).
func TestFuzzyConversion(t *testing.T) {
	s := runtime.NewScheme()
	if err := bootstrapv1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := bootstrapv1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	t.Run("for OpenshiftAssistedConfig", utilconversion.FuzzTestFunc(utilconversion.FuzzTestFuncInput{
		Scheme:      s,
		Hub:         &bootstrapv1.OpenshiftAssistedConfig{},
		Spoke:       &bootstrapv1alpha1.OpenshiftAssistedConfig{},
		FuzzerFuncs: []fuzzer.FuzzerFuncs{SpokeFuzzFuncs},
	}))
	t.Run("for OpenshiftAssistedConfigTemplate", utilconversion.FuzzTestFunc(utilconversion.FuzzTestFuncInput{
		Scheme:      s,
		Hub:         &bootstrapv1.OpenshiftAssistedConfigTemplate{},
		Spoke:       &bootstrapv1alpha1.OpenshiftAssistedConfigTemplate{},
		FuzzerFuncs: []fuzzer.FuzzerFuncs{SpokeFuzzFuncs},
	}))
}

// SpokeFuzzFuncs leaves unset, in v1alpha1 objects, what v1alpha2 cannot hold: upstream's failure
// fields (v1alpha2 reports problems in conditions), a condition severity other than the one a
// conversion gives (Info when not True), an empty data Secret name (v1alpha2 has no pointer).
func SpokeFuzzFuncs(_ runtimeserializer.CodecFactory) []any {
	return []any{
		func(in *bootstrapv1alpha1.OpenshiftAssistedConfigStatus, c randfill.Continue) {
			c.FillNoCustom(in)
			in.FailureReason, in.FailureMessage = "", ""
			if in.DataSecretName != nil && *in.DataSecretName == "" {
				in.DataSecretName = nil
			}
		},
		conversiontest.V1Beta1Condition,
	}
}

func TestDataSecretCreatedKeepsItsForm(t *testing.T) {
	for _, created := range []*bool{nil, ptr.To(false), ptr.To(true)} {
		hub := &bootstrapv1.OpenshiftAssistedConfig{}
		hub.Status.Initialization.DataSecretCreated = created
		spoke := &bootstrapv1alpha1.OpenshiftAssistedConfig{}
		if err := spoke.ConvertFrom(hub); err != nil {
			t.Fatal(err)
		}
		back := &bootstrapv1.OpenshiftAssistedConfig{}
		if err := spoke.ConvertTo(back); err != nil {
			t.Fatal(err)
		}
		if got := back.Status.Initialization.DataSecretCreated; (got == nil) != (created == nil) || ptr.Deref(got, false) != ptr.Deref(created, false) {
			t.Errorf("dataSecretCreated %v came back as %v", created, got)
		}
	}
}
