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

// Package setup registers the infrastructure provider's controllers with a manager. The
// provider's main.go, the tests and the lab all start the provider through Setup, whose
// signature is the same in every provider of this repository.
package setup

import (
	"context"
	"fmt"
	"time"

	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/controllers/clustercache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	infrav1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/infrastructure/v1beta1"
	infracontroller "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/infrastructure/internal/controllers"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/foreign"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/manager"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/metrics"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/servedschema"
)

// LeaderElectionID names the manager's leader election Lease (in its own namespace). The
// leader-election Role of config/rbac grants get and update on this name only: keep them equal.
const LeaderElectionID = "capi-provider-agent-leader-election"

// NewManagerOptions returns the provider's manager options with their defaults. The provider has
// no admission webhooks, so it runs no webhook server unless --webhook-port asks for one: the
// manager starts without serving certificates, as HyperShift runs the agent provider (with
// upstream cluster-api-provider-agent's flags, which the shared options accept too).
func NewManagerOptions() *manager.Options {
	o := manager.NewOptions(LeaderElectionID)
	o.FollowTLSProfile = true // on an OpenShift hub, serve with its TLS security profile (main.go grants the RBAC)
	o.NoWebhooks = true
	o.CacheByObject = CacheByObject()
	// A burst of claims writes 3 AgentMachine requests per machine, and controller-runtime rate
	// limits each resource's client apart: 20 QPS would bind 500 machines in no less than 75 s,
	// and Cluster API's 100 QPS in no less than 15 s. Chosen from make bench
	// (docs/architecture_design.md, "Fleet scale").
	o.QPS, o.Burst = DefaultQPS, DefaultBurst
	// The Agent watches reach the cache's decoder without what TrimAgent drops (issue 45).
	o.WrapTransport = infracontroller.TrimAgentWatches
	return o
}

// DefaultQPS and DefaultBurst are the infrastructure manager's client rate limits
// (--kube-api-qps, --kube-api-burst): no client-side limit, as controller-runtime's own default
// since v0.21 (kubernetes-sigs/controller-runtime#3119, on SIG API Machinery's advice to rely on
// the API server's priority and fairness). The burst applies when --kube-api-qps is set positive.
const (
	DefaultQPS   = -1
	DefaultBurst = 150
)

// CacheByObject trims what the provider's caches store (issue 19: a hub caches every Agent):
// Agents to the fields the controllers read (infracontroller.TrimAgent), every other kind
// without its managed fields (the manager's default), but for the ClusterDeployments and
// AgentClusterInstalls, whose managed fields the AgentCluster's deletion reads (package foreign,
// manager.KeepManagedFields). Secrets are cached only when they carry a Cluster API cluster name
// label, as Cluster API's managers cache them: the bootstrap data of Machines (read through the
// cache, see infracontroller.AgentMachineReconciler.SecretReader); the manager's client reads
// every other Secret from the API server.
func CacheByObject() map[client.Object]cache.ByObject {
	return map[client.Object]cache.ByObject{
		&aiv1beta1.Agent{}:                    {Transform: infracontroller.TrimAgent},
		&hivev1.ClusterDeployment{}:           manager.KeepManagedFields(),
		&hiveextv1beta1.AgentClusterInstall{}: manager.KeepManagedFields(),
		&corev1.Secret{}:                      manager.ClusterSecretsCache(),
	}
}

// Options are the settings of this provider beyond the shared manager options.
type Options struct {
	// AgentNamespace, when set, is the only namespace Agents are read from and claimed in; it may
	// differ from --namespace (namespace-scoped mode with the Agents elsewhere).
	AgentNamespace string
	// SharedAgentPool lets an AgentMachine claim the Agents of every namespace when AgentNamespace
	// is empty, as upstream cluster-api-provider-agent does. Off by default: an AgentMachine
	// takes the Agents of its own namespace only, so that a tenant who may create AgentMachines
	// cannot take, choose or count another namespace's hosts.
	SharedAgentPool bool
	// AllowCrossNamespaceReferences lets an AgentCluster name a ClusterDeployment, or the CA
	// Secret of its ignition endpoint, in a namespace other than its own. Off by default: a
	// tenant who may create AgentClusters in one namespace could otherwise bind hosts to
	// another namespace's cluster, or make assisted-service read another namespace's Secret.
	AllowCrossNamespaceReferences bool
	// ClusterCache, when set, is the Cluster API ClusterCache to reach workload clusters through
	// (for example one shared with Cluster API's controllers in the same manager); otherwise
	// Setup creates one.
	ClusterCache clustercache.ClusterCache
	// ForeignFinalizerTimeout: how long an AgentCluster's deletion waits for Hive or
	// assisted-service to act on the ClusterDeployment or AgentClusterInstall it deleted before
	// removing their finalizers (--foreign-finalizer-timeout; see package foreign). nil:
	// foreign.DefaultTimeout; 0: wait as long as they need.
	ForeignFinalizerTimeout *time.Duration
	// IgnitionTokenRefreshPeriod: how often the bootstrap data of a Machine whose host is
	// claimed but not yet installed is read again, to follow a rotated ignition token
	// (--ignition-token-refresh-period). Zero: infracontroller.DefaultIgnitionTokenRefreshPeriod;
	// negative: never.
	IgnitionTokenRefreshPeriod time.Duration
}

// AddFlags registers the provider's own flags on fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.AgentNamespace, "agent-namespace", "",
		"Namespace to read and claim Agents in, for the AgentMachines of every namespace (HyperShift's way). Empty: each AgentMachine claims "+
			"the Agents of its own namespace (see --shared-agent-pool).")
	fs.BoolVar(&o.SharedAgentPool, "shared-agent-pool", false,
		"Without --agent-namespace, let an AgentMachine claim free Agents of every namespace (upstream cluster-api-provider-agent's default). "+
			"Whoever may create an AgentMachine can then install any namespace's host into their cluster: use it only where one team owns the hub.")
	fs.BoolVar(&o.AllowCrossNamespaceReferences, "allow-cross-namespace-references", false,
		"Let an AgentCluster reference a ClusterDeployment (spec.clusterDeploymentRef.namespace) or an ignition CA Secret "+
			"(spec.ignitionEndpoint.caCertificateReference.namespace) in another namespace. Off: such AgentClusters are refused with a condition.")
	fs.DurationVar(&o.IgnitionTokenRefreshPeriod, "ignition-token-refresh-period", infracontroller.DefaultIgnitionTokenRefreshPeriod,
		"How often the bootstrap data of a Machine whose host is claimed but not yet installed is read again, so that a rotated ignition "+
			"token (HyperShift rotates it in the Machine's user-data Secret) reaches the host's token Secret and Agent. A negative value turns it off.")
	o.ForeignFinalizerTimeout = new(time.Duration)
	fs.DurationVar(o.ForeignFinalizerTimeout, foreign.TimeoutFlag, foreign.DefaultTimeout, foreign.TimeoutFlagUsage)
}

// Setup registers the infrastructure provider's controllers with the manager.
func Setup(ctx context.Context, mgr ctrl.Manager, opts *manager.Options, o Options) error {
	agentCache := mgr.GetCache()
	switch {
	case o.AgentNamespace != "":
		ctrl.Log.WithName("setup").Info("Claiming the Agents of one namespace only", "agentNamespace", o.AgentNamespace)
	case o.SharedAgentPool:
		ctrl.Log.WithName("setup").Info("Claiming the Agents of every namespace for every AgentMachine (--shared-agent-pool)")
	}
	if o.AgentNamespace != "" && opts.WatchNamespace != "" && o.AgentNamespace != opts.WatchNamespace {
		// The manager's cache only sees --namespace: read Agents through a cache of their own.
		c, err := cache.New(mgr.GetConfig(), cache.Options{
			Scheme:            mgr.GetScheme(),
			Mapper:            mgr.GetRESTMapper(),
			HTTPClient:        mgr.GetHTTPClient(),
			DefaultNamespaces: map[string]cache.Config{o.AgentNamespace: {}},
			ByObject:          map[client.Object]cache.ByObject{&aiv1beta1.Agent{}: {Transform: infracontroller.TrimAgent}},
		})
		if err != nil {
			return fmt.Errorf("creating the cache of Agents in namespace %s: %w", o.AgentNamespace, err)
		}
		if err := mgr.Add(c); err != nil {
			return fmt.Errorf("adding the Agent cache to the manager: %w", err)
		}
		agentCache = c
	}
	concurrency := max(opts.Concurrency, 1)
	cc := o.ClusterCache
	if cc == nil {
		var err error
		if cc, err = opts.SetupClusterCache(ctx, mgr, "capi-provider-agent"); err != nil {
			return err
		}
	}
	recorder, err := opts.EventRecorders(ctx, mgr)
	if err != nil {
		return err
	}
	// AgentClusters and AgentMachines are written in the shape the API server serves: ours, or the
	// copy of upstream's CRDs that HyperShift installs in place of ours.
	dc, err := discovery.NewDiscoveryClientForConfigAndClient(mgr.GetConfig(), mgr.GetHTTPClient())
	if err != nil {
		return fmt.Errorf("creating a discovery client: %w", err)
	}
	writer := servedschema.NewClient(mgr.GetClient(), dc.OpenAPIV3(),
		infrav1.GroupVersion.WithKind("AgentCluster"), infrav1.GroupVersion.WithKind("AgentMachine"))
	am := &infracontroller.AgentMachineReconciler{
		Client:                        writer,
		APIReader:                     mgr.GetAPIReader(),
		AgentReader:                   agentCache,
		SecretReader:                  mgr.GetCache(),
		AgentNamespace:                o.AgentNamespace,
		SharedAgentPool:               o.SharedAgentPool,
		AllowCrossNamespaceReferences: o.AllowCrossNamespaceReferences,
		ClusterCache:                  cc,
		WatchFilterValue:              opts.WatchFilterValue,
		Recorder:                      recorder("agentmachine-controller"),
		IgnitionTokenRefreshPeriod:    o.IgnitionTokenRefreshPeriod,
	}
	if err := am.SetupWithManager(ctx, mgr, agentCache, ctrlOptions(concurrency)); err != nil {
		return err
	}
	countAgents, err := infracontroller.CountAgents(ctx, agentCache)
	if err != nil {
		return err
	}
	metrics.RegisterInfrastructure(countAgents)
	ac := &infracontroller.AgentClusterReconciler{
		Client:                        writer,
		APIReader:                     mgr.GetAPIReader(),
		AgentReader:                   agentCache,
		AgentNamespace:                o.AgentNamespace,
		SharedAgentPool:               o.SharedAgentPool,
		AllowCrossNamespaceReferences: o.AllowCrossNamespaceReferences,
		WatchFilterValue:              opts.WatchFilterValue,
		Recorder:                      recorder("agentcluster-controller"),
		Foreign:                       foreign.Policy{Reader: mgr.GetAPIReader(), Timeout: ptr.Deref(o.ForeignFinalizerTimeout, foreign.DefaultTimeout)},
	}
	if err := ac.SetupWithManager(ctx, mgr, ctrlOptions(concurrency)); err != nil {
		return err
	}
	node := &infracontroller.NodeProviderIDReconciler{
		Client:           mgr.GetClient(),
		ClusterCache:     cc,
		WatchFilterValue: opts.WatchFilterValue,
	}
	if err := node.SetupWithManager(ctx, mgr, ctrlOptions(concurrency)); err != nil {
		return err
	}
	// Every kind the controllers above watch lists when the cache starts, not when the first
	// controller that watches it starts (manager.PrestartInformers).
	watched := []client.Object{&infrav1.AgentMachine{}, &infrav1.AgentCluster{}, &clusterv1.Machine{}, &clusterv1.Cluster{},
		&hivev1.ClusterDeployment{}, &hiveextv1beta1.AgentClusterInstall{}}
	if opts.CachesClusterSecrets() {
		watched = append(watched, &corev1.Secret{}) // bootstrap data, and the ClusterCache's kubeconfigs
	}
	if err := manager.PrestartInformers(ctx, mgr.GetCache(), watched...); err != nil {
		return err
	}
	return manager.PrestartInformers(ctx, agentCache, &aiv1beta1.Agent{})
}

func ctrlOptions(concurrency int) controller.Options {
	return controller.Options{MaxConcurrentReconciles: concurrency}
}
