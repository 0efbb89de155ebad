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

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// ControlPlaneKind is the kind of this control plane, as a Cluster's spec.controlPlaneRef names it.
const ControlPlaneKind = "OpenshiftAssistedControlPlane"

// ClusterDeploymentKey is the one rule, followed by every provider of this repository, that
// names the Hive ClusterDeployment and the AgentClusterInstall of a Cluster whose control plane
// is an OpenshiftAssistedControlPlane: both are named after the Cluster, in its namespace.
func ClusterDeploymentKey(cluster metav1.Object) types.NamespacedName {
	return types.NamespacedName{Namespace: cluster.GetNamespace(), Name: cluster.GetName()}
}
