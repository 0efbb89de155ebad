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

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/etcd"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/inventory"
)

// setupEtcd installs the ClusterOperator CRD in the workload cluster and sets up the etcd
// simulator (l.Etcd) in its manager. The control-plane provider reaches the members through it
// (providers passes it as the EtcdConnector).
func (l *Lab) setupEtcd(ctx context.Context, workloadMgr ctrl.Manager) error {
	if err := etcd.InstallCRD(ctx, l.Workload.Config); err != nil {
		return fmt.Errorf("installing the ClusterOperator CRD in the workload cluster: %w", err)
	}
	l.Etcd = &etcd.Simulator{}
	if err := l.Etcd.SetupWithManager(workloadMgr, controller.Options{}); err != nil {
		return fmt.Errorf("setting up the etcd simulator: %w", err)
	}
	return nil
}

// stopEtcd kills the etcd members and removes their data.
func (l *Lab) stopEtcd() error {
	if l.Etcd == nil {
		return nil
	}
	return l.Etcd.Stop()
}

// hostEvents is what the bare-metal simulator and the self-booted hosts tell of a host: the
// assisted-service simulator (agents) and the etcd simulator (members) both hear it.
func (l *Lab) hostEvents(assisted inventory.HostEvents) inventory.HostEvents {
	if l.Etcd == nil {
		return assisted
	}
	return hostEventsFanOut{assisted, l.Etcd}
}

// hostEventsFanOut tells every one of its HostEvents, in order.
type hostEventsFanOut []inventory.HostEvents

func (f hostEventsFanOut) Booted(ctx context.Context, b inventory.Boot) error {
	errs := make([]error, 0, len(f))
	for _, e := range f {
		errs = append(errs, e.Booted(ctx, b))
	}
	return errors.Join(errs...)
}

func (f hostEventsFanOut) PoweredOff(ctx context.Context, h *inventory.Host) error {
	errs := make([]error, 0, len(f))
	for _, e := range f {
		errs = append(errs, e.PoweredOff(ctx, h))
	}
	return errors.Join(errs...)
}

func (f hostEventsFanOut) Deprovisioned(ctx context.Context, h *inventory.Host) error {
	errs := make([]error, 0, len(f))
	for _, e := range f {
		errs = append(errs, e.Deprovisioned(ctx, h))
	}
	return errors.Join(errs...)
}

// FailHost plays a control-plane host dying: its etcd member's process is killed, and its Node
// goes unreachable as the node-lifecycle controller marks it once the kubelet stops posting
// status (every condition Unknown, reason NodeStatusUnknown, and the unreachable taints). name
// is the host's name in the inventory (or its hostname). Nothing brings the Node back to Ready:
// the assisted-service simulator posts a Node's status only when an installation completes.
func (l *Lab) FailHost(ctx context.Context, name string) error {
	var host *inventory.Host
	for _, h := range l.Inventory.Hosts() {
		if h.Name == name || h.Hostname == name {
			host = h
		}
	}
	if host == nil {
		return fmt.Errorf("no host %s in the inventory", name)
	}
	l.Etcd.KillHost(host)

	nodes := &corev1.NodeList{}
	if err := l.Workload.Client.List(ctx, nodes); err != nil {
		return fmt.Errorf("listing the workload cluster's Nodes: %w", err)
	}
	for i := range nodes.Items {
		n := &nodes.Items[i]
		if !strings.EqualFold(n.Status.NodeInfo.SystemUUID, host.SystemUUID) && n.Name != host.Hostname {
			continue
		}
		if err := markUnreachable(ctx, l.Workload.Client, n); err != nil {
			return err
		}
	}
	return nil
}

// markUnreachable writes what the node-lifecycle controller writes for a Node whose kubelet
// stopped posting its status (k8s.io/kubernetes pkg/controller/nodelifecycle).
func markUnreachable(ctx context.Context, c client.Client, n *corev1.Node) error {
	now := metav1.Now()
	for i := range n.Status.Conditions {
		cond := &n.Status.Conditions[i]
		if cond.Status != corev1.ConditionUnknown {
			cond.LastTransitionTime = now
		}
		cond.Status, cond.Reason, cond.Message = corev1.ConditionUnknown, "NodeStatusUnknown", "Kubelet stopped posting node status."
	}
	if err := c.Status().Update(ctx, n); err != nil {
		return fmt.Errorf("marking Node %s unreachable: %w", n.Name, err)
	}
	base := n.DeepCopy()
	for _, effect := range []corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectNoExecute} {
		taint := corev1.Taint{Key: corev1.TaintNodeUnreachable, Effect: effect}
		if effect == corev1.TaintEffectNoExecute {
			taint.TimeAdded = &now
		}
		if !hasTaint(n, taint) {
			n.Spec.Taints = append(n.Spec.Taints, taint)
		}
	}
	if err := c.Patch(ctx, n, client.MergeFrom(base)); err != nil {
		return fmt.Errorf("tainting Node %s unreachable: %w", n.Name, err)
	}
	return nil
}

func hasTaint(n *corev1.Node, t corev1.Taint) bool {
	for _, x := range n.Spec.Taints {
		if x.Key == t.Key && x.Effect == t.Effect {
			return true
		}
	}
	return false
}
