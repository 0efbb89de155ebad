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

// Package release_test runs `make release` as a release does, for this machine's platform only
// (the release builds linux/amd64 and linux/arm64; cross-compiling the second one from a cold
// cache takes minutes on 2 cores, and the make target builds every platform the same way), and
// checks that hack/verify-release.sh accepts what it wrote and refuses it once it is altered.
package release_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/testenv"
)

const (
	version = "v0.1.0"
	// registry is not the default one, so that the test sees IMAGE_REGISTRY reach the components.
	registry = "registry.example.com/capoa-release-test"
)

// run runs name with args in the repository with a clean make environment plus env; it returns
// the combined output and whether the command succeeded.
func run(t *testing.T, root string, env []string, name string, args ...string) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = root
	for _, kv := range os.Environ() {
		switch strings.SplitN(kv, "=", 2)[0] {
		// What an outer make (make test) or a shell could set that would change the release.
		case "MAKEFLAGS", "MAKELEVEL", "MFLAGS", "RELEASE_VERSION", "VERSION", "IMAGE_TAG", "IMAGE_REGISTRY",
			"LDFLAGS", "PLATFORMS", "RELEASE_PLATFORMS", "RELEASE_DIR":
			continue
		}
		cmd.Env = append(cmd.Env, kv)
	}
	cmd.Env = append(cmd.Env, env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err == nil
}

func TestRelease(t *testing.T) {
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "out")
	platform := "linux/" + runtime.GOARCH
	release := func(args ...string) (string, bool) {
		return run(t, root, nil, "make", append([]string{"--no-print-directory", "release", "RELEASE_DIR=" + dir,
			"PLATFORMS=" + platform, "IMAGE_REGISTRY=" + registry}, args...)...)
	}

	t.Run("refuses a version it cannot release, before building", func(t *testing.T) {
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"RELEASE_VERSION="}, "no release version"},
			{[]string{"RELEASE_VERSION=0.1.0"}, "is not a semantic version"},
			{[]string{"RELEASE_VERSION=v0.1"}, "is not a semantic version"},
			{[]string{"RELEASE_VERSION=v9.9.0"}, "has no release series 9.9"},
			{[]string{"RELEASE_VERSION=" + version, "VERSION=v0.0.9"}, "one version throughout"},
			{[]string{"RELEASE_VERSION=" + version, "IMAGE_TAG=latest"}, "one version throughout"},
		} {
			out, ok := release(tc.args...)
			if ok || !strings.Contains(out, tc.want) {
				t.Errorf("make release %s: succeeded=%v, want a failure saying %q:\n%s", strings.Join(tc.args, " "), ok, tc.want, out)
			}
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("a refused release wrote %s (%v)", dir, err)
		}
	})

	start := time.Now()
	out, ok := release("RELEASE_VERSION=" + version)
	if !ok {
		t.Fatalf("make release RELEASE_VERSION=%s PLATFORMS=%s failed:\n%s", version, platform, out)
	}
	t.Logf("make release RELEASE_VERSION=%s PLATFORMS=%s: %s", version, platform, time.Since(start).Round(time.Second))
	for _, want := range []string{
		registry + "/capoa-infrastructure:" + version, registry + "/capoa-bootstrap:" + version,
		registry + "/capoa-controlplane:" + version, `"Starting"`, `version="` + version + `"`,
		"carries " + version + " throughout",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("make release's output lacks %q:\n%s", want, out)
		}
	}
	if t.Failed() {
		return
	}

	// verify-release.sh must refuse the release once it no longer has one version throughout.
	verify := func(version string, env ...string) (string, bool) {
		return run(t, root, append([]string{"IMAGE_REGISTRY=" + registry, "RELEASE_PLATFORMS=" + platform}, env...),
			filepath.Join(root, "hack/verify-release.sh"), dir, version)
	}
	if out, ok := verify(version); !ok {
		t.Fatalf("verify-release.sh refuses what make release wrote:\n%s", out)
	}
	// The folder as a path relative to the repository (make release RELEASE_DIR=out gives one).
	rel, err := filepath.Rel(root, dir)
	if err != nil {
		t.Fatal(err)
	}
	if out, ok := run(t, root, []string{"IMAGE_REGISTRY=" + registry, "RELEASE_PLATFORMS=" + platform},
		filepath.Join(root, "hack/verify-release.sh"), rel, version); !ok {
		t.Errorf("verify-release.sh %s %s refuses what make release wrote:\n%s", rel, version, out)
	}
	bootstrap := filepath.Join(dir, "bootstrap-components.yaml")
	manager := filepath.Join(dir, "bin", "infrastructure-manager-linux-"+runtime.GOARCH)
	for _, tc := range []struct {
		name, version string
		env           []string
		// alter changes dir and returns what undoes it.
		alter func(t *testing.T) func()
		want  string
	}{
		{name: "another version", version: "v0.1.1", want: "runs image " + registry + "/capoa-infrastructure:" + version},
		{name: "another series", version: "v0.2.0", want: "no release series 0.2"},
		{name: "another registry", version: version, env: []string{"IMAGE_REGISTRY=quay.io/someone"}, want: "runs image"},
		{name: "an image of another tag", version: version, want: "capoa-bootstrap:v0.0.9, not",
			alter: replaceIn(bootstrap, ":"+version, ":v0.0.9")},
		{name: "a repository folder of another version", version: version, want: "instead of " + version + " alone",
			alter: mkdir(filepath.Join(dir, "repository", "control-plane-openshift-assisted", "v0.0.9"))},
		{name: "a manager for another platform", version: version, env: []string{"RELEASE_PLATFORMS=linux/riscv64"},
			want: "manager-linux-riscv64 is missing"},
		{name: "a manager of another version", version: version, want: "reports another version",
			alter: replaceIn(manager, version, "v9.9.9")},
	} {
		t.Run("refuses "+tc.name, func(t *testing.T) {
			if tc.alter != nil {
				defer tc.alter(t)()
			}
			out, ok := verify(tc.version, tc.env...)
			if ok || !strings.Contains(out, tc.want) {
				t.Errorf("verify-release.sh %s: succeeded=%v, want a failure saying %q:\n%s", tc.version, ok, tc.want, out)
			}
		})
	}
	if out, ok := verify(version); !ok {
		t.Errorf("verify-release.sh refuses the release once its alterations are undone:\n%s", out)
	}
}

// replaceIn replaces from by to (of the same length) in file, keeping its mode.
func replaceIn(file, from, to string) func(t *testing.T) func() {
	return func(t *testing.T) func() {
		t.Helper()
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(data, []byte(from)) || len(from) != len(to) {
			t.Fatalf("%s has no %q to replace by %q", file, from, to)
		}
		write := func(b []byte) {
			info, err := os.Stat(file)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, b, info.Mode()); err != nil {
				t.Fatal(err)
			}
		}
		write(bytes.ReplaceAll(data, []byte(from), []byte(to)))
		return func() { write(data) }
	}
}

func mkdir(dir string) func(t *testing.T) func() {
	return func(t *testing.T) func() {
		t.Helper()
		if err := os.Mkdir(dir, 0o750); err != nil {
			t.Fatal(err)
		}
		return func() { _ = os.Remove(dir) }
	}
}
