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
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
	l.Etcd = &etcd.Simulator{Fencer: bmcFencer{l}, Inventory: l.Inventory}
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

// hostNamed returns the inventory's host of that name (or hostname).
func (l *Lab) hostNamed(name string) (*inventory.Host, error) {
	for _, h := range l.Inventory.Hosts() {
		if h.Name == name || h.Hostname == name {
			return h, nil
		}
	}
	return nil, fmt.Errorf("no host %s in the inventory", name)
}

// nodesOf lists the workload cluster's Nodes of the host (by system UUID, or by hostname).
func (l *Lab) nodesOf(ctx context.Context, host *inventory.Host) ([]*corev1.Node, error) {
	nodes := &corev1.NodeList{}
	if err := l.Workload.Client.List(ctx, nodes); err != nil {
		return nil, fmt.Errorf("listing the workload cluster's Nodes: %w", err)
	}
	var out []*corev1.Node
	for i := range nodes.Items {
		n := &nodes.Items[i]
		if strings.EqualFold(n.Status.NodeInfo.SystemUUID, host.SystemUUID) || n.Name == host.Hostname {
			out = append(out, n)
		}
	}
	return out, nil
}

// PowerOffHost plays a host losing power (a failure of its power supply, or someone pulling its
// plug): it is off, what ran there stops (its etcd member among it), and its Node goes
// unreachable. Only its BMC can power it on again: pacemaker's fencing does, for a node of
// two-node OpenShift with fencing.
func (l *Lab) PowerOffHost(ctx context.Context, name string) error {
	host, err := l.hostNamed(name)
	if err != nil {
		return err
	}
	host.PowerOff()
	if err := l.hostEvents(l.current().assisted).PoweredOff(ctx, host); err != nil {
		return err
	}
	nodes, err := l.nodesOf(ctx, host)
	if err != nil {
		return err
	}
	for _, n := range nodes {
		if err := markUnreachable(ctx, l.Workload.Client, n); err != nil {
			return err
		}
	}
	return nil
}

// NewWorkloadCluster replaces the workload cluster, which the lab's clusters share, by a new one
// for the next cluster the lab installs, once the previous one is deleted: its Nodes and fencing
// credentials are removed and its etcd is forgotten (etcd.Simulator.Reset). A real cluster's
// Nodes and etcd go with its hosts; the lab's shared API server keeps them otherwise.
func (l *Lab) NewWorkloadCluster(ctx context.Context) error {
	if err := l.Workload.Client.DeleteAllOf(ctx, &corev1.Node{}); err != nil {
		return fmt.Errorf("deleting the workload cluster's Nodes: %w", err)
	}
	if err := l.Workload.Client.DeleteAllOf(ctx, &corev1.Secret{}, client.InNamespace(etcd.FencingNamespace)); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting the workload cluster's fencing credentials: %w", err)
	}
	return l.Etcd.Reset()
}

// bmcFencer is the lab's hosts' BMCs as pacemaker's fence_redfish reaches them (the etcd
// simulator's Fencer): the host whose BMC answers at the credentials' address, if they are the
// ones it accepts, is powered off and on (fence_redfish's reboot action, ForceOff then On:
// fence-agents agents/redfish/fence_redfish.py). A host that boots its installed disk again
// runs its kubelet, which posts its Node Ready once it has booted (hostBootTime).
type bmcFencer struct{ l *Lab }

func (f bmcFencer) Fence(ctx context.Context, c etcd.FencingCredentials) error {
	host := f.l.Inventory.ByBMCAddress(c.Address)
	if host == nil {
		return fmt.Errorf("fence_redfish: no BMC answers at the address of node %s's credentials", c.Node)
	}
	if host.BMCUsername == "" || c.Username != host.BMCUsername || c.Password != host.BMCPassword {
		return fmt.Errorf("fence_redfish: the BMC of node %s refuses its credentials (401 Unauthorized)", c.Node)
	}
	host.PowerOff()
	if err := f.l.hostEvents(f.l.current().assisted).PoweredOff(ctx, host); err != nil {
		return err
	}
	if booted := host.PowerOn(); booted != "" || !host.RunsDisk() {
		return nil // powered on, but not into its installed system: no kubelet posts
	}
	// The fencing is done once the host is on; its kubelet posts again once it has booted.
	time.AfterFunc(hostBootTime, func() {
		ctx := context.Background()
		nodes, err := f.l.nodesOf(ctx, host)
		if err != nil {
			return // the lab stopped
		}
		for _, n := range nodes {
			_ = markReady(ctx, f.l.Workload.Client, n)
		}
	})
	return nil
}

// hostBootTime is how long a fenced host takes to boot its installed system again, until its
// kubelet posts (minutes on real hardware; the lab's clock is faster).
const hostBootTime = 2 * time.Second

// markReady writes what the kubelet of a host that booted again posts: its conditions healthy
// with a new heartbeat, and the node-lifecycle controller's unreachable taints removed.
func markReady(ctx context.Context, c client.Client, n *corev1.Node) error {
	now := metav1.Now()
	for i := range n.Status.Conditions {
		cond := &n.Status.Conditions[i]
		healthy := corev1.ConditionFalse
		if cond.Type == corev1.NodeReady {
			healthy = corev1.ConditionTrue
		}
		if cond.Status != healthy {
			cond.LastTransitionTime = now
		}
		cond.Status, cond.LastHeartbeatTime = healthy, now
		cond.Reason, cond.Message = "KubeletReady", "kubelet is posting ready status"
		if cond.Type != corev1.NodeReady {
			cond.Reason, cond.Message = "KubeletHasSufficientResources", "kubelet posts no pressure"
		}
	}
	if err := c.Status().Update(ctx, n); err != nil {
		return fmt.Errorf("marking Node %s ready: %w", n.Name, err)
	}
	base := n.DeepCopy()
	n.Spec.Taints = slices.DeleteFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == corev1.TaintNodeUnreachable })
	if err := c.Patch(ctx, n, client.MergeFrom(base)); err != nil {
		return fmt.Errorf("removing the unreachable taints of Node %s: %w", n.Name, err)
	}
	return nil
}

// FailHost plays a control-plane host dying: its etcd member's process is killed, and its Node
// goes unreachable as the node-lifecycle controller marks it once the kubelet stops posting
// status (every condition Unknown, reason NodeStatusUnknown, and the unreachable taints). name
// is the host's name in the inventory (or its hostname). Nothing brings the Node back to Ready:
// the assisted-service simulator posts a Node's status only when an installation completes.
func (l *Lab) FailHost(ctx context.Context, name string) error {
	host, err := l.hostNamed(name)
	if err != nil {
		return err
	}
	l.Etcd.KillHost(host)
	nodes, err := l.nodesOf(ctx, host)
	if err != nil {
		return err
	}
	for _, n := range nodes {
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
