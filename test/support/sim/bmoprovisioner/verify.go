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
	"fmt"

	"github.com/metal3-io/baremetal-operator/pkg/hardwareutils/bmc"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/inventory"
)

// VerificationError is why Ironic's verification of a node's BMC fails, "" when it passes
// (ironic/conductor/verify.py do_node_verify: the power interface's validate and
// get_power_state): no BMC answering at address (host nil), or a BMC that refuses creds. The
// messages are Ironic's for a Redfish BMC (ironic/drivers/modules/redfish/utils.py get_system:
// "Redfish connection failed for node ..."; sushy's AccessError: "HTTP GET ... returned code
// 401"), wrapped as the conductor wraps them ("Failed to get power state for node ..."); BMO
// shows them as the host's registration error. node names the node (Ironic's UUID).
func VerificationError(node, address string, host *inventory.Host, creds bmc.Credentials) string {
	switch {
	case host == nil:
		return fmt.Sprintf("Failed to get power state for node %s. Error: Redfish connection failed for node %s: "+
			"Unable to connect to %s. Error: connection refused", node, node, address)
	case host.BMCUsername != "" && (creds.Username != host.BMCUsername || creds.Password != host.BMCPassword):
		return fmt.Sprintf("Failed to get power state for node %s. Error: Redfish exception occurred. "+
			"Error: HTTP GET %s returned code 401. Base.1.0.GeneralError: Unauthorized", node, address)
	}
	return ""
}
