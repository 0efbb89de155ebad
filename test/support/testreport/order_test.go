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

package testreport

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestOrderStartsTheLongestAndTheUnknownFirst(t *testing.T) {
	times := map[string]time.Duration{"a": time.Second, "b": 90 * time.Second, "c": 30 * time.Second, "d": time.Second}
	got := Order([]string{"a", "b", "c", "new", "d"}, times)
	if want := []string{"new", "b", "c", "a", "d"}; !slices.Equal(got, want) {
		t.Fatalf("Order = %v, want %v", got, want)
	}
	if got := Order([]string{"x", "y"}, nil); !slices.Equal(got, []string{"x", "y"}) {
		t.Fatalf("without times, Order = %v, want the order given", got)
	}
}

func TestTimesRoundTripFromAStream(t *testing.T) {
	suites, err := ReadGoTest(strings.NewReader(stream))
	if err != nil {
		t.Fatal(err)
	}
	suites = append(suites, Suite{Name: "lint", Step: true, Wall: time.Minute}, Suite{Name: "cut", Result: "incomplete"})
	var buf bytes.Buffer
	if err := WriteTimes(&buf, suites); err != nil {
		t.Fatal(err)
	}
	times, err := ReadTimes(strings.NewReader(buf.String() + "garbage\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range suites {
		got, ok := times[s.Name]
		switch {
		case s.Step || s.Result == "incomplete":
			if ok {
				t.Errorf("%s (step %v, %s) is in the times", s.Name, s.Step, s.Result)
			}
		case !ok || got.Round(100*time.Millisecond) != s.Wall.Round(100*time.Millisecond):
			t.Errorf("times[%s] = %v (%v), want %v", s.Name, got, ok, s.Wall)
		}
	}
	if len(times) == 0 {
		t.Fatal("no times read back")
	}
}
