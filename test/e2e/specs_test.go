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
)

var _ = Describe("When scaling a MachineDeployment out and in", func() {
	MachineDeploymentScaleSpec(context.Background(), func() MachineDeploymentScaleSpecInput {
		return MachineDeploymentScaleSpecInput{SpecInput: specInput}
	})
})

var _ = Describe("When scaling the control plane from 3 to 5 and back", func() {
	ControlPlaneScaleSpec(context.Background(), func() ControlPlaneScaleSpecInput {
		return ControlPlaneScaleSpecInput{SpecInput: specInput}
	})
})

var _ = Describe("When upgrading the OpenShift version", func() {
	ClusterUpgradeSpec(context.Background(), func() ClusterUpgradeSpecInput {
		return ClusterUpgradeSpecInput{SpecInput: specInput}
	})
})

var _ = Describe("When deleting a cluster", func() {
	ClusterDeletionSpec(context.Background(), func() ClusterDeletionSpecInput {
		return ClusterDeletionSpecInput{SpecInput: specInput}
	})
})

// Not a smoke spec: it checks the suite's own failure reports, which make test-e2e's specs need,
// and waits 20 s for a cluster that cannot install; make test runs no spec that would fail so.
var _ = Describe("When a spec fails", func() {
	ArtifactsSelfCheckSpec(context.Background(), func() ArtifactsSelfCheckSpecInput {
		return ArtifactsSelfCheckSpecInput{SpecInput: specInput}
	})
})
