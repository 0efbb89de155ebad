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
	"sync"
	"time"
)

// QuorumWatcher samples the members' health in the background (see Simulator.Watch).
type QuorumWatcher struct {
	cancel context.CancelFunc
	done   chan struct{}

	mu     sync.Mutex
	report QuorumReport
	// leaderlessSince is the first sample of the current leaderless stretch (zero outside one).
	leaderlessSince time.Time
}

// QuorumReport is what a QuorumWatcher observed.
type QuorumReport struct {
	// Samples is how many samples were taken (with at least one voting member known).
	Samples int
	// MinHealthy is the smallest number of healthy voting members seen, and VotingAtMin the
	// number of voting members at that sample.
	MinHealthy, VotingAtMin int
	// LongestLeaderless is the longest stretch during which enough voting members ran for a
	// quorum but too few served a read: an election (after the leader died or stepped down), or
	// one that never ends.
	LongestLeaderless time.Duration
	// Lost: quorum was lost. Some sample had fewer than voting/2+1 voting members alive (running
	// and answering), or a leaderless stretch lasted longer than LeaderlessLimit. FirstLoss is
	// when the sample that showed it completed.
	Lost      bool
	FirstLoss time.Time
}

// LeaderlessLimit is how long the voting members may serve no read, while enough of them run,
// before the watcher calls it a loss of quorum: ten of the lab's election timeouts (500 ms,
// process.go). A leader's death costs one election, which raft ends within two timeouts (each
// member's timeout is randomized between one and two, etcd's raft.go resetRandomizedElectionTimeout);
// one that fails (split votes) starts another.
const LeaderlessLimit = 5 * time.Second

// Watch samples the members' health every interval until Stop and records the worst it sees.
// A sample in which no member answers counts every member of the last known membership as
// unhealthy.
func (s *Simulator) Watch(interval time.Duration) *QuorumWatcher {
	ctx, cancel := context.WithCancel(context.Background())
	w := &QuorumWatcher{cancel: cancel, done: make(chan struct{}), report: QuorumReport{MinHealthy: -1}}
	go func() {
		defer close(w.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			members, _, _ := s.sample(ctx)
			if ctx.Err() != nil {
				return
			}
			// A sample's time is when its health checks completed.
			w.record(time.Now(), members)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return w
}

func (w *QuorumWatcher) record(at time.Time, members []Member) {
	voting, alive, healthy := 0, 0, 0
	for _, m := range members {
		if m.IsLearner {
			continue
		}
		voting++
		if !m.Alive {
			// Its health check may have answered before its process died, in the same sample:
			// a member that is not running is not healthy.
			continue
		}
		alive++
		if m.Healthy {
			healthy++
		}
	}
	if voting == 0 {
		return
	}
	quorum := voting/2 + 1
	w.mu.Lock()
	defer w.mu.Unlock()
	r := &w.report
	r.Samples++
	if r.MinHealthy < 0 || healthy < r.MinHealthy {
		r.MinHealthy, r.VotingAtMin = healthy, voting
	}
	lost := alive < quorum
	if !w.leaderlessSince.IsZero() {
		// A stretch lasts from its first sample to the sample that ends it.
		r.LongestLeaderless = max(r.LongestLeaderless, at.Sub(w.leaderlessSince))
	}
	switch {
	case healthy >= quorum || lost:
		w.leaderlessSince = time.Time{}
	case w.leaderlessSince.IsZero():
		w.leaderlessSince = at
	default:
		lost = at.Sub(w.leaderlessSince) > LeaderlessLimit
	}
	if lost && !r.Lost {
		r.Lost, r.FirstLoss = true, at
	}
}

// Report returns what was observed so far (MinHealthy is -1 before the first sample).
func (w *QuorumWatcher) Report() QuorumReport {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.report
}

// Stop stops sampling and returns the report.
func (w *QuorumWatcher) Stop() QuorumReport {
	w.cancel()
	<-w.done
	return w.Report()
}
