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
	"net"
	"strings"

	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	hiveagent "github.com/openshift/hive/apis/hive/v1/agent"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util"
	"sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	infrav1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/infrastructure/v1beta1"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/foreign"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/reconciler"
)

const (
	// clusterDeploymentIndex indexes AgentClusters by the <namespace>/<name> of the
	// ClusterDeployment they use or wait for.
	clusterDeploymentIndex = "agentCluster.clusterDeployment"
)

// agentClusterInstallKind is the kind of assisted-service's AgentClusterInstall.
const agentClusterInstallKind = "AgentClusterInstall"

// AgentClusterReconciler finds or creates the ClusterDeployment and AgentClusterInstall of a
// Cluster's Agents and reports the cluster infrastructure as provisioned.
type AgentClusterReconciler struct {
	Client client.Client
	// APIReader reads from the API server what is read once and not watched (a
	// HostedControlPlane).
	APIReader client.Reader
	// AgentReader reads Agents (the manager's cache, or the one of --agent-namespace); their
	// failure-domain labels make the failure domains the AgentCluster offers.
	AgentReader client.Reader
	// AgentNamespace, when set, is the only namespace Agents are taken from.
	AgentNamespace string
	// SharedAgentPool: AgentMachines take Agents of every namespace when AgentNamespace is empty
	// (--shared-agent-pool); otherwise those of their own namespace, whose failure domains are
	// the AgentCluster's.
	SharedAgentPool bool
	// AllowCrossNamespaceReferences: see setup.Options.
	AllowCrossNamespaceReferences bool
	WatchFilterValue              string
	Recorder                      events.EventRecorder
	// Foreign decides how long a deletion waits for Hive and assisted-service to release the
	// ClusterDeployment and AgentClusterInstall the AgentCluster created (see package foreign).
	Foreign foreign.Policy
}

// crossNamespaceRefusal returns why the AgentCluster's references are refused ("" when they are
// not): a ClusterDeployment or an ignition CA Secret outside its namespace, unless allowed.
func crossNamespaceRefusal(ac *infrav1.AgentCluster, allowed bool) string {
	if allowed {
		return ""
	}
	const how = "so that an AgentCluster cannot bind hosts to, or read Secrets of, another namespace's cluster. " +
		"Create the AgentCluster in that namespace, or run the infrastructure manager with --allow-cross-namespace-references"
	if ref := ac.Spec.ClusterDeploymentRef; ref != nil && ref.Namespace != "" && ref.Namespace != ac.Namespace {
		return fmt.Sprintf("spec.clusterDeploymentRef names ClusterDeployment %s/%s, outside the AgentCluster's namespace %s: refused, %s",
			ref.Namespace, ref.Name, ac.Namespace, how)
	}
	if ie := ac.Spec.IgnitionEndpoint; ie != nil && ie.CaCertificateReference != nil && ie.CaCertificateReference.Namespace != ac.Namespace {
		return fmt.Sprintf("spec.ignitionEndpoint.caCertificateReference names Secret %s/%s, outside the AgentCluster's namespace %s: refused, %s",
			ie.CaCertificateReference.Namespace, ie.CaCertificateReference.Name, ac.Namespace, how)
	}
	return ""
}

// RBAC: as the AgentMachine controller's (patches, status patches, finalizers/update for the
// owner references of the ClusterDeployment and AgentClusterInstall it creates).
// +kubebuilder:rbac:groups=capi-provider.agent-install.openshift.io,resources=agentclusters,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=capi-provider.agent-install.openshift.io,resources=agentclusters/status,verbs=patch
// +kubebuilder:rbac:groups=capi-provider.agent-install.openshift.io,resources=agentclusters/finalizers,verbs=update
// +kubebuilder:rbac:groups=hive.openshift.io,resources=clusterdeployments,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=extensions.hive.openshift.io,resources=agentclusterinstalls,verbs=get;list;watch;create;patch;delete
// customresourcedefinitions get: a deletion reads whether the CRD of a ClusterDeployment or
// AgentClusterInstall it waits for is being uninstalled (metadata only, uncached).
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get
// +kubebuilder:rbac:groups=hypershift.openshift.io,resources=hostedcontrolplanes,verbs=get

// Reconcile records the ClusterDeployment of an AgentCluster and reports it provisioned.
func (r *AgentClusterReconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, rerr error) {
	ac := &infrav1.AgentCluster{}
	if err := r.Client.Get(ctx, req.NamespacedName, ac); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if reconciler.LeaveAlone(ctx, ac, r.WatchFilterValue) {
		return ctrl.Result{}, nil
	}
	cluster, err := util.GetOwnerCluster(ctx, r.Client, ac.ObjectMeta)
	if err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, fmt.Errorf("getting the owner Cluster: %w", err)
	}
	if cluster != nil {
		ctx = ctrl.LoggerInto(ctx, ctrl.LoggerFrom(ctx).WithValues("Cluster", klog.KObj(cluster)))
	}
	opened, err := reconciler.Open(ctx, ac, reconciler.Opening{Client: r.Client, Cluster: cluster,
		Finalizer: infrav1.AgentClusterFinalizer, UpstreamFinalizer: infrav1.UpstreamAgentClusterFinalizer,
		NewWriter: reconciler.PatchHelper(agentClusterOwnedConditions...)})
	if opened == nil {
		return ctrl.Result{}, err
	}
	defer opened.Close(ctx, &rerr, reconciler.Closing{Recorder: r.Recorder,
		Summary: func() error {
			return reconciler.SetReadySummary(ac, clusterv1.ReadyCondition, clusterv1.ReadyReason,
				conditions.ForConditionTypes{infrav1.ClusterDeploymentReadyCondition})
		},
		Observe: func(generation int64) { ac.Status.ObservedGeneration = generation }})
	if !ac.DeletionTimestamp.IsZero() {
		return r.reconcileDelete(ctx, ac)
	}
	if cluster == nil {
		setCDCondition(ac, metav1.ConditionFalse, infrav1.WaitingForClusterReason, "Waiting for Cluster API to set a Cluster as the owner of this AgentCluster")
		return ctrl.Result{}, nil
	}
	return r.reconcileNormal(ctx, ac, cluster)
}

// ensureBackupLabel puts obj in the hub backups of Red Hat Advanced Cluster Management, as
// cluster-api-provider-agent labels its AgentClusters and AgentMachines (ensureBackupLabel,
// controllers/common.go); a value the user set is kept. It is set with the claim or the
// provisioning, in the patch that writes their spec, so it costs no write of its own.
func ensureBackupLabel(obj *metav1.ObjectMeta) {
	if !metav1.HasLabel(*obj, infrav1.BackupLabel) {
		metav1.SetMetaDataLabel(obj, infrav1.BackupLabel, "true")
	}
}

func (r *AgentClusterReconciler) reconcileNormal(ctx context.Context, ac *infrav1.AgentCluster, cluster *clusterv1.Cluster) (ctrl.Result, error) {
	if ac.Spec.ClusterDeploymentRef == nil {
		switch cluster.Spec.ControlPlaneRef.Kind {
		case controlplanev1.ControlPlaneKind:
			// OpenshiftAssistedControlPlane creates the ClusterDeployment (ClusterDeploymentKey).
			cd := &hivev1.ClusterDeployment{}
			key := controlplanev1.ClusterDeploymentKey(cluster)
			if err := r.Client.Get(ctx, key, cd); err != nil {
				if apierrors.IsNotFound(err) {
					setCDCondition(ac, metav1.ConditionFalse, infrav1.WaitingForControlPlaneClusterDeploymentReason,
						fmt.Sprintf("Waiting for %s %s to create ClusterDeployment %s", controlplanev1.ControlPlaneKind, cluster.Spec.ControlPlaneRef.Name, key.Name))
					return ctrl.Result{}, nil
				}
				return ctrl.Result{}, fmt.Errorf("getting ClusterDeployment %s: %w", key.Name, err)
			}
			ac.Spec.ClusterDeploymentRef = &infrav1.ClusterDeploymentReference{Namespace: cd.Namespace, Name: cd.Name}
		default:
			hcp, waiting, err := r.hostedControlPlane(ctx, ac, cluster)
			if err != nil {
				return ctrl.Result{}, err
			}
			if waiting != "" {
				setCDCondition(ac, metav1.ConditionFalse, infrav1.WaitingForHostedControlPlaneReason, waiting)
				return ctrl.Result{RequeueAfter: hostedControlPlaneWait}, nil
			}
			if err := r.createClusterDeployment(ctx, ac, cluster, hcp); err != nil {
				return ctrl.Result{}, err
			}
			ac.Spec.ClusterDeploymentRef = &infrav1.ClusterDeploymentReference{Namespace: ac.Namespace, Name: ac.Name}
		}
	}
	if why := crossNamespaceRefusal(ac, r.AllowCrossNamespaceReferences); why != "" {
		if c := conditions.Get(ac, infrav1.ClusterDeploymentReadyCondition); c == nil || c.Message != why {
			r.Recorder.Eventf(ac, nil, corev1.EventTypeWarning, infrav1.CrossNamespaceReferenceRefusedReason, "Provision", why)
		}
		setCDCondition(ac, metav1.ConditionFalse, infrav1.CrossNamespaceReferenceRefusedReason, why)
		ac.Status.ClusterDeploymentRef = infrav1.ClusterDeploymentReference{}
		return ctrl.Result{}, nil
	}
	ref := *ac.Spec.ClusterDeploymentRef
	if ref.Namespace == "" {
		ref.Namespace = ac.Namespace
	}
	cd := &hivev1.ClusterDeployment{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, cd); err != nil {
		if apierrors.IsNotFound(err) {
			setCDCondition(ac, metav1.ConditionFalse, infrav1.ClusterDeploymentNotFoundReason,
				fmt.Sprintf("ClusterDeployment %s/%s does not exist", ref.Namespace, ref.Name))
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("getting ClusterDeployment %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	if why := ignitionEndpointNotUsed(ac, cd); why != "" {
		if c := conditions.Get(ac, infrav1.ClusterDeploymentReadyCondition); c == nil || c.Message != why {
			r.Recorder.Eventf(ac, cd, corev1.EventTypeWarning, infrav1.IgnitionEndpointNotUsedReason, "Provision", why)
		}
		setCDCondition(ac, metav1.ConditionFalse, infrav1.IgnitionEndpointNotUsedReason, why)
		return ctrl.Result{}, nil
	}
	ac.Status.ClusterDeploymentRef = ref
	ensureBackupLabel(&ac.ObjectMeta)
	if err := r.syncIgnitionEndpoint(ctx, ac, cd); err != nil {
		return ctrl.Result{}, err
	}
	if !ac.Spec.ControlPlaneEndpoint.IsValid() && cluster.Spec.ControlPlaneEndpoint.IsValid() {
		ac.Spec.ControlPlaneEndpoint = infrav1.NewAPIEndpoint(cluster.Spec.ControlPlaneEndpoint)
	}
	if !ac.Spec.ControlPlaneEndpoint.IsValid() {
		setCDCondition(ac, metav1.ConditionFalse, infrav1.WaitingForControlPlaneEndpointReason,
			"Waiting for spec.controlPlaneEndpoint (or the Cluster's) to be set")
		return ctrl.Result{}, nil
	}
	if err := r.setFailureDomains(ctx, ac); err != nil {
		return ctrl.Result{}, err
	}
	setCDCondition(ac, metav1.ConditionTrue, infrav1.ClusterDeploymentReadyReason, "")
	// Provisioned is told once: the AgentCluster says so in status.initialization.provisioned, or in
	// status.ready alone where the API server serves HyperShift's copy of the CRD (upstream's v1beta1
	// status; see package servedschema).
	if !ptr.Deref(ac.Status.Initialization.Provisioned, false) && !ac.Status.Ready { //nolint:staticcheck // see above
		r.Recorder.Eventf(ac, cd, corev1.EventTypeNormal, "Provisioned", "Provision",
			"Cluster infrastructure is provisioned with ClusterDeployment %s/%s", cd.Namespace, cd.Name)
	}
	ac.Status.Initialization.Provisioned = ptr.To(true)
	ac.Status.Ready = true //nolint:staticcheck // still written for clients of the v1beta1 contract
	return ctrl.Result{}, nil
}

// createClusterDeployment creates the ClusterDeployment (platform agentBareMetal, selecting the
// Cluster's Agents) and its AgentClusterInstall, both named after and owned by the AgentCluster.
// Under HyperShift (hcp set) they describe the installed hosted cluster, whose workers the Agents
// join as day-2 hosts.
func (r *AgentClusterReconciler) createClusterDeployment(ctx context.Context, ac *infrav1.AgentCluster, cluster *clusterv1.Cluster, hcp *hostedControlPlane) error {
	labels := map[string]string{clusterv1.ClusterNameLabel: cluster.Name, infrav1.AgentClusterLabel: ac.Name}
	aci := &hiveextv1beta1.AgentClusterInstall{
		ObjectMeta: metav1.ObjectMeta{Namespace: ac.Namespace, Name: ac.Name, Labels: labels},
		Spec: hiveextv1beta1.AgentClusterInstallSpec{
			ClusterDeploymentRef:  corev1.LocalObjectReference{Name: ac.Name},
			ProvisionRequirements: hiveextv1beta1.ProvisionRequirements{ControlPlaneAgents: 1},
			IgnitionEndpoint:      aciIgnitionEndpoint(ac),
		},
	}
	cd := &hivev1.ClusterDeployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ac.Namespace, Name: ac.Name, Labels: labels},
		Spec: hivev1.ClusterDeploymentSpec{
			ClusterName: cluster.Name,
			BaseDomain:  baseDomain(cluster.Name, ac.Spec.ControlPlaneEndpoint.Host),
			Platform: hivev1.Platform{AgentBareMetal: &hiveagent.BareMetalPlatform{
				AgentSelector: metav1.LabelSelector{MatchLabels: map[string]string{clusterv1.ClusterNameLabel: cluster.Name}},
			}},
			ClusterInstallRef: &hivev1.ClusterInstallLocalReference{
				Group: hiveextv1beta1.Group, Version: hiveextv1beta1.Version, Kind: agentClusterInstallKind, Name: ac.Name,
			},
		},
	}
	if hcp != nil {
		hcp.describe(cd, aci, cluster)
	}
	created := false
	for _, obj := range []client.Object{cd, aci} {
		if err := controllerutil.SetControllerReference(ac, obj, r.Client.Scheme()); err != nil {
			return err
		}
		err := r.Client.Create(ctx, obj)
		switch {
		case err == nil:
			created = true
		case apierrors.IsAlreadyExists(err):
			if err := r.adoptUpstreamObject(ctx, ac, obj, labels); err != nil {
				return err
			}
		default:
			return fmt.Errorf("creating %T %s: %w", obj, obj.GetName(), err)
		}
	}
	if created {
		r.Recorder.Eventf(ac, cd, corev1.EventTypeNormal, "ClusterDeploymentCreated", "Create",
			"Created ClusterDeployment and AgentClusterInstall %s", ac.Name)
	}
	return nil
}

// adoptUpstreamObject makes the AgentCluster the controller of the ClusterDeployment or
// AgentClusterInstall named like obj that openshift/cluster-api-provider-agent created for it:
// one the AgentCluster owns (same UID) without a controller reference. Our labels are added in
// the same merge patch of metadata alone; the spec upstream wrote (an installed HyperShift
// cluster's) is kept. Any other object of that name is left alone.
func (r *AgentClusterReconciler) adoptUpstreamObject(ctx context.Context, ac *infrav1.AgentCluster, obj client.Object, labels map[string]string) error {
	existing, ok := obj.DeepCopyObject().(client.Object)
	if !ok {
		return fmt.Errorf("copying %T", obj)
	}
	if err := r.Client.Get(ctx, client.ObjectKeyFromObject(obj), existing); err != nil {
		return fmt.Errorf("getting %T %s: %w", obj, obj.GetName(), err)
	}
	adopted, err := reconciler.AdoptOwned(ctx, r.Client, ac, infrav1.GroupVersion.WithKind("AgentCluster"), existing, labels)
	if err != nil || !adopted {
		return err
	}
	ctrl.LoggerFrom(ctx).Info("Adopted an object cluster-api-provider-agent created", "kind", fmt.Sprintf("%T", obj), "name", obj.GetName())
	r.Recorder.Eventf(ac, existing, corev1.EventTypeNormal, "Adopted", "Adopt",
		"Adopted %s, which cluster-api-provider-agent created for this AgentCluster", obj.GetName())
	return nil
}

// ignitionEndpointNotUsed says why spec.ignitionEndpoint would do nothing ("" when it is unset or
// used): only the AgentClusterInstall of a ClusterDeployment this AgentCluster created gets it;
// one that a control plane provider (or a user) created has its ignition endpoint set by them.
func ignitionEndpointNotUsed(ac *infrav1.AgentCluster, cd *hivev1.ClusterDeployment) string {
	if ac.Spec.IgnitionEndpoint == nil || metav1.IsControlledBy(cd, ac) {
		return ""
	}
	by := "was not created by this AgentCluster"
	if owner := metav1.GetControllerOf(cd); owner != nil {
		by = fmt.Sprintf("is managed by %s %s", owner.Kind, owner.Name)
	}
	return fmt.Sprintf("spec.ignitionEndpoint is not used: ClusterDeployment %s/%s %s, which sets the ignition endpoint of its "+
		"AgentClusterInstall; remove spec.ignitionEndpoint from the AgentCluster (and set the endpoint where the ClusterDeployment is managed)",
		cd.Namespace, cd.Name, by)
}

// syncIgnitionEndpoint hands the ignition endpoint to the AgentClusterInstall of a
// ClusterDeployment this AgentCluster created.
func (r *AgentClusterReconciler) syncIgnitionEndpoint(ctx context.Context, ac *infrav1.AgentCluster, cd *hivev1.ClusterDeployment) error {
	if !metav1.IsControlledBy(cd, ac) || cd.Spec.ClusterInstallRef == nil || ac.Spec.IgnitionEndpoint == nil {
		return nil
	}
	aci := &hiveextv1beta1.AgentClusterInstall{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: cd.Namespace, Name: cd.Spec.ClusterInstallRef.Name}, aci); err != nil {
		return client.IgnoreNotFound(err)
	}
	want := aciIgnitionEndpoint(ac)
	if equalIgnitionEndpoint(aci.Spec.IgnitionEndpoint, want) {
		return nil
	}
	before := aci.DeepCopy()
	aci.Spec.IgnitionEndpoint = want
	if err := r.Client.Patch(ctx, aci, client.MergeFrom(before)); err != nil {
		return fmt.Errorf("setting the ignition endpoint of AgentClusterInstall %s: %w", aci.Name, err)
	}
	return nil
}

func equalIgnitionEndpoint(a, b *hiveextv1beta1.IgnitionEndpoint) bool {
	if a == nil || b == nil {
		return a == b
	}
	if a.Url != b.Url || (a.CaCertificateReference == nil) != (b.CaCertificateReference == nil) {
		return false
	}
	return a.CaCertificateReference == nil || *a.CaCertificateReference == *b.CaCertificateReference
}

func aciIgnitionEndpoint(ac *infrav1.AgentCluster) *hiveextv1beta1.IgnitionEndpoint {
	ie := ac.Spec.IgnitionEndpoint
	if ie == nil || ie.Url == "" {
		return nil
	}
	// assisted-service appends each host's machine config pool, which a claim sets on the Agent
	// from the Machine's ignition URL (splitIgnitionURL): the endpoint is the URL without it.
	endpoint, _ := splitIgnitionURL(bracketIPv6(ie.Url))
	out := &hiveextv1beta1.IgnitionEndpoint{Url: endpoint}
	if ref := ie.CaCertificateReference; ref != nil {
		out.CaCertificateReference = &hiveextv1beta1.CaCertificateReference{Namespace: ref.Namespace, Name: ref.Name}
	}
	return out
}

// bracketIPv6 writes an IPv6 host of a URL in brackets: "https://fd00::1/x" becomes
// "https://[fd00::1]/x". A host that is a whole IPv6 address is taken as having no port (an
// IPv6 endpoint with a port must be written with brackets already).
func bracketIPv6(raw string) string {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok || strings.HasPrefix(rest, "[") {
		return raw
	}
	host, path, hasPath := strings.Cut(rest, "/")
	if ip := net.ParseIP(host); ip == nil || ip.To4() != nil {
		return raw
	}
	fixed := scheme + "://[" + host + "]"
	if hasPath {
		fixed += "/" + path
	}
	return fixed
}

// baseDomain derives the base domain from an API host "api.<cluster>.<base domain>".
func baseDomain(clusterName, host string) string {
	if rest, ok := strings.CutPrefix(host, "api."+clusterName+"."); ok && rest != "" {
		return rest
	}
	if net.ParseIP(host) == nil && strings.Contains(host, ".") {
		_, rest, _ := strings.Cut(host, ".")
		return rest
	}
	return "local"
}
