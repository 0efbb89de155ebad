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

// Package assisted is a stand-in for assisted-service (and for the part of Hive that marks an
// agent-installed ClusterDeployment installed). It follows the real service's state machines and
// names, read from github.com/openshift/assisted-service/{api,models}:
//
//   - The REST API (api.go), over HTTPS at ServiceURL with local authentication: the InfraEnv's
//     files (the discovery ignition, for the image-based flow), for the InfraEnv's token.
//   - InfraEnv: status.isoDownloadURL, createdTime, agentLabelSelector, debugInfo.eventsURL (on
//     the REST API, with the InfraEnv's token), bootArtifacts and the ImageCreated condition.
//   - Agent: a host that boots an InfraEnv's ISO, or a disk image whose Ignition config (from its
//     config drive) starts the discovery agent of an InfraEnv (ignition.go), registers an Agent
//     named after its system UUID in the InfraEnv's namespace, labelled
//     infraenvs.agent-install.openshift.io=<infraenv>, with an inventory matching the host.
//     debugInfo.state goes discovering → known/insufficient (or the -unbound variants and
//     binding) → preparing-for-installation → preparing-successful → installing →
//     installing-in-progress (progress stages) → installed, or
//     added-to-existing-cluster for a host that joins an installed cluster. A host that booted a
//     disk image is installed to its existing root: no boot order change. Conditions
//     (SpecSynced, Connected, RequirementsMet, Validated, Installed, Bound) and validationsInfo
//     follow the state as assisted-service sets them.
//   - AgentClusterInstall: insufficient → ready → preparing-for-installation → installing →
//     finalizing → installed → adding-hosts, starting only when the bound Agents match
//     spec.provisionRequirements exactly and are all approved (as assisted-service requires).
//     On completion it writes the <clusterdeployment>-admin-kubeconfig and -admin-password
//     Secrets, spec.clusterMetadata, and sets the ClusterDeployment's spec.installed (Hive's part).
//   - The workload cluster: a Node per installed host (named after its hostname, with its system
//     UUID and addresses).
//
// Faults can be injected at run time: FailValidation, Disconnect and FailInstall.
package assisted

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	"github.com/openshift/assisted-service/models"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/internal/steps"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/inventory"
)

// Finalizers, as assisted-service names them.
const (
	InfraEnvFinalizer            = "infraenv." + aiv1beta1.Group + "/ai-deprovision"
	AgentFinalizer               = "agent." + aiv1beta1.Group + "/ai-deprovision"
	ClusterDeploymentFinalizer   = "clusterdeployments." + aiv1beta1.Group + "/ai-deprovision"
	AgentClusterInstallFinalizer = "agentclusterinstall." + aiv1beta1.Group + "/ai-deprovision"
)

// Durations are how long each step takes.
type Durations struct {
	// ImageCreate: InfraEnv created → ISO URL published.
	ImageCreate time.Duration
	// Discover: Agent registered → hardware reported and validated.
	Discover time.Duration
	// Bind and Unbind: binding → known, unbinding → known-unbound.
	Bind time.Duration
	// Prepare: preparing-for-installation → preparing-successful.
	Prepare time.Duration
	// InstallStage: each host progress stage (Starting installation, Writing image to disk, …).
	InstallStage time.Duration
	// Finalize: finalizing → installed.
	Finalize time.Duration
}

// FastDurations are the defaults: quick enough for tests, slow enough that every state is written.
func FastDurations() Durations {
	d := 100 * time.Millisecond
	return Durations{ImageCreate: d, Discover: d, Bind: d, Prepare: d, InstallStage: d, Finalize: d}
}

// RealisticDurations are in the order of a real installation's (about 45 minutes end to end).
func RealisticDurations() Durations {
	return Durations{ImageCreate: 10 * time.Second, Discover: time.Minute, Bind: 30 * time.Second,
		Prepare: 2 * time.Minute, InstallStage: 5 * time.Minute, Finalize: 10 * time.Minute}
}

// InstalledCluster is what OnClusterInstalled is told when a cluster finishes installing.
type InstalledCluster struct {
	ClusterDeployment   *hivev1.ClusterDeployment
	AgentClusterInstall *hiveextv1beta1.AgentClusterInstall
	// ReleaseImage is the ClusterImageSet's release image ("" when it cannot be read).
	ReleaseImage string
	// Workload reaches the workload cluster; WorkloadConfig is its API server.
	Workload       client.Client
	WorkloadConfig *rest.Config
}

// Simulator is the assisted-service stand-in. Set the exported fields, then SetupWithManager.
type Simulator struct {
	// Client reaches the management cluster (defaults to the manager's).
	Client    client.Client
	Inventory *inventory.Inventory
	Durations Durations
	// Workload is the rest.Config of the workload cluster's API server: its kubeconfig is what
	// the admin kubeconfig Secret holds, and Nodes are created there. It or WorkloadFor is
	// required.
	Workload *rest.Config
	// WorkloadFor, when set, returns the API server of the cluster of this ClusterDeployment
	// instead of Workload: every cluster gets a workload cluster of its own (the fleet
	// benchmark's light stand-ins). It is asked once per cluster.
	WorkloadFor func(ctx context.Context, clusterDeployment types.NamespacedName) (*rest.Config, error)
	// WorkloadScheme is the scheme of the workload cluster's client (default: Kubernetes' and
	// OpenShift's config.openshift.io/v1).
	WorkloadScheme *runtime.Scheme
	// ImageServiceURL is the base of ISO URLs (default https://assisted-image-service.lab.sim).
	ImageServiceURL string
	// KubernetesVersion, when set, returns the Kubernetes version (v1.30.4) of an OpenShift
	// release image: the version of the kubelet that the release's RHCOS runs, which a host's Node
	// reports in status.nodeInfo.kubeletVersion (the lab reads it from its release registry, as
	// the control plane reads Machine.spec.version). Unset, or for a cluster without a
	// ClusterImageSet, the Nodes report no kubelet version rather than a wrong one.
	KubernetesVersion func(ctx context.Context, releaseImage string) (string, error)
	// OnClusterInstalled, when set, runs once a cluster has installed, before the
	// ClusterDeployment is marked installed (the lab installs the ClusterVersion there).
	OnClusterInstalled func(ctx context.Context, c InstalledCluster) error
	// TNFClustersSupport is assisted-service's TNF_CLUSTERS_SUPPORT (default false, as upstream's):
	// without it, fencing credentials are refused (fencing.go).
	TNFClustersSupport bool
	Recorder           events.EventRecorder
	Clock              clock.PassiveClock

	timer *steps.Timer
	// reader reads what the service's database holds now: the API server, not the cache.
	reader   client.Reader
	workload *workloadCluster
	// workloads holds the workload cluster of each ClusterDeployment when WorkloadFor is set.
	workloads sync.Map // types.NamespacedName → *workloadCluster
	agentsCh  chan event.GenericEvent
	acisCh    chan event.GenericEvent

	// down: the service is not running (SetAvailable(false)), as when assisted-service's pod is
	// gone: nothing is reconciled, its REST API answers 503 and no host can register; its
	// database (this state) survives.
	down atomic.Bool
	// api is the REST API's server and token key.
	api *restAPI

	mu sync.Mutex
	// registered holds the Agents of the hosts that registered with this service (its database).
	registered map[types.NamespacedName]bool
	// fencing holds the fencing credentials of the Agents' hosts (host.FencingCredentials).
	fencing        map[types.NamespacedName]map[string][]byte
	running        map[string]bool // system UUID → runs the discovery agent (ISO or disk image)
	refused        map[string]bool // system UUID → its agent was refused since it booted
	bootedFromDisk map[string]bool // system UUID → its agent runs from a disk image, not the ISO
	failValidation map[string]bool
	disconnected   map[string]bool
	failInstall    map[types.NamespacedName]bool
	installSets    map[types.NamespacedName]map[types.NamespacedName]bool
	roles          map[types.NamespacedName]models.HostRole // assigned when the installation starts
	bootstrap      map[types.NamespacedName]bool
}

// SetupWithManager starts the service's REST API (ServiceURL, stopped when mgr stops) and
// registers the InfraEnv, Agent, AgentClusterInstall and ClusterDeployment controllers of the
// simulator with mgr.
func (s *Simulator) SetupWithManager(_ context.Context, mgr ctrl.Manager, opts controller.Options) error {
	if s.Inventory == nil || (s.Workload == nil && s.WorkloadFor == nil) {
		return fmt.Errorf("the assisted-service simulator needs an inventory and the workload cluster's rest.Config")
	}
	if s.Client == nil {
		s.Client = mgr.GetClient()
	}
	s.reader = mgr.GetAPIReader()
	if s.Recorder == nil {
		s.Recorder = mgr.GetEventRecorder("assisted-service-sim")
	}
	if s.Durations == (Durations{}) {
		s.Durations = FastDurations()
	}
	if s.ImageServiceURL == "" {
		s.ImageServiceURL = "https://assisted-image-service.lab.sim"
	}
	if s.WorkloadScheme == nil {
		s.WorkloadScheme = runtime.NewScheme()
		for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, configv1.Install} {
			if err := add(s.WorkloadScheme); err != nil {
				return fmt.Errorf("building the workload cluster's scheme: %w", err)
			}
		}
	}
	if s.Workload != nil {
		wc, err := client.New(s.Workload, client.Options{Scheme: s.WorkloadScheme})
		if err != nil {
			return fmt.Errorf("creating the workload cluster client: %w", err)
		}
		s.workload = &workloadCluster{config: s.Workload, client: wc}
	}
	s.timer = steps.NewTimer(s.Clock)
	s.agentsCh = make(chan event.GenericEvent, 1024)
	s.acisCh = make(chan event.GenericEvent, 1024)
	s.registered = map[types.NamespacedName]bool{}
	s.running = map[string]bool{}
	s.refused = map[string]bool{}
	s.bootedFromDisk = map[string]bool{}
	s.failValidation = map[string]bool{}
	s.disconnected = map[string]bool{}
	s.failInstall = map[types.NamespacedName]bool{}
	s.installSets = map[types.NamespacedName]map[types.NamespacedName]bool{}
	s.roles = map[types.NamespacedName]models.HostRole{}
	s.fencing = map[types.NamespacedName]map[string][]byte{}
	s.bootstrap = map[types.NamespacedName]bool{}
	if err := s.startAPI(mgr); err != nil {
		return err
	}

	if err := ctrl.NewControllerManagedBy(mgr).Named("sim-infraenv").
		For(&aiv1beta1.InfraEnv{}).WithOptions(opts).
		Complete(s.whileUp(s.reconcileInfraEnv)); err != nil {
		return fmt.Errorf("setting up the InfraEnv simulator: %w", err)
	}
	if err := ctrl.NewControllerManagedBy(mgr).Named("sim-agent").
		For(&aiv1beta1.Agent{}).
		Watches(&hiveextv1beta1.AgentClusterInstall{}, handler.EnqueueRequestsFromMapFunc(s.agentsOfACI)).
		WatchesRawSource(source.Channel(s.agentsCh, &handler.EnqueueRequestForObject{})).
		WithOptions(opts).
		Complete(s.whileUp(s.reconcileAgent)); err != nil {
		return fmt.Errorf("setting up the Agent simulator: %w", err)
	}
	if err := ctrl.NewControllerManagedBy(mgr).Named("sim-agentclusterinstall").
		For(&hiveextv1beta1.AgentClusterInstall{}).
		Watches(&aiv1beta1.Agent{}, handler.EnqueueRequestsFromMapFunc(s.aciOfAgent)).
		Watches(&hivev1.ClusterDeployment{}, handler.EnqueueRequestsFromMapFunc(aciOfClusterDeployment)).
		WatchesRawSource(source.Channel(s.acisCh, &handler.EnqueueRequestForObject{})).
		WithOptions(opts).
		Complete(s.whileUp(s.reconcileACI)); err != nil {
		return fmt.Errorf("setting up the AgentClusterInstall simulator: %w", err)
	}
	if err := ctrl.NewControllerManagedBy(mgr).Named("sim-clusterdeployment").
		For(&hivev1.ClusterDeployment{}).WithOptions(opts).
		Complete(s.whileUp(s.reconcileClusterDeployment)); err != nil {
		return fmt.Errorf("setting up the ClusterDeployment simulator: %w", err)
	}
	return nil
}

type reconcilerFunc func(context.Context, ctrl.Request) (ctrl.Result, error)

// whileUp runs f only while the service runs; meanwhile the request waits, as the service's
// informers catch up when it starts again.
func (s *Simulator) whileUp(f reconcilerFunc) reconcilerFunc {
	return func(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
		if s.down.Load() {
			return ctrl.Result{RequeueAfter: time.Second}, nil
		}
		return f(ctx, req)
	}
}

// SetAvailable stops (false) or starts again (true) the service, as a restart of assisted-service's
// pod does: while it is down no InfraEnv, Agent, AgentClusterInstall or ClusterDeployment is
// reconciled and no host registers (its agent retries); what the service stored is kept.
func (s *Simulator) SetAvailable(up bool) { s.down.Store(!up) }

func (f reconcilerFunc) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return f(ctx, req)
}

// FailValidation makes the host with that system UUID fail (or, with false, pass again) its
// hardware validation (has-memory-for-role), so its Agent becomes insufficient.
func (s *Simulator) FailValidation(ctx context.Context, systemUUID string, fail bool) {
	s.setHostFault(ctx, s.failValidation, systemUUID, fail)
}

// Disconnect makes the agent of the host with that system UUID stop (or, with false, resume)
// contacting the service: Connected=False, state disconnected.
func (s *Simulator) Disconnect(ctx context.Context, systemUUID string, disconnect bool) {
	s.setHostFault(ctx, s.disconnected, systemUUID, disconnect)
}

// FailInstall makes the installation of the AgentClusterInstall fail once it is installing: the
// cluster and its hosts go to error, with the Failed and Stopped conditions set.
func (s *Simulator) FailInstall(_ context.Context, aci types.NamespacedName, fail bool) {
	s.mu.Lock()
	s.failInstall[aci] = fail
	s.mu.Unlock()
	obj := &hiveextv1beta1.AgentClusterInstall{}
	obj.Name, obj.Namespace = aci.Name, aci.Namespace
	s.acisCh <- event.GenericEvent{Object: obj}
}

func (s *Simulator) setHostFault(ctx context.Context, m map[string]bool, uuid string, on bool) {
	s.mu.Lock()
	m[uuid] = on
	s.mu.Unlock()
	s.poke(ctx, uuid)
}

// poke re-queues every Agent of the host with that system UUID.
func (s *Simulator) poke(ctx context.Context, uuid string) {
	agents := &aiv1beta1.AgentList{}
	if err := s.Client.List(ctx, agents); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing Agents")
		return
	}
	for i := range agents.Items {
		if agents.Items[i].Name == agentName(uuid) {
			s.agentsCh <- event.GenericEvent{Object: &agents.Items[i]}
		}
	}
}

// pokePeers re-queues every Agent of the host with that system UUID and every Agent bound to
// the same cluster: whether the host's discovery agent runs changes its peers'
// belongs-to-majority-group (assisted-service refreshes every host's validations periodically).
func (s *Simulator) pokePeers(ctx context.Context, uuid string) {
	agents := &aiv1beta1.AgentList{}
	if err := s.Client.List(ctx, agents, client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing Agents")
		return
	}
	clusters := map[types.NamespacedName]bool{}
	for i := range agents.Items {
		if agents.Items[i].Name != agentName(uuid) {
			continue
		}
		if cd, ok := boundTo(&agents.Items[i]); ok {
			clusters[cd] = true
		}
	}
	for i := range agents.Items {
		a := &agents.Items[i]
		cd, ok := boundTo(a)
		if a.Name == agentName(uuid) || ok && clusters[cd] {
			obj := &aiv1beta1.Agent{}
			obj.Name, obj.Namespace = a.Name, a.Namespace
			s.agentsCh <- event.GenericEvent{Object: obj}
		}
	}
}

// bootsFromDisk tells whether the host's agent runs from a disk image it booted.
func (s *Simulator) bootsFromDisk(uuid string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bootedFromDisk[uuid]
}

func (s *Simulator) hostFlags(uuid string) (running, failValidation, disconnected bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running[uuid], s.failValidation[uuid], s.disconnected[uuid]
}

func (s *Simulator) now() time.Time {
	if s.Clock == nil {
		return time.Now()
	}
	return s.Clock.Now()
}

// workloadCluster is a cluster's workload API server: its rest.Config and a client of it.
type workloadCluster struct {
	config *rest.Config
	client client.Client
}

// workloadOf returns the workload cluster of the ClusterDeployment cd: Workload, shared, or the
// one WorkloadFor gives it.
func (s *Simulator) workloadOf(ctx context.Context, cd types.NamespacedName) (*workloadCluster, error) {
	if s.WorkloadFor == nil {
		return s.workload, nil
	}
	if w, ok := s.workloads.Load(cd); ok {
		return w.(*workloadCluster), nil //nolint:forcetypeassert // only *workloadCluster is stored
	}
	cfg, err := s.WorkloadFor(ctx, cd)
	if err != nil {
		return nil, fmt.Errorf("reaching the workload cluster of %s: %w", cd, err)
	}
	c, err := client.New(cfg, client.Options{Scheme: s.WorkloadScheme})
	if err != nil {
		return nil, fmt.Errorf("creating the workload cluster client of %s: %w", cd, err)
	}
	w, _ := s.workloads.LoadOrStore(cd, &workloadCluster{config: cfg, client: c})
	return w.(*workloadCluster), nil //nolint:forcetypeassert // only *workloadCluster is stored
}
