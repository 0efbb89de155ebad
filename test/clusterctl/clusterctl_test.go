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
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"
	clusterctlclient "sigs.k8s.io/cluster-api/cmd/clusterctl/client"
	utilyaml "sigs.k8s.io/cluster-api/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// templateVariables are the variables the cluster templates require (docs/getting-started.md).
var templateVariables = map[string]string{
	"OPENSHIFT_VERSION":  "4.17.3",
	"KUBERNETES_VERSION": "v1.30.4", // the topology flavor's: 4.17.3's
	"BASE_DOMAIN":        "example.com",
	"API_VIP":            "192.168.111.5",
	"INGRESS_VIP":        "192.168.111.4",
	"SSH_AUTHORIZED_KEY": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIMi4c5B4pUq1mBNmRWQQPG/6Wj1v5yXw5kq2Rz3ZcK2E test",
	// The image flavor's.
	"RHCOS_IMAGE_URL":      "https://mirror.example/rhcos-4.17.2-x86_64-nutanix.x86_64.qcow2",
	"RHCOS_IMAGE_CHECKSUM": "https://mirror.example/sha256sum.txt",
}

// writeClusterctlConfig writes the clusterctl.yaml of the local repository plus the template
// variables, as a user would keep them in ~/.config/cluster-api/clusterctl.yaml.
func writeClusterctlConfig(g Gomega, dir string) string {
	raw, err := os.ReadFile(filepath.Join(releaseDir, "clusterctl.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	for k, v := range templateVariables {
		raw = append(raw, []byte(k+": \""+v+"\"\n")...)
	}
	path := filepath.Join(dir, "clusterctl.yaml")
	g.Expect(os.WriteFile(path, raw, 0o600)).To(Succeed())
	return path
}

// TestClusterctlInitAndGenerateCluster is what a platform engineer does: `clusterctl init` with
// core Cluster API, this project's three providers and CAPM3 from the local repository `make
// release-manifests` writes, then `clusterctl generate cluster` for every flavor; every rendered
// object must pass the API server's validation (server-side dry run) against the CRDs init
// installed. No controller runs: envtest has no kubelet, so the Deployments never start.
func TestClusterctlInitAndGenerateCluster(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	for k := range templateVariables {
		// The environment overrides clusterctl.yaml; make sure it holds none of ours.
		g.Expect(os.Getenv(k)).To(BeEmpty(), "unset %s to run this test", k)
	}

	c, err := clusterctlclient.New(ctx, writeClusterctlConfig(g, t.TempDir()))
	g.Expect(err).NotTo(HaveOccurred())
	kubeconfig := clusterctlclient.Kubeconfig{Path: kubeconfigPath}
	initOptions := clusterctlclient.InitOptions{
		Kubeconfig:              kubeconfig,
		CoreProvider:            "cluster-api",
		InfrastructureProviders: []string{"agent", "metal3"},
		BootstrapProviders:      []string{"openshift-assisted"},
		ControlPlaneProviders:   []string{"openshift-assisted"},
	}

	// A management cluster has cert-manager installed before `clusterctl init` (getting-started):
	// here its CRDs are installed and its namespace, which clusterctl looks for, is created.
	certManagerNS := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "cert-manager"}}
	g.Expect(client.IgnoreAlreadyExists(env.Client.Create(ctx, certManagerNS))).To(Succeed())

	start := time.Now()
	installed, err := c.Init(ctx, initOptions)
	g.Expect(err).NotTo(HaveOccurred())
	t.Logf("clusterctl init (5 providers): %s", time.Since(start).Round(time.Millisecond))
	g.Expect(installed).To(HaveLen(5))

	// `clusterctl init list-images`, what an air-gapped install mirrors. (Run on an empty cluster,
	// clusterctl first retries its inventory for ~13 s; after init it answers at once.)
	start = time.Now()
	images, err := c.InitImages(ctx, initOptions)
	g.Expect(err).NotTo(HaveOccurred())
	t.Logf("clusterctl init list-images: %s", time.Since(start).Round(time.Millisecond))
	g.Expect(images).To(ContainElements(
		"quay.io/openshift-assisted/capoa-infrastructure:"+releaseVersion,
		"quay.io/openshift-assisted/capoa-bootstrap:"+releaseVersion,
		"quay.io/openshift-assisted/capoa-controlplane:"+releaseVersion,
		"registry.k8s.io/cluster-api/cluster-api-controller:v1.13.4",
		"quay.io/metal3-io/cluster-api-provider-metal3:v1.13.2",
	))

	// The inventory clusterctl keeps (and `clusterctl move`, `upgrade` and `delete` read).
	var inventory clusterctlv1.ProviderList
	g.Expect(env.Client.List(ctx, &inventory)).To(Succeed())
	type entry struct{ Type, Name, Version, Namespace string }
	var got []entry
	for _, p := range inventory.Items {
		got = append(got, entry{p.Type, p.ProviderName, p.Version, p.Namespace})
	}
	g.Expect(got).To(ConsistOf(
		entry{"CoreProvider", "cluster-api", "v1.13.4", "capi-system"},
		entry{"InfrastructureProvider", "metal3", "v1.13.2", "capm3-system"},
		entry{"InfrastructureProvider", "agent", releaseVersion, "capoa-agent-system"},
		entry{"BootstrapProvider", "openshift-assisted", releaseVersion, "capoa-bootstrap-system"},
		entry{"ControlPlaneProvider", "openshift-assisted", releaseVersion, "capoa-controlplane-system"},
	))

	for _, p := range providers {
		var deployments appsv1.DeploymentList
		g.Expect(env.Client.List(ctx, &deployments, client.InNamespace(p.namespace),
			client.MatchingLabels{"cluster.x-k8s.io/provider": p.label})).To(Succeed())
		g.Expect(deployments.Items).To(HaveLen(1), p.label)
		checkManagerDeployment(g, &deployments.Items[0], p)
		for _, name := range p.crds {
			var crd apiextensionsv1.CustomResourceDefinition
			g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: name}, &crd)).To(Succeed())
			g.Expect(crd.Labels).To(HaveKey(clusterctlv1.ClusterctlLabel))
			g.Expect(crd.Labels).To(HaveKeyWithValue("cluster.x-k8s.io/provider", p.label))
		}
		if p.webhooks {
			certs := &unstructured.UnstructuredList{}
			certs.SetGroupVersionKind(schema.GroupVersionKind{Group: "cert-manager.io", Version: "v1", Kind: "CertificateList"})
			g.Expect(env.Client.List(ctx, certs, client.InNamespace(p.namespace))).To(Succeed())
			g.Expect(certs.Items).To(HaveLen(1), "%s: the webhook serving Certificate", p.label)
		}
	}

	// No webhook server runs here (no Pods), so the admission webhooks every provider installed
	// would reject every request: remove them. The dry run then checks the CRD schemas (OpenAPI
	// and CEL), which is what this test is about; the webhooks have their own envtest tests.
	g.Expect(deleteWebhookConfigurations(ctx, env.Client)).To(Succeed())

	ns, err := env.CreateNamespace(ctx, "clusters")
	g.Expect(err).NotTo(HaveOccurred())
	flavors := []struct {
		flavor string
		kinds  []string
	}{
		{"", []string{"Cluster", "Metal3Cluster", "Metal3DataTemplate", "OpenshiftAssistedControlPlane", "Metal3MachineTemplate",
			"MachineDeployment", "OpenshiftAssistedConfigTemplate", "Metal3MachineTemplate"}},
		{"image", []string{"Cluster", "Metal3Cluster", "Metal3DataTemplate", "OpenshiftAssistedControlPlane", "Metal3MachineTemplate",
			"MachineDeployment", "OpenshiftAssistedConfigTemplate", "Metal3MachineTemplate"}},
		{"disconnected", []string{"Cluster", "Metal3Cluster", "Metal3DataTemplate", "OpenshiftAssistedControlPlane", "Metal3MachineTemplate",
			"MachineDeployment", "OpenshiftAssistedConfigTemplate", "Metal3MachineTemplate"}},
		{"sno", []string{"Cluster", "Metal3Cluster", "Metal3DataTemplate", "OpenshiftAssistedControlPlane", "Metal3MachineTemplate"}},
		{"agent", []string{"Cluster", "AgentCluster", "OpenshiftAssistedControlPlane", "AgentMachineTemplate",
			"MachineDeployment", "OpenshiftAssistedConfigTemplate", "AgentMachineTemplate"}},
		{"agent-sno", []string{"Cluster", "AgentCluster", "OpenshiftAssistedControlPlane", "AgentMachineTemplate"}},
		// clusterctl adds the ClusterClass, which the namespace lacks, from the same repository.
		{"topology", []string{"ClusterClass", "Metal3ClusterTemplate", "OpenshiftAssistedControlPlaneTemplate", "Metal3MachineTemplate",
			"Metal3MachineTemplate", "OpenshiftAssistedConfigTemplate", "Cluster", "Metal3DataTemplate"}},
		{"agent-topology", []string{"ClusterClass", "AgentClusterTemplate", "OpenshiftAssistedControlPlaneTemplate", "AgentMachineTemplate",
			"AgentMachineTemplate", "OpenshiftAssistedConfigTemplate", "Cluster"}},
		// The same classes, for one control-plane node and for two with an arbiter (whose
		// Metal3MachineTemplate is the cluster's own).
		{"sno-topology", []string{"ClusterClass", "Metal3ClusterTemplate", "OpenshiftAssistedControlPlaneTemplate", "Metal3MachineTemplate",
			"Metal3MachineTemplate", "OpenshiftAssistedConfigTemplate", "Cluster", "Metal3DataTemplate"}},
		{"agent-sno-topology", []string{"ClusterClass", "AgentClusterTemplate", "OpenshiftAssistedControlPlaneTemplate", "AgentMachineTemplate",
			"AgentMachineTemplate", "OpenshiftAssistedConfigTemplate", "Cluster"}},
		{"arbiter-topology", []string{"ClusterClass", "Metal3ClusterTemplate", "OpenshiftAssistedControlPlaneTemplate", "Metal3MachineTemplate",
			"Metal3MachineTemplate", "OpenshiftAssistedConfigTemplate", "Cluster", "Metal3DataTemplate", "Metal3MachineTemplate"}},
	}
	for _, f := range flavors {
		name := "default"
		if f.flavor != "" {
			name = f.flavor
		}
		t.Run("generate cluster --flavor "+name, func(t *testing.T) {
			g := NewWithT(t)
			start := time.Now()
			tmpl, err := c.GetClusterTemplate(ctx, clusterctlclient.GetClusterTemplateOptions{
				Kubeconfig:               kubeconfig,
				ProviderRepositorySource: &clusterctlclient.ProviderRepositorySourceOptions{InfrastructureProvider: "agent", Flavor: f.flavor},
				ClusterName:              "ocp-" + name,
				TargetNamespace:          ns,
				ControlPlaneMachineCount: ptr.To[int64](3),
				WorkerMachineCount:       ptr.To[int64](2),
			})
			g.Expect(err).NotTo(HaveOccurred())
			objs := tmpl.Objs()
			var kinds []string
			for i := range objs {
				kinds = append(kinds, objs[i].GetKind())
				g.Expect(objs[i].GetNamespace()).To(Equal(ns))
				g.Expect(env.Client.Create(ctx, &objs[i], client.DryRunAll)).To(Succeed(),
					"%s %s must pass the API server's validation", objs[i].GetKind(), objs[i].GetName())
			}
			g.Expect(kinds).To(ConsistOf(f.kinds))
			t.Logf("generate cluster and dry-run %d objects: %s", len(objs), time.Since(start).Round(time.Millisecond))
		})
	}

	// The control plane's runtime extension, as the release publishes it: `clusterctl generate
	// yaml` renders an ExtensionConfig that names the Service and the certificate Secret the
	// control-plane components installed, and the API server accepts it.
	t.Run("generate yaml --from runtime-extension-openshift-assisted.yaml", func(t *testing.T) {
		g := NewWithT(t)
		f, err := os.Open(filepath.Join(releaseDir, "runtime-extension-openshift-assisted.yaml"))
		g.Expect(err).NotTo(HaveOccurred())
		defer func() { _ = f.Close() }()
		out, err := c.ProcessYAML(ctx, clusterctlclient.ProcessYAMLOptions{ReaderSource: &clusterctlclient.ReaderSourceOptions{Reader: f}})
		g.Expect(err).NotTo(HaveOccurred())
		raw, err := out.Yaml()
		g.Expect(err).NotTo(HaveOccurred())
		objs, err := utilyaml.ToUnstructured(raw)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(objs).To(HaveLen(1))
		ext := &objs[0]
		g.Expect(ext.GetKind()).To(Equal("ExtensionConfig"))
		namespace, _, _ := unstructured.NestedString(ext.Object, "spec", "clientConfig", "service", "namespace")
		service, _, _ := unstructured.NestedString(ext.Object, "spec", "clientConfig", "service", "name")
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: service}, &corev1.Service{})).To(Succeed(),
			"the webhook Service the control-plane components installed")
		secretNS, secret, ok := strings.Cut(ext.GetAnnotations()["runtime.cluster.x-k8s.io/inject-ca-from-secret"], "/")
		g.Expect(ok).To(BeTrue())
		g.Expect(secretNS).To(Equal(namespace))
		certs := &unstructured.UnstructuredList{}
		certs.SetGroupVersionKind(schema.GroupVersionKind{Group: "cert-manager.io", Version: "v1", Kind: "CertificateList"})
		g.Expect(env.Client.List(ctx, certs, client.InNamespace(namespace))).To(Succeed())
		g.Expect(certs.Items).To(HaveLen(1))
		secretName, _, _ := unstructured.NestedString(certs.Items[0].Object, "spec", "secretName")
		g.Expect(secret).To(Equal(secretName), "the Secret cert-manager writes the webhook certificate to")
		g.Expect(env.Client.Create(ctx, ext, client.DryRunAll)).To(Succeed())
	})

	// The dry run really validates: a control plane of 2 replicas is refused by the CRD's CEL rule.
	t.Run("dry run rejects an invalid object", func(t *testing.T) {
		g := NewWithT(t)
		tmpl, err := c.GetClusterTemplate(ctx, clusterctlclient.GetClusterTemplateOptions{
			Kubeconfig:               kubeconfig,
			ProviderRepositorySource: &clusterctlclient.ProviderRepositorySourceOptions{InfrastructureProvider: "agent"},
			ClusterName:              "two-replicas",
			TargetNamespace:          ns,
			ControlPlaneMachineCount: ptr.To[int64](2),
		})
		g.Expect(err).NotTo(HaveOccurred())
		found := false
		for i, o := range tmpl.Objs() {
			if o.GetKind() != "OpenshiftAssistedControlPlane" {
				continue
			}
			found = true
			err := env.Client.Create(ctx, &tmpl.Objs()[i], client.DryRunAll)
			g.Expect(err).To(MatchError(ContainSubstring("replicas 2 needs spec.arbiter")))
		}
		g.Expect(found).To(BeTrue())
	})
}
