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

// Package procstat reads what the benchmarks report of a process from Linux's /proc: its peak
// resident set and its CPU time.
package procstat

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's times, on Linux.
const clockTicks = 100

// Usage returns a process's peak resident set in KiB (VmHWM, /proc/<pid>/status) and the CPU
// time it used, user and system (/proc/<pid>/stat).
func Usage(pid int) (peakRSSKiB int, cpu time.Duration, err error) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, fmt.Errorf("reading the status of process %d: %w", pid, err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			if peakRSSKiB, err = strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB")); err != nil {
				return 0, 0, fmt.Errorf("process %d: VmHWM %q: %w", pid, v, err)
			}
		}
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, fmt.Errorf("reading the stat of process %d: %w", pid, err)
	}
	// The fields after the command name (which may hold spaces): utime and stime are the 12th
	// and 13th (proc(5): fields 14 and 15 of the line).
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+2:]))
	if len(fields) < 13 {
		return 0, 0, fmt.Errorf("process %d: a stat of %d fields", pid, len(fields))
	}
	utime, err1 := strconv.Atoi(fields[11])
	stime, err2 := strconv.Atoi(fields[12])
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("process %d: utime %q, stime %q", pid, fields[11], fields[12])
	}
	return peakRSSKiB, time.Duration(utime+stime) * time.Second / clockTicks, nil
}

// Resident is a process's resident set now, in KiB, split as the kernel counts it
// (/proc/<pid>/status): Anon is its private memory (the Go heap, stacks, runtime), File the
// pages of files it maps that are in memory: for a Go binary, its text and read-only data, which
// the page cache shares with every process that maps the same file and can reclaim.
type Resident struct {
	AnonKiB, FileKiB int
}

// ResidentOf returns a process's resident set now (see Resident).
func ResidentOf(pid int) (Resident, error) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return Resident{}, fmt.Errorf("reading the status of process %d: %w", pid, err)
	}
	var r Resident
	found := 0
	for _, line := range strings.Split(string(status), "\n") {
		for _, f := range []struct {
			prefix string
			into   *int
		}{{"RssAnon:", &r.AnonKiB}, {"RssFile:", &r.FileKiB}} {
			if v, ok := strings.CutPrefix(line, f.prefix); ok {
				if *f.into, err = strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB")); err != nil {
					return Resident{}, fmt.Errorf("process %d: %s %q: %w", pid, f.prefix, v, err)
				}
				found++
			}
		}
	}
	if found != 2 {
		return Resident{}, fmt.Errorf("process %d: no RssAnon and RssFile in its status", pid)
	}
	return r, nil
}

// CPUOf sums the CPU time of the processes of this command name that were started with arg among
// their arguments (such as one test environment's kube-apiserver, by its --cert-dir=DIR): not
// every process of that name, which would count another test binary's API servers, or those a
// killed test binary left behind.
func CPUOf(name, arg string) (time.Duration, error) {
	comms, err := filepath.Glob("/proc/[0-9]*/comm")
	if err != nil {
		return 0, err
	}
	var total time.Duration
	for _, comm := range comms {
		if b, err := os.ReadFile(comm); err != nil || strings.TrimSpace(string(b)) != name {
			continue
		}
		dir := filepath.Dir(comm)
		cmdline, err := os.ReadFile(filepath.Join(dir, "cmdline"))
		if err != nil || !slices.Contains(strings.Split(string(cmdline), "\x00"), arg) {
			continue // another process of that name, or it exited meanwhile
		}
		pid, err := strconv.Atoi(filepath.Base(dir))
		if err != nil {
			return 0, err
		}
		_, cpu, err := Usage(pid)
		if err != nil {
			continue // it exited meanwhile
		}
		total += cpu
	}
	return total, nil
}
