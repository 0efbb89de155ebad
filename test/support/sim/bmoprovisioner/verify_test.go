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

package bmoprovisioner

import (
	"testing"

	"github.com/metal3-io/baremetal-operator/pkg/hardwareutils/bmc"
	. "github.com/onsi/gomega"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/inventory"
)

// TestVerificationError: a BMC accepts its own credentials only; one that does not exist answers
// nothing; a BMC without credentials accepts any.
func TestVerificationError(t *testing.T) {
	g := NewWithT(t)
	h := inventory.Generate("unit", 1, inventory.GenerateOptions{})[0]
	g.Expect(VerificationError("n", h.BMCAddress, h, bmc.Credentials{Username: "x"})).To(BeEmpty())
	h.BMCUsername, h.BMCPassword = "admin", "secret"
	g.Expect(VerificationError("n", h.BMCAddress, h, bmc.Credentials{Username: "admin", Password: "secret"})).To(BeEmpty())
	g.Expect(VerificationError("n", h.BMCAddress, h, bmc.Credentials{Username: "admin", Password: "other"})).To(
		Equal("Failed to get power state for node n. Error: Redfish exception occurred. Error: HTTP GET " + h.BMCAddress +
			" returned code 401. Base.1.0.GeneralError: Unauthorized"))
	g.Expect(VerificationError("n", "redfish://192.0.2.1/x", nil, bmc.Credentials{})).To(ContainSubstring("Unable to connect to redfish://192.0.2.1/x"))
}
