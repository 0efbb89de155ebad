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
	"fmt"
	"slices"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
)

// callTimeout bounds each call to a member, as KCP bounds its etcd calls.
const callTimeout = 15 * time.Second

// Member is one member of a workload cluster's etcd, as seen from the management cluster.
type Member struct {
	ID uint64
	// Name is the node the member runs on: cluster-etcd-operator names members after their node.
	// It is empty for a member that was added but has not started yet.
	Name      string
	IsLearner bool
	IsLeader  bool
	// Healthy is true when the member answered a status request through its own node, reported
	// no error and knows a leader.
	Healthy bool
	// Problem says why the member is not healthy.
	Problem string
}

// Cluster is the membership of a workload cluster's etcd and the health of each member.
type Cluster struct {
	Members []Member
	// Alarms are the alarms raised in the cluster (NOSPACE, CORRUPT): while one is raised etcd
	// refuses writes, so no member is removed.
	Alarms []string
}

// Member returns the member named name, or nil.
func (c *Cluster) Member(name string) *Member {
	for i := range c.Members {
		if c.Members[i].Name == name {
			return &c.Members[i]
		}
	}
	return nil
}

// voting returns the voting members, without the one named except.
func (c *Cluster) voting(except string) []Member {
	var out []Member
	for _, m := range c.Members {
		if !m.IsLearner && (except == "" || m.Name != except) {
			out = append(out, m)
		}
	}
	return out
}

// Problem returns why the cluster is not fully healthy, or "": every member is a healthy voting
// member and no alarm is raised. This is what a scale down, a rollout or the start of a
// remediation requires, as KCP's preflight checks do.
func (c *Cluster) Problem() string {
	if len(c.Alarms) > 0 {
		return fmt.Sprintf("etcd has alarms raised (%s)", strings.Join(c.Alarms, ", "))
	}
	var problems []string
	for _, m := range c.Members {
		switch {
		case m.IsLearner:
			problems = append(problems, fmt.Sprintf("member %s is a learner still catching up", displayName(m)))
		case !m.Healthy:
			problems = append(problems, fmt.Sprintf("member %s is unhealthy (%s)", displayName(m), m.Problem))
		}
	}
	if len(c.Members) == 0 {
		return "etcd reports no members"
	}
	return strings.Join(problems, "; ")
}

// CanRemove returns "" when the member named name can be removed keeping quorum, or why not:
// the healthy voting members left must be a quorum of the voting members left (as KCP's
// targetEtcdClusterHealthy checks), no learner may be catching up, no alarm raised, and the
// last member is never removed. A member that is not there can always be "removed".
func (c *Cluster) CanRemove(name string) string {
	if c.Member(name) == nil {
		return ""
	}
	if len(c.Alarms) > 0 {
		return fmt.Sprintf("etcd has alarms raised (%s)", strings.Join(c.Alarms, ", "))
	}
	for _, m := range c.Members {
		if m.IsLearner && m.Name != name {
			return fmt.Sprintf("member %s is a learner still catching up; a member is removed only once every new member votes", displayName(m))
		}
	}
	left := c.voting(name)
	if len(left) == 0 {
		return fmt.Sprintf("member %s is the last member of etcd", name)
	}
	healthy := 0
	var unhealthy []string
	for _, m := range left {
		if m.Healthy {
			healthy++
		} else {
			unhealthy = append(unhealthy, displayName(m))
		}
	}
	if quorum := len(left)/2 + 1; healthy < quorum {
		return fmt.Sprintf("removing member %s would leave %d healthy members of %d (unhealthy: %s), below quorum (%d)",
			name, healthy, len(left), strings.Join(unhealthy, ", "), quorum)
	}
	return ""
}

func displayName(m Member) string {
	if m.Name == "" {
		return fmt.Sprintf("%x (not started)", m.ID)
	}
	return m.Name
}

// Workload reaches the etcd of one workload cluster through its control-plane nodes.
type Workload struct {
	Connector Connector
	// Config reaches the workload cluster's API server.
	Config *rest.Config
}

// connect returns a client of the member on node.
func (w *Workload) connect(ctx context.Context, node string) (*clientv3.Client, error) {
	if w.Connector == nil {
		return nil, errors.New("no etcd connector is configured")
	}
	cli, err := w.Connector.Connect(ctx, w.Config, node)
	if err != nil {
		return nil, fmt.Errorf("connecting to the etcd member on node %s: %w", node, err)
	}
	return cli, nil
}

// firstAvailable runs f with a client of the member on the first of nodes that answers, as
// KCP's forFirstAvailableNode does.
func (w *Workload) firstAvailable(ctx context.Context, nodes []string, f func(*clientv3.Client) error) error {
	var errs []error
	for _, n := range nodes {
		cli, err := w.connect(ctx, n)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		err = f(cli)
		_ = cli.Close()
		if err == nil {
			return nil
		}
		errs = append(errs, fmt.Errorf("node %s: %w", n, err))
	}
	if len(errs) == 0 {
		return errors.New("no control-plane node to reach etcd through")
	}
	return errors.Join(errs...)
}

// Members lists the members through the first of nodes that answers, and checks the health of
// each member through its own node.
func (w *Workload) Members(ctx context.Context, nodes []string) (*Cluster, error) {
	c := &Cluster{}
	err := w.firstAvailable(ctx, nodes, func(cli *clientv3.Client) error {
		callCtx, cancel := context.WithTimeout(ctx, callTimeout)
		defer cancel()
		list, err := cli.MemberList(callCtx)
		if err != nil {
			return fmt.Errorf("listing the etcd members: %w", err)
		}
		alarms, err := cli.AlarmList(callCtx)
		if err != nil {
			return fmt.Errorf("listing the etcd alarms: %w", err)
		}
		c.Members = c.Members[:0]
		for _, m := range list.Members {
			c.Members = append(c.Members, Member{ID: m.ID, Name: m.Name, IsLearner: m.IsLearner})
		}
		c.Alarms = nil
		for _, a := range alarms.Alarms {
			c.Alarms = append(c.Alarms, fmt.Sprintf("%s on member %x", a.Alarm, a.MemberID))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for i := range c.Members {
		m := &c.Members[i]
		if m.Name == "" {
			m.Problem = "added but not started"
			continue
		}
		m.Healthy, m.IsLeader, m.Problem = w.memberHealth(ctx, m)
	}
	slices.SortFunc(c.Members, func(a, b Member) int { return strings.Compare(a.Name, b.Name) })
	return c, nil
}

// memberHealth asks the member on its own node for its status.
func (w *Workload) memberHealth(ctx context.Context, m *Member) (healthy, leader bool, problem string) {
	cli, err := w.connect(ctx, m.Name)
	if err != nil {
		return false, false, err.Error()
	}
	defer func() { _ = cli.Close() }()
	callCtx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	st, err := cli.Status(callCtx, cli.Endpoints()[0])
	switch {
	case err != nil:
		return false, false, fmt.Sprintf("no status: %v", err)
	case st.Header == nil || st.Header.MemberId != m.ID:
		return false, false, "the member on this node is not the listed one"
	case len(st.Errors) > 0:
		return false, false, strings.Join(st.Errors, "; ")
	case st.Leader == 0:
		return false, false, "the member sees no leader"
	}
	return true, st.Leader == m.ID, ""
}

// ForwardLeadership moves leadership away from the member named from, when it leads, to the
// healthy voting member named to (or, when to is "" or not healthy, to any other healthy voting
// member), as KCP's ForwardEtcdLeadership does.
func (w *Workload) ForwardLeadership(ctx context.Context, c *Cluster, from, to string) error {
	leader := c.Member(from)
	if leader == nil || !leader.IsLeader {
		return nil
	}
	target := c.Member(to)
	if target == nil || target.IsLearner || !target.Healthy || target.Name == from {
		target = nil
		for i := range c.Members {
			if m := &c.Members[i]; m.Name != from && !m.IsLearner && m.Healthy {
				target = m
				break
			}
		}
	}
	if target == nil {
		return fmt.Errorf("no healthy member to move etcd leadership to from %s", from)
	}
	cli, err := w.connect(ctx, from)
	if err != nil {
		return err
	}
	defer func() { _ = cli.Close() }()
	callCtx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if _, err := cli.MoveLeader(callCtx, target.ID); err != nil {
		return fmt.Errorf("moving etcd leadership from %s to %s: %w", from, target.Name, err)
	}
	ctrl.LoggerFrom(ctx).Info("Moved etcd leadership", "from", from, "to", target.Name)
	return nil
}

// RemoveMember removes the member named name, asking through the other members' nodes. A
// member that is already gone is not an error; the last member is never removed.
func (w *Workload) RemoveMember(ctx context.Context, c *Cluster, name string) error {
	m := c.Member(name)
	if m == nil {
		return nil
	}
	return w.RemoveMemberByID(ctx, c, m.ID)
}

// RemoveMemberByID removes the member id (for a member added but never started, which has no
// name yet), as RemoveMember does.
func (w *Workload) RemoveMemberByID(ctx context.Context, c *Cluster, id uint64) error {
	var m *Member
	for i := range c.Members {
		if c.Members[i].ID == id {
			m = &c.Members[i]
		}
	}
	if m == nil {
		return nil
	}
	name := displayName(*m)
	var others []string
	for _, o := range c.Members {
		if o.ID != id && !o.IsLearner && o.Healthy {
			others = append(others, o.Name)
		}
	}
	if len(others) == 0 {
		return fmt.Errorf("refusing to remove etcd member %s: no other healthy member", name)
	}
	return w.firstAvailable(ctx, others, func(cli *clientv3.Client) error {
		callCtx, cancel := context.WithTimeout(ctx, callTimeout)
		defer cancel()
		list, err := cli.MemberList(callCtx)
		if err != nil {
			return fmt.Errorf("listing the etcd members: %w", err)
		}
		if !slices.ContainsFunc(list.Members, func(x *etcdserverpb.Member) bool { return x.ID == id }) {
			return nil
		}
		if len(list.Members) == 1 {
			return fmt.Errorf("refusing to remove etcd member %s: it is the last member", name)
		}
		if _, err := cli.MemberRemove(callCtx, id); err != nil {
			return fmt.Errorf("removing etcd member %s (%x): %w", name, id, err)
		}
		ctrl.LoggerFrom(ctx).Info("Removed etcd member", "member", name, "id", fmt.Sprintf("%x", id))
		return nil
	})
}

// FaultTolerance returns "" when the membership stays fault tolerant as cluster-etcd-operator
// counts it before it rolls a new revision (etcdcli.IsQuorumFaultTolerantErr, every member
// counted): more members than a quorum, and more healthy members than a quorum. Otherwise why not.
func (c *Cluster) FaultTolerance() string {
	healthy := 0
	for _, m := range c.Members {
		if m.Healthy {
			healthy++
		}
	}
	quorum := len(c.Members)/2 + 1
	if len(c.Members) <= quorum || healthy <= quorum {
		return fmt.Sprintf("%d members, %d healthy: a quorum of %d tolerates no failure", len(c.Members), healthy, quorum)
	}
	return ""
}
