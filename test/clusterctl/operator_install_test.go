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
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clusterctlconfig "sigs.k8s.io/cluster-api/cmd/clusterctl/client/config"
	utilyaml "sigs.k8s.io/cluster-api/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/testenv"
)

// operatorModule is the Cluster API Operator release the test runs; hack/ensure-tool.sh builds
// its manager (cmd/main.go) at the same version.
const (
	operatorModule  = "sigs.k8s.io/cluster-api-operator"
	operatorVersion = "v0.29.0"
)

// operatorInstall is what the operator must install for one provider object of
// examples/operator/providers.yaml.
type operatorInstall struct {
	kind, namespace, name, version string
	// deployment and image: the provider's manager Deployment and its image.
	deployment, image string
	// crds are some of the provider's CRDs; clusterctlLabel is its cluster.x-k8s.io/provider label.
	crds            []string
	clusterctlLabel string
	// webhooks is the provider's ValidatingWebhookConfiguration, if any.
	webhooks string
}

var (
	operatorCore = operatorInstall{
		kind: "CoreProvider", namespace: "capi-system", name: "cluster-api", version: "v1.13.4",
		deployment: "capi-controller-manager", image: "registry.k8s.io/cluster-api/cluster-api-controller:v1.13.4",
		crds: []string{"clusters.cluster.x-k8s.io", "machines.cluster.x-k8s.io"}, clusterctlLabel: "cluster-api",
	}
	// operatorProviders are installed once the core provider is Ready.
	operatorProviders = []operatorInstall{
		{
			kind: "InfrastructureProvider", namespace: "capoa-agent-system", name: "agent", version: releaseVersion,
			deployment: "capoa-agent-controller-manager", image: "quay.io/openshift-assisted/capoa-infrastructure:" + releaseVersion,
			crds: []string{
				"agentclusters.capi-provider.agent-install.openshift.io", "agentclustertemplates.capi-provider.agent-install.openshift.io",
				"agentmachines.capi-provider.agent-install.openshift.io", "agentmachinetemplates.capi-provider.agent-install.openshift.io",
			},
			clusterctlLabel: "infrastructure-agent",
		},
		{
			kind: "BootstrapProvider", namespace: "capoa-bootstrap-system", name: "openshift-assisted", version: releaseVersion,
			deployment: "capoa-bootstrap-controller-manager", image: "quay.io/openshift-assisted/capoa-bootstrap:" + releaseVersion,
			crds: []string{
				"openshiftassistedconfigs.bootstrap.cluster.x-k8s.io", "openshiftassistedconfigtemplates.bootstrap.cluster.x-k8s.io",
			},
			clusterctlLabel: "bootstrap-openshift-assisted",
			webhooks:        "capoa-bootstrap-validating-webhook-configuration",
		},
		{
			kind: "ControlPlaneProvider", namespace: "capoa-controlplane-system", name: "openshift-assisted", version: releaseVersion,
			deployment: "capoa-controlplane-controller-manager", image: "quay.io/openshift-assisted/capoa-controlplane:" + releaseVersion,
			crds:            []string{"openshiftassistedcontrolplanes.controlplane.cluster.x-k8s.io", "openshiftassistedcontrolplanetemplates.controlplane.cluster.x-k8s.io"},
			clusterctlLabel: "control-plane-openshift-assisted",
			webhooks:        "capoa-controlplane-validating-webhook-configuration",
		},
		{
			kind: "InfrastructureProvider", namespace: "capm3-system", name: "metal3", version: "v1.13.2",
			deployment: "capm3-controller-manager", image: "quay.io/metal3-io/cluster-api-provider-metal3:v1.13.2",
			crds:            []string{"metal3clusters.infrastructure.cluster.x-k8s.io", "metal3machines.infrastructure.cluster.x-k8s.io"},
			clusterctlLabel: "infrastructure-metal3",
		},
	}
)

// TestOperatorInstallsProviders runs the Cluster API Operator's own manager (the published
// module at operatorVersion, built by hack/ensure-tool.sh) as a process against an API server of
// its own, applies the ConfigMaps `make operator-configmaps` writes and the provider objects of
// examples/operator/providers.yaml, and checks what the operator installs and reports in the
// providers' status.
//
// There is no kubelet nor kube-controller-manager: a Deployment never gets a status by itself.
// The test writes the Available condition the Deployment controller would write once the
// manager's pod runs, which is what the operator's health check waits for (and the providers
// other than the core one wait for the core provider to be Ready before they are installed).
func TestOperatorInstallsProviders(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	start := time.Now()

	opEnv, kubeconfig := startOperatorEnv(t)
	startOperator(t, opEnv, kubeconfig)

	// The ConfigMaps first: the operator lists them when it reconciles a provider object, and does
	// not watch them (no --watch-configmap).
	cmFiles, err := filepath.Glob(filepath.Join(releaseDir, "operator", "*.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cmFiles).To(HaveLen(1 + len(operatorProviders)))
	for _, f := range cmFiles {
		raw, err := os.ReadFile(f)
		g.Expect(err).NotTo(HaveOccurred())
		var cm corev1.ConfigMap
		g.Expect(yaml.UnmarshalStrict(raw, &cm)).To(Succeed(), f)
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: cm.Namespace}}
		if err := opEnv.Client.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
			g.Expect(err).NotTo(HaveOccurred())
		}
		g.Expect(opEnv.Client.Create(ctx, &cm)).To(Succeed(), f)
	}

	raw, err := os.ReadFile(filepath.Join(repoRoot, "examples", "operator", "providers.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	objs, err := utilyaml.ToUnstructured(raw)
	g.Expect(err).NotTo(HaveOccurred())
	for i := range objs {
		o := &objs[i]
		// The operator's defaulting and validating webhooks (internal/webhook) answer the
		// creation of provider objects; its webhook server may still be starting.
		g.Eventually(func() error {
			err := opEnv.Client.Create(ctx, o.DeepCopy())
			if apierrors.IsAlreadyExists(err) {
				return nil
			}
			return err
		}).WithTimeout(time.Minute).WithPolling(time.Second).Should(Succeed(), "creating %s %s", o.GetKind(), o.GetName())
	}

	// The core provider is installed first. The operator (internal/controller/phase_lifecycle.go,
	// Install) creates its components with clusterctl's library and sets ProviderInstalled;
	// ReportStatus (phase_fetch.go) writes the installed version and contract. Its health check
	// (internal/controller/healthcheck) then reports Ready False: the Deployment has no
	// Available condition yet.
	expectInstalled(t, opEnv, operatorCore, metav1.Condition{
		Type: "Ready", Status: metav1.ConditionFalse, Reason: "NoDeploymentAvailableConditionReason",
		Message: "No minimum availability condition found on the provider deployment",
	})
	// Until the core provider is Ready, the others fail their preflight checks
	// (internal/controller/preflight_checks.go) and nothing of theirs is installed.
	for _, p := range operatorProviders {
		g.Eventually(func(g Gomega) {
			o := getOperatorProvider(g, opEnv, p)
			g.Expect(providerCondition(g, o, "PreflightCheckPassed")).To(Equal(metav1.Condition{
				Type: "PreflightCheckPassed", Status: metav1.ConditionFalse, Reason: "WaitingForCoreProviderReady",
				Message: "Waiting for the CoreProvider to be installed.",
			}), "%s %s", p.kind, p.name)
			_, found, _ := unstructured.NestedString(o.Object, "status", "installedVersion")
			g.Expect(found).To(BeFalse(), "%s %s installed before the core provider is Ready", p.kind, p.name)
		}).WithTimeout(time.Minute).WithPolling(time.Second).Should(Succeed())
		var d appsv1.Deployment
		err := opEnv.Client.Get(ctx, client.ObjectKey{Namespace: p.namespace, Name: p.deployment}, &d)
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "Deployment %s/%s: %v", p.namespace, p.deployment, err)
	}

	// The core Deployment becomes Available: the health check copies the condition into Ready,
	// and the other providers pass their preflight checks and get installed.
	available := markDeploymentAvailable(t, opEnv, operatorCore)
	expectReadyFromDeployment(t, opEnv, operatorCore, available)
	for _, p := range operatorProviders {
		expectInstalled(t, opEnv, p, metav1.Condition{
			Type: "Ready", Status: metav1.ConditionFalse, Reason: "NoDeploymentAvailableConditionReason",
			Message: "No minimum availability condition found on the provider deployment",
		})
	}
	for _, p := range operatorProviders {
		expectReadyFromDeployment(t, opEnv, p, markDeploymentAvailable(t, opEnv, p))
	}

	// The operator does not write clusterctl's inventory (clusterctl.cluster.x-k8s.io Provider
	// objects): it calls clusterctl's ProviderComponents().Create only, and its provider objects
	// are the inventory (internal/controller/genericprovider_controller.go, listProviders).
	var crd apiextensionsv1.CustomResourceDefinition
	err = opEnv.Client.Get(ctx, client.ObjectKey{Name: "providers.clusterctl.cluster.x-k8s.io"}, &crd)
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "clusterctl's inventory CRD: %v", err)

	t.Logf("the operator installed and reported every provider in %s", time.Since(start).Round(time.Second))
}

// expectInstalled waits until the operator reports p installed, with ready as its Ready
// condition, and checks p's CRDs and manager Deployment.
func expectInstalled(t *testing.T, opEnv *testenv.Environment, p operatorInstall, ready metav1.Condition) {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	g.Eventually(func(g Gomega) {
		o := getOperatorProvider(g, opEnv, p)
		// internal/controller/preflight_checks.go.
		g.Expect(providerCondition(g, o, "PreflightCheckPassed")).To(Equal(metav1.Condition{
			Type: "PreflightCheckPassed", Status: metav1.ConditionTrue, Reason: "PreflightChecksPassed",
			Message: "All preflight checks passed",
		}))
		// internal/controller/phase_lifecycle.go, Install.
		g.Expect(providerCondition(g, o, "ProviderInstalled")).To(Equal(metav1.Condition{
			Type: "ProviderInstalled", Status: metav1.ConditionTrue, Reason: "ProviderInstalled",
			Message: "Provider installed successfully",
		}))
		// internal/controller/phase_fetch.go, ReportStatus: the version of the ConfigMap's
		// components and the contract of metadata.yaml's release series.
		g.Expect(o.Object).To(HaveKeyWithValue("status", And(
			HaveKeyWithValue("installedVersion", p.version), HaveKeyWithValue("contract", "v1beta2"))))
		// internal/controller/healthcheck/healthcheck_controller.go.
		g.Expect(providerCondition(g, o, "Ready")).To(Equal(ready))
	}).WithTimeout(2*time.Minute).WithPolling(time.Second).Should(Succeed(), "%s %s/%s", p.kind, p.namespace, p.name)

	// clusterctl's library labels every object of the components (repository.NewComponents, as
	// clusterctl init does).
	for _, name := range p.crds {
		var crd apiextensionsv1.CustomResourceDefinition
		g.Expect(opEnv.Client.Get(ctx, client.ObjectKey{Name: name}, &crd)).To(Succeed(), "CRD %s", name)
		g.Expect(crd.Labels).To(HaveKeyWithValue("clusterctl.cluster.x-k8s.io", ""), name)
		g.Expect(crd.Labels).To(HaveKeyWithValue("cluster.x-k8s.io/provider", p.clusterctlLabel), name)
	}
	var d appsv1.Deployment
	g.Expect(opEnv.Client.Get(ctx, client.ObjectKey{Namespace: p.namespace, Name: p.deployment}, &d)).To(Succeed())
	g.Expect(d.Labels).To(HaveKeyWithValue("cluster.x-k8s.io/provider", p.clusterctlLabel))
	g.Expect(d.Spec.Template.Spec.Containers).To(ContainElement(And(
		HaveField("Name", "manager"), HaveField("Image", p.image))), "Deployment %s/%s", p.namespace, p.deployment)
	// internal/controller/component_customizer.go: namespaced objects are owned by the provider
	// object; the health check finds the provider of a Deployment through this reference.
	g.Expect(d.OwnerReferences).To(ContainElement(And(
		HaveField("APIVersion", "operator.cluster.x-k8s.io/v1alpha2"), HaveField("Kind", p.kind), HaveField("Name", p.name))))
	// The admission webhooks of our components are installed too. Their Services have no pods
	// here, and nothing the operator writes afterwards goes through them (it creates no object of
	// our kinds: what it applies again from its cache, internal/controller/phase_fetch.go Store
	// and genericprovider_controller.go ApplyFromCache, is the components themselves), so the installation does not depend on them.
	if p.webhooks != "" {
		var vwc admissionregistrationv1.ValidatingWebhookConfiguration
		g.Expect(opEnv.Client.Get(ctx, client.ObjectKey{Name: p.webhooks}, &vwc)).To(Succeed())
		g.Expect(vwc.Webhooks).NotTo(BeEmpty())
		g.Expect(vwc.Webhooks[0].ClientConfig.Service).To(HaveField("Namespace", p.namespace))
	}
}

// markDeploymentAvailable writes the Available condition Kubernetes' Deployment controller
// writes once the manager's pod is ready, and returns it.
func markDeploymentAvailable(t *testing.T, opEnv *testenv.Environment, p operatorInstall) appsv1.DeploymentCondition {
	t.Helper()
	g := NewWithT(t)
	now := metav1.Now()
	available := appsv1.DeploymentCondition{
		Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, LastUpdateTime: now, LastTransitionTime: now,
		Reason: "MinimumReplicasAvailable", Message: "Deployment has minimum availability.",
	}
	var d appsv1.Deployment
	g.Expect(opEnv.Client.Get(context.Background(), client.ObjectKey{Namespace: p.namespace, Name: p.deployment}, &d)).To(Succeed())
	d.Status = appsv1.DeploymentStatus{
		ObservedGeneration: d.Generation, Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1,
		Conditions: []appsv1.DeploymentCondition{available},
	}
	g.Expect(opEnv.Client.Status().Update(context.Background(), &d)).To(Succeed())
	return available
}

// expectReadyFromDeployment waits until the operator's health check
// (internal/controller/healthcheck) copies the Deployment's Available condition into the
// provider's Ready condition.
func expectReadyFromDeployment(t *testing.T, opEnv *testenv.Environment, p operatorInstall, available appsv1.DeploymentCondition) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		g.Expect(providerCondition(g, getOperatorProvider(g, opEnv, p), "Ready")).To(Equal(metav1.Condition{
			Type: "Ready", Status: metav1.ConditionTrue, Reason: available.Reason, Message: available.Message,
		}))
	}).WithTimeout(time.Minute).WithPolling(time.Second).Should(Succeed(), "%s %s/%s", p.kind, p.namespace, p.name)
}

func getOperatorProvider(g Gomega, opEnv *testenv.Environment, p operatorInstall) *unstructured.Unstructured {
	o := &unstructured.Unstructured{}
	o.SetAPIVersion("operator.cluster.x-k8s.io/v1alpha2")
	o.SetKind(p.kind)
	g.Expect(opEnv.Client.Get(context.Background(), client.ObjectKey{Namespace: p.namespace, Name: p.name}, o)).To(Succeed())
	return o
}

// providerCondition returns the condition of type t of an operator provider object, without
// its times and generation.
func providerCondition(g Gomega, o *unstructured.Unstructured, t string) metav1.Condition {
	raw, _, err := unstructured.NestedSlice(o.Object, "status", "conditions")
	g.Expect(err).NotTo(HaveOccurred())
	for _, r := range raw {
		m, ok := r.(map[string]any)
		if !ok || m["type"] != t {
			continue
		}
		var c metav1.Condition
		g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(m, &c)).To(Succeed())
		return metav1.Condition{Type: c.Type, Status: c.Status, Reason: c.Reason, Message: c.Message}
	}
	return metav1.Condition{}
}

// startOperatorEnv starts an API server for the operator alone (the other tests of the package
// install into env): the operator's CRDs and webhook configurations from its module, and
// cert-manager's CRDs for the Certificates and Issuers of the providers' components. It writes a
// kubeconfig for it and returns both; the API server stops when the test ends.
func startOperatorEnv(t *testing.T) (*testenv.Environment, string) {
	t.Helper()
	g := NewWithT(t)
	operatorDir, err := moduleDir(operatorModule, operatorVersion)
	g.Expect(err).NotTo(HaveOccurred())
	certManagerCRDs, err := certManagerCRDDir(clusterctlconfig.CertManagerDefaultVersion)
	g.Expect(err).NotTo(HaveOccurred())

	scheme := runtime.NewScheme()
	g.Expect(clientgoscheme.AddToScheme(scheme)).To(Succeed())
	g.Expect(apiextensionsv1.AddToScheme(scheme)).To(Succeed())
	crds := envtest.CRDInstallOptions{
		Paths:              []string{filepath.Join(operatorDir, "config", "crd", "bases"), certManagerCRDs},
		ErrorIfPathMissing: true,
	}
	g.Expect(envtest.ReadCRDFiles(&crds)).To(Succeed())
	// testenv takes webhook folders relative to the repository root.
	webhooks, err := filepath.Rel(repoRoot, filepath.Join(operatorDir, "config", "webhook", "manifests.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	// Only these CRDs: the providers' CRDs are what the operator has to install.
	opEnv, err := testenv.StartWithOptions(testenv.Options{Scheme: scheme, CRDs: crds.CRDs, WebhookManifestDirs: []string{webhooks}})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() {
		if err := opEnv.Stop(); err != nil {
			t.Errorf("stopping the operator's API server: %v", err)
		}
	})
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	g.Expect(opEnv.WriteKubeconfig(kubeconfig)).To(Succeed())
	return opEnv, kubeconfig
}

// startOperator runs the operator's manager against opEnv until the test ends, and prints its
// log when the test fails.
func startOperator(t *testing.T, opEnv *testenv.Environment, kubeconfig string) {
	t.Helper()
	g := NewWithT(t)
	binary := toolPath(g, "hack/ensure-tool.sh", "cluster-api-operator")

	dir := t.TempDir()
	logPath := filepath.Join(dir, "operator.log")
	logFile, err := os.Create(logPath)
	g.Expect(err).NotTo(HaveOccurred())
	wh := opEnv.WebhookServerOptions()
	ctx, cancel := context.WithCancel(context.Background())
	// cmd/main.go's flags: no leader election (the default), no health, metrics nor pprof
	// listeners, and the webhook server on the port and certificates envtest configured the
	// operator's webhook configurations with.
	cmd := exec.CommandContext(ctx, binary,
		"--kubeconfig="+kubeconfig,
		"--leader-elect=false",
		"--health-addr=0",
		"--diagnostics-address=0",
		"--profiler-address=",
		"--webhook-port="+strconv.Itoa(wh.Port),
		"--webhook-cert-dir="+wh.CertDir,
	)
	// HOME without a clusterctl.yaml: the operator reads clusterctl's configuration (image
	// overrides, providers) from there.
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, ".config"))
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 20 * time.Second
	g.Expect(cmd.Start()).To(Succeed())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cancel()
		if err := <-exited; err != nil && !errors.Is(err, context.Canceled) {
			var exit *exec.ExitError
			if !errors.As(err, &exit) {
				t.Errorf("stopping the operator: %v", err)
			}
		}
		_ = logFile.Close()
		if t.Failed() {
			printLogTail(t, logPath)
		}
	})
	// The operator must keep running; one that exits at once (a flag it does not know, no
	// certificates) would only show as timeouts later.
	select {
	case err := <-exited:
		exited <- err
		printLogTail(t, logPath)
		t.Fatalf("the operator exited: %v", err)
	case <-time.After(2 * time.Second):
	}
}

func printLogTail(t *testing.T, path string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Logf("reading the operator's log: %v", err)
		return
	}
	const tail = 64 * 1024
	if len(raw) > tail {
		raw = raw[len(raw)-tail:]
	}
	t.Logf("the operator's log (last %d bytes):\n%s", len(raw), raw)
}
