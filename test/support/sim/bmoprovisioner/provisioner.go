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
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"
	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	"github.com/metal3-io/baremetal-operator/pkg/hardwareutils/bmc"
	"github.com/metal3-io/baremetal-operator/pkg/provisioner"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/inventory"
)

// hostProvisioner is BMO's provisioner for one reconcile of one host (BMO makes one per
// reconcile, from the host's data: ironic.go's ironicProvisioner). Its methods follow those of
// pkg/provisioner/ironic at v0.13.2, named in each comment, over the host's node.
type hostProvisioner struct {
	f       *Factory
	data    provisioner.HostData
	publish provisioner.EventPublisher
}

var _ provisioner.Provisioner = &hostProvisioner{}

// The results of BMO's Ironic provisioner (pkg/provisioner/ironic/result.go).
func operationContinuing(delay time.Duration) (provisioner.Result, error) {
	return provisioner.Result{Dirty: true, RequeueAfter: delay}, nil
}

func operationComplete() (provisioner.Result, error) { return provisioner.Result{}, nil }

func operationFailed(msg string) (provisioner.Result, error) {
	return provisioner.Result{ErrorMessage: msg}, nil
}

func transientError(err error) (provisioner.Result, error) { return provisioner.Result{}, err }

// nodeName is BMO's name of the host's node (ironic.go ironicNodeName).
func (p *hostProvisioner) nodeName() string {
	return p.data.ObjectMeta.Namespace + "~" + p.data.ObjectMeta.Name
}

// node returns the host's node, locked and settled, with unlock; provisioner.ErrNeedsRegistration
// when Ironic has none of that ID (ironic.go getNode).
func (p *hostProvisioner) node() (*node, func(), error) {
	n := p.f.byID(p.data.ProvisionerID)
	if n == nil {
		return nil, nil, provisioner.ErrNeedsRegistration
	}
	n.mu.Lock()
	n.settle(p.f.now())
	return n, n.mu.Unlock, nil
}

// deliver tells the lab what the node's operations did to its host.
func (p *hostProvisioner) deliver(ctx context.Context, n *node) error {
	if err := n.send(ctx, p.f.Hosts); err != nil {
		return fmt.Errorf("telling the lab what host %s did: %w", n.name, err)
	}
	return nil
}

// TryInit: Ironic is up.
func (p *hostProvisioner) TryInit(context.Context) (bool, error) { return true, nil }

// HasCapacity is ironic.go HasCapacity: a host whose BMC boots ISOs always has a slot; others
// share PROVISIONING_LIMIT.
func (p *hostProvisioner) HasCapacity(context.Context) (bool, error) {
	if virtualMedia(p.data.BMCAddress) {
		return true, nil
	}
	return p.f.busyNodes(p.nodeName()) < maxBusyHosts, nil
}

// PreprovisioningImageFormats: BMO runs without a preprovisioning image builder, as the lab's
// Ironic boots its own deploy ISO (ironic.go: nil unless havePreprovImgBuilder).
func (p *hostProvisioner) PreprovisioningImageFormats(context.Context) ([]bmov1alpha1.ImageFormat, error) {
	return nil, nil
}

// Register is register.go Register: the node is enrolled (the "Registered" event), then moved to
// manageable, which makes Ironic verify the BMC: a BMC that does not answer, or refuses the
// credentials, leaves the node in enroll with the reason as its last error, which BMO reports
// as a registration error.
func (p *hostProvisioner) Register(ctx context.Context, data provisioner.ManagementAccessData, credentialsChanged, restartOnFailure bool) (provisioner.Result, string, error) {
	access, err := bmc.NewAccessDetails(p.data.BMCAddress, p.data.DisableCertificateVerification)
	if err != nil {
		r, err := operationFailed(err.Error())
		return r, "", err
	}
	if data.BootMode == bmov1alpha1.UEFISecureBoot && !access.SupportsSecureBoot() {
		r, err := operationFailed(fmt.Sprintf("BMC driver %s does not support secure boot", access.Type()))
		return r, "", err
	}

	n := p.f.byID(p.data.ProvisionerID)
	if n == nil {
		byName, byMAC := p.f.find(p.nodeName(), p.data.BootMACAddress)
		if byMAC != nil {
			// ironic.go findExistingHost: a port of that MAC belongs to another host's node.
			r, err := operationFailed(fmt.Sprintf("MAC address %s conflicts with existing node %s", p.data.BootMACAddress, byMAC.name))
			return r, "", err
		}
		n = byName
	}
	if access.NeedsMAC() && p.data.BootMACAddress == "" {
		r, err := operationFailed(fmt.Sprintf("BMC driver %s requires a BootMACAddress value", access.Type()))
		return r, "", err
	}
	if n == nil {
		n = p.f.enroll(p.nodeName(), p.data.BMCAddress, p.data.BootMACAddress, p.data.BMCCredentials)
		p.publish("Registered", "Registered new host")
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	now := p.f.now()
	n.settle(now)
	if credentialsChanged || n.bmcAddress != p.data.BMCAddress {
		// register.go: driver_info follows new credentials or a new address.
		n.creds, n.bmcAddress, n.host = p.data.BMCCredentials, p.data.BMCAddress, p.f.Inventory.ByBMCAddress(p.data.BMCAddress)
	}
	if p.data.BootMACAddress != "" {
		p.f.setBootMAC(n, p.data.BootMACAddress)
	}
	n.disablePowerOff = data.DisablePowerOff

	switch n.provisionState {
	case nodes.Enroll:
		if n.lastError != "" && !credentialsChanged && !restartOnFailure {
			r, err := operationFailed(n.lastError)
			return r, n.uuid, err
		}
		if !n.busy() {
			n.start(now, p.f.step(), nodes.Verifying, string(nodes.Manageable), func() { p.verified(n) })
		}
		r, err := operationContinuing(p.f.poll(IronicProvisionRequeueDelay))
		return r, n.uuid, err
	case nodes.Verifying:
		r, err := operationContinuing(p.f.poll(IronicProvisionRequeueDelay))
		return r, n.uuid, err
	case nodes.CleanWait, nodes.Cleaning, nodes.DeployWait, nodes.Deploying, nodes.Inspecting:
		r, err := operationComplete()
		return r, n.uuid, err
	}
	// configureNode: automated_clean and the boot mode follow the host.
	n.automatedClean = data.AutomatedCleaningMode != bmov1alpha1.CleaningModeDisabled
	if data.BootMode != "" {
		n.bootMode = data.BootMode
	}
	if err := p.deliver(ctx, n); err != nil {
		return provisioner.Result{}, n.uuid, err
	}
	r, err := operationComplete()
	return r, n.uuid, err
}

// verified ends Ironic's verification of the node's BMC (VerificationError): manageable, or back
// to enroll with why.
func (p *hostProvisioner) verified(n *node) {
	if msg := VerificationError(n.uuid, n.bmcAddress, n.host, n.creds); msg != "" {
		n.fail(nodes.Enroll, msg)
		return
	}
	n.finish(nodes.Manageable)
	if h := n.host; h.Running() != "" || h.RunsDisk() {
		n.power = powerOn
	}
}

// InspectHardware is inspecthardware.go InspectHardware: the node, manageable, is inspected
// (its ramdisk boots from virtual media, reports the host's hardware, and the host is powered
// off), then BMO reads the inventory Ironic stored.
func (p *hostProvisioner) InspectHardware(ctx context.Context, _ provisioner.InspectData, restartOnFailure, refresh, _ bool) (provisioner.Result, bool, *bmov1alpha1.HardwareDetails, error) {
	n, unlock, err := p.node()
	if err != nil {
		r, err := transientError(err)
		return r, false, nil, err
	}
	defer unlock()
	switch n.provisionState {
	case nodes.Available:
		r, err := p.changeState(n, nodes.Manageable)
		return r, false, nil, err
	case nodes.InspectWait, nodes.Inspecting:
		r, err := operationContinuing(p.f.poll(IronicIntrospectionRequeueDelay))
		return r, false, nil, err
	case nodes.InspectFail:
		if !restartOnFailure {
			msg := n.lastError
			if msg == "" {
				msg = "Inspection failed"
			}
			r, err := operationFailed(msg)
			return r, false, nil, err
		}
		refresh = true
	case nodes.Manageable:
	default:
		r, err := transientError(fmt.Errorf("unexpected provision state %s", n.provisionState))
		return r, false, nil, err
	}
	if refresh || n.inventory == nil {
		p.startInspection(n)
		p.publish("InspectionStarted", "Hardware inspection started")
		r, err := operationContinuing(p.f.poll(IronicProvisionRequeueDelay))
		return r, true, nil, err
	}
	if err := p.deliver(ctx, n); err != nil {
		r, err := transientError(err)
		return r, false, nil, err
	}
	p.publish("InspectionComplete", "Hardware inspection completed")
	return provisioner.Result{}, false, n.inventory.DeepCopy(), nil
}

// startInspection is Ironic's agent inspection: the deploy ramdisk boots from the virtual CD
// (inspecting, then inspect wait until the ramdisk reports), the host's hardware is recorded
// and the host powered off.
func (p *hostProvisioner) startInspection(n *node) {
	step := p.f.step()
	n.start(p.f.now(), step, nodes.Inspecting, string(nodes.Manageable), func() {
		n.power = powerOn
		if n.host != nil {
			n.host.InsertMedia(deployISO, n.bootMode != bmov1alpha1.Legacy, inventory.OverrideOnce)
			n.host.PowerOn()
		}
		n.chain(nodes.InspectWait, step, func() {
			if n.host != nil {
				n.inventory = n.host.HardwareDetails()
				p.powerOffHost(n)
				n.host.EjectMedia()
			}
			n.finish(nodes.Manageable)
		})
	})
}

// deployISO names the deploy ramdisk ISO Ironic boots hosts into for inspection and cleaning: not
// a discovery ISO, so the lab's assisted-service is not told.
const deployISO = "http://ironic.lab/images/ironic-python-agent.iso"

// UpdateHardwareState is ironic.go UpdateHardwareState: the node's power. It is also where the
// lab hears, on every steady-state pass, what a powered-on host runs (the simulator tells it on
// every pass too: the receiver is idempotent and may have failed before).
func (p *hostProvisioner) UpdateHardwareState(ctx context.Context) (provisioner.HardwareState, error) {
	n, unlock, err := p.node()
	if err != nil {
		return provisioner.HardwareState{}, err
	}
	defer unlock()
	on := n.power == powerOn
	if on && !n.busy() {
		p.tellRunning(n)
	}
	if err := p.deliver(ctx, n); err != nil {
		return provisioner.HardwareState{}, err
	}
	return provisioner.HardwareState{PoweredOn: &on}, nil
}

// tellRunning queues the news of what the host runs: the live ISO of its virtual CD, or the
// disk image deployed with its config drive.
func (p *hostProvisioner) tellRunning(n *node) {
	h := n.host
	if h == nil {
		return
	}
	if iso := h.Running(); iso != "" && iso != deployISO {
		n.tell(func(ctx context.Context, e inventory.HostEvents) error {
			return e.Booted(ctx, inventory.Boot{Host: h, ISOURL: iso})
		})
	}
	if image, userData := h.RunningDiskImage(); image != "" {
		n.tell(func(ctx context.Context, e inventory.HostEvents) error {
			return e.Booted(ctx, inventory.Boot{Host: h, DiskImageURL: image, UserData: userData})
		})
	}
}

// Adopt is ironic.go Adopt: a registered node of a host that is already provisioned (BMO's
// status says so: a host moved, detached and attached again, or externally provisioned) goes
// from manageable to active without touching the host.
func (p *hostProvisioner) Adopt(_ context.Context, data provisioner.AdoptData, restartOnFailure bool) (provisioner.Result, error) {
	n, unlock, err := p.node()
	if err != nil {
		return transientError(err)
	}
	defer unlock()
	switch n.provisionState {
	case nodes.Enroll, nodes.Verifying:
		return transientError(fmt.Errorf("invalid state for adopt: %s", n.provisionState))
	case nodes.Manageable:
		if data.State == bmov1alpha1.StateDeprovisioning {
			return operationComplete()
		}
		n.start(p.f.now(), p.f.step(), nodes.Adopting, string(nodes.Active), func() { n.finish(nodes.Active) })
		return operationContinuing(p.f.poll(IronicProvisionRequeueDelay))
	case nodes.Adopting:
		return operationContinuing(p.f.poll(IronicProvisionRequeueDelay))
	case nodes.AdoptFail:
		if restartOnFailure {
			n.start(p.f.now(), p.f.step(), nodes.Adopting, string(nodes.Active), func() { n.finish(nodes.Active) })
			return operationContinuing(p.f.poll(IronicProvisionRequeueDelay))
		}
		return operationFailed("Host adoption failed: " + n.lastError)
	case nodes.Active:
		if n.maintenance && data.State != bmov1alpha1.StateDeleting {
			n.maintenance = false
			return operationContinuing(0)
		}
	}
	return operationComplete()
}

// Prepare is ironic.go Prepare: manual cleaning when BMO asks for RAID or firmware changes,
// which the lab's hosts do not have (refused: no spec uses them); nothing to do otherwise.
func (p *hostProvisioner) Prepare(_ context.Context, data provisioner.PrepareData, unprepared, _ bool) (provisioner.Result, bool, error) {
	n, unlock, err := p.node()
	if err != nil {
		r, err := transientError(err)
		return r, false, err
	}
	defer unlock()
	switch n.provisionState {
	case nodes.Available, nodes.Manageable:
		if unprepared && hasCleanSteps(data) {
			r, err := operationFailed("the lab's hosts have no RAID controller or firmware settings to configure")
			return r, false, err
		}
		r, err := operationComplete()
		return r, unprepared, err
	case nodes.Cleaning, nodes.CleanWait:
		r, err := operationContinuing(p.f.poll(IronicProvisionRequeueDelay))
		return r, false, err
	}
	r, err := transientError(fmt.Errorf("have unexpected ironic node state %s", n.provisionState))
	return r, false, err
}

// hasCleanSteps tells whether Prepare would give Ironic manual clean steps (ironic.go
// buildManualCleaningSteps: RAID, firmware settings or components).
func hasCleanSteps(d provisioner.PrepareData) bool {
	raid := d.TargetRAIDConfig != nil && (len(d.TargetRAIDConfig.HardwareRAIDVolumes) > 0 || len(d.TargetRAIDConfig.SoftwareRAIDVolumes) > 0)
	return raid || d.FirmwareConfig != nil || len(d.TargetFirmwareSettings) > 0 || len(d.TargetFirmwareComponents) > 0
}

// Service is ironic.go Service for a provisioned host: nothing to change; changes are refused as
// in Prepare.
func (p *hostProvisioner) Service(_ context.Context, data provisioner.ServicingData, unprepared, _ bool) (provisioner.Result, bool, error) {
	if unprepared && (data.FirmwareConfig != nil || len(data.TargetFirmwareSettings) > 0 || len(data.TargetFirmwareComponents) > 0) {
		r, err := operationFailed("the lab's hosts have no firmware settings or components to update")
		return r, false, err
	}
	r, err := operationComplete()
	return r, false, err
}

// changeState starts the move of the node to state (manage, provide) and says to come back.
func (p *hostProvisioner) changeState(n *node, state nodes.ProvisionState) (provisioner.Result, error) {
	switch state {
	case nodes.Manageable:
		n.start(p.f.now(), p.f.step(), nodes.Verifying, string(state), func() { p.verified(n) })
	case nodes.Available:
		p.provide(n)
	}
	return operationContinuing(p.f.poll(IronicProvisionRequeueDelay))
}

// provide is Ironic's "provide": automated cleaning when the node has it (the disk's metadata
// wiped: the host's disk holds nothing bootable afterwards), then available.
func (p *hostProvisioner) provide(n *node) {
	if !n.automatedClean {
		n.finish(nodes.Available)
		n.lastError = ""
		return
	}
	p.clean(n, p.f.now(), nodes.Available)
}

// clean runs automated cleaning: the deploy ramdisk boots, wipes the disk, and the host is
// powered off; the node ends in state.
func (p *hostProvisioner) clean(n *node, now time.Time, state nodes.ProvisionState) {
	step := p.f.step()
	n.start(now, step, nodes.Cleaning, string(state), func() {
		n.power = powerOn
		n.chain(nodes.CleanWait, step, func() {
			if h := n.host; h != nil {
				h.Deprovision()
				n.tell(func(ctx context.Context, e inventory.HostEvents) error { return e.Deprovisioned(ctx, h) })
			}
			n.power = powerOff
			n.finish(state)
		})
	})
}

// Provision is ironic.go Provision: an available node gets the image (setUpForProvisioning:
// "ProvisioningStarted"), and is deployed with the config drive; BMO polls until it is active
// ("ProvisioningComplete").
func (p *hostProvisioner) Provision(ctx context.Context, data provisioner.ProvisionData, forceReboot bool) (provisioner.Result, error) {
	n, unlock, err := p.node()
	if err != nil {
		return transientError(err)
	}
	defer unlock()
	if data.Image.URL != "" {
		// provision.go validateProvisionData.
		if _, _, err := data.Image.GetChecksum(); err != nil {
			return operationFailed("Validation failed: " + err.Error())
		}
	}
	switch n.provisionState {
	case nodes.DeployFail:
		if n.image.URL == data.Image.URL && n.lastError != "" {
			return operationFailed("Image provisioning failed: " + n.lastError)
		}
		return p.deploy(ctx, n, data)
	case nodes.Manageable:
		return p.changeState(n, nodes.Available)
	case nodes.CleanFail:
		return p.changeState(n, nodes.Manageable)
	case nodes.Available:
		return p.deploy(ctx, n, data)
	case nodes.Active:
		if err := p.deliver(ctx, n); err != nil {
			return transientError(err)
		}
		p.publish("ProvisioningComplete", "Image provisioning completed for "+data.Image.URL)
		return operationComplete()
	case nodes.DeployWait:
		if forceReboot {
			p.tearDown(n)
			return operationContinuing(p.f.poll(IronicProvisionRequeueDelay))
		}
	}
	return operationContinuing(p.f.poll(IronicProvisionRequeueDelay))
}

// deploy is setUpForProvisioning and the move to active (ironic.go Provision, getConfigDrive):
// Ironic's ramdisk deploy for a live ISO, its direct deploy with a config drive otherwise.
func (p *hostProvisioner) deploy(ctx context.Context, n *node, data provisioner.ProvisionData) (provisioner.Result, error) {
	if data.CustomDeploy != nil && data.CustomDeploy.Method != "" {
		return operationFailed("the lab's Ironic has no custom deploy steps: " + data.CustomDeploy.Method)
	}
	p.publish("ProvisioningStarted", "Image provisioning started for "+data.Image.URL)
	var userData []byte
	if !data.Image.IsLiveISO() {
		ud, err := data.HostConfig.UserData(ctx)
		if err != nil {
			return transientError(fmt.Errorf("could not retrieve user data: %w", err))
		}
		userData = []byte(ud)
	}
	n.image, n.userData = *data.Image.DeepCopy(), userData
	if data.BootMode != "" {
		n.bootMode = data.BootMode
	}
	uefi := n.bootMode != bmov1alpha1.Legacy
	step := p.f.step()
	if data.Image.IsLiveISO() {
		// Ironic's ramdisk deploy (ironic/drivers/modules/ramdisk.py RamdiskDeploy.deploy): the
		// ISO is prepared as the instance's boot device and the host powered on; the node is
		// active at once, long before anything the ISO runs is done.
		n.start(p.f.now(), step, nodes.Deploying, string(nodes.Active), func() {
			p.bootLiveISO(n, uefi)
			n.finish(nodes.Active)
		})
		return operationContinuing(p.f.poll(IronicProvisionRequeueDelay))
	}
	// Ironic's direct deploy (ironic/drivers/modules/agent.py): the deploy ramdisk boots (wait
	// call-back until it reports), writes the image and the config drive, and the host reboots
	// into its disk.
	n.start(p.f.now(), step, nodes.Deploying, string(nodes.Active), func() {
		n.power = powerOn
		n.chain(nodes.DeployWait, step, func() {
			n.chain(nodes.Deploying, step, func() {
				if h := n.host; h != nil {
					h.DeployImage(n.image.URL, uefi, n.userData)
					h.PowerOn()
				}
				n.power = powerOn
				n.finish(nodes.Active)
			})
		})
	})
	return operationContinuing(p.f.poll(IronicProvisionRequeueDelay))
}

// bootLiveISO is Ironic's prepare_instance for a live ISO, then the power-on: with a BMC that
// boots ISOs (virtual media, UEFI HTTP), every medium ejected, the ISO inserted as a CD, the boot
// device set to it, persistent unless BMO forces a one-time boot; other BMCs boot it over iPXE
// sanboot, which reaches the kernel and initramfs only (Ironic doc admin/ramdisk-boot.rst): the
// host is powered on but runs nothing the lab hears of.
func (p *hostProvisioner) bootLiveISO(n *node, uefi bool) {
	n.power = powerOn
	h := n.host
	if h == nil {
		return
	}
	if !virtualMedia(n.bmcAddress) {
		h.EjectMedia()
		h.PowerOff()
		return
	}
	override := inventory.OverrideContinuous
	if p.f.LiveISOForcePersistentBootDevice == "Never" {
		override = inventory.OverrideOnce
	}
	h.InsertMedia(n.image.URL, uefi, override)
	h.PowerOn()
}

// Deprovision is ironic.go Deprovision: an active node is torn down ("deleted": the host powered
// off, its virtual media ejected) and, with automated cleaning, cleaned; BMO polls until it is
// available.
func (p *hostProvisioner) Deprovision(ctx context.Context, restartOnFailure bool, cleaning bmov1alpha1.AutomatedCleaningMode) (provisioner.Result, error) {
	n, unlock, err := p.node()
	if err != nil {
		return transientError(err)
	}
	defer unlock()
	switch n.provisionState {
	case nodes.Error:
		if !restartOnFailure {
			if n.lastError == "" {
				return operationFailed("Deprovisioning failed")
			}
			return operationFailed(n.lastError)
		}
		p.publish("DeprovisioningStarted", "Image deprovisioning restarted")
		p.tearDown(n)
		return operationContinuing(p.f.poll(IronicProvisionRequeueDelay))
	case nodes.CleanFail:
		if !restartOnFailure {
			return operationFailed("Cleaning failed: " + n.lastError)
		}
		return p.changeState(n, nodes.Manageable)
	case nodes.Manageable:
		return p.changeState(n, nodes.Available)
	case nodes.Available:
		if err := p.deliver(ctx, n); err != nil {
			return transientError(err)
		}
		p.publish("DeprovisioningComplete", "Image deprovisioning completed")
		return operationComplete()
	case nodes.Deleting, nodes.Cleaning, nodes.CleanWait, nodes.Deploying:
		return operationContinuing(p.f.poll(IronicDeprovisionRequeueDelay))
	case nodes.Active, nodes.DeployFail, nodes.DeployWait:
		if want := cleaning != bmov1alpha1.CleaningModeDisabled; n.automatedClean != want {
			n.automatedClean = want // syncAutomatedClean
			return operationContinuing(0)
		}
		p.publish("DeprovisioningStarted", "Image deprovisioning started")
		p.tearDown(n)
		return operationContinuing(p.f.poll(IronicProvisionRequeueDelay))
	}
	return transientError(fmt.Errorf("unhandled ironic state %s", n.provisionState))
}

// tearDown is Ironic's "deleted" (ironic/conductor/deployments.py do_node_tear_down): the host
// powered off, its virtual media ejected, the instance forgotten; then automated cleaning, or
// available at once without it (the disk keeps what it holds).
func (p *hostProvisioner) tearDown(n *node) {
	now := p.f.now()
	n.start(now, p.f.step(), nodes.Deleting, string(nodes.Available), func() {
		if h := n.host; h != nil {
			p.powerOffHost(n)
			h.EjectMedia()
		}
		n.image, n.userData = bmov1alpha1.Image{}, nil
		if n.automatedClean {
			p.clean(n, n.due, nodes.Available)
			return
		}
		n.finish(nodes.Available)
	})
}

// powerOffHost turns the host off and tells the lab.
func (p *hostProvisioner) powerOffHost(n *node) {
	n.power = powerOff
	h := n.host
	if h == nil {
		return
	}
	h.PowerOff()
	n.tell(func(ctx context.Context, e inventory.HostEvents) error { return e.PoweredOff(ctx, h) })
}

// Delete is ironic.go Delete and realDelete: a node in a stable state is removed (an active one
// is put in maintenance first, so that Ironic removes it without tearing it down); one that is
// busy is waited for.
func (p *hostProvisioner) Delete(ctx context.Context) (provisioner.Result, error) {
	return p.remove(ctx, false)
}

// Detach is ironic.go Detach: Delete, without touching the host; with force a running
// inspection, cleaning or deploy is aborted first.
func (p *hostProvisioner) Detach(ctx context.Context, force bool) (provisioner.Result, error) {
	return p.remove(ctx, force)
}

func (p *hostProvisioner) remove(ctx context.Context, force bool) (provisioner.Result, error) {
	n, unlock, err := p.node()
	if errors.Is(err, provisioner.ErrNeedsRegistration) {
		return operationComplete()
	}
	if err != nil {
		return transientError(err)
	}
	defer unlock()
	switch n.provisionState {
	case nodes.Verifying, nodes.Deploying, nodes.Cleaning, nodes.Inspecting, nodes.Deleting, nodes.Adopting:
		return operationContinuing(p.f.poll(IronicProvisionRequeueDelay))
	case nodes.DeployWait, nodes.InspectWait, nodes.CleanWait:
		if force {
			p.abort(n)
			return operationContinuing(p.f.poll(IronicProvisionRequeueDelay))
		}
		return operationContinuing(p.f.poll(IronicProvisionRequeueDelay))
	case nodes.Enroll, nodes.Available, nodes.Manageable:
	default:
		if !n.maintenance {
			n.maintenance = true
			return operationContinuing(0)
		}
	}
	if err := p.deliver(ctx, n); err != nil {
		return transientError(err)
	}
	p.f.remove(n.uuid)
	return operationContinuing(0)
}

// abort is Ironic's "abort" of a wait state: inspection and cleaning fail with "aborted", a
// deploy fails.
func (p *hostProvisioner) abort(n *node) {
	n.pending = nil
	switch n.provisionState {
	case nodes.InspectWait:
		n.fail(nodes.InspectFail, "Inspection was aborted by request.")
	case nodes.CleanWait:
		n.fail(nodes.CleanFail, "Cleaning was aborted by request.")
	case nodes.DeployWait:
		n.fail(nodes.DeployFail, "Deploy was aborted by request.")
	}
}

// PowerOn is ironic.go PowerOn: the host is powered on ("PowerOn"); a node that is busy is
// waited for.
func (p *hostProvisioner) PowerOn(ctx context.Context, force bool) (provisioner.Result, error) {
	n, unlock, err := p.node()
	if err != nil {
		return transientError(err)
	}
	defer unlock()
	if n.power == powerOn {
		if err := p.deliver(ctx, n); err != nil {
			return transientError(err)
		}
		return operationComplete()
	}
	if n.lastError != "" && !force {
		return operationFailed("PowerOn operation failed: " + n.lastError)
	}
	if n.busy() {
		return operationContinuing(p.f.poll(IronicPowerRequeueDelay))
	}
	n.power = powerOn
	if h := n.host; h != nil {
		h.PowerOn()
		p.tellRunning(n)
	}
	p.publish("PowerOn", "Host powered on")
	if err := p.deliver(ctx, n); err != nil {
		return transientError(err)
	}
	return operationContinuing(0)
}

// PowerOff is ironic.go PowerOff: a running inspection waits or is aborted
// (abortInspectionOrCleaning), then the host is powered off, softly if asked ("PowerOff": "Host
// soft powered off" or "Host powered off"); with disable_power_off it is rebooted instead.
func (p *hostProvisioner) PowerOff(ctx context.Context, mode bmov1alpha1.RebootMode, force bool, cleaning bmov1alpha1.AutomatedCleaningMode) (provisioner.Result, error) {
	n, unlock, err := p.node()
	if err != nil {
		return transientError(err)
	}
	defer unlock()
	switch n.provisionState {
	case nodes.InspectWait:
		p.abort(n)
		return operationContinuing(p.f.poll(IronicProvisionRequeueDelay))
	case nodes.CleanWait:
		if cleaning == bmov1alpha1.CleaningModeDisabled {
			p.abort(n)
		}
		return operationContinuing(p.f.poll(IronicProvisionRequeueDelay))
	case nodes.Inspecting, nodes.Cleaning:
		return operationContinuing(p.f.poll(IronicProvisionRequeueDelay))
	}
	if n.power == powerOff {
		if err := p.deliver(ctx, n); err != nil {
			return transientError(err)
		}
		return operationComplete()
	}
	if n.busy() {
		return operationContinuing(p.f.poll(IronicPowerRequeueDelay))
	}
	if n.disablePowerOff {
		// Rebooting: off and on again.
		if h := n.host; h != nil {
			h.PowerOff()
			n.tell(func(ctx context.Context, e inventory.HostEvents) error { return e.PoweredOff(ctx, h) })
			h.PowerOn()
			p.tellRunning(n)
		}
		p.publish("PowerOff", "Host powered off")
		return operationContinuing(0)
	}
	p.powerOffHost(n)
	if mode == bmov1alpha1.RebootModeSoft && !force {
		p.publish("PowerOff", "Host soft powered off")
	} else {
		p.publish("PowerOff", "Host powered off")
	}
	if err := p.deliver(ctx, n); err != nil {
		return transientError(err)
	}
	return operationContinuing(0)
}

// GetFirmwareSettings: the lab's hosts have no BIOS settings to show (HostFirmwareSettings stays
// empty, and valid).
func (p *hostProvisioner) GetFirmwareSettings(context.Context, bool) (bmov1alpha1.SettingsMap, map[string]bmov1alpha1.SettingSchema, error) {
	if n := p.f.byID(p.data.ProvisionerID); n == nil {
		return nil, nil, provisioner.ErrNeedsRegistration
	}
	return bmov1alpha1.SettingsMap{}, map[string]bmov1alpha1.SettingSchema{}, nil
}

// GetFirmwareComponents is ironic.go GetFirmwareComponents: a node whose firmware interface is
// no-firmware does not support them (BMO enrolls IPMI nodes with none, and Ironic's ipmi hardware
// type defaults to no-firmware); Redfish lists none here.
func (p *hostProvisioner) GetFirmwareComponents(context.Context) ([]bmov1alpha1.FirmwareComponentStatus, error) {
	n, unlock, err := p.node()
	if err != nil {
		return nil, err
	}
	address := n.bmcAddress
	unlock()
	access, err := bmc.NewAccessDetails(address, true)
	if err != nil || access.FirmwareInterface() == "" || access.FirmwareInterface() == "no-firmware" {
		return []bmov1alpha1.FirmwareComponentStatus{}, provisioner.ErrFirmwareUpdateUnsupported
	}
	return []bmov1alpha1.FirmwareComponentStatus{}, nil
}

// errNotModelled refuses what no spec of the lab uses.
func errNotModelled(what string) error {
	return fmt.Errorf("the lab's Ironic does not model %s", what)
}

// AddBMCEventSubscriptionForNode is refused (no BMCEventSubscription in the lab).
func (p *hostProvisioner) AddBMCEventSubscriptionForNode(context.Context, *bmov1alpha1.BMCEventSubscription, provisioner.HTTPHeaders) (provisioner.Result, error) {
	return transientError(errNotModelled("BMC event subscriptions"))
}

// RemoveBMCEventSubscriptionForNode is refused (no BMCEventSubscription in the lab).
func (p *hostProvisioner) RemoveBMCEventSubscriptionForNode(context.Context, bmov1alpha1.BMCEventSubscription) (provisioner.Result, error) {
	return transientError(errNotModelled("BMC event subscriptions"))
}

// GetDataImageStatus: no DataImage is ever attached.
func (p *hostProvisioner) GetDataImageStatus(context.Context) (bool, error) { return false, nil }

// AttachDataImage is refused (no DataImage in the lab).
func (p *hostProvisioner) AttachDataImage(context.Context, string) error {
	return errNotModelled("DataImages")
}

// DetachDataImage: nothing is attached.
func (p *hostProvisioner) DetachDataImage(context.Context) error { return nil }

// HasPowerFailure: the lab's BMCs do not fail.
func (p *hostProvisioner) HasPowerFailure(context.Context) bool { return false }

// GetHealth is the node's health, which the Ironic BMO v0.13 was tested with (29.0, API 1.96,
// research note real-components.md) does not report: "" (BMO sets no health condition then).
func (p *hostProvisioner) GetHealth(context.Context) string { return "" }

// liveISOBootInterfaces are the boot interfaces that boot an ISO whole (BMO's
// pkg/hardwareutils/bmc BootInterface of redfish-virtualmedia, idrac-virtualmedia and
// redfish-https): with the others (ipxe) Ironic boots an ISO's kernel and initramfs only.
var liveISOBootInterfaces = []string{"redfish-virtual-media", "idrac-redfish-virtual-media", "redfish-https"}

// virtualMedia tells whether the BMC at address boots ISOs.
func virtualMedia(address string) bool {
	access, err := bmc.NewAccessDetails(address, true)
	return err == nil && slices.Contains(liveISOBootInterfaces, access.BootInterface())
}
