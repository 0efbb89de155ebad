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

package testenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// ControllerManager is a kube-controller-manager process (StartControllerManager).
type ControllerManager struct {
	cmd  *exec.Cmd
	done chan error
	dir  string
	ctx  context.Context //nolint:containedctx // the process's lifetime, told apart from a crash in Stop
}

// StartControllerManager runs kube-controller-manager, built by hack/ensure-envtest.sh beside the
// kube-apiserver, against the environment's API server with the controllers named (for example
// "garbagecollector", "namespace"), logging into log: the rest of a real control plane for a
// management cluster whose tests need what only those controllers do, such as a foreground
// deletion, which waits for the garbage collector to delete the owner's dependents and then its
// foregroundDeletion finalizer. It serves nothing (--secure-port=0) and does not elect a
// leader: it is the only one.
// The process is killed when ctx is done.
func (e *Environment) StartControllerManager(ctx context.Context, log io.Writer, controllers ...string) (*ControllerManager, error) {
	if len(controllers) == 0 {
		return nil, errors.New("StartControllerManager: name the controllers to run")
	}
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	assets, err := AssetsDir(root)
	if err != nil {
		return nil, err
	}
	bin := filepath.Join(assets, "kube-controller-manager")
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("no kube-controller-manager in %s: run hack/ensure-envtest.sh, which builds it: %w", assets, err)
	}
	dir, err := os.MkdirTemp("", "kube-controller-manager-")
	if err != nil {
		return nil, err
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := e.WriteKubeconfig(kubeconfig); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	cmd := exec.CommandContext(ctx, bin,
		"--kubeconfig="+kubeconfig,
		"--controllers="+strings.Join(controllers, ","),
		"--leader-elect=false",
		"--secure-port=0",
		"--v=1",
	)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("starting kube-controller-manager: %w", err)
	}
	m := &ControllerManager{cmd: cmd, done: make(chan error, 1), dir: dir, ctx: ctx}
	go func() { m.done <- cmd.Wait() }()
	return m, nil
}

// Stop stops the process (SIGTERM, then SIGKILL after 10 s) and removes its files.
func (m *ControllerManager) Stop() error {
	defer os.RemoveAll(m.dir)
	select {
	case err := <-m.done:
		if m.ctx.Err() != nil {
			return nil // killed because its context ended
		}
		return fmt.Errorf("kube-controller-manager had stopped: %w", err)
	default:
	}
	_ = m.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-m.done:
		_ = err // it exits with the signal's status
	case <-time.After(10 * time.Second):
		_ = m.cmd.Process.Kill()
		err := <-m.done
		_ = err
	}
	return nil
}

// Running returns nil while the process runs, and why it stopped otherwise.
func (m *ControllerManager) Running() error {
	select {
	case err := <-m.done:
		m.done <- err
		return fmt.Errorf("kube-controller-manager stopped: %v", err)
	default:
		return nil
	}
}
