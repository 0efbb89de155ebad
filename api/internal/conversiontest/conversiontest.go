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

// Package conversiontest holds the fuzzer functions that the conversion tests of the older API
// versions share. Only tests import it.
package conversiontest

import (
	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1" //nolint:staticcheck // the older versions hold Cluster API v1beta1 conditions
	"sigs.k8s.io/randfill"

	bootstrapv1alpha1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha1"
)

// V1Beta1Condition fuzzes a Cluster API v1beta1 condition as a conversion from a metav1
// condition gives it: severity Info unless True, and never the reason conversions use for none.
func V1Beta1Condition(in *clusterv1beta1.Condition, c randfill.Continue) {
	c.FillNoCustom(in)
	in.Severity = ""
	if in.Status != "True" {
		in.Severity = clusterv1beta1.ConditionSeverityInfo
	}
	if in.Reason == bootstrapv1alpha1.NoReasonReported {
		in.Reason = ""
	}
}
