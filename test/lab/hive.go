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

package lab

// Hive's part of an agent installation, which no Hive runs in the lab to do: a stand-in, the
// smallest, for the ClusterDeployment controller's (openshift/hive
// pkg/controller/clusterdeployment, clusterinstall.go): once the AgentClusterInstall a
// ClusterDeployment's spec.clusterInstallRef names reports Completed=True, Hive sets
// spec.installed and copies the install's spec.clusterMetadata. The assisted-service simulator
// does it itself; the real assisted-service leaves it to Hive.

import (
	"context"
	"fmt"

	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// hiveInstalledStandIn marks ClusterDeployments installed as Hive does.
type hiveInstalledStandIn struct {
	client client.Client
}

func setupHiveInstalledStandIn(mgr ctrl.Manager) error {
	r := &hiveInstalledStandIn{client: mgr.GetClient()}
	if err := ctrl.NewControllerManagedBy(mgr).Named("hive-installed-stand-in").
		For(&hiveextv1beta1.AgentClusterInstall{}).Complete(r); err != nil {
		return fmt.Errorf("setting up Hive's stand-in: %w", err)
	}
	return nil
}

// installed tells whether the install reports Completed=True.
func installed(aci *hiveextv1beta1.AgentClusterInstall) bool {
	for _, c := range aci.Status.Conditions {
		if c.Type == hiveextv1beta1.ClusterCompletedCondition {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func (r *hiveInstalledStandIn) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	aci := &hiveextv1beta1.AgentClusterInstall{}
	if err := r.client.Get(ctx, req.NamespacedName, aci); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !installed(aci) || aci.Spec.ClusterDeploymentRef.Name == "" {
		return ctrl.Result{}, nil
	}
	cd := &hivev1.ClusterDeployment{}
	err := r.client.Get(ctx, client.ObjectKey{Namespace: aci.Namespace, Name: aci.Spec.ClusterDeploymentRef.Name}, cd)
	if apierrors.IsNotFound(err) {
		return ctrl.Result{}, nil
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	if ref := cd.Spec.ClusterInstallRef; cd.Spec.Installed || ref == nil || ref.Name != aci.Name ||
		ref.Kind != "AgentClusterInstall" || ref.Group != hiveextv1beta1.Group {
		return ctrl.Result{}, nil
	}
	base := cd.DeepCopy()
	cd.Spec.Installed = true
	if aci.Spec.ClusterMetadata != nil {
		cd.Spec.ClusterMetadata = aci.Spec.ClusterMetadata.DeepCopy()
	}
	if err := r.client.Patch(ctx, cd, client.MergeFrom(base)); err != nil {
		return ctrl.Result{}, fmt.Errorf("marking ClusterDeployment %s installed: %w", cd.Name, err)
	}
	return ctrl.Result{}, nil
}
