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
	"os"
	"path/filepath"
	"slices"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	clusterctlcluster "sigs.k8s.io/cluster-api/cmd/clusterctl/client/cluster"
	capie2e "sigs.k8s.io/cluster-api/test/e2e"
	"sigs.k8s.io/cluster-api/test/framework"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// smokeLabel marks the specs make test runs (go test ./... without E2E_FULL); make test-e2e runs
// every spec.
const smokeLabel = "smoke"

// StockEnv is what the suite gives one of Cluster API's own specs (sigs.k8s.io/cluster-api/test/e2e,
// "stock" specs): a management cluster of its own, hosts for its clusters and their pull secret.
type StockEnv struct {
	// Management is the spec's management cluster; set before the spec's own BeforeEach runs.
	Management Management
	// ArtifactFolder is the spec's folder of artifacts (under the suite's).
	ArtifactFolder string
	// TemplateProvider is the infrastructure provider whose repository holds the templates.
	TemplateProvider string
}

// UseStockEnv readies, before each spec of the container it is called in, a management cluster
// for one of Cluster API's specs, named after name (the spec's name, or the spec's and its
// flavor's where one spec runs on several), as its folder of artifacts is: called before the spec function, its BeforeEach runs before the
// spec's own (Ginkgo runs a container's BeforeEach in the order they were registered), and the
// management cluster is disposed of after the spec's AfterEach (DeferCleanup).
func UseStockEnv(ctx context.Context, name string) *StockEnv {
	env := &StockEnv{}
	BeforeEach(func() {
		env.ArtifactFolder = filepath.Join(specInput.ArtifactFolder, name)
		env.TemplateProvider = specInput.E2EConfig.MustGetVariable("TEMPLATE_PROVIDER")
		// Only the last run of a spec is kept, so that the artifacts never mix two runs.
		Expect(os.RemoveAll(env.ArtifactFolder)).To(Succeed())
		m, err := specInput.NewManagement(ctx, name)
		Expect(err).NotTo(HaveOccurred(), "getting the management cluster of %s", name)
		env.Management = m
		DeferCleanup(func(ctx context.Context) {
			Expect(m.Dispose(ctx)).To(Succeed(), "disposing of the management cluster of %s", name)
		})
	})
	return env
}

// PostNamespaceCreated is the hook of Cluster API's specs that runs once the spec's namespace
// exists: it adds hosts BareMetalHosts there and the pull secret the templates name by default
// (pull-secret), as a user does before `clusterctl generate cluster`.
func (e *StockEnv) PostNamespaceCreated(ctx context.Context, hosts int) func(framework.ClusterProxy, string) {
	return func(_ framework.ClusterProxy, namespace string) {
		Expect(e.Management.AddHosts(ctx, namespace, "host", hosts)).To(Succeed())
		Expect(createPullSecret(ctx, e.Management, namespace, "pull-secret", nil)).To(Succeed())
	}
}

// PostNamespaceCreatedSelfBooted is PostNamespaceCreated for the agent flavor: hosts that boot the
// discovery ISO of each Machine (no BareMetalHosts), and the pull secret.
func (e *StockEnv) PostNamespaceCreatedSelfBooted(ctx context.Context, hosts int) func(framework.ClusterProxy, string) {
	return func(_ framework.ClusterProxy, namespace string) {
		Expect(e.Management.AddSelfBootedHosts("host", hosts)).To(Succeed())
		Expect(createPullSecret(ctx, e.Management, namespace, "pull-secret", nil)).To(Succeed())
	}
}

// InfrastructureProvider is the provider whose repository holds the templates, for the specs'
// input.
func (e *StockEnv) InfrastructureProvider() *string { return ptr.To(e.TemplateProvider) }

// ExpectInstalled is the PostMachinesProvisioned hook that adds to Cluster API's QuickStartSpec
// what the quick start of OpenShift on bare metal promises beyond Available Machines: through
// the kubeconfig Secret the control plane wrote, the workload cluster has a Node for every
// Machine; the AgentClusterInstall asked assisted-service for the cluster's hosts and a release;
// and the control plane reports the OpenShift version the template asked for.
func (e *StockEnv) ExpectInstalled(ctx context.Context, controlPlanes, workers int64) func(framework.ClusterProxy, string, string) {
	return func(proxy framework.ClusterProxy, namespace, name string) {
		cluster := &clusterv1.Cluster{}
		Expect(proxy.GetClient().Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, cluster)).To(Succeed())
		By("Checking the workload cluster through the kubeconfig the control plane wrote")
		Eventually(func(g Gomega) {
			g.Expect(ExpectNodesThroughKubeconfig(ctx, g, proxy, cluster)).To(HaveLen(int(controlPlanes + workers)))
		}, specInput.E2EConfig.GetIntervals("quick-start", "wait-worker-nodes")...).Should(Succeed())

		By("Checking the installation assisted-service was asked for")
		aci := &hiveextv1beta1.AgentClusterInstall{}
		Expect(proxy.GetClient().Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, aci)).To(Succeed())
		Expect(aci.Spec.ProvisionRequirements.ControlPlaneAgents).To(BeEquivalentTo(controlPlanes))
		Expect(aci.Spec.ProvisionRequirements.WorkerAgents).To(BeEquivalentTo(workers))
		Expect(aci.Spec.ImageSetRef).NotTo(BeNil())
		cp := GetControlPlane(ctx, Default, proxy.GetClient(), cluster)
		Expect(cp.Status.DistributionVersion).To(Equal(specInput.E2EConfig.MustGetVariable("OPENSHIFT_VERSION")))
	}
}

// DeletionPhases are the phases in which Cluster API's ClusterDeletionSpec expects a cluster's
// objects to go, read from clusterctl's owner graph: the workers (MachineDeployments, MachineSets
// and their Machines) first, then the control plane of kind controlPlane with its Machines, then
// the infrastructure cluster of kind infraCluster. In each phase the Machines (and the
// infrastructure cluster) are held by a finalizer, so that the spec sees the next phase wait
// until they are gone, as its own phases for KubeadmControlPlane and DockerCluster do
// (test/e2e/cluster_deletion_test.go at v1.13.4).
func DeletionPhases(controlPlane, infraCluster string) []capie2e.ClusterDeletionPhase {
	machine := func(ref corev1.ObjectReference, _ []metav1.OwnerReference) bool { return ref.Kind == "Machine" }
	ownedBy := func(owners []metav1.OwnerReference, kinds ...string) bool {
		for _, o := range owners {
			if slices.Contains(kinds, o.Kind) {
				return true
			}
		}
		return false
	}
	return []capie2e.ClusterDeletionPhase{
		{
			ObjectFilter: func(ref corev1.ObjectReference, owners []metav1.OwnerReference) bool {
				return ref.Kind == "MachineDeployment" || ref.Kind == "MachineSet" ||
					ref.Kind == "Machine" && ownedBy(owners, "MachineDeployment", "MachineSet")
			},
			BlockingObjectFilter: machine,
		},
		{
			ObjectFilter: func(ref corev1.ObjectReference, owners []metav1.OwnerReference) bool {
				return ref.Kind == controlPlane || ref.Kind == "Machine" && ownedBy(owners, controlPlane)
			},
			BlockingObjectFilter: machine,
		},
		{
			ObjectFilter:         func(ref corev1.ObjectReference, _ []metav1.OwnerReference) bool { return ref.Kind == infraCluster },
			BlockingObjectFilter: func(ref corev1.ObjectReference, _ []metav1.OwnerReference) bool { return ref.Kind == infraCluster },
		},
	}
}

// ExpectOwnerGraph is a PostMachinesProvisioned hook for Cluster API's ClusterDeletionSpec: the
// spec reads its phases' objects from clusterctl's owner graph, which finds only the kinds whose
// CRDs are labelled for clusterctl, so a graph without the cluster's providers' objects would
// make every phase pass without checking anything. It checks that the graph holds an object of
// each kind.
func (e *StockEnv) ExpectOwnerGraph(ctx context.Context, kinds ...string) func(framework.ClusterProxy, string, string) {
	return func(proxy framework.ClusterProxy, namespace, name string) {
		graph, err := clusterctlcluster.GetOwnerGraph(ctx, namespace, proxy.GetKubeconfigPath(), clusterctlcluster.FilterClusterObjectsWithNameFilter(name))
		Expect(err).NotTo(HaveOccurred())
		found := make([]string, 0, len(graph))
		for _, node := range graph {
			found = append(found, node.Object.Kind)
		}
		Expect(found).To(ContainElements(kinds), "clusterctl's owner graph of cluster %s/%s", namespace, name)
	}
}
