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
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// reservationTTL is how long this process remembers an Agent it chose or claimed: far longer
// than its cache takes to show the claim (milliseconds), short enough that a choice that was
// neither claimed nor released (a reconcile that failed in between) does not hide the Agent long.
const reservationTTL = 30 * time.Second

// reservations are the Agents this process chose or claimed in the last reservationTTL, and for
// which AgentMachine (UID). They are hints that save requests, never what makes a claim safe
// (the claim's and the choice's optimistic locks do that):
//   - the cache shows a claim only when its watch event arrives. Meanwhile parallel reconciles
//     would rank the Agent just claimed first, choose it (a write), find it claimed and choose
//     again: they skip the Agents reserved for other AgentMachines instead;
//   - the reconcile that follows a claim, started by the AgentMachine's own writes, may find the
//     Agent unlabelled in the cache: it waits for the cache instead of reading the Agent from
//     the API server.
//
// A restarted process starts with none, and reads as before.
type reservations struct {
	mu        sync.Mutex
	byAgent   map[client.ObjectKey]reservation
	lastPrune time.Time
}

type reservation struct {
	uid     types.UID
	at      time.Time
	claimed bool
}

func (r *reservations) live(agent client.ObjectKey, now time.Time) (reservation, bool) {
	res, ok := r.byAgent[agent]
	if !ok || now.Sub(res.at) > reservationTTL {
		return reservation{}, false
	}
	return res, true
}

// reserve records that uid chose agent, or claimed it.
func (r *reservations) reserve(agent client.ObjectKey, uid types.UID, claimed bool, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.set(agent, uid, claimed, now)
}

// tryReserve reserves agent for uid unless another AgentMachine holds it, in one step: two
// reconciles that find the same best fit at once do not both choose it. A claim uid already
// made stays a claim.
func (r *reservations) tryReserve(agent client.ObjectKey, uid types.UID, now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	res, ok := r.live(agent, now)
	if ok && res.uid != uid {
		return false
	}
	r.set(agent, uid, ok && res.claimed, now)
	return true
}

// set records a reservation; r.mu is held.
func (r *reservations) set(agent client.ObjectKey, uid types.UID, claimed bool, now time.Time) {
	if r.byAgent == nil {
		r.byAgent = map[client.ObjectKey]reservation{}
	}
	if now.Sub(r.lastPrune) > reservationTTL {
		for k, res := range r.byAgent {
			if now.Sub(res.at) > reservationTTL {
				delete(r.byAgent, k)
			}
		}
		r.lastPrune = now
	}
	r.byAgent[agent] = reservation{uid: uid, at: now, claimed: claimed}
}

// heldByOther tells whether agent is reserved for an AgentMachine other than uid.
func (r *reservations) heldByOther(agent client.ObjectKey, uid types.UID, now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	res, ok := r.live(agent, now)
	return ok && res.uid != uid
}

// claimedBy tells whether this process claimed agent for uid in the last reservationTTL.
func (r *reservations) claimedBy(agent client.ObjectKey, uid types.UID, now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	res, ok := r.live(agent, now)
	return ok && res.uid == uid && res.claimed
}

// release forgets uid's reservation of agent (a choice given up, a claim released).
func (r *reservations) release(agent client.ObjectKey, uid types.UID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if res, ok := r.byAgent[agent]; ok && res.uid == uid {
		delete(r.byAgent, agent)
	}
}
