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

// Package setup registers the bootstrap provider's controllers and webhooks with a
// manager. The provider's main.go, the tests and the lab all start the provider through Setup,
// whose signature is the same in every provider of this repository.
package setup

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crcontroller "sigs.k8s.io/controller-runtime/pkg/controller"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/bootstrap/internal/controllers"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/bootstrap/internal/webhooks"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/manager"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/metrics"
)

// LeaderElectionID names the manager's leader election Lease (in its own namespace). The
// leader-election Role of config/rbac grants get and update on this name only: keep them equal.
const LeaderElectionID = "capoa-bootstrap-leader-election"

// NewManagerOptions returns the provider's manager options with their defaults: its cache keeps
// the Secrets labelled with a cluster name (manager.ClusterSecretsCache), where the controller
// looks at the bootstrap data Secrets it wrote before it reads them from the API server.
func NewManagerOptions() *manager.Options {
	o := manager.NewOptions(LeaderElectionID)
	o.CacheByObject = map[client.Object]cache.ByObject{&corev1.Secret{}: manager.ClusterSecretsCache()}
	return o
}

// Options are the bootstrap provider's own flags, beside the shared manager.Options. It has none
// yet; the type keeps the Setup signature the same for every provider.
type Options struct{}

// AddFlags adds the provider's own flags to fs.
func (o *Options) AddFlags(_ *pflag.FlagSet) {}

// Setup registers the OpenshiftAssistedConfig controller (honoring opts.WatchFilterValue and
// opts.Concurrency; opts.WatchNamespace is applied by the manager's cache) and, unless
// opts.WebhookPort is 0, the OpenshiftAssistedConfig validating webhook.
func Setup(ctx context.Context, mgr ctrl.Manager, opts *manager.Options, _ Options) error {
	concurrency := max(opts.Concurrency, 1)
	r := &controllers.Reconciler{
		Client:           mgr.GetClient(),
		Recorder:         mgr.GetEventRecorder("openshiftassistedconfig-controller"),
		WatchFilterValue: opts.WatchFilterValue,
	}
	r.SecretReader = opts.ClusterSecretReader(mgr)
	if err := r.SetupWithManager(ctx, mgr, crcontroller.Options{MaxConcurrentReconciles: concurrency}); err != nil {
		return err
	}
	metrics.RegisterBootstrap()
	if opts.WebhookPort != 0 {
		if err := webhooks.SetupWithManager(mgr); err != nil {
			return fmt.Errorf("setting up the OpenshiftAssistedConfig webhook: %w", err)
		}
	}
	return nil
}
