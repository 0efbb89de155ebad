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

// Package sim holds the simulators of the lab: controller-runtime reconcilers that stand in for
// the components that need hardware or OpenShift itself, following their state machines and
// names so that the providers cannot tell them from the real thing through the API.
//
//   - inventory: the hosts of the lab (CPU, memory, NICs, disks, system UUID).
//   - baremetal: the bare-metal operator (BareMetalHost registering → … → provisioned).
//   - assisted: assisted-service (InfraEnv ISO, Agents, AgentClusterInstall, ClusterDeployment,
//     the workload cluster's kubeconfig and Nodes).
//   - cvo: the cluster-version operator of the workload cluster (ClusterVersion, with the
//     installation's capabilities).
//   - etcd: cluster-etcd-operator and the etcd members of the workload cluster.
//   - machineapi: what the installer leaves of Machine API on platform baremetal with the MachineAPI
//     capability (the master machine.openshift.io Machines), and cluster-etcd-operator's view of it.
//
// Every step's duration is a setting, and faults can be injected at run time.
package sim
