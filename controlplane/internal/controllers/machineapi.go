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
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/controlplane/internal/etcd"
)

// When Machine API is functional in the workload cluster, cluster-etcd-operator adds the etcd
// member of a control-plane node only once a machine.openshift.io Machine references the node's
// internal IP (getEtcdPeerURLToAdd, FindMachineByNodeInternalIP); otherwise it logs "Ignoring
// node ... no Machine found referencing this node's internal IP" and the node's etcd pod
// crash-loops (assisted-service docs/user-guide/day2-master, a known issue of day-2 control-plane
// nodes). It counts as functional (ceohelpers/machine_api.go IsFunctional) when the MachineAPI
// capability is enabled and a master machine.openshift.io Machine is Running. The control plane
// cannot fix that by itself (the capability cannot be disabled, and the installer's Machines are
// the cluster's): it says so, where a user looks, instead of waiting in silence.

var (
	clusterVersionGVK = schema.GroupVersionKind{Group: "config.openshift.io", Version: "v1", Kind: "ClusterVersion"}
	mapiMachineList   = schema.GroupVersionKind{Group: "machine.openshift.io", Version: "v1beta1", Kind: "MachineList"}
)

const (
	machineAPINamespace    = "openshift-machine-api"
	machineAPIRoleLabel    = "machine.openshift.io/cluster-api-machine-role"
	machineAPICapability   = "MachineAPI"
	machineAPIRunningPhase = "Running"
)

// joiningMachines lists the control-plane Machines whose node has no etcd member.
func joiningMachines(ec *etcd.Cluster, machines []*clusterv1.Machine) []string {
	var out []string
	for _, m := range machines {
		if node := nodeName(m); node != "" && m.DeletionTimestamp.IsZero() && ec.Member(node) == nil {
			out = append(out, fmt.Sprintf("%s (node %s)", m.Name, node))
		}
	}
	return out
}

// reconcileMachineAPIMode checks, while a Machine's member has not joined, whether
// cluster-etcd-operator ignores the node because Machine API is functional, and records why in
// s.etcd.machineAPI for the EtcdClusterHealthy condition (with a Warning event when it starts).
func (r *OpenshiftAssistedControlPlaneReconciler) reconcileMachineAPIMode(ctx context.Context, s *scope) error {
	if !etcdReachable(s) {
		return nil
	}
	ec, err := r.loadEtcd(ctx, s)
	if err != nil {
		return nil //nolint:nilerr // reported by the EtcdClusterHealthy condition; retried
	}
	joining := joiningMachines(ec, s.machines)
	if len(joining) == 0 {
		return nil
	}
	c, err := r.ClusterCache.GetClient(ctx, client.ObjectKeyFromObject(s.cluster))
	if err != nil {
		return nil //nolint:nilerr // the workload cluster is not reachable yet: nothing to tell
	}
	functional, err := machineAPIFunctional(ctx, c)
	if err != nil || !functional {
		return err
	}
	s.etcd.machineAPI = fmt.Sprintf("cluster-etcd-operator adds no etcd member for Machine %s: the workload cluster runs Machine API "+
		"(capability %s, a Running master machine.openshift.io Machine in %s), and in that mode the operator adds a member only for a node "+
		"that a machine.openshift.io Machine references by internal IP. Create such a Machine for the node, or install clusters without the %s capability (spec.config.capabilities); see the troubleshooting guide",
		strings.Join(joining, ", "), machineAPICapability, machineAPINamespace, machineAPICapability)
	if prev := conditions.Get(s.oacp, controlplanev1.EtcdClusterHealthyCondition); prev == nil || prev.Reason != controlplanev1.EtcdMemberNotAddedReason {
		r.Recorder.Eventf(s.oacp, nil, corev1.EventTypeWarning, controlplanev1.EtcdMemberNotAddedReason, "CheckEtcdMembers", "%s", s.etcd.machineAPI)
	}
	return nil
}

// machineAPIFunctional is cluster-etcd-operator's MachineAPI.IsFunctional: the MachineAPI
// capability is enabled and a master machine.openshift.io Machine is Running.
func machineAPIFunctional(ctx context.Context, c client.Client) (bool, error) {
	cv := &unstructured.Unstructured{}
	cv.SetGroupVersionKind(clusterVersionGVK)
	if err := c.Get(ctx, client.ObjectKey{Name: clusterVersionName}, cv); err != nil {
		if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
			return false, nil
		}
		return false, fmt.Errorf("reading the workload cluster's ClusterVersion: %w", err)
	}
	enabled, _, _ := unstructured.NestedStringSlice(cv.Object, "status", "capabilities", "enabledCapabilities")
	if !slices.Contains(enabled, machineAPICapability) {
		return false, nil
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(mapiMachineList)
	if err := c.List(ctx, list, client.InNamespace(machineAPINamespace), client.MatchingLabels{machineAPIRoleLabel: "master"}); err != nil {
		if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("listing the workload cluster's master machine.openshift.io Machines: %w", err)
	}
	for _, m := range list.Items {
		if phase, _, _ := unstructured.NestedString(m.Object, "status", "phase"); phase == machineAPIRunningPhase {
			return true, nil
		}
	}
	return false, nil
}
