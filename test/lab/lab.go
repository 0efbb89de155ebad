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
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	ctrl "sigs.k8s.io/controller-runtime"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/bootstrap/api/v1alpha2"
	bootstrapcontrollers "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/bootstrap/controllers"
	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/controlplane/api/v1alpha3"
	controlplanecontrollers "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/controlplane/controllers"
	infrav1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/infrastructure/api/v1beta1"
	infracontrollers "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/infrastructure/controllers"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/manager"
	capoascheme "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/scheme"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/sim/assisted"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/sim/baremetal"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/sim/cvo"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/sim/inventory"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/sim/release"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/testenv"
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
}

// Lab is a running lab: a management and a workload API server with every controller running.
type Lab struct {
	// Mgmt is the management cluster, Workload the API server that plays the workload cluster.
	Mgmt, Workload *testenv.Environment
	// Inventory holds the simulated hosts; add one with AddHosts.
	Inventory *inventory.Inventory
	// Assisted is the assisted-service simulator (fault injection).
	Assisted *assisted.Simulator
	// Releases serves the OpenShift release images the control planes read.
	Releases *release.Registry

	selfBoot *selfBooter
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	errMu    sync.Mutex
	errs     []error
	webhooks []*envtest.WebhookInstallOptions
}

// Scheme returns the management cluster's scheme: every third-party API and the three providers'.
func Scheme() (*runtime.Scheme, error) {
	return capoascheme.New(infrav1.AddToScheme, bootstrapv1.AddToScheme, controlplanev1.AddToScheme)
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
	// webhookDir is the folder of its webhook configurations, relative to the repository root.
	webhookDir string
}

func providers() []provider {
	return []provider{
		{name: "infrastructure", setup: infracontrollers.NewSetupFunc(infracontrollers.Options{}), webhookDir: "infrastructure/config/webhook"},
		{name: "bootstrap", setup: bootstrapcontrollers.Setup, webhookDir: "bootstrap/config/webhook"},
		{name: "controlplane", setup: controlplanecontrollers.Setup, webhookDir: "controlplane/config/webhook"},
	}
}

// Start starts the lab: both API servers, Cluster API's and CAPM3's controllers, the simulators
// and this repository's three providers, each in a manager of its own as in production.
func Start(ctx context.Context, o Options) (*Lab, error) {
	if o.Concurrency == 0 {
		o.Concurrency = 4
	}
	scheme, err := Scheme()
	if err != nil {
		return nil, err
	}
	workloadScheme, err := WorkloadScheme()
	if err != nil {
		return nil, err
	}
	l := &Lab{Inventory: inventory.New(), Releases: release.StartRegistry()}
	ctx, l.cancel = context.WithCancel(ctx)
	ok := false
	defer func() {
		if !ok {
			_ = l.Stop()
		}
	}()

	for version, kube := range Releases {
		if err := l.AddRelease(version, kube); err != nil {
			return nil, err
		}
	}
	if l.Mgmt, err = testenv.Start(scheme); err != nil {
		return nil, fmt.Errorf("starting the management API server: %w", err)
	}
	if l.Workload, err = testenv.Start(workloadScheme); err != nil {
		return nil, fmt.Errorf("starting the workload API server: %w", err)
	}
	if err := cvo.InstallCRD(ctx, l.Workload.Config); err != nil {
		return nil, fmt.Errorf("installing the ClusterVersion CRD in the workload cluster: %w", err)
	}

	// Cluster API, CAPM3 and the simulators share one manager: in production they are other
	// projects' pods, which the providers only meet through the API.
	core, err := ctrl.NewManager(l.Mgmt.Config, ctrl.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: ptr.To(true)}})
	if err != nil {
		return nil, fmt.Errorf("creating the core manager: %w", err)
	}
	cc, err := testenv.SetupCAPIControllers(ctx, core, o.Concurrency)
	if err != nil {
		return nil, err
	}
	if err := SetupCAPM3Controllers(ctx, core, cc, o.Concurrency); err != nil {
		return nil, err
	}
	copts := controller.Options{MaxConcurrentReconciles: o.Concurrency}
	l.Assisted = &assisted.Simulator{
		Inventory: l.Inventory,
		Workload:  l.Workload.Config,
		OnClusterInstalled: func(ctx context.Context, c assisted.InstalledCluster) error {
			return cvo.EnsureClusterVersion(ctx, c.Workload, cvo.Release("", c.ReleaseImage))
		},
	}
	bmh := &baremetal.Reconciler{Inventory: l.Inventory, Hosts: l.Assisted}
	cvoSim := &cvo.Reconciler{}
	if o.Speed == Realistic {
		l.Assisted.Durations = assisted.RealisticDurations()
		bmh.Durations = baremetal.RealisticDurations()
		cvoSim.Durations = cvo.RealisticDurations()
	}
	if err := l.Assisted.SetupWithManager(ctx, core, copts); err != nil {
		return nil, fmt.Errorf("setting up the assisted-service simulator: %w", err)
	}
	if err := bmh.SetupWithManager(core, copts); err != nil {
		return nil, fmt.Errorf("setting up the bare-metal simulator: %w", err)
	}
	l.selfBoot = &selfBooter{Hosts: l.Assisted}
	if err := l.selfBoot.setupWithManager(core, copts); err != nil {
		return nil, fmt.Errorf("setting up the self-booted hosts: %w", err)
	}
	workloadMgr, err := ctrl.NewManager(l.Workload.Config, ctrl.Options{Scheme: workloadScheme, Metrics: metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: ptr.To(true)}})
	if err != nil {
		return nil, fmt.Errorf("creating the workload manager: %w", err)
	}
	if err := cvoSim.SetupWithManager(workloadMgr, copts); err != nil {
		return nil, fmt.Errorf("setting up the cluster-version operator simulator: %w", err)
	}
	l.run("core", func() error { return core.Start(ctx) })
	l.run("workload", func() error { return workloadMgr.Start(ctx) })

	root, err := testenv.RepoRoot()
	if err != nil {
		return nil, err
	}
	for _, p := range providers() {
		if err := l.startProvider(ctx, root, scheme, p, o.Concurrency); err != nil {
			return nil, err
		}
	}
	ok = true
	return l, nil
}

// startProvider installs the provider's webhook configurations (renamed per provider, as the
// release manifests' name prefix does) with a serving certificate of their own, then runs the
// provider through manager.Run, exactly as its main.go does.
func (l *Lab) startProvider(ctx context.Context, root string, scheme *runtime.Scheme, p provider, concurrency int) error {
	opts := manager.NewOptions("capoa-lab-" + p.name)
	opts.Concurrency = concurrency
	opts.InProcess = true
	opts.SyncPeriod = 10 * time.Minute
	opts.HealthAddr = "0"
	opts.CAPI.DiagnosticsAddress = "0"
	opts.CAPI.InsecureDiagnostics = true
	opts.CAPI.TLSMinVersion = "VersionTLS12"
	opts.LeaseDuration, opts.RenewDeadline, opts.RetryPeriod = 15*time.Second, 10*time.Second, 2*time.Second
	opts.QPS, opts.Burst = 100, 200

	dir := filepath.Join(root, p.webhookDir)
	if _, err := os.Stat(filepath.Join(dir, "manifests.yaml")); err == nil {
		w := &envtest.WebhookInstallOptions{Paths: []string{dir}, LocalServingHost: "127.0.0.1"}
		if err := w.PrepWithoutInstalling(); err != nil {
			return fmt.Errorf("preparing the %s webhooks: %w", p.name, err)
		}
		for _, v := range w.ValidatingWebhooks {
			v.Name = "capoa-" + p.name + "-" + v.Name
		}
		for _, m := range w.MutatingWebhooks {
			m.Name = "capoa-" + p.name + "-" + m.Name
		}
		if err := w.Install(l.Mgmt.Config); err != nil {
			return fmt.Errorf("installing the %s webhooks: %w", p.name, err)
		}
		l.webhooks = append(l.webhooks, w)
		opts.WebhookPort = w.LocalServingPort
		opts.WebhookCertDir = w.LocalServingCertDir
	} else {
		opts.WebhookPort = 0
	}
	cfg := rest.CopyConfig(l.Mgmt.Config)
	l.run(p.name, func() error { return manager.Run(ctx, cfg, opts, scheme, p.setup) })
	return nil
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

// Stop stops every manager and both API servers.
func (l *Lab) Stop() error {
	l.cancel()
	l.wg.Wait()
	errs := []error{l.Err()}
	for _, w := range l.webhooks {
		errs = append(errs, w.Cleanup())
	}
	l.Releases.Close()
	for _, e := range []*testenv.Environment{l.Workload, l.Mgmt} {
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

// Releases are the OpenShift versions the lab's registry serves from the start, with their
// Kubernetes versions.
var Releases = map[string]string{
	"4.16.20": "1.29.10",
	"4.17.3":  "1.30.4",
	"4.17.5":  "1.30.6",
	"4.18.0":  "1.31.1",
}

// AddRelease pushes the x86_64 release image of an OpenShift version to the lab's registry.
func (l *Lab) AddRelease(version, kubernetesVersion string) error {
	if _, err := l.Releases.PushRelease(fmt.Sprintf("%s:%s-x86_64", l.Releases.Repository(), version), kubernetesVersion); err != nil {
		return fmt.Errorf("pushing the release image of %s: %w", version, err)
	}
	return nil
}

// AddHosts adds n simulated hosts named <prefix>-<i> to the inventory and creates their
// BareMetalHosts (and BMC credentials Secret) in namespace, as a lab administrator would.
func (l *Lab) AddHosts(ctx context.Context, namespace, prefix string, n int) ([]*inventory.Host, error) {
	c := l.Mgmt.Client
	creds := prefix + "-bmc"
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: creds},
		StringData: map[string]string{"username": "admin", "password": "lab"},
	}
	if err := c.Create(ctx, secret); client.IgnoreAlreadyExists(err) != nil {
		return nil, fmt.Errorf("creating the BMC credentials: %w", err)
	}
	hosts := inventory.Generate(prefix, n, inventory.GenerateOptions{FirstIP: 20 + len(l.Inventory.Hosts())})
	for _, h := range hosts {
		l.Inventory.Add(h)
		if err := c.Create(ctx, h.BareMetalHost(namespace, creds)); err != nil {
			return nil, fmt.Errorf("creating BareMetalHost %s: %w", h.Name, err)
		}
	}
	return hosts, nil
}
