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

package clusterctl_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"
	clusterctlconfig "sigs.k8s.io/cluster-api/cmd/clusterctl/client/config"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/testenv"
)

// The markers a block of docs/getting-started.md may carry on the line before it.
const (
	// guideOnlineMarker: the block needs the internet (a release on GitHub); it is checked for its
	// form, not run.
	guideOnlineMarker = "<!-- getting-started-test: online -->"
	// guideSkipPrefix: "<!-- getting-started-test: skip: <why> -->"; the block is not run, and the
	// reason is logged.
	guideSkipPrefix = "<!-- getting-started-test: skip:"
)

// guideBlock is a fenced code block of the guide.
type guideBlock struct {
	line   int    // of the opening fence
	lang   string // sh, yaml, ...
	marker string // the marker comment before it, if any
	body   string
}

// guideBlocks reads the fenced code blocks of a Markdown file.
func guideBlocks(path string) ([]guideBlock, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	var (
		blocks  []guideBlock
		current *guideBlock
		body    strings.Builder
		prev    string // the last non-empty line outside a block
	)
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case current == nil && strings.HasPrefix(line, "```"):
			current = &guideBlock{line: n, lang: strings.TrimPrefix(line, "```")}
			if strings.HasPrefix(prev, "<!-- getting-started-test:") {
				current.marker = prev
			}
			body.Reset()
		case current != nil && line == "```":
			current.body = body.String()
			blocks = append(blocks, *current)
			current, prev = nil, ""
		case current != nil:
			body.WriteString(line + "\n")
		case strings.TrimSpace(line) != "":
			prev = strings.TrimSpace(line)
		}
	}
	if current != nil {
		return nil, fmt.Errorf("%s: the block opened on line %d is never closed", path, current.line)
	}
	return blocks, sc.Err()
}

// TestGettingStartedGuideRunsVerbatim runs every sh block of docs/getting-started.md, in order and
// as written, in one bash, the way a user pastes them: with the real clusterctl binary (the
// version this project pins, built by hack/ensure-tool.sh), the real kubectl (built with the
// envtest binaries by hack/ensure-envtest.sh) and the real `make release-manifests`, against an
// API server of its own with the CRDs of the services the guide's section 1 installs (Hive,
// assisted-service, BMO). HOME is a fresh folder, so clusterctl finds only the configuration the
// guide tells the user to write, and nothing reaches the internet: this is the offline path.
// The user's own inputs (pull-secret.json, ~/.ssh/id_ed25519.pub) are written first.
//
// The API server runs no Pods. What Pods would do is done here instead, and only that:
// webhook configurations are deleted as they appear, because their Services have no endpoints
// (cert-manager's, which clusterctl init installs from the local repository, and each
// provider's). Nothing else is faked: clusterctl init waits for cert-manager's API by creating a
// test Issuer and Certificate, which the API server stores.
func TestGettingStartedGuideRunsVerbatim(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()

	blocks, err := guideBlocks(filepath.Join(repoRoot, "docs", "getting-started.md"))
	g.Expect(err).NotTo(HaveOccurred())

	// The shell, its PATH and HOME.
	work := t.TempDir()
	home := filepath.Join(work, "home")
	bin := filepath.Join(work, "bin")
	for _, d := range []string{filepath.Join(home, ".ssh"), bin} {
		g.Expect(os.MkdirAll(d, 0o700)).To(Succeed())
	}
	g.Expect(os.WriteFile(filepath.Join(home, ".ssh", "id_ed25519.pub"), []byte(templateVariables["SSH_AUTHORIZED_KEY"]+"\n"), 0o600)).To(Succeed())
	g.Expect(os.WriteFile(filepath.Join(work, "pull-secret.json"),
		[]byte(`{"auths":{"quay.io":{"auth":"dXNlcjpwYXNz","email":"user@example.com"}}}`), 0o600)).To(Succeed())

	clusterctlBin := toolPath(g, "hack/ensure-tool.sh", "clusterctl")
	kubectlBin := filepath.Join(toolPath(g, "hack/ensure-envtest.sh"), "kubectl")
	makeBin, err := exec.LookPath("make")
	g.Expect(err).NotTo(HaveOccurred(), "make is needed to run the guide")
	g.Expect(os.Symlink(clusterctlBin, filepath.Join(bin, "clusterctl"))).To(Succeed())
	g.Expect(os.Symlink(kubectlBin, filepath.Join(bin, "kubectl"))).To(Succeed())
	// The guide runs `make release-manifests` in a checkout; here the shell's folder is not one, so
	// make runs the same target in the repository with the output in the shell's folder.
	makeShim := fmt.Sprintf("#!/usr/bin/env bash\nexec %q -C %q \"$@\" RELEASE_DIR=\"$PWD/out\" RELEASE_VERSION=%s\n",
		makeBin, repoRoot, releaseVersion)
	g.Expect(os.WriteFile(filepath.Join(bin, "make"), []byte(makeShim), 0o700)).To(Succeed()) //nolint:gosec // an executable shim

	// An API server of its own: clusterctl init installs into it.
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, clusterctlv1.AddToScheme,
		admissionregistrationv1.AddToScheme,
	} {
		g.Expect(add(scheme)).To(Succeed())
	}
	guideEnv, err := testenv.Start(scheme)
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { g.Expect(guideEnv.Stop()).To(Succeed()) }()
	kubeconfig := filepath.Join(work, "kubeconfig")
	g.Expect(guideEnv.WriteKubeconfig(kubeconfig)).To(Succeed())

	stopRemover := removeWebhookConfigurations(ctx, guideEnv.Client)
	defer stopRemover()

	// The script: every sh block in order, each announced, in one shell.
	var script strings.Builder
	script.WriteString("set -euo pipefail\n")
	ran, online := 0, 0
	for _, b := range blocks {
		switch {
		case b.marker == guideOnlineMarker:
			online++
			checkOnlineProviders(t, g, b)
			continue
		case strings.HasPrefix(b.marker, guideSkipPrefix):
			t.Logf("not run: the block on line %d (%s)", b.line, strings.TrimSuffix(strings.TrimPrefix(b.marker, guideSkipPrefix), "-->"))
			continue
		case b.marker != "":
			t.Fatalf("unknown marker %q before the block on line %d", b.marker, b.line)
		case b.lang != "sh":
			continue
		}
		ran++
		fmt.Fprintf(&script, "echo '### getting-started.md line %d'\n%s", b.line, b.body)
	}
	g.Expect(ran).To(BeNumerically(">=", 6), "the guide's sh blocks")
	g.Expect(online).To(Equal(1), "the online providers block")

	cmd := exec.CommandContext(ctx, "bash", "-c", script.String())
	cmd.Dir = work
	cmd.Env = guideShellEnv(g, home, bin, kubeconfig)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("%d sh blocks of the guide ran in %s", ran, time.Since(start).Round(time.Millisecond))
	g.Expect(err).NotTo(HaveOccurred(), "the guide's commands failed:\n%s", out)
	output := string(out)

	// clusterctl init list-images, before cert-manager was installed: the images of everything,
	// cert-manager's included, read from the local repository (without it, clusterctl asks GitHub).
	for _, image := range []string{
		"quay.io/jetstack/cert-manager-controller:" + clusterctlconfig.CertManagerDefaultVersion,
		"quay.io/openshift-assisted/capoa-infrastructure:" + releaseVersion,
		"quay.io/openshift-assisted/capoa-controlplane:" + releaseVersion,
		"registry.k8s.io/cluster-api/cluster-api-controller:v1.13.4",
	} {
		g.Expect(output).To(ContainSubstring(image+"\n"), "clusterctl init list-images")
	}

	// clusterctl init: cert-manager from the local repository, then the five providers.
	var deployments appsv1.DeploymentList
	g.Expect(guideEnv.Client.List(ctx, &deployments, client.InNamespace("cert-manager"))).To(Succeed())
	g.Expect(deployments.Items).To(HaveLen(3), "cert-manager's controller, cainjector and webhook")
	g.Expect(deployments.Items[0].Annotations).To(HaveKeyWithValue("cert-manager.clusterctl.cluster.x-k8s.io/version",
		clusterctlconfig.CertManagerDefaultVersion))
	var inventory clusterctlv1.ProviderList
	g.Expect(guideEnv.Client.List(ctx, &inventory)).To(Succeed())
	var installed []string
	for _, p := range inventory.Items {
		installed = append(installed, p.Type+"/"+p.ProviderName+"@"+p.Version)
	}
	g.Expect(installed).To(ConsistOf("CoreProvider/cluster-api@v1.13.4", "InfrastructureProvider/metal3@v1.13.2",
		"InfrastructureProvider/agent@"+releaseVersion, "BootstrapProvider/openshift-assisted@"+releaseVersion,
		"ControlPlaneProvider/openshift-assisted@"+releaseVersion))

	// The cluster the guide generated and applied, and what later sections did to it.
	for _, kind := range []string{"Cluster", "Metal3Cluster", "OpenshiftAssistedControlPlane", "MachineDeployment"} {
		g.Expect(output).To(MatchRegexp(`(?i)`+kind+`\.[a-z0-9.-]+/ocp1(-[a-z0-9-]+)? created`), "kubectl apply created the %s", kind)
	}
	cp := &unstructured.Unstructured{}
	cp.SetGroupVersionKind(schema.GroupVersionKind{Group: "controlplane.cluster.x-k8s.io", Version: "v1alpha4", Kind: "OpenshiftAssistedControlPlane"})
	g.Expect(guideEnv.Client.Get(ctx, client.ObjectKey{Namespace: "clusters", Name: "ocp1"}, cp)).To(Succeed())
	replicas, _, _ := unstructured.NestedInt64(cp.Object, "spec", "replicas")
	g.Expect(replicas).To(BeEquivalentTo(3))
	version, _, _ := unstructured.NestedString(cp.Object, "spec", "distributionVersion")
	g.Expect(version).To(Equal("4.17.5"), "section 5's upgrade patch")
	g.Expect(output).To(ContainSubstring("Cluster/ocp1"), "clusterctl describe cluster")
	secret := &corev1.Secret{}
	g.Expect(guideEnv.Client.Get(ctx, client.ObjectKey{Namespace: "clusters", Name: "pull-secret"}, secret)).To(Succeed())
	g.Expect(secret.Type).To(Equal(corev1.SecretTypeDockerConfigJson))
	g.Expect(secret.Labels).To(HaveKey(clusterctlv1.ClusterctlMoveLabel), "section 4 labels the pull secret for clusterctl move")
	crd := &apiextensionsv1.CustomResourceDefinition{}
	g.Expect(guideEnv.Client.Get(ctx, client.ObjectKey{Name: "agents.agent-install.openshift.io"}, crd)).To(Succeed())
	g.Expect(crd.Labels).To(HaveKey(clusterctlv1.ClusterctlLabel), "section 4 labels the CRDs clusterctl move must find")
}

// toolPath runs one of the repository's ensure scripts (with args) and returns the path it prints.
func toolPath(g Gomega, script string, args ...string) string {
	cmd := exec.CommandContext(context.Background(), filepath.Join(repoRoot, script), args...)
	cmd.Dir = repoRoot
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	g.Expect(err).NotTo(HaveOccurred(), "%s %v: %s", script, args, stderr.String())
	return strings.TrimSpace(string(out))
}

// guideShellEnv is the environment of the guide's shell: this process's, with a fresh HOME and the
// tools first on PATH. The Go and tool caches keep their folders (they default to HOME's), so
// make does not download and build everything again.
func guideShellEnv(g Gomega, home, bin, kubeconfig string) []string {
	goEnv, err := exec.CommandContext(context.Background(), "go", "env", "GOPATH", "GOCACHE", "GOMODCACHE").Output()
	g.Expect(err).NotTo(HaveOccurred())
	paths := strings.Fields(string(goEnv))
	g.Expect(paths).To(HaveLen(3))
	capoaCache := os.Getenv("CAPOA_CACHE_DIR")
	if capoaCache == "" {
		userCache, err := os.UserCacheDir()
		g.Expect(err).NotTo(HaveOccurred())
		capoaCache = filepath.Join(userCache, "capoa")
	}
	var env []string
	for _, kv := range os.Environ() {
		switch strings.SplitN(kv, "=", 2)[0] {
		case "HOME", "PATH", "KUBECONFIG", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "CLUSTERCTL_DISABLE_VERSIONCHECK":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+home, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "KUBECONFIG="+kubeconfig,
		"GOPATH="+paths[0], "GOCACHE="+paths[1], "GOMODCACHE="+paths[2], "CAPOA_CACHE_DIR="+capoaCache)
}

// removeWebhookConfigurations deletes every admission webhook configuration as it appears, until
// the returned function is called: no Pod serves them here (see TestGettingStartedGuideRunsVerbatim).
func removeWebhookConfigurations(ctx context.Context, c client.Client) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		ticker := time.NewTicker(100 * time.Millisecond)
		defer ticker.Stop()
		for {
			_ = deleteWebhookConfigurations(ctx, c)
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
			}
		}
	}()
	return func() { cancel(); <-done }
}

// deleteWebhookConfigurations deletes every validating and mutating webhook configuration; it
// goes on past a failure and returns them all.
func deleteWebhookConfigurations(ctx context.Context, c client.Client) error {
	var errs []error
	var vwcs admissionregistrationv1.ValidatingWebhookConfigurationList
	errs = append(errs, c.List(ctx, &vwcs))
	for i := range vwcs.Items {
		errs = append(errs, c.Delete(ctx, &vwcs.Items[i]))
	}
	var mwcs admissionregistrationv1.MutatingWebhookConfigurationList
	errs = append(errs, c.List(ctx, &mwcs))
	for i := range mwcs.Items {
		errs = append(errs, c.Delete(ctx, &mwcs.Items[i]))
	}
	return errors.Join(errs...)
}

// checkOnlineProviders checks the guide's online clusterctl configuration against the offline one
// `make release-manifests` writes: the same providers, each at the GitHub release URL of the file
// the release attaches (clusterctl's https://github.com/<owner>/<repo>/releases/<version>/<file>).
func checkOnlineProviders(t *testing.T, g Gomega, b guideBlock) {
	t.Helper()
	type provider struct{ Name, Type, URL string }
	var online, offline struct{ Providers []provider }
	g.Expect(b.lang).To(Equal("yaml"), "the online block on line %d", b.line)
	g.Expect(yaml.UnmarshalStrict([]byte(b.body), &online)).To(Succeed(), "the online block on line %d", b.line)
	raw, err := os.ReadFile(filepath.Join(releaseDir, "clusterctl.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(yaml.Unmarshal(raw, &offline)).To(Succeed())
	const releases = "https://github.com/openshift-assisted/cluster-api-provider-openshift-assisted/releases/"
	var want []provider
	for _, p := range offline.Providers {
		if p.Name == "cluster-api" || p.Name == "metal3" {
			continue // clusterctl knows their release URLs itself
		}
		want = append(want, provider{p.Name, p.Type, releases + releaseVersion + "/" + filepath.Base(p.URL)})
	}
	g.Expect(want).To(HaveLen(3))
	g.Expect(online.Providers).To(ConsistOf(want), "the online block on line %d", b.line)
}
