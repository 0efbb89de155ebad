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
	"fmt"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/test/framework"
	"sigs.k8s.io/cluster-api/test/framework/clusterctl"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// SpecInput is what every spec of the suite is given (the shape of Cluster API's e2e spec
// inputs), by the lab path and by the kind path alike.
type SpecInput struct {
	E2EConfig *clusterctl.E2EConfig
	// ClusterctlConfigPath is the clusterctl config of the local repository
	// (hack/release-manifests.sh), whose infrastructure-agent provider holds the templates.
	ClusterctlConfigPath string
	// ArtifactFolder is where dumps and logs go (_artifacts/ at the repository root).
	ArtifactFolder string
	// NewManagement returns the management cluster of a spec.
	NewManagement func(ctx context.Context, specName string) (Management, error)
	// SkipCleanup leaves the clusters of the specs in place.
	SkipCleanup bool
}

// SpecEnv is one spec's management cluster and namespace.
type SpecEnv struct {
	SpecInput
	SpecName   string
	Management Management
	Namespace  *corev1.Namespace
	// ArtifactFolder is the spec's own folder of artifacts (under SpecInput.ArtifactFolder).
	ArtifactFolder string

	cancelWatches context.CancelFunc
}

// SetupSpec gets the spec's management cluster and creates its namespace, whose events are
// written into the artifacts folder, as Cluster API's setupSpecNamespace does.
func SetupSpec(ctx context.Context, specName string, input SpecInput) *SpecEnv {
	Expect(input.E2EConfig).NotTo(BeNil(), "the e2e config is required by %s", specName)
	Expect(input.ClusterctlConfigPath).To(BeAnExistingFile(), "the clusterctl config is required by %s", specName)
	// Only the last run of a spec is kept, so that the artifacts never mix two runs.
	Expect(os.RemoveAll(filepath.Join(input.ArtifactFolder, specName))).To(Succeed())
	m, err := input.NewManagement(ctx, specName)
	Expect(err).NotTo(HaveOccurred(), "getting the management cluster of %s", specName)
	s := &SpecEnv{SpecInput: input, SpecName: specName, Management: m,
		ArtifactFolder: filepath.Join(input.ArtifactFolder, specName)}
	s.SpecInput.ArtifactFolder = s.ArtifactFolder
	s.Namespace, s.cancelWatches = framework.CreateNamespaceAndWatchEvents(ctx, framework.CreateNamespaceAndWatchEventsInput{
		Creator:   m.Proxy().GetClient(),
		ClientSet: m.Proxy().GetClientSet(),
		Name:      fmt.Sprintf("%s-%s", specName, time.Now().UTC().Format("150405")),
		LogFolder: filepath.Join(s.ArtifactFolder, "clusters", m.Proxy().GetName()),
	})
	return s
}

// DumpResourcesAndLogs writes what a person needs to read a failed spec without rerunning it,
// the way Cluster API's suites do (framework.DumpAllResourcesAndLogs): the machines' logs (the
// hosts' state, see hostLogCollector), every Cluster API resource of the namespace plus the
// bare-metal, assisted-service and Hive ones this project's providers create, and the Nodes of
// the workload cluster. The providers' logs are written as the spec runs (Management).
func (s *SpecEnv) DumpResourcesAndLogs(ctx context.Context) {
	clusters := &clusterv1.ClusterList{}
	Expect(s.Management.Proxy().GetClient().List(ctx, clusters, client.InNamespace(s.Namespace.Name))).To(Succeed())
	for i := range clusters.Items {
		c := &clusters.Items[i]
		s.Management.Proxy().CollectWorkloadClusterLogs(ctx, c.Namespace, c.Name, filepath.Join(s.ArtifactFolder, "clusters", c.Name))
	}
	framework.DumpAllResources(ctx, framework.DumpAllResourcesInput{
		Lister:               s.Management.Proxy().GetClient(),
		KubeConfigPath:       s.Management.Proxy().GetKubeconfigPath(),
		ClusterctlConfigPath: s.ClusterctlConfigPath,
		Namespace:            s.Namespace.Name,
		LogPath:              filepath.Join(s.ArtifactFolder, "clusters", s.Management.Proxy().GetName(), "resources"),
		IncludeTypes:         dumpedTypes,
	})
}

// dumpedTypes are dumped besides the CRDs labelled as Cluster API providers'.
var dumpedTypes = []metav1.TypeMeta{
	{APIVersion: "cluster.x-k8s.io/v1beta2", Kind: "Cluster"},
	{APIVersion: "cluster.x-k8s.io/v1beta2", Kind: "Machine"},
	{APIVersion: "cluster.x-k8s.io/v1beta2", Kind: "MachineSet"},
	{APIVersion: "cluster.x-k8s.io/v1beta2", Kind: "MachineDeployment"},
	{APIVersion: "infrastructure.cluster.x-k8s.io/v1beta2", Kind: "Metal3Cluster"},
	{APIVersion: "infrastructure.cluster.x-k8s.io/v1beta2", Kind: "Metal3Machine"},
	{APIVersion: "infrastructure.cluster.x-k8s.io/v1beta2", Kind: "Metal3MachineTemplate"},
	{APIVersion: "controlplane.cluster.x-k8s.io/v1alpha4", Kind: "OpenshiftAssistedControlPlane"},
	{APIVersion: "bootstrap.cluster.x-k8s.io/v1alpha2", Kind: "OpenshiftAssistedConfig"},
	{APIVersion: "bootstrap.cluster.x-k8s.io/v1alpha2", Kind: "OpenshiftAssistedConfigTemplate"},
	{APIVersion: "metal3.io/v1alpha1", Kind: "BareMetalHost"},
	{APIVersion: "agent-install.openshift.io/v1beta1", Kind: "Agent"},
	{APIVersion: "agent-install.openshift.io/v1beta1", Kind: "InfraEnv"},
	{APIVersion: "extensions.hive.openshift.io/v1beta1", Kind: "AgentClusterInstall"},
	{APIVersion: "hive.openshift.io/v1", Kind: "ClusterDeployment"},
}

// TearDown dumps the spec's resources and logs if the spec failed, then (unless SkipCleanup)
// deletes its clusters, waits for them to be gone, returns its hosts and deletes its namespace,
// and finally disposes of its management cluster.
func (s *SpecEnv) TearDown(ctx context.Context) {
	if CurrentSpecReport().Failed() {
		By("Dumping the resources and logs of the failed spec into " + s.ArtifactFolder)
		s.DumpResourcesAndLogs(ctx)
	}
	if !s.SkipCleanup {
		By(fmt.Sprintf("Deleting the clusters of namespace %s", s.Namespace.Name))
		framework.DeleteAllClustersAndWait(ctx, framework.DeleteAllClustersAndWaitInput{
			ClusterProxy:         s.Management.Proxy(),
			ClusterctlConfigPath: s.ClusterctlConfigPath,
			Namespace:            s.Namespace.Name,
			ArtifactFolder:       s.ArtifactFolder,
		}, s.E2EConfig.GetIntervals(s.SpecName, "wait-delete-cluster")...)
		Eventually(func() error { return s.Management.ReleaseHosts(ctx, s.Namespace.Name) },
			s.E2EConfig.GetIntervals(s.SpecName, "wait-hosts-released")...).Should(Succeed())
		framework.DeleteNamespace(ctx, framework.DeleteNamespaceInput{Deleter: s.Management.Proxy().GetClient(), Name: s.Namespace.Name})
	}
	s.cancelWatches()
	Expect(s.Management.Dispose(ctx)).To(Succeed(), "disposing of the management cluster of %s", klog.KRef("", s.SpecName))
}
