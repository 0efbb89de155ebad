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

package lab

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	clusterctlclient "sigs.k8s.io/cluster-api/cmd/clusterctl/client"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/testenv"
)

// upgradePlan runs clusterctl's upgrade plan against the lab with a local repository holding the
// metadata.yaml of each provider's version: Cluster API's and CAPM3's from their modules, this
// repository's own (what hack/release-manifests.sh puts in the repository it writes).
func upgradePlan(g Gomega, ctx context.Context, dir string, l *Lab) {
	providers, err := InventoryProviders(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	root, err := testenv.RepoRoot()
	g.Expect(err).NotTo(HaveOccurred())
	config := "providers:\n"
	for _, p := range providers {
		metadata := filepath.Join(root, "metadata.yaml")
		if p.Version != DevelopmentVersion {
			module := map[string]string{"cluster-api": "sigs.k8s.io/cluster-api", "metal3": "github.com/metal3-io/cluster-api-provider-metal3"}[p.Name]
			out, err := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", module).Output()
			g.Expect(err).NotTo(HaveOccurred(), "locating module %s", module)
			metadata = filepath.Join(strings.TrimSpace(string(out)), "metadata.yaml")
		}
		data, err := os.ReadFile(metadata)
		g.Expect(err).NotTo(HaveOccurred())
		version := filepath.Join(dir, "repository", p.ManifestLabel(), p.Version)
		g.Expect(os.MkdirAll(version, 0o700)).To(Succeed())
		g.Expect(os.WriteFile(filepath.Join(version, "metadata.yaml"), data, 0o600)).To(Succeed())
		config += fmt.Sprintf("- name: %s\n  type: %s\n  url: file://%s/components.yaml\n", p.Name, p.Type, version)
	}
	configPath := filepath.Join(dir, "clusterctl.yaml")
	g.Expect(os.WriteFile(configPath, []byte(config), 0o600)).To(Succeed())
	kubeconfig := filepath.Join(dir, "management.kubeconfig")
	g.Expect(l.Mgmt.WriteKubeconfig(kubeconfig)).To(Succeed())

	c, err := clusterctlclient.New(ctx, configPath)
	g.Expect(err).NotTo(HaveOccurred())
	plans, err := c.PlanUpgrade(ctx, clusterctlclient.PlanUpgradeOptions{Kubeconfig: clusterctlclient.Kubeconfig{Path: kubeconfig}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(plans).NotTo(BeEmpty())
	got := map[string]string{}
	for _, item := range plans[0].Providers {
		got[item.ManifestLabel()] = item.Version
	}
	want := map[string]string{}
	for _, p := range providers {
		want[p.ManifestLabel()] = p.Version
	}
	g.Expect(got).To(Equal(want))
}

// TestSingleNodeClusterInstalls creates a single-node OpenShift cluster on one simulated host,
// through every real controller, and waits for the control plane to be initialized with its
// kubeconfig Secret.
func TestSingleNodeClusterInstalls(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l, err := Start(ctx, Options{ClusterctlInventory: true})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { g.Expect(l.Stop()).To(Succeed()) }()

	// A clusterctl management cluster: `clusterctl upgrade plan` (the library the binary runs)
	// finds its core provider and every other one in the inventory, each at a version of a release
	// series of its repository.
	t.Run("clusterctl upgrade plan", func(t *testing.T) { upgradePlan(NewWithT(t), ctx, t.TempDir(), l) })
	// Without in-place updates (the release's default: its EXP_IN_PLACE_UPDATES), the control
	// plane's webhook port, open to every caller, serves none of the runtime extension's hooks.
	t.Run("no runtime extension unless in-place updates are on", func(t *testing.T) { noRuntimeExtension(NewWithT(t), ctx, l) })

	ns, err := l.Mgmt.CreateNamespace(ctx, "sno")
	g.Expect(err).NotTo(HaveOccurred())
	_, err = l.AddHosts(ctx, ns, "sno-host", 1)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(l.CreateCluster(ctx, ClusterOptions{Namespace: ns, Name: "sno", ControlPlanes: 1, Version: "4.17.3"})).To(Succeed())

	defer func() {
		if t.Failed() {
			s, _ := l.Snapshot(ctx, ns)
			t.Logf("lab state:\n%s\nmanager errors: %v", s, l.Err())
		}
	}()
	g.Eventually(func(g Gomega) {
		cp := &controlplanev1.OpenshiftAssistedControlPlane{}
		g.Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "sno"}, cp)).To(Succeed())
		g.Expect(cp.Status.Initialization.ControlPlaneInitialized).To(Equal(ptr.To(true)))
		kubeconfig := &corev1.Secret{}
		g.Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "sno-kubeconfig"}, kubeconfig)).To(Succeed())
		g.Expect(kubeconfig.Data).To(HaveKey("value"))
		cluster := &clusterv1.Cluster{}
		g.Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "sno"}, cluster)).To(Succeed())
		g.Expect(cluster.Status.Initialization.ControlPlaneInitialized).To(Equal(ptr.To(true)))
	}, 3*time.Minute, time.Second).Should(Succeed())

	// The host's Node runs the kubelet of the release installed: the Kubernetes version of
	// OpenShift 4.17.3, which its Machine names.
	g.Eventually(func(g Gomega) {
		machines := &clusterv1.MachineList{}
		g.Expect(l.Mgmt.Client.List(ctx, machines, client.InNamespace(ns))).To(Succeed())
		g.Expect(machines.Items).To(HaveLen(1))
		m := machines.Items[0]
		g.Expect(m.Spec.Version).To(Equal("v" + Releases["4.17.3"]))
		g.Expect(m.Status.NodeInfo).NotTo(BeNil())
		g.Expect(m.Status.NodeInfo.KubeletVersion).To(Equal(m.Spec.Version))
	}, time.Minute, time.Second).Should(Succeed())
}

// noRuntimeExtension checks that the control plane's webhook server answers the runtime
// extension's discovery path, as Cluster API calls it, with 404 Not Found.
func noRuntimeExtension(g Gomega, ctx context.Context, l *Lab) {
	status, err := l.RuntimeExtensionDiscoveryStatus(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(status).To(Equal(http.StatusNotFound))
}
