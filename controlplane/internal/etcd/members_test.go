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
	"slices"
	"strings"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/client-go/rest"
)

func healthy(name string) Member { return Member{ID: uint64(len(name)), Name: name, Healthy: true} }
func dead(name string) Member    { return Member{Name: name, Problem: "no status: connection refused"} }
func learner(name string) Member { return Member{Name: name, IsLearner: true, Healthy: true} }

func TestCanRemove(t *testing.T) {
	tests := []struct {
		name    string
		members []Member
		alarms  []string
		remove  string
		// want is a substring of the refusal, "" when the removal is allowed.
		want string
	}{
		{name: "3 healthy, remove one", members: []Member{healthy("a"), healthy("b"), healthy("c")}, remove: "a"},
		{name: "5 healthy, remove one", members: []Member{healthy("a"), healthy("b"), healthy("c"), healthy("d"), healthy("e")}, remove: "e"},
		{name: "dead member of 3 is removed (2 of 2 left)", members: []Member{healthy("a"), healthy("b"), dead("c")}, remove: "c"},
		{name: "healthy member of 3 with one dead: 1 of 2 left", members: []Member{healthy("a"), healthy("b"), dead("c")}, remove: "a",
			want: "would leave 1 healthy members of 2 (unhealthy: c), below quorum (2)"},
		{name: "4 members with one dead, remove a healthy one: 2 of 3 left", members: []Member{healthy("a"), healthy("b"), healthy("c"), dead("d")}, remove: "a"},
		{name: "5 members with two dead, remove a healthy one: 2 of 4 left", members: []Member{healthy("a"), healthy("b"), healthy("c"), dead("d"), dead("e")}, remove: "a",
			want: "below quorum (3)"},
		{name: "last member", members: []Member{healthy("a")}, remove: "a", want: "last member"},
		{name: "a learner catching up blocks", members: []Member{healthy("a"), healthy("b"), healthy("c"), learner("d")}, remove: "a", want: "learner still catching up"},
		{name: "the learner itself can go", members: []Member{healthy("a"), healthy("b"), healthy("c"), learner("d")}, remove: "d"},
		{name: "alarm blocks", members: []Member{healthy("a"), healthy("b"), healthy("c")}, alarms: []string{"NOSPACE on member 1"}, remove: "a", want: "alarms raised"},
		{name: "member already gone", members: []Member{healthy("a"), healthy("b")}, remove: "x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &Cluster{Members: tc.members, Alarms: tc.alarms}
			got := c.CanRemove(tc.remove)
			if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
				t.Errorf("CanRemove(%s) = %q, want %q", tc.remove, got, tc.want)
			}
		})
	}
}

func TestProblem(t *testing.T) {
	tests := []struct {
		name    string
		members []Member
		alarms  []string
		want    string
	}{
		{name: "healthy", members: []Member{healthy("a"), healthy("b"), healthy("c")}},
		{name: "dead member", members: []Member{healthy("a"), healthy("b"), dead("c")}, want: "member c is unhealthy (no status: connection refused)"},
		{name: "learner", members: []Member{healthy("a"), learner("b")}, want: "member b is a learner still catching up"},
		{name: "not started", members: []Member{healthy("a"), {ID: 0xab, Problem: "added but not started"}}, want: "member ab (not started) is unhealthy (added but not started)"},
		{name: "no members", want: "etcd reports no members"},
		{name: "alarm", members: []Member{healthy("a")}, alarms: []string{"CORRUPT on member 1"}, want: "etcd has alarms raised (CORRUPT on member 1)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &Cluster{Members: tc.members, Alarms: tc.alarms}
			if got := c.Problem(); got != tc.want {
				t.Errorf("Problem() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestFaultTolerance(t *testing.T) {
	for name, tc := range map[string]struct {
		members []Member
		want    string
	}{
		"three healthy":          {[]Member{healthy("a"), healthy("bb"), healthy("ccc")}, ""},
		"three, one dead":        {[]Member{healthy("a"), healthy("bb"), dead("ccc")}, "3 members, 2 healthy: a quorum of 2"},
		"two healthy":            {[]Member{healthy("a"), healthy("bb")}, "2 members, 2 healthy: a quorum of 2"},
		"one":                    {[]Member{healthy("a")}, "1 members, 1 healthy"},
		"four healthy":           {[]Member{healthy("a"), healthy("bb"), healthy("ccc"), healthy("dddd")}, ""},
		"four, one dead":         {[]Member{healthy("a"), healthy("bb"), healthy("ccc"), dead("dddd")}, "4 members, 3 healthy: a quorum of 3"},
		"five, two dead":         {[]Member{healthy("a"), healthy("bb"), healthy("ccc"), dead("dddd"), dead("eeeee")}, "5 members, 3 healthy"},
		"three and a learner up": {[]Member{healthy("a"), healthy("bb"), healthy("ccc"), learner("dddd")}, ""},
	} {
		t.Run(name, func(t *testing.T) {
			got := (&Cluster{Members: tc.members}).FaultTolerance()
			if (got == "") != (tc.want == "") || !strings.Contains(got, tc.want) {
				t.Errorf("FaultTolerance() = %q, want %q", got, tc.want)
			}
		})
	}
}

// fakeConnector answers Connect with a client of no server (etcd's client dials lazily) for the
// nodes it knows, and with an error for the others; it records the nodes asked and the clients
// it gave.
type fakeConnector struct {
	down    map[string]bool
	asked   []string
	clients []*clientv3.Client
	config  *rest.Config
}

func (f *fakeConnector) Connect(_ context.Context, workload *rest.Config, node string) (*clientv3.Client, error) {
	f.asked = append(f.asked, node)
	f.config = workload
	if f.down[node] {
		return nil, errors.New("port-forward refused")
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{"127.0.0.1:1"}})
	if err != nil {
		return nil, err
	}
	f.clients = append(f.clients, cli)
	return cli, nil
}

// TestFirstAvailable: f runs with the member of the first node that connects and answers, each
// client is closed after its use, and when none answers the error names every node's failure.
func TestFirstAvailable(t *testing.T) {
	workload := &rest.Config{Host: "https://api.c1.example.com:6443"}
	for _, tc := range []struct {
		name      string
		nodes     []string
		down      map[string]bool
		failOn    map[string]bool
		wantAsked []string
		wantRan   []string
		wantErr   []string
	}{
		{name: "the first answers", nodes: []string{"a", "b"}, wantAsked: []string{"a"}, wantRan: []string{"a"}},
		{name: "the first cannot be reached", nodes: []string{"a", "b"}, down: map[string]bool{"a": true},
			wantAsked: []string{"a", "b"}, wantRan: []string{"b"}},
		{name: "the first fails the call", nodes: []string{"a", "b"}, failOn: map[string]bool{"a": true},
			wantAsked: []string{"a", "b"}, wantRan: []string{"a", "b"}},
		{name: "none answers", nodes: []string{"a", "b"}, down: map[string]bool{"a": true}, failOn: map[string]bool{"b": true},
			wantAsked: []string{"a", "b"}, wantRan: []string{"b"},
			wantErr: []string{"connecting to the etcd member on node a: port-forward refused", "node b: member b failed"}},
		{name: "no nodes", wantErr: []string{"no control-plane node to reach etcd through"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn := &fakeConnector{down: tc.down}
			w := &Workload{Connector: conn, Config: workload}
			var ran []string
			err := w.firstAvailable(context.Background(), tc.nodes, func(cli *clientv3.Client) error {
				if cli != conn.clients[len(conn.clients)-1] {
					t.Error("f did not get the client of the node just connected")
				}
				node := conn.asked[len(conn.asked)-1]
				ran = append(ran, node)
				if tc.failOn[node] {
					return errors.New("member " + node + " failed")
				}
				return nil
			})
			if !slices.Equal(conn.asked, tc.wantAsked) || !slices.Equal(ran, tc.wantRan) {
				t.Errorf("connected to %v and ran on %v, want %v and %v", conn.asked, ran, tc.wantAsked, tc.wantRan)
			}
			if len(conn.asked) > 0 && conn.config != workload {
				t.Error("the connector did not get the workload cluster's config")
			}
			for _, cli := range conn.clients {
				if cli.Ctx().Err() == nil {
					t.Error("a client was left open")
				}
			}
			switch {
			case len(tc.wantErr) == 0 && err != nil:
				t.Errorf("error %v, want none", err)
			case len(tc.wantErr) > 0 && err == nil:
				t.Errorf("no error, want %q", tc.wantErr)
			}
			for _, want := range tc.wantErr {
				if err != nil && !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
		})
	}
}

// TestConnectWithoutConnector: a Workload without a Connector says so instead of panicking.
func TestConnectWithoutConnector(t *testing.T) {
	err := (&Workload{}).firstAvailable(context.Background(), []string{"a"}, func(*clientv3.Client) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "no etcd connector is configured") {
		t.Errorf("error %v, want one saying no etcd connector is configured", err)
	}
}
