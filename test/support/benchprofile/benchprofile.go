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

// Package benchprofile takes a process's CPU and heap profiles from its pprof handlers (a
// manager's --profiler-address, or kube-apiserver's --debug-socket-path) while a benchmark runs,
// and prints their top entries, so that the benchmark's output says what bounds the figures it
// reports.
package benchprofile

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// CPUSlice is how long each CPU profile of a CPUProfiler lasts: pprof's handler profiles for
// a fixed time, so a run of unknown length is profiled in back-to-back slices that go tool
// pprof merges.
const CPUSlice = 5 * time.Second

// CPUProfiler takes a process's CPU profile in slices of CPUSlice until stopped.
type CPUProfiler struct {
	cancel context.CancelFunc
	done   chan []string
}

// SocketPrefix marks an address that is a unix socket's path (kube-apiserver serves pprof
// without authentication on its --debug-socket-path): "unix:/path/to.sock".
const SocketPrefix = "unix:"

// maxProfile bounds what is read of one profile: a CPU slice of a busy API server is about
// 150 KB, a heap profile of a manager about 1 MB.
const maxProfile = 256 << 20

// timeout bounds one request: a CPU slice answers after CPUSlice.
const timeout = CPUSlice + time.Minute

var tcpClient = &http.Client{Timeout: timeout}

// StartCPU profiles the process serving pprof at addr (host:port, or SocketPrefix and a socket's
// path), writing dir/<name>-NN.pb.gz. Until the process serves, it tries again every 100 ms.
func StartCPU(ctx context.Context, addr, dir, name string) *CPUProfiler {
	ctx, cancel := context.WithCancel(ctx)
	p := &CPUProfiler{cancel: cancel, done: make(chan []string, 1)}
	go func() {
		var files []string
		for i := 0; ctx.Err() == nil; i++ {
			path := filepath.Join(dir, fmt.Sprintf("%s-%02d.pb.gz", name, i))
			url := fmt.Sprintf("/debug/pprof/profile?seconds=%d", int(CPUSlice.Seconds()))
			// The slice in progress when stopped is finished, not cut short: pprof writes
			// nothing for a request that is cancelled.
			if err := DownloadFrom(context.WithoutCancel(ctx), addr, url, path); err != nil {
				time.Sleep(100 * time.Millisecond)
				continue
			}
			files = append(files, path)
		}
		p.done <- files
	}()
	return p
}

// Stop ends the profiling after the slice in progress and returns the profiles' files.
func (p *CPUProfiler) Stop() []string {
	p.cancel()
	return <-p.done
}

// SaveHeap writes the heap profile of the process serving pprof at addr to path: its live
// objects as of its last GC, and every allocation since it started.
func SaveHeap(ctx context.Context, addr, path string) error {
	return DownloadFrom(ctx, addr, "/debug/pprof/heap", path)
}

// MemStats summarizes the runtime's memory statistics that the heap profile's text form ends
// with (runtime.MemStats): the memory obtained from the OS, the heap obtained and in use, what
// was returned, the next GC's goal and the number of GCs.
func MemStats(ctx context.Context, addr string) (string, error) {
	text, err := getFrom(ctx, addr, "/debug/pprof/heap?debug=1")
	if err != nil {
		return "", err
	}
	var out []string
	for _, line := range strings.Split(string(text), "\n") {
		for _, name := range []string{"Sys", "HeapSys", "HeapInuse", "HeapReleased", "NextGC", "NumGC"} {
			if v, ok := strings.CutPrefix(line, "# "+name+" = "); ok {
				if n, err := strconv.ParseUint(strings.Fields(v)[0], 10, 64); err == nil && name != "NumGC" {
					v = fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
				}
				out = append(out, name+" "+v)
			}
		}
	}
	if len(out) == 0 {
		return "", fmt.Errorf("no memory statistics in the heap profile of %s", addr)
	}
	return strings.Join(out, ", "), nil
}

// DownloadFrom writes what a GET of urlPath from the process serving pprof at addr (host:port,
// or SocketPrefix and a socket's path) answers to path.
func DownloadFrom(ctx context.Context, addr, urlPath, path string) error {
	body, err := getFrom(ctx, addr, urlPath)
	if err != nil {
		return err
	}
	return os.WriteFile(path, body, 0o600)
}

func getFrom(ctx context.Context, addr, urlPath string) ([]byte, error) {
	hc, host := tcpClient, addr
	if socket, ok := strings.CutPrefix(addr, SocketPrefix); ok {
		// A client per call: without keep-alives its connection closes with the response, and
		// no idle one is left behind per CPU slice.
		hc = &http.Client{Timeout: timeout, Transport: &http.Transport{
			DisableKeepAlives: true,
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				return (&net.Dialer{}).DialContext(ctx, "unix", socket)
			}}}
		host = "pprof"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+host+urlPath, nil)
	if err != nil {
		return nil, err
	}
	return get(hc, req)
}

func get(hc *http.Client, req *http.Request) ([]byte, error) {
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", req.URL, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxProfile+1))
	if err == nil && len(body) > maxProfile {
		return nil, fmt.Errorf("GET %s: more than %d bytes", req.URL, maxProfile)
	}
	return body, err
}

// Top returns the first n entries of go tool pprof -top for the profiles (merged), with
// pprofArgs (such as -sample_index=inuse_space), each line indented, without pprof's file and
// build lines.
func Top(n int, pprofArgs []string, profiles ...string) (string, error) {
	args := append([]string{"tool", "pprof", "-top", fmt.Sprintf("-nodecount=%d", n)}, pprofArgs...)
	cmd := exec.Command("go", append(args, profiles...)...) //nolint:noctx // go tool pprof on the benchmark's own files
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go tool pprof %v: %w", pprofArgs, err)
	}
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		if strings.HasPrefix(line, "File:") || strings.HasPrefix(line, "Build ID:") || strings.HasPrefix(line, "Type:") ||
			strings.HasPrefix(line, "Time:") || strings.HasPrefix(line, "Dropped") {
			continue
		}
		b.WriteString("    " + line + "\n")
	}
	return b.String(), nil
}
