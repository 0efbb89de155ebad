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

package etcd

import (
	"context"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/client-go/rest"
)

// Connector opens an etcd client to the member that runs on one control-plane node of a
// workload cluster. The client talks to that member only (one endpoint, no endpoint sync), so
// that the caller knows which member answers. The caller closes the client.
//
// In production (PortForwarder) the connection is a port-forward, through the workload
// cluster's API server, to the hostNetwork pod openshift-etcd/etcd-<node> on port 2379, with
// the client certificate cluster-etcd-operator issues for etcdctl. The lab connects to the etcd
// processes it runs for each simulated node.
type Connector interface {
	// Connect returns a client of the member on node. workload reaches the workload cluster's
	// API server as the control-plane provider does (Cluster API's ClusterCache).
	Connect(ctx context.Context, workload *rest.Config, node string) (*clientv3.Client, error)
}
