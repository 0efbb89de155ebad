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

// Package move is what the providers' controllers share about clusterctl move.
package move

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"
)

// DeletingForMove tells whether clusterctl move is deleting obj from this management cluster after
// creating it on another one. clusterctl annotates the object, deletes it and then removes its
// finalizers itself: a controller must leave it, and what it stands for, alone. A deletion cleanup
// run here would undo what lives on in the other management cluster (unbind its hosts, delete
// its ClusterDeployment).
func DeletingForMove(obj metav1.Object) bool {
	_, ok := obj.GetAnnotations()[clusterctlv1.DeleteForMoveAnnotation]
	return ok
}
