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

// Package ports reserves TCP ports for servers that tests start.
//
// A port that a test picks now and a server binds later (a webhook server's, a provider process's
// health port, an etcd member's) must stay free in between. envtest's own suggestion binds
// 127.0.0.1:0, which hands out a port of the kernel's ephemeral range, and releases it: until the
// server binds it, any outgoing connection of any process of the machine (the kernel gives their
// local ports from that range) or any other listener on port 0 can take it, and the server fails
// with "address already in use" (a system run lost its control-plane webhook server so). Reserve
// picks outside that range instead, and keeps the port from the other test processes of the
// machine with a lock file held until this process exits.
package ports

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

var (
	reserveMu sync.Mutex
	// reserved holds the lock files of this process's ports open: closing one would release it.
	reserved = map[int]*os.File{}
)

// Reserve returns a TCP port on 127.0.0.1 that nothing listens on now, that is outside the
// kernel's ephemeral port range, and that no other caller of Reserve on this machine holds.
// The port stays reserved until the process exits.
func Reserve() (int, error) {
	low, high := portRange()
	dir := filepath.Join(os.TempDir(), "capoa-test-ports")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return 0, fmt.Errorf("reserving a port: %w", err)
	}
	reserveMu.Lock()
	defer reserveMu.Unlock()
	for range 200 {
		port := low + rand.IntN(high-low+1) //nolint:gosec // a port, not a secret
		if _, ok := reserved[port]; ok {
			continue
		}
		f, err := os.OpenFile(filepath.Join(dir, strconv.Itoa(port)), os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil {
			return 0, fmt.Errorf("reserving a port: %w", err)
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			_ = f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				continue
			}
			return 0, fmt.Errorf("reserving port %d: %w", port, err)
		}
		l, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			// Something that does not reserve (another program) has it: keep the lock, so
			// that this process does not try it again, and pick another.
			reserved[port] = f
			continue
		}
		_ = l.Close()
		reserved[port] = f
		return port, nil
	}
	return 0, fmt.Errorf("no free port in %d-%d after 200 tries", low, high)
}

// Address is Reserve as a 127.0.0.1:port address.
func Address() (string, error) {
	port, err := Reserve()
	if err != nil {
		return "", err
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), nil
}

// portRange is the range Reserve picks from: the unprivileged ports below the kernel's
// ephemeral range (/proc/sys/net/ipv4/ip_local_port_range, 32768-60999 by default), or, when that
// range starts too low to leave room, the ports above it.
func portRange() (low, high int) {
	ephLow, ephHigh := 32768, 60999
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			l, err1 := strconv.Atoi(f[0])
			h, err2 := strconv.Atoi(f[1])
			if err1 == nil && err2 == nil && l <= h {
				ephLow, ephHigh = l, h
			}
		}
	}
	const first = 10000
	switch {
	case ephLow-first >= 1000:
		return first, ephLow - 1
	case 65535-ephHigh >= 1000:
		return ephHigh + 1, 65535
	default:
		// The ephemeral range covers nearly everything: the lock files still keep test
		// processes apart.
		return first, 65535
	}
}
