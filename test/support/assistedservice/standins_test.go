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
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// oc runs the oc stand-in with args and returns its output and whether it succeeded.
func oc(t *testing.T, args ...string) (string, bool) {
	t.Helper()
	dir := t.TempDir()
	if err := writeStandIns(dir); err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(t.Context(), filepath.Join(dir, "oc"), args...).CombinedOutput()
	return strings.TrimSpace(string(out)), err == nil
}

// TestOCStandInGivesComponentPullSpecs: the pull spec of a release's component is in the release's
// repository (a registry port kept, the tag or digest dropped), the same for the same release and
// component, another for another component.
func TestOCStandInGivesComponentPullSpecs(t *testing.T) {
	mco, ok := oc(t, "adm", "release", "info", "--image-for=machine-config-operator", "--insecure=false", "mirror.lab:5000/ocp/release:4.14.0-x86_64", "--registry-config=/tmp/auth.json")
	if !ok || !strings.HasPrefix(mco, "mirror.lab:5000/ocp/release@sha256:") || len(mco) != len("mirror.lab:5000/ocp/release@sha256:")+64 {
		t.Fatalf("machine-config-operator: %q (ok %v)", mco, ok)
	}
	again, _ := oc(t, "adm", "release", "info", "--image-for=machine-config-operator", "--insecure=true", "mirror.lab:5000/ocp/release:4.14.0-x86_64")
	if again != mco {
		t.Errorf("the same component of the same release: %q, then %q", mco, again)
	}
	mg, _ := oc(t, "adm", "release", "info", "--image-for=must-gather", "--insecure=false", "quay.io/openshift-release-dev/ocp-release@sha256:0123")
	if !strings.HasPrefix(mg, "quay.io/openshift-release-dev/ocp-release@sha256:") || mg == mco {
		t.Errorf("must-gather: %q", mg)
	}
}

// TestOCStandInRefusesWhatNeedsARegistry: what would read a registry fails and says what to do.
func TestOCStandInRefusesWhatNeedsARegistry(t *testing.T) {
	for _, args := range [][]string{
		{"adm", "release", "info", "-o", "template", "--template", "{{.metadata.version}}", "--insecure=false", "quay.io/x/release:4.14"},
		{"image", "info", "--output", "json", "quay.io/x/release:4.14"},
		{"adm", "release", "extract", "--command=openshift-install", "--to=/tmp/x", "quay.io/x/release:4.14"},
	} {
		out, ok := oc(t, args...)
		if ok || !strings.Contains(out, "RELEASE_IMAGES") {
			t.Errorf("oc %v: %q (ok %v), want a failure naming RELEASE_IMAGES", args, out, ok)
		}
	}
}

// TestInNamespaceFilesMountsTheServiceAccount: the command sees the service account's files where
// a pod sees them, and the machine's /run is left as it was.
func TestInNamespaceFilesMountsTheServiceAccount(t *testing.T) {
	sa := t.TempDir()
	if err := (&serviceAccount{token: "tok", caData: []byte("ca")}).writeFiles(sa, "lab-ns"); err != nil {
		t.Fatal(err)
	}
	cmd := inNamespaceFiles(sa, "cat", "/var/run/secrets/kubernetes.io/serviceaccount/namespace", "/var/run/secrets/kubernetes.io/serviceaccount/token")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if string(out) != "lab-nstok" {
		t.Errorf("the command read %q, want the namespace (no newline) and the token", out)
	}
	if _, err := os.Stat("/run/secrets/kubernetes.io/serviceaccount/token"); err == nil {
		t.Error("the machine's /run got the service account's files")
	}
}
