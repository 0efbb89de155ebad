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

package controllers

import (
	"context"
	"fmt"

	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/metrics"
)

// CountControlPlanes counts the control planes reader holds, for the capoa_control_planes metric:
// by namespace and the reason of their Available condition (Installing: an install in progress;
// InstallFailed, InstallSpecRejected: one that needs the user; Installed), "Unknown" before the
// first reconcile sets it.
func CountControlPlanes(reader client.Reader) metrics.Source {
	return func(ctx context.Context) ([]metrics.Count, error) {
		list := &controlplanev1.OpenshiftAssistedControlPlaneList{}
		if err := reader.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
			return nil, fmt.Errorf("listing OpenshiftAssistedControlPlanes: %w", err)
		}
		keys := make([][]string, 0, len(list.Items))
		for i := range list.Items {
			reason := "Unknown"
			if c := conditions.Get(&list.Items[i], controlplanev1.AvailableCondition); c != nil && c.Reason != "" {
				reason = c.Reason
			}
			keys = append(keys, []string{list.Items[i].Namespace, reason})
		}
		return metrics.Tally(keys), nil
	}
}
