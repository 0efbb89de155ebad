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

package simtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/etcd"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/inventory"
)

const etcdTestLabel = "simtest.lab/etcd"

// etcdLab is an etcd simulator serving the control-plane Nodes of one test (labelled with the
// test's name) in the shared workload API server.
type etcdLab struct {
	sim   *etcd.Simulator
	label string
}

func startEtcdSim(t *testing.T) *etcdLab {
	t.Helper()
	if err := etcd.InstallCRD(ctx, workload.Config); err != nil {
		t.Fatal(err)
	}
	// Each test reads the ClusterOperator its own simulator writes.
	if err := workload.Client.Delete(ctx, &configv1.ClusterOperator{ObjectMeta: metav1.ObjectMeta{Name: etcd.ClusterOperatorName}}); client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
	label := strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-"))
	sim := &etcd.Simulator{Selector: labels.SelectorFromSet(labels.Set{etcdTestLabel: label}), Resync: 200 * time.Millisecond}
	mgr, err := ctrl.NewManager(workload.Config, ctrl.Options{Scheme: workload.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := sim.SetupWithManager(mgr, controller.Options{SkipNameValidation: ptrTo(true)}); err != nil {
		t.Fatal(err)
	}
	mctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(mctx); err != nil {
			t.Errorf("etcd simulator manager: %v", err)
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		dir := sim.Dir()
		if t.Failed() {
			logMemberLogs(t, dir)
		}
		if err := sim.Stop(); err != nil {
			t.Errorf("stopping the etcd simulator: %v", err)
		}
		if out, err := exec.CommandContext(context.Background(), "pgrep", "-f", dir).Output(); err == nil {
			t.Errorf("etcd processes left running after Stop: %s", out)
		}
	})
	return &etcdLab{sim: sim, label: label}
}

// logMemberLogs logs the end of each member's etcd log (why a member did not start or join).
func logMemberLogs(t *testing.T, dir string) {
	t.Helper()
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	for _, f := range logs {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		t.Logf("%s (last lines):\n%s", filepath.Base(f), strings.Join(lines[max(0, len(lines)-15):], "\n"))
	}
}

// host is the inventory host of a node of the test.
func host(node string) *inventory.Host {
	return &inventory.Host{Name: "host-" + node, Hostname: node, SystemUUID: "uuid-" + node}
}

// addNode creates a Ready control-plane Node, as the kubelet registers it.
func (e *etcdLab) addNode(t *testing.T, name string) {
	t.Helper()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
		etcdTestLabel: e.label, etcd.MasterLabel: "", etcd.ControlPlaneLabel: "",
	}}}
	if err := workload.Client.Create(ctx, node); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = client.IgnoreNotFound(workload.Client.Delete(context.Background(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}))
	})
	setReady(t, name)
}

// setReady posts a Ready status for the Node now.
func setReady(t *testing.T, name string) {
	t.Helper()
	node := &corev1.Node{}
	if err := workload.Client.Get(ctx, client.ObjectKey{Name: name}, node); err != nil {
		t.Fatal(err)
	}
	now := metav1.Now()
	node.Status.NodeInfo.SystemUUID = "uuid-" + name
	node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
		Message: "kubelet is posting ready status", LastHeartbeatTime: now, LastTransitionTime: now}}
	if err := workload.Client.Status().Update(ctx, node); err != nil {
		t.Fatal(err)
	}
}

func deleteNode(t *testing.T, name string) {
	t.Helper()
	if err := workload.Client.Delete(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
}

// eventually polls cond until it holds; it fails the test with cond's last message otherwise.
func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		ok, msg := cond()
		last = msg
		return ok, nil
	})
	if err != nil {
		t.Fatalf("%s: %v; last: %s", what, err, last)
	}
}

func describe(ms []etcd.Member) string {
	parts := make([]string, 0, len(ms))
	for _, m := range ms {
		parts = append(parts, fmt.Sprintf("%s(learner=%t leader=%t healthy=%t)", m.Name, m.IsLearner, m.IsLeader, m.Healthy))
	}
	return strings.Join(parts, " ")
}

// waitVoting waits until the members are exactly names, all voting and healthy, one leader.
func (e *etcdLab) waitVoting(t *testing.T, names ...string) {
	t.Helper()
	eventually(t, "members "+strings.Join(names, ","), func() (bool, string) {
		ms, err := e.sim.Members(ctx)
		if err != nil || len(ms) != len(names) {
			return false, fmt.Sprintf("%s %v", describe(ms), err)
		}
		leaders := 0
		for i, m := range ms {
			if m.Name != names[i] || m.IsLearner || !m.Healthy {
				return false, describe(ms)
			}
			if m.IsLeader {
				leaders++
			}
		}
		return leaders == 1, describe(ms)
	})
}

func (e *etcdLab) threeMembers(t *testing.T, prefix string) []string {
	t.Helper()
	return e.voters(t, prefix, 3)
}

// voters adds n control-plane Nodes (prefix-a, prefix-b, ...) and waits until each has a
// healthy voting member.
func (e *etcdLab) voters(t *testing.T, prefix string, n int) []string {
	t.Helper()
	names := make([]string, n)
	for i := range names {
		names[i] = prefix + "-" + string(rune('a'+i))
	}
	for _, n := range names {
		e.addNode(t, n)
	}
	e.waitVoting(t, names...)
	return names
}

func clusterOperatorCondition() (map[configv1.ClusterStatusConditionType]configv1.ClusterOperatorStatusCondition, error) {
	co := &configv1.ClusterOperator{}
	if err := workload.Client.Get(ctx, client.ObjectKey{Name: etcd.ClusterOperatorName}, co); err != nil {
		return nil, err
	}
	out := map[configv1.ClusterStatusConditionType]configv1.ClusterOperatorStatusCondition{}
	for _, c := range co.Status.Conditions {
		out[c.Type] = c
	}
	return out, nil
}

func podReady(name string) (bool, *corev1.Pod, error) {
	pod := &corev1.Pod{}
	if err := workload.Client.Get(ctx, client.ObjectKey{Namespace: etcd.Namespace, Name: etcd.PodPrefix + name}, pod); err != nil {
		return false, nil, err
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue, pod, nil
		}
	}
	return false, pod, nil
}

func TestEtcdThreeControlPlaneNodesMakeThreeVotingMembers(t *testing.T) {
	e := startEtcdSim(t)
	// A worker Node of the same cluster: it never gets a member.
	worker := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "three-worker", Labels: map[string]string{
		etcdTestLabel: e.label, "node-role.kubernetes.io/worker": "",
	}}}
	if err := workload.Client.Create(ctx, worker); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.IgnoreNotFound(workload.Client.Delete(context.Background(), worker)) })
	setReady(t, worker.Name)
	names := e.threeMembers(t, "three")
	if ms, err := e.sim.Members(ctx); err != nil || len(ms) != 3 {
		t.Fatalf("members %s (%v), want only the three control-plane Nodes'", describe(ms), err)
	}

	for _, n := range names {
		eventually(t, "pod of "+n+" Ready", func() (bool, string) {
			ready, pod, err := podReady(n)
			if err != nil {
				return false, err.Error()
			}
			return ready && pod.Labels["app"] == "etcd" && pod.Labels["k8s-app"] == "etcd" && pod.Status.Phase == corev1.PodRunning, fmt.Sprint(pod.Status.Conditions)
		})
	}
	eventually(t, "ClusterOperator Available", func() (bool, string) {
		conds, err := clusterOperatorCondition()
		if err != nil {
			return false, err.Error()
		}
		a, d := conds[configv1.OperatorAvailable], conds[configv1.OperatorDegraded]
		return a.Status == configv1.ConditionTrue && a.Message == "EtcdMembersAvailable: 3 members are available" &&
			d.Status == configv1.ConditionFalse, fmt.Sprint(conds)
	})

	// The Connector's client talks to that node's member only.
	c, err := e.sim.Connect(ctx, workload.Config, names[1])
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if eps := c.Endpoints(); len(eps) != 1 {
		t.Fatalf("endpoints %v, want one", eps)
	}
	st, err := c.Status(ctx, c.Endpoints()[0])
	if err != nil {
		t.Fatal(err)
	}
	ms, _ := e.sim.Members(ctx)
	if st.Header.MemberId != ms[1].ID {
		t.Errorf("the client of %s reached member %x, want %x", names[1], st.Header.MemberId, ms[1].ID)
	}
	if _, err := e.sim.Connect(ctx, workload.Config, "no-such-node"); err == nil {
		t.Error("Connect to a node without a member succeeded")
	}
}

func TestEtcdRemovedMemberIsNotReAddedWhileNodeIsGone(t *testing.T) {
	e := startEtcdSim(t)
	names := e.threeMembers(t, "rm")
	ms, _ := e.sim.Members(ctx)

	deleteNode(t, names[2])
	c, err := e.sim.Connect(ctx, workload.Config, names[0])
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// etcd refuses a removal until the remaining members have been connected for a while
	// ("etcdserver: unhealthy cluster"), as the provider will meet it.
	eventually(t, "member removed", func() (bool, string) {
		_, err := c.MemberRemove(ctx, ms[2].ID)
		return err == nil, fmt.Sprint(err)
	})
	e.waitVoting(t, names[:2]...)
	eventually(t, "pod of the deleted Node gone", func() (bool, string) {
		_, _, err := podReady(names[2])
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	// Nothing adds it back: sample over several resyncs.
	deadline := time.Now().Add(1500 * time.Millisecond)
	for time.Now().Before(deadline) {
		got, err := e.sim.Members(ctx)
		if err == nil && len(got) != 2 {
			t.Fatalf("members changed after the removal: %s", describe(got))
		}
		time.Sleep(150 * time.Millisecond)
	}
}

func TestEtcdPoweredOffHostMakesItsMemberUnhealthy(t *testing.T) {
	e := startEtcdSim(t)
	names := e.threeMembers(t, "off")
	off := names[1]

	if err := e.sim.PoweredOff(ctx, host(off)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "member unhealthy", func() (bool, string) {
		ms, err := e.sim.Members(ctx)
		return err == nil && len(ms) == 3 && !ms[1].Healthy && ms[0].Healthy && ms[2].Healthy, describe(ms)
	})
	eventually(t, "pod not Ready", func() (bool, string) {
		ready, _, err := podReady(off)
		return err == nil && !ready, fmt.Sprint(err)
	})
	want := "EtcdMembersDegraded: 2 of 3 members are available, " + off + " is unhealthy"
	eventually(t, "ClusterOperator Degraded", func() (bool, string) {
		conds, err := clusterOperatorCondition()
		if err != nil {
			return false, err.Error()
		}
		d, a := conds[configv1.OperatorDegraded], conds[configv1.OperatorAvailable]
		return d.Status == configv1.ConditionTrue && d.Reason == "EtcdMembers_UnhealthyMembers" && strings.Contains(d.Message, want) &&
			a.Status == configv1.ConditionTrue, fmt.Sprint(conds)
	})

	// Powered on again: once its kubelet posts Ready, the member restarts from its data dir.
	setReady(t, off)
	e.waitVoting(t, names...)
}

func TestEtcdReprovisionedNodeWhoseMemberStillExistsIsNotAdded(t *testing.T) {
	e := startEtcdSim(t)
	names := e.threeMembers(t, "reprov")
	old := names[2]
	before, _ := e.sim.Members(ctx)

	// The host is wiped and installed again under the same name, but nobody removed its member.
	if err := e.sim.Deprovisioned(ctx, host(old)); err != nil {
		t.Fatal(err)
	}
	deleteNode(t, old)
	eventually(t, "pod of the deleted Node gone", func() (bool, string) {
		_, _, err := podReady(old)
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	e.addNode(t, old)

	eventually(t, "the add fails and is reported", func() (bool, string) {
		conds, err := clusterOperatorCondition()
		if err != nil {
			return false, err.Error()
		}
		d := conds[configv1.OperatorDegraded]
		_, pod, perr := podReady(old)
		crashLoop := perr == nil && len(pod.Status.ContainerStatuses) > 1 && pod.Status.ContainerStatuses[1].State.Waiting != nil &&
			pod.Status.ContainerStatuses[1].State.Waiting.Reason == "CrashLoopBackOff"
		return d.Status == configv1.ConditionTrue && strings.Contains(d.Reason, "ClusterMemberController_Error") &&
			strings.Contains(d.Message, "ClusterMemberControllerDegraded: failed to add learner member") &&
			strings.Contains(d.Message, "EtcdMembersDegraded: 2 of 3 members are available, "+old+" is unhealthy") && crashLoop, d.Message
	})
	after, err := e.sim.Members(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != 3 || after[2].ID != before[2].ID || after[2].Healthy || e.sim.Running(old) {
		t.Errorf("membership %s, want the old member of %s kept, dead, and nothing added", describe(after), old)
	}
}

func TestEtcdQuorumWatcherSeesTheLossWhenTwoOfThreeDie(t *testing.T) {
	e := startEtcdSim(t)
	names := e.threeMembers(t, "quorum")

	w := e.sim.Watch(50 * time.Millisecond)
	eventually(t, "a first sample", func() (bool, string) { return w.Report().Samples > 0, "" })
	if r := w.Report(); r.Lost || r.MinHealthy != 3 {
		t.Fatalf("before any failure: %+v", r)
	}
	killed := time.Now()
	e.sim.Kill(names[0])
	e.sim.Kill(names[2])
	eventually(t, "quorum lost", func() (bool, string) { return w.Report().Lost, fmt.Sprintf("%+v", w.Report()) })
	r := w.Stop()
	if r.MinHealthy > 1 || r.VotingAtMin != 3 || r.FirstLoss.Before(killed) {
		t.Errorf("report %+v, want at most 1 healthy of 3 voting, lost after %v", r, killed)
	}
}

// TestEtcdQuorumWatcherTellsAnElectionFromALoss: when the leader of five dies with another member,
// the three left elect a new one: the watcher sees three healthy of five at most, and no loss,
// even if its samples catch the election.
func TestEtcdQuorumWatcherTellsAnElectionFromALoss(t *testing.T) {
	e := startEtcdSim(t)
	names := e.voters(t, "election", 5)
	ms, err := e.sim.Members(ctx)
	if err != nil {
		t.Fatal(err)
	}
	leader := slices.IndexFunc(ms, func(m etcd.Member) bool { return m.IsLeader })
	if leader < 0 {
		t.Fatalf("no leader: %s", describe(ms))
	}
	other := names[(leader+1)%len(names)]

	w := e.sim.Watch(50 * time.Millisecond)
	eventually(t, "a first sample", func() (bool, string) { return w.Report().Samples > 0, "" })
	e.sim.Kill(ms[leader].Name)
	e.sim.Kill(other)
	eventually(t, "a new leader among the three left", func() (bool, string) {
		ms, _ := e.sim.Members(ctx)
		healthy, leaders := 0, 0
		for _, m := range ms {
			if m.Healthy {
				healthy++
			}
			if m.IsLeader {
				leaders++
			}
		}
		return healthy == 3 && leaders == 1, describe(ms)
	})
	// A sample after the election.
	n := w.Report().Samples
	eventually(t, "a sample after the election", func() (bool, string) { return w.Report().Samples > n+1, "" })
	r := w.Stop()
	t.Logf("the leader %s and %s of five killed: %+v", ms[leader].Name, other, r)
	// Whether a sample catches the election (the reads it sends may wait for the new leader) is
	// up to timing; that it is not a loss is not.
	if r.Lost || r.LongestLeaderless > etcd.LeaderlessLimit || r.VotingAtMin != 5 || r.MinHealthy > 3 {
		t.Errorf("report %+v, want at most 3 healthy of 5 seen and no loss", r)
	}
}

// TestEtcdNewMemberWaitsForFaultToleranceOrTheOverride: after the member of a dead node of three
// is removed, two healthy members tolerate no failure, so cluster-etcd-operator rolls no revision
// for a new node and its member is not added, until the unsafe scaling override is set.
func TestEtcdNewMemberWaitsForFaultToleranceOrTheOverride(t *testing.T) {
	e := startEtcdSim(t)
	names := e.threeMembers(t, "gate")
	ms, _ := e.sim.Members(ctx)
	e.sim.Kill(names[2])
	deleteNode(t, names[2])
	c, err := e.sim.Connect(ctx, workload.Config, names[0])
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	eventually(t, "dead member removed", func() (bool, string) {
		_, err := c.MemberRemove(ctx, ms[2].ID)
		return err == nil, fmt.Sprint(err)
	})
	e.waitVoting(t, names[:2]...)

	e.addNode(t, "gate-d")
	eventually(t, "the scaling gate reported", func() (bool, string) {
		conds, err := clusterOperatorCondition()
		if err != nil {
			return false, err.Error()
		}
		d := conds[configv1.OperatorDegraded]
		return strings.Contains(d.Message, "not fault tolerant"), d.Message
	})
	if got, _ := e.sim.Members(ctx); len(got) != 2 {
		t.Fatalf("members %s: a member was added without fault tolerance", describe(got))
	}

	setUnsafeScaling(t, true)
	e.waitVoting(t, "gate-a", "gate-b", "gate-d")
	setUnsafeScaling(t, false)
}

// setUnsafeScaling sets or removes cluster-etcd-operator's unsafe scaling override.
func setUnsafeScaling(t *testing.T, on bool) {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(etcd.OperatorConfigGVK)
	u.SetName(etcd.OperatorConfigName)
	value := "null"
	if on {
		value = "true"
	}
	patch := fmt.Sprintf(`{"spec":{"unsupportedConfigOverrides":{%q:%s}}}`, etcd.UnsafeScalingOverride, value)
	if err := workload.Client.Patch(ctx, u, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatal(err)
	}
}
