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

package v1alpha4

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// OpenshiftAssistedControlPlaneRolloutSpec controls the replacement of control-plane Machines,
// as KubeadmControlPlane's spec.rollout does. A Machine whose infrastructure template or
// bootstrap configuration no longer matches the spec is replaced too. Machines are replaced one
// at a time, a new one joining etcd before an old one leaves (surge of one); single-node
// OpenShift cannot be replaced this way.
// +kubebuilder:validation:MinProperties=1
type OpenshiftAssistedControlPlaneRolloutSpec struct {
	// after is a time after which every control-plane Machine created before it is replaced.
	// +optional
	After metav1.Time `json:"after,omitempty,omitzero"`
}

// OpenshiftAssistedControlPlaneRemediationSpec controls the remediation of unhealthy
// control-plane Machines, as KubeadmControlPlane's spec.remediation does. A Machine is
// remediated (deleted, its etcd member removed, and replaced) one at a time and only while the
// other etcd members keep quorum.
// +kubebuilder:validation:MinProperties=1
type OpenshiftAssistedControlPlaneRemediationSpec struct {
	// maxRetry is how many times in a row a Machine created to replace an unhealthy one is
	// itself remediated when it fails too (within minHealthyPeriodSeconds). Unset: no limit.
	// +optional
	// +kubebuilder:validation:Minimum=0
	MaxRetry *int32 `json:"maxRetry,omitempty"`

	// retryPeriodSeconds is how long to wait after a remediation before remediating its
	// replacement. Default 0.
	// +optional
	// +kubebuilder:validation:Minimum=0
	RetryPeriodSeconds *int32 `json:"retryPeriodSeconds,omitempty"`

	// minHealthyPeriodSeconds is how long after the remediation that created it a replacement
	// that fails counts as a retry; later it is a new problem and the retry count starts again.
	// Default 3600.
	// +optional
	// +kubebuilder:validation:Minimum=0
	MinHealthyPeriodSeconds *int32 `json:"minHealthyPeriodSeconds,omitempty"`
}
