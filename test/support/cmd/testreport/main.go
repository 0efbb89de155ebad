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

// Command testreport is the test command's reporter (hack/test.sh):
//
//	go test -json ./... | testreport echo RAW.json   # prints what go test would, keeps the stream
//	testreport table [-total SECONDS] [-prefix P] FILE...
//	testreport times RAW.json >TIMES        # how long each package ran
//	testreport run -bin DIR [-times TIMES] [-p N] [-parallel N] [-timeout D] <PACKAGES >RAW.json
//
// table prints the per-suite time table from `go test -json` streams (*.json), Ginkgo JSON
// reports (*.ginkgo.json) and step timings (*.steps), and exits 1 when a row failed or no test
// ran at all. run is `go test -json` for the test packages of stdin (one tab-separated
// "import-path dir name" line each): it builds their test binaries into DIR, where a binary
// that is up to date is not linked again, then runs them, N at a time, the longest first as
// TIMES (written by times after an earlier run; none yet is fine) has them. It exits 1 when a
// package failed.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/testreport"
)

func main() {
	if err := run(os.Args[1:], os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "testreport:", err)
		os.Exit(1)
	}
}

func run(args []string, stdin io.Reader, stdout io.Writer) error {
	if len(args) == 0 {
		return errors.New("usage: testreport echo RAW.json | table [-total SECONDS] [-prefix P] FILE... | times RAW.json | run -bin DIR [-times TIMES] [-p N] [-parallel N] [-timeout D]")
	}
	switch args[0] {
	case "echo":
		if len(args) != 2 {
			return errors.New("usage: testreport echo RAW.json")
		}
		raw, err := os.Create(args[1])
		if err != nil {
			return err
		}
		if err := testreport.Echo(stdin, raw, stdout); err != nil {
			_ = raw.Close()
			return err
		}
		return raw.Close()
	case "table":
		return table(args[1:], stdout)
	case "times":
		if len(args) != 2 {
			return errors.New("usage: testreport times RAW.json")
		}
		suites, err := readFile(args[1])
		if err != nil {
			return err
		}
		return testreport.WriteTimes(stdout, suites)
	case "run":
		return runTests(args[1:], stdin, stdout)
	default:
		return fmt.Errorf("unknown command %q (echo, table, times or run)", args[0])
	}
}

func table(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("table", flag.ContinueOnError)
	total := fs.Float64("total", 0, "wall time of the whole run, in seconds")
	prefix := fs.String("prefix", "", "module path prefix dropped from package names")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var rows []testreport.Suite
	for _, path := range fs.Args() {
		got, err := readFile(path)
		if err != nil {
			return err
		}
		rows = append(rows, got...)
	}
	if err := testreport.Table(stdout, *prefix, time.Duration(*total*float64(time.Second)), rows); err != nil {
		return err
	}
	if testreport.Failed(rows) {
		return errors.New("a suite or step failed (see the table)")
	}
	return testreport.Check(rows)
}

// runTests is the run command.
func runTests(args []string, stdin io.Reader, stdout io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	binDir := fs.String("bin", "", "where the test binaries are kept between runs")
	timesPath := fs.String("times", "", "how long each package took in an earlier run (testreport times)")
	parallel := fs.Int("p", 4, "test binaries run at once")
	timeout := fs.Duration("timeout", 30*time.Minute, "each test binary's -test.timeout")
	testParallel := fs.Int("parallel", 0, "each test binary's -test.parallel: parallel tests (t.Parallel) run at once in a binary (0: as many as GOMAXPROCS)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *binDir == "" || fs.NArg() != 0 {
		return errors.New("usage: testreport run -bin DIR [-times TIMES] [-p N] [-parallel N] [-timeout D] <PACKAGES")
	}
	pkgs, err := readPackages(stdin)
	if err != nil {
		return err
	}
	times, err := readTimes(*timesPath)
	if err != nil {
		return err
	}
	pkgs = orderPackages(pkgs, times)

	gobin, err := exec.LookPath("go")
	if err != nil {
		return err
	}
	ctx := context.Background()
	test2json, err := exec.CommandContext(ctx, gobin, "tool", "-n", "test2json").Output()
	if err != nil {
		return fmt.Errorf("go tool -n test2json: %w", err)
	}
	dir, release, err := lockBinDir(*binDir)
	if err != nil {
		return err
	}
	defer release()

	bins, err := testreport.Build(ctx, gobin, dir, pkgs, stdout)
	if err != nil {
		return err
	}
	r := testreport.Runner{
		Test2JSON: strings.TrimSpace(string(test2json)),
		Parallel:  *parallel,
		Args:      []string{"-test.timeout=" + timeout.String()},
	}
	if *testParallel > 0 {
		r.Args = append(r.Args, fmt.Sprintf("-test.parallel=%d", *testParallel))
	}
	failed, err := r.Run(ctx, bins, stdout)
	if err != nil {
		return err
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d test packages failed", failed, len(bins))
	}
	return nil
}

// readPackages reads "import-path<TAB>dir<TAB>name" lines.
func readPackages(r io.Reader) ([]testreport.Package, error) {
	var pkgs []testreport.Package
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		f := strings.Split(sc.Text(), "\t")
		if len(f) != 3 {
			return nil, fmt.Errorf("%q: want \"import-path<TAB>dir<TAB>name\"", sc.Text())
		}
		pkgs = append(pkgs, testreport.Package{ImportPath: f[0], Dir: f[1], Name: f[2]})
	}
	return pkgs, sc.Err()
}

// readTimes reads a times file; one that does not exist (the first run) is empty.
func readTimes(path string) (map[string]time.Duration, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Open(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, err
	}
	defer f.Close()
	return testreport.ReadTimes(f)
}

func orderPackages(pkgs []testreport.Package, times map[string]time.Duration) []testreport.Package {
	byPath := make(map[string]testreport.Package, len(pkgs))
	paths := make([]string, 0, len(pkgs))
	for _, p := range pkgs {
		byPath[p.ImportPath] = p
		paths = append(paths, p.ImportPath)
	}
	out := make([]testreport.Package, 0, len(pkgs))
	for _, p := range testreport.Order(paths, times) {
		out = append(out, byPath[p])
	}
	return out
}

// lockBinDir locks dir for this run, so that two runs on one machine (CI and a person's) do not
// link the same binaries at once; when another run holds it, this one builds in a directory of
// its own, removed at the end.
func lockBinDir(dir string) (string, func(), error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return "", nil, err
	}
	lock, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return "", nil, err
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err == nil {
		return dir, func() { _ = lock.Close() }, nil
	}
	_ = lock.Close()
	own, err := os.MkdirTemp("", "testreport-bin-")
	if err != nil {
		return "", nil, err
	}
	fmt.Fprintf(os.Stderr, "testreport: %s is in use by another run: linking every test binary in %s\n", dir, own)
	return own, func() { _ = os.RemoveAll(own) }, nil
}

func readFile(path string) ([]testreport.Suite, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	switch {
	case strings.HasSuffix(path, ".steps"):
		return testreport.ReadSteps(f)
	case strings.HasSuffix(path, ".ginkgo.json"):
		suites, err := testreport.ReadGinkgo(f)
		// Ginkgo names a suite by its absolute folder: show it from the working directory.
		if wd, werr := os.Getwd(); werr == nil {
			for i := range suites {
				if rel, rerr := filepath.Rel(wd, suites[i].Name); rerr == nil && !strings.HasPrefix(rel, "..") {
					suites[i].Name = rel + " (ginkgo)"
				}
			}
		}
		return suites, err
	case strings.HasSuffix(path, ".json"):
		return testreport.ReadGoTest(f)
	default:
		return nil, fmt.Errorf("%s: not a .steps, .ginkgo.json or .json file", path)
	}
}
