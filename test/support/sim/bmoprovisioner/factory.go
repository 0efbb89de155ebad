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

// Package bmoprovisioner is the lab's Ironic: a provisioner of the real baremetal-operator's
// (BMO v0.13.2, github.com/metal3-io/baremetal-operator pkg/provisioner) that plays each
// BareMetalHost's hardware, a host of the lab's inventory found by its BMC address, instead of
// driving Ironic. It models what BMO's Ironic provisioner (pkg/provisioner/ironic) sees of an
// Ironic node, state for state: registration verifies the BMC credentials, inspection reports
// the host's hardware, cleaning wipes its disk, a live ISO is inserted as virtual media and
// booted, a disk image is written with a config drive holding the user data, tear-down powers
// the host off and cleans it. Each host has a node of its own (BMO's fixture provisioner shares
// one state among all hosts), and the lab is told what the hosts boot (inventory.HostEvents), as
// the bare-metal simulator (test/support/sim/baremetal) tells it.
package bmoprovisioner

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"
	"github.com/metal3-io/baremetal-operator/pkg/hardwareutils/bmc"
	"github.com/metal3-io/baremetal-operator/pkg/provisioner"
	"k8s.io/utils/clock"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/inventory"
)

// Ironic's and BMO's delays (pkg/provisioner/ironic/ironic.go): how long BMO waits before it
// asks Ironic again about an operation that runs.
const (
	IronicProvisionRequeueDelay     = 10 * time.Second
	IronicDeprovisionRequeueDelay   = 10 * time.Second
	IronicPowerRequeueDelay         = 10 * time.Second
	IronicIntrospectionRequeueDelay = 15 * time.Second
)

// maxBusyHosts is BMO's default PROVISIONING_LIMIT (pkg/provisioner/ironic/factory.go): how many
// hosts may be inspected, cleaned or deployed at once when their BMC cannot boot an ISO.
const maxBusyHosts = 20

// Factory makes BMO's provisioners for the hosts of Inventory. It keeps one Ironic node per host.
type Factory struct {
	Inventory *inventory.Inventory
	// Hosts is told when a host boots a live ISO or a disk image, is powered off or is cleaned
	// (may be nil).
	Hosts inventory.HostEvents
	// Step is how long each asynchronous Ironic operation's step takes (default 100 ms).
	Step time.Duration
	// IronicPolling makes BMO wait as long as with Ironic between its questions about a running
	// operation (the Ironic*RequeueDelay constants); without it BMO asks again after Step.
	IronicPolling bool
	// LiveISOForcePersistentBootDevice is BMO's LIVE_ISO_FORCE_PERSISTENT_BOOT_DEVICE, which it
	// gives Ironic as driver_info.force_persistent_boot_device for a live ISO (ironic.go
	// setLiveIsoUpdateOptsForNode; "Default" when unset): with "Default" or "Always" the host
	// boots the virtual CD at every power-on, with "Never" at the first only.
	LiveISOForcePersistentBootDevice string
	// Clock defaults to the real clock.
	Clock clock.PassiveClock

	mu    sync.Mutex
	nodes map[string]*node // by UUID
	seq   int
}

var _ provisioner.Factory = &Factory{}

// NewProvisioner returns the provisioner BMO uses for one reconcile of one host.
func (f *Factory) NewProvisioner(_ context.Context, hostData provisioner.HostData, publish provisioner.EventPublisher) (provisioner.Provisioner, error) {
	if f.Inventory == nil {
		return nil, fmt.Errorf("the lab's provisioner needs an inventory")
	}
	return &hostProvisioner{f: f, data: hostData, publish: publish}, nil
}

func (f *Factory) step() time.Duration {
	if f.Step <= 0 {
		return 100 * time.Millisecond
	}
	return f.Step
}

// poll is how long BMO waits before asking again about an operation: ironic's delay, or a step.
func (f *Factory) poll(ironic time.Duration) time.Duration {
	if f.IronicPolling {
		return ironic
	}
	return f.step()
}

func (f *Factory) now() time.Time {
	if f.Clock == nil {
		return time.Now()
	}
	return f.Clock.Now()
}

// byID returns the node of UUID id, or nil.
func (f *Factory) byID(id string) *node {
	f.mu.Lock()
	defer f.mu.Unlock()
	if id == "" {
		return nil
	}
	return f.nodes[id]
}

// find returns the node named name, or nil; or, failing that, the node whose port has mac.
func (f *Factory) find(name, mac string) (byName, byMAC *node) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, n := range f.nodes {
		if n.name == name {
			return n, nil
		}
	}
	for _, n := range f.nodes {
		if mac != "" && n.bootMAC == mac {
			return nil, n
		}
	}
	return nil, nil
}

// enroll creates a node in Ironic's enroll state, powered off as far as Ironic knows.
func (f *Factory) enroll(name, address, mac string, creds bmc.Credentials) *node {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.nodes == nil {
		f.nodes = map[string]*node{}
	}
	f.seq++
	n := &node{
		uuid: fmt.Sprintf("00000000-0000-4000-8000-%012x", f.seq), name: name, bmcAddress: address,
		bootMAC: mac, creds: creds, host: f.Inventory.ByBMCAddress(address),
		provisionState: nodes.Enroll, power: powerOff,
	}
	f.nodes[n.uuid] = n
	return n
}

// remove deletes node id.
func (f *Factory) remove(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.nodes, id)
}

// busyNodes counts the nodes being inspected, cleaned or deployed (ironic.go loadBusyHosts: the
// nodes in those states whose boot interface is not virtual media), other than except.
func (f *Factory) busyNodes(except string) int {
	f.mu.Lock()
	all := make([]*node, 0, len(f.nodes))
	for _, n := range f.nodes {
		all = append(all, n)
	}
	f.mu.Unlock()
	busy := 0
	for _, n := range all {
		n.mu.Lock()
		switch n.provisionState {
		case nodes.Cleaning, nodes.CleanWait, nodes.Inspecting, nodes.InspectWait, nodes.Deploying, nodes.DeployWait, nodes.Deleting:
			if n.name != except && !virtualMedia(n.bmcAddress) {
				busy++
			}
		}
		n.mu.Unlock()
	}
	return busy
}

// setBootMAC gives node n a port of mac (ironic.go ensurePort); find reads it under f.mu.
func (f *Factory) setBootMAC(n *node, mac string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n.bootMAC == "" {
		n.bootMAC = mac
	}
}
