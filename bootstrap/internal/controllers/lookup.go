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

	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	"github.com/openshift/assisted-service/models"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
)

// clusterDeploymentFor returns the Hive ClusterDeployment of cluster, or nil while there is none.
//
// The control-plane provider creates it, named by controlplanev1.ClusterDeploymentKey. Only a
// Cluster with a controlPlaneRef has one.
func clusterDeploymentFor(ctx context.Context, c client.Reader, cluster *clusterv1.Cluster) (*hivev1.ClusterDeployment, error) {
	if !cluster.Spec.ControlPlaneRef.IsDefined() {
		return nil, nil
	}
	cd := &hivev1.ClusterDeployment{}
	key := controlplanev1.ClusterDeploymentKey(cluster)
	if err := c.Get(ctx, key, cd); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("getting ClusterDeployment %s: %w", key, err)
	}
	return cd, nil
}

// clusterInstallFor returns the AgentClusterInstall cd refers to (spec.clusterInstallRef), or
// nil when it refers to none or it does not exist.
func clusterInstallFor(ctx context.Context, c client.Reader, cd *hivev1.ClusterDeployment) (*hiveextv1beta1.AgentClusterInstall, error) {
	ref := cd.Spec.ClusterInstallRef
	if ref == nil || ref.Kind != "AgentClusterInstall" || ref.Name == "" {
		return nil, nil
	}
	aci := &hiveextv1beta1.AgentClusterInstall{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: cd.Namespace, Name: ref.Name}, aci); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("getting AgentClusterInstall %s/%s: %w", cd.Namespace, ref.Name, err)
	}
	return aci, nil
}

// installationRunning tells whether the cluster's first installation runs (from preparation to
// finalizing): hosts that are not part of it must wait until it completes, then join as day-2 hosts.
func installationRunning(aci *hiveextv1beta1.AgentClusterInstall) bool {
	if aci == nil {
		return false
	}
	switch aci.Status.DebugInfo.State {
	case models.ClusterStatusPreparingForInstallation, models.ClusterStatusInstalling,
		models.ClusterStatusInstallingPendingUserAction, models.ClusterStatusFinalizing:
		return true
	}
	return false
}
