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

// Package pause sets a Cluster's spec.paused as a user does (kubectl patch --type merge): one
// merge patch of that field, without reading the Cluster first. A read, a change and an update
// conflict whenever a controller writes the Cluster in between, and Cluster API's own controller
// does (its Paused condition follows the field), so tests that updated it failed under load.
package pause

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// SetCluster sets spec.paused of the Cluster named by key.
func SetCluster(ctx context.Context, c client.Client, key client.ObjectKey, paused bool) error {
	cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	patch := fmt.Appendf(nil, `{"spec":{"paused":%t}}`, paused)
	if err := c.Patch(ctx, cluster, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("setting spec.paused of Cluster %s to %t: %w", key, paused, err)
	}
	return nil
}
