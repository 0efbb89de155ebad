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

package ports

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// TestReserve checks that reserved ports are distinct, outside the kernel's ephemeral range,
// free to bind, and locked against the other test processes of the machine.
func TestReserve(t *testing.T) {
	low, high := portRange()
	if low > high || low < 1024 || high > 65535 {
		t.Fatalf("port range %d-%d", low, high)
	}
	seen := map[int]bool{}
	for range 20 {
		port, err := Reserve()
		if err != nil {
			t.Fatal(err)
		}
		if seen[port] {
			t.Fatalf("port %d reserved twice", port)
		}
		seen[port] = true
		if port < low || port > high {
			t.Errorf("port %d outside %d-%d", port, low, high)
		}
		l, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			t.Fatalf("binding reserved port %d: %v", port, err)
		}
		_ = l.Close()
		// Another process opens the same lock file: flock locks belong to the open file, so a
		// second open in this process stands for it.
		f, err := os.Open(filepath.Join(os.TempDir(), "capoa-test-ports", strconv.Itoa(port)))
		if err != nil {
			t.Fatal(err)
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); !errors.Is(err, syscall.EWOULDBLOCK) {
			t.Errorf("port %d's lock taken by another process: %v", port, err)
		}
		_ = f.Close()
	}
}

// TestReserveSkipsPortsInUse checks that a port another program listens on, without a lock,
// is not handed out.
func TestReserveSkipsPortsInUse(t *testing.T) {
	low, high := portRange()
	var busy []net.Listener
	defer func() {
		for _, l := range busy {
			_ = l.Close()
		}
	}()
	// Occupy a share of the range large enough that picking at random would hit it.
	inUse := map[int]bool{}
	for p := low; p <= high && len(busy) < 2000; p++ {
		l, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			continue
		}
		busy = append(busy, l)
		inUse[p] = true
	}
	for range 50 {
		port, err := Reserve()
		if err != nil {
			t.Fatal(err)
		}
		if inUse[port] {
			t.Fatalf("port %d handed out while another program listens on it", port)
		}
	}
}
