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

// Package lab runs a simulated bare-metal lab in one process: a real management API server with
// Cluster API's and CAPM3's own controllers, this repository's three providers, and simulators
// only for what needs hardware or OpenShift itself (BareMetalHosts, assisted-service, the
// cluster-version operator), plus a second API server that plays the workload cluster.
package lab
