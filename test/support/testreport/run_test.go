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
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestBuckets(t *testing.T) {
	pkgs := []Package{
		{ImportPath: "m/a/controllers", Name: "controllers"},
		{ImportPath: "m/a/crd", Name: "crd"},
		{ImportPath: "m/b/controllers", Name: "controllers"},
		{ImportPath: "m/c/controllers", Name: "controllers"},
		{ImportPath: "m/b/crd", Name: "crd"},
	}
	got := Buckets(pkgs)
	want := [][]string{
		{"m/a/controllers", "m/a/crd"},
		{"m/b/controllers", "m/b/crd"},
		{"m/c/controllers"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d buckets, want %d: %v", len(got), len(want), got)
	}
	for i := range want {
		var paths []string
		for _, p := range got[i] {
			paths = append(paths, p.ImportPath)
		}
		if strings.Join(paths, " ") != strings.Join(want[i], " ") {
			t.Errorf("bucket %d: got %v, want %v", i, paths, want[i])
		}
	}
}

// goTools returns the go command and test2json, or skips the test without a Go toolchain.
func goTools(t *testing.T) (gobin, test2json string) {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	out, err := exec.CommandContext(t.Context(), gobin, "tool", "-n", "test2json").Output()
	if err != nil {
		t.Fatalf("go tool -n test2json: %v", err)
	}
	return gobin, strings.TrimSpace(string(out))
}

// TestRunStream: the stream is the one go test -json writes (the summary line before each
// package's end), a failed package is counted, and a binary that cannot run still gets its
// failed row.
func TestRunStream(t *testing.T) {
	_, test2json := goTools(t)
	dir := t.TempDir()
	script := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o700); err != nil { //nolint:gosec // a test binary stand-in must be executable
			t.Fatal(err)
		}
		return p
	}
	pass := script("pass.test", "pwd >&2\necho '=== RUN   TestA'\necho '--- PASS: TestA (0.00s)'\necho PASS\n")
	fail := script("fail.test", "echo '=== RUN   TestB'\necho '--- FAIL: TestB (0.00s)'\necho FAIL\nexit 1\n")
	bins := []Binary{
		{Package: Package{ImportPath: "m/pass", Dir: dir}, Path: pass},
		{Package: Package{ImportPath: "m/fail", Dir: dir}, Path: fail},
		{Package: Package{ImportPath: "m/missing", Dir: dir}, Path: filepath.Join(dir, "missing.test")},
	}
	var out bytes.Buffer
	r := Runner{Test2JSON: test2json, Parallel: 2}
	failed, err := r.Run(context.Background(), bins, &out)
	if err != nil {
		t.Fatal(err)
	}
	if failed != 2 {
		t.Errorf("failed = %d, want 2", failed)
	}
	suites, err := ReadGoTest(bytes.NewReader(out.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	results := map[string]string{}
	for _, s := range suites {
		results[s.Name] = s.Result
	}
	for pkg, want := range map[string]string{"m/pass": "ok", "m/fail": "FAIL", "m/missing": "FAIL"} {
		if results[pkg] != want {
			t.Errorf("%s: result %q, want %q (stream:\n%s)", pkg, results[pkg], want, out.String())
		}
	}
	var echoed bytes.Buffer
	if err := Echo(bytes.NewReader(out.Bytes()), &bytes.Buffer{}, &echoed); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(echoed.String(), "ok  \tm/pass\t") || !strings.Contains(echoed.String(), "FAIL\tm/fail\t") {
		t.Errorf("go test's summary lines are missing:\n%s", echoed.String())
	}
}

// TestBuildDoesNotLinkAgain: what the binary directory is for. A second Build of unchanged
// packages leaves the binaries as they are, and two packages of one name both get one.
func TestBuildDoesNotLinkAgain(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles a module")
	}
	gobin, _ := goTools(t)
	mod := t.TempDir()
	files := map[string]string{
		"go.mod":        "module example.com/m\n\ngo 1.22\n",
		"a/x/x.go":      "package x\n\nfunc X() int { return 1 }\n",
		"a/x/x_test.go": "package x\n\nimport \"testing\"\n\nfunc TestX(t *testing.T) { _ = X() }\n",
		"b/x/x.go":      "package x\n\nfunc Y() int { return 2 }\n",
		"b/x/x_test.go": "package x\n\nimport \"testing\"\n\nfunc TestY(t *testing.T) { _ = Y() }\n",
	}
	for name, body := range files {
		p := filepath.Join(mod, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(mod)
	t.Setenv("GOWORK", "off")
	// -x: the go command prints what it runs, the linker included.
	t.Setenv("GOFLAGS", "-mod=mod -x")
	pkgs := []Package{
		{ImportPath: "example.com/m/a/x", Dir: filepath.Join(mod, "a/x"), Name: "x"},
		{ImportPath: "example.com/m/b/x", Dir: filepath.Join(mod, "b/x"), Name: "x"},
	}
	binDir := filepath.Join(t.TempDir(), "bin")
	var log bytes.Buffer
	first, err := Build(context.Background(), gobin, binDir, pkgs, &log)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if len(first) != 2 || first[0].Path == first[1].Path {
		t.Fatalf("binaries: %+v", first)
	}
	if links := strings.Count(log.String(), "/link "); links != 2 {
		t.Fatalf("the first build linked %d binaries, want 2:\n%s", links, log.String())
	}
	// A stale binary of a package that is gone is removed.
	stale := filepath.Join(binDir, "0", "gone.test")
	if err := os.WriteFile(stale, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	log.Reset()
	second, err := Build(context.Background(), gobin, binDir, pkgs, &log)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if len(second) != 2 {
		t.Fatalf("binaries: %+v", second)
	}
	if strings.Contains(log.String(), "/link ") {
		t.Errorf("the second build linked again though nothing changed:\n%s", log.String())
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the stale binary is still there: %v", err)
	}
}
