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
	"os/exec"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/etcd"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/inventory"
)

// TestFailHostKillsItsMemberAndMarksItsNodeUnreachable: the lab runs an etcd member for a
// control-plane Node; FailHost kills it and makes the Node unreachable; Stop leaves no etcd.
func TestFailHostKillsItsMemberAndMarksItsNodeUnreachable(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l, err := Start(ctx, Options{})
	g.Expect(err).NotTo(HaveOccurred())
	dir := l.Etcd.Dir()
	stopped := false
	defer func() {
		if !stopped {
			_ = l.Stop()
		}
	}()

	h := inventory.Generate("etcd-fail", 1, inventory.GenerateOptions{FirstIP: 200})[0]
	l.Inventory.Add(h)
	// The kubelet posted its last status a moment before the host lost power. (Heartbeats are
	// stored to the second, and the simulator counts one in the second of the power cut as
	// posted after it, as a kubelet that starts again within that second would: a heartbeat
	// of this very second would restart the member.)
	now := metav1.NewTime(time.Now().Add(-2 * time.Second))
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: h.Hostname, Labels: map[string]string{etcd.MasterLabel: "", etcd.ControlPlaneLabel: ""}}}
	g.Expect(l.Workload.Client.Create(ctx, node)).To(Succeed())
	node.Status = corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{SystemUUID: strings.ToLower(h.SystemUUID)},
		Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: now, LastTransitionTime: now}}}
	g.Expect(l.Workload.Client.Status().Update(ctx, node)).To(Succeed())

	g.Eventually(func(g Gomega) {
		ms, err := l.Etcd.Members(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(ms).To(HaveLen(1))
		g.Expect(ms[0].Name).To(Equal(h.Hostname))
		g.Expect(ms[0].Healthy).To(BeTrue())
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())

	g.Expect(l.FailHost(ctx, h.Name)).To(Succeed())
	g.Expect(l.Etcd.Running(h.Hostname)).To(BeFalse())
	g.Expect(l.Workload.Client.Get(ctx, client.ObjectKeyFromObject(node), node)).To(Succeed())
	g.Expect(node.Status.Conditions).To(ContainElement(And(
		HaveField("Type", corev1.NodeReady), HaveField("Status", corev1.ConditionUnknown),
		HaveField("Reason", "NodeStatusUnknown"), HaveField("Message", "Kubelet stopped posting node status."))))
	g.Expect(node.Spec.Taints).To(ContainElement(HaveField("Key", corev1.TaintNodeUnreachable)))
	g.Consistently(func() bool { return l.Etcd.Running(h.Hostname) }, time.Second, 100*time.Millisecond).Should(BeFalse())

	stopped = true
	g.Expect(l.Stop()).To(Succeed())
	out, err := exec.CommandContext(ctx, "pgrep", "-f", dir).Output()
	g.Expect(err).To(HaveOccurred(), "etcd processes left after Stop: %s", out)
}

// TestBMCFencerRefusesWhatABMCRefuses: the lab's BMCs answer fence_redfish only at a host's BMC
// address and with the credentials that BMC accepts; a host whose BMC accepts none is never
// fenced; the errors quote no credential.
func TestBMCFencerRefusesWhatABMCRefuses(t *testing.T) {
	g := NewWithT(t)
	hosts := inventory.Generate("fence", 2, inventory.GenerateOptions{})
	hosts[0].BMCUsername, hosts[0].BMCPassword = "admin", "right"
	l := &Lab{Inventory: inventory.New(hosts...)}
	f := bmcFencer{l}
	err := f.Fence(context.Background(), etcd.FencingCredentials{Node: "n0", Address: "redfish://nowhere/redfish/v1/Systems/1", Username: "admin", Password: "right"})
	g.Expect(err).To(MatchError(ContainSubstring("no BMC answers")))
	err = f.Fence(context.Background(), etcd.FencingCredentials{Node: "n0", Address: hosts[0].BMCAddress, Username: "admin", Password: "wrong"})
	g.Expect(err).To(MatchError(ContainSubstring("401 Unauthorized")))
	err = f.Fence(context.Background(), etcd.FencingCredentials{Node: "n1", Address: hosts[1].BMCAddress})
	g.Expect(err).To(MatchError(ContainSubstring("401 Unauthorized")), "a BMC without credentials accepts none")
	g.Expect(err.Error()).NotTo(ContainSubstring("wrong"), "no credential in the error")
}
