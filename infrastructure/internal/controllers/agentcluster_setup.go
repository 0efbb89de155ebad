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
	"errors"
	"fmt"

	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util"
	"sigs.k8s.io/cluster-api/util/predicates"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	infrav1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/infrastructure/v1beta1"
)

// SetupWithManager registers the AgentCluster controller. It watches what it waits for: the
// Cluster (owner, pause, control plane), ClusterDeployments (created by the control plane, or
// deleted) and the AgentClusterInstalls it created (deleted).
func (r *AgentClusterReconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, options controller.Options) error {
	if r.Client == nil || r.APIReader == nil || r.Recorder == nil {
		return errors.New("AgentClusterReconciler needs Client, APIReader and Recorder")
	}
	if err := mgr.GetFieldIndexer().IndexField(ctx, &infrav1.AgentCluster{}, clusterDeploymentIndex, indexClusterDeployment); err != nil {
		return fmt.Errorf("indexing AgentClusters by ClusterDeployment: %w", err)
	}
	log := ctrl.LoggerFrom(ctx).WithValues("controller", "agentcluster")
	scheme := mgr.GetScheme()
	filter := predicates.ResourceHasFilterLabel(scheme, log, r.WatchFilterValue)
	err := ctrl.NewControllerManagedBy(mgr).
		Named("agentcluster").
		WithOptions(options).
		For(&infrav1.AgentCluster{}, builder.WithPredicates(filter)).
		Watches(&clusterv1.Cluster{},
			handler.EnqueueRequestsFromMapFunc(util.ClusterToInfrastructureMapFunc(ctx,
				infrav1.GroupVersion.WithKind("AgentCluster"), mgr.GetClient(), &infrav1.AgentCluster{})),
			builder.WithPredicates(filter)).
		Watches(&hivev1.ClusterDeployment{}, handler.EnqueueRequestsFromMapFunc(r.clusterDeploymentToAgentClusters)).
		Owns(&hiveextv1beta1.AgentClusterInstall{}).
		Complete(r)
	if err != nil {
		return fmt.Errorf("setting up the AgentCluster controller: %w", err)
	}
	return nil
}

// indexClusterDeployment keys an AgentCluster by the ClusterDeployment it uses or would use: its
// reference, else its own name (created by it) and its Cluster's name (created by the control plane).
func indexClusterDeployment(o client.Object) []string {
	ac, ok := o.(*infrav1.AgentCluster)
	if !ok {
		return nil
	}
	if ref := ac.Spec.ClusterDeploymentRef; ref != nil {
		ns := ref.Namespace
		if ns == "" {
			ns = ac.Namespace
		}
		return []string{ns + "/" + ref.Name}
	}
	keys := []string{ac.Namespace + "/" + ac.Name}
	if c := ac.Labels[clusterv1.ClusterNameLabel]; c != "" && c != ac.Name {
		keys = append(keys, ac.Namespace+"/"+c)
	}
	return keys
}

func (r *AgentClusterReconciler) clusterDeploymentToAgentClusters(ctx context.Context, o client.Object) []reconcile.Request {
	list := &infrav1.AgentClusterList{}
	if err := r.Client.List(ctx, list, client.MatchingFields{clusterDeploymentIndex: o.GetNamespace() + "/" + o.GetName()},
		client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing the AgentClusters of a ClusterDeployment")
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
	}
	return out
}
