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

// Package agentconfig names what the bootstrap provider's OpenshiftAssistedConfig leaves for the
// infrastructure provider: the config kind a Machine refers to and the label the config puts on
// the Agent it recognized as its host. The infrastructure provider reads them without depending
// on the bootstrap provider's module.
package agentconfig

const (
	// Group is the API group of the bootstrap provider's OpenshiftAssistedConfig.
	Group = "bootstrap.cluster.x-k8s.io"
	// Kind is the kind of a Machine's bootstrap config when this project's bootstrap provider
	// prepares its host.
	Kind = "OpenshiftAssistedConfig"
	// AgentLabel is set by the bootstrap provider on the Agent it recognized as a config's host;
	// its value is the config's name, in the Agent's namespace. It is removed when the Agent is
	// released.
	AgentLabel = Group + "/openshiftassistedconfig"
)
