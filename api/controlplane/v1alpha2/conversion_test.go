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

package v1alpha2_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/apitesting/fuzzer"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	runtimeserializer "k8s.io/apimachinery/pkg/runtime/serializer"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	utilconversion "sigs.k8s.io/cluster-api/util/conversion"
	"sigs.k8s.io/randfill"

	bootstrapv1alpha1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha1"
	controlplanev1alpha2 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha2"
	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/internal/conversiontest"
)

// infraGroup is the group the fuzzed infrastructure references name; the test's API version
// lookup gives its kinds version v1beta1.
const infraGroup = "infrastructure.cluster.x-k8s.io"

// TestFuzzyConversion converts random objects v1alpha3 -> v1alpha2 -> v1alpha3 (nothing may be
// lost) and v1alpha2 -> v1alpha3 -> v1alpha2 (nothing but what v1alpha3 has no place for, which
// the fuzzer functions leave unset).
func TestFuzzyConversion(t *testing.T) {
	controlplanev1alpha2.SetAPIVersionGetter(func(gk schema.GroupKind) (string, error) {
		return schema.GroupVersion{Group: gk.Group, Version: "v1beta1"}.String(), nil
	})
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{controlplanev1alpha2.AddToScheme, controlplanev1.AddToScheme} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("for OpenshiftAssistedControlPlane", utilconversion.FuzzTestFunc(utilconversion.FuzzTestFuncInput{
		Scheme:      s,
		Hub:         &controlplanev1.OpenshiftAssistedControlPlane{},
		Spoke:       &controlplanev1alpha2.OpenshiftAssistedControlPlane{},
		FuzzerFuncs: []fuzzer.FuzzerFuncs{fuzzFuncs},
	}))
}

func fuzzFuncs(_ runtimeserializer.CodecFactory) []any {
	return []any{
		conversiontest.V1Beta1Condition,
		// v1alpha3 names the template's group; the lookup gives the version.
		func(in *clusterv1.ContractVersionedObjectReference, c randfill.Continue) {
			c.FillNoCustom(in)
			in.APIGroup = infraGroup
		},
		// v1alpha2 keeps of its ObjectReference what v1alpha3 can name, in the version the
		// lookup gives, and durations in whole seconds.
		func(in *controlplanev1alpha2.OpenshiftAssistedControlPlaneMachineTemplate, c randfill.Continue) {
			c.FillNoCustom(in)
			in.InfrastructureRef = corev1.ObjectReference{
				APIVersion: infraGroup + "/v1beta1", Kind: in.InfrastructureRef.Kind, Name: in.InfrastructureRef.Name,
			}
			for _, d := range []**metav1.Duration{&in.NodeDrainTimeout, &in.NodeVolumeDetachTimeout, &in.NodeDeletionTimeout} {
				if *d != nil {
					*d = &metav1.Duration{Duration: time.Duration(c.Int31()) * time.Second}
				}
			}
		},
		// Upstream's status fields that v1alpha3 derives or does not have.
		func(in *controlplanev1alpha2.OpenshiftAssistedControlPlaneStatus, c randfill.Continue) {
			c.FillNoCustom(in)
			in.ClusterDeploymentRef, in.FailureReason, in.FailureMessage = nil, nil, nil
			if in.Version != nil && *in.Version == "" {
				in.Version = nil
			}
			in.Replicas, in.ReadyReplicas, in.UpdatedReplicas = c.Int31n(10), c.Int31n(10), c.Int31n(10)
			in.UnavailableReplicas = c.Int31n(in.Replicas + 1)
			in.Ready = false
			for _, cond := range in.Conditions {
				if cond.Type == controlplanev1.AvailableCondition {
					in.Ready = cond.Status == corev1.ConditionTrue
				}
			}
		},
		// The embedded bootstrap config spec and its status rules are those of bootstrap v1alpha1.
		func(in *bootstrapv1alpha1.OpenshiftAssistedConfigStatus, c randfill.Continue) {
			c.FillNoCustom(in)
		},
	}
}
