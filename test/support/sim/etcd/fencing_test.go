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
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/testenv"
)

// fakeFencer records the nodes it fences, or fails with err.
type fakeFencer struct {
	fenced []string
	err    error
}

func (f *fakeFencer) Fence(_ context.Context, c FencingCredentials) error {
	if f.err != nil {
		return f.err
	}
	f.fenced = append(f.fenced, c.Node)
	return nil
}

// etcdBinary is the envtest assets' etcd, which the tests run as real members; the test is
// skipped without the assets.
func etcdBinary(t *testing.T) string {
	t.Helper()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	assets, err := testenv.AssetsDir(root)
	if err != nil {
		t.Skipf("no envtest assets (etcd): %v", err)
	}
	return filepath.Join(assets, "etcd")
}

// twoMembers starts a simulator's two-member etcd cluster of nodes a and b (real etcd processes)
// and waits until both serve.
func twoMembers(t *testing.T, fencer Fencer) *Simulator {
	t.Helper()
	s := &Simulator{binary: etcdBinary(t), dir: t.TempDir(), members: map[string]*member{}, Fencer: fencer}
	t.Cleanup(func() { _ = s.Stop() })
	s.mu.Lock()
	a, err := s.memberFor("a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.memberFor("b")
	if err != nil {
		t.Fatal(err)
	}
	initial := []string{"a=" + a.peerURL, "b=" + b.peerURL}
	for _, m := range []*member{a, b} {
		if err := s.start(m, initial, "new"); err != nil {
			t.Fatal(err)
		}
	}
	s.mu.Unlock()
	waitFor(t, func() bool {
		members, _, _ := s.sample(t.Context())
		return votingHealthy(members) == 2
	}, "two healthy voting members")
	return s
}

func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

var creds = map[string]FencingCredentials{"a": {Node: "a", Address: "redfish://bmc-a"}, "b": {Node: "b", Address: "redfish://bmc-b"}}

// TestPacemakerFencesAndRunsTheSurvivorAlone: when node b's host loses power, the survivor's
// pacemaker fences b through its BMC and restarts a's etcd as a new single-member cluster, which
// serves; b is fenced once.
func TestPacemakerFencesAndRunsTheSurvivorAlone(t *testing.T) {
	f := &fakeFencer{}
	s := twoMembers(t, f)
	s.mu.Lock()
	s.kill(s.members["b"])
	s.members["b"].downAt = time.Now()
	s.mu.Unlock()
	if !s.pacemaker(t.Context(), creds) {
		t.Fatal("pacemaker did not act on the failed node")
	}
	if len(f.fenced) != 1 || f.fenced[0] != "b" {
		t.Fatalf("fenced %v, want [b]", f.fenced)
	}
	waitFor(t, func() bool {
		members, _, _ := s.sample(t.Context())
		return len(members) == 1 && members[0].Name == "a" && members[0].Healthy && !members[0].IsLearner
	}, "a serving alone")
	if s.pacemaker(t.Context(), creds) {
		t.Error("a node fenced once is fenced again before it fails again")
	}
	if at, why := s.Fenced("b"); at.IsZero() || why != "" {
		t.Errorf("Fenced(b) = %v, %q", at, why)
	}
}

// TestNoQuorumWithoutFencing: when fencing fails, the survivor is not run alone: its etcd, one of
// two voting members, serves no linearizable request, and the failure is kept.
func TestNoQuorumWithoutFencing(t *testing.T) {
	s := twoMembers(t, &fakeFencer{err: errors.New("401 Unauthorized")})
	s.mu.Lock()
	s.kill(s.members["b"])
	s.members["b"].downAt = time.Now()
	s.mu.Unlock()
	if s.pacemaker(t.Context(), creds) {
		t.Fatal("the membership changed although fencing failed")
	}
	if _, why := s.Fenced("b"); why != "401 Unauthorized" {
		t.Errorf("fence error %q", why)
	}
	time.Sleep(time.Second) // longer than an election (--election-timeout=500)
	members, _, _ := s.sample(t.Context())
	if votingHealthy(members) != 0 || len(members) != 2 {
		t.Fatalf("members %+v: want two members, none serving", members)
	}
	if _, err := os.Stat(s.members["a"].dataDir); err != nil {
		t.Fatal(err)
	}
}
