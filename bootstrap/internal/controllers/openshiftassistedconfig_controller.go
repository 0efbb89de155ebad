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
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	capm3v1beta2 "github.com/metal3-io/cluster-api-provider-metal3/api/v1beta2"
	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/cluster-api/util/predicates"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/metrics"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/reconciler"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/unknownfields"
)

// RBAC: only the verbs the code uses (docs/architecture_design.md, "Privileges"). Objects are
// written with patches (the patch helper, CreateOrPatch, merge patches), never a full update;
// get/list/watch are the cache's informers. Status is patched; finalizers/update lets the
// controller set blockOwnerDeletion owner references to a config (on its InfraEnv and data
// Secret). The controller only gets, creates and patches its own bootstrap data Secret
// (CreateOrPatch), which is garbage-collected with the config; it looks at it first in the
// manager's cache of Secrets labelled with a cluster name (SecretReader, list and watch), as
// Cluster API's managers cache them, and writes only when that copy differs.
// +kubebuilder:rbac:groups=bootstrap.cluster.x-k8s.io,resources=openshiftassistedconfigs,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=bootstrap.cluster.x-k8s.io,resources=openshiftassistedconfigs/status,verbs=patch
// +kubebuilder:rbac:groups=bootstrap.cluster.x-k8s.io,resources=openshiftassistedconfigs/finalizers,verbs=update
// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=clusters;machines,verbs=get;list;watch
// +kubebuilder:rbac:groups=hive.openshift.io,resources=clusterdeployments,verbs=get;list;watch
// +kubebuilder:rbac:groups=extensions.hive.openshift.io,resources=agentclusterinstalls,verbs=get;list;watch
// +kubebuilder:rbac:groups=agent-install.openshift.io,resources=infraenvs,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=agent-install.openshift.io,resources=agents,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=infrastructure.cluster.x-k8s.io,resources=metal3machines,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=metal3.io,resources=baremetalhosts,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;patch
// The CA bundle of assisted-service's certificate (assisted.CABundleRef, a Secret or a ConfigMap)
// is read with get from the API server, for the image-based flow's discovery ignition downloads.
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get

// OpenshiftAssistedConfigReconciler reconciles OpenshiftAssistedConfigs.
type OpenshiftAssistedConfigReconciler struct {
	Client client.Client
	// APIReader reads from the API server: an InfraEnv whose kernel arguments or NMStateConfig
	// selector change is read live (unknownfields), to keep the fields a newer CRD has in their
	// elements. Unset, Client is used (it caches no unstructured objects).
	APIReader client.Reader
	Recorder  events.EventRecorder
	// SecretReader, when set, reads the bootstrap data Secrets from a cache (the manager's, of
	// the Secrets labelled with a cluster name, manager.ClusterSecretsCache): a config whose
	// Secret is up to date there is not read from the API server. Every reconcile of a config
	// (assisted-service updates its Agent and AgentClusterInstall tens of times per install)
	// otherwise read it.
	SecretReader client.Reader
	// WatchFilterValue, when set, limits the controller to configs whose
	// cluster.x-k8s.io/watch-filter label has this value.
	WatchFilterValue string
	// Discovery downloads discovery ignitions from assisted-service, for the hosts that boot an
	// RHCOS disk image (the image-based flow). Without it such hosts wait, saying why.
	Discovery DiscoveryIgnitionSource
}

// DiscoveryIgnitionSource downloads an InfraEnv's discovery ignition (assisted.Client).
type DiscoveryIgnitionSource interface {
	DiscoveryIgnition(ctx context.Context, ie *aiv1beta1.InfraEnv) ([]byte, error)
}

// discoveryRetry is how soon a failed download of a discovery ignition is tried again.
const discoveryRetry = 30 * time.Second

// scope is what one reconcile of a config knows.
type scope struct {
	config            *bootstrapv1.OpenshiftAssistedConfig
	machine           *clusterv1.Machine
	cluster           *clusterv1.Cluster
	clusterDeployment *hivev1.ClusterDeployment
	clusterInstall    *hiveextv1beta1.AgentClusterInstall
	infraEnv          *aiv1beta1.InfraEnv
	metal3Machine     *capm3v1beta2.Metal3Machine
	bareMetalHost     *bmov1alpha1.BareMetalHost
	agent             *aiv1beta1.Agent
	// diskImage: the Metal3Machine names an RHCOS disk image, which boots discovery with the
	// bootstrap data (the image-based flow); otherwise its host boots the discovery ISO.
	diskImage bool
	// requeueAfter, when set, is when the reconcile is tried again without an error.
	requeueAfter time.Duration
}

// SetupWithManager registers the controller with mgr. Metal3Machines are watched only when their
// CRD is installed, so the provider also runs where only AgentMachines are used.
func (r *OpenshiftAssistedConfigReconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager, options controller.Options) error {
	if r.Client == nil || r.Recorder == nil {
		return errors.New("the OpenshiftAssistedConfig reconciler needs a Client and a Recorder")
	}
	log := ctrl.LoggerFrom(ctx).WithValues("controller", "openshiftassistedconfig")
	filter := predicates.ResourceHasFilterLabel(mgr.GetScheme(), log, r.WatchFilterValue)
	b := ctrl.NewControllerManagedBy(mgr).
		For(&bootstrapv1.OpenshiftAssistedConfig{},
			builder.WithPredicates(filter)).
		WithOptions(options).
		Owns(&aiv1beta1.InfraEnv{}).
		Watches(&clusterv1.Machine{}, handler.EnqueueRequestsFromMapFunc(machineToConfig),
			builder.WithPredicates(filter)).
		Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.clusterNameToConfigs(func(o client.Object) string { return o.GetName() })),
			builder.WithPredicates(filter)).
		Watches(&hivev1.ClusterDeployment{}, handler.EnqueueRequestsFromMapFunc(r.clusterNameToConfigs(func(o client.Object) string { return o.GetName() }))).
		Watches(&hiveextv1beta1.AgentClusterInstall{}, handler.EnqueueRequestsFromMapFunc(r.clusterNameToConfigs(func(o client.Object) string {
			return o.(*hiveextv1beta1.AgentClusterInstall).Spec.ClusterDeploymentRef.Name
		}))).
		Watches(&aiv1beta1.Agent{}, handler.EnqueueRequestsFromMapFunc(agentToConfig))
	if _, err := mgr.GetRESTMapper().RESTMapping(capm3v1beta2.GroupVersion.WithKind("Metal3Machine").GroupKind(), capm3v1beta2.GroupVersion.Version); err == nil {
		b = b.Watches(&capm3v1beta2.Metal3Machine{}, handler.EnqueueRequestsFromMapFunc(r.metal3MachineToConfig)).
			Watches(&bmov1alpha1.BareMetalHost{}, handler.EnqueueRequestsFromMapFunc(r.bareMetalHostToConfig), builder.WithPredicates(hostIdentityChanged))
	} else if !meta.IsNoMatchError(err) {
		return fmt.Errorf("looking up the Metal3Machine kind: %w", err)
	} else {
		log.Info("Metal3Machine CRD not installed: not watching Metal3Machines")
	}
	if err := b.Complete(r); err != nil {
		return fmt.Errorf("setting up the OpenshiftAssistedConfig controller: %w", err)
	}
	return nil
}

// Reconcile brings one OpenshiftAssistedConfig's InfraEnv, Metal3Machine image, bootstrap data
// Secret and Agent to the desired state, and reports progress in its conditions.
func (r *OpenshiftAssistedConfigReconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, reterr error) {
	config := &bootstrapv1.OpenshiftAssistedConfig{}
	if err := r.Client.Get(ctx, req.NamespacedName, config); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if reconciler.LeaveAlone(ctx, config, r.WatchFilterValue) {
		return ctrl.Result{}, nil
	}
	s := &scope{config: config}

	machine, err := util.GetOwnerMachine(ctx, r.Client, config.ObjectMeta)
	if err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, fmt.Errorf("getting the owner Machine: %w", err)
	}
	s.machine = machine
	if machine == nil {
		if wait := reconciler.WaitForOwner(config, time.Now()); wait > 0 {
			return ctrl.Result{RequeueAfter: wait}, nil
		}
	} else {
		ctx = ctrl.LoggerInto(ctx, ctrl.LoggerFrom(ctx).WithValues("Machine", klog.KObj(machine)))
		cluster, err := util.GetClusterByName(ctx, r.Client, machine.Namespace, machine.Spec.ClusterName)
		if err != nil && !apierrors.IsNotFound(err) {
			return ctrl.Result{}, fmt.Errorf("getting Cluster %s: %w", machine.Spec.ClusterName, err)
		}
		s.cluster = cluster
	}

	opened, err := reconciler.Open(ctx, config, reconciler.Opening{Client: r.Client, Cluster: s.cluster,
		Finalizer: bootstrapv1.ConfigFinalizer, UpstreamFinalizer: bootstrapv1.UpstreamConfigFinalizer,
		NewWriter: reconciler.PatchHelper(ownedConditions...)})
	if opened == nil {
		return ctrl.Result{}, err
	}
	// A deleted config keeps the summary and observedGeneration of its last reconcile.
	deleting := !config.DeletionTimestamp.IsZero()
	defer opened.Close(ctx, &reterr, reconciler.Closing{Recorder: r.Recorder,
		Summary: func() error {
			if !deleting {
				setSummary(config)
			}
			return nil
		},
		Observe: func(generation int64) {
			if !deleting {
				config.Status.ObservedGeneration = generation
			}
		}})

	// Deletion does not wait for the Machine or the Cluster: they may be gone already.
	if deleting {
		return ctrl.Result{}, r.reconcileDelete(ctx, s)
	}
	err = r.reconcileNormal(ctx, s)
	return ctrl.Result{RequeueAfter: s.requeueAfter}, err
}

// reconcileNormal walks the steps in order; each either completes or sets the conditions that
// say what it waits for and stops the walk.
func (r *OpenshiftAssistedConfigReconciler) reconcileNormal(ctx context.Context, s *scope) error {
	// A Machine that is a Node of the cluster runs on its installed host: nothing is left to do.
	if m := s.machine; m != nil && m.Status.NodeRef.IsDefined() && m.Spec.Bootstrap.DataSecretName != nil {
		setJoined(s.config, m)
		return nil
	}
	for _, step := range []func(context.Context, *scope) (bool, error){
		r.reconcilePrerequisites,
		r.reconcileInfrastructure,
		r.reconcileInfraEnv,
		r.reconcileMetal3Machine,
		r.reconcileDataSecret,
		r.reconcileAgent,
	} {
		done, err := step(ctx, s)
		if err != nil || !done {
			return err
		}
	}
	return nil
}

// reconcilePrerequisites waits for the owner Machine, the Cluster, its infrastructure, its
// ClusterDeployment and a pull secret, and keeps Machines created while an installation runs
// waiting until it completes.
func (r *OpenshiftAssistedConfigReconciler) reconcilePrerequisites(ctx context.Context, s *scope) (bool, error) {
	c := s.config
	switch {
	case s.machine == nil:
		waiting(c, bootstrapv1.WaitingForMachineReason, "Waiting for a Machine to own this config (its spec.bootstrap.configRef)")
		return false, nil
	case s.cluster == nil:
		waiting(c, bootstrapv1.WaitingForClusterReason, fmt.Sprintf("Waiting for Cluster %s of Machine %s", s.machine.Spec.ClusterName, s.machine.Name))
		return false, nil
	case !ptr.Deref(s.cluster.Status.Initialization.InfrastructureProvisioned, false):
		waiting(c, bootstrapv1.WaitingForClusterInfrastructureReason, fmt.Sprintf("Waiting for the infrastructure of Cluster %s to be provisioned", s.cluster.Name))
		return false, nil
	}
	cd, err := clusterDeploymentFor(ctx, r.Client, s.cluster)
	if err != nil {
		return false, err
	}
	if cd == nil {
		waiting(c, bootstrapv1.WaitingForClusterDeploymentReason, fmt.Sprintf(
			"Waiting for the control plane of Cluster %s to create ClusterDeployment %s/%s", s.cluster.Name, s.cluster.Namespace, s.cluster.Name))
		return false, nil
	}
	s.clusterDeployment = cd
	if s.clusterInstall, err = clusterInstallFor(ctx, r.Client, cd); err != nil {
		return false, err
	}
	if pullSecretRef(c, cd) == nil {
		waiting(c, bootstrapv1.WaitingForPullSecretReason, fmt.Sprintf(
			"Neither spec.pullSecretRef nor ClusterDeployment %s spec.pullSecretRef names a pull secret", cd.Name))
		return false, nil
	}
	// A config whose Agent was recognized before the installation started is part of it.
	if installationRunning(s.clusterInstall) && c.Status.AgentRef == nil {
		waiting(c, bootstrapv1.WaitingForInstallationToCompleteReason, fmt.Sprintf(
			"The installation of cluster %s is running (AgentClusterInstall %s state %q): this Machine joins it as a day-2 host once it completes",
			s.cluster.Name, s.clusterInstall.Name, s.clusterInstall.Status.DebugInfo.State))
		return false, nil
	}
	return true, nil
}

// reconcileInfraEnv creates or updates the config's InfraEnv and waits for its ISO URL.
func (r *OpenshiftAssistedConfigReconciler) reconcileInfraEnv(ctx context.Context, s *scope) (bool, error) {
	c := s.config
	ie := &aiv1beta1.InfraEnv{ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, Name: infraEnvName(c)}}
	// Its kernel arguments and NMStateConfig selector hold arrays of objects: a change keeps the
	// fields a newer CRD has in their unchanged elements (unknownfields).
	result, err := unknownfields.CreateOrPatch(ctx, r.Client, r.APIReader, ie, func() error {
		if err := controllerutil.SetControllerReference(c, ie, r.Client.Scheme()); err != nil {
			return err
		}
		if ie.Labels == nil {
			ie.Labels = map[string]string{}
		}
		ie.Labels[clusterv1.ClusterNameLabel] = s.cluster.Name
		ie.Spec = desiredInfraEnvSpec(c, s.clusterDeployment, pullSecretRef(c, s.clusterDeployment))
		return nil
	})
	if err != nil {
		var owned *controllerutil.AlreadyOwnedError
		if errors.As(err, &owned) {
			conditions.Set(c, metav1.Condition{Type: bootstrapv1.InfraEnvReadyCondition, Status: metav1.ConditionFalse,
				Reason: bootstrapv1.InfraEnvFailedReason, Message: fmt.Sprintf("InfraEnv %s exists and belongs to another object: rename or delete it", ie.Name)})
			setDownstreamWaiting(c, bootstrapv1.InfraEnvReadyCondition)
			return false, nil
		}
		return false, fmt.Errorf("creating or updating InfraEnv %s: %w", ie.Name, err)
	}
	if result == controllerutil.OperationResultCreated {
		r.Recorder.Eventf(c, ie, corev1.EventTypeNormal, "InfraEnvCreated", "CreateInfraEnv", "Created InfraEnv %s bound to ClusterDeployment %s", ie.Name, s.clusterDeployment.Name)
		ctrl.LoggerFrom(ctx).Info("Created InfraEnv", "InfraEnv", ie.Name)
	}
	if !ptr.Deref(c.Status.Initialization.DataSecretCreated, false) {
		if err := r.patchNewerInfraEnvFields(ctx, s, ie); err != nil {
			return false, err
		}
	}
	s.infraEnv = ie
	c.Status.InfraEnvRef = &corev1.ObjectReference{APIVersion: aiv1beta1.GroupVersion.String(), Kind: "InfraEnv",
		Namespace: ie.Namespace, Name: ie.Name, UID: ie.UID}
	// The ISO URL carries a download token: the status shows it only where a person boots the
	// host from it (no Metal3Machine); for Metal3 it goes to the Metal3Machine alone.
	c.Status.ISODownloadURL = ""
	if !isMetal3Machine(s.machine) {
		c.Status.ISODownloadURL = ie.Status.ISODownloadURL
	}
	if ie.Status.ISODownloadURL == "" {
		msg := fmt.Sprintf("Waiting for assisted-service to create the discovery ISO of InfraEnv %s", ie.Name)
		if cond := infraEnvImageCondition(ie); cond != "" {
			msg += ": " + cond
		}
		waiting(c, bootstrapv1.WaitingForISOReason, msg)
		return false, nil
	}
	conditions.Set(c, metav1.Condition{Type: bootstrapv1.InfraEnvReadyCondition, Status: metav1.ConditionTrue,
		Reason: bootstrapv1.ISOAvailableReason, Message: fmt.Sprintf("InfraEnv %s serves its discovery ISO", ie.Name)})
	return true, nil
}

// reconcileInfrastructure finds the Machine's Metal3Machine, if it has one, and from its image
// how its host boots discovery: an RHCOS disk image named in the Metal3MachineTemplate (the
// image-based flow), or the discovery ISO, which the next steps put on the Metal3Machine.
func (r *OpenshiftAssistedConfigReconciler) reconcileInfrastructure(ctx context.Context, s *scope) (bool, error) {
	if !isMetal3Machine(s.machine) {
		return true, nil
	}
	m3m, err := metal3MachineFor(ctx, r.Client, s.machine)
	if err != nil {
		return false, err
	}
	if m3m == nil {
		waiting(s.config, bootstrapv1.WaitingForMetal3MachineReason, fmt.Sprintf("Waiting for Metal3Machine %s to exist", s.machine.Spec.InfrastructureRef.Name))
		return false, nil
	}
	s.metal3Machine, s.diskImage = m3m, bootsDiskImage(m3m)
	return true, nil
}

// reconcileMetal3Machine puts the ISO URL on the Machine's Metal3Machine, unless it boots a disk
// image. CAPM3 provisions a BareMetalHost only once the Machine has bootstrap data, and the data
// Secret is written after this step: so the host never boots anything but the discovery ISO.
func (r *OpenshiftAssistedConfigReconciler) reconcileMetal3Machine(ctx context.Context, s *scope) (bool, error) {
	m3m := s.metal3Machine
	if m3m == nil || s.diskImage {
		return true, nil
	}
	c := s.config
	if hasISO(m3m, s.infraEnv.Status.ISODownloadURL) {
		return true, nil
	}
	if m3m.Spec.ProviderID != "" && m3m.Spec.Image.URL != "" {
		// CAPM3 provisioned the host with the ISO it had; it never changes the image of a
		// provisioned host. A new ISO URL (the InfraEnv was recreated, or the cluster moved to a
		// hub whose assisted-service serves its own) is not for this host.
		return true, nil
	}
	before := m3m.DeepCopy()
	m3m.Spec.Image.URL = s.infraEnv.Status.ISODownloadURL
	m3m.Spec.Image.DiskFormat = capm3v1beta2.LiveIsoDiskFormat
	// A live ISO has no checksum: CAPM3's schema accepts an empty one for live-iso.
	m3m.Spec.Image.Checksum = ptr.To("")
	m3m.Spec.Image.ChecksumType = ""
	if err := r.Client.Patch(ctx, m3m, client.MergeFrom(before)); err != nil {
		return false, fmt.Errorf("setting the discovery ISO on Metal3Machine %s: %w", m3m.Name, err)
	}
	r.Recorder.Eventf(c, m3m, corev1.EventTypeNormal, "DiscoveryISOSet", "SetDiscoveryISO", "Set the discovery ISO of InfraEnv %s on Metal3Machine %s", s.infraEnv.Name, m3m.Name)
	return true, nil
}

// reconcileDataSecret writes the bootstrap data Secret and reports it in the status.
func (r *OpenshiftAssistedConfigReconciler) reconcileDataSecret(ctx context.Context, s *scope) (bool, error) {
	c := s.config
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, Name: dataSecretName(c)}}
	cached := r.cachedDataSecret(ctx, c, s.cluster.Name)
	var discovery []byte
	var infraEnvUID string
	if s.diskImage {
		infraEnvUID = string(s.infraEnv.UID)
		// Downloaded once per InfraEnv: the Secret keeps it. A new InfraEnv (the old one was
		// deleted, or the cluster moved to another hub) has its own downloaded.
		if cached != nil && cached.Annotations[discoveryInfraEnvAnnotation] == infraEnvUID {
			discovery = discoveryIgnitionOf(cached.Data["value"])
		}
		if discovery == nil {
			var ok bool
			if discovery, ok = r.discoveryIgnition(ctx, s); !ok {
				return false, nil
			}
		}
	}
	data, err := bootstrapData(c, staticHostname(c, s.machine), discovery)
	if err != nil {
		conditions.Set(c, metav1.Condition{Type: bootstrapv1.DataSecretAvailableCondition, Status: metav1.ConditionFalse,
			Reason: bootstrapv1.InvalidIgnitionOverrideReason, Message: "Fix the config's annotation: " + err.Error()})
		setDownstreamWaiting(c, bootstrapv1.DataSecretAvailableCondition)
		return false, nil //nolint:nilerr // a user error: reported in the condition, retried when the config changes
	}
	want := map[string][]byte{"value": data, "format": []byte(bootstrapv1.BootstrapDataFormatIgnition)}
	if !dataSecretUpToDate(cached, want, infraEnvUID) {
		result, err := controllerutil.CreateOrPatch(ctx, r.Client, secret, func() error {
			if err := controllerutil.SetControllerReference(c, secret, r.Client.Scheme()); err != nil {
				return err
			}
			if secret.Labels == nil {
				secret.Labels = map[string]string{}
			}
			secret.Labels[clusterv1.ClusterNameLabel] = s.cluster.Name
			if infraEnvUID != "" {
				if secret.Annotations == nil {
					secret.Annotations = map[string]string{}
				}
				secret.Annotations[discoveryInfraEnvAnnotation] = infraEnvUID
			} else {
				delete(secret.Annotations, discoveryInfraEnvAnnotation)
			}
			secret.Type = clusterv1.ClusterSecretType
			secret.Data = want
			return nil
		})
		if err != nil {
			return false, fmt.Errorf("writing the bootstrap data Secret %s: %w", secret.Name, err)
		}
		if result == controllerutil.OperationResultCreated {
			r.Recorder.Eventf(c, secret, corev1.EventTypeNormal, "DataSecretCreated", "CreateDataSecret", "Created bootstrap data Secret %s", secret.Name)
		}
	}
	c.Status.DataSecretName = secret.Name
	c.Status.Initialization.DataSecretCreated = ptr.To(true)
	conditions.Set(c, metav1.Condition{Type: bootstrapv1.DataSecretAvailableCondition, Status: metav1.ConditionTrue,
		Reason: bootstrapv1.DataSecretCreatedReason, Message: fmt.Sprintf("Bootstrap data Secret %s is available", secret.Name)})
	return true, nil
}

// discoveryInfraEnvAnnotation, on a bootstrap data Secret that carries a discovery ignition, is
// the UID of the InfraEnv the ignition registers the host with.
const discoveryInfraEnvAnnotation = "openshiftassistedconfig.cluster.x-k8s.io/discovery-infraenv-uid"

// discoveryIgnition downloads the InfraEnv's discovery ignition. When it cannot, it says why in
// DataSecretAvailable (with a Warning event when the reason is new) and tries again later.
func (r *OpenshiftAssistedConfigReconciler) discoveryIgnition(ctx context.Context, s *scope) ([]byte, bool) {
	c := s.config
	var ign []byte
	var err error
	if r.Discovery == nil {
		err = errors.New("this bootstrap provider was started without an assisted-service client")
	} else {
		ign, err = r.Discovery.DiscoveryIgnition(ctx, s.infraEnv)
	}
	if err == nil {
		return ign, true
	}
	msg := fmt.Sprintf("Cannot download the discovery ignition of InfraEnv %s, which the host of Metal3Machine %s (it boots disk image %s) gets as its bootstrap data: %v",
		s.infraEnv.Name, s.metal3Machine.Name, s.metal3Machine.Spec.Image.URL, err)
	if saysOtherwise(c, bootstrapv1.DataSecretAvailableCondition, msg) {
		r.Recorder.Eventf(c, s.infraEnv, corev1.EventTypeWarning, bootstrapv1.DiscoveryIgnitionUnavailableReason, "DownloadDiscoveryIgnition", msg)
	}
	setWaitingAfter(c, bootstrapv1.InfraEnvReadyCondition, bootstrapv1.DiscoveryIgnitionUnavailableReason, msg)
	s.requeueAfter = discoveryRetry
	return nil, false
}

// dataSecretUpToDate tells whether cached, the cache's copy of the config's bootstrap data Secret
// as the config wrote it (cachedDataSecret), holds want and is annotated with the InfraEnv whose
// discovery ignition it carries (none for a host booting the discovery ISO). A copy the cache has
// not seen yet, or one that differs, is written through the API server.
func dataSecretUpToDate(cached *corev1.Secret, want map[string][]byte, infraEnvUID string) bool {
	return cached != nil && maps.EqualFunc(cached.Data, want, bytes.Equal) && cached.Annotations[discoveryInfraEnvAnnotation] == infraEnvUID
}

// cachedDataSecret is the cache's copy of the config's bootstrap data Secret as the config wrote
// it (controlled by the config, labelled with the cluster, of Cluster API's Secret type), or nil.
func (r *OpenshiftAssistedConfigReconciler) cachedDataSecret(ctx context.Context, c *bootstrapv1.OpenshiftAssistedConfig, cluster string) *corev1.Secret {
	if r.SecretReader == nil || !ptr.Deref(c.Status.Initialization.DataSecretCreated, false) {
		return nil
	}
	cached := &corev1.Secret{}
	if err := r.SecretReader.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: dataSecretName(c)}, cached); err != nil {
		return nil
	}
	if !metav1.IsControlledBy(cached, c) || cached.Labels[clusterv1.ClusterNameLabel] != cluster || cached.Type != clusterv1.ClusterSecretType {
		return nil
	}
	return cached
}

// dataSecretName is the name of the config's bootstrap data Secret (as in Cluster API's kubeadm
// provider: the config's name).
func dataSecretName(config *bootstrapv1.OpenshiftAssistedConfig) string { return config.Name }

// reconcileAgent recognizes the Machine's Agent, configures and approves it, and reports its
// installation.
func (r *OpenshiftAssistedConfigReconciler) reconcileAgent(ctx context.Context, s *scope) (bool, error) {
	c := s.config
	if s.metal3Machine != nil {
		bmh, refused, err := bareMetalHostFor(ctx, r.Client, s.metal3Machine)
		if err != nil {
			return false, err
		}
		if refused != "" {
			if saysOtherwise(c, bootstrapv1.AgentRegisteredCondition, refused) {
				r.Recorder.Eventf(c, s.metal3Machine, corev1.EventTypeWarning, bootstrapv1.BareMetalHostRefusedReason, "CheckHost", refused)
			}
			setWaitingAfter(c, bootstrapv1.DataSecretAvailableCondition, bootstrapv1.BareMetalHostRefusedReason, refused)
			return false, nil
		}
		if bmh == nil {
			setWaitingAfter(c, bootstrapv1.DataSecretAvailableCondition, bootstrapv1.WaitingForBareMetalHostReason,
				fmt.Sprintf("Waiting for CAPM3 to associate a BareMetalHost with Metal3Machine %s", s.metal3Machine.Name))
			return false, nil
		}
		if problem := hostTaken(bmh, s.metal3Machine); problem != "" {
			if saysOtherwise(c, bootstrapv1.AgentRegisteredCondition, problem) {
				r.Recorder.Eventf(c, bmh, corev1.EventTypeWarning, bootstrapv1.BareMetalHostTakenReason, "CheckHost", problem)
			}
			setWaitingAfter(c, bootstrapv1.DataSecretAvailableCondition, bootstrapv1.BareMetalHostTakenReason, problem)
			return false, nil
		}
		s.bareMetalHost = bmh
	}
	found, err := r.findAgent(ctx, s)
	if err != nil {
		return false, err
	}
	agent := found.agent
	if s.bareMetalHost != nil && !s.diskImage && (agent == nil || agent.Labels[bootstrapv1.AgentConfigLabel] != c.Name) {
		// Checked until an Agent is recognized as the host's: a host that was accepted before
		// (this check is newer, or its annotation was removed afterwards) is not refused midway.
		if problem := liveISOProblem(s.bareMetalHost); problem != "" {
			if saysOtherwise(c, bootstrapv1.AgentRegisteredCondition, problem) {
				r.Recorder.Eventf(c, s.bareMetalHost, corev1.EventTypeWarning, bootstrapv1.HostNotSupportedReason, "CheckHost", problem)
			}
			setWaitingAfter(c, bootstrapv1.DataSecretAvailableCondition, bootstrapv1.HostNotSupportedReason, problem)
			return false, nil
		}
	}
	if agent == nil {
		if found.reason == bootstrapv1.WaitingForApprovalReason && saysOtherwise(c, bootstrapv1.AgentRegisteredCondition, found.message) {
			r.Recorder.Eventf(c, nil, corev1.EventTypeNormal, "AgentAwaitsApproval", "FindAgent", found.message)
		}
		setWaitingAfter(c, bootstrapv1.DataSecretAvailableCondition, found.reason, found.message)
		return false, nil
	}
	s.agent = agent
	c.Status.AgentRef = &corev1.ObjectReference{APIVersion: aiv1beta1.GroupVersion.String(), Kind: "Agent",
		Namespace: agent.Namespace, Name: agent.Name, UID: agent.UID}
	conditions.Set(c, metav1.Condition{Type: bootstrapv1.AgentRegisteredCondition, Status: metav1.ConditionTrue,
		Reason: bootstrapv1.AgentRegisteredReason, Message: fmt.Sprintf("Agent %s registered (assisted-service state %q), matched by %s",
			agent.Name, agentState(agent), found.evidence)})

	var env map[string]string
	if s.bareMetalHost != nil && usesMetadata(c) {
		if env, err = metadataEnv(ctx, r.Client, s.bareMetalHost); err != nil {
			setWaitingAfter(c, bootstrapv1.AgentRegisteredCondition, bootstrapv1.WaitingForApprovalReason,
				"Not approving Agent "+agent.Name+" yet: the host's metadata, which nodeRegistration names, cannot be read: "+err.Error())
			return false, nil //nolint:nilerr // reported in the condition; retried (CAPM3 writes the Secret while it provisions)
		}
	}
	settings, err := desiredAgentSettings(c, s.machine, s.bareMetalHost, env, agent)
	if err != nil {
		setWaitingAfter(c, bootstrapv1.AgentRegisteredCondition, bootstrapv1.WaitingForApprovalReason, "Not approving Agent "+agent.Name+": "+err.Error())
		return false, nil //nolint:nilerr // reported in the condition; retried when the Machine, host or Agent changes
	}
	if needsFencing(s.machine) && !hostInstallStarted(agent) {
		problem, err := r.reconcileFencing(ctx, s, agent)
		if err != nil {
			return false, err
		}
		if problem != "" {
			msg := "Not approving Agent " + agent.Name + ": " + problem
			if saysOtherwise(c, bootstrapv1.AgentApprovedCondition, msg) {
				r.Recorder.Eventf(c, agent, corev1.EventTypeWarning, bootstrapv1.FencingCredentialsUnavailableReason, "ApproveAgent", msg)
			}
			setWaitingAfter(c, bootstrapv1.AgentRegisteredCondition, bootstrapv1.FencingCredentialsUnavailableReason, msg)
			return false, nil
		}
	}
	before := agent.DeepCopy()
	wasApproved := agent.Spec.Approved
	applyAgentSettings(agent, settings)
	// An Agent already configured is not written again: assisted-service updates its status many
	// times during an install, and each update reconciles the config.
	if !apiequality.Semantic.DeepEqual(before, agent) {
		if err := r.Client.Patch(ctx, agent, client.MergeFrom(before)); err != nil {
			return false, fmt.Errorf("configuring Agent %s: %w", agent.Name, err)
		}
	}
	if !wasApproved {
		metrics.AgentsApproved.Inc()
		r.Recorder.Eventf(c, agent, corev1.EventTypeNormal, "AgentApproved", "ApproveAgent", "Approved Agent %s as %s %s", agent.Name, settings.Role, settings.Hostname)
		ctrl.LoggerFrom(ctx).Info("Approved Agent", "Agent", agent.Name, "role", settings.Role)
	}
	conditions.Set(c, metav1.Condition{Type: bootstrapv1.AgentApprovedCondition, Status: metav1.ConditionTrue,
		Reason: bootstrapv1.AgentApprovedReason, Message: fmt.Sprintf("Agent %s is approved as %s %s (assisted-service state %q)",
			agent.Name, settings.Role, settings.Hostname, agentState(agent))})
	wasPending := conditions.GetReason(c, bootstrapv1.InstallingCondition) == bootstrapv1.InstallationPendingUserActionReason
	setInstallConditions(c, agent)
	if cond := conditions.Get(c, bootstrapv1.InstallingCondition); !wasPending && cond.Reason == bootstrapv1.InstallationPendingUserActionReason {
		r.Recorder.Eventf(c, agent, corev1.EventTypeWarning, bootstrapv1.InstallationPendingUserActionReason, "Install", cond.Message)
	}
	return true, nil
}

// agentSearch is what findAgent found: the Agent and the evidence that it is the Machine's host,
// or why there is none (a condition reason and message).
type agentSearch struct {
	agent           *aiv1beta1.Agent
	evidence        string
	reason, message string
}

// findAgent returns the Agent of the Machine's host, among the Agents registered through the
// config's InfraEnv; Agents claimed by another config are never considered. With Metal3, the
// InfraEnv's ISO is given to the Machine's BareMetalHost alone, and the Agent must also have the
// host's boot MAC, or, when the host has none, one of the MACs inspection found on it; a host
// with neither is matched by being the only Agent registered there. Without Metal3, a person
// identifies the host by approving its Agent. When it finds none, or more than one, it says why.
func (r *OpenshiftAssistedConfigReconciler) findAgent(ctx context.Context, s *scope) (agentSearch, error) {
	list := &aiv1beta1.AgentList{}
	if err := r.Client.List(ctx, list, client.InNamespace(s.infraEnv.Namespace),
		client.MatchingLabels{aiv1beta1.InfraEnvNameLabel: s.infraEnv.Name}); err != nil {
		return agentSearch{}, fmt.Errorf("listing the Agents of InfraEnv %s: %w", s.infraEnv.Name, err)
	}
	var macs []string
	// What carries the InfraEnv's identity to the host: the discovery ISO, or the discovery
	// ignition in the bootstrap data of a host that boots a disk image.
	medium := "discovery ISO"
	if s.diskImage {
		medium = "discovery ignition"
	}
	evidence := "the only Agent registered through InfraEnv " + s.infraEnv.Name
	if bmh := s.bareMetalHost; bmh != nil {
		var by string
		if macs, by = hostMACs(bmh); len(macs) > 0 {
			evidence = by
		} else {
			evidence += ", whose " + medium + " only BareMetalHost " + bmh.Name + " was given (it has no boot MAC and was not inspected)"
		}
	}
	var candidates []*aiv1beta1.Agent
	for i := range list.Items {
		a := &list.Items[i]
		if owner, ok := a.Labels[bootstrapv1.AgentConfigLabel]; ok && owner != s.config.Name {
			continue
		}
		if len(macs) > 0 && !slices.ContainsFunc(macs, func(mac string) bool { return hasMAC(a, mac) }) {
			continue
		}
		candidates = append(candidates, a)
	}
	for _, a := range candidates {
		if a.Labels[bootstrapv1.AgentConfigLabel] == s.config.Name {
			return agentSearch{agent: a, evidence: evidence}, nil // recognized earlier
		}
	}
	if s.bareMetalHost == nil && len(candidates) > 0 {
		// Without a BareMetalHost nothing identifies the Machine's host: whoever has the ISO URL
		// can register a host through it, and the first one to do so would be approved with the
		// Machine's role. The person who booted the host identifies it by approving its Agent.
		approved := slices.DeleteFunc(slices.Clone(candidates), func(a *aiv1beta1.Agent) bool { return !a.Spec.Approved })
		if len(approved) == 0 {
			return agentSearch{reason: bootstrapv1.WaitingForApprovalReason, message: fmt.Sprintf(
				"%s registered through InfraEnv %s; without a BareMetalHost nothing proves which host is this Machine's: check the host you booted and approve its Agent "+
					"(kubectl -n %s patch agent <name> --type merge -p '{\"spec\":{\"approved\":true}}'), this config then configures it as %s",
				describeAgents(candidates), s.infraEnv.Name, s.infraEnv.Namespace, role(s.machine))}, nil
		}
		candidates, evidence = approved, "approved by a person"
	}
	switch {
	case len(candidates) == 1:
		return agentSearch{agent: candidates[0], evidence: evidence}, nil
	case len(candidates) > 1:
		return agentSearch{reason: bootstrapv1.AmbiguousAgentsReason, message: fmt.Sprintf(
			"%d Agents registered through InfraEnv %s could be this Machine's host (%s); none is approved: delete the Agents of hosts that should not have booted this config's %s",
			len(candidates), s.infraEnv.Name, describeAgents(candidates), medium)}, nil
	case s.bareMetalHost != nil:
		identity := "matched by " + evidence
		if len(macs) > 0 {
			identity = "MAC " + strings.Join(macs, " ")
		}
		boot := "boot the discovery ISO"
		if s.diskImage {
			// An image whose Ignition reads no config drive (a metal image) boots without its
			// bootstrap data and never registers: nothing else tells.
			boot = fmt.Sprintf("boot disk image %s (an RHCOS image whose Ignition reads the config drive: OpenStack or Nutanix)", s.metal3Machine.Spec.Image.URL)
		}
		return agentSearch{reason: bootstrapv1.WaitingForAgentReason, message: fmt.Sprintf(
			"Waiting for the host of BareMetalHost %s (%s) to %s and register through InfraEnv %s (%d other Agents registered there)",
			s.bareMetalHost.Name, identity, boot, s.infraEnv.Name, len(list.Items))}, nil
	default:
		return agentSearch{reason: bootstrapv1.WaitingForAgentReason, message: fmt.Sprintf(
			"Waiting for the Machine's host to boot the discovery ISO of InfraEnv %s and register", s.infraEnv.Name)}, nil
	}
}

// describeAgents names Agents with what identifies their hosts (hostname, MAC addresses, serial
// number), at most three.
func describeAgents(agents []*aiv1beta1.Agent) string {
	parts := make([]string, 0, min(len(agents), 3))
	for i, a := range agents {
		if i == 3 {
			parts = append(parts, fmt.Sprintf("and %d more", len(agents)-3))
			break
		}
		macs := make([]string, 0, len(a.Status.Inventory.Interfaces))
		for _, nic := range a.Status.Inventory.Interfaces {
			macs = append(macs, nic.MacAddress)
		}
		parts = append(parts, fmt.Sprintf("Agent %s (host %s, MAC %s, serial %s)", a.Name, a.Status.Inventory.Hostname,
			strings.Join(macs, " "), a.Status.Inventory.SystemVendor.SerialNumber))
	}
	return strings.Join(parts, ", ")
}

// configAgents returns the Agents of the config: those it labelled, and those registered
// through its InfraEnv that carry no config's label (hosts that
// cluster-api-provider-openshift-assisted approved before the switch: it never labels Agents).
func (r *OpenshiftAssistedConfigReconciler) configAgents(ctx context.Context, c *bootstrapv1.OpenshiftAssistedConfig) ([]*aiv1beta1.Agent, error) {
	labelled := &aiv1beta1.AgentList{}
	if err := r.Client.List(ctx, labelled, client.InNamespace(c.Namespace), client.MatchingLabels{bootstrapv1.AgentConfigLabel: c.Name}); err != nil {
		return nil, fmt.Errorf("listing the Agents of the config: %w", err)
	}
	registered := &aiv1beta1.AgentList{}
	if err := r.Client.List(ctx, registered, client.InNamespace(c.Namespace), client.MatchingLabels{aiv1beta1.InfraEnvNameLabel: infraEnvName(c)}); err != nil {
		return nil, fmt.Errorf("listing the Agents of InfraEnv %s: %w", infraEnvName(c), err)
	}
	var agents []*aiv1beta1.Agent
	for i := range labelled.Items {
		agents = append(agents, &labelled.Items[i])
	}
	for i := range registered.Items {
		if _, ok := registered.Items[i].Labels[bootstrapv1.AgentConfigLabel]; !ok {
			agents = append(agents, &registered.Items[i])
		}
	}
	return agents, nil
}
