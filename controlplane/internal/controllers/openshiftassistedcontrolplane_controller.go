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

package controllers

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/controllers/clustercache"
	"sigs.k8s.io/cluster-api/util"
	"sigs.k8s.io/cluster-api/util/predicates"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/controlplane/internal/etcd"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/controlplane/internal/release"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/foreign"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/reconciler"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/servedschema"
)

// waitRequeue is how soon a control plane waiting on assisted-service or on the workload cluster
// is looked at again (those objects are not all watched).
const waitRequeue = 20 * time.Second

// ReleaseReader resolves release images (see release.Reader).
type ReleaseReader interface {
	Read(ctx context.Context, ref string, access release.Access) (release.Info, error)
}

// OpenshiftAssistedControlPlaneReconciler reconciles OpenshiftAssistedControlPlanes.
type OpenshiftAssistedControlPlaneReconciler struct {
	Client    client.Client
	APIReader client.Reader
	// SecretReader, when set, reads the Secrets labelled with a cluster name from a cache (the
	// manager's, manager.ClusterSecretsCache): the control plane's <cluster>-kubeconfig is looked
	// at there, and the controller watches it. Unset, it is read from the API server (APIReader).
	SecretReader client.Reader
	Recorder     events.EventRecorder
	Release      ReleaseReader
	// ClusterCache reaches the workload clusters (Cluster API's ClusterCache).
	ClusterCache clustercache.ClusterCache
	// Etcd reaches the etcd members of the workload clusters.
	Etcd etcd.Connector
	// Clock tells the time (default: the real clock).
	Clock clock.PassiveClock

	// WatchFilterValue restricts reconciliation to objects with this cluster.x-k8s.io/watch-filter label.
	WatchFilterValue string
	// Foreign decides how long a deletion waits for Hive and assisted-service to release the
	// ClusterDeployment and AgentClusterInstall, and when their finalizers are removed because
	// those services are shown to be gone (their CRDs uninstalled, or no activity for its
	// Timeout), so that deleting never blocks forever and never orphans their records while they run.
	Foreign foreign.Policy

	controller controller.Controller
	// kubeconfigs: what each control plane's <cluster>-kubeconfig was last copied from.
	kubeconfigs kubeconfigCopies
	// schemas: which fields the hub's third-party CRDs have (newerfields.go asks).
	schemas servedschema.CRDFields
}

// RBAC: only the verbs the code uses (docs/architecture_design.md, "Privileges"). Objects are
// written with patches (the patch helper, CreateOrPatch, merge patches), never a full update;
// get/list/watch are the cache's informers. Status is patched; finalizers/update lets the
// controller set blockOwnerDeletion owner references to the control plane (on its Machines,
// configs, infrastructure clones, ClusterDeployment, AgentClusterInstall and kubeconfig Secret).
// Infrastructure machines and templates are read as unstructured objects, which the client does
// not cache: get, list (leftovers), create (clones), patch (template owner) and delete; what is
// read of them on every reconcile (the templates' owners, the clones' cloned-from annotations) is
// their metadata, which the metadata cache keeps: list and watch (metadataReader).
// customresourcedefinitions: Cluster API's contract lookup reads the CRDs' metadata (cached).
// Secrets: the manager caches those labelled with a cluster name (list and watch, as Cluster API's
// managers do; RBAC cannot grant by label), where the controller and the ClusterCache read the
// kubeconfigs; get reads the admin kubeconfig assisted-service wrote (not labelled, read on
// demand) and a <cluster>-kubeconfig not in the cache; create, patch (adoption of an empty one)
// and delete are on that <cluster>-kubeconfig Secret only, which lives in the Cluster's
// namespace, any namespace: hence a ClusterRole.
// +kubebuilder:rbac:groups=controlplane.cluster.x-k8s.io,resources=openshiftassistedcontrolplanes,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=controlplane.cluster.x-k8s.io,resources=openshiftassistedcontrolplanes/status,verbs=patch
// +kubebuilder:rbac:groups=controlplane.cluster.x-k8s.io,resources=openshiftassistedcontrolplanes/finalizers,verbs=update
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=clusters,verbs=get;list;watch
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=machinedeployments,verbs=get;list;watch
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=machines,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=machines/status,verbs=patch
// +kubebuilder:rbac:groups=bootstrap.cluster.x-k8s.io,resources=openshiftassistedconfigs,verbs=get;list;watch;create;patch;delete
// The infrastructure machines of CAPM3 only, not the whole group, which also holds other
// providers' identity kinds (docs/security.md says how to grant another provider's):
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3machinetemplates,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3machines,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=capi-provider.agent-install.openshift.io,resources=agentmachinetemplates;agentmachines,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=extensions.hive.openshift.io,resources=agentclusterinstalls,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=hive.openshift.io,resources=clusterdeployments;clusterimagesets,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;patch;delete
// The image registry ConfigMap that spec.config.imageRegistryRef names is read (get, from the API
// server: ConfigMaps are not cached), and the manifests ConfigMap made from it written
// (create, patch; garbage-collected with the control plane).
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;create;patch
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get;list;watch

// SetupWithManager registers the controller with mgr.
func (r *OpenshiftAssistedControlPlaneReconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, options controller.Options) error {
	log := ctrl.LoggerFrom(ctx)
	b := ctrl.NewControllerManagedBy(mgr).
		For(&controlplanev1.OpenshiftAssistedControlPlane{},
			builder.WithPredicates(predicates.ResourceHasFilterLabel(mgr.GetScheme(), log, r.WatchFilterValue))).
		Owns(&clusterv1.Machine{}).
		Owns(&hiveextv1beta1.AgentClusterInstall{}).
		Owns(&hivev1.ClusterDeployment{})
	if r.SecretReader != nil {
		// A deleted or edited <cluster>-kubeconfig is written again at once. Only with the cache
		// of cluster-labelled Secrets: without it, the watch would cache every Secret of the hub.
		b = b.Owns(&corev1.Secret{})
	}
	c, err := b.
		Watches(&clusterv1.Cluster{},
			handler.EnqueueRequestsFromMapFunc(r.clusterToControlPlane),
			builder.WithPredicates(predicates.ClusterPausedTransitionsOrInfrastructureProvisioned(mgr.GetScheme(), log)),
		).
		// Reconcile as soon as the ClusterCache connects to (or loses) a workload cluster.
		WatchesRawSource(r.ClusterCache.GetClusterSource("openshiftassistedcontrolplane", r.clusterToControlPlane)).
		WithOptions(options).
		Build(r)
	if err != nil {
		return fmt.Errorf("setting up the OpenshiftAssistedControlPlane controller: %w", err)
	}
	r.controller = c
	return nil
}

// now is the reconciler's time.
func (r *OpenshiftAssistedControlPlaneReconciler) now() time.Time {
	if r.Clock == nil {
		return time.Now()
	}
	return r.Clock.Now()
}

// clusterToControlPlane maps a Cluster to its control plane, when it is an OpenshiftAssistedControlPlane.
func (r *OpenshiftAssistedControlPlaneReconciler) clusterToControlPlane(_ context.Context, o client.Object) []reconcile.Request {
	c, ok := o.(*clusterv1.Cluster)
	if !ok || !c.Spec.ControlPlaneRef.IsDefined() || c.Spec.ControlPlaneRef.Kind != controlplanev1.ControlPlaneKind ||
		c.Spec.ControlPlaneRef.APIGroup != controlplanev1.GroupVersion.Group {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: c.Namespace, Name: c.Spec.ControlPlaneRef.Name}}}
}

// scope is what one reconcile works on.
type scope struct {
	oacp     *controlplanev1.OpenshiftAssistedControlPlane
	cluster  *clusterv1.Cluster
	machines []*clusterv1.Machine
	aci      *hiveextv1beta1.AgentClusterInstall
	cd       *hivev1.ClusterDeployment

	// kubeconfigWritten is true once the <cluster>-kubeconfig Secret holds the admin kubeconfig.
	kubeconfigWritten bool
	// kubeconfigChecked is true once the kubeconfig step ran to its end in this reconcile: a
	// reconcile that stopped before it knows nothing new of the kubeconfig.
	kubeconfigChecked bool
	// specKubeVersion is the Kubernetes version of spec.distributionVersion, when resolved.
	specKubeVersion string
	specRelease     release.Info
	releaseErr      error
	// architectures are those of the cluster's machine configs (release.go), once read.
	architectures []string
	// scaleDownBlocked explains why a scale down waits.
	scaleDownBlocked string
	// etcd is what the reconcile observed of the workload cluster's etcd.
	etcd etcdState
	// outdated are the Machines that no longer match the spec (by name), and why.
	outdated map[string]string
	// rolloutBlocked explains why outdated Machines are not replaced now.
	rolloutBlocked string
	// upgrade is what the upgrade step observed.
	upgrade upgradeState
	// deleting is set while the control plane is being deleted.
	deleting *deletionState
}

// Reconcile brings the ClusterDeployment, AgentClusterInstall, ClusterImageSet, control-plane
// Machines and kubeconfig of a control plane to its spec, and reports its status.
func (r *OpenshiftAssistedControlPlaneReconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, reterr error) {
	log := ctrl.LoggerFrom(ctx)
	oacp := &controlplanev1.OpenshiftAssistedControlPlane{}
	if err := r.Client.Get(ctx, req.NamespacedName, oacp); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if reconciler.LeaveAlone(ctx, oacp, r.WatchFilterValue) {
		return ctrl.Result{}, nil
	}
	cluster, err := util.GetOwnerCluster(ctx, r.Client, oacp.ObjectMeta)
	switch {
	case apierrors.IsNotFound(err) && !oacp.DeletionTimestamp.IsZero():
		// The Cluster went first (it is normally deleted after its control plane): the deletion
		// goes on with the names the Cluster had, so that nothing is left behind.
		cluster = goneCluster(oacp)
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("getting the owner Cluster: %w", err)
	}
	if cluster == nil {
		log.Info("Waiting for the Cluster controller to set the owner reference")
		return ctrl.Result{}, nil
	}
	log = log.WithValues("Cluster", klog.KObj(cluster))
	ctx = ctrl.LoggerInto(ctx, log)

	opened, err := reconciler.Open(ctx, oacp, reconciler.Opening{Client: r.Client, Cluster: cluster,
		Finalizer:         controlplanev1.OpenshiftAssistedControlPlaneFinalizer,
		UpstreamFinalizer: controlplanev1.UpstreamOpenshiftAssistedControlPlaneFinalizer,
		NewWriter:         reconciler.PatchHelper(ownedConditions...)})
	if opened == nil {
		return ctrl.Result{}, err
	}
	s := &scope{oacp: oacp, cluster: cluster}
	defer opened.Close(ctx, &reterr, reconciler.Closing{Recorder: r.Recorder,
		Status:  func() { r.updateStatus(ctx, s) },
		Observe: func(generation int64) { oacp.Status.ObservedGeneration = generation }})

	if err := r.loadMachines(ctx, s); err != nil {
		return ctrl.Result{}, err
	}
	if !oacp.DeletionTimestamp.IsZero() {
		return r.reconcileDelete(ctx, s)
	}
	return r.reconcileNormal(ctx, s)
}

var ownedConditions = []string{
	controlplanev1.AvailableCondition, controlplanev1.KubeconfigAvailableCondition, controlplanev1.MachinesReadyCondition,
	controlplanev1.ScalingUpCondition, controlplanev1.ScalingDownCondition, controlplanev1.UpgradingCondition,
	controlplanev1.ReleaseImageResolvedCondition, controlplanev1.DeletingCondition, controlplanev1.PausedCondition,
	controlplanev1.EtcdClusterHealthyCondition, controlplanev1.RollingOutCondition,
}

func (r *OpenshiftAssistedControlPlaneReconciler) reconcileNormal(ctx context.Context, s *scope) (ctrl.Result, error) {
	// The release is resolved first: Machines carry its Kubernetes version. A registry that
	// cannot be reached does not block the installation: it is reported and retried.
	if err := r.readSpecRelease(ctx, s); err != nil {
		return ctrl.Result{}, err
	}

	if err := r.reconcileClusterImageSet(ctx, s); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.reconcileClusterDeployment(ctx, s); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.reconcileAgentClusterInstall(ctx, s); err != nil {
		return ctrl.Result{}, err
	}
	// The kubeconfig depends only on the AgentClusterInstall: it goes before the Machines, so a
	// failing scale-up does not hide that the cluster is available.
	if err := r.reconcileKubeconfig(ctx, s); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.reconcileTemplateOwner(ctx, s); err != nil {
		return ctrl.Result{}, err
	}
	res, err := r.reconcileMachines(ctx, s)
	if err != nil {
		return ctrl.Result{}, err
	}
	if etcdReachable(s) {
		// Read once per reconcile (if the Machines step has not): the EtcdClusterHealthy condition.
		_, _ = r.loadEtcd(ctx, s)
	}
	scaling, err := r.reconcileUnsafeScaling(ctx, s)
	if err != nil {
		return ctrl.Result{}, err
	}
	res = minResult(res, scaling)
	if err := r.reconcileMachineAPIMode(ctx, s); err != nil {
		return ctrl.Result{}, err
	}
	if s.kubeconfigWritten {
		if err := r.reconcileUpgrade(ctx, s); err != nil {
			return ctrl.Result{}, err
		}
	}
	if err := r.reconcileMachinesUpToDate(ctx, s); err != nil {
		return ctrl.Result{}, err
	}
	if waitsUnwatched(s) {
		res = minResult(res, ctrl.Result{RequeueAfter: waitRequeue})
	}
	return res, nil
}

// waitsUnwatched tells whether the control plane waits on something no watch wakes it for, and so
// looks again after waitRequeue: the admin kubeconfig Secret of an installed cluster (read live,
// not cached), an upgrade in the workload cluster, a release image that could not be read. While
// the cluster installs it waits on its AgentClusterInstall, ClusterDeployment and Machines, whose
// changes wake it: a timed requeue then only costs each installing cluster a reconcile every 20 s.
func waitsUnwatched(s *scope) bool {
	return (!s.kubeconfigWritten && s.installed()) || s.upgrade.inProgress || s.releaseErr != nil
}

// loadMachines lists the control plane's Machines, oldest first.
func (r *OpenshiftAssistedControlPlaneReconciler) loadMachines(ctx context.Context, s *scope) error {
	list := &clusterv1.MachineList{}
	if err := r.Client.List(ctx, list, client.InNamespace(s.oacp.Namespace), client.MatchingLabels(machineLabels(s.oacp, s.cluster))); err != nil {
		return fmt.Errorf("listing the control-plane Machines: %w", err)
	}
	s.machines = nil
	for i := range list.Items {
		m := &list.Items[i]
		if metav1.IsControlledBy(m, s.oacp) {
			s.machines = append(s.machines, m)
		}
	}
	slices.SortFunc(s.machines, func(a, b *clusterv1.Machine) int {
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return nil
}

// machineLabels are the labels of the control plane's Machines, and the selector of its scale subresource.
func machineLabels(oacp *controlplanev1.OpenshiftAssistedControlPlane, cluster *clusterv1.Cluster) labels.Set {
	return labels.Set{
		clusterv1.ClusterNameLabel:             cluster.Name,
		clusterv1.MachineControlPlaneLabel:     "",
		clusterv1.MachineControlPlaneNameLabel: oacp.Name,
	}
}

// replicasSelector selects the Machines that spec.replicas counts: all the control plane's
// Machines but the arbiter (the selector of the scale subresource).
func replicasSelector(oacp *controlplanev1.OpenshiftAssistedControlPlane, cluster *clusterv1.Cluster) labels.Selector {
	sel := labels.SelectorFromSet(machineLabels(oacp, cluster))
	if oacp.Spec.Arbiter == nil {
		return sel
	}
	notArbiter, err := labels.NewRequirement(controlplanev1.ArbiterMachineLabel, selection.DoesNotExist, nil)
	if err != nil {
		panic(err) // a constant, valid label key
	}
	return sel.Add(*notArbiter)
}

// goneCluster stands for the deleted Cluster of a control plane being deleted.
func goneCluster(oacp *controlplanev1.OpenshiftAssistedControlPlane) *clusterv1.Cluster {
	name := oacp.Labels[clusterv1.ClusterNameLabel]
	for _, ref := range oacp.OwnerReferences {
		if ref.Kind == "Cluster" && strings.HasPrefix(ref.APIVersion, clusterv1.GroupVersion.Group+"/") {
			name = ref.Name
		}
	}
	return &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: oacp.Namespace, Name: name}}
}

func minResult(a, b ctrl.Result) ctrl.Result {
	if a.RequeueAfter == 0 || (b.RequeueAfter != 0 && b.RequeueAfter < a.RequeueAfter) {
		a.RequeueAfter = b.RequeueAfter
	}
	return a
}
