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

// Package etcd reads and changes the etcd membership of an OpenShift workload cluster from the
// management cluster, as Cluster API's KubeadmControlPlane does for kubeadm clusters
// (sigs.k8s.io/cluster-api controlplane/kubeadm/internal/workload_cluster_etcd.go): list the
// members and their health, move leadership away from a member, remove a member. Only the way
// to reach one member (Connector) differs between production and the lab.
package etcd
