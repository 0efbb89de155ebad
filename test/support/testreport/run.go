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

package testreport

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// Why the test command builds test binaries into a directory it keeps, then runs them itself,
// instead of `go test ./...`: go test links every test binary again on every run, even when
// nothing changed (its cache keeps compiled packages and test results, not binaries), and the
// links of the unit phase's 41 binaries cost about 145 s of CPU on this 2-core machine, a third
// of the phase. `go test -c -o DIR/` does not link a binary again when the one in DIR is up to
// date (the go command compares the build ID the binary carries). The binaries run as go test
// runs them: from the package's directory, through test2json (go tool test2json), so the stream
// is the one `go test -json` writes.

// Package is a test package to build and run.
type Package struct {
	// ImportPath names it in the stream.
	ImportPath string
	// Dir is its directory: the test binary runs there, as under go test.
	Dir string
	// Name is its package name: `go test -c -o DIR/` writes DIR/Name.test.
	Name string
}

// Buckets splits pkgs (in their order) into as few lists as there can be in which no two
// packages share a name, since `go test -c -o DIR/` refuses two packages of the same name: the
// i-th package of a name goes to the i-th list.
func Buckets(pkgs []Package) [][]Package {
	seen := map[string]int{}
	var out [][]Package
	for _, p := range pkgs {
		i := seen[p.Name]
		seen[p.Name] = i + 1
		if i == len(out) {
			out = append(out, nil)
		}
		out[i] = append(out[i], p)
	}
	return out
}

// Binary is a built test binary and the package it tests.
type Binary struct {
	Package
	// Path is the binary.
	Path string
}

// Build builds the test binaries of pkgs under dir (dir/<bucket>/<name>.test), one `go test -c`
// per bucket, side by side; a binary that is up to date is not linked again. The go command's
// output (compile errors) goes to out. A package without test files gets no binary: pkgs must
// have test files. On an error none of the binaries may be run: one that failed to build keeps
// what an earlier build wrote.
func Build(ctx context.Context, gobin, dir string, pkgs []Package, out io.Writer) ([]Binary, error) {
	buckets := Buckets(pkgs)
	bins := make([]Binary, 0, len(pkgs))
	errs := make([]error, len(buckets))
	logs := make([]bytes.Buffer, len(buckets))
	var wg sync.WaitGroup
	for i, b := range buckets {
		bdir := filepath.Join(dir, strconv.Itoa(i))
		args := []string{"test", "-c", "-o", bdir + string(filepath.Separator)}
		for _, p := range b {
			args = append(args, p.ImportPath)
			bins = append(bins, Binary{Package: p, Path: filepath.Join(bdir, p.Name+".test")})
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.CommandContext(ctx, gobin, args...)
			cmd.Stdout, cmd.Stderr = &logs[i], &logs[i]
			if err := cmd.Run(); err != nil {
				errs[i] = fmt.Errorf("go test -c (%d packages): %w", len(b), err)
			}
		}()
	}
	wg.Wait()
	for i := range logs {
		if _, err := out.Write(logs[i].Bytes()); err != nil {
			return nil, err
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	// Order: as pkgs.
	byPath := make(map[string]Binary, len(bins))
	for _, b := range bins {
		byPath[b.ImportPath] = b
	}
	ordered := make([]Binary, 0, len(pkgs))
	keep := map[string]bool{}
	for _, p := range pkgs {
		ordered = append(ordered, byPath[p.ImportPath])
		keep[byPath[p.ImportPath].Path] = true
	}
	// Binaries of packages that are gone or lost their tests: never run, so not kept.
	old, err := filepath.Glob(filepath.Join(dir, "*", "*.test"))
	if err != nil {
		return nil, err
	}
	for _, f := range old {
		if !keep[f] {
			if err := os.Remove(f); err != nil {
				return nil, err
			}
		}
	}
	return ordered, nil
}

// Runner runs test binaries as `go test -json` runs them.
type Runner struct {
	// Test2JSON is cmd/test2json (`go tool -n test2json` prints where it is).
	Test2JSON string
	// Parallel is how many binaries run at once (go test's -p).
	Parallel int
	// Args are the flags every binary gets, e.g. -test.timeout=30m.
	Args []string
}

// Run runs bins, Parallel at a time, in their order, and writes one `go test -json` stream to
// out: the binaries' events as test2json writes them, and before each package's last event the
// line go test adds ("ok  \t<pkg>\t1.234s" or "FAIL\t<pkg>\t1.234s", followed here by the CPU
// the binary used). It returns how many packages failed.
func (r Runner) Run(ctx context.Context, bins []Binary, out io.Writer) (int, error) {
	var (
		mu     sync.Mutex
		failed int
		werr   error
		wg     sync.WaitGroup
		slots  = make(chan struct{}, max(r.Parallel, 1))
	)
	write := func(line []byte) {
		mu.Lock()
		defer mu.Unlock()
		if werr != nil {
			return
		}
		if _, err := out.Write(append(line, '\n')); err != nil {
			werr = err
		}
	}
	for _, b := range bins {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			return failed, ctx.Err()
		}
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			ok, err := r.runOne(ctx, b, write)
			mu.Lock()
			defer mu.Unlock()
			if err != nil && werr == nil {
				werr = fmt.Errorf("%s: %w", b.ImportPath, err)
			}
			if !ok {
				failed++
			}
		}()
	}
	wg.Wait()
	return failed, werr
}

// runOne runs one binary through test2json, passing its events to write; it reports whether
// the package passed.
func (r Runner) runOne(ctx context.Context, b Binary, write func([]byte)) (bool, error) {
	args := append([]string{"-t", "-p", b.ImportPath, b.Path, "-test.v=test2json", "-test.paniconexit0"}, r.Args...)
	cmd := exec.CommandContext(ctx, r.Test2JSON, args...)
	cmd.Dir = b.Dir
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return false, err
	}
	if err := cmd.Start(); err != nil {
		return false, err
	}
	var (
		passed bool
		end    []byte // the package's last event, held until the binary has exited
		secs   float64
	)
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for sc.Scan() {
		line := append([]byte(nil), sc.Bytes()...)
		var e event
		if json.Unmarshal(line, &e) == nil && e.Test == "" && (e.Action == "pass" || e.Action == "fail") {
			end, secs, passed = line, e.Elapsed, e.Action == "pass"
			continue
		}
		write(line)
	}
	scanErr := sc.Err()
	waitErr := cmd.Wait()
	var exit *exec.ExitError
	switch {
	case waitErr == nil:
	case errors.As(waitErr, &exit):
		// test2json exits 1 when the test binary failed, after writing its fail event.
		passed = false
	default:
		return false, waitErr
	}
	if end == nil {
		// No end event (test2json could not run the binary): the package failed, and the stream
		// says so, so that the table has its row.
		write(packageEvent(b.ImportPath, "output", fmt.Sprintf("FAIL\t%s\t(no result: %v)\n", b.ImportPath, waitErr)))
		write(packageEvent(b.ImportPath, "fail", ""))
		return false, scanErr
	}
	// go test's summary line, then the end event, as `go test -json` has them. The line also
	// says how much CPU the binary used, the API servers it started and waited for included
	// (the rusage of test2json's children): the unit phase is bound by CPU, so that is what a
	// package costs the others.
	word := "FAIL"
	if passed {
		word = "ok  "
	}
	ps := cmd.ProcessState
	cpu := (ps.UserTime() + ps.SystemTime()).Seconds()
	write(packageEvent(b.ImportPath, "output", fmt.Sprintf("%s\t%s\t%.3fs\t(cpu %.1fs)\n", word, b.ImportPath, secs, cpu)))
	write(end)
	return passed, scanErr
}

// packageEvent is a package's event in the `go test -json` stream.
func packageEvent(pkg, action, output string) []byte {
	line, err := json.Marshal(struct {
		Time    time.Time
		Action  string
		Package string
		Output  string `json:",omitempty"`
	}{time.Now(), action, pkg, output})
	if err != nil {
		panic(err) // strings and a time always marshal
	}
	return line
}
