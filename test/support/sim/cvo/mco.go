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

package cvo

import (
	"context"
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	utilversion "k8s.io/apimachinery/pkg/util/version"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The machine-config daemon's node annotations (openshift/machine-config-operator
// pkg/daemon/constants/constants.go): the rendered config a node runs and the one it is asked
// for, and its state while it moves from one to the other.
const (
	CurrentConfigAnnotation = "machineconfiguration.openshift.io/currentConfig"
	DesiredConfigAnnotation = "machineconfiguration.openshift.io/desiredConfig"
	StateAnnotation         = "machineconfiguration.openshift.io/state"
	StateWorking            = "Working"
	StateDone               = "Done"
	// MasterRoleLabel marks the nodes of the master pool; every other node is in the worker pool.
	MasterRoleLabel = "node-role.kubernetes.io/master"
)

// updateNodes plays the machine-config operator's part of an update to a release of Kubernetes
// version kube: the nodes of one pool (master or worker) that run an older kubelet are updated one
// at a time (a MachineConfigPool's default maxUnavailable is 1): the daemon cordons the node,
// drains it, writes the new config and reboots, and the kubelet comes back at the release's
// version (pkg/daemon/update.go, updateOnClusterBuild). It returns how long to wait before looking
// again, 0 when every node of the pool runs kube.
func (r *Reconciler) updateNodes(ctx context.Context, masters bool, kube string) (time.Duration, error) {
	list := &corev1.NodeList{}
	if err := r.Client.List(ctx, list); err != nil {
		return 0, fmt.Errorf("listing Nodes: %w", err)
	}
	var stale []*corev1.Node
	for i := range list.Items {
		n := &list.Items[i]
		if _, master := n.Labels[MasterRoleLabel]; master != masters {
			continue
		}
		if older(n.Status.NodeInfo.KubeletVersion, kube) {
			stale = append(stale, n)
		}
	}
	if len(stale) == 0 {
		return 0, nil
	}
	sort.Slice(stale, func(i, j int) bool { return stale[i].Name < stale[j].Name })
	pool := "worker"
	if masters {
		pool = "master"
	}
	rendered := fmt.Sprintf("rendered-%s-%s", pool, kube)
	n := stale[0]
	for _, s := range stale {
		if s.Annotations[StateAnnotation] == StateWorking {
			n = s // The node being updated, maxUnavailable 1.
			break
		}
	}
	step := "mco-" + rendered
	if n.Annotations[StateAnnotation] != StateWorking || n.Annotations[DesiredConfigAnnotation] != rendered {
		before := n.DeepCopy()
		if n.Annotations == nil {
			n.Annotations = map[string]string{}
		}
		n.Annotations[DesiredConfigAnnotation] = rendered
		n.Annotations[StateAnnotation] = StateWorking
		n.Spec.Unschedulable = true // cordoned and drained before the reboot
		if err := r.Client.Patch(ctx, n, client.MergeFrom(before)); err != nil {
			return 0, fmt.Errorf("cordoning Node %s for its update: %w", n.Name, err)
		}
		r.timer.Done(n.UID, step)
		ctrl.LoggerFrom(ctx).Info("Node update started", "node", n.Name, "pool", pool, "config", rendered)
	}
	if w := r.timer.Remaining(n.UID, step, r.Durations.NodeUpdate); w > 0 {
		return w, nil
	}
	before := n.DeepCopy()
	n.Status.NodeInfo.KubeletVersion = kube
	if err := r.Client.Status().Patch(ctx, n, client.MergeFrom(before)); err != nil {
		return 0, fmt.Errorf("updating the kubelet version of Node %s: %w", n.Name, err)
	}
	before = n.DeepCopy()
	n.Annotations[CurrentConfigAnnotation] = rendered
	n.Annotations[StateAnnotation] = StateDone
	n.Spec.Unschedulable = false
	if err := r.Client.Patch(ctx, n, client.MergeFrom(before)); err != nil {
		return 0, fmt.Errorf("uncordoning Node %s after its update: %w", n.Name, err)
	}
	r.timer.Done(n.UID, step)
	ctrl.LoggerFrom(ctx).Info("Node updated", "node", n.Name, "pool", pool, "kubelet", kube)
	return time.Millisecond, nil // the next node
}

// older tells whether kubelet is an earlier version than kube (semantic versions, so build
// metadata does not count); a version that cannot be read is not updated.
func older(kubelet, kube string) bool {
	k, err := utilversion.ParseSemantic(kubelet)
	if err != nil {
		return false
	}
	c, err := k.Compare(kube)
	return err == nil && c < 0
}
