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

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	configv1 "github.com/openshift/api/config/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/test/framework"
	"sigs.k8s.io/cluster-api/test/framework/clusterctl"
	utilyaml "sigs.k8s.io/cluster-api/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/lab"
)

// ClusterSpec is a cluster a spec creates from the repository's templates.
type ClusterSpec struct {
	Name string
	// Flavor of the template: "" (Metal3, control planes and workers) or "sno".
	Flavor                 string
	ControlPlanes, Workers int64
	OpenShiftVersion       string
}

// CreateClusterAndWait generates the cluster's manifests the way `clusterctl generate cluster`
// does, from the local clusterctl repository (the infrastructure-agent provider's templates),
// applies them and waits, with the framework's ApplyCustomClusterTemplateAndWait, for the Cluster
// to be provisioned, its control plane to be Available with every replica ready, and every
// MachineDeployment's Machines to have Nodes.
func CreateClusterAndWait(ctx context.Context, in SpecEnv, c ClusterSpec) *clusterctl.ApplyCustomClusterTemplateAndWaitResult {
	By(fmt.Sprintf("Creating the pull secret and generating cluster %s (flavor %q, %d control planes, %d workers, OpenShift %s)",
		c.Name, c.Flavor, c.ControlPlanes, c.Workers, c.OpenShiftVersion))
	pullSecret := c.Name + "-pull-secret"
	Expect(createPullSecret(ctx, in.Management, in.Namespace.Name, pullSecret, map[string]string{clusterv1.ClusterNameLabel: c.Name})).To(Succeed())

	variables := map[string]string{}
	for _, v := range requiredVariables {
		variables[v] = in.E2EConfig.MustGetVariable(v)
	}
	variables["OPENSHIFT_VERSION"] = c.OpenShiftVersion
	variables["PULL_SECRET_NAME"] = pullSecret
	logFolder := filepath.Join(in.ArtifactFolder, "clusters", in.Management.Proxy().GetName(), "templates")
	Expect(os.MkdirAll(logFolder, 0o750)).To(Succeed())
	template := clusterctl.ConfigCluster(ctx, clusterctl.ConfigClusterInput{
		LogFolder:                logFolder,
		ClusterctlConfigPath:     in.ClusterctlConfigPath,
		KubeconfigPath:           in.Management.Proxy().GetKubeconfigPath(),
		InfrastructureProvider:   variables["TEMPLATE_PROVIDER"],
		Flavor:                   c.Flavor,
		Namespace:                in.Namespace.Name,
		ClusterName:              c.Name,
		ControlPlaneMachineCount: ptr.To(c.ControlPlanes),
		WorkerMachineCount:       ptr.To(c.Workers),
		ClusterctlVariables:      variables,
	})
	result := &clusterctl.ApplyCustomClusterTemplateAndWaitResult{}
	clusterctl.ApplyCustomClusterTemplateAndWait(ctx, clusterctl.ApplyCustomClusterTemplateAndWaitInput{
		ClusterProxy:                 in.Management.Proxy(),
		CustomTemplateYAML:           template,
		ClusterName:                  c.Name,
		Namespace:                    in.Namespace.Name,
		Flavor:                       c.Flavor,
		WaitForClusterIntervals:      in.E2EConfig.GetIntervals(in.SpecName, "wait-cluster"),
		WaitForControlPlaneIntervals: in.E2EConfig.GetIntervals(in.SpecName, "wait-control-plane"),
		WaitForMachineDeployments:    in.E2EConfig.GetIntervals(in.SpecName, "wait-worker-nodes"),
		ControlPlaneWaiters:          ControlPlaneWaiters(),
	}, result)
	return result
}

// createPullSecret creates, in namespace, the pull secret a template names. On the kind path its
// content is the file PULL_SECRET_FILE names (a real one, for assisted-service); the lab's holds
// the credentials of its release registry.
func createPullSecret(ctx context.Context, m Management, namespace, name string, labels map[string]string) error {
	data := m.PullSecret()
	if data == nil {
		data = []byte(`{"auths":{"quay.io":{"auth":"ZTJlOmUyZQ=="}}}`)
	}
	if path := os.Getenv("PULL_SECRET_FILE"); path != "" {
		var err error
		if data, err = os.ReadFile(path); err != nil {
			return fmt.Errorf("reading PULL_SECRET_FILE: %w", err)
		}
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: labels},
		Type:       corev1.SecretTypeDockerConfigJson,
		Data:       map[string][]byte{corev1.DockerConfigJsonKey: data},
	}
	if err := m.Proxy().GetClient().Create(ctx, secret); err != nil {
		return fmt.Errorf("creating the pull secret %s: %w", name, err)
	}
	return nil
}

// adaptManifests adapts manifests to the lab's management cluster (see admittingProxy).
func adaptManifests(manifests []byte, releaseImageRepository string) ([]byte, error) {
	objs, err := utilyaml.ToUnstructured(manifests)
	if err != nil {
		return nil, fmt.Errorf("parsing the generated manifests: %w", err)
	}
	if err := lab.Adapt(objs, releaseImageRepository); err != nil {
		return nil, err
	}
	out, err := utilyaml.FromUnstructured(objs)
	if err != nil {
		return nil, fmt.Errorf("writing the adapted manifests: %w", err)
	}
	return out, nil
}

// GetControlPlane reads the cluster's OpenshiftAssistedControlPlane.
func GetControlPlane(ctx context.Context, g Gomega, c client.Client, cluster *clusterv1.Cluster) *controlplanev1.OpenshiftAssistedControlPlane {
	cp := &controlplanev1.OpenshiftAssistedControlPlane{}
	g.Expect(cluster.Spec.ControlPlaneRef.IsDefined()).To(BeTrue(), "Cluster %s has no control plane", klog.KObj(cluster))
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: cluster.Namespace, Name: cluster.Spec.ControlPlaneRef.Name}, cp)).To(Succeed())
	return cp
}

// ControlPlaneWaiters are the waits of Cluster API's ApplyClusterTemplateAndWait for a control
// plane that is an OpenshiftAssistedControlPlane (the framework's own are KubeadmControlPlane's):
// initialized, then Available with as many ready Machines as its spec.replicas asks for. Our
// specs and Cluster API's own use them.
func ControlPlaneWaiters() clusterctl.ControlPlaneWaiters {
	return clusterctl.ControlPlaneWaiters{
		WaitForControlPlaneInitialized: func(ctx context.Context, input clusterctl.ApplyCustomClusterTemplateAndWaitInput, result *clusterctl.ApplyCustomClusterTemplateAndWaitResult) {
			WaitForControlPlaneInitialized(ctx, input.ClusterProxy.GetClient(), result.Cluster, input.WaitForControlPlaneIntervals...)
		},
		WaitForControlPlaneMachinesReady: func(ctx context.Context, input clusterctl.ApplyCustomClusterTemplateAndWaitInput, result *clusterctl.ApplyCustomClusterTemplateAndWaitResult) {
			cp := GetControlPlane(ctx, Default, input.ClusterProxy.GetClient(), result.Cluster)
			WaitForControlPlaneAvailable(ctx, input.ClusterProxy.GetClient(), result.Cluster, ptr.Deref(cp.Spec.Replicas, 1), input.WaitForControlPlaneIntervals...)
		},
	}
}

// WaitForControlPlaneInitialized waits until the Cluster reports its control plane initialized
// (the control plane's status.initialization, which the OpenShift installation sets when the
// API server of the new cluster answers).
func WaitForControlPlaneInitialized(ctx context.Context, c client.Client, cluster *clusterv1.Cluster, intervals ...any) {
	By(fmt.Sprintf("Waiting for the control plane of %s to be initialized", klog.KObj(cluster)))
	Eventually(func(g Gomega) {
		got := &clusterv1.Cluster{}
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(cluster), got)).To(Succeed())
		g.Expect(got.Status.Initialization.ControlPlaneInitialized).To(Equal(ptr.To(true)))
	}, intervals...).Should(Succeed(), "control plane of %s not initialized", klog.KObj(cluster))
}

// WaitForControlPlaneAvailable waits until the control plane is Available, with replicas
// Machines, all ready and up to date, and no Machine being deleted.
func WaitForControlPlaneAvailable(ctx context.Context, c client.Client, cluster *clusterv1.Cluster, replicas int32, intervals ...any) {
	By(fmt.Sprintf("Waiting for the control plane of %s to be Available with %d ready replicas", klog.KObj(cluster), replicas))
	Eventually(func(g Gomega) {
		cp := GetControlPlane(ctx, g, c, cluster)
		g.Expect(meta.IsStatusConditionTrue(cp.Status.Conditions, clusterv1.AvailableCondition)).To(BeTrue(),
			"control plane not Available: %v", meta.FindStatusCondition(cp.Status.Conditions, clusterv1.AvailableCondition))
		g.Expect(cp.Status.ReadyReplicas).To(HaveValue(Equal(replicas)))
		g.Expect(cp.Status.Replicas).To(HaveValue(Equal(replicas)))
		machines := &clusterv1.MachineList{}
		g.Expect(c.List(ctx, machines, client.InNamespace(cluster.Namespace), client.MatchingLabels{
			clusterv1.ClusterNameLabel: cluster.Name, clusterv1.MachineControlPlaneLabel: "",
		})).To(Succeed())
		g.Expect(machines.Items).To(HaveLen(int(replicas)))
		for _, m := range machines.Items {
			g.Expect(m.DeletionTimestamp).To(BeNil(), "Machine %s is being deleted", m.Name)
			g.Expect(m.Status.Phase).To(Equal(string(clusterv1.MachinePhaseRunning)), "Machine %s", m.Name)
		}
	}, intervals...).Should(Succeed(), "control plane of %s not Available with %d replicas", klog.KObj(cluster), replicas)
}

// ExpectNodesThroughKubeconfig checks the kubeconfig Secret the control plane wrote: through it,
// the workload cluster has a Node for every Machine of the cluster, and returns their names.
func ExpectNodesThroughKubeconfig(ctx context.Context, g Gomega, proxy framework.ClusterProxy, cluster *clusterv1.Cluster) []string {
	workload := workloadClient(g, kubeconfigSecret(ctx, g, proxy, cluster))
	nodes := &corev1.NodeList{}
	g.Expect(workload.List(ctx, nodes)).To(Succeed(), "listing Nodes through the kubeconfig of %s", klog.KObj(cluster))
	existing := map[string]bool{}
	for _, n := range nodes.Items {
		if n.DeletionTimestamp == nil {
			existing[n.Name] = true
		}
	}
	machines := &clusterv1.MachineList{}
	g.Expect(proxy.GetClient().List(ctx, machines, client.InNamespace(cluster.Namespace),
		client.MatchingLabels{clusterv1.ClusterNameLabel: cluster.Name})).To(Succeed())
	var names []string
	for _, m := range machines.Items {
		if m.DeletionTimestamp != nil {
			continue
		}
		g.Expect(m.Status.NodeRef.IsDefined()).To(BeTrue(), "Machine %s has no Node", m.Name)
		g.Expect(existing).To(HaveKey(m.Status.NodeRef.Name), "the Node of Machine %s is not in the workload cluster", m.Name)
		names = append(names, m.Status.NodeRef.Name)
	}
	return names
}

// workloadClient reaches the workload cluster through the kubeconfig Secret, with a scheme that
// knows OpenShift's config API (ClusterVersion).
func workloadClient(g Gomega, secret *corev1.Secret) client.Client {
	scheme, err := lab.WorkloadScheme()
	g.Expect(err).NotTo(HaveOccurred())
	cfg, err := clientcmd.RESTConfigFromKubeConfig(secret.Data[secretKubeconfigKey])
	g.Expect(err).NotTo(HaveOccurred(), "parsing the kubeconfig Secret %s", klog.KObj(secret))
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	g.Expect(err).NotTo(HaveOccurred())
	return c
}

// secretKubeconfigKey is the key of the kubeconfig in Cluster API's kubeconfig Secret.
const secretKubeconfigKey = "value"

func kubeconfigSecret(ctx context.Context, g Gomega, proxy framework.ClusterProxy, cluster *clusterv1.Cluster) *corev1.Secret {
	secret := &corev1.Secret{}
	g.Expect(proxy.GetClient().Get(ctx, client.ObjectKey{Namespace: cluster.Namespace, Name: cluster.Name + "-kubeconfig"}, secret)).To(Succeed())
	g.Expect(secret.Type).To(Equal(clusterv1.ClusterSecretType))
	return secret
}

// GetClusterVersion reads the workload cluster's ClusterVersion.
func GetClusterVersion(ctx context.Context, g Gomega, proxy framework.ClusterProxy, cluster *clusterv1.Cluster) *configv1.ClusterVersion {
	cv := &configv1.ClusterVersion{}
	g.Expect(workloadClient(g, kubeconfigSecret(ctx, g, proxy, cluster)).Get(ctx, client.ObjectKey{Name: "version"}, cv)).To(Succeed())
	return cv
}
