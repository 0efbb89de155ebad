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

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// ArtifactsSelfCheckSpecInput is the input of ArtifactsSelfCheckSpec.
type ArtifactsSelfCheckSpecInput struct {
	SpecInput
}

// ArtifactsSelfCheckSpec checks that a failed spec can be read without rerunning it: it creates a
// cluster that cannot install (its namespace has no hosts), lets the wait for it fail as a spec
// would, runs what TearDown runs for a failed spec, and checks that the artifacts folder holds the
// resource dumps (the Cluster, its control plane and infrastructure, as YAML), the machines' logs,
// the namespace's events and the providers' logs of that spec.
func ArtifactsSelfCheckSpec(ctx context.Context, inputGetter func() ArtifactsSelfCheckSpecInput) {
	const specName = "artifacts-self-check"
	var (
		input ArtifactsSelfCheckSpecInput
		spec  *SpecEnv
	)
	BeforeEach(func() {
		input = inputGetter()
		spec = SetupSpec(ctx, specName, input.SpecInput)
		DeferCleanup(func() { spec.TearDown(ctx) })
	})

	It("keeps the resource dumps and the providers' logs of a failed spec in the artifacts folder", func() {
		const name = "no-hosts"
		By("Creating a cluster whose namespace has no hosts, and letting the wait for it fail")
		failure := InterceptGomegaFailure(func() {
			CreateClusterAndWait(ctx, *spec, ClusterSpec{Name: name, ControlPlanes: 3, Workers: 1,
				OpenShiftVersion: input.E2EConfig.MustGetVariable("OPENSHIFT_VERSION")})
		})
		Expect(failure).To(HaveOccurred(), "a cluster without hosts cannot install")
		Expect(failure.Error()).To(ContainSubstring(name))

		By("Dumping what TearDown dumps for a failed spec")
		spec.DumpResourcesAndLogs(ctx)

		mgmt := spec.Management.Proxy().GetName()
		resources := filepath.Join(spec.ArtifactFolder, "clusters", mgmt, "resources", spec.Namespace.Name)
		for _, kind := range []string{"Cluster", "OpenshiftAssistedControlPlane", "Metal3Cluster"} {
			Expect(nonEmptyFile(filepath.Join(resources, kind, name+".yaml"))).To(Succeed(), "dump of the %s", kind)
		}
		Expect(nonEmptyFile(filepath.Join(resources, "events.log"))).To(Succeed(), "the namespace's events")
		machineDumps, err := filepath.Glob(filepath.Join(resources, "Machine", name+"-*.yaml"))
		Expect(err).NotTo(HaveOccurred())
		Expect(machineDumps).NotTo(BeEmpty(), "dumps of the Machines")
		machineLogs, err := filepath.Glob(filepath.Join(spec.ArtifactFolder, "clusters", name, "machines", "*", "metal3machine.yaml"))
		Expect(err).NotTo(HaveOccurred())
		Expect(machineLogs).To(HaveLen(len(machineDumps)), "a log folder per Machine, with its Metal3Machine")
		Expect(filepath.Join(spec.ArtifactFolder, "clusters", name, "infrastructure", "baremetalhosts.txt")).
			To(BeAnExistingFile(), "the table of the namespace's hosts")

		By("Checking the providers' logs")
		logs, err := spec.Management.ProviderLogs()
		Expect(err).NotTo(HaveOccurred())
		Expect(logs).NotTo(BeEmpty())
		var all []byte
		for _, l := range logs {
			Expect(nonEmptyFile(l)).To(Succeed())
			raw, err := os.ReadFile(l)
			Expect(err).NotTo(HaveOccurred())
			all = append(all, raw...)
		}
		// The bootstrap and control-plane providers reconciled the cluster's objects and said so.
		Expect(string(all)).To(ContainSubstring(`controller="openshiftassistedcontrolplane"`))
		Expect(string(all)).To(ContainSubstring(`controller="openshiftassistedconfig"`))
		Expect(string(all)).To(ContainSubstring(spec.Namespace.Name))
	})
}

// nonEmptyFile fails unless path is a file with content.
func nonEmptyFile(path string) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	if info.IsDir() || info.Size() == 0 {
		return &os.PathError{Op: "check", Path: path, Err: os.ErrNotExist}
	}
	return nil
}
