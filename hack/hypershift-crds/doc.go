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

// Package hypershiftcrds pins the API module from which `make manifests` generates the copy of
// the agent provider's CRDs that HyperShift installs (test/support/testenv/hypershift-crds).
//
// HyperShift's `hypershift install` applies its own copy of openshift/cluster-api-provider-agent's
// CRDs (cmd/install/assets/crds/cluster-api-provider-agent, labelled cluster.x-k8s.io/v1beta1):
// upstream's v1beta1 status shape (Cluster API v1beta1 conditions, a failure-domain map, a
// required status.clusterDeploymentReference). HyperShift pins the API module at
// v0.0.0-20260120122324-898e638ec7d1, which the module proxy here does not serve; the release
// pinned below has the same types, and Cluster API v1.10 gives its v1beta1 conditions the
// minLength rules that HyperShift's Cluster API v1.13 gives them. One difference remains:
// v1.10 requires host and port in spec.controlPlaneEndpoint, which v1.13 does not.
//
// It is a module of its own, outside go.work: its Cluster API release cannot sit beside ours.
package hypershiftcrds

import (
	_ "github.com/openshift/cluster-api-provider-agent/api/v1alpha1"
	_ "github.com/openshift/cluster-api-provider-agent/api/v1beta1"
)
