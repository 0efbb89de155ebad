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

// Package setup registers the control-plane provider's controllers and webhooks with a manager.
// The provider's main.go, the tests and the lab all start the provider through Setup, whose
// signature is the same in every provider of this repository.
package setup

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/remote"
	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crcontroller "sigs.k8s.io/controller-runtime/pkg/controller"

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/controlplane/internal/controllers"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/controlplane/internal/etcd"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/controlplane/internal/inplace"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/controlplane/internal/release"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/controlplane/internal/webhooks"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/foreign"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/manager"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/metrics"
)

// EtcdConnector opens a client to the etcd member of one control-plane node of a workload
// cluster (see etcd.Connector). Production uses a port-forward through the workload cluster's
// API server; the lab passes its own.
type EtcdConnector = etcd.Connector

// LeaderElectionID names the manager's leader election Lease (in its own namespace). The
// leader-election Role of config/rbac grants get and update on this name only: keep them equal.
const LeaderElectionID = "capoa-controlplane-leader-election"

// NewManagerOptions returns the provider's manager options with their defaults: its cache keeps
// the Secrets labelled with a cluster name (manager.ClusterSecretsCache), where the controller
// finds the <cluster>-kubeconfig it wrote and the ClusterCache finds every kubeconfig, rather than
// reading them from the API server on every reconcile and connection attempt; and the managed
// fields of the ClusterDeployments and AgentClusterInstalls (manager.KeepManagedFields).
func NewManagerOptions() *manager.Options {
	o := manager.NewOptions(LeaderElectionID)
	o.FollowTLSProfile = true // on an OpenShift hub, serve with its TLS security profile (main.go grants the RBAC)
	// The runtime extension's hooks authenticate Cluster API by its client certificate
	// (--in-place-updates-client-ca-file); the server only asks for one.
	o.WebhookRequestClientCert = true
	o.CacheByObject = map[client.Object]cache.ByObject{
		&corev1.Secret{}: manager.ClusterSecretsCache(),
		// Every other kind is cached without managed fields; the deletion reads from these when
		// Hive or assisted-service last acted (package foreign).
		&hivev1.ClusterDeployment{}:           manager.KeepManagedFields(),
		&hiveextv1beta1.AgentClusterInstall{}: manager.KeepManagedFields(),
	}
	return o
}

// Options are the control-plane provider's own settings, beside the shared manager.Options.
type Options struct {
	// EtcdConnector reaches the workload clusters' etcd members (default: a port-forward through
	// the workload cluster's API server, etcd.PortForwarder). Not a flag: the lab sets it.
	EtcdConnector EtcdConnector
	// AllowedReleaseRegistries are the registries (host or host:port) the manager may read
	// release images from (--allowed-release-registries). The release-image-repository annotation
	// of a control plane names the repository, so whoever may annotate a control plane could
	// otherwise make the manager connect to any host. Empty: quay.io (release.DefaultRegistry),
	// where OpenShift's releases are; "*" allows any registry.
	AllowedReleaseRegistries []string
	// ReleaseRegistryCAFile is a PEM file of CAs every release read trusts beside the system's
	// (--release-registry-ca-file): the CA of a hub-wide mirror. It is read whenever a registry
	// is asked; a file that does not exist adds nothing (the manifests mount an optional
	// ConfigMap there). A cluster's own mirror CA comes from its image registry ConfigMap.
	ReleaseRegistryCAFile string
	// ForeignFinalizerTimeout: how long a deletion waits for Hive or assisted-service to act on
	// the ClusterDeployment or AgentClusterInstall it deleted before removing their finalizers
	// (--foreign-finalizer-timeout; see package foreign). nil: foreign.DefaultTimeout; 0: wait
	// as long as they need.
	ForeignFinalizerTimeout *time.Duration
	// InPlaceUpdates serves the runtime extension of Cluster API's in-place updates on the webhook
	// server (--in-place-updates; the release sets it from EXP_IN_PLACE_UPDATES, the variable that
	// turns on Cluster API's gate). Off, its hooks are not served at all: the webhook port, which
	// the API server must reach and a NetworkPolicy cannot restrict to it, answers nothing else
	// than admission requests, and tells no caller which Clusters exist or their Nodes' names.
	InPlaceUpdates bool
	// InPlaceUpdatesClientCAFile, with InPlaceUpdates, is a PEM file of the CAs of Cluster API's
	// runtime client certificate (--in-place-updates-client-ca-file): the hooks then answer only
	// requests that present a client certificate they issued (inplace.ClientCA). Empty: they
	// answer whoever reaches the webhook port, as Cluster API presents no certificate unless its
	// manager is given one (--runtime-extension-client-cert-file, v1.13).
	InPlaceUpdatesClientCAFile string
	// InPlaceUpdateRetry is how long Cluster API waits between two calls of the runtime
	// extension's UpdateMachine hook while OpenShift updates a node (0: inplace.DefaultRetryAfter,
	// 30s). Not a flag: the lab, whose nodes update in seconds, sets it.
	InPlaceUpdateRetry time.Duration
}

// AddFlags adds the provider's own flags to fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringSliceVar(&o.AllowedReleaseRegistries, strings.TrimPrefix(release.AllowedRegistriesFlag, "--"), nil,
		"Registries (host or host:port, comma-separated) the manager may read OpenShift release images from, "+
			"for the "+controlplanev1.ReleaseImageRepositoryAnnotation+" annotation of a mirror. "+
			"Default: "+release.DefaultRegistry+" only. \"*\" allows any registry (any host a user who can annotate a control plane names).")
	fs.StringVar(&o.ReleaseRegistryCAFile, strings.TrimPrefix(release.CAFileFlag, "--"), "",
		"PEM file of the CAs trusted, beside the system's, when reading OpenShift release images (a hub-wide mirror's CA), "+
			"read whenever a registry is asked; a file that does not exist adds nothing. "+
			"A cluster's own mirror CA is the ca-bundle.crt key of the ConfigMap of its spec.config.imageRegistryRef.")
	fs.BoolVar(&o.InPlaceUpdates, InPlaceUpdatesFlag, false,
		"Serve the runtime extension of Cluster API's in-place updates (its hooks) on the webhook server, for the ExtensionConfig of "+
			"runtime-extension-openshift-assisted.yaml. Off: the hooks are not served.")
	fs.StringVar(&o.InPlaceUpdatesClientCAFile, inplace.ClientCAFlag, "",
		"With --"+InPlaceUpdatesFlag+": PEM file of the CAs that issue Cluster API's runtime extension client certificate "+
			"(its manager's --runtime-extension-client-cert-file); the hooks then answer only requests presenting one, "+
			"reading the file at every request. Empty: the hooks answer whoever reaches the webhook port.")
	o.ForeignFinalizerTimeout = new(time.Duration)
	fs.DurationVar(o.ForeignFinalizerTimeout, foreign.TimeoutFlag, foreign.DefaultTimeout, foreign.TimeoutFlagUsage)
}

// InPlaceUpdatesFlag is the flag of Options.InPlaceUpdates.
const InPlaceUpdatesFlag = "in-place-updates"

// InPlaceUpdatesClientCAFlag is the flag of Options.InPlaceUpdatesClientCAFile.
const InPlaceUpdatesClientCAFlag = inplace.ClientCAFlag

// Setup registers the OpenshiftAssistedControlPlane controller, the ClusterCache it reaches
// workload clusters through and, unless opts.WebhookPort is 0, the OpenshiftAssistedControlPlane
// validating webhook and, with o.InPlaceUpdates, the runtime extension of Cluster API's in-place
// updates, with mgr.
func Setup(ctx context.Context, mgr ctrl.Manager, opts *manager.Options, o Options) error {
	if err := o.Validate(); err != nil {
		return err
	}
	concurrency := max(opts.Concurrency, 1)
	cc, err := opts.SetupClusterCache(ctx, mgr, "capoa-controlplane-manager")
	if err != nil {
		return err
	}
	if o.EtcdConnector == nil {
		o.EtcdConnector = etcd.NewPortForwarder()
	}
	r := &controllers.OpenshiftAssistedControlPlaneReconciler{
		Client:           mgr.GetClient(),
		APIReader:        mgr.GetAPIReader(),
		Recorder:         mgr.GetEventRecorder("openshiftassistedcontrolplane-controller"),
		Release:          releaseReader(o),
		ClusterCache:     cc,
		Etcd:             o.EtcdConnector,
		WatchFilterValue: opts.WatchFilterValue,
		// CRDs are read from the cache: the metadata informer Cluster API's contract lookup uses.
		Foreign: foreign.Policy{Reader: mgr.GetClient(), Timeout: ptr.Deref(o.ForeignFinalizerTimeout, foreign.DefaultTimeout)},
	}
	r.SecretReader = opts.ClusterSecretReader(mgr)
	if err := r.SetupWithManager(ctx, mgr, crcontroller.Options{MaxConcurrentReconciles: concurrency}); err != nil {
		return err
	}
	metrics.RegisterControlPlane(controllers.CountControlPlanes(mgr.GetCache()))
	if opts.WebhookPort != 0 {
		if err := webhooks.SetupWithManager(mgr); err != nil {
			return fmt.Errorf("setting up the OpenshiftAssistedControlPlane webhook: %w", err)
		}
	}
	if opts.WebhookPort != 0 && o.InPlaceUpdates {
		// Cluster API's in-place update hooks, on the same server (see inplace.Extension.Register).
		ext := &inplace.Extension{Client: mgr.GetClient(), ClusterCache: cc, RetryAfter: o.InPlaceUpdateRetry}
		if o.InPlaceUpdatesClientCAFile != "" {
			ext.ClientCA = &inplace.ClientCA{File: o.InPlaceUpdatesClientCAFile}
		}
		if err := ext.Register(mgr.GetWebhookServer()); err != nil {
			return fmt.Errorf("setting up the in-place update runtime extension: %w", err)
		}
	}
	return nil
}

// Validate refuses settings that cannot work together; Setup calls it before anything starts.
func (o Options) Validate() error {
	if o.InPlaceUpdatesClientCAFile == "" {
		return nil
	}
	if !o.InPlaceUpdates {
		return fmt.Errorf("--%s is set but --%s is not: the hooks it protects are not served; "+
			"set --%s=true (EXP_IN_PLACE_UPDATES=true) or leave the CA file empty", inplace.ClientCAFlag, InPlaceUpdatesFlag, InPlaceUpdatesFlag)
	}
	if err := (inplace.ClientCA{File: o.InPlaceUpdatesClientCAFile}).Check(); err != nil {
		return fmt.Errorf("--%s: %w: it must hold the PEM CA of Cluster API's runtime extension client certificate", inplace.ClientCAFlag, err)
	}
	return nil
}

// releaseReader is the manager's release image reader, limited to the allowed registries and
// trusting the CAs of o.ReleaseRegistryCAFile (read whenever a registry is asked).
func releaseReader(o Options) *release.Reader {
	r := release.NewReader(remote.WithUserAgent("capoa-controlplane-manager"))
	r.AllowedRegistries = o.AllowedReleaseRegistries
	r.CAFile = o.ReleaseRegistryCAFile
	return r
}
