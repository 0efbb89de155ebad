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

// Package controllers holds the infrastructure provider's reconcilers: AgentCluster (the
// ClusterDeployment the Agents bind to), AgentMachine (claims an approved, healthy Agent for a
// Machine, binds it, and releases it on deletion; files agentmachine_{controller,claim,delete,
// status,setup}.go by phase) and the Node providerID controller. Their envtest suites, which run
// the provider through its setup package as main.go does, are beside them.
package controllers
