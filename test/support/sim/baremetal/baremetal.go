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

// Package baremetal is a stand-in for the bare-metal operator (BMO): it moves BareMetalHosts
// through BMO's provisioning states (registering → inspecting → available → provisioning →
// provisioned, and deprovisioning → available when the image is removed), fills status.hardware
// from the lab's inventory, honours the paused and detached annotations, and tells the lab when a
// host boots a live ISO or a deployed disk image (so that the assisted-service simulator registers
// its Agent).
package baremetal

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	"github.com/metal3-io/baremetal-operator/pkg/hardwareutils/bmc"
	"github.com/metal3-io/baremetal-operator/pkg/secretutils"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/move"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/bmoprovisioner"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/internal/steps"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/inventory"
)

// Durations are how long each of BMO's operations takes.
type Durations struct {
	Register    time.Duration
	Inspect     time.Duration
	Provision   time.Duration
	Deprovision time.Duration
	Delete      time.Duration
}

// FastDurations are the defaults: quick enough for tests, slow enough that every state is written.
func FastDurations() Durations {
	d := 100 * time.Millisecond
	return Durations{Register: d, Inspect: d, Provision: d, Deprovision: d, Delete: d}
}

// RealisticDurations are in the order of a real lab's (virtual media, a few minutes each).
func RealisticDurations() Durations {
	return Durations{Register: 20 * time.Second, Inspect: 3 * time.Minute, Provision: 90 * time.Second,
		Deprovision: 2 * time.Minute, Delete: 20 * time.Second}
}

// Event reasons, as BMO records them.
const (
	ReasonRegistered             = "Registered"
	ReasonRegistrationError      = "RegistrationError"
	ReasonInspectionStarted      = "InspectionStarted"
	ReasonInspectionComplete     = "InspectionComplete"
	ReasonProvisioningStarted    = "ProvisioningStarted"
	ReasonProvisioningComplete   = "ProvisioningComplete"
	ReasonDeprovisioningStarted  = "DeprovisioningStarted"
	ReasonDeprovisioningComplete = "DeprovisioningComplete"
	ReasonPowerOn                = "PowerOn"
	ReasonPowerOff               = "PowerOff"
	ReasonProvisioningError      = "ProvisioningError"
)

// The label BMO's secret manager puts on the Secrets it manages.
const (
	SecretEnvironmentLabel = "environment.metal3.io"
	SecretEnvironment      = "baremetal"
)

// Reconciler simulates BMO for BareMetalHosts.
type Reconciler struct {
	Client    client.Client
	Inventory *inventory.Inventory
	Durations Durations
	// Hosts is told when a host boots a live ISO, powers off or is cleaned (may be nil).
	Hosts    inventory.HostEvents
	Recorder events.EventRecorder
	// Clock defaults to the real clock.
	Clock clock.PassiveClock
	// LiveISOPersistentBootDevice is BMO's LIVE_ISO_FORCE_PERSISTENT_BOOT_DEVICE: with "Default"
	// (upstream BMO, where it is unset) or "Always" a live ISO's host boots the CD at every
	// power-on; with "Never" only at the first. Empty means "Never", as OpenShift's
	// cluster-baremetal-operator runs BMO.
	LiveISOPersistentBootDevice string

	timer *steps.Timer
	// reader reads what the cache has not seen yet (a Secret just created).
	reader client.Reader
}

// SetupWithManager registers the simulator with mgr.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, opts controller.Options) error {
	if r.Client == nil {
		r.Client = mgr.GetClient()
	}
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorder("baremetal-operator-sim")
	}
	if r.Inventory == nil {
		return fmt.Errorf("the bare-metal simulator needs an inventory")
	}
	if r.Durations == (Durations{}) {
		r.Durations = FastDurations()
	}
	r.timer = steps.NewTimer(r.Clock)
	r.reader = mgr.GetAPIReader()
	return ctrl.NewControllerManagedBy(mgr).
		Named("sim-baremetalhost").
		For(&bmov1alpha1.BareMetalHost{}).
		// As BMO: a host hears of changes to the Secrets it owns (its BMC credentials).
		Owns(&corev1.Secret{}, builder.MatchEveryOwner).
		WithOptions(opts).
		Complete(r)
}

// Reconcile moves one BareMetalHost at most one state forward.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	bmh := &bmov1alpha1.BareMetalHost{}
	if err := r.Client.Get(ctx, req.NamespacedName, bmh); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if _, paused := bmh.Annotations[bmov1alpha1.PausedAnnotation]; paused {
		log.V(4).Info("BareMetalHost is paused")
		return ctrl.Result{}, nil
	}
	if restored, err := r.restoreStatus(ctx, bmh); err != nil || restored {
		return ctrl.Result{}, err
	}
	host := r.Inventory.ByBMCAddress(bmh.Spec.BMC.Address)

	if !bmh.DeletionTimestamp.IsZero() {
		return r.reconcileDelete(ctx, bmh, host)
	}
	if !controllerutil.ContainsFinalizer(bmh, bmov1alpha1.BareMetalHostFinalizer) {
		base := bmh.DeepCopy()
		controllerutil.AddFinalizer(bmh, bmov1alpha1.BareMetalHostFinalizer)
		if err := r.Client.Patch(ctx, bmh, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
			return ctrl.Result{}, fmt.Errorf("adding the finalizer: %w", err)
		}
	}

	if host == nil || needsMAC(bmh) {
		msg := bmoprovisioner.VerificationError(nodeName(bmh), bmh.Spec.BMC.Address, nil, bmc.Credentials{})
		if host != nil {
			msg = fmt.Sprintf("BMC driver %s requires a BootMACAddress value", bmcDriver(bmh.Spec.BMC.Address))
		}
		bmh.Status.Provisioning.State = bmov1alpha1.StateRegistering
		return ctrl.Result{}, r.recordFailure(ctx, bmh, bmov1alpha1.RegistrationError, ReasonRegistrationError, "Register", msg)
	}

	if detached := hasAnnotation(bmh, bmov1alpha1.DetachedAnnotation); detached || bmh.Status.OperationalStatus == bmov1alpha1.OperationalStatusDetached {
		// A detached host is not managed: its state is kept, whatever runs on it keeps running.
		want := bmov1alpha1.OperationalStatusDetached
		if !detached {
			want = bmov1alpha1.OperationalStatusOK
		}
		if bmh.Status.OperationalStatus != want {
			bmh.Status.OperationalStatus = want
			return ctrl.Result{}, r.writeStatus(ctx, bmh)
		}
		if detached {
			return ctrl.Result{}, nil
		}
	}
	return r.reconcileState(ctx, bmh, host)
}

func (r *Reconciler) reconcileState(ctx context.Context, bmh *bmov1alpha1.BareMetalHost, host *inventory.Host) (ctrl.Result, error) {
	now := metav1.NewTime(r.now())
	history := &bmh.Status.OperationHistory
	switch bmh.Status.Provisioning.State {
	case bmov1alpha1.StateNone, bmov1alpha1.StateUnmanaged:
		if err := r.acquireCredentials(ctx, bmh); err != nil {
			return ctrl.Result{}, err
		}
		// BMO leaves the operational status empty until the BMC is verified (it is "discovered"
		// only for a host without BMC details).
		bmh.Status.Provisioning.State = bmov1alpha1.StateRegistering
		bmh.Status.OperationalStatus = ""
		bmh.Status.ErrorType, bmh.Status.ErrorMessage = "", ""
		history.Register = bmov1alpha1.OperationMetric{Start: now}
		return ctrl.Result{}, r.writeStatus(ctx, bmh)

	case bmov1alpha1.StateRegistering:
		if wait := r.timer.Remaining(bmh.UID, string(bmov1alpha1.StateRegistering), r.Durations.Register); wait > 0 {
			return ctrl.Result{RequeueAfter: wait}, nil
		}
		if msg, err := r.verifyBMC(ctx, bmh, host); err != nil || msg != "" {
			// Ironic's verification fails; BMO tries again when the credentials Secret
			// changes (it watches the Secrets its hosts own).
			if err != nil {
				return ctrl.Result{}, err
			}
			r.timer.Done(bmh.UID, string(bmov1alpha1.StateRegistering))
			return ctrl.Result{}, r.recordFailure(ctx, bmh, bmov1alpha1.RegistrationError, ReasonRegistrationError, "Register", msg)
		}
		history.Register.End = now
		bmh.Status.OperationalStatus = bmov1alpha1.OperationalStatusOK
		bmh.Status.ErrorType, bmh.Status.ErrorMessage, bmh.Status.ErrorCount = "", "", 0
		bmh.Status.GoodCredentials = bmov1alpha1.CredentialsStatus{}
		r.Recorder.Eventf(bmh, nil, corev1.EventTypeNormal, ReasonRegistered, "Register", "Registered new host")
		if bmh.InspectionDisabled() {
			// BMO's state machine (host_state_machine.go handleRegistering, handleInspecting)
			// goes through preparing (cleaning for RAID or firmware settings, none here) before
			// available.
			bmh.Status.Provisioning.State = bmov1alpha1.StatePreparing
		} else {
			bmh.Status.Provisioning.State = bmov1alpha1.StateInspecting
			history.Inspect = bmov1alpha1.OperationMetric{Start: now}
			r.Recorder.Eventf(bmh, nil, corev1.EventTypeNormal, ReasonInspectionStarted, "Inspect", "Hardware inspection started")
		}
		return r.advance(ctx, bmh, bmov1alpha1.StateRegistering)

	case bmov1alpha1.StateInspecting:
		if wait := r.timer.Remaining(bmh.UID, string(bmov1alpha1.StateInspecting), r.Durations.Inspect); wait > 0 {
			return ctrl.Result{RequeueAfter: wait}, nil
		}
		history.Inspect.End = now
		bmh.Status.HardwareDetails = host.HardwareDetails()
		bmh.Status.Provisioning.State = bmov1alpha1.StatePreparing
		r.Recorder.Eventf(bmh, nil, corev1.EventTypeNormal, ReasonInspectionComplete, "Inspect", "Hardware inspection completed")
		return r.advance(ctx, bmh, bmov1alpha1.StateInspecting)

	case bmov1alpha1.StateAvailable, bmov1alpha1.StateReady, bmov1alpha1.StatePreparing, bmov1alpha1.StateMatchProfile:
		if bmh.Spec.Image != nil && bmh.Spec.Image.URL != "" {
			if _, _, err := bmh.Spec.Image.GetChecksum(); err != nil {
				// BMO's webhook refuses an image without a checksum unless it is a live ISO
				// (or OCI): validateImage calls Image.GetChecksum, whose error it returns
				// ("checksum is required for normal images"); without the webhook Ironic could
				// not verify the image it downloads. The lab runs no admission webhook, so the
				// refusal shows on the host, which is not provisioned until the image is fixed.
				return ctrl.Result{}, r.recordFailure(ctx, bmh, bmov1alpha1.ProvisioningError, ReasonProvisioningError, "Provision", err.Error())
			}
			clearImageRefusal(bmh)
			bmh.Status.Provisioning.State = bmov1alpha1.StateProvisioning
			bmh.Status.Provisioning.Image = *bmh.Spec.Image.DeepCopy()
			bmh.Status.Provisioning.BootMode = bmh.Spec.BootMode
			history.Provision = bmov1alpha1.OperationMetric{Start: now}
			r.Recorder.Eventf(bmh, nil, corev1.EventTypeNormal, ReasonProvisioningStarted, "Provision", "Image provisioning started for %s", bmh.Spec.Image.URL)
			return ctrl.Result{}, r.writeStatus(ctx, bmh)
		}
		if bmh.Status.Provisioning.State != bmov1alpha1.StateAvailable || bmh.Status.PoweredOn != bmh.Spec.Online || clearImageRefusal(bmh) {
			// Available hosts are powered as asked, running nothing.
			bmh.Status.Provisioning.State = bmov1alpha1.StateAvailable
			bmh.Status.PoweredOn = bmh.Spec.Online
			return ctrl.Result{}, r.writeStatus(ctx, bmh)
		}
		return ctrl.Result{}, nil

	case bmov1alpha1.StateProvisioning:
		var userData []byte
		if !bmh.Status.Provisioning.Image.IsLiveISO() {
			// BMO gives Ironic the config drive when it starts the deploy; it cannot start
			// without the user data (an error, retried; the host stays provisioning).
			var err error
			if userData, err = r.userData(ctx, bmh); err != nil {
				return ctrl.Result{}, fmt.Errorf("failed to provision: %w", err)
			}
		}
		if wait := r.timer.Remaining(bmh.UID, string(bmov1alpha1.StateProvisioning), r.Durations.Provision); wait > 0 {
			return ctrl.Result{RequeueAfter: wait}, nil
		}
		history.Provision.End = now
		bmh.Status.Provisioning.State = bmov1alpha1.StateProvisioned
		bmh.Status.PoweredOn = bmh.Spec.Online
		if bmh.Status.Provisioning.Image.IsLiveISO() {
			// Ironic's ramdisk deploy is done once the ISO is attached and the host powered on
			// (ramdisk.py RamdiskDeploy.deploy): "provisioned" long before anything installs.
			r.attachLiveISO(bmh, host)
		} else {
			// Ironic's direct deploy: the image and a config drive with the user data written,
			// the disk set to boot, the host powered on (rebooted into the image).
			host.DeployImage(bmh.Status.Provisioning.Image.URL, bmh.Spec.BootMode != bmov1alpha1.Legacy, userData)
			powerOn(bmh, host)
		}
		r.Recorder.Eventf(bmh, nil, corev1.EventTypeNormal, ReasonProvisioningComplete, "Provision", "Image provisioning completed for %s", bmh.Status.Provisioning.Image.URL)
		return r.advance(ctx, bmh, bmov1alpha1.StateProvisioning)

	case bmov1alpha1.StateProvisioned, bmov1alpha1.StateExternallyProvisioned:
		if bmh.Status.Provisioning.State == bmov1alpha1.StateProvisioned &&
			(bmh.Spec.Image == nil || bmh.Spec.Image.URL != bmh.Status.Provisioning.Image.URL) {
			bmh.Status.Provisioning.State = bmov1alpha1.StateDeprovisioning
			history.Deprovision = bmov1alpha1.OperationMetric{Start: now}
			r.Recorder.Eventf(bmh, nil, corev1.EventTypeNormal, ReasonDeprovisioningStarted, "Deprovision", "Image deprovisioning started")
			return ctrl.Result{}, r.writeStatus(ctx, bmh)
		}
		if _, reboot := bmh.Annotations[bmov1alpha1.RebootAnnotationPrefix]; reboot && bmh.Status.PoweredOn {
			return ctrl.Result{}, r.reboot(ctx, bmh, host)
		}
		if bmh.Status.PoweredOn != bmh.Spec.Online {
			bmh.Status.PoweredOn = bmh.Spec.Online
			if err := r.writeStatus(ctx, bmh); err != nil {
				return ctrl.Result{}, err
			}
			if !bmh.Spec.Online {
				host.PowerOff()
				r.Recorder.Eventf(bmh, nil, corev1.EventTypeNormal, ReasonPowerOff, "PowerOff", "Host powered off")
				return ctrl.Result{}, r.hostEvent(ctx, func(e inventory.HostEvents) error { return e.PoweredOff(ctx, host) })
			}
			powerOn(bmh, host)
			r.Recorder.Eventf(bmh, nil, corev1.EventTypeNormal, ReasonPowerOn, "PowerOn", "Host powered on")
		}
		if iso := host.Running(); bmh.Status.PoweredOn && iso != "" {
			// The host runs the live ISO: tell the lab (idempotent, on every pass).
			b := inventory.Boot{Host: host, ISOURL: iso}
			if err := r.hostEvent(ctx, func(e inventory.HostEvents) error { return e.Booted(ctx, b) }); err != nil {
				return ctrl.Result{}, fmt.Errorf("booting the live ISO: %w", err)
			}
		}
		if image, userData := host.RunningDiskImage(); bmh.Status.PoweredOn && image != "" {
			// The host runs the disk image deployed, not installed over yet: tell the lab
			// (idempotent, on every pass).
			b := inventory.Boot{Host: host, DiskImageURL: image, UserData: userData}
			if err := r.hostEvent(ctx, func(e inventory.HostEvents) error { return e.Booted(ctx, b) }); err != nil {
				return ctrl.Result{}, fmt.Errorf("booting the disk image: %w", err)
			}
		}
		return ctrl.Result{}, nil

	case bmov1alpha1.StateDeprovisioning:
		if wait := r.timer.Remaining(bmh.UID, string(bmov1alpha1.StateDeprovisioning), r.Durations.Deprovision); wait > 0 {
			return ctrl.Result{RequeueAfter: wait}, nil
		}
		if err := r.tearDown(ctx, bmh, host); err != nil {
			return ctrl.Result{}, err
		}
		history.Deprovision.End = now
		bmh.Status.Provisioning.State = bmov1alpha1.StateAvailable
		bmh.Status.Provisioning.Image = bmov1alpha1.Image{}
		bmh.Status.PoweredOn = false
		r.Recorder.Eventf(bmh, nil, corev1.EventTypeNormal, ReasonDeprovisioningComplete, "Deprovision", "Image deprovisioning completed")
		return r.advance(ctx, bmh, bmov1alpha1.StateDeprovisioning)
	}
	return ctrl.Result{}, nil
}

// reconcileDelete deprovisions a provisioned host and powers it off, as BMO does (deprovisioning →
// powering off before delete → deleting), then releases it. A detached host, or one the lab does
// not know, is released without being touched.
func (r *Reconciler) reconcileDelete(ctx context.Context, bmh *bmov1alpha1.BareMetalHost, host *inventory.Host) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(bmh, bmov1alpha1.BareMetalHostFinalizer) {
		r.timer.Forget(bmh.UID)
		return ctrl.Result{}, nil
	}
	state := bmh.Status.Provisioning.State
	// A host that clusterctl move deletes is left as it is: the pivot procedure stops Ironic on the
	// management cluster moved from (CAPM3's pivoting guide), so BMO cannot touch the hardware.
	untouched := host == nil || hasAnnotation(bmh, bmov1alpha1.DetachedAnnotation) || move.DeletingForMove(bmh)
	switch {
	case untouched && state != bmov1alpha1.StateDeleting:
		bmh.Status.Provisioning.State = bmov1alpha1.StateDeleting
		return ctrl.Result{}, r.writeStatus(ctx, bmh)
	case state == bmov1alpha1.StateProvisioned || state == bmov1alpha1.StateProvisioning || state == bmov1alpha1.StateExternallyProvisioned:
		bmh.Status.Provisioning.State = bmov1alpha1.StateDeprovisioning
		bmh.Status.OperationHistory.Deprovision = bmov1alpha1.OperationMetric{Start: metav1.NewTime(r.now())}
		r.Recorder.Eventf(bmh, nil, corev1.EventTypeNormal, ReasonDeprovisioningStarted, "Deprovision", "Image deprovisioning started")
		return ctrl.Result{}, r.writeStatus(ctx, bmh)
	case state == bmov1alpha1.StateDeprovisioning:
		if wait := r.timer.Remaining(bmh.UID, string(state), r.Durations.Deprovision); wait > 0 {
			return ctrl.Result{RequeueAfter: wait}, nil
		}
		if err := r.tearDown(ctx, bmh, host); err != nil {
			return ctrl.Result{}, err
		}
		bmh.Status.OperationHistory.Deprovision.End = metav1.NewTime(r.now())
		bmh.Status.Provisioning.State = bmov1alpha1.StatePoweringOffBeforeDelete
		bmh.Status.Provisioning.Image = bmov1alpha1.Image{}
		return r.advance(ctx, bmh, state)
	case state != bmov1alpha1.StatePoweringOffBeforeDelete && state != bmov1alpha1.StateDeleting:
		bmh.Status.Provisioning.State = bmov1alpha1.StatePoweringOffBeforeDelete
		return ctrl.Result{}, r.writeStatus(ctx, bmh)
	case state == bmov1alpha1.StatePoweringOffBeforeDelete:
		host.PowerOff()
		if err := r.hostEvent(ctx, func(e inventory.HostEvents) error { return e.PoweredOff(ctx, host) }); err != nil {
			return ctrl.Result{}, err
		}
		bmh.Status.PoweredOn = false
		bmh.Status.Provisioning.State = bmov1alpha1.StateDeleting
		return ctrl.Result{}, r.writeStatus(ctx, bmh)
	}
	if wait := r.timer.Remaining(bmh.UID, string(bmov1alpha1.StateDeleting), r.Durations.Delete); wait > 0 {
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	if err := r.releaseCredentials(ctx, bmh); err != nil {
		return ctrl.Result{}, err
	}
	base := bmh.DeepCopy()
	controllerutil.RemoveFinalizer(bmh, bmov1alpha1.BareMetalHostFinalizer)
	if err := r.Client.Patch(ctx, bmh, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, fmt.Errorf("removing the finalizer: %w", err)
	}
	r.timer.Forget(bmh.UID)
	return ctrl.Result{}, nil
}

// tearDown is the end of deprovisioning: Ironic's tear-down of the deploy, then its automated
// cleaning when the host has it. BMO v0.13.2 sets the Ironic node's automated_clean to
// spec.automatedCleaningMode != disabled (pkg/provisioner/ironic/ironic.go configureNode, and
// syncAutomatedClean before it starts deprovisioning); the mode defaults to metadata (the CRD's
// +kubebuilder:default, as an empty one counts). Its automated cleaning erases the disks'
// metadata (metal3's ironic-image runs only that step: [deploy] erase_devices_priority=0,
// erase_devices_metadata_priority=10): nothing bootable is left (Host.Deprovision, the lab told
// Deprovisioned). Without it the host is powered off and its virtual media ejected,
// and its disk keeps what it holds (Host.TearDown, the lab told PoweredOff).
func (r *Reconciler) tearDown(ctx context.Context, bmh *bmov1alpha1.BareMetalHost, host *inventory.Host) error {
	if bmh.Spec.AutomatedCleaningMode == bmov1alpha1.CleaningModeDisabled {
		host.TearDown()
		return r.hostEvent(ctx, func(e inventory.HostEvents) error { return e.PoweredOff(ctx, host) })
	}
	host.Deprovision()
	return r.hostEvent(ctx, func(e inventory.HostEvents) error { return e.Deprovisioned(ctx, host) })
}

// liveISODrivers are the BMC drivers that boot a live ISO whole: as virtual media (BMO's
// pkg/hardwareutils/bmc: redfish-virtualmedia, idrac-virtualmedia, ilo5-virtualmedia) or over
// UEFI HTTP. With the others Ironic boots it over iPXE sanboot, which reaches the kernel and
// initramfs only (Ironic doc admin/ramdisk-boot.rst): the discovery agent never starts.
var liveISODrivers = []string{"redfish-virtualmedia", "idrac-virtualmedia", "ilo5-virtualmedia", "redfish-uefihttp"}

// bmcDriver is the driver of a BMC address: its scheme without the transport; IPMI without one.
func bmcDriver(address string) string {
	scheme, _, ok := strings.Cut(address, "://")
	if !ok {
		return "ipmi"
	}
	driver, _, _ := strings.Cut(scheme, "+")
	return driver
}

// needsMAC is BMO's rule for registering a host (register.go, and its webhook since v0.12): a
// boot MAC is required when the driver needs one (libvirt) or inspection, which would find the
// NICs, is disabled.
func needsMAC(bmh *bmov1alpha1.BareMetalHost) bool {
	return bmh.Spec.BootMACAddress == "" && (bmcDriver(bmh.Spec.BMC.Address) == "libvirt" || bmh.InspectionDisabled())
}

// attachLiveISO is Ironic's prepare_instance for a live ISO, then the power-on: the ISO goes into
// the virtual CD with a boot override to it, persistent unless BMO forces a one-time boot.
func (r *Reconciler) attachLiveISO(bmh *bmov1alpha1.BareMetalHost, host *inventory.Host) {
	if !slices.Contains(liveISODrivers, bmcDriver(bmh.Spec.BMC.Address)) {
		host.EjectMedia()
		host.PowerOff()
		return
	}
	override := inventory.OverrideOnce
	if p := r.LiveISOPersistentBootDevice; p == "Default" || p == "Always" {
		override = inventory.OverrideContinuous
	}
	host.InsertMedia(bmh.Spec.Image.URL, bmh.Spec.BootMode != bmov1alpha1.Legacy, override)
	powerOn(bmh, host)
}

// recordFailure marks the host failed as BMO does (recordActionFailure: errorType, errorMessage,
// errorCount, operational status error) with a Warning event of reason; once only while the
// error stays the same.
func (r *Reconciler) recordFailure(ctx context.Context, bmh *bmov1alpha1.BareMetalHost, errType bmov1alpha1.ErrorType, reason, action, msg string) error {
	if bmh.Status.ErrorType == errType && bmh.Status.ErrorMessage == msg {
		return nil
	}
	r.Recorder.Eventf(bmh, nil, corev1.EventTypeWarning, reason, action, msg)
	bmh.Status.ErrorType, bmh.Status.ErrorMessage = errType, msg
	bmh.Status.ErrorCount++
	bmh.Status.OperationalStatus = bmov1alpha1.OperationalStatusError
	return r.writeStatus(ctx, bmh)
}

// clearImageRefusal clears the provisioning error of an image refused, and says whether there
// was one.
func clearImageRefusal(bmh *bmov1alpha1.BareMetalHost) bool {
	if bmh.Status.ErrorType != bmov1alpha1.ProvisioningError {
		return false
	}
	bmh.Status.ErrorType, bmh.Status.ErrorMessage, bmh.Status.ErrorCount = "", "", 0
	bmh.Status.OperationalStatus = bmov1alpha1.OperationalStatusOK
	return true
}

// userData is what BMO puts in the config drive's user data (v0.13
// internal/controller/metal3.io/host_config_data.go, UserData and getSecretData, read by
// pkg/provisioner/ironic getConfigDrive): the Secret spec.userData names, which must be in the
// host's namespace, its key userData, falling back to value; nothing when spec.userData is unset.
// Like BMO's secret manager (pkg/secretutils ObtainSecret: the cache, then the API server) it
// labels the Secret environment.metal3.io=baremetal so that its cache follows it. Its errors read
// as BMO's.
func (r *Reconciler) userData(ctx context.Context, bmh *bmov1alpha1.BareMetalHost) ([]byte, error) {
	ref := bmh.Spec.UserData
	if ref == nil {
		return nil, nil
	}
	ns := ref.Namespace
	if ns == "" {
		ns = bmh.Namespace
	}
	if ns != bmh.Namespace {
		return nil, fmt.Errorf("could not retrieve user data: userData secret must be in same namespace as host %s/%s", bmh.Namespace, bmh.Name)
	}
	key := client.ObjectKey{Namespace: ns, Name: ref.Name}
	secret := &corev1.Secret{}
	err := r.Client.Get(ctx, key, secret)
	if apierrors.IsNotFound(err) && r.reader != nil {
		err = r.reader.Get(ctx, key, secret)
	}
	if err != nil {
		return nil, fmt.Errorf("could not retrieve user data: failed to fetch secret %s in namespace %s: %w", key.Name, key.Namespace, err)
	}
	if secret.Labels[SecretEnvironmentLabel] != SecretEnvironment {
		base := secret.DeepCopy()
		metav1.SetMetaDataLabel(&secret.ObjectMeta, SecretEnvironmentLabel, SecretEnvironment)
		if err := r.Client.Patch(ctx, secret, client.MergeFrom(base)); err != nil {
			return nil, fmt.Errorf("could not retrieve user data: failed to update secret %s in namespace %s: %w", key.Name, key.Namespace, err)
		}
	}
	if data, ok := secret.Data["userData"]; ok {
		return data, nil
	}
	if data, ok := secret.Data["value"]; ok {
		return data, nil
	}
	return nil, fmt.Errorf("could not retrieve user data: Secret %s does not contain key userData", key.Name)
}

// reboot power-cycles a host for the reboot.metal3.io annotation without a suffix, which BMO
// removes once the host is off (a suffixed one, which keeps the host off until its owner removes
// it, is not simulated): BMO's actionPowerOff/hasRebootAnnotation and clearRebootAnnotations.
func (r *Reconciler) reboot(ctx context.Context, bmh *bmov1alpha1.BareMetalHost, host *inventory.Host) error {
	host.PowerOff()
	r.Recorder.Eventf(bmh, nil, corev1.EventTypeNormal, ReasonPowerOff, "PowerOff", "Host soft powered off")
	if err := r.hostEvent(ctx, func(e inventory.HostEvents) error { return e.PoweredOff(ctx, host) }); err != nil {
		return err
	}
	base := bmh.DeepCopy()
	delete(bmh.Annotations, bmov1alpha1.RebootAnnotationPrefix)
	if err := r.Client.Patch(ctx, bmh, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("removing the reboot annotation: %w", err)
	}
	powerOn(bmh, host)
	r.Recorder.Eventf(bmh, nil, corev1.EventTypeNormal, ReasonPowerOn, "PowerOn", "Host powered on")
	return nil
}

// powerOn powers a host on when its BareMetalHost is online: it boots what its firmware chooses.
func powerOn(bmh *bmov1alpha1.BareMetalHost, host *inventory.Host) {
	if bmh.Spec.Online {
		host.PowerOn()
	}
}

// advance writes a host that left state from, ending that state's clock once written.
func (r *Reconciler) advance(ctx context.Context, bmh *bmov1alpha1.BareMetalHost, from bmov1alpha1.ProvisioningState) (ctrl.Result, error) {
	if err := r.writeStatus(ctx, bmh); err != nil {
		return ctrl.Result{}, err
	}
	r.timer.Done(bmh.UID, string(from))
	return ctrl.Result{}, nil
}

func (r *Reconciler) writeStatus(ctx context.Context, bmh *bmov1alpha1.BareMetalHost) error {
	t := metav1.NewTime(r.now())
	bmh.Status.LastUpdated = &t
	if err := r.Client.Status().Update(ctx, bmh); err != nil {
		return fmt.Errorf("updating BareMetalHost status: %w", err)
	}
	ctrl.LoggerFrom(ctx).V(2).Info("BareMetalHost state", "state", bmh.Status.Provisioning.State,
		"operationalStatus", bmh.Status.OperationalStatus, "poweredOn", bmh.Status.PoweredOn)
	return nil
}

// acquireCredentials is BMO's claim of the BMC credentials Secret, with BMO's own secret manager
// (pkg/secretutils AcquireSecret, as internal/controller/metal3.io buildAndValidateBMCCredentials
// calls it): the host becomes an owner of the Secret, which is labelled
// environment.metal3.io=baremetal (so that the Secret goes wherever the host goes: garbage
// collection, clusterctl move) and gets the finalizer baremetalhost.metal3.io/secret (the Secret
// outlives its host's deletion until BMO releases it). A Secret not there yet is claimed later.
func (r *Reconciler) acquireCredentials(ctx context.Context, bmh *bmov1alpha1.BareMetalHost) error {
	if bmh.Spec.BMC.CredentialsName == "" {
		return nil
	}
	if _, err := r.secretManager(ctx).AcquireSecret(ctx, bmh.CredentialsKey(), bmh, true); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("owning the BMC credentials: %w", err)
	}
	return nil
}

// secretManager is BMO's secret manager over the simulator's client (and its API reader, for a
// Secret the cache has not seen yet).
func (r *Reconciler) secretManager(ctx context.Context) *secretutils.SecretManager {
	var reader client.Reader = r.Client
	if r.reader != nil {
		reader = r.reader
	}
	sm := secretutils.NewSecretManager(ctrl.LoggerFrom(ctx), r.Client, reader)
	return &sm
}

// releaseCredentials is BMO's release of the BMC credentials Secret when its host is deleted
// (actionDeleting: SecretManager.ReleaseSecret removes the finalizer).
func (r *Reconciler) releaseCredentials(ctx context.Context, bmh *bmov1alpha1.BareMetalHost) error {
	if bmh.Spec.BMC.CredentialsName == "" {
		return nil
	}
	secret := &corev1.Secret{}
	if err := r.Client.Get(ctx, bmh.CredentialsKey(), secret); err != nil {
		return client.IgnoreNotFound(err)
	}
	if err := r.secretManager(ctx).ReleaseSecret(ctx, secret); err != nil {
		return fmt.Errorf("releasing the BMC credentials: %w", err)
	}
	return nil
}

// verifyBMC is Ironic's verification of the host's BMC with the credentials of its Secret:
// why it fails (bmoprovisioner.VerificationError), "" when it passes.
func (r *Reconciler) verifyBMC(ctx context.Context, bmh *bmov1alpha1.BareMetalHost, host *inventory.Host) (string, error) {
	creds := bmc.Credentials{}
	if bmh.Spec.BMC.CredentialsName != "" {
		secret := &corev1.Secret{}
		if err := r.Client.Get(ctx, bmh.CredentialsKey(), secret); err != nil {
			return "", fmt.Errorf("reading the BMC credentials: %w", err)
		}
		creds = bmc.Credentials{Username: string(secret.Data["username"]), Password: string(secret.Data["password"])}
	}
	return bmoprovisioner.VerificationError(nodeName(bmh), bmh.Spec.BMC.Address, host, creds), nil
}

// nodeName is the name BMO gives a host's Ironic node (pkg/provisioner/ironic ironicNodeName).
func nodeName(bmh *bmov1alpha1.BareMetalHost) string { return bmh.Namespace + "~" + bmh.Name }

// restoreStatus does what BMO does for a host that was moved (clusterctl move drops status
// subresources): a host with no status takes it from the status annotation that CAPM3 wrote when
// it paused the host; a host with a status drops the annotation, which would only go stale.
func (r *Reconciler) restoreStatus(ctx context.Context, bmh *bmov1alpha1.BareMetalHost) (bool, error) {
	saved, ok := bmh.Annotations[bmov1alpha1.StatusAnnotation]
	if !ok {
		return false, nil
	}
	if bmh.Status.LastUpdated.IsZero() {
		status := bmov1alpha1.BareMetalHostStatus{}
		if err := json.Unmarshal([]byte(saved), &status); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "Ignoring a status annotation that does not parse")
			return false, nil
		}
		bmh.Status = status
		if bmh.Status.LastUpdated.IsZero() {
			t := metav1.NewTime(r.now())
			bmh.Status.LastUpdated = &t
		}
		if err := r.Client.Status().Update(ctx, bmh); err != nil {
			return false, fmt.Errorf("restoring BareMetalHost status from its annotation: %w", err)
		}
		ctrl.LoggerFrom(ctx).Info("Restored the BareMetalHost status from its annotation", "state", bmh.Status.Provisioning.State)
		return true, nil
	}
	base := bmh.DeepCopy()
	delete(bmh.Annotations, bmov1alpha1.StatusAnnotation)
	if err := r.Client.Patch(ctx, bmh, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		return false, fmt.Errorf("removing the status annotation: %w", err)
	}
	return true, nil
}

func (r *Reconciler) hostEvent(_ context.Context, f func(inventory.HostEvents) error) error {
	if r.Hosts == nil {
		return nil
	}
	return f(r.Hosts)
}

func (r *Reconciler) now() time.Time {
	if r.Clock == nil {
		return time.Now()
	}
	return r.Clock.Now()
}

func hasAnnotation(o metav1.Object, name string) bool {
	_, ok := o.GetAnnotations()[name]
	return ok
}
