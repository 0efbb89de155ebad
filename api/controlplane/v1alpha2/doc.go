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

// Package v1alpha2 serves controlplane.cluster.x-k8s.io/v1alpha2, the version in which upstream
// openshift-assisted/cluster-api-provider-openshift-assisted v0.3.0 to v0.4.0 store
// OpenshiftAssistedControlPlane (and which its later branches still serve, deprecated), so that a
// hub whose status.storedVersions holds v1alpha2 accepts these CRDs and its objects keep working.
//
// Its schema is upstream's v1alpha2 (machineTemplate.infrastructureRef as an ObjectReference,
// the node timeouts as durations, an embedded bootstrap v1alpha1 config spec, the Cluster API
// v1beta1 contract's status), with the validation of v1alpha4. It is served, deprecated and never
// stored: the API server converts it to and from v1alpha4 through the control-plane provider's
// conversion webhook (conversion.go); see docs/migration.md.
// +kubebuilder:object:generate=true
// +k8s:conversion-gen=github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4
// +groupName=controlplane.cluster.x-k8s.io
package v1alpha2
