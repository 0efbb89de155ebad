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

package controllers

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
)

// runScript runs the script at path of the config's install Ignition under bash, with a fake
// kubectl that exits with kubectlExit, and returns its error and output.
func runScript(t *testing.T, config *bootstrapv1.OpenshiftAssistedConfig, path string, kubectlExit string) (string, error) {
	t.Helper()
	g := NewWithT(t)
	raw, err := installIgnitionOverride(config, "")
	g.Expect(err).NotTo(HaveOccurred())
	var ign ignitionConfig
	g.Expect(json.Unmarshal([]byte(raw), &ign)).To(Succeed())
	dir := t.TempDir()
	script := filepath.Join(dir, "script.sh")
	g.Expect(os.WriteFile(script, []byte(scriptOf(g, ign, path)), 0o600)).To(Succeed()) // run by bash, not executed
	bin := filepath.Join(dir, "bin")
	g.Expect(os.Mkdir(bin, 0o700)).To(Succeed())
	kubectl := filepath.Join(bin, "kubectl")
	g.Expect(os.WriteFile(kubectl, []byte("#!/bin/bash\nexit "+kubectlExit+"\n"), 0o600)).To(Succeed())
	g.Expect(os.Chmod(kubectl, 0o700)).To(Succeed()) //nolint:gosec // G302: the fake kubectl must be executable
	cmd := exec.CommandContext(context.Background(), "bash", script)
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "CAPOA_POST_BOOTSTRAP_TIMEOUT=1", "CAPOA_POST_BOOTSTRAP_INTERVAL=0.1")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestBootstrapCommandsRunOnce runs the generated scripts as the host would: the commands run
// in order (an empty one runs nothing) and the sentinel is written; a failing command stops the script without the
// sentinel (the unit runs again at the next boot); the post-bootstrap script waits for the API
// server and gives up without running the commands when it never answers.
func TestBootstrapCommandsRunOnce(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	g := NewWithT(t)
	sentinels, out := t.TempDir(), filepath.Join(t.TempDir(), "out")
	config := &bootstrapv1.OpenshiftAssistedConfig{Spec: bootstrapv1.OpenshiftAssistedConfigSpec{
		// An empty command, which upstream's schema and ours accept, runs nothing.
		PreBootstrapCommands:        []string{"echo one >> " + out, "", "echo two | tr a-z A-Z >> " + out},
		PostBootstrapCommands:       []string{"echo three >> " + out},
		BootstrapCommandSentinelDir: sentinels + "/capoa",
	}}

	output, err := runScript(t, config, preBootstrapScript, "0")
	g.Expect(err).NotTo(HaveOccurred(), output)
	g.Expect(os.ReadFile(out)).To(BeEquivalentTo("one\nTWO\n"))
	g.Expect(filepath.Join(sentinels, "capoa", "pre-bootstrap.done")).To(BeAnExistingFile())

	output, err = runScript(t, config, postBootstrapScript, "1")
	g.Expect(err).To(HaveOccurred(), "the API server never answers")
	g.Expect(output).To(ContainSubstring("the API server is not ready; the commands run at the next boot"))
	g.Expect(os.ReadFile(out)).To(BeEquivalentTo("one\nTWO\n"), "the post commands did not run")
	g.Expect(filepath.Join(sentinels, "capoa", "post-bootstrap.done")).NotTo(BeAnExistingFile())

	output, err = runScript(t, config, postBootstrapScript, "0")
	g.Expect(err).NotTo(HaveOccurred(), output)
	g.Expect(os.ReadFile(out)).To(BeEquivalentTo("one\nTWO\nthree\n"))
	g.Expect(filepath.Join(sentinels, "capoa", "post-bootstrap.done")).To(BeAnExistingFile())

	failing := config.DeepCopy()
	failing.Spec.BootstrapCommandSentinelDir = sentinels + "/failing"
	failing.Spec.PreBootstrapCommands = []string{"false", "echo never >> " + out}
	output, err = runScript(t, failing, preBootstrapScript, "0")
	g.Expect(err).To(HaveOccurred(), output)
	g.Expect(os.ReadFile(out)).NotTo(ContainSubstring("never"))
	g.Expect(filepath.Join(sentinels, "failing", "pre-bootstrap.done")).NotTo(BeAnExistingFile())
}

// TestPostBootstrapKubeconfigPathIsOneWord: the post-bootstrap script hands kubectl the
// kubeconfig path as written, whatever it holds that the schema accepts (a single quote, a
// space, shell syntax inside the quotes).
func TestPostBootstrapKubeconfigPathIsOneWord(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	path := "/etc/kube config/it's; $(true) & *.kubeconfig"
	config := &bootstrapv1.OpenshiftAssistedConfig{Spec: bootstrapv1.OpenshiftAssistedConfigSpec{
		PostBootstrapCommands: []string{"true"}, BootstrapCommandSentinelDir: dir, PostBootstrapKubeconfigPath: path}}
	raw, err := installIgnitionOverride(config, "")
	g.Expect(err).NotTo(HaveOccurred())
	var ign ignitionConfig
	g.Expect(json.Unmarshal([]byte(raw), &ign)).To(Succeed())
	script := filepath.Join(dir, "script.sh")
	g.Expect(os.WriteFile(script, []byte(scriptOf(g, ign, postBootstrapScript)), 0o600)).To(Succeed())
	bin := filepath.Join(dir, "bin")
	g.Expect(os.Mkdir(bin, 0o700)).To(Succeed())
	log := filepath.Join(dir, "kubectl.log")
	// The fake kubectl records its first argument, --kubeconfig=<path>, one per line.
	g.Expect(os.WriteFile(filepath.Join(bin, "kubectl"), []byte("#!/bin/bash\nprintf '%s\\n' \"$1\" >> \"$KUBECTL_LOG\"\n"), 0o600)).To(Succeed())
	g.Expect(os.Chmod(filepath.Join(bin, "kubectl"), 0o700)).To(Succeed()) //nolint:gosec // G302: the fake kubectl must be executable
	cmd := exec.CommandContext(context.Background(), "bash", script)
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "KUBECTL_LOG="+log)
	out, err := cmd.CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), string(out))
	got, err := os.ReadFile(log)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(got)).To(Equal("--kubeconfig=" + path + "\n--kubeconfig=" + path + "\n"))
	g.Expect(filepath.Join(dir, "post-bootstrap.done")).To(BeAnExistingFile())
}
