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

// Package controllers registers the control-plane provider's controllers with a manager. The
// provider's main package and the lab both start the provider through Setup.
package controllers

import (
	"context"
	"fmt"

	"github.com/google/go-containerregistry/pkg/v1/remote"
	ctrl "sigs.k8s.io/controller-runtime"
	crcontroller "sigs.k8s.io/controller-runtime/pkg/controller"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/controlplane/internal/controller"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/controlplane/internal/release"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/controlplane/internal/webhook"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/manager"
)

// Setup registers the OpenshiftAssistedControlPlane controller, the ClusterCache it reaches
// workload clusters through and, unless opts.WebhookPort is 0, the OpenshiftAssistedControlPlane
// validating webhook, with mgr.
func Setup(ctx context.Context, mgr ctrl.Manager, opts *manager.Options) error {
	concurrency := max(opts.Concurrency, 1)
	cc, err := opts.SetupClusterCache(ctx, mgr, "capoa-controlplane-manager")
	if err != nil {
		return err
	}
	r := &controller.Reconciler{
		Client:           mgr.GetClient(),
		APIReader:        mgr.GetAPIReader(),
		Recorder:         mgr.GetEventRecorder("openshiftassistedcontrolplane-controller"),
		Release:          release.NewReader(remote.WithUserAgent("capoa-controlplane-manager")),
		ClusterCache:     cc,
		WatchFilterValue: opts.WatchFilterValue,
	}
	if err := r.SetupWithManager(ctx, mgr, crcontroller.Options{MaxConcurrentReconciles: concurrency}); err != nil {
		return err
	}
	if opts.WebhookPort != 0 {
		if err := webhook.SetupWithManager(mgr); err != nil {
			return fmt.Errorf("setting up the OpenshiftAssistedControlPlane webhook: %w", err)
		}
	}
	return nil
}
