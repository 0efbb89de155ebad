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

// Package v1alpha1 serves capi-provider.agent-install.openshift.io/v1alpha1, the first version of
// openshift/cluster-api-provider-agent's API, which its users may still store.
//
// Upstream's v1alpha1 and v1beta1 types are identical (cluster-api-provider-agent's api/v1alpha1
// and api/v1beta1 differ only in markers; v1beta1 became the storage version in September 2023,
// da90fc11) and its CRDs declare no conversion, so the API server converts between them by
// changing apiVersion alone. This package keeps that arrangement: its kinds are made of the
// v1beta1 spec and status types, so the two versions have one schema, nothing is lost in either
// direction, and no conversion webhook is needed. It stays served (deprecated) so that a hub whose
// status.storedVersions holds v1alpha1 accepts these CRDs; see docs/migration.md.
// +kubebuilder:object:generate=true
// +groupName=capi-provider.agent-install.openshift.io
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group version used to register these objects.
	GroupVersion = schema.GroupVersion{Group: "capi-provider.agent-install.openshift.io", Version: "v1alpha1"}

	// schemeBuilder registers this group-version's types.
	schemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the types in this group-version to the given scheme.
	AddToScheme = schemeBuilder.AddToScheme
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion,
		&AgentCluster{}, &AgentClusterList{},
		&AgentMachine{}, &AgentMachineList{},
		&AgentMachineTemplate{}, &AgentMachineTemplateList{})
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
}
