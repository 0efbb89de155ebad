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
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	versionutil "k8s.io/apimachinery/pkg/util/version"
	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"
	clusterctlconfig "sigs.k8s.io/cluster-api/cmd/clusterctl/client/config"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/repository"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/yamlprocessor"
	utilyaml "sigs.k8s.io/cluster-api/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// The Cluster API Operator's ConfigMap conventions (its internal/controller/phases): the
// version label (else the ConfigMap's name), the metadata and components keys, and gzipped
// components in binaryData under the compressed annotation.
const (
	operatorVersionLabel         = "provider.cluster.x-k8s.io/version"
	operatorCompressedAnnotation = "provider.cluster.x-k8s.io/compressed"
	operatorMaxConfigMapSize     = 1024 * 1024
)

var operatorProviderTypes = map[string]clusterctlv1.ProviderType{
	"CoreProvider":           clusterctlv1.CoreProviderType,
	"InfrastructureProvider": clusterctlv1.InfrastructureProviderType,
	"BootstrapProvider":      clusterctlv1.BootstrapProviderType,
	"ControlPlaneProvider":   clusterctlv1.ControlPlaneProviderType,
}

// TestOperatorConfigMaps applies the ConfigMaps `make operator-configmaps` writes and reads them
// back for every provider object of examples/operator/providers.yaml the way the Cluster API
// Operator does for spec.fetchConfig.selector: list by the selector in the provider's namespace,
// take the version, decode metadata.yaml and its release series, decompress the components when
// compressed, and process them with clusterctl's library for the provider's namespace.
// TestOperatorInstallsProviders runs the operator itself on the same files; this test stays as
// the quick check that names the ConfigMap and the field at fault, where the operator only
// reports a condition on a provider object.
func TestOperatorConfigMaps(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()

	cmFiles, err := filepath.Glob(filepath.Join(releaseDir, "operator", "*.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cmFiles).To(HaveLen(5))
	compressed := 0
	for _, f := range cmFiles {
		raw, err := os.ReadFile(f)
		g.Expect(err).NotTo(HaveOccurred())
		var cm corev1.ConfigMap
		g.Expect(yaml.UnmarshalStrict(raw, &cm)).To(Succeed(), f)
		if cm.Annotations[operatorCompressedAnnotation] == "true" {
			compressed++
			g.Expect(cm.BinaryData).To(HaveKey("components"), f)
		}
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: cm.Namespace}}
		if err := env.Client.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
			g.Expect(err).NotTo(HaveOccurred())
		}
		g.Expect(env.Client.Create(ctx, &cm)).To(Succeed(), f)
	}
	// Core Cluster API's components are over 1 MiB: the compressed path is exercised.
	g.Expect(compressed).To(BeNumerically(">=", 1))

	raw, err := os.ReadFile(filepath.Join(repoRoot, "examples", "operator", "providers.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	objs, err := utilyaml.ToUnstructured(raw)
	g.Expect(err).NotTo(HaveOccurred())
	seen := map[string]bool{}
	for _, o := range objs {
		providerType, ok := operatorProviderTypes[o.GetKind()]
		if !ok {
			continue
		}
		g.Expect(o.GetAPIVersion()).To(Equal("operator.cluster.x-k8s.io/v1alpha2"))
		seen[o.GetKind()+"/"+o.GetName()] = true
		t.Run(o.GetKind()+"/"+o.GetName(), func(t *testing.T) {
			readLikeTheOperator(NewWithT(t), o, providerType)
		})
	}
	g.Expect(seen).To(HaveLen(5))
}

func readLikeTheOperator(g Gomega, o unstructured.Unstructured, providerType clusterctlv1.ProviderType) {
	ctx := context.Background()
	version, _, _ := unstructured.NestedString(o.Object, "spec", "version")
	rawSelector, found, _ := unstructured.NestedMap(o.Object, "spec", "fetchConfig", "selector")
	g.Expect(found).To(BeTrue(), "spec.fetchConfig.selector")
	var selector metav1.LabelSelector
	g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(rawSelector, &selector)).To(Succeed())
	sel, err := metav1.LabelSelectorAsSelector(&selector)
	g.Expect(err).NotTo(HaveOccurred())

	var cms corev1.ConfigMapList
	g.Expect(env.Client.List(ctx, &cms, client.InNamespace(o.GetNamespace()),
		client.MatchingLabelsSelector{Selector: sel})).To(Succeed())
	g.Expect(cms.Items).To(HaveLen(1), "exactly one ConfigMap per provider version")
	cm := cms.Items[0]

	cmVersion := cm.Name
	if v, ok := cm.Labels[operatorVersionLabel]; ok {
		cmVersion = v
	}
	_, err = versionutil.ParseSemantic(cmVersion)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cmVersion).To(Equal(version))

	g.Expect(cm.Data).To(HaveKey("metadata"))
	var md clusterctlv1.Metadata
	g.Expect(yaml.Unmarshal([]byte(cm.Data["metadata"]), &md)).To(Succeed())
	series := md.GetReleaseSeriesForVersion(versionutil.MustParseSemantic(version))
	g.Expect(series).NotTo(BeNil(), "metadata has no release series for %s", version)
	g.Expect(series.Contract).To(Equal("v1beta2"))

	var components []byte
	if cm.Annotations[operatorCompressedAnnotation] == "true" {
		zr, err := gzip.NewReader(bytes.NewReader(cm.BinaryData["components"]))
		g.Expect(err).NotTo(HaveOccurred())
		components, err = io.ReadAll(zr)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(zr.Close()).To(Succeed())
		g.Expect(len(components)).To(BeNumerically(">", operatorMaxConfigMapSize),
			"only components over 1 MiB are compressed")
	} else {
		g.Expect(cm.Data).To(HaveKey("components"))
		components = []byte(cm.Data["components"])
		g.Expect(len(components)).To(BeNumerically("<=", operatorMaxConfigMapSize))
	}

	// The operator keeps them in a clusterctl memory repository and processes the components
	// for the provider object's namespace.
	repo := repository.NewMemoryRepository().WithPaths("", "components.yaml").
		WithFile(version, "metadata.yaml", []byte(cm.Data["metadata"])).
		WithFile(version, "components.yaml", components)
	file, err := repo.GetFile(ctx, version, repo.ComponentsPath())
	g.Expect(err).NotTo(HaveOccurred())
	processed, err := repository.NewComponents(repository.ComponentsInput{
		Provider:     clusterctlconfig.NewProvider(o.GetName(), "https://example.com/my-provider", providerType),
		ConfigClient: newConfigClient(g, nil),
		Processor:    yamlprocessor.NewSimpleProcessor(),
		RawYaml:      file,
		Options:      repository.ComponentsOptions{Version: version, TargetNamespace: o.GetNamespace()},
	})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(processed.TargetNamespace()).To(Equal(o.GetNamespace()))
	g.Expect(processed.Objs()).NotTo(BeEmpty())
}
