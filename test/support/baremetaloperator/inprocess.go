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

// Package inprocess runs the real baremetal-operator's controllers and webhook (v0.13.2, the
// release Cluster API Provider Metal3 v1.13 uses) in a manager of the caller's, with the caller's
// provisioner: the lab's bare-metal hosts (test/support/sim/bmoprovisioner) in place of Ironic.
//
// BMO keeps its controllers and webhooks in internal packages
// (github.com/metal3-io/baremetal-operator/internal/controller/metal3.io and
// internal/webhooks/metal3.io/v1alpha1). Go lets a package import an internal package only from
// within the tree rooted at internal's parent, by import path: this module's path,
// github.com/metal3-io/baremetal-operator/inprocess, is inside that tree, which is why it is a
// module of its own with that path (as golang.org/x/tools/gopls, a module of its own, imports
// golang.org/x/tools/internal). It holds no code of BMO's: it calls BMO's code as BMO's main.go
// does (v0.13.2 main.go: BareMetalHostReconciler, HostFirmwareSettingsReconciler and the
// BareMetalHost webhook set up with the manager).
package inprocess

import (
	"fmt"

	"github.com/go-logr/logr"
	metal3iocontroller "github.com/metal3-io/baremetal-operator/internal/controller/metal3.io"
	webhooks "github.com/metal3-io/baremetal-operator/internal/webhooks/metal3.io/v1alpha1"
	"github.com/metal3-io/baremetal-operator/pkg/provisioner"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
)

// Version is the baremetal-operator release this module runs (its go.mod requires it).
const Version = "v0.13.2"

// Options are BMO's command-line settings that matter in process.
type Options struct {
	// Concurrency is BMO's --controller-concurrency (main.go's default is 0: the number of CPUs,
	// at most 8).
	Concurrency int
	// Log is the controllers' logger (main.go: ctrl.Log.WithName("controllers").WithName(kind)).
	Log logr.Logger
}

// SetupBareMetalHost registers BMO's BareMetalHost reconciler with mgr, driving hosts through
// factory, and its HostFirmwareSettings and HostFirmwareComponents reconcilers, as main.go does.
// The BareMetalHost reconciler creates those two objects at registration and waits, before it
// prepares a host, until their status says whether anything changed (actionPreparing:
// subResourceNotReadyRetryDelay, 60 s, while they have no conditions): without their
// reconcilers every host would wait there a minute. BMO's preprovisioning-image controller is
// not set up: main.go starts it only when an image builder is configured, and the lab's hosts
// boot Ironic's own deploy ISO. HostClaim, BMCEventSubscription and DataImage objects are not
// used by Cluster API Provider Metal3 v1.13, so their controllers are not run.
func SetupBareMetalHost(mgr ctrl.Manager, factory provisioner.Factory, o Options) error {
	bmh := &metal3iocontroller.BareMetalHostReconciler{
		Client:             mgr.GetClient(),
		Log:                o.Log.WithName("BareMetalHost"),
		ProvisionerFactory: factory,
		APIReader:          mgr.GetAPIReader(),
	}
	if err := bmh.SetupWithManager(mgr, false, o.Concurrency); err != nil {
		return fmt.Errorf("setting up BMO's BareMetalHost controller: %w", err)
	}
	hfs := &metal3iocontroller.HostFirmwareSettingsReconciler{
		Client:             mgr.GetClient(),
		Log:                o.Log.WithName("HostFirmwareSettings"),
		ProvisionerFactory: factory,
	}
	if err := hfs.SetupWithManager(mgr, o.Concurrency); err != nil {
		return fmt.Errorf("setting up BMO's HostFirmwareSettings controller: %w", err)
	}
	hfc := &metal3iocontroller.HostFirmwareComponentsReconciler{
		Client:             mgr.GetClient(),
		Log:                o.Log.WithName("HostFirmwareComponents"),
		ProvisionerFactory: factory,
	}
	if err := hfc.SetupWithManager(mgr, o.Concurrency); err != nil {
		return fmt.Errorf("setting up BMO's HostFirmwareComponents controller: %w", err)
	}
	return nil
}

// SetupWebhooks registers BMO's validating webhooks with mgr's webhook server (main.go
// setupWebhooks): BareMetalHost's and BMCEventSubscription's, served at the paths of
// WebhookConfiguration.
func SetupWebhooks(mgr ctrl.Manager) error {
	if err := (&webhooks.BareMetalHost{}).SetupWebhookWithManager(mgr); err != nil {
		return fmt.Errorf("setting up BMO's BareMetalHost webhook: %w", err)
	}
	if err := (&webhooks.BMCEventSubscription{}).SetupWebhookWithManager(mgr); err != nil {
		return fmt.Errorf("setting up BMO's BMCEventSubscription webhook: %w", err)
	}
	return nil
}

// WebhookConfiguration is BMO's ValidatingWebhookConfiguration (v0.13.2
// config/base/webhook/manifests.yaml), named name, its webhooks calling the Service path of each
// (a test environment rewrites them to its webhook server's URL).
func WebhookConfiguration(name string) *admissionregistrationv1.ValidatingWebhookConfiguration {
	webhook := func(name, path, resource string) admissionregistrationv1.ValidatingWebhook {
		return admissionregistrationv1.ValidatingWebhook{
			Name:                    name,
			AdmissionReviewVersions: []string{"v1", "v1beta"},
			ClientConfig: admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{
				Name: "webhook-service", Namespace: "system", Path: ptr.To(path)}},
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			SideEffects:   ptr.To(admissionregistrationv1.SideEffectClassNone),
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
				Rule: admissionregistrationv1.Rule{APIGroups: []string{"metal3.io"}, APIVersions: []string{"v1alpha1"},
					Resources: []string{resource}},
			}},
		}
	}
	return &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{
			webhook("baremetalhost.metal3.io", "/validate-metal3-io-v1alpha1-baremetalhost", "baremetalhosts"),
			webhook("bmceventsubscription.metal3.io", "/validate-metal3-io-v1alpha1-bmceventsubscription", "bmceventsubscriptions"),
		},
	}
}
