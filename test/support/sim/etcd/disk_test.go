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

package etcd

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/inventory"
)

// diskHost is the inventory host of node: hostname node, system UUID uuid-<node>.
func diskHost(node string) *inventory.Host {
	return &inventory.Host{Name: "host-" + node, Hostname: node, SystemUUID: "uuid-" + node}
}

// TestDataGone: a member's data dir is on the disk of the host it was created on until that
// disk is written again; power cycles and a tear-down without cleaning keep it.
func TestDataGone(t *testing.T) {
	a, b := diskHost("a"), diskHost("b")
	s := &Simulator{Inventory: inventory.New(a, b)}
	m := &member{name: "a", systemUUID: a.SystemUUID}
	s.noteDataDir(m)
	m.hasData = true
	check := func(step string, gone bool) {
		t.Helper()
		if why := s.dataGone(m); (why != "") != gone {
			t.Errorf("%s: data gone %q, want gone %v", step, why, gone)
		}
	}
	check("started", false)
	a.PowerOff()
	a.PowerOn()
	check("after a power cycle", false)
	a.TearDown()
	check("after a tear-down without cleaning", false)
	a.WriteOS()
	check("after the installer wrote the disk again", true)

	s.noteDataDir(m) // a new data dir
	check("new data dir", false)
	m.systemUUID = b.SystemUUID
	check("the node name on another host", true)
	m.systemUUID = ""
	check("found by hostname", false)

	// Without an inventory (or for a host it lacks) nothing tells: the data stays.
	s2 := &Simulator{}
	m2 := &member{name: "a", systemUUID: a.SystemUUID, hasData: true}
	s2.noteDataDir(m2)
	a.WriteOS()
	if why := s2.dataGone(m2); why != "" {
		t.Errorf("without an inventory: data gone %q", why)
	}
}

// readyNodes are Ready control-plane Nodes of the hosts, their kubelets posting after now.
func readyNodes(hosts ...*inventory.Host) map[string]*corev1.Node {
	out := map[string]*corev1.Node{}
	beat := metav1.NewTime(time.Now().Add(2 * time.Second))
	for _, h := range hosts {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: h.Hostname}}
		n.Status.NodeInfo.SystemUUID = h.SystemUUID
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: beat, LastTransitionTime: beat}}
		out[h.Hostname] = n
	}
	return out
}

// TestReinstalledHostStartsItsMemberWithoutData: three members (real etcd processes); c's host
// loses power and comes back: its member restarts from its data dir. Then c's host is torn
// down without cleaning and installed again under the same node name, while its member is
// still in the cluster: the installer rewrote the disk, so the member has no data and cannot
// rejoin as the old member; adding it again is refused (its peer URL is a member's), as
// cluster-etcd-operator's MemberAddAsLearner is.
func TestReinstalledHostStartsItsMemberWithoutData(t *testing.T) {
	binary := etcdBinary(t)
	hosts := []*inventory.Host{diskHost("a"), diskHost("b"), diskHost("c")}
	for _, h := range hosts {
		h.WriteOS() // installed
	}
	s := &Simulator{binary: binary, dir: t.TempDir(), members: map[string]*member{},
		Inventory: inventory.New(hosts...), bootstrapped: true}
	t.Cleanup(func() { _ = s.Stop() })
	ctx := t.Context()
	s.mu.Lock()
	var initial []string
	ms := make([]*member, 0, len(hosts))
	for _, h := range hosts {
		m, err := s.memberFor(h.Hostname)
		if err != nil {
			t.Fatal(err)
		}
		m.systemUUID = h.SystemUUID
		initial = append(initial, m.name+"="+m.peerURL)
		ms = append(ms, m)
	}
	for _, m := range ms {
		if err := s.start(m, initial, "new"); err != nil {
			t.Fatal(err)
		}
	}
	s.mu.Unlock()
	healthy := func(n int) func() bool {
		return func() bool {
			members, _, _ := s.sample(ctx)
			return votingHealthy(members) == n
		}
	}
	waitFor(t, healthy(3), "three healthy voting members")
	c := hosts[2]
	sync := func() map[string]string {
		t.Helper()
		sampled, listed, _ := s.sample(ctx)
		return s.ensureMembers(ctx, readyNodes(hosts...), sampled, listed)
	}

	// A power cycle: the data dir stays, the member restarts from it.
	c.PowerOff()
	if err := s.PoweredOff(ctx, c); err != nil {
		t.Fatal(err)
	}
	c.PowerOn()
	if errs := sync(); len(errs) > 0 || !s.Running("c") {
		t.Fatalf("after a power cycle: running %v, errors %v; want c restarted from its data", s.Running("c"), errs)
	}
	waitFor(t, healthy(3), "c healthy again")

	// Reinstalled with cleaning disabled: torn down, its disk written again.
	c.TearDown()
	if err := s.PoweredOff(ctx, c); err != nil {
		t.Fatal(err)
	}
	c.WriteOS()
	errs := sync()
	s.mu.Lock()
	hasData := s.members["c"].hasData
	s.mu.Unlock()
	if s.Running("c") || hasData || !strings.Contains(errs["c"], "failed to add learner member") {
		t.Errorf("after a reinstall: running %v, data kept %v, error %q; want c without data and its add refused",
			s.Running("c"), hasData, errs["c"])
	}
	members, _, err := s.sample(context.WithoutCancel(ctx))
	if err != nil || len(members) != 3 || votingHealthy(members) != 2 {
		t.Errorf("membership %+v (%v): want the three members, c's dead", members, err)
	}
}
