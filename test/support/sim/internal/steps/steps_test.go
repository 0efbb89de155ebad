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

package steps

import (
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

func TestTimer(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Unix(1000, 0))
	tm := NewTimer(clk)
	if got := tm.Remaining("a", "inspect", 10*time.Second); got != 10*time.Second {
		t.Fatalf("first call: %v left, want 10s", got)
	}
	clk.SetTime(clk.Now().Add(4 * time.Second))
	if got := tm.Remaining("a", "inspect", 10*time.Second); got != 6*time.Second {
		t.Fatalf("after 4s: %v left, want 6s", got)
	}
	if got := tm.Remaining("b", "inspect", 10*time.Second); got != 10*time.Second {
		t.Fatalf("another object shares the clock: %v left", got)
	}
	clk.SetTime(clk.Now().Add(7 * time.Second))
	if got := tm.Remaining("a", "inspect", 10*time.Second); got > 0 {
		t.Fatalf("after 11s: %v left, want none", got)
	}
	tm.Done("a", "inspect")
	if got := tm.Remaining("a", "inspect", 10*time.Second); got != 10*time.Second {
		t.Fatalf("after Done the step starts over: %v left", got)
	}
	tm.Forget("a")
	tm.Forget("b")
	if len(tm.entered) != 0 {
		t.Fatalf("Forget left %d entries", len(tm.entered))
	}
}
