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

package testenv

import (
	"context"
	"crypto/sha1" //nolint:gosec // git's object IDs are SHA-1
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// gitBlobID is the object ID git gives a file of content data.
func gitBlobID(data []byte) string {
	h := sha1.New() //nolint:gosec // git's object IDs are SHA-1
	fmt.Fprintf(h, "blob %d\x00", len(data))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// TestNewestCRDsAreTheRecordedBlobs: the README of NewestCRDDir, which hack/newest-crds.sh writes
// with the Go constants of the commits, names the same commits and dates as those constants; each
// copy is, byte for byte, the git blob it names (so a verbatim copy of the upstream file at that
// commit); and each of NewestCRDProjects has the same files as the generated folder it replaces.
func TestNewestCRDsAreTheRecordedBlobs(t *testing.T) {
	g := NewWithT(t)
	root, err := RepoRoot()
	g.Expect(err).NotTo(HaveOccurred())
	readme, err := os.ReadFile(filepath.Join(root, NewestCRDDir, "README.md"))
	g.Expect(err).NotTo(HaveOccurred())

	source := regexp.MustCompile("(?m)^\\| ([a-z-]+) \\| (https://github\\.com/[^ ]+) \\| \\[`([0-9a-f]{40})`\\]\\([^)]+\\) \\| ([0-9-]{10}) \\| `([^`]+)` \\|$")
	commits := map[string][2]string{}
	for _, m := range source.FindAllStringSubmatch(string(readme), -1) {
		commits[m[1]] = [2]string{m[3], m[4]}
	}
	g.Expect(commits).To(Equal(map[string][2]string{
		"assisted-service": {NewestAssistedServiceCommit, NewestAssistedServiceDate},
		"hive":             {NewestHiveCommit, NewestHiveDate},
	}), "the README's commits and dates are the constants' (both written by hack/newest-crds.sh)")

	file := regexp.MustCompile("(?m)^\\| `([a-z-]+/[^`]+\\.yaml)` \\| \\[([^]]+)\\]\\((https://github\\.com/[^)]+)\\) \\| `([0-9a-f]{40})` \\|$")
	listed := map[string]bool{}
	for _, m := range file.FindAllStringSubmatch(string(readme), -1) {
		name, path, url, blob := m[1], m[2], m[3], m[4]
		listed[name] = true
		project := strings.SplitN(name, "/", 2)[0]
		g.Expect(url).To(HaveSuffix("/blob/"+commits[project][0]+"/"+path), "%s: the link names the recorded commit", name)
		data, err := os.ReadFile(filepath.Join(root, NewestCRDDir, name))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(gitBlobID(data)).To(Equal(blob), "%s is the blob of %s at %s, unchanged", name, path, commits[project][0])
	}

	for _, project := range NewestCRDProjects {
		newest, err := filepath.Glob(filepath.Join(root, NewestCRDDir, project, "*.yaml"))
		g.Expect(err).NotTo(HaveOccurred())
		generated, err := filepath.Glob(filepath.Join(root, ThirdPartyCRDDir, project, "*.yaml"))
		g.Expect(err).NotTo(HaveOccurred())
		var newestNames, generatedNames []string
		for _, f := range newest {
			newestNames = append(newestNames, filepath.Base(f))
			g.Expect(listed).To(HaveKey(project+"/"+filepath.Base(f)), "the README lists every copy")
		}
		for _, f := range generated {
			generatedNames = append(generatedNames, filepath.Base(f))
		}
		g.Expect(newestNames).NotTo(BeEmpty())
		g.Expect(newestNames).To(Equal(generatedNames), "the newest %s CRDs replace the generated ones file for file (run hack/newest-crds.sh)", project)
	}
	g.Expect(listed).To(HaveLen(9))
}

// TestNewerAgentSpecFieldsFitTheNewestCRD: every field the tests write into Agents as a newer
// assisted-service's (and the providers must keep) is in the newest Agent CRD, with the value's type.
func TestNewerAgentSpecFieldsFitTheNewestCRD(t *testing.T) {
	g := NewWithT(t)
	g.Expect(NewerAgentSpecFields).To(HaveLen(2))
	for name, v := range NewerAgentSpecFields {
		g.Expect(ValidateNewest("agents.agent-install.openshift.io", v, "spec", name)).To(Succeed(), name)
	}
	g.Expect(ValidateNewest("agents.agent-install.openshift.io", NewerAgentSpec(map[string]any{"role": "worker", "approved": true}), "spec")).To(Succeed())
}

// TestValidateNewest: what ValidateNewest refuses, as the API server would refuse the write.
func TestValidateNewest(t *testing.T) {
	const (
		agents = "agents.agent-install.openshift.io"
		acis   = "agentclusterinstalls.extensions.hive.openshift.io"
	)
	for name, tc := range map[string]struct {
		crd   string
		value any
		path  []string
		want  string // a part of the error; "" for none
	}{
		"a string":                         {crd: agents, value: "bmc", path: []string{"spec", "fencingCredentialsSecretRef"}},
		"an object where a string is":      {crd: agents, value: map[string]any{"name": "bmc"}, path: []string{"spec", "fencingCredentialsSecretRef"}, want: "must be of type string"},
		"a field the CRD lacks":            {crd: agents, value: "x", path: []string{"spec", "fencingCredentials"}, want: "has no field"},
		"an unknown field inside a value":  {crd: acis, value: map[string]any{"name": "m", "namespace": "ns", "kind": "ConfigMap"}, path: []string{"spec", "mirrorRegistryRef"}, want: "unknown field"},
		"a required property missing":      {crd: acis, value: map[string]any{"name": "m"}, path: []string{"spec", "mirrorRegistryRef"}, want: "namespace: Required value"},
		"an int":                           {crd: acis, value: 1, path: []string{"spec", "provisionRequirements", "arbiterAgents"}},
		"below the minimum":                {crd: acis, value: int64(-1), path: []string{"spec", "provisionRequirements", "arbiterAgents"}, want: "greater than or equal to 0"},
		"a field removed (no value)":       {crd: acis, path: []string{"spec", "mirrorRegistryRef"}},
		"a value outside the enum":         {crd: acis, value: "Bogus", path: []string{"spec", "loadBalancer", "type"}, want: "Unsupported value"},
		"the items of an array":            {crd: acis, value: map[string]any{"cidr": "10.0.0.0/16"}, path: []string{"spec", "networking", "machineNetwork", "[]"}},
		"a whole object, unknown field":    {crd: acis, value: map[string]any{"apiVersion": "extensions.hive.openshift.io/v1beta1", "kind": "AgentClusterInstall", "metadata": map[string]any{"name": "a"}, "spec": map[string]any{"clusterDeploymentRef": map[string]any{"name": "c"}, "networking": map[string]any{}, "provisionRequirements": map[string]any{"controlPlaneAgents": 3}, "bogus": true}}, want: "spec.bogus"},
		"a whole object, required missing": {crd: acis, value: map[string]any{"apiVersion": "extensions.hive.openshift.io/v1beta1", "kind": "AgentClusterInstall", "metadata": map[string]any{"name": "a"}, "spec": map[string]any{"networking": map[string]any{}, "provisionRequirements": map[string]any{"controlPlaneAgents": 3}}}, want: "spec.clusterDeploymentRef: Required value"},
		"a kind that is not there":         {crd: "agents.example.com", value: "x", path: []string{"spec"}, want: "no CRD agents.example.com"},
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			err := ValidateNewest(tc.crd, tc.value, tc.path...)
			if tc.want == "" {
				g.Expect(err).NotTo(HaveOccurred())
				return
			}
			g.Expect(err).To(MatchError(ContainSubstring(tc.want)))
		})
	}
}

// TestNewestProbesTellTheNewestCRDs: each probe of UseNewestCRDs is an object the newest CRD takes
// and the generated one (of the pinned Go types) refuses: the API server that takes it serves
// the newest CRD.
func TestNewestProbesTellTheNewestCRDs(t *testing.T) {
	g := NewWithT(t)
	root, err := RepoRoot()
	g.Expect(err).NotTo(HaveOccurred())
	for name, p := range newestProbes("ns") {
		g.Expect(ValidateNewest(name, p)).To(Succeed(), "the newest %s takes its probe", name)
		var generated *apiextensionsv1.CustomResourceDefinition
		plural, group, _ := strings.Cut(name, ".")
		for _, project := range NewestCRDProjects {
			data, err := os.ReadFile(filepath.Join(root, ThirdPartyCRDDir, project, group+"_"+plural+".yaml"))
			if err == nil {
				generated = &apiextensionsv1.CustomResourceDefinition{}
				g.Expect(yaml.Unmarshal(data, generated)).To(Succeed())
			}
		}
		g.Expect(generated).NotTo(BeNil(), "the generated CRD %s", name)
		g.Expect(validateAgainst(generated, p)).NotTo(Succeed(), "the generated %s refuses the probe", name)
	}
}

// TestHypotheticalElementsAreAsTheNewestCRDsHaveThem: the elements HypotheticalElementField
// stands in for have, in the newest CRDs, the fields its comment says and not that one: no
// release has it yet.
func TestHypotheticalElementsAreAsTheNewestCRDsHaveThem(t *testing.T) {
	g := NewWithT(t)
	for _, tc := range []struct {
		crd  string
		path []string
		want []string
	}{
		{"agentclusterinstalls.extensions.hive.openshift.io", []string{"spec", "networking", "clusterNetwork"}, []string{"cidr", "hostPrefix"}},
		{"agentclusterinstalls.extensions.hive.openshift.io", []string{"spec", "networking", "machineNetwork"}, []string{"cidr"}},
		{"agentclusterinstalls.extensions.hive.openshift.io", []string{"spec", "manifestsConfigMapRefs"}, []string{"name"}},
		{"infraenvs.agent-install.openshift.io", []string{"spec", "kernelArguments"}, []string{"operation", "value"}},
	} {
		crd, err := NewestCRD(tc.crd)
		g.Expect(err).NotTo(HaveOccurred())
		s := crd.Spec.Versions[0].Schema.OpenAPIV3Schema
		for _, p := range tc.path {
			next := s.Properties[p]
			s = &next
		}
		g.Expect(s.Items).NotTo(BeNil(), "%v is an array", tc.path)
		var fields []string
		for f := range s.Items.Schema.Properties {
			fields = append(fields, f)
		}
		slices.Sort(fields)
		g.Expect(fields).To(Equal(tc.want), "the elements of %s %v", tc.crd, tc.path)
		g.Expect(ValidateNewest(tc.crd, nil, append(tc.path, "[]", HypotheticalElementField)...)).NotTo(Succeed())
	}
}

// TestNewestPaths: Options.NewestCRDs moves the paths of the generated assisted-service and Hive
// CRDs, folders or files, to the newest copies, and leaves the others.
func TestNewestPaths(t *testing.T) {
	g := NewWithT(t)
	root := "/repo"
	in := []string{
		"/repo/test/support/testenv/crds/assisted-service",
		"/repo/test/support/testenv/crds/hive/hive.openshift.io_clusterdeployments.yaml",
		"/repo/test/support/testenv/crds/cluster-api",
		"/repo/test/support/testenv/crds/hive-other",
		"/repo/controlplane/config/crd/bases",
	}
	g.Expect(newestPaths(root, in)).To(Equal([]string{
		"/repo/test/support/testenv/crds-newest/assisted-service",
		"/repo/test/support/testenv/crds-newest/hive/hive.openshift.io_clusterdeployments.yaml",
		"/repo/test/support/testenv/crds/cluster-api",
		"/repo/test/support/testenv/crds/hive-other",
		"/repo/controlplane/config/crd/bases",
	}))
}

// TestUseNewestCRDs: on an API server with the generated assisted-service and Hive CRDs,
// UseNewestCRDs serves the newest ones (its probes, objects only they take, are taken); the
// hypothetical element fields go on top of them and come off again; and its restore serves the
// generated ones again.
func TestUseNewestCRDs(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	s := runtime.NewScheme()
	g.Expect(apiextensionsv1.AddToScheme(s)).To(Succeed())
	env, err := StartWithOptions(Options{Scheme: s, CRDPaths: []string{ThirdPartyCRDDir + "/assisted-service", ThirdPartyCRDDir + "/hive"}})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { g.Expect(env.Stop()).To(Succeed()) }()
	const ns = "default"
	probes := newestProbes(ns)
	for name, p := range probes {
		g.Expect(probe(ctx, env.Client, p)).NotTo(Succeed(), "the generated %s refuses its probe", name)
	}

	restore, err := UseNewestCRDs(ctx, env.Client, ns)
	g.Expect(err).NotTo(HaveOccurred())
	for name, p := range probes {
		g.Expect(probe(ctx, env.Client, p)).To(Succeed(), "the newest %s takes its probe", name)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: "clusterdeployments.hive.openshift.io"}, crd)).To(Succeed())
	g.Expect(crd.Spec.Versions[0].AdditionalPrinterColumns).To(ContainElement(HaveField("JSONPath", ".metadata.labels.hive\\.openshift\\.io/version")),
		"the whole spec is the newest one's, not only its schema")

	restoreNetworks, err := AddHypotheticalNetworkEntryField(ctx, env.Client, ns)
	g.Expect(err).NotTo(HaveOccurred())
	restoreKernelArgs, err := AddHypotheticalKernelArgumentField(ctx, env.Client, ns)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(restoreKernelArgs(ctx)).To(Succeed())
	g.Expect(restoreNetworks(ctx)).To(Succeed())
	for name, p := range probes {
		g.Expect(probe(ctx, env.Client, p)).To(Succeed(), "the newest %s still takes its probe", name)
	}

	g.Expect(restore(ctx)).To(Succeed())
	for name, p := range probes {
		g.Expect(probe(ctx, env.Client, p)).NotTo(Succeed(), "the restored %s refuses its probe again", name)
	}
}
