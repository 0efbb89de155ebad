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
	"os"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crcontroller "sigs.k8s.io/controller-runtime/pkg/controller"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/bootstrap/internal/assisted"
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
	o.FollowTLSProfile = true // on an OpenShift hub, serve with its TLS security profile (main.go grants the RBAC)
	o.CacheByObject = map[client.Object]cache.ByObject{&corev1.Secret{}: manager.ClusterSecretsCache()}
	return o
}

// Options are the bootstrap provider's own flags, beside the shared manager.Options.
type Options struct {
	// AssistedService says how the image-based flow reaches assisted-service's REST API to
	// download discovery ignitions; empty fields take upstream CAPOA's defaults.
	AssistedService assisted.ServiceConfig
}

// AddFlags adds the provider's own flags to fs. Each flag's default is the environment variable
// upstream CAPOA's bootstrap provider reads for the same setting (assistedinstaller/config.go),
// so that its Deployment's environment keeps working here.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	a := &o.AssistedService
	fs.BoolVar(&a.UseInternalURL, "use-internal-assisted-service-url", os.Getenv("USE_INTERNAL_IMAGE_URL") == "true",
		"Download discovery ignitions from assisted-service's Service inside the hub (plain HTTP, port 8090) rather than from the URL it advertises (env USE_INTERNAL_IMAGE_URL)")
	fs.StringVar(&a.ServiceName, "assisted-service-name", os.Getenv("ASSISTED_SERVICE_NAME"),
		"Name of assisted-service's Service, with --use-internal-assisted-service-url (env ASSISTED_SERVICE_NAME; default "+assisted.DefaultServiceName+")")
	fs.StringVar(&a.ServiceNamespace, "assisted-service-namespace", os.Getenv("ASSISTED_INSTALLER_NAMESPACE"),
		"Namespace of assisted-service's Service, with --use-internal-assisted-service-url (env ASSISTED_INSTALLER_NAMESPACE; default: the InfraEnv's namespace)")
	fs.StringVar(&a.CABundle.Resource, "assisted-ca-bundle-resource", os.Getenv("ASSISTED_CA_BUNDLE_RESOURCE"),
		"Kind of the object holding the CA that signed assisted-service's certificate: secret or configmap (env ASSISTED_CA_BUNDLE_RESOURCE; default "+assisted.DefaultCABundleResource+")")
	fs.StringVar(&a.CABundle.Namespace, "assisted-ca-bundle-namespace", os.Getenv("ASSISTED_CA_BUNDLE_NAMESPACE"),
		"Namespace of that object (env ASSISTED_CA_BUNDLE_NAMESPACE; default "+assisted.DefaultCABundleNamespace+")")
	fs.StringVar(&a.CABundle.Name, "assisted-ca-bundle-name", os.Getenv("ASSISTED_CA_BUNDLE_NAME"),
		"Name of that object; when it does not exist only the system's roots are trusted (env ASSISTED_CA_BUNDLE_NAME; default "+assisted.DefaultCABundleName+")")
	fs.StringVar(&a.CABundle.Key, "assisted-ca-bundle-key", os.Getenv("ASSISTED_CA_BUNDLE_KEY"),
		"Key of that object holding PEM certificates (env ASSISTED_CA_BUNDLE_KEY; default "+assisted.DefaultCABundleKey+")")
}

// Setup registers the OpenshiftAssistedConfig controller (honoring opts.WatchFilterValue and
// opts.Concurrency; opts.WatchNamespace is applied by the manager's cache) and, unless
// opts.WebhookPort is 0, the OpenshiftAssistedConfig validating webhook.
func Setup(ctx context.Context, mgr ctrl.Manager, opts *manager.Options, providerOpts Options) error {
	concurrency := max(opts.Concurrency, 1)
	service := providerOpts.AssistedService.Defaulted()
	if err := service.Validate(); err != nil {
		return err
	}
	r := &controllers.OpenshiftAssistedConfigReconciler{
		Client:           mgr.GetClient(),
		APIReader:        mgr.GetAPIReader(),
		Recorder:         mgr.GetEventRecorder("openshiftassistedconfig-controller"),
		WatchFilterValue: opts.WatchFilterValue,
		// The CA bundle is read through the API reader: the manager caches only Secrets
		// labelled with a cluster name.
		Discovery: &assisted.Client{Reader: mgr.GetAPIReader(), Config: service},
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
