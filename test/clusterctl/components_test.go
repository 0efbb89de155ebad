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
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	versionutil "k8s.io/apimachinery/pkg/util/version"
	"sigs.k8s.io/yaml"

	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"
	clusterctlconfig "sigs.k8s.io/cluster-api/cmd/clusterctl/client/config"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/repository"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/yamlprocessor"
)

// provider describes one of this project's providers as a release carries it.
type provider struct {
	name, label, file, namespace string
	providerType                 clusterctlv1.ProviderType
	// webhooks: the provider serves admission webhooks (and so needs a cert-manager Certificate).
	webhooks bool
	crds     []string
}

var providers = []provider{
	{
		name: "agent", label: "infrastructure-agent", file: "infrastructure-components.yaml",
		namespace: "capoa-agent-system", providerType: clusterctlv1.InfrastructureProviderType,
		crds: []string{
			"agentclusters.capi-provider.agent-install.openshift.io",
			"agentclustertemplates.capi-provider.agent-install.openshift.io",
			"agentmachines.capi-provider.agent-install.openshift.io",
			"agentmachinetemplates.capi-provider.agent-install.openshift.io",
		},
	},
	{
		name: "openshift-assisted", label: "bootstrap-openshift-assisted", file: "bootstrap-components.yaml",
		namespace: "capoa-bootstrap-system", providerType: clusterctlv1.BootstrapProviderType, webhooks: true,
		crds: []string{
			"openshiftassistedconfigs.bootstrap.cluster.x-k8s.io",
			"openshiftassistedconfigtemplates.bootstrap.cluster.x-k8s.io",
		},
	},
	{
		name: "openshift-assisted", label: "control-plane-openshift-assisted", file: "control-plane-components.yaml",
		namespace: "capoa-controlplane-system", providerType: clusterctlv1.ControlPlaneProviderType, webhooks: true,
		crds: []string{"openshiftassistedcontrolplanes.controlplane.cluster.x-k8s.io", "openshiftassistedcontrolplanetemplates.controlplane.cluster.x-k8s.io"},
	},
}

// newConfigClient returns a clusterctl configuration with no variables set but those given, and
// with no environment variables: what `clusterctl init` sees on a machine with nothing set.
func newConfigClient(g Gomega, vars map[string]string) clusterctlconfig.Client {
	mr := clusterctlconfig.NewMemoryReader()
	g.Expect(mr.Init(context.Background(), "")).To(Succeed())
	for k, v := range vars {
		mr.Set(k, v)
	}
	c, err := clusterctlconfig.New(context.Background(), "", clusterctlconfig.InjectReader(mr))
	g.Expect(err).NotTo(HaveOccurred())
	return c
}

// TestComponentsFollowClusterctlRules reads each components file the way `clusterctl init` does
// (variable substitution with no variable set, then clusterctl's own inspection) and checks the
// rules of a clusterctl provider: one Namespace holding every namespaced object, the provider label
// everywhere, labelled CRDs, a `manager` container, cert-manager certificates for the webhooks.
func TestComponentsFollowClusterctlRules(t *testing.T) {
	for _, p := range providers {
		t.Run(p.label, func(t *testing.T) {
			g := NewWithT(t)
			raw, err := os.ReadFile(filepath.Join(releaseDir, "repository", p.label, releaseVersion, p.file))
			g.Expect(err).NotTo(HaveOccurred())
			components, err := repository.NewComponents(repository.ComponentsInput{
				Provider:     clusterctlconfig.NewProvider(p.name, "file:///"+p.file, p.providerType),
				ConfigClient: newConfigClient(g, nil),
				Processor:    yamlprocessor.NewSimpleProcessor(),
				RawYaml:      raw,
				Options:      repository.ComponentsOptions{Version: releaseVersion},
			})
			g.Expect(err).NotTo(HaveOccurred(), "clusterctl must accept the components with no variable set")
			g.Expect(components.TargetNamespace()).To(Equal(p.namespace))
			g.Expect(components.Images()).To(ConsistOf("quay.io/openshift-assisted/capoa-" +
				map[string]string{"infrastructure-agent": "infrastructure", "bootstrap-openshift-assisted": "bootstrap",
					"control-plane-openshift-assisted": "controlplane"}[p.label] + ":" + releaseVersion))

			byKind := map[string][]unstructured.Unstructured{}
			for _, o := range components.Objs() {
				byKind[o.GetKind()] = append(byKind[o.GetKind()], o)
				g.Expect(o.GetLabels()).To(HaveKeyWithValue("cluster.x-k8s.io/provider", p.label),
					"%s %s lacks the provider label", o.GetKind(), o.GetName())
				switch o.GetKind() {
				case "Namespace", "CustomResourceDefinition", "ClusterRole", "ClusterRoleBinding",
					"ValidatingWebhookConfiguration", "MutatingWebhookConfiguration":
					g.Expect(o.GetNamespace()).To(BeEmpty())
				default:
					g.Expect(o.GetNamespace()).To(Equal(p.namespace), "%s %s", o.GetKind(), o.GetName())
				}
			}
			g.Expect(byKind["Namespace"]).To(HaveLen(1))

			var crdNames []string
			for _, crd := range byKind["CustomResourceDefinition"] {
				crdNames = append(crdNames, crd.GetName())
				g.Expect(crd.GetLabels()).To(HaveKey(clusterctlv1.ClusterctlLabel), crd.GetName())
				g.Expect(crd.GetLabels()).To(HaveKey("cluster.x-k8s.io/v1beta2"), crd.GetName())
			}
			g.Expect(crdNames).To(ConsistOf(p.crds))

			g.Expect(byKind["Deployment"]).To(HaveLen(1))
			var d appsv1.Deployment
			g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(byKind["Deployment"][0].Object, &d)).To(Succeed())
			checkManagerDeployment(g, &d, p)

			if !p.webhooks {
				g.Expect(byKind).NotTo(HaveKey("ValidatingWebhookConfiguration"))
				g.Expect(byKind).NotTo(HaveKey("Certificate"))
				return
			}
			g.Expect(byKind["Issuer"]).To(HaveLen(1))
			g.Expect(byKind["Certificate"]).To(HaveLen(1))
			g.Expect(byKind["Service"]).To(HaveLen(1))
			cert, svc := byKind["Certificate"][0], byKind["Service"][0]
			dnsNames, _, _ := unstructured.NestedStringSlice(cert.Object, "spec", "dnsNames")
			g.Expect(dnsNames).To(ContainElement(svc.GetName() + "." + p.namespace + ".svc"))
			issuer, _, _ := unstructured.NestedString(cert.Object, "spec", "issuerRef", "name")
			g.Expect(issuer).To(Equal(byKind["Issuer"][0].GetName()))
			secretName, _, _ := unstructured.NestedString(cert.Object, "spec", "secretName")
			g.Expect(d.Spec.Template.Spec.Volumes).To(ContainElement(HaveField("Secret.SecretName", secretName)),
				"the manager must mount the Secret cert-manager writes")
			// Upstream's older versions, which have their own schema, are converted by the
			// manager's webhook: the CRDs call the Service, with the CA of the Certificate.
			// A CRD of one version (the OpenshiftAssistedControlPlaneTemplate, which upstream never
			// had) has no conversion and needs no CA.
			for _, crd := range byKind["CustomResourceDefinition"] {
				versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
				if crd.GetName() == "openshiftassistedcontrolplanetemplates.controlplane.cluster.x-k8s.io" {
					g.Expect(versions).To(HaveLen(1), crd.GetName())
					_, hasConversion, _ := unstructured.NestedMap(crd.Object, "spec", "conversion", "webhook")
					g.Expect(hasConversion).To(BeFalse(), crd.GetName())
					g.Expect(crd.GetAnnotations()).NotTo(HaveKey("cert-manager.io/inject-ca-from"), crd.GetName())
					continue
				}
				g.Expect(len(versions)).To(BeNumerically(">", 1), "%s serves upstream's older version", crd.GetName())
				conversion, _, _ := unstructured.NestedMap(crd.Object, "spec", "conversion")
				g.Expect(conversion).To(HaveKeyWithValue("strategy", "Webhook"), crd.GetName())
				svcRef, _, _ := unstructured.NestedMap(conversion, "webhook", "clientConfig", "service")
				g.Expect(svcRef).To(Equal(map[string]any{"name": svc.GetName(), "namespace": p.namespace, "path": "/convert"}), crd.GetName())
				g.Expect(crd.GetAnnotations()).To(HaveKeyWithValue("cert-manager.io/inject-ca-from", p.namespace+"/"+cert.GetName()), crd.GetName())
			}
			for _, w := range byKind["ValidatingWebhookConfiguration"] {
				g.Expect(w.GetAnnotations()).To(HaveKeyWithValue("cert-manager.io/inject-ca-from",
					p.namespace+"/"+cert.GetName()))
				hooks, _, _ := unstructured.NestedSlice(w.Object, "webhooks")
				g.Expect(hooks).NotTo(BeEmpty())
				for _, h := range hooks {
					svcRef, _, _ := unstructured.NestedMap(h.(map[string]any), "clientConfig", "service")
					g.Expect(svcRef).To(HaveKeyWithValue("name", svc.GetName()))
					g.Expect(svcRef).To(HaveKeyWithValue("namespace", p.namespace))
				}
			}
		})
	}
}

func checkManagerDeployment(g Gomega, d *appsv1.Deployment, p provider) {
	g.Expect(d.Spec.Template.Spec.Containers).To(HaveLen(1))
	c := d.Spec.Template.Spec.Containers[0]
	g.Expect(c.Name).To(Equal("manager"))
	g.Expect(c.Command).To(Equal([]string{"/manager"}))
	// The defaults of the ${VAR:=default} variables.
	g.Expect(c.Args).To(ContainElements("--leader-elect", "--diagnostics-address=:8443",
		"--insecure-diagnostics=false", "--health-addr=:9440", "--v=0", "--concurrency=10"))
	if p.webhooks {
		g.Expect(c.Args).To(ContainElement("--webhook-port=9443"))
		g.Expect(c.Ports).To(ContainElement(And(HaveField("Name", "webhook-server"), HaveField("ContainerPort", int32(9443)))))
	} else {
		g.Expect(c.Args).To(ContainElement("--webhook-port=0"))
	}
	g.Expect(c.Ports).To(ContainElement(And(HaveField("Name", "healthz"), HaveField("ContainerPort", int32(9440)))))
	for _, probe := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe} {
		g.Expect(probe).NotTo(BeNil())
		g.Expect(probe.HTTPGet).NotTo(BeNil())
		g.Expect(probe.HTTPGet.Port).To(Equal(intstr.FromString("healthz")))
	}
	g.Expect(c.Resources.Requests).NotTo(BeEmpty())
	g.Expect(c.Resources.Limits).To(HaveKey(corev1.ResourceMemory))
	g.Expect(c.SecurityContext).NotTo(BeNil())
	g.Expect(c.SecurityContext.ReadOnlyRootFilesystem).To(HaveValue(BeTrue()))
	g.Expect(c.SecurityContext.AllowPrivilegeEscalation).To(HaveValue(BeFalse()))
	g.Expect(c.SecurityContext.Capabilities.Drop).To(ContainElement(corev1.Capability("ALL")))
	g.Expect(d.Spec.Template.Spec.SecurityContext.RunAsNonRoot).To(HaveValue(BeTrue()))
	g.Expect(d.Spec.Template.Spec.ServiceAccountName).NotTo(BeEmpty())
}

// TestMetadataMapsTheReleaseToTheV1beta2Contract checks the metadata.yaml a release carries.
func TestMetadataMapsTheReleaseToTheV1beta2Contract(t *testing.T) {
	for _, p := range providers {
		t.Run(p.label, func(t *testing.T) {
			g := NewWithT(t)
			raw, err := os.ReadFile(filepath.Join(releaseDir, "repository", p.label, releaseVersion, "metadata.yaml"))
			g.Expect(err).NotTo(HaveOccurred())
			var md clusterctlv1.Metadata
			g.Expect(yaml.UnmarshalStrict(raw, &md)).To(Succeed())
			g.Expect(md.Kind).To(Equal("Metadata"))
			series := md.GetReleaseSeriesForVersion(versionutil.MustParseSemantic(releaseVersion))
			g.Expect(series).NotTo(BeNil())
			g.Expect(series.Contract).To(Equal("v1beta2"))
		})
	}
}
