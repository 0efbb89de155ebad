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

// Package steps times the steps of the simulators' state machines.
package steps

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

type key struct {
	uid  types.UID
	step string
}

// Timer remembers, in memory, when each object entered a step. A simulator runs in one process;
// after a restart the steps in progress simply start over.
type Timer struct {
	mu      sync.Mutex
	clock   clock.PassiveClock
	entered map[key]time.Time
}

// NewTimer returns a Timer reading c, or the real clock when c is nil.
func NewTimer(c clock.PassiveClock) *Timer {
	if c == nil {
		c = clock.RealClock{}
	}
	return &Timer{clock: c, entered: map[key]time.Time{}}
}

// Remaining starts the clock of the object's step on its first call and returns how long the
// object must still stay in that step for d to have elapsed (zero or less: the step is done).
func (t *Timer) Remaining(uid types.UID, step string, d time.Duration) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	k := key{uid: uid, step: step}
	start, ok := t.entered[k]
	if !ok {
		start = t.clock.Now()
		t.entered[k] = start
	}
	return d - t.clock.Since(start)
}

// Done ends the object's step, so that entering it again starts a new clock.
func (t *Timer) Done(uid types.UID, step string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.entered, key{uid: uid, step: step})
}

// Forget drops every step of the object (when it is deleted).
func (t *Timer) Forget(uid types.UID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for k := range t.entered {
		if k.uid == uid {
			delete(t.entered, k)
		}
	}
}
