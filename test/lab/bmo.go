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

package lab

import (
	"fmt"
	"time"

	"github.com/metal3-io/baremetal-operator/inprocess"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/baremetal"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/bmoprovisioner"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/inventory"
)

// BareMetal is which bare-metal operator drives a lab's BareMetalHosts (Options.BareMetal).
type BareMetal string

const (
	// BareMetalSim (the default) is the lab's simulator of BMO, test/support/sim/baremetal.
	BareMetalSim BareMetal = "sim"
	// BareMetalReal is the real baremetal-operator, v0.13.2 (inprocess.Version): its
	// BareMetalHost, HostFirmwareSettings and HostFirmwareComponents controllers run in the
	// lab's core manager, with the lab's hosts as its Ironic (test/support/sim/bmoprovisioner).
	BareMetalReal BareMetal = "real"
)

// liveISOForcePersistentBootDevice is BMO's LIVE_ISO_FORCE_PERSISTENT_BOOT_DEVICE in the lab: as
// OpenShift's cluster-baremetal-operator runs BMO (the bare-metal simulator's default too).
const liveISOForcePersistentBootDevice = "Never"

// realisticIronicStep is how long each of Ironic's asynchronous steps takes at Realistic speed
// (virtual media and a ramdisk boot: tens of seconds; the research note's real Ironic took
// about 100 s per host to provisioned).
const realisticIronicStep = 20 * time.Second

// setupBareMetal runs the lab's bare-metal operator, as Options.BareMetal says, in core: it
// tells hosts what the lab's machines boot.
func (l *Lab) setupBareMetal(core ctrl.Manager, hosts inventory.HostEvents, copts controller.Options) error {
	switch l.opts.BareMetal {
	case "", BareMetalSim:
		bmh := &baremetal.Reconciler{Inventory: l.Inventory, Hosts: hosts, LiveISOPersistentBootDevice: liveISOForcePersistentBootDevice}
		if l.opts.Speed == Realistic {
			bmh.Durations = baremetal.RealisticDurations()
		}
		if err := bmh.SetupWithManager(core, copts); err != nil {
			return fmt.Errorf("setting up the bare-metal simulator: %w", err)
		}
		return nil
	case BareMetalReal:
		f := &bmoprovisioner.Factory{Inventory: l.Inventory, Hosts: hosts, LiveISOForcePersistentBootDevice: liveISOForcePersistentBootDevice}
		if l.opts.Speed == Realistic {
			f.Step, f.IronicPolling = realisticIronicStep, true
		}
		o := inprocess.Options{Concurrency: copts.MaxConcurrentReconciles, Log: ctrl.Log.WithName("baremetal-operator")}
		if err := inprocess.SetupBareMetalHost(core, f, o); err != nil {
			return fmt.Errorf("setting up the baremetal-operator %s: %w", inprocess.Version, err)
		}
		return nil
	}
	return fmt.Errorf("unknown bare-metal operator %q: want %q or %q", l.opts.BareMetal, BareMetalSim, BareMetalReal)
}
