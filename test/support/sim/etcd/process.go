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

package etcd

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/ports"
)

// member is what the simulator knows of one control-plane node's etcd: its (stable) URLs, its
// data dir on the node's disk and its process, if it runs. Guarded by Simulator.mu.
type member struct {
	name string
	// systemUUID and nodeUID identify the host and the Node the member was last seen on.
	systemUUID string
	// clientURL and peerURL stay the same for the node name, as a node's IP does: a re-provisioned
	// host gets the peer URL its old member still holds.
	clientURL, peerURL string
	dataDir            string
	// hasData: the data dir holds the member's state (it has started once and was not wiped).
	hasData bool
	// dataHost and dataDiskWrites: the system UUID of the host on whose disk the data dir was
	// created, and its DiskWrites then ("": unknown), disk.go.
	dataHost       string
	dataDiskWrites uint64
	cmd            *exec.Cmd
	// exited is closed when the process ends.
	exited chan struct{}
	// stoppedAt is when the process was stopped (power cut, wipe) or exited. A stopped one is
	// restarted from its data dir once the Node reports Ready again after that; one that exited
	// (crashed) after the kubelet's back-off.
	stoppedAt time.Time
	// downAt is when its host lost power or was wiped: nothing runs there until the Node's
	// kubelet posts again after that.
	downAt time.Time
	// joinError is why the last attempt to add the member failed ("" when it did not).
	joinError string
	// crashed: the process exited on its own (not stopped by the simulator); the kubelet
	// restarts it after crashBackoff(crashes), as long as its Node runs.
	crashed bool
	crashes int
	// fencedAt is when pacemaker last fenced the member's host (two-node OpenShift with fencing);
	// fenceAttempt when it last tried, fenceError why that failed ("" when it did not).
	fencedAt, fenceAttempt time.Time
	fenceError             string
}

// crashBackoff is the kubelet's CrashLoopBackOff before the n-th restart of a container that
// exited: 10 s, doubled each time, at most 5 minutes (kubelet.go backOffPeriod and
// MaxContainerBackOff in kubernetes/pkg/kubelet).
func crashBackoff(n int) time.Duration {
	d := 10 * time.Second
	for i := 1; i < n && d < 5*time.Minute; i++ {
		d *= 2
	}
	return min(d, 5*time.Minute)
}

func (m *member) running() bool {
	if m.cmd == nil {
		return false
	}
	select {
	case <-m.exited:
		return false
	default:
		return true
	}
}

// freeURL returns http://127.0.0.1:<a reserved port>. A member's URLs are chosen before its
// etcd starts: a port probed free and released could be taken by then, by another member whose
// etcd has not bound it yet (two members got the same port, and the one started second failed
// with "address already in use" at every restart) or by any outgoing connection of the machine.
func freeURL() (string, error) {
	addr, err := ports.Address()
	if err != nil {
		return "", err
	}
	return "http://" + addr, nil
}

// start starts the member's etcd process. initialCluster and state are the --initial-cluster
// and --initial-cluster-state flags (ignored by etcd when the data dir holds a member already);
// extra are further flags (--force-new-cluster).
//
// The lab listens on 127.0.0.1 over plain http; production listens on https://<nodeIP>:2379 and
// https://<nodeIP>:2380 with the serving and peer certificates CEO issues (bindata/etcd/pod.gotpl.yaml).
func (s *Simulator) start(m *member, initialCluster []string, state string, extra ...string) error {
	if err := os.MkdirAll(filepath.Dir(m.dataDir), 0o700); err != nil {
		return fmt.Errorf("creating the folder of %s: %w", m.dataDir, err)
	}
	logFile, err := os.OpenFile(m.dataDir+".log", os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("opening the log of member %s: %w", m.name, err)
	}
	args := make([]string, 0, 13+len(extra))
	args = append(args,
		"--name="+m.name,
		"--data-dir="+m.dataDir,
		"--listen-client-urls="+m.clientURL,
		"--advertise-client-urls="+m.clientURL,
		"--listen-peer-urls="+m.peerURL,
		"--initial-advertise-peer-urls="+m.peerURL,
		"--initial-cluster="+strings.Join(initialCluster, ","),
		"--initial-cluster-state="+state,
		"--initial-cluster-token=lab-etcd",
		// Short timings so that a lost leader is noticed in a test's time.
		"--heartbeat-interval=50",
		"--election-timeout=500",
		"--unsafe-no-fsync",
		"--log-level=warn",
	)
	args = append(args, extra...)
	// Not tied to a context: the simulator kills it itself (power cuts, wipes, Stop).
	cmd := exec.CommandContext(context.Background(), s.binary, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return fmt.Errorf("starting etcd for member %s: %w", m.name, err)
	}
	if !m.hasData {
		s.noteDataDir(m)
	}
	exited := make(chan struct{})
	m.cmd, m.exited, m.hasData, m.stoppedAt, m.crashed = cmd, exited, true, time.Time{}, false
	go func() {
		_ = cmd.Wait()
		_ = logFile.Close()
		s.mu.Lock()
		if m.cmd == cmd && m.stoppedAt.IsZero() {
			m.stoppedAt, m.crashed = time.Now(), true
			m.crashes++
		}
		s.mu.Unlock()
		close(exited)
	}()
	return nil
}

// kill kills the member's process, as a power cut does, and waits until it is gone. Called
// with s.mu held; it releases it while waiting.
func (s *Simulator) kill(m *member) {
	if !m.running() {
		return
	}
	m.stoppedAt, m.crashes = time.Now(), 0
	_ = m.cmd.Process.Kill()
	exited := m.exited
	s.mu.Unlock()
	<-exited
	s.mu.Lock()
}
