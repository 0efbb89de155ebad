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

// Command manager runs the infrastructure provider (AgentCluster, AgentMachine).
package main

import (
	infrav1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/infrastructure/v1beta1"
	setup "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/infrastructure/setup"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/manager"
)

// version is set at build time (make build-<provider> VERSION=...).
var version = "dev"

// The manager itself: the events its controllers record (events.k8s.io, in the namespaces of the
// objects they are about) and authenticated metrics (TokenReviews and SubjectAccessReviews).
// Leader election, its Lease and the core/v1 Events client-go records about it, is granted in the
// manager's own namespace only, by config/rbac/leader_election_role.yaml.
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create
// The hub's TLS security profile (manager.Options.FollowTLSProfile): APIServer "cluster" on OpenShift.
// +kubebuilder:rbac:groups=config.openshift.io,resources=apiservers,verbs=get;list;watch

func main() {
	manager.Main(version, setup.NewManagerOptions(), setup.Setup, infrav1.AddToScheme)
}
