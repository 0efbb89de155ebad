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
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	metal3ipamv1 "github.com/metal3-io/ip-address-manager/api/v1alpha1"
	configv1 "github.com/openshift/api/config/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	capipamv1beta1 "sigs.k8s.io/cluster-api/api/ipam/v1beta1" //nolint:staticcheck // the version CAPM3 v1.13's IPAM integration (Metal3Data) still reads
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	ctrl "sigs.k8s.io/controller-runtime"

	bootstrapv1alpha1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha1"
	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	controlplanev1alpha2 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha2"
	controlplanev1alpha3 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha3"
	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	infrav1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/infrastructure/v1beta1"
	bootstrapsetup "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/bootstrap/setup"
	controlplanesetup "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/controlplane/setup"
	infrasetup "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/infrastructure/setup"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/manager"
	capoascheme "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/scheme"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/assistedservice"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/ports"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/assisted"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/cvo"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/discovery"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/etcd"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/inventory"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/release"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/testenv"
)

// Speed chooses how long each simulated step takes.
type Speed string

const (
	// Fast steps (about 100 ms each) for tests.
	Fast Speed = "fast"
	// Realistic steps, in the order of a real installation's (tens of minutes).
	Realistic Speed = "realistic"
)

// Options configure a lab.
type Options struct {
	// Speed of the simulated steps (default Fast).
	Speed Speed
	// Concurrency of every controller (default 4).
	Concurrency int
	// ProviderTransport, when set, wraps the transport of each provider's client to the
	// management cluster (by provider: infrastructure, bootstrap, controlplane), e.g. with a
	// fault injector. A provider whose manager then exits is started again, as the kubelet
	// restarts its pod (ProviderRestarts counts it).
	ProviderTransport func(provider string) func(http.RoundTripper) http.RoundTripper
	// ClusterctlInventory makes the management cluster a clusterctl management cluster: it
	// records the providers running in-process in clusterctl's inventory (see
	// writeClusterctlInventory), so that `clusterctl upgrade plan` finds its core provider. The
	// demo sets it; the tests that need no clusterctl leave it off.
	ClusterctlInventory bool
	// Workloads, when set, gives each cluster a workload API server of its own, the one it
	// returns for the cluster's ClusterDeployment (the fleet benchmark's light stand-ins,
	// test/support/sim/workload), instead of the lab's one envtest API server that every cluster
	// shares. No etcd or cluster-version operator simulator runs then: the clusters' etcd is
	// etcd.SingleMembers, and their ClusterVersion is written installed and never upgraded.
	Workloads func(ctx context.Context, clusterDeployment types.NamespacedName) (*rest.Config, error)
	// ProviderCommand, when set, runs each provider as a process of its own, as a pod runs it:
	// the command it returns for the provider's name and flags (which calls
	// RunProviderProcess), with $KUBECONFIG added. The lab stops it with SIGTERM;
	// ProviderPIDs tells its process IDs. The processes' etcd connector is etcd.SingleMembers.
	ProviderCommand func(name string, args []string) *exec.Cmd
	// APIServerArgs are further flags of the management cluster's API server (an audit log).
	APIServerArgs map[string]string
	// AllowedReleaseRegistries are registries the control-plane manager may read release images
	// from besides the lab's own (its --allowed-release-registries): other mirrors of a spec.
	AllowedReleaseRegistries []string
	// Topology runs Cluster API's managed-topology controllers too (ClusterClass and Cluster
	// topology, as Cluster API's manager with CLUSTER_TOPOLOGY=true), for clusters created from a
	// ClusterClass (ClusterOptions.Topology).
	Topology bool
	// InPlaceUpdates runs Cluster API with its RuntimeSDK and InPlaceUpdates gates on and
	// registers the control-plane provider's runtime extension, from the release's
	// runtime-extension-openshift-assisted.yaml, as a user enabling in-place updates does: the
	// workers of an upgraded OpenShift cluster are then updated in place. The gates are the
	// process's: they stay on for the labs started after this one.
	InPlaceUpdates bool
	// NewestCRDs runs the lab on a hub whose assisted-service and Hive are the newest their
	// repositories publish: every management cluster it starts (Move's too) serves their newest
	// CRDs (testenv.Options.NewestCRDs, the copies of testenv.NewestCRDDir) instead of those
	// generated from the pinned Go modules. Its AgentClusterInstall has
	// spec.provisionRequirements.arbiterAgents (two-node OpenShift with an arbiter) and, with its
	// InfraEnv, spec.mirrorRegistryRef (the cluster's mirrors are assisted-service's, not
	// manifests); its Agent has installation_disk_path and fencingCredentialsSecretRef.
	NewestCRDs bool
	// ControllerManager runs, beside each management cluster's API server, the rest of a real
	// control plane that Cluster API's controllers rely on: kube-controller-manager's garbage
	// collector and namespace controller (testenv.StartControllerManager), logging through klog.
	// Without it, a foreground deletion (Cluster API's MachineDeploymentScaleSpec deletes a
	// MachineDeployment so) never ends, and a deleted namespace stays Terminating. It costs each
	// management cluster a process that watches every resource; the e2e suite sets it.
	ControllerManager bool
	// BareMetal is the bare-metal operator that drives the BareMetalHosts: BareMetalSim (the
	// default) or BareMetalReal (see bmo.go).
	BareMetal BareMetal
	// Assisted chooses the assisted-service: AssistedSim (the default, "") or AssistedReal, the
	// real service at the commit test/support/assistedservice pins, with its own CRDs, the lab's
	// hosts talking to its REST API (assistedservice.go). Not with NewestCRDs: the real
	// service's CRDs are its commit's.
	Assisted string
}

// Lab is a running lab: a management and a workload API server with every controller running.
type Lab struct {
	// Mgmt is the management cluster, Workload the API server that plays the workload cluster.
	Mgmt, Workload *testenv.Environment
	// Inventory holds the simulated hosts; add one with AddHosts.
	Inventory *inventory.Inventory
	// Assisted is the assisted-service simulator of the management cluster (fault injection),
	// nil on the real service.
	Assisted *assisted.Simulator
	// AssistedService is the real assisted-service of the management cluster
	// (Options.Assisted = AssistedReal), nil on the simulator; Hosts are the lab's hosts that
	// talk to it (fault injection).
	AssistedService *assistedservice.Service
	Hosts           *discovery.Hosts
	// Releases serves the OpenShift release images the control planes read, as a disconnected
	// site's mirror does: over HTTPS with a CA of its own, which the control-plane manager trusts
	// through its --release-registry-ca-file, and to the credentials of PullSecret only.
	Releases *release.Registry
	// releaseCAFile holds the CA of Releases, for the control-plane manager.
	releaseCAFile string
	// runtimeClient is the client certificate of Cluster API's runtime client and its CA, with
	// Options.InPlaceUpdates.
	runtimeClient *runtimeClientCertificate
	// Etcd runs the workload cluster's etcd members (see etcd.go): membership, health, quorum.
	Etcd *etcd.Simulator

	opts Options
	// payloads caches what each release image read says of itself (payload).
	payloads sync.Map
	// versions are the OpenShift versions of the releases the registry serves, with the digests
	// of their images (AddRelease).
	versions sync.Map
	// mgmts are the management clusters started, the current one (Mgmt) last: Move adds one.
	mgmts  []*management
	ctx    context.Context //nolint:containedctx // the lab's lifetime: every manager it starts, now or in a later Move, runs until Stop
	cancel context.CancelFunc
	wg     sync.WaitGroup
	errMu  sync.Mutex
	errs   []error
}

// Scheme returns the management cluster's scheme: every third-party API and the three providers'
// (with the older versions that the bootstrap and control-plane providers convert, as their
// main.go registers them), and the IPAM APIs CAPM3's Metal3Data controller looks up (the lab
// installs no IPAM: it finds their CRDs missing and goes without).
func Scheme() (*runtime.Scheme, error) {
	return capoascheme.New(infrav1.AddToScheme, bootstrapv1.AddToScheme, bootstrapv1alpha1.AddToScheme,
		controlplanev1.AddToScheme, controlplanev1alpha3.AddToScheme, controlplanev1alpha2.AddToScheme, capipamv1beta1.AddToScheme, metal3ipamv1.AddToScheme)
}

// WorkloadScheme returns the workload cluster's scheme: Kubernetes' and OpenShift's config API.
func WorkloadScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, configv1.Install} {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// provider is one of this repository's providers, started the way its main.go starts it.
type provider struct {
	name  string
	setup manager.SetupFunc
	// options are the provider's manager options with its defaults (its NewManagerOptions: the
	// caches it keeps, its rate limits), which the lab then adjusts as it runs every manager.
	options func() *manager.Options
	// webhookDir is the folder of its webhook configurations, relative to the repository root.
	webhookDir string
	// group is its API group: its webhook server converts the versions of that group's CRDs.
	group string
}

// controlPlaneOptions are the control-plane provider's own options in the lab. It reads release
// images from the lab's registry only (and the registries of Options.AllowedReleaseRegistries),
// as a production manager run with --allowed-release-registries=<mirror>
// --release-registry-ca-file=<its CA>. With in-place updates, its hooks answer only Cluster API's
// runtime client, by its client certificate, as the release documents; the lab's nodes update
// in a second: its UpdateMachine answers "retry" after a second too.
func (l *Lab) controlPlaneOptions() controlplanesetup.Options {
	cp := controlplanesetup.Options{EtcdConnector: l.Etcd, AllowedReleaseRegistries: l.allowedReleaseRegistries(), ReleaseRegistryCAFile: l.releaseCAFile,
		InPlaceUpdates: l.opts.InPlaceUpdates, InPlaceUpdateRetry: time.Second}
	if l.runtimeClient != nil {
		cp.InPlaceUpdatesClientCAFile = l.runtimeClient.caFile
	}
	return cp
}

// providers are this repository's providers, the control plane's with the options cp.
func providers(cp controlplanesetup.Options) []provider {
	return []provider{
		{name: "infrastructure", setup: manager.SetupWith(infrasetup.Setup, infrasetup.Options{}), options: infrasetup.NewManagerOptions,
			webhookDir: "infrastructure/config/webhook", group: infrav1.GroupVersion.Group},
		{name: "bootstrap", setup: manager.SetupWith(bootstrapsetup.Setup, bootstrapsetup.Options{}), options: bootstrapsetup.NewManagerOptions,
			webhookDir: "bootstrap/config/webhook", group: bootstrapv1.GroupVersion.Group},
		{name: "controlplane", setup: manager.SetupWith(controlplanesetup.Setup, cp), options: controlplanesetup.NewManagerOptions,
			webhookDir: "controlplane/config/webhook", group: controlplanev1.GroupVersion.Group},
	}
}

// Start starts the lab: both API servers, Cluster API's and CAPM3's controllers, the simulators
// and this repository's three providers, each in a manager of its own as in production.
func Start(ctx context.Context, o Options) (*Lab, error) {
	if o.Concurrency == 0 {
		o.Concurrency = 4
	}
	workloadScheme, err := WorkloadScheme()
	if err != nil {
		return nil, err
	}
	releases, err := release.StartSecureRegistry(release.SecureOptions{Username: RegistryUsername, Password: RegistryPassword})
	if err != nil {
		return nil, fmt.Errorf("starting the release registry: %w", err)
	}
	l := &Lab{Inventory: inventory.New(), Releases: releases, opts: o}
	l.ctx, l.cancel = context.WithCancel(ctx)
	ctx = l.ctx
	ok := false
	defer func() {
		if !ok {
			_ = l.Stop()
		}
	}()

	if l.releaseCAFile, err = writeTempFile("capoa-lab-registry-ca-*.pem", releases.CACertPEM()); err != nil {
		return nil, err
	}
	if o.InPlaceUpdates {
		if l.runtimeClient, err = writeRuntimeClientCertificate(); err != nil {
			return nil, err
		}
	}
	for version, kube := range Releases {
		if err := l.AddRelease(version, kube); err != nil {
			return nil, err
		}
	}
	if o.Workloads == nil {
		if err := l.startWorkload(ctx, workloadScheme); err != nil {
			return nil, err
		}
	}
	if _, err := l.startManagement(ctx); err != nil {
		return nil, err
	}
	ok = true
	return l, nil
}

// startWorkload starts the workload API server that the lab's clusters share, with the
// cluster-version operator and etcd simulators.
func (l *Lab) startWorkload(ctx context.Context, workloadScheme *runtime.Scheme) error {
	o := l.opts
	var err error
	if l.Workload, err = testenv.StartWorkload(workloadScheme); err != nil {
		return fmt.Errorf("starting the workload API server: %w", err)
	}
	if err := cvo.InstallCRD(ctx, l.Workload.Config); err != nil {
		return fmt.Errorf("installing the ClusterVersion CRD in the workload cluster: %w", err)
	}
	workloadMgr, err := ctrl.NewManager(l.Workload.Config, ctrl.Options{Scheme: workloadScheme, Metrics: metricsserver.Options{BindAddress: "0"},
		Controller: testenv.ControllerConfig()})
	if err != nil {
		return fmt.Errorf("creating the workload manager: %w", err)
	}
	// The machine-config operator's node updates too: each node's kubelet moves to the
	// Kubernetes version of the release, read from the lab's registry.
	cvoSim := &cvo.Reconciler{Updates: l.updateService, Signatures: l.signatureStore, KubernetesVersion: l.kubernetesVersion}
	if o.Speed == Realistic {
		cvoSim.Durations = cvo.RealisticDurations()
	}
	if err := cvoSim.SetupWithManager(workloadMgr, controller.Options{MaxConcurrentReconciles: o.Concurrency}); err != nil {
		return fmt.Errorf("setting up the cluster-version operator simulator: %w", err)
	}
	if err := l.setupEtcd(ctx, workloadMgr); err != nil {
		return err
	}
	l.run("workload", func() error { return workloadMgr.Start(ctx) })
	return nil
}

// management is one management cluster of the lab: its API server, Cluster API's and CAPM3's
// controllers, the services a hub runs (assisted-service and BMO, simulated) and the three
// providers. The hosts, the workload cluster and the release registry are the lab's, shared.
type management struct {
	name     string // management-<n>, in logs and errors
	env      *testenv.Environment
	assisted *assisted.Simulator
	// real is the real assisted-service and its hosts (Options.Assisted = AssistedReal), nil on
	// the simulator.
	real     *realAssisted
	selfBoot *selfBooter
	webhooks []*envtest.WebhookInstallOptions
	// controlPlaneWebhooks is the webhook server of the control-plane provider, which serves its
	// runtime extension too.
	controlPlaneWebhooks *envtest.WebhookInstallOptions
	// providers are the running providers, by name.
	providers map[string]*runningProvider
	// kubeconfig is the kubeconfig file of the providers run as processes (kubeconfigFile).
	kubeconfig string
	// controllerManager is its kube-controller-manager (Options.ControllerManager), or nil.
	controllerManager *testenv.ControllerManager
}

// runningProvider is a provider's manager, which RestartProvider stops and starts again.
type runningProvider struct {
	start func() // starts it (again)
	mu    sync.Mutex
	stop  context.CancelFunc
	done  chan struct{}
	// crashes counts the exits of its manager that the lab did not ask for.
	crashes int
	// pid is the process ID of a provider run as a process (Options.ProviderCommand).
	pid int
}

// ProviderLogDir returns the folder where the current management cluster's providers that run as
// processes (Options.ProviderCommand) write their logs, <provider>.log; "" when none does. Stop
// removes it unless a manager failed.
func (l *Lab) ProviderLogDir() string { return l.current().processDir() }

// ProviderPIDs returns the process ID of each provider of the current management cluster that
// runs as a process of its own (Options.ProviderCommand), by name.
func (l *Lab) ProviderPIDs() map[string]int {
	out := map[string]int{}
	for name, rp := range l.current().providers {
		rp.mu.Lock()
		if rp.pid != 0 {
			out[name] = rp.pid
		}
		rp.mu.Unlock()
	}
	return out
}

// kubeconfigFile writes, once, a kubeconfig of the management cluster's API server for the
// providers that run as processes, in a folder of its own.
func (m *management) kubeconfigFile() (string, error) {
	if m.kubeconfig != "" {
		return m.kubeconfig, nil
	}
	dir, err := os.MkdirTemp("", "capoa-lab-"+m.name+"-")
	if err != nil {
		return "", fmt.Errorf("creating the folder of %s's kubeconfig: %w", m.name, err)
	}
	path := filepath.Join(dir, "kubeconfig")
	if err := m.env.WriteKubeconfig(path); err != nil {
		return "", fmt.Errorf("writing %s's kubeconfig: %w", m.name, err)
	}
	m.kubeconfig = path
	return path, nil
}

// processDir is the folder of kubeconfigFile, where the providers run as processes also write
// their logs; "" while none runs.
func (m *management) processDir() string {
	if m.kubeconfig == "" {
		return ""
	}
	return filepath.Dir(m.kubeconfig)
}

// startManagement starts a management cluster and makes it the lab's current one (Mgmt).
func (l *Lab) startManagement(ctx context.Context) (*management, error) {
	scheme, err := Scheme()
	if err != nil {
		return nil, err
	}
	m := &management{name: fmt.Sprintf("management-%d", len(l.mgmts)+1), providers: map[string]*runningProvider{}}
	// Stop stops it, started or not.
	l.mgmts = append(l.mgmts, m)
	envOpts := testenv.Options{Scheme: scheme, APIServerArgs: l.opts.APIServerArgs, NewestCRDs: l.opts.NewestCRDs}
	if l.opts.Assisted == AssistedReal {
		if l.opts.NewestCRDs {
			return nil, errors.New("lab.Options: the real assisted-service serves its own commit's CRDs, not the newest (NewestCRDs)")
		}
		if err := realHubCRDs(&envOpts); err != nil {
			return nil, err
		}
	}
	if m.env, err = testenv.StartWithOptions(envOpts); err != nil {
		return nil, fmt.Errorf("starting the API server of %s: %w", m.name, err)
	}
	if l.opts.ControllerManager {
		// Not the lab's context, which Stop cancels first: Stop stops the process itself.
		if m.controllerManager, err = m.env.StartControllerManager(context.WithoutCancel(ctx), klog.NewStandardLogger("INFO").Writer(), "garbagecollector", "namespace"); err != nil {
			return nil, fmt.Errorf("starting the kube-controller-manager of %s: %w", m.name, err)
		}
	}

	// Cluster API, CAPM3 and the simulators share one manager: in production they are other
	// projects' pods, which the providers only meet through the API.
	core, err := ctrl.NewManager(m.env.Config, ctrl.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"},
		Controller: testenv.ControllerConfig()})
	if err != nil {
		return nil, fmt.Errorf("creating the core manager of %s: %w", m.name, err)
	}
	capi, err := testenv.SetupCAPIControllers(ctx, core, l.opts.Concurrency)
	if err != nil {
		return nil, err
	}
	if l.runtimeClient != nil {
		// As Cluster API's manager given --runtime-extension-client-cert-file and -key-file.
		capi.RuntimeClient.UseClientCertificate(l.runtimeClient.certFile, l.runtimeClient.keyFile)
	}
	// CAPM3 polls on a clock of minutes; the lab's hosts run on one of 100 ms steps (Realistic
	// keeps CAPM3's own).
	requeueCap := testenv.LabRequeueCap
	if l.opts.Speed == Realistic {
		requeueCap = 0
	}
	if err := SetupCAPM3Controllers(ctx, core, capi.ClusterCache, l.opts.Concurrency, requeueCap); err != nil {
		return nil, err
	}
	if l.opts.Topology {
		if err := testenv.SetupCAPITopologyControllers(ctx, core, capi, l.opts.Concurrency); err != nil {
			return nil, err
		}
	}
	if l.opts.InPlaceUpdates {
		if err := testenv.EnableInPlaceUpdates(); err != nil {
			return nil, err
		}
	}
	copts := controller.Options{MaxConcurrentReconciles: l.opts.Concurrency}
	var hosts inventory.HostEvents
	if l.opts.Assisted == AssistedReal {
		if hosts, err = l.startRealAssisted(ctx, m, core); err != nil {
			return nil, err
		}
	} else if hosts, err = l.startAssistedSimulator(ctx, m, core, copts); err != nil {
		return nil, err
	}
	if err := l.setupBareMetal(ctx, m, core, l.hostEvents(hosts), copts); err != nil {
		return nil, err
	}
	m.selfBoot = &selfBooter{Hosts: l.hostEvents(hosts)}
	if err := m.selfBoot.setupWithManager(core, copts); err != nil {
		return nil, fmt.Errorf("setting up the self-booted hosts: %w", err)
	}
	l.run(m.name+"/core", func() error { return core.Start(ctx) })

	root, err := testenv.RepoRoot()
	if err != nil {
		return nil, err
	}
	for _, p := range providers(l.controlPlaneOptions()) {
		if err := l.startProvider(ctx, m, root, scheme, p); err != nil {
			return nil, err
		}
	}
	if l.opts.InPlaceUpdates {
		if err := registerRuntimeExtension(ctx, m, root); err != nil {
			return nil, fmt.Errorf("%s: %w", m.name, err)
		}
	}
	if l.opts.ClusterctlInventory {
		if err := writeClusterctlInventory(ctx, m.env.Config); err != nil {
			return nil, fmt.Errorf("writing the clusterctl inventory of %s: %w", m.name, err)
		}
	}
	l.Mgmt, l.Assisted = m.env, m.assisted
	l.AssistedService, l.Hosts = nil, nil
	if m.real != nil {
		l.AssistedService, l.Hosts = m.real.service, m.real.hosts
	}
	return m, nil
}

// startAssistedSimulator runs the assisted-service simulator for management cluster m; the
// hosts it returns are told what the bare-metal side does to them.
func (l *Lab) startAssistedSimulator(ctx context.Context, m *management, core ctrl.Manager, copts controller.Options) (inventory.HostEvents, error) {
	m.assisted = &assisted.Simulator{
		Inventory:   l.Inventory,
		WorkloadFor: l.opts.Workloads,
		// The newest hub runs assisted-service as multicluster engine deploys it for two-node
		// OpenShift with fencing (TNF_CLUSTERS_SUPPORT=true); an older one has no TNF.
		TNFClustersSupport: l.opts.NewestCRDs,
		// The Nodes run the kubelet of the release installed, read from the lab's registry.
		KubernetesVersion:  l.kubernetesVersion,
		OnClusterInstalled: l.clusterInstalled,
	}
	if l.Workload != nil {
		m.assisted.Workload = l.Workload.Config
	}
	if l.opts.Speed == Realistic {
		m.assisted.Durations = assisted.RealisticDurations()
	}
	if err := m.assisted.SetupWithManager(ctx, core, copts); err != nil {
		return nil, fmt.Errorf("setting up the assisted-service simulator: %w", err)
	}
	if err := writeAssistedCA(ctx, m.env.Client, m.assisted.CACertPEM()); err != nil {
		return nil, fmt.Errorf("%s: %w", m.name, err)
	}
	return m.assisted, nil
}

// clusterInstalled leaves an installed cluster's workload API server as the release's operators
// do: its ClusterVersion at the payload's version (as the cluster-version operator reads it),
// and what the install-config's capabilities install.
func (l *Lab) clusterInstalled(ctx context.Context, c assisted.InstalledCluster) error {
	p, err := l.payload(ctx, c.ReleaseImage)
	if err != nil {
		return err
	}
	if err := cvo.EnsureClusterVersion(ctx, c.Workload, cvo.Release(p.Version, c.ReleaseImage), upstreamOf(c.ReleaseImage)); err != nil {
		return err
	}
	return installedCapabilities(ctx, c, p.Version)
}

// Where the bootstrap provider finds the CA bundle that assisted-service's REST API is trusted
// with: upstream CAPOA's defaults (assistedinstaller/config.go ASSISTED_CA_BUNDLE_NAMESPACE,
// _NAME, _RESOURCE and _KEY).
const (
	assistedCANamespace = "assisted-installer"
	assistedCAName      = "assisted-installer-ca"
	assistedCAKey       = "ca.crt"
)

// writeAssistedCA puts the CA of the assisted-service simulator's REST API where the bootstrap
// provider looks for it, before the providers start: as an administrator of a hub whose
// assisted-service serves a certificate of a private CA does.
func writeAssistedCA(ctx context.Context, c client.Client, ca []byte) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: assistedCANamespace}}
	if err := c.Create(ctx, ns); client.IgnoreAlreadyExists(err) != nil {
		return fmt.Errorf("creating namespace %s: %w", assistedCANamespace, err)
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: assistedCANamespace, Name: assistedCAName},
		Data:       map[string][]byte{assistedCAKey: ca},
	}
	if err := c.Create(ctx, secret); err != nil {
		return fmt.Errorf("writing assisted-service's CA to Secret %s/%s: %w", assistedCANamespace, assistedCAName, err)
	}
	return nil
}

// current is the current management cluster.
func (l *Lab) current() *management { return l.mgmts[len(l.mgmts)-1] }

// startProvider installs the provider's webhook configurations (renamed per provider, as the
// release manifests' name prefix does) with a serving certificate of their own, then runs the
// provider through manager.Run, exactly as its main.go does, with its own manager options.
func (l *Lab) startProvider(ctx context.Context, m *management, root string, scheme *runtime.Scheme, p provider) error {
	opts := p.options()
	opts.LeaderElectionID = "capoa-lab-" + p.name
	opts.Concurrency = l.opts.Concurrency
	opts.InProcess = true
	opts.SyncPeriod = 10 * time.Minute
	opts.HealthAddr = "0"
	opts.CAPI.DiagnosticsAddress = "0"
	opts.CAPI.InsecureDiagnostics = true
	opts.CAPI.TLSMinVersion = "VersionTLS12"
	opts.LeaseDuration, opts.RenewDeadline, opts.RetryPeriod = 15*time.Second, 10*time.Second, 2*time.Second
	opts.QPS, opts.Burst = 100, 200
	opts.ClusterCacheRetryInterval = testenv.ClusterCacheRetryInterval

	dir := filepath.Join(root, p.webhookDir)
	if _, err := os.Stat(filepath.Join(dir, "manifests.yaml")); err == nil {
		// The manager binds its webhook port seconds from now: a reserved one stays free until then.
		port, err := ports.Reserve()
		if err != nil {
			return err
		}
		w := &envtest.WebhookInstallOptions{Paths: []string{dir}, LocalServingHost: "127.0.0.1", LocalServingPort: port}
		if err := w.PrepWithoutInstalling(); err != nil {
			return fmt.Errorf("preparing the %s webhooks: %w", p.name, err)
		}
		for _, v := range w.ValidatingWebhooks {
			v.Name = "capoa-" + p.name + "-" + v.Name
		}
		for _, mw := range w.MutatingWebhooks {
			mw.Name = "capoa-" + p.name + "-" + mw.Name
		}
		if err := w.Install(m.env.Config); err != nil {
			return fmt.Errorf("installing the %s webhooks: %w", p.name, err)
		}
		if err := convertAt(ctx, m.env.Client, p.group, w); err != nil {
			return fmt.Errorf("pointing the %s CRDs' conversion at its webhook server: %w", p.name, err)
		}
		m.webhooks = append(m.webhooks, w)
		if p.group == controlplanev1.GroupVersion.Group {
			m.controlPlaneWebhooks = w
		}
		opts.WebhookPort = w.LocalServingPort
		opts.WebhookCertDir = w.LocalServingCertDir
	} else {
		opts.WebhookPort = 0
	}
	cfg := rest.CopyConfig(m.env.Config)
	if l.opts.ProviderTransport != nil {
		cfg.WrapTransport = l.opts.ProviderTransport(p.name)
	}
	rp := &runningProvider{}
	m.providers[p.name] = rp
	if l.opts.ProviderCommand != nil {
		kubeconfig, err := m.kubeconfigFile()
		if err != nil {
			return err
		}
		healthAddr, err := ports.Address()
		if err != nil {
			return err
		}
		cmd, done, err := l.startProcess(p, kubeconfig, processArgs(p, healthAddr, opts.WebhookPort, opts.WebhookCertDir, l.controlPlaneOptions()))
		if err != nil {
			return err
		}
		rp.pid = cmd.Process.Pid
		if err := waitReady(ctx, p, healthAddr, done); err != nil {
			_ = cmd.Process.Kill()
			return err
		}
		l.run(m.name+"/"+p.name, func() error { return stopProcess(ctx, p, cmd, done) })
		return nil
	}
	rp.start = func() {
		pctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		rp.mu.Lock()
		rp.stop, rp.done = cancel, done
		rp.mu.Unlock()
		l.run(m.name+"/"+p.name, func() error {
			defer close(done)
			for {
				err := manager.Run(pctx, cfg, opts, scheme, p.setup)
				if pctx.Err() != nil {
					return nil // stopped: by Stop, or by RestartProvider, which starts it again
				}
				if err == nil || l.opts.ProviderTransport == nil {
					return err
				}
				// Behind a fault injector: the pod's container exited, the kubelet restarts it.
				ctrl.Log.WithName("lab").Info("A provider's manager exited; starting it again", "provider", p.name, "error", err.Error())
				rp.mu.Lock()
				rp.crashes++
				rp.mu.Unlock()
				select {
				case <-pctx.Done():
					return nil
				case <-time.After(time.Second):
				}
			}
		})
	}
	rp.start()
	return nil
}

// webhookServerURL is the https:// URL of the webhook server w serves, without a path.
func webhookServerURL(w *envtest.WebhookInstallOptions) string {
	return "https://" + net.JoinHostPort(w.LocalServingHost, strconv.Itoa(w.LocalServingPort))
}

// convertAt points the conversion webhook of group's CRDs at the webhook server that w serves, as
// the release manifests point it at the provider's Service with cert-manager's CA. (envtest set
// them up for a server of its own, which the lab does not run: each provider serves its own.)
func convertAt(ctx context.Context, c client.Client, group string, w *envtest.WebhookInstallOptions) error {
	crds := &apiextensionsv1.CustomResourceDefinitionList{}
	if err := c.List(ctx, crds); err != nil {
		return err
	}
	url := webhookServerURL(w) + "/convert"
	for i := range crds.Items {
		crd := &crds.Items[i]
		if crd.Spec.Group != group || crd.Spec.Conversion == nil || crd.Spec.Conversion.Strategy != apiextensionsv1.WebhookConverter {
			continue
		}
		before := crd.DeepCopy()
		crd.Spec.Conversion.Webhook.ClientConfig = &apiextensionsv1.WebhookClientConfig{URL: &url, CABundle: w.LocalServingCAData}
		if err := c.Patch(ctx, crd, client.MergeFrom(before)); err != nil {
			return fmt.Errorf("CRD %s: %w", crd.Name, err)
		}
	}
	return nil
}

// RestartProvider stops the provider's manager in the current management cluster, waits until
// it has stopped (its leader election lease released) and starts it again, as a rolling update
// or an evicted pod does.
func (l *Lab) RestartProvider(name string) error {
	rp := l.current().providers[name]
	if rp == nil {
		return fmt.Errorf("no provider %q", name)
	}
	if rp.start == nil {
		return fmt.Errorf("provider %q runs as a process, which the lab does not restart", name)
	}
	rp.mu.Lock()
	stop, done := rp.stop, rp.done
	rp.mu.Unlock()
	stop()
	<-done
	rp.start()
	return nil
}

// ProviderRestarts returns, per provider of the current management cluster, how many times its
// manager exited on its own and was started again (see Options.ProviderTransport).
func (l *Lab) ProviderRestarts() map[string]int {
	out := map[string]int{}
	for name, rp := range l.current().providers {
		rp.mu.Lock()
		out[name] = rp.crashes
		rp.mu.Unlock()
	}
	return out
}

func (l *Lab) run(name string, f func() error) {
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		if err := f(); err != nil {
			l.errMu.Lock()
			l.errs = append(l.errs, fmt.Errorf("%s: %w", name, err))
			l.errMu.Unlock()
		}
	}()
}

// Err returns what made a manager stop, if any did.
func (l *Lab) Err() error {
	l.errMu.Lock()
	defer l.errMu.Unlock()
	return errors.Join(l.errs...)
}

// Stop stops every manager and the API servers.
func (l *Lab) Stop() error {
	l.cancel()
	l.wg.Wait()
	errs := []error{l.Err()}
	envs := make([]*testenv.Environment, 0, 1+len(l.mgmts))
	envs = append(envs, l.Workload)
	for _, m := range l.mgmts {
		for _, w := range m.webhooks {
			errs = append(errs, w.Cleanup())
		}
		if m.controllerManager != nil {
			errs = append(errs, m.controllerManager.Stop())
		}
		if m.real != nil {
			errs = append(errs, m.real.stop(l.Err() != nil))
		}
		envs = append(envs, m.env)
	}
	errs = append(errs, l.stopEtcd())
	l.Releases.Close()
	if l.releaseCAFile != "" {
		errs = append(errs, os.Remove(l.releaseCAFile))
	}
	if l.runtimeClient != nil {
		errs = append(errs, os.RemoveAll(l.runtimeClient.dir))
	}
	// The folder of the providers' kubeconfig and logs (kubeconfigFile) goes with the lab, unless
	// a manager failed: then its logs are what tells why, and the error says where they are.
	failed := l.Err() != nil
	for _, m := range l.mgmts {
		switch dir := m.processDir(); {
		case dir == "":
		case failed:
			errs = append(errs, fmt.Errorf("the logs of %s's provider processes are kept in %s", m.name, dir))
		default:
			errs = append(errs, os.RemoveAll(dir))
		}
	}
	for _, e := range envs {
		if e == nil {
			continue
		}
		// envtest kills an API server that does not stop in time; a slow stop on a loaded
		// machine is not a failure of the lab.
		if err := e.Stop(); err != nil && !strings.Contains(err.Error(), "timeout waiting for process") {
			errs = append(errs, err)
		} else if err != nil {
			ctrl.Log.WithName("lab").Info("An API server was killed after it did not stop in time", "error", err.Error())
		}
	}
	return errors.Join(errs...)
}

// The credentials of the lab's release registry: the lab's pull secrets hold them (PullSecret).
const (
	RegistryUsername = "lab-mirror"
	RegistryPassword = "lab-mirror-password"
)

// PullSecret is the .dockerconfigjson of the pull secrets of the lab's clusters: credentials for
// the lab's release registry, beside an entry for cloud.openshift.com as a real one has.
func (l *Lab) PullSecret() []byte { return l.Releases.PullSecret(RegistryUsername, RegistryPassword) }

// writeTempFile writes data to a new temporary file named after pattern (os.CreateTemp) and
// returns its path.
func writeTempFile(pattern string, data []byte) (string, error) {
	f, err := os.CreateTemp("", pattern)
	if err != nil {
		return "", fmt.Errorf("creating %s: %w", pattern, err)
	}
	_, werr := f.Write(data)
	if err := errors.Join(werr, f.Close()); err != nil {
		_ = os.Remove(f.Name())
		return "", fmt.Errorf("writing %s: %w", f.Name(), err)
	}
	return f.Name(), nil
}

// Releases are the OpenShift versions the lab's registry serves from the start, with their
// Kubernetes versions.
var Releases = map[string]string{
	"4.16.20": "1.29.10",
	"4.17.3":  "1.30.4",
	"4.17.5":  "1.30.6",
	"4.18.0":  "1.31.1",
	// Two-node OpenShift with fencing needs 4.20 or later.
	"4.20.0": "1.33.2",
}

// AddRelease pushes the x86_64 release image of an OpenShift version to the lab's registry.
func (l *Lab) AddRelease(version, kubernetesVersion string) error {
	img, err := l.Releases.PushRelease(fmt.Sprintf("%s:%s-x86_64", l.Releases.Repository(), version), kubernetesVersion)
	if err != nil {
		return fmt.Errorf("pushing the release image of %s: %w", version, err)
	}
	digest, err := img.Digest()
	if err != nil {
		return fmt.Errorf("the digest of the release image of %s: %w", version, err)
	}
	l.versions.Store(version, digest.String())
	return nil
}

// allowedReleaseRegistries are the registries the control-plane manager may read release images
// from: the lab's own and those of Options.AllowedReleaseRegistries.
func (l *Lab) allowedReleaseRegistries() []string {
	return append([]string{l.Releases.Host}, l.opts.AllowedReleaseRegistries...)
}

// kubernetesVersion returns the Kubernetes version of a release image (see payload).
func (l *Lab) kubernetesVersion(ctx context.Context, image string) (string, error) {
	p, err := l.payload(ctx, image)
	return p.KubernetesVersion, err
}

// payload reads a release image once, from the lab's registry. OpenShift's own repository is
// read there too, as the hub's mirror configuration (assisted-service's mirror registries) sends
// it: a disconnected cluster's ClusterImageSet names quay.io, pinned by digest.
func (l *Lab) payload(ctx context.Context, image string) (release.Payload, error) {
	if p, ok := l.payloads.Load(image); ok {
		return p.(release.Payload), nil //nolint:forcetypeassert // only Payloads are stored
	}
	from := image
	if rest, ok := strings.CutPrefix(image, OpenShiftReleaseRepository); ok {
		from = l.Releases.Repository() + rest
	}
	p, err := release.ReadPayload(ctx, from, l.Releases.RemoteOptions()...)
	if err != nil {
		return release.Payload{}, err
	}
	l.payloads.Store(image, p)
	return p, nil
}

// OpenShiftReleaseRepository is the repository of OpenShift's releases, which the lab's registry
// mirrors (Releases.Repository).
const OpenShiftReleaseRepository = cvo.ReleaseRepository

// AddHosts adds n simulated hosts named <prefix>-<i> to the inventory and creates their
// BareMetalHosts (and BMC credentials Secret) in namespace, as a lab administrator would. Each
// mutate changes a host (its firmware) and its BareMetalHost before they are added.
func (l *Lab) AddHosts(ctx context.Context, namespace, prefix string, n int, mutate ...func(*inventory.Host, *bmov1alpha1.BareMetalHost)) ([]*inventory.Host, error) {
	c := l.Mgmt.Client
	creds := prefix + "-bmc"
	const username, password = "admin", "lab-bmc-password"
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: creds},
		StringData: map[string]string{"username": username, "password": password},
	}
	if err := c.Create(ctx, secret); client.IgnoreAlreadyExists(err) != nil {
		return nil, fmt.Errorf("creating the BMC credentials: %w", err)
	}
	hosts := inventory.Generate(prefix, n, inventory.GenerateOptions{FirstIP: 20 + len(l.Inventory.Hosts())})
	bmhs := make([]*bmov1alpha1.BareMetalHost, 0, len(hosts))
	for _, h := range hosts {
		h.BMCUsername, h.BMCPassword = username, password
		bmh := h.BareMetalHost(namespace, creds)
		for _, m := range mutate {
			m(h, bmh)
		}
		bmhs = append(bmhs, bmh)
	}
	if err := l.Inventory.AddNew(hosts...); err != nil {
		return nil, fmt.Errorf("adding hosts %s-*: %w", prefix, err)
	}
	for i, bmh := range bmhs {
		if err := c.Create(ctx, bmh); err != nil {
			return nil, fmt.Errorf("creating BareMetalHost %s: %w", hosts[i].Name, err)
		}
	}
	return hosts, nil
}
