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
	"testing"
	"time"
)

// voters returns n voting members, of which the first `alive` run and the first `healthy` serve
// reads (healthy <= alive), plus a learner that is neither (learners never count).
func voters(n, alive, healthy int) []Member {
	ms := make([]Member, 0, n+1)
	for i := range n {
		ms = append(ms, Member{Name: string(rune('a' + i)), Alive: i < alive, Healthy: i < healthy})
	}
	return append(ms, Member{Name: "learner", IsLearner: true})
}

// TestQuorumWatcherRecord: a loss of quorum is too few voting members running; too few serving a
// read while enough run is an election, a loss only once it outlasts LeaderlessLimit.
func TestQuorumWatcherRecord(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	type sample struct {
		after   time.Duration
		members []Member
	}
	tests := []struct {
		name              string
		samples           []sample
		wantLost          bool
		wantFirstLoss     time.Duration
		wantMinHealthy    int
		wantVotingAtMin   int
		wantLongestNoLead time.Duration
	}{{
		name:           "all healthy",
		samples:        []sample{{0, voters(3, 3, 3)}, {time.Second, voters(3, 3, 3)}},
		wantMinHealthy: 3, wantVotingAtMin: 3,
	}, {
		name:           "two of five dead keep quorum",
		samples:        []sample{{0, voters(5, 5, 5)}, {time.Second, voters(5, 3, 3)}, {2 * time.Second, voters(4, 3, 3)}},
		wantMinHealthy: 3, wantVotingAtMin: 5,
	}, {
		name: "the leader and another of five die: an election of 800ms",
		samples: []sample{
			{0, voters(5, 5, 5)}, {time.Second, voters(5, 3, 0)}, {1400 * time.Millisecond, voters(5, 3, 0)},
			{1800 * time.Millisecond, voters(5, 3, 3)},
		},
		wantMinHealthy: 0, wantVotingAtMin: 5, wantLongestNoLead: 800 * time.Millisecond,
	}, {
		name:     "two of three dead",
		samples:  []sample{{0, voters(3, 3, 3)}, {time.Second, voters(3, 1, 0)}},
		wantLost: true, wantFirstLoss: time.Second,
		wantMinHealthy: 0, wantVotingAtMin: 3,
	}, {
		// The health checks of one sample answered before two members were killed, and their
		// processes were looked at after.
		name:     "two of three dead while their last reads answered",
		samples:  []sample{{0, voters(3, 3, 3)}, {time.Second, voters(3, 1, 3)}},
		wantLost: true, wantFirstLoss: time.Second,
		wantMinHealthy: 1, wantVotingAtMin: 3,
	}, {
		name:     "a voting member added that never started: 2 of 4 run",
		samples:  []sample{{0, voters(3, 3, 3)}, {time.Second, voters(4, 2, 2)}},
		wantLost: true, wantFirstLoss: time.Second,
		wantMinHealthy: 2, wantVotingAtMin: 4,
	}, {
		name: "no leader for longer than the limit while all run",
		samples: []sample{
			{0, voters(3, 3, 0)}, {LeaderlessLimit / 2, voters(3, 3, 1)}, {LeaderlessLimit, voters(3, 3, 0)},
			{LeaderlessLimit + time.Second, voters(3, 3, 0)},
		},
		wantLost: true, wantFirstLoss: LeaderlessLimit + time.Second,
		wantMinHealthy: 0, wantVotingAtMin: 3, wantLongestNoLead: LeaderlessLimit + time.Second,
	}, {
		name: "elections apart are not added up",
		samples: []sample{
			{0, voters(3, 3, 0)}, {3 * time.Second, voters(3, 3, 3)}, {4 * time.Second, voters(3, 3, 0)},
			{7 * time.Second, voters(3, 3, 2)},
		},
		wantMinHealthy: 0, wantVotingAtMin: 3, wantLongestNoLead: 3 * time.Second,
	}, {
		name:    "only learners: nothing to judge",
		samples: []sample{{0, []Member{{Name: "l", IsLearner: true}}}},
		// No sample counted: MinHealthy stays -1.
		wantMinHealthy: -1,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &QuorumWatcher{report: QuorumReport{MinHealthy: -1}}
			for _, s := range tt.samples {
				w.record(t0.Add(s.after), s.members)
			}
			r := w.Report()
			if r.Lost != tt.wantLost {
				t.Errorf("Lost = %v, want %v (%+v)", r.Lost, tt.wantLost, r)
			}
			if tt.wantLost && !r.FirstLoss.Equal(t0.Add(tt.wantFirstLoss)) {
				t.Errorf("FirstLoss = %v, want %v", r.FirstLoss.Sub(t0), tt.wantFirstLoss)
			}
			if r.MinHealthy != tt.wantMinHealthy || r.VotingAtMin != tt.wantVotingAtMin {
				t.Errorf("at least %d healthy of %d, want %d of %d", r.MinHealthy, r.VotingAtMin, tt.wantMinHealthy, tt.wantVotingAtMin)
			}
			if r.LongestLeaderless != tt.wantLongestNoLead {
				t.Errorf("LongestLeaderless = %v, want %v", r.LongestLeaderless, tt.wantLongestNoLead)
			}
		})
	}
}
