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

// Package controllers holds the bootstrap provider's OpenshiftAssistedConfig reconciler: it
// creates the InfraEnv, hands its discovery ISO to the Metal3Machine, approves and labels the
// Machine's Agent and writes the bootstrap data Secret. Its envtest suite, which runs the provider
// through its setup package as main.go does, is beside it.
package controllers
