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

	. "github.com/onsi/ginkgo/v2"
	"k8s.io/utils/ptr"
	capie2e "sigs.k8s.io/cluster-api/test/e2e"
)

// Cluster API's own specs (v1.13.4), run as they are with this project's flavors, control-plane
// waiters and a management cluster per spec (UseStockEnv). Those that do not run here, and why:
//   - KCPAdoption, KCPRemediation, KCPMachineDeploymentRollout, KCPScaleIn, ClusterUpgrade
//     (conformance and runtime SDK), ClusterInPlaceUpdate, ClusterClassRollout, NodeDrainTimeout,
//     Scale and SelfHosted read or drive a KubeadmControlPlane;
//   - ClusterctlUpgrade installs released providers from their repositories on the internet;
//   - Autoscaler and K8SConformance run images on a workload cluster, which the lab's has no
//     kubelet to run;
//   - MachinePool: no provider here offers machine pools.

var _ = Describe("Cluster API's QuickStartSpec, default flavor: 3 control planes and 2 workers", Label(smokeLabel), func() {
	env := UseStockEnv(context.Background(), "quick-start")
	capie2e.QuickStartSpec(context.Background(), func() capie2e.QuickStartSpecInput {
		return capie2e.QuickStartSpecInput{
			E2EConfig: specInput.E2EConfig, ClusterctlConfigPath: specInput.ClusterctlConfigPath,
			BootstrapClusterProxy: env.Management.Proxy(), ArtifactFolder: env.ArtifactFolder, SkipCleanup: specInput.SkipCleanup,
			InfrastructureProvider:   env.InfrastructureProvider(),
			ControlPlaneMachineCount: ptr.To[int64](3), WorkerMachineCount: ptr.To[int64](2),
			ControlPlaneWaiters:     ControlPlaneWaiters(),
			PostNamespaceCreated:    env.PostNamespaceCreated(context.Background(), 5),
			PostMachinesProvisioned: env.ExpectInstalled(context.Background(), 3, 2),
		}
	})
})

var _ = Describe("Cluster API's QuickStartSpec, sno flavor", func() {
	env := UseStockEnv(context.Background(), "quick-start-sno")
	capie2e.QuickStartSpec(context.Background(), func() capie2e.QuickStartSpecInput {
		return capie2e.QuickStartSpecInput{
			E2EConfig: specInput.E2EConfig, ClusterctlConfigPath: specInput.ClusterctlConfigPath,
			BootstrapClusterProxy: env.Management.Proxy(), ArtifactFolder: env.ArtifactFolder, SkipCleanup: specInput.SkipCleanup,
			InfrastructureProvider: env.InfrastructureProvider(), Flavor: ptr.To("sno"),
			ControlPlaneMachineCount: ptr.To[int64](1), WorkerMachineCount: ptr.To[int64](0),
			ControlPlaneWaiters:     ControlPlaneWaiters(),
			PostNamespaceCreated:    env.PostNamespaceCreated(context.Background(), 1),
			PostMachinesProvisioned: env.ExpectInstalled(context.Background(), 1, 0),
		}
	})
})

var _ = Describe("Cluster API's QuickStartSpec, agent flavor: self-booted hosts, no Metal3", func() {
	env := UseStockEnv(context.Background(), "quick-start-agent")
	capie2e.QuickStartSpec(context.Background(), func() capie2e.QuickStartSpecInput {
		return capie2e.QuickStartSpecInput{
			E2EConfig: specInput.E2EConfig, ClusterctlConfigPath: specInput.ClusterctlConfigPath,
			BootstrapClusterProxy: env.Management.Proxy(), ArtifactFolder: env.ArtifactFolder, SkipCleanup: specInput.SkipCleanup,
			InfrastructureProvider: env.InfrastructureProvider(), Flavor: ptr.To("agent"),
			ControlPlaneMachineCount: ptr.To[int64](3), WorkerMachineCount: ptr.To[int64](2),
			ControlPlaneWaiters:     ControlPlaneWaiters(),
			PostNamespaceCreated:    env.PostNamespaceCreatedSelfBooted(context.Background(), 5),
			PostMachinesProvisioned: env.ExpectInstalled(context.Background(), 3, 2),
		}
	})
})

var _ = Describe("Cluster API's MachineDeploymentRemediationSpec", func() {
	env := UseStockEnv(context.Background(), "md-remediation")
	capie2e.MachineDeploymentRemediationSpec(context.Background(), func() capie2e.MachineDeploymentRemediationSpecInput {
		return capie2e.MachineDeploymentRemediationSpecInput{
			E2EConfig: specInput.E2EConfig, ClusterctlConfigPath: specInput.ClusterctlConfigPath,
			BootstrapClusterProxy: env.Management.Proxy(), ArtifactFolder: env.ArtifactFolder, SkipCleanup: specInput.SkipCleanup,
			InfrastructureProvider: env.InfrastructureProvider(),
			ControlPlaneWaiters:    ControlPlaneWaiters(),
			// One control plane, one worker, and the host that replaces the remediated worker.
			PostNamespaceCreated: env.PostNamespaceCreated(context.Background(), 3),
		}
	})
})

var _ = Describe("Cluster API's ClusterDeletionSpec", func() {
	env := UseStockEnv(context.Background(), "cluster-deletion-phases")
	capie2e.ClusterDeletionSpec(context.Background(), func() capie2e.ClusterDeletionSpecInput {
		return capie2e.ClusterDeletionSpecInput{
			E2EConfig: specInput.E2EConfig, ClusterctlConfigPath: specInput.ClusterctlConfigPath,
			BootstrapClusterProxy: env.Management.Proxy(), ArtifactFolder: env.ArtifactFolder, SkipCleanup: specInput.SkipCleanup,
			InfrastructureProvider:   env.InfrastructureProvider(),
			ControlPlaneMachineCount: ptr.To[int64](3), WorkerMachineCount: ptr.To[int64](2),
			ControlPlaneWaiters:   ControlPlaneWaiters(),
			PostNamespaceCreated:  env.PostNamespaceCreated(context.Background(), 5),
			ClusterDeletionPhases: DeletionPhases("OpenshiftAssistedControlPlane", "Metal3Cluster"),
			PostMachinesProvisioned: env.ExpectOwnerGraph(context.Background(), "MachineDeployment", "MachineSet", "Machine",
				"OpenshiftAssistedControlPlane", "Metal3Cluster", "Metal3Machine", "OpenshiftAssistedConfig"),
		}
	})
})

var _ = Describe("Cluster API's MachineDeploymentScaleSpec, ha flavor: 3 control planes", func() {
	env := UseStockEnv(context.Background(), "md-scale-ha")
	capie2e.MachineDeploymentScaleSpec(context.Background(), func() capie2e.MachineDeploymentScaleSpecInput {
		return capie2e.MachineDeploymentScaleSpecInput{
			E2EConfig: specInput.E2EConfig, ClusterctlConfigPath: specInput.ClusterctlConfigPath,
			BootstrapClusterProxy: env.Management.Proxy(), ArtifactFolder: env.ArtifactFolder, SkipCleanup: specInput.SkipCleanup,
			InfrastructureProvider: env.InfrastructureProvider(), Flavor: "ha",
			ControlPlaneWaiters: ControlPlaneWaiters(),
			// The spec scales the workers 1 -> 3 -> 1, then deletes their MachineDeployment with
			// foreground deletion, which the management cluster's garbage collector completes.
			PostNamespaceCreated: env.PostNamespaceCreated(context.Background(), 3+3),
		}
	})
})

// ClusterClassChangesSpec creates its cluster with one control-plane node and one worker from a
// ClusterClass: the sno-topology flavor (single-node OpenShift, the worker joins as a day-2 host).
// It then rebases the Cluster onto copies of the class (one in another namespace) and swaps the
// class's templates for modified copies, twice each: the control plane's Machines' drain timeout,
// which the control plane applies to its Machine in place (a single node cannot be rolled out),
// and the workers' NTP sources and Metal3 cleaning mode, which roll the worker out to new hosts.
var _ = Describe("Cluster API's ClusterClassChangesSpec, sno-topology flavor", func() {
	env := UseStockEnv(context.Background(), "clusterclass-changes")
	capie2e.ClusterClassChangesSpec(context.Background(), func() capie2e.ClusterClassChangesSpecInput {
		return capie2e.ClusterClassChangesSpecInput{
			E2EConfig: specInput.E2EConfig, ClusterctlConfigPath: specInput.ClusterctlConfigPath,
			BootstrapClusterProxy: env.Management.Proxy(), ArtifactFolder: env.ArtifactFolder, SkipCleanup: specInput.SkipCleanup,
			InfrastructureProvider: env.InfrastructureProvider(), Flavor: "sno-topology",
			ControlPlaneWaiters: ControlPlaneWaiters(),
			ModifyControlPlaneFields: map[string]any{
				"spec.machineTemplate.spec.deletion.nodeDrainTimeoutSeconds": int64(30),
			},
			ModifyMachineDeploymentBootstrapConfigTemplateFields: map[string]any{
				"spec.template.spec.additionalNTPSources": []any{"ntp.lab.example.com"},
			},
			ModifyMachineDeploymentInfrastructureMachineTemplateFields: map[string]any{
				"spec.template.spec.automatedCleaningMode": "disabled",
			},
			// The node, the worker, and a host for each of the worker's four rollouts.
			PostNamespaceCreated: env.PostNamespaceCreated(context.Background(), 1+1+4),
		}
	})
})
