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
	"context"
	"sync"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"
	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	"github.com/metal3-io/baremetal-operator/pkg/hardwareutils/bmc"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/inventory"
)

// Ironic's power states (ironic/common/states.py POWER_ON, POWER_OFF), as BMO reads them
// (pkg/provisioner/ironic/ironic.go powerOn, powerOff).
const (
	powerOn  = "power on"
	powerOff = "power off"
)

// node is what Ironic keeps of one host: its provision state, the state a running operation
// leads to, its power, its last error, its inspection data and what is deployed on it. Ironic's
// conductor runs provision-state changes asynchronously (ironic/conductor/manager.py: the API
// answers 202 and the node shows the transient state, "verifying", "inspect wait",
// "cleaning", "deploying", "wait call-back", "deleting", until the work is done): so does a
// node, one step of the factory's Step each. Its methods are called with mu held.
type node struct {
	mu sync.Mutex

	uuid string
	// name is BMO's node name, <namespace>~<name> (ironic.go ironicNodeName).
	name       string
	bmcAddress string
	// creds are the BMC credentials of the node's driver_info.
	creds bmc.Credentials
	// bootMAC is the address of the node's PXE-enabled port ("" when it has none); written and
	// read under the factory's mu.
	bootMAC string
	// host is the lab's machine at bmcAddress (nil: no BMC answers there).
	host *inventory.Host

	provisionState nodes.ProvisionState
	// target is the state the running operation leads to ("" when none runs).
	target      string
	power       string
	lastError   string
	maintenance bool
	// inventory is the inspection data (nil until an inspection completed).
	inventory *bmov1alpha1.HardwareDetails
	// automatedClean is the node's automated_clean; disablePowerOff its disable_power_off.
	automatedClean  bool
	disablePowerOff bool

	// What the node deploys or deployed: its instance_info (image_source or boot_iso) and the
	// config drive's user data.
	image    bmov1alpha1.Image
	bootMode bmov1alpha1.BootMode
	userData []byte

	// pending is the rest of the running operation, done at due.
	pending func()
	due     time.Time
	// outbox holds what the lab's hosts are told of what the node's operations did (a host
	// booted, was powered off or cleaned): sent by the next provisioner call, in order, and
	// kept when a receiver fails, to be sent again.
	outbox []func(context.Context, inventory.HostEvents) error
}

// settle completes the operations that are due by now.
func (n *node) settle(now time.Time) {
	for n.pending != nil && !now.Before(n.due) {
		f := n.pending
		n.pending = nil
		f()
	}
}

// start begins an operation: the node shows state (a transient state) with target, and then at
// now+step. A new operation clears the last error, as Ironic's does when a provision action
// starts; BMO relies on it (register.go asks "manage" again after a failed verification and
// then reads LastError as the new verification's).
func (n *node) start(now time.Time, step time.Duration, state nodes.ProvisionState, target string, then func()) {
	n.provisionState, n.target, n.lastError = state, target, ""
	n.pending, n.due = then, now.Add(step)
}

// chain continues the running operation in state for one more step (its finish comes after).
func (n *node) chain(state nodes.ProvisionState, step time.Duration, then func()) {
	n.provisionState = state
	n.pending, n.due = then, n.due.Add(step)
}

// finish ends the running operation in state.
func (n *node) finish(state nodes.ProvisionState) {
	n.provisionState, n.target = state, ""
}

// fail ends the running operation in state with msg as its last error.
func (n *node) fail(state nodes.ProvisionState, msg string) {
	n.provisionState, n.target, n.lastError = state, "", msg
}

// busy tells whether an operation runs (Ironic refuses a power change then, and BMO waits:
// ironic.go changePower "host in state that does not allow power change").
func (n *node) busy() bool { return n.target != "" }

// tell queues a message to the lab's hosts.
func (n *node) tell(f func(context.Context, inventory.HostEvents) error) {
	n.outbox = append(n.outbox, f)
}

// send delivers the queued messages, in order, stopping at the first that fails (it stays
// queued).
func (n *node) send(ctx context.Context, to inventory.HostEvents) error {
	for len(n.outbox) > 0 {
		if to != nil {
			if err := n.outbox[0](ctx, to); err != nil {
				return err
			}
		}
		n.outbox = n.outbox[1:]
	}
	return nil
}
