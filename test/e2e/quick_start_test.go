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

var _ = Describe("When following the quick start with 3 control-plane nodes and 2 workers", Label(smokeLabel), func() {
	QuickStartSpec(context.Background(), func() QuickStartSpecInput {
		return QuickStartSpecInput{SpecInput: specInput, ControlPlanes: 3, Workers: 2}
	})
})

var _ = Describe("When following the quick start with single-node OpenShift (sno flavor)", func() {
	QuickStartSpec(context.Background(), func() QuickStartSpecInput {
		return QuickStartSpecInput{SpecInput: specInput, Flavor: "sno", ControlPlanes: 1, Workers: 0}
	})
})
