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

// Package manager holds what the three providers' main packages share: the usual manager flags
// (diagnostics and TLS as in Cluster API, health probes, leader election, --namespace,
// --watch-filter, concurrency) and the start-up of a controller-runtime manager from them.
package manager

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"
	"k8s.io/component-base/logs"
	logsv1 "k8s.io/component-base/logs/api/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cluster-api/util/flags"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/tlsprofile"
)

// Options are the command-line settings of a provider's manager.
type Options struct {
	// LeaderElectionID names the leader election lease; each provider has its own.
	LeaderElectionID string

	LeaderElect             bool
	LeaderElectionNamespace string
	LeaseDuration           time.Duration
	RenewDeadline           time.Duration
	RetryPeriod             time.Duration

	// WatchNamespace, when set, limits the manager's cache to one namespace.
	WatchNamespace string
	// WatchFilterValue, when set, makes the controllers reconcile only objects whose
	// cluster.x-k8s.io/watch-filter label has this value.
	WatchFilterValue string
	// Concurrency is the number of objects each controller reconciles at once.
	Concurrency int
	// PriorityQueue makes the controllers use controller-runtime's priority queue. It is off by
	// default: in controller-runtime v0.23 the queue can deadlock when the manager stops
	// (kubernetes-sigs/controller-runtime#3538, fixed in v0.25), so a manager that loses its
	// lease or is rolled out would hang for its whole graceful shutdown period and fail.
	PriorityQueue bool

	SyncPeriod time.Duration
	HealthAddr string
	// ProfilerAddress, when set, serves Go's pprof handlers (/debug/pprof/) there over plain HTTP,
	// as Cluster API's managers' --profiler-address: make bench takes the manager's CPU and heap
	// profiles from it. Off by default.
	ProfilerAddress string
	// MetricsBindAddress is upstream's --metrics-bind-address (cluster-api-provider-agent,
	// cluster-api-provider-openshift-assisted, and HyperShift's arguments for the agent provider):
	// when set, metrics are served there over plain HTTP, as upstream serves them, instead of
	// Cluster API's --diagnostics-address.
	MetricsBindAddress string
	// WebhookPort is the webhook server's port; 0 disables the server. Its flag defaults to 9443,
	// or to 0 with NoWebhooks.
	WebhookPort int
	// NoWebhooks is set (not by a flag) by a provider that has no admission webhooks: it runs no
	// webhook server unless --webhook-port asks for one.
	NoWebhooks     bool
	WebhookCertDir string
	// WebhookRequestClientCert is set (not by a flag) by a provider whose webhook server serves
	// handlers that authenticate their callers by client certificate (the control plane's runtime
	// extension): the server asks TLS clients for one (tls.RequestClientCert) and leaves its
	// verification to those handlers. A client that has none, as the API server calling admission
	// and conversion webhooks, is served as without it.
	WebhookRequestClientCert bool
	// CacheByObject sets the manager cache's options per kind (cache.Options.ByObject), such as
	// a transform that trims what is stored. A kind without a transform of its own is cached
	// without managed fields (see KeepManagedFields).
	CacheByObject map[client.Object]cache.ByObject
	// WrapTransport, set (not by a flag) by a provider, wraps the transport of every client the
	// manager builds (rest.Config.Wrap), after any wrapper the rest config already has: the
	// infrastructure provider trims the Agent watches its caches decode (TrimAgentWatches).
	WrapTransport transport.WrapperFunc
	QPS           float32
	Burst         int

	// CAPI holds the diagnostics (metrics) and TLS flags, shared with Cluster API's own managers.
	CAPI flags.ManagerOptions
	// FollowTLSProfile is set (not by a flag) by a provider whose manager follows an OpenShift
	// hub's TLS security profile (package tlsprofile): where the API server serves
	// config.openshift.io/v1 APIServer, Run serves the webhooks and metrics with the profile of
	// APIServer "cluster" for the --tls-* settings not given on the command line, and stops the
	// manager cleanly when that profile changes. The manager's RBAC grants get, list and watch on
	// apiservers.config.openshift.io.
	FollowTLSProfile bool
	// Logs is the logging configuration (--logging-format, -v, ...).
	Logs *logsv1.LoggingConfiguration

	// InProcess is set (not by a flag) when several managers run in one process, as in the lab:
	// controller-runtime then accepts the same controller name (such as "clustercache") in each.
	InProcess bool
	// ClusterCacheRetryInterval, when set (not by a flag), is how long the ClusterCache waits
	// before it tries again to connect to a workload cluster it could not reach, or whose
	// kubeconfig Secret did not exist yet (Cluster API's default, 30 s, when zero). The lab sets
	// it: its clusters install in seconds, not in the 45 minutes that make 30 s negligible.
	ClusterCacheRetryInterval time.Duration

	// flags is the flag set AddFlags registered the options on, to tell flags given from defaults.
	flags *pflag.FlagSet
}

// DefaultQPS and DefaultBurst are the client rate limits of a manager unless its provider sets
// others in its options before AddFlags (--kube-api-qps, --kube-api-burst): Cluster API's own
// managers' (sigs.k8s.io/cluster-api v1.13.4 main.go and controlplane/kubeadm/main.go: 100 and
// 200; their 20 and 30 are the ClusterCache's clients of the workload clusters).
const (
	DefaultQPS   = 100
	DefaultBurst = 200
)

// NewOptions returns the defaults for a provider whose leader election lease is leaderElectionID.
func NewOptions(leaderElectionID string) *Options {
	return &Options{
		LeaderElectionID: leaderElectionID,
		Logs:             logsv1.NewLoggingConfiguration(),
		QPS:              DefaultQPS,
		Burst:            DefaultBurst,
	}
}

// AddFlags registers the options as flags on fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	logsv1.AddFlags(o.Logs, fs)
	fs.BoolVar(&o.LeaderElect, "leader-elect", false,
		"Enable leader election for the manager, so that only one replica reconciles at a time.")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-elect-namespace", "",
		"Namespace of the leader election lease. Defaults to the namespace the manager runs in.")
	fs.DurationVar(&o.LeaseDuration, "leader-elect-lease-duration", 15*time.Second,
		"How long non-leader candidates wait before trying to take over the lease.")
	fs.DurationVar(&o.RenewDeadline, "leader-elect-renew-deadline", 10*time.Second,
		"How long the leader keeps retrying to renew the lease before giving it up.")
	fs.DurationVar(&o.RetryPeriod, "leader-elect-retry-period", 2*time.Second,
		"How long candidates wait between tries of the leader election actions.")
	fs.StringVar(&o.WatchNamespace, "namespace", "",
		"Namespace the manager watches. Defaults to all namespaces.")
	fs.StringVar(&o.WatchFilterValue, "watch-filter", "",
		"Reconcile only objects whose cluster.x-k8s.io/watch-filter label has this value.")
	fs.IntVar(&o.Concurrency, "concurrency", 10,
		"Number of objects each controller reconciles at once.")
	fs.BoolVar(&o.PriorityQueue, "use-priority-queue", false,
		"Use controller-runtime's priority queue, which reconciles changes before the objects of a resync "+
			"(off by default: it can hang the manager's shutdown, kubernetes-sigs/controller-runtime#3538).")
	fs.DurationVar(&o.SyncPeriod, "sync-period", 10*time.Minute,
		"Minimum interval at which watched objects are reconciled again.")
	fs.StringVar(&o.HealthAddr, "health-addr", ":9440",
		"The address the health endpoints (/healthz, /readyz) bind to.")
	// Upstream's names (kubebuilder's), which HyperShift passes to the agent provider.
	fs.StringVar(&o.HealthAddr, "health-probe-bind-address", ":9440",
		"The same as --health-addr (the upstream providers' name for it).")
	fs.StringVar(&o.ProfilerAddress, "profiler-address", "",
		"Serve the pprof profiler over plain HTTP at this address (for example localhost:6060), as Cluster API's managers do. Off when empty.")
	fs.StringVar(&o.MetricsBindAddress, "metrics-bind-address", "",
		"Serve metrics over plain HTTP at this address, as the upstream providers do (the same as "+
			"--insecure-diagnostics --diagnostics-address=ADDRESS). Prefer --diagnostics-address, which serves them "+
			"over TLS to authenticated and authorized clients.")
	webhookPort := 9443
	if o.NoWebhooks {
		webhookPort = 0
	}
	fs.IntVar(&o.WebhookPort, "webhook-port", webhookPort,
		"Webhook server port. 0 disables the webhook server.")
	fs.StringVar(&o.WebhookCertDir, "webhook-cert-dir", "/tmp/k8s-webhook-server/serving-certs/",
		"Folder holding the webhook server's tls.crt and tls.key.")
	fs.Float32Var(&o.QPS, "kube-api-qps", o.QPS,
		"Maximum queries per second to the Kubernetes API server, per resource. Negative: no client-side limit (the API server's priority and fairness still applies).")
	fs.IntVar(&o.Burst, "kube-api-burst", o.Burst, "Maximum burst of queries to the Kubernetes API server, when --kube-api-qps is positive.")
	flags.AddManagerOptions(fs, &o.CAPI)
	if o.FollowTLSProfile {
		for _, name := range []string{tlsMinVersionFlag, tlsCipherSuitesFlag} {
			fs.Lookup(name).Usage += "\n" + tlsprofile.FlagHelp
		}
	}
	o.flags = fs
}

// Validate checks the options and applies the logging configuration.
func (o *Options) Validate() error {
	if o.Concurrency < 1 {
		return fmt.Errorf("--concurrency must be at least 1, got %d", o.Concurrency)
	}
	if o.QPS > 0 && o.Burst < 1 {
		// client-go would build a rate limiter that never lets a request through.
		return fmt.Errorf("--kube-api-burst must be at least 1 when --kube-api-qps is positive, got %d", o.Burst)
	}
	if err := logsv1.ValidateAndApply(o.Logs, nil); err != nil {
		return fmt.Errorf("invalid logging flags: %w", err)
	}
	ctrl.SetLogger(klog.Background())
	return nil
}

// changed tells whether the flag name was given on the command line.
func (o *Options) changed(name string) bool {
	return o.flags != nil && o.flags.Changed(name)
}

// Cluster API's TLS flags (flags.AddManagerOptions).
const (
	tlsMinVersionFlag   = "tls-min-version"
	tlsCipherSuitesFlag = "tls-cipher-suites"
)

// ManagerOptions translates the options into controller-runtime manager options.
func (o *Options) ManagerOptions(scheme *runtime.Scheme) (ctrl.Options, error) {
	return o.managerOptions(scheme, nil)
}

// managerOptions is ManagerOptions with hubTLS, when not nil, applied to the webhook and metrics
// servers after the TLS flags (it leaves alone what they set, see tlsprofile.Settings.Option).
func (o *Options) managerOptions(scheme *runtime.Scheme, hubTLS func(*tls.Config)) (ctrl.Options, error) {
	if o.changed("health-addr") && o.changed("health-probe-bind-address") {
		return ctrl.Options{}, errors.New("give --health-addr or --health-probe-bind-address, not both: they are the same setting")
	}
	capiOptions := o.CAPI
	if o.MetricsBindAddress != "" {
		if o.changed("diagnostics-address") || o.changed("insecure-diagnostics") {
			return ctrl.Options{}, errors.New("give --metrics-bind-address (plain HTTP) or --diagnostics-address/--insecure-diagnostics, not both")
		}
		capiOptions.DiagnosticsAddress, capiOptions.InsecureDiagnostics = o.MetricsBindAddress, true
	}
	tlsOptions, metricsOptions, err := flags.GetManagerOptions(capiOptions)
	if err != nil {
		return ctrl.Options{}, fmt.Errorf("invalid diagnostics or TLS flags: %w", err)
	}
	if hubTLS != nil {
		tlsOptions = append(tlsOptions, hubTLS)
		if metricsOptions.SecureServing {
			metricsOptions.TLSOpts = tlsOptions
		}
	}
	// Without managed fields, unless a kind keeps them (KeepManagedFields).
	cacheOptions := cache.Options{SyncPeriod: &o.SyncPeriod, ByObject: o.CacheByObject, DefaultTransform: cache.TransformStripManagedFields()}
	if o.WatchNamespace != "" {
		cacheOptions.DefaultNamespaces = map[string]cache.Config{o.WatchNamespace: {}}
	}
	opts := ctrl.Options{
		Scheme:                        scheme,
		LeaderElection:                o.LeaderElect,
		LeaderElectionID:              o.LeaderElectionID,
		LeaderElectionNamespace:       o.LeaderElectionNamespace,
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 &o.LeaseDuration,
		RenewDeadline:                 &o.RenewDeadline,
		RetryPeriod:                   &o.RetryPeriod,
		HealthProbeBindAddress:        o.HealthAddr,
		PprofBindAddress:              o.ProfilerAddress,
		Metrics:                       *metricsOptions,
		Cache:                         cacheOptions,
		MapperProvider:                NewRESTMapper,
		Client: client.Options{
			Cache: &client.CacheOptions{
				// As in Cluster API's managers: ConfigMaps and Secrets are read on demand, not
				// cached cluster-wide, which would cost memory and list/watch rights on them.
				DisableFor: []client.Object{&corev1.ConfigMap{}, &corev1.Secret{}},
			},
		},
	}
	opts.Controller = config.Controller{UsePriorityQueue: ptr.To(o.PriorityQueue)}
	if o.InProcess {
		opts.Controller.SkipNameValidation = ptr.To(true)
	}
	if o.WebhookPort != 0 {
		webhookTLS := slices.Clone(tlsOptions)
		if o.WebhookRequestClientCert {
			webhookTLS = append(webhookTLS, func(c *tls.Config) { c.ClientAuth = tls.RequestClientCert })
		}
		opts.WebhookServer = webhook.NewServer(webhook.Options{
			Port:    o.WebhookPort,
			CertDir: o.WebhookCertDir,
			TLSOpts: webhookTLS,
		})
	}
	return opts, nil
}

// SetupFunc registers a provider's controllers and webhooks with the manager.
type SetupFunc func(ctx context.Context, mgr ctrl.Manager, o *Options) error

// SetupWith returns the SetupFunc that calls a provider's setup.Setup with the provider's own
// options: every provider's setup package has the same Setup signature,
// Setup(ctx, mgr, *manager.Options, setup.Options).
func SetupWith[P any](setup func(context.Context, ctrl.Manager, *Options, P) error, providerOptions P) SetupFunc {
	return func(ctx context.Context, mgr ctrl.Manager, o *Options) error {
		return setup(ctx, mgr, o, providerOptions)
	}
}

// Run builds a manager from the options, lets setup register the provider's controllers and
// webhooks, adds the health checks and runs the manager until ctx is done.
func Run(ctx context.Context, restConfig *rest.Config, o *Options, scheme *runtime.Scheme, setup SetupFunc) error {
	log := ctrl.Log.WithName("setup")
	restConfig.QPS = o.QPS
	restConfig.Burst = o.Burst
	if o.WrapTransport != nil {
		restConfig.Wrap(o.WrapTransport)
	}
	// A change of the hub's TLS profile ends the manager as its end of ctx would: cleanly.
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	var hub *tlsprofile.Hub
	if o.FollowTLSProfile {
		var err error
		explicit := tlsprofile.Explicit{MinVersion: o.changed(tlsMinVersionFlag), CipherSuites: o.changed(tlsCipherSuitesFlag)}
		if hub, err = tlsprofile.Observe(ctx, restConfig, explicit); err != nil {
			return err
		}
	}
	mgrOptions, err := o.managerOptions(scheme, hub.Option())
	if err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(restConfig, mgrOptions)
	if err != nil {
		return fmt.Errorf("creating manager: %w", err)
	}
	if setup != nil {
		if err := setup(ctx, mgr, o); err != nil {
			return fmt.Errorf("setting up controllers: %w", err)
		}
	}
	if hub != nil {
		w, err := hub.Watcher(stop)
		if err != nil {
			return err
		}
		if err := mgr.Add(w); err != nil {
			return fmt.Errorf("adding the TLS security profile watcher: %w", err)
		}
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return fmt.Errorf("adding health check: %w", err)
	}
	readyCheck := healthz.Ping
	if o.WebhookPort != 0 {
		readyCheck = mgr.GetWebhookServer().StartedChecker()
	}
	if err := mgr.AddReadyzCheck("readyz", readyCheck); err != nil {
		return fmt.Errorf("adding ready check: %w", err)
	}
	log.Info("Starting manager", "namespace", o.WatchNamespace, "watchFilter", o.WatchFilterValue,
		"concurrency", o.Concurrency)
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("running manager: %w", err)
	}
	return nil
}

// InitLogs sets up klog flags handling as Kubernetes components do; call it first in main.
func InitLogs() { logs.InitLogs() }
