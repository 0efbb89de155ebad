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

package procstat

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestUsageOfThisProcess: the test's own process has a resident set, and its CPU time grows
// with work done.
func TestUsageOfThisProcess(t *testing.T) {
	rss, before, err := Usage(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if rss < 1024 {
		t.Fatalf("peak RSS %d KiB, want at least 1 MiB", rss)
	}
	for start := time.Now(); time.Since(start) < 300*time.Millisecond; { //nolint:revive // burning CPU is the point
	}
	_, after, err := Usage(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if after-before < 100*time.Millisecond {
		t.Fatalf("CPU time went from %s to %s after 300 ms of work", before, after)
	}
	if _, _, err := Usage(-1); err == nil {
		t.Fatal("no error for a process that does not exist")
	}
	self, err := os.ReadFile("/proc/self/comm")
	if err != nil {
		t.Fatal(err)
	}
	cpu, err := CPUOf(string(self[:len(self)-1]))
	if err != nil || cpu < after {
		t.Fatalf("CPUOf(%s) = %s, %v; want at least this process's %s", filepath.Base(string(self)), cpu, err, after)
	}
}
