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

package assistedservice

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"time"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/ports"
)

// DatabaseName, DatabaseUser: the database assisted-service keeps its state in (its DB_NAME and
// DB_USER), as its operator's deployment names them.
const (
	DatabaseName = "installer"
	DatabaseUser = "admin"
)

// postgresInstallHint is what to do when no PostgreSQL server is found.
const postgresInstallHint = "install PostgreSQL (Debian: apt-get install postgresql; the README's set-up lists it), " +
	"or set POSTGRES_BIN_DIR to the folder holding its initdb and postgres"

// Postgres is a PostgreSQL server of the lab's own: a private data folder and port, stopped with
// Stop. Its data survives Stop: Start it again on the same folder to get it back, as
// assisted-service's database outlives the service's pod.
type Postgres struct {
	// Port is the TCP port it listens on, on 127.0.0.1.
	Port int
	dir  string
	bin  string
	cred *syscall.Credential
	log  io.Writer
	cmd  *exec.Cmd
	done chan error
}

// postgresBinDir finds the folder of PostgreSQL's server programs: POSTGRES_BIN_DIR, the one of
// initdb on PATH, or Debian's /usr/lib/postgresql/<major>/bin (newest first).
func postgresBinDir() (string, error) {
	if dir := os.Getenv("POSTGRES_BIN_DIR"); dir != "" {
		if _, err := os.Stat(filepath.Join(dir, "postgres")); err != nil {
			return "", fmt.Errorf("POSTGRES_BIN_DIR=%s has no postgres: %w", dir, err)
		}
		return dir, nil
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		if _, err := os.Stat(filepath.Join(filepath.Dir(p), "postgres")); err == nil {
			return filepath.Dir(p), nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return majorOf(dirs[i]) > majorOf(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "postgres")); err == nil {
			return d, nil
		}
	}
	return "", errors.New("no PostgreSQL server found: " + postgresInstallHint)
}

// majorOf is the major version in a /usr/lib/postgresql/<major>/bin path (0 if none).
func majorOf(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

// serverCredential is who runs the server: PostgreSQL refuses to run as root, so a root caller
// runs it as the postgres user (the one Debian's package creates); anyone else as themselves.
func serverCredential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("PostgreSQL cannot run as root and there is no postgres user: %w (%s)", err, postgresInstallHint)
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, err
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, err
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// StartPostgres starts a PostgreSQL server on the data folder dir, creating the folder and the
// database DatabaseName (owned by DatabaseUser) when it is new, and waits until it accepts
// connections. Trust authentication on 127.0.0.1 only, and no fsync: a lab's database, which
// nothing but the lab reaches and whose loss a machine crash makes irrelevant.
func StartPostgres(ctx context.Context, dir string, log io.Writer) (*Postgres, error) {
	bin, err := postgresBinDir()
	if err != nil {
		return nil, err
	}
	cred, err := serverCredential()
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = io.Discard
	}
	p := &Postgres{dir: dir, bin: bin, cred: cred, log: log}
	fresh := false
	if _, err := os.Stat(filepath.Join(dir, "PG_VERSION")); errors.Is(err, os.ErrNotExist) {
		fresh = true
		if err := p.initdb(ctx); err != nil {
			return nil, err
		}
	}
	if p.Port, err = ports.Reserve(); err != nil {
		return nil, err
	}
	if err := p.start(ctx); err != nil {
		return nil, err
	}
	if fresh {
		if err := p.run(ctx, "createdb", "-h", "127.0.0.1", "-p", strconv.Itoa(p.Port), "-U", DatabaseUser, DatabaseName); err != nil {
			_ = p.Stop()
			return nil, err
		}
	}
	return p, nil
}

// initdb creates the data folder, owned by the server's user, with DatabaseUser its superuser.
func (p *Postgres) initdb(ctx context.Context) error {
	if err := os.MkdirAll(p.dir, 0o700); err != nil {
		return fmt.Errorf("creating the database folder: %w", err)
	}
	if p.cred != nil {
		// (The folders above it must let that user through: Start makes its own so.)
		if err := os.Chown(p.dir, int(p.cred.Uid), int(p.cred.Gid)); err != nil {
			return fmt.Errorf("giving the database folder to the postgres user: %w", err)
		}
	}
	return p.run(ctx, "initdb", "-D", p.dir, "-U", DatabaseUser, "--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions")
}

// run runs one of PostgreSQL's programs as the server's user.
func (p *Postgres) run(ctx context.Context, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, filepath.Join(p.bin, name), args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: p.cred}
	cmd.Dir = "/"
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w: %s", name, err, out)
	}
	return nil
}

// start runs the server in the foreground of a child process and waits until it accepts
// connections (at most a minute).
func (p *Postgres) start(ctx context.Context) error {
	cmd := exec.Command(filepath.Join(p.bin, "postgres"), //nolint:noctx // its lifetime is Stop's, not a request's
		"-D", p.dir, "-p", strconv.Itoa(p.Port), "-h", "127.0.0.1",
		"-k", "", // no Unix socket: TCP on 127.0.0.1 only
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: p.cred, Setpgid: true}
	cmd.Dir = "/"
	cmd.Stdout, cmd.Stderr = p.log, p.log
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting PostgreSQL: %w", err)
	}
	p.cmd, p.done = cmd, make(chan error, 1)
	go func() { p.done <- cmd.Wait() }()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(p.Port))
	deadline := time.Now().Add(time.Minute)
	for {
		select {
		case err := <-p.done:
			p.done <- err
			return fmt.Errorf("PostgreSQL exited while starting: %v (its log has why)", err)
		default:
		}
		if err := p.run(ctx, "pg_isready", "-q", "-h", "127.0.0.1", "-p", strconv.Itoa(p.Port), "-U", DatabaseUser); err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			_ = p.Stop()
			return fmt.Errorf("PostgreSQL did not accept connections on %s within a minute", addr)
		}
		select {
		case <-ctx.Done():
			_ = p.Stop()
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Stop stops the server (a fast shutdown: SIGINT, then SIGKILL after 10 s); the data folder stays.
func (p *Postgres) Stop() error {
	if p.cmd == nil {
		return nil
	}
	defer func() { p.cmd = nil }()
	select {
	case err := <-p.done:
		return fmt.Errorf("PostgreSQL had stopped: %v", err)
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
	return nil
}
