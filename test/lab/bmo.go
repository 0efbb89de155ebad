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
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/metal3-io/baremetal-operator/inprocess"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/ports"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/baremetal"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/bmoprovisioner"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/inventory"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/testenv"
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

// setupBareMetal runs the lab's bare-metal operator, as Options.BareMetal says, in core (the real
// one's webhooks in a manager of their own, started now): it tells hosts what the lab's machines
// boot.
func (l *Lab) setupBareMetal(ctx context.Context, m *management, core ctrl.Manager, hosts inventory.HostEvents, copts controller.Options) error {
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
		return l.startBMOWebhooks(ctx, m, core.GetScheme())
	}
	return fmt.Errorf("unknown bare-metal operator %q: want %q or %q", l.opts.BareMetal, BareMetalSim, BareMetalReal)
}

// startBMOWebhooks installs BMO's ValidatingWebhookConfiguration (inprocess.WebhookConfiguration,
// named as BMO's release manifests name it) with a serving certificate of its own and serves BMO's
// webhooks from a manager of their own, as BMO's pod serves them: a BareMetalHost BMO refuses
// (an image without a checksum, a BMC address it cannot parse, a boot MAC a driver needs) is
// refused at admission.
func (l *Lab) startBMOWebhooks(ctx context.Context, m *management, scheme *runtime.Scheme) error {
	port, err := ports.Reserve()
	if err != nil {
		return err
	}
	w := &envtest.WebhookInstallOptions{LocalServingHost: "127.0.0.1", LocalServingPort: port,
		ValidatingWebhooks: []*admissionregistrationv1.ValidatingWebhookConfiguration{
			inprocess.WebhookConfiguration("baremetal-operator-validating-webhook-configuration")}}
	if err := w.PrepWithoutInstalling(); err != nil {
		return fmt.Errorf("preparing the baremetal-operator webhooks: %w", err)
	}
	mgr, err := ctrl.NewManager(m.env.Config, ctrl.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"},
		Controller:    testenv.ControllerConfig(),
		WebhookServer: webhook.NewServer(webhook.Options{Host: w.LocalServingHost, Port: w.LocalServingPort, CertDir: w.LocalServingCertDir})})
	if err != nil {
		return fmt.Errorf("creating the baremetal-operator webhook manager of %s: %w", m.name, err)
	}
	if err := inprocess.SetupWebhooks(mgr); err != nil {
		return err
	}
	l.run(m.name+"/baremetal-operator-webhooks", func() error { return mgr.Start(ctx) })
	started := mgr.GetWebhookServer().StartedChecker()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "/", nil)
	if err != nil {
		return err
	}
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return started(req) == nil, nil
	}); err != nil {
		return fmt.Errorf("the baremetal-operator webhook server of %s did not start: %w", m.name, err)
	}
	// Installed once its server answers: the API server calls it from now on.
	if err := w.Install(m.env.Config); err != nil {
		return fmt.Errorf("installing the baremetal-operator webhooks: %w", err)
	}
	m.webhooks = append(m.webhooks, w)
	return nil
}
