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

package e2e

import (
	"context"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/klog/v2"
	"sigs.k8s.io/cluster-api/test/framework/clusterctl"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/specdigest"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/testenv"
)

// Flags of the suite (go test ./e2e -args -e2e.<flag>=...).
var (
	// configPaths are the e2e config and its overlays (comma-separated).
	configPaths string
	// artifactFolder is where the suite writes dumps, logs and its clusterctl repository.
	artifactFolder string
	// managementKubeconfig selects the kind path: the management cluster of this kubeconfig,
	// prepared by kind/run.sh, instead of a lab per spec.
	managementKubeconfig string
	// hostInventory is the kind path's host inventory (kind/run.sh writes it).
	hostInventory string
	// clusterctlConfigPath is a clusterctl config of an existing local repository; empty runs
	// hack/release-manifests.sh into the artifacts folder.
	clusterctlConfigPath string
	// skipCleanup leaves the clusters in place after each spec.
	skipCleanup bool
)

// fullRunEnv selects every spec; without it (go test ./... in make test) only the specs labelled
// smoke run, unless a Ginkgo label filter is given.
const fullRunEnv = "E2E_FULL"

func init() {
	flag.StringVar(&configPaths, "e2e.config", "config/e2e.yaml", "the e2e config file and its overlays, comma-separated")
	flag.StringVar(&artifactFolder, "e2e.artifacts-folder", "", "where dumps and logs go (default: _artifacts/e2e at the repository root)")
	flag.StringVar(&managementKubeconfig, "e2e.management-kubeconfig", "", "kubeconfig of an existing management cluster (kind path); empty starts a lab per spec")
	flag.StringVar(&hostInventory, "e2e.host-inventory", "", "host inventory of the kind path (kind/run.sh writes it)")
	flag.StringVar(&clusterctlConfigPath, "e2e.clusterctl-config", "", "clusterctl config of an existing local repository (default: written by hack/release-manifests.sh)")
	flag.BoolVar(&skipCleanup, "e2e.skip-resource-cleanup", false, "leave the clusters in place after each spec")
}

// e2eConfig and specInput are set by BeforeSuite.
var (
	e2eConfig *clusterctl.E2EConfig
	specInput SpecInput
)

func TestE2E(t *testing.T) {
	// Every in-process controller of the lab logs through klog (the providers' manager.Run
	// sets controller-runtime's logger to klog, as their main.go does): into each spec's
	// artifacts, never onto the test's output.
	ctrl.SetLogger(klog.Background())
	if err := redirectKlog(io.Discard); err != nil {
		t.Fatal(err)
	}
	RegisterFailHandler(Fail)
	suiteConfig, reporterConfig := GinkgoConfiguration()
	if suiteConfig.LabelFilter == "" && os.Getenv(fullRunEnv) == "" {
		suiteConfig.LabelFilter = smokeLabel
	}
	specdigest.RunSpecs(t, "capoa-e2e", suiteConfig, reporterConfig)
}

var _ = BeforeSuite(func() {
	ctx := context.Background()
	root, err := testenv.RepoRoot()
	Expect(err).NotTo(HaveOccurred())
	if artifactFolder == "" {
		artifactFolder = filepath.Join(root, "_artifacts", "e2e")
	}
	Expect(os.MkdirAll(artifactFolder, 0o750)).To(Succeed())

	By("Loading the e2e config " + configPaths)
	e2eConfig, err = LoadE2EConfig(strings.Split(configPaths, ",")...)
	Expect(err).NotTo(HaveOccurred())

	if clusterctlConfigPath == "" {
		By("Writing the release manifests and the local clusterctl repository (hack/release-manifests.sh)")
		out := filepath.Join(artifactFolder, "repository")
		cmd := exec.CommandContext(ctx, filepath.Join(root, "hack", "release-manifests.sh"), out)
		cmd.Dir = root
		output, err := cmd.CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), "hack/release-manifests.sh failed:\n%s", output)
		clusterctlConfigPath = filepath.Join(out, "clusterctl.yaml")
	}
	By("Adding the e2e flavors and the e2e config's variables to the clusterctl repository")
	provider, _, _ := strings.Cut(e2eConfig.MustGetVariable("TEMPLATE_PROVIDER"), ":")
	clusterctlConfigPath, err = PrepareRepository(clusterctlConfigPath, provider, e2eConfig, artifactFolder)
	Expect(err).NotTo(HaveOccurred())

	specInput = SpecInput{
		E2EConfig:            e2eConfig,
		ClusterctlConfigPath: clusterctlConfigPath,
		ArtifactFolder:       artifactFolder,
		SkipCleanup:          skipCleanup,
	}
	if managementKubeconfig == "" {
		specInput.NewManagement = func(ctx context.Context, specName string) (Management, error) {
			return StartLabManagement(ctx, specName+"-lab", filepath.Join(artifactFolder, specName))
		}
		return
	}
	By("Using the management cluster of " + managementKubeconfig)
	Expect(hostInventory).NotTo(BeEmpty(), "the kind path needs -e2e.host-inventory")
	inventory, err := LoadInventory(hostInventory)
	Expect(err).NotTo(HaveOccurred())
	shared, err := NewExternalManagement(ctx, e2eConfig.ManagementClusterName, managementKubeconfig, inventory, artifactFolder)
	Expect(err).NotTo(HaveOccurred())
	specInput.NewManagement = func(context.Context, string) (Management, error) { return shared, nil }
	DeferCleanup(func(ctx context.Context) { shared.Proxy().Dispose(ctx) })
})
