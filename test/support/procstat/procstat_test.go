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
	"syscall"
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
	// Burn 200 ms of CPU as the kernel counts it for this process (getrusage), however long that
	// takes on a busy machine: a loop of 300 ms of wall time got 70 ms of CPU while the unit
	// phase's other binaries kept both cores busy.
	burned, err := selfCPU()
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; {
		now, err := selfCPU()
		if err != nil {
			t.Fatal(err)
		}
		if now-burned >= 200*time.Millisecond {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("getrusage counted %s of this process's CPU in a minute of burning it, not 200 ms", now-burned)
		}
	}
	_, after, err := Usage(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if after-before < 150*time.Millisecond {
		t.Fatalf("CPU time went from %s to %s after 200 ms of CPU burned", before, after)
	}
	if _, _, err := Usage(-1); err == nil {
		t.Fatal("no error for a process that does not exist")
	}
	self, err := os.ReadFile("/proc/self/comm")
	if err != nil {
		t.Fatal(err)
	}
	name := string(self[:len(self)-1])
	cpu, err := CPUOf(name, os.Args[0])
	if err != nil || cpu < after {
		t.Fatalf("CPUOf(%s, %s) = %s, %v; want at least this process's %s", name, os.Args[0], cpu, err, after)
	}
	if cpu, err := CPUOf(name, "--an-argument-no-process-has"); err != nil || cpu != 0 {
		t.Fatalf("CPUOf(%s) of an argument this process lacks = %s, %v; want none", name, cpu, err)
	}
}

// selfCPU is this process's user and system CPU time as getrusage(2) reports it.
func selfCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, err
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}

// TestResidentOfThisProcess: memory this process allocates and touches shows in its anonymous
// resident set, and its binary's pages in the file one.
func TestResidentOfThisProcess(t *testing.T) {
	before, err := ResidentOf(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if before.FileKiB < 1024 {
		t.Fatalf("file-backed resident set %d KiB, want at least the 1 MiB of the test binary it runs", before.FileKiB)
	}
	block := make([]byte, 64<<20)
	for i := range block {
		block[i] = byte(i)
	}
	after, err := ResidentOf(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if grew := after.AnonKiB - before.AnonKiB; grew < 60<<10 {
		t.Fatalf("anonymous resident set grew by %d KiB after 64 MiB were written, want at least 60 MiB", grew)
	}
	if block[len(block)-1] != byte(len(block)-1) {
		t.Fatal("the block was not written")
	}
	if _, err := ResidentOf(-1); err == nil {
		t.Fatal("no error for a process that does not exist")
	}
}
