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
	"strings"

	corev1 "k8s.io/api/core/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/controllers/clustercache"
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

// NodeProviderIDReconciler sets spec.providerID on the workload cluster's Node of each
// provisioned AgentMachine. It reaches the workload cluster through Cluster API's ClusterCache.
type NodeProviderIDReconciler struct {
	Client           client.Client
	ClusterCache     clustercache.ClusterCache
	WatchFilterValue string

	controller controller.Controller
}

// +kubebuilder:rbac:groups="",resources=secrets,verbs=get

// Reconcile finds the Node of a provisioned AgentMachine, by the host's system UUID (the Agent's
// name is the host id assisted-service derives from it) or by its InternalIP addresses, and
// sets its providerID unless one is set.
func (r *NodeProviderIDReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	am := &infrav1.AgentMachine{}
	if err := r.Client.Get(ctx, req.NamespacedName, am); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !machineProvisioned(am) || am.Spec.ProviderID == "" || !am.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	clusterName := am.Labels[clusterv1.ClusterNameLabel]
	if clusterName == "" {
		return ctrl.Result{}, nil
	}
	cluster, err := util.GetClusterByName(ctx, r.Client, am.Namespace, clusterName)
	if err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	key := client.ObjectKeyFromObject(cluster)
	if err := r.watchNodes(ctx, cluster); err != nil {
		if errors.Is(err, clustercache.ErrClusterNotConnected) {
			log.V(4).Info("Workload cluster not connected yet; waiting for the ClusterCache to connect")
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	remote, err := r.ClusterCache.GetClient(ctx, key)
	if err != nil {
		if errors.Is(err, clustercache.ErrClusterNotConnected) {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("getting a client for Cluster %s: %w", cluster.Name, err)
	}
	nodes := &corev1.NodeList{}
	if err := remote.List(ctx, nodes); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing the Nodes of Cluster %s: %w", cluster.Name, err)
	}
	node := matchNode(am, nodes.Items)
	if node == nil {
		log.V(4).Info("No Node matches the host yet")
		return ctrl.Result{}, nil
	}
	if node.Spec.ProviderID != "" {
		if node.Spec.ProviderID != am.Spec.ProviderID {
			log.Info("The host's Node has another providerID; leaving it", "Node", node.Name, "providerID", node.Spec.ProviderID)
		}
		return ctrl.Result{}, nil
	}
	before := node.DeepCopy()
	node.Spec.ProviderID = am.Spec.ProviderID
	if err := remote.Patch(ctx, node, client.MergeFrom(before)); err != nil {
		return ctrl.Result{}, fmt.Errorf("setting the providerID of Node %s: %w", node.Name, err)
	}
	log.Info("Set the providerID of the Node", "Node", node.Name, "providerID", am.Spec.ProviderID)
	return ctrl.Result{}, nil
}

// matchNode returns the Node of the AgentMachine's host: the one whose system UUID is the
// Agent's name, else the one that has one of the host's InternalIP addresses. A Node that
// matches only by hostname is not taken (hostnames repeat, e.g. "localhost").
func matchNode(am *infrav1.AgentMachine, nodes []corev1.Node) *corev1.Node {
	agentID := strings.TrimPrefix(am.Spec.ProviderID, infrav1.ProviderIDPrefix)
	for i := range nodes {
		if agentID != "" && strings.EqualFold(nodes[i].Status.NodeInfo.SystemUUID, agentID) {
			return &nodes[i]
		}
	}
	ips := map[string]bool{}
	for _, a := range am.Status.Addresses {
		if a.Type == clusterv1.MachineInternalIP || a.Type == clusterv1.MachineExternalIP {
			ips[a.Address] = true
		}
	}
	for i := range nodes {
		for _, a := range nodes[i].Status.Addresses {
			if (a.Type == corev1.NodeInternalIP || a.Type == corev1.NodeExternalIP) && ips[a.Address] {
				return &nodes[i]
			}
		}
	}
	return nil
}

// watchNodes makes Node events of the workload cluster wake its AgentMachines (a Node that joins
// after the host is installed).
func (r *NodeProviderIDReconciler) watchNodes(ctx context.Context, cluster *clusterv1.Cluster) error {
	return r.ClusterCache.Watch(ctx, client.ObjectKeyFromObject(cluster), clustercache.NewWatcher(clustercache.WatcherOptions{
		Name:         "agentmachine-node-watchNodes",
		Watcher:      r.controller,
		Kind:         &corev1.Node{},
		EventHandler: handler.EnqueueRequestsFromMapFunc(r.clusterAgentMachines(cluster.Namespace, cluster.Name)),
	}))
}

func (r *NodeProviderIDReconciler) clusterAgentMachines(namespace, name string) handler.MapFunc {
	return func(ctx context.Context, _ client.Object) []reconcile.Request {
		list := &infrav1.AgentMachineList{}
		if err := r.Client.List(ctx, list, client.InNamespace(namespace),
			client.MatchingLabels{clusterv1.ClusterNameLabel: name}, client.UnsafeDisableDeepCopy); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "Listing the AgentMachines of a Cluster", "Cluster", name)
			return nil
		}
		out := make([]reconcile.Request, 0, len(list.Items))
		for i := range list.Items {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
		return out
	}
}

// SetupWithManager registers the controller; it is woken by AgentMachine changes, by the
// ClusterCache connecting to a workload cluster, and by that cluster's Node events.
func (r *NodeProviderIDReconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, options controller.Options) error {
	if r.Client == nil || r.ClusterCache == nil {
		return errors.New("NodeProviderIDReconciler needs Client and ClusterCache")
	}
	log := ctrl.LoggerFrom(ctx).WithValues("controller", "agentmachine-node")
	scheme := mgr.GetScheme()
	clusterToAgentMachines, err := util.ClusterToTypedObjectsMapper(r.Client, &infrav1.AgentMachineList{}, scheme)
	if err != nil {
		return fmt.Errorf("building the Cluster to AgentMachines mapper: %w", err)
	}
	c, err := ctrl.NewControllerManagedBy(mgr).
		Named("agentmachine-node").
		WithOptions(options).
		For(&infrav1.AgentMachine{}, builder.WithPredicates(predicates.ResourceHasFilterLabel(scheme, log, r.WatchFilterValue))).
		WatchesRawSource(r.ClusterCache.GetClusterSource("agentmachine-node", clusterToAgentMachines)).
		Build(r)
	if err != nil {
		return fmt.Errorf("setting up the Node providerID controller: %w", err)
	}
	r.controller = c
	return nil
}
