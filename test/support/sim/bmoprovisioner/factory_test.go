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
	"testing"
	"time"

	"github.com/metal3-io/baremetal-operator/pkg/hardwareutils/bmc"
	"github.com/metal3-io/baremetal-operator/pkg/provisioner"
	. "github.com/onsi/gomega"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/inventory"
)

// TestNewProvisionerNeedsAnInventory: no inventory, no hosts to play.
func TestNewProvisionerNeedsAnInventory(t *testing.T) {
	g := NewWithT(t)
	_, err := (&Factory{}).NewProvisioner(context.Background(), provisioner.HostData{}, nil)
	g.Expect(err).To(MatchError(ContainSubstring("needs an inventory")))
}

// TestEnrollFindsTheHostByItsBMCAddress: each node plays the host at its BMC address, or none.
func TestEnrollFindsTheHostByItsBMCAddress(t *testing.T) {
	g := NewWithT(t)
	hosts := inventory.Generate("unit", 2, inventory.GenerateOptions{})
	f := &Factory{Inventory: inventory.New(hosts...)}
	a := f.enroll("ns~a", hosts[1].BMCAddress, hosts[1].BootMAC(), bmc.Credentials{})
	b := f.enroll("ns~b", "redfish://192.0.2.1/redfish/v1/Systems/none", "", bmc.Credentials{})
	g.Expect(a.host).To(BeIdenticalTo(hosts[1]))
	g.Expect(b.host).To(BeNil())
	g.Expect(a.uuid).NotTo(Equal(b.uuid))
	g.Expect(f.byID(a.uuid)).To(BeIdenticalTo(a))
	byName, byMAC := f.find("ns~a", "")
	g.Expect(byName).To(BeIdenticalTo(a))
	g.Expect(byMAC).To(BeNil())
	byName, byMAC = f.find("ns~c", hosts[1].BootMAC())
	g.Expect(byName).To(BeNil())
	g.Expect(byMAC).To(BeIdenticalTo(a))
	f.remove(a.uuid)
	g.Expect(f.byID(a.uuid)).To(BeNil())
}

// TestPolling: BMO asks again after a step, or after Ironic's delays.
func TestPolling(t *testing.T) {
	g := NewWithT(t)
	f := &Factory{}
	g.Expect(f.step()).To(Equal(100 * time.Millisecond))
	g.Expect(f.poll(IronicIntrospectionRequeueDelay)).To(Equal(100 * time.Millisecond))
	f.IronicPolling = true
	g.Expect(f.poll(IronicIntrospectionRequeueDelay)).To(Equal(15 * time.Second))
}

// TestBusyNodesCountsIPMIHostsAtWork: virtual-media hosts and idle ones are not counted.
func TestBusyNodesCountsIPMIHostsAtWork(t *testing.T) {
	g := NewWithT(t)
	f := &Factory{Inventory: inventory.New()}
	f.enroll("ns~a", "ipmi://192.168.122.1", "", bmc.Credentials{}).provisionState = "cleaning"
	f.enroll("ns~b", "ipmi://192.168.122.2", "", bmc.Credentials{}).provisionState = "active"
	f.enroll("ns~c", "redfish-virtualmedia://192.168.122.3/redfish/v1/Systems/c", "", bmc.Credentials{}).provisionState = "deploying"
	g.Expect(f.busyNodes("")).To(Equal(1))
	g.Expect(f.busyNodes("ns~a")).To(Equal(0))
}
