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

package controllers

import (
	"fmt"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

var (
	resAgent1 = client.ObjectKey{Namespace: "agents", Name: "a1"}
	resAgent2 = client.ObjectKey{Namespace: "agents", Name: "a2"}
	resT0     = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
)

// TestReservationsTryReserve: an Agent is reserved for the first AgentMachine that tries, again
// for that one, not for another while the reservation lives (reservationTTL, inclusive), and for
// another once it expired.
func TestReservationsTryReserve(t *testing.T) {
	g := NewWithT(t)
	var r reservations
	g.Expect(r.tryReserve(resAgent1, "am-1", resT0)).To(BeTrue(), "a free Agent")
	g.Expect(r.tryReserve(resAgent1, "am-1", resT0.Add(time.Second))).To(BeTrue(), "the holder again")
	g.Expect(r.tryReserve(resAgent1, "am-2", resT0.Add(time.Second))).To(BeFalse(), "held by am-1")
	g.Expect(r.tryReserve(resAgent2, "am-2", resT0.Add(time.Second))).To(BeTrue(), "another Agent")
	// The holder's second tryReserve renewed the reservation at t0+1s.
	g.Expect(r.tryReserve(resAgent1, "am-2", resT0.Add(time.Second+reservationTTL))).To(BeFalse(), "alive at exactly reservationTTL")
	g.Expect(r.tryReserve(resAgent1, "am-2", resT0.Add(time.Second+reservationTTL+time.Nanosecond))).To(BeTrue(), "expired")
	g.Expect(r.heldByOther(resAgent1, "am-1", resT0.Add(time.Second+reservationTTL+time.Nanosecond))).To(BeTrue(), "now am-2's")
}

// TestReservationsHeldByOther: only a live reservation for another AgentMachine holds an Agent.
func TestReservationsHeldByOther(t *testing.T) {
	var r reservations
	r.reserve(resAgent1, "am-1", false, resT0)
	r.reserve(resAgent2, "am-1", true, resT0)
	for _, tt := range []struct {
		name  string
		agent client.ObjectKey
		uid   types.UID
		at    time.Duration
		want  bool
	}{
		{"the holder", resAgent1, "am-1", time.Second, false},
		{"another AgentMachine", resAgent1, "am-2", time.Second, true},
		{"another AgentMachine, claimed", resAgent2, "am-2", time.Second, true},
		{"another AgentMachine at the TTL", resAgent1, "am-2", reservationTTL, true},
		{"another AgentMachine after the TTL", resAgent1, "am-2", reservationTTL + time.Nanosecond, false},
		{"an Agent nobody reserved", client.ObjectKey{Namespace: "agents", Name: "a3"}, "am-2", time.Second, false},
		{"the same name in another namespace", client.ObjectKey{Namespace: "other", Name: "a1"}, "am-2", time.Second, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(r.heldByOther(tt.agent, tt.uid, resT0.Add(tt.at))).To(Equal(tt.want))
		})
	}
}

// TestReservationsClaimedBy: only a live claim (not a choice) by that AgentMachine counts, and a
// choice made again after the claim turns it back into a choice.
func TestReservationsClaimedBy(t *testing.T) {
	g := NewWithT(t)
	var r reservations
	g.Expect(r.claimedBy(resAgent1, "am-1", resT0)).To(BeFalse(), "nothing reserved")
	r.reserve(resAgent1, "am-1", false, resT0)
	g.Expect(r.claimedBy(resAgent1, "am-1", resT0)).To(BeFalse(), "chosen, not claimed")
	r.reserve(resAgent1, "am-1", true, resT0)
	g.Expect(r.claimedBy(resAgent1, "am-1", resT0)).To(BeTrue())
	g.Expect(r.claimedBy(resAgent1, "am-2", resT0)).To(BeFalse(), "claimed for another AgentMachine")
	g.Expect(r.claimedBy(resAgent1, "am-1", resT0.Add(reservationTTL))).To(BeTrue(), "alive at exactly reservationTTL")
	g.Expect(r.claimedBy(resAgent1, "am-1", resT0.Add(reservationTTL+time.Nanosecond))).To(BeFalse(), "expired")
	g.Expect(r.tryReserve(resAgent1, "am-1", resT0.Add(time.Second))).To(BeTrue())
	g.Expect(r.claimedBy(resAgent1, "am-1", resT0.Add(time.Second))).To(BeTrue(), "the holder's tryReserve keeps its claim")
	later := resT0.Add(time.Second + reservationTTL + time.Nanosecond)
	g.Expect(r.tryReserve(resAgent1, "am-1", later)).To(BeTrue())
	g.Expect(r.claimedBy(resAgent1, "am-1", later)).To(BeFalse(), "after the claim expired, tryReserve records a choice")
	g.Expect(r.tryReserve(resAgent2, "am-1", later)).To(BeTrue())
	g.Expect(r.claimedBy(resAgent2, "am-1", later)).To(BeFalse(), "tryReserve of a free Agent records a choice")
}

// TestReservationsRelease: only the holder's release forgets a reservation.
func TestReservationsRelease(t *testing.T) {
	g := NewWithT(t)
	var r reservations
	r.release(resAgent1, "am-1") // nothing reserved yet: no panic on the nil map
	r.reserve(resAgent1, "am-1", true, resT0)
	r.release(resAgent1, "am-2")
	g.Expect(r.claimedBy(resAgent1, "am-1", resT0)).To(BeTrue(), "another AgentMachine's release changes nothing")
	g.Expect(r.heldByOther(resAgent1, "am-2", resT0)).To(BeTrue())
	r.release(resAgent1, "am-1")
	g.Expect(r.claimedBy(resAgent1, "am-1", resT0)).To(BeFalse())
	g.Expect(r.heldByOther(resAgent1, "am-2", resT0)).To(BeFalse())
	g.Expect(r.byAgent).To(BeEmpty())
}

// TestReservationsPrune: a write drops the expired reservations, at most once per reservationTTL;
// an expired one still in the map is not live.
func TestReservationsPrune(t *testing.T) {
	g := NewWithT(t)
	var r reservations
	key := func(i int) client.ObjectKey {
		return client.ObjectKey{Namespace: "agents", Name: fmt.Sprintf("a%d", i)}
	}
	keys := func() []client.ObjectKey {
		var out []client.ObjectKey
		for k := range r.byAgent {
			out = append(out, k)
		}
		return out
	}
	r.reserve(key(1), "am-1", false, resT0)                     // prunes (never pruned before)
	r.reserve(key(2), "am-2", false, resT0.Add(10*time.Second)) // 10 s after the last prune: none
	g.Expect(keys()).To(ConsistOf(key(1), key(2)))
	r.reserve(key(3), "am-3", false, resT0.Add(31*time.Second)) // prunes: a1 (31 s old) goes, a2 (21 s) stays
	g.Expect(keys()).To(ConsistOf(key(2), key(3)))
	r.reserve(key(4), "am-4", false, resT0.Add(45*time.Second)) // 14 s after the last prune: a2 (35 s) stays in the map
	g.Expect(keys()).To(ConsistOf(key(2), key(3), key(4)))
	g.Expect(r.heldByOther(key(2), "am-9", resT0.Add(45*time.Second))).To(BeFalse(), "expired, though not pruned yet")
	g.Expect(r.tryReserve(key(5), "am-5", resT0.Add(62*time.Second))).To(BeTrue()) // prunes: a2, a3 (31 s) go
	g.Expect(keys()).To(ConsistOf(key(4), key(5)))
}

// TestReservationsTryReserveRace: of many AgentMachines that try to reserve one Agent at once,
// exactly one gets it.
func TestReservationsTryReserveRace(t *testing.T) {
	var r reservations
	var wg sync.WaitGroup
	won := make(chan types.UID, 16)
	for i := range 16 {
		wg.Go(func() {
			uid := types.UID(fmt.Sprintf("am-%d", i))
			if r.tryReserve(resAgent1, uid, resT0) {
				won <- uid
			}
		})
	}
	wg.Wait()
	close(won)
	var winners []types.UID
	for uid := range won {
		winners = append(winners, uid)
	}
	g := NewWithT(t)
	g.Expect(winners).To(HaveLen(1))
	g.Expect(r.heldByOther(resAgent1, winners[0], resT0)).To(BeFalse())
	g.Expect(r.heldByOther(resAgent1, "am-other", resT0)).To(BeTrue())
}
