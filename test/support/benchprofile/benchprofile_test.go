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

package benchprofile

import (
	"context"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestProfilesOfAServer: a CPU profile in slices and a heap profile are taken from a pprof
// server, their top entries name the work this process did, and its memory statistics are read.
func TestProfilesOfAServer(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	l, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: time.Second}
	go func() { _ = srv.Serve(l) }()
	defer srv.Close()
	addr, dir := l.Addr().String(), t.TempDir()

	ctx := context.Background()
	cpu := StartCPU(ctx, addr, dir, "cpu")
	deadline := time.Now().Add(CPUSlice + time.Second)
	n := 0
	for time.Now().Before(deadline) {
		n += burn(1000)
	}
	files := cpu.Stop()
	if len(files) == 0 || n == 0 {
		t.Fatalf("CPU profiles %v", files)
	}
	top, err := Top(5, nil, files...)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(top, "benchprofile.burn") {
		t.Errorf("the CPU profile's top entries do not name the function that burned the CPU:\n%s", top)
	}

	heap := filepath.Join(dir, "heap.pb.gz")
	if err := SaveHeap(ctx, addr, heap); err != nil {
		t.Fatal(err)
	}
	if top, err = Top(5, []string{"-sample_index=alloc_space"}, heap); err != nil || !strings.Contains(top, "flat") {
		t.Errorf("the heap profile's top: %v\n%s", err, top)
	}
	stats, err := MemStats(ctx, addr)
	if err != nil || !strings.Contains(stats, "HeapInuse") || !strings.Contains(stats, "NumGC") {
		t.Errorf("memory statistics %q: %v", stats, err)
	}
	if err := DownloadFrom(ctx, addr, "/debug/pprof/nothing", filepath.Join(dir, "x")); err == nil {
		t.Error("no error for a profile the server does not have")
	}
	if _, err := os.Stat(filepath.Join(dir, "x")); err == nil {
		t.Error("a file written for a failed download")
	}
}

// TestProfilesOfASocket: a process that serves pprof on a unix socket (kube-apiserver's
// --debug-socket-path) is profiled through SocketPrefix.
func TestProfilesOfASocket(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	socket := filepath.Join(t.TempDir(), "pprof.sock")
	l, err := (&net.ListenConfig{}).Listen(t.Context(), "unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: time.Second}
	go func() { _ = srv.Serve(l) }()
	defer srv.Close()
	heap := filepath.Join(t.TempDir(), "heap.pb.gz")
	if err := SaveHeap(t.Context(), SocketPrefix+socket, heap); err != nil {
		t.Fatal(err)
	}
	if top, err := Top(5, []string{"-sample_index=alloc_space"}, heap); err != nil || !strings.Contains(top, "flat") {
		t.Errorf("the heap profile's top: %v\n%s", err, top)
	}
	if err := SaveHeap(t.Context(), SocketPrefix+socket+".missing", heap); err == nil {
		t.Error("no error for a socket nothing listens on")
	}
}

// burn spends CPU where the profile can see it.
func burn(n int) int {
	x := 0
	for i := range n * 1000 {
		x += i % 7
	}
	return x
}
