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
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/storage/names"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/controllers/external"
	"sigs.k8s.io/cluster-api/util"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/cluster-api/util/patch"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/controlplane/internal/release"
)

// reconcileMachines creates or removes one control-plane Machine at a time until there are as
// many as spec.replicas. A Machine is removed only when etcd keeps quorum without its member,
// and its member is removed before its host goes (see etcd.go).
func (r *OpenshiftAssistedControlPlaneReconciler) reconcileMachines(ctx context.Context, s *scope) (ctrl.Result, error) {
	if err := r.reconcileEtcdHooks(ctx, s); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.reconcilePreTerminateHook(ctx, s); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.reconcileMachinesInPlace(ctx, s); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.reconcileOutdated(ctx, s); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.reconcileStrayMembers(ctx, s); err != nil {
		return ctrl.Result{}, err
	}
	if remediated, err := r.reconcileRemediation(ctx, s); err != nil || remediated {
		return ctrl.Result{RequeueAfter: waitRequeue}, err
	}
	for _, m := range s.machines {
		if !m.DeletionTimestamp.IsZero() {
			// One at a time: the next change waits until this Machine is gone.
			return ctrl.Result{RequeueAfter: waitRequeue}, nil
		}
	}
	want := int(wantMachines(s.oacp))
	switch {
	case len(s.machines) < want:
		return ctrl.Result{}, r.createMachine(ctx, s, createArbiterNext(s.oacp, s.machines))
	case len(s.machines) > want:
		return r.scaleDown(ctx, s, want)
	case len(s.outdated) > 0:
		// Roll out: a new Machine first (its etcd member joins), then the scale down above
		// removes an outdated one, as KCP rolls out with maxSurge 1.
		why := rolloutBlocked(s)
		if why == "" && etcdReachable(s) {
			why = r.etcdAllowsJoining(ctx, s)
		}
		if why != "" {
			s.rolloutBlocked = why
			return ctrl.Result{RequeueAfter: waitRequeue}, nil
		}
		arbiter, msg := replacementIsArbiter(s.machines, s.outdated)
		r.Recorder.Eventf(s.oacp, nil, corev1.EventTypeNormal, "RollingOut", "CreateMachine", "%s", msg)
		if err := r.createMachine(ctx, s, arbiter); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, nil
	}
	return ctrl.Result{}, nil
}

// cacheConfirmation bounds how long a reconcile waits for the cache to show its own change, as
// Cluster API's MachineSet controller waits (stateConfirmationTimeout).
const (
	cacheConfirmationInterval = 100 * time.Millisecond
	cacheConfirmationTimeout  = 10 * time.Second
)

// waitForCache waits until the cache shows m as seen says, so that the next reconcile cannot
// count Machines from a stale cache and create (or delete) a second one: the pattern of Cluster
// API's MachineSet controller (waitForMachinesCreation, waitForMachinesDeletion).
func (r *OpenshiftAssistedControlPlaneReconciler) waitForCache(ctx context.Context, m *clusterv1.Machine, seen func(error, *clusterv1.Machine) bool) error {
	err := wait.PollUntilContextTimeout(ctx, cacheConfirmationInterval, cacheConfirmationTimeout, true, func(ctx context.Context) (bool, error) {
		got := &clusterv1.Machine{}
		err := r.Client.Get(ctx, client.ObjectKeyFromObject(m), got)
		return seen(err, got), nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the cache to show the change of Machine %s: %w", m.Name, err)
	}
	return nil
}

// createMachine creates a control-plane Machine (the arbiter of two-node OpenShift when arbiter
// is true) with its infrastructure (cloned from the template) and its OpenshiftAssistedConfig.
// What it created is removed if a later step fails.
func (r *OpenshiftAssistedControlPlaneReconciler) createMachine(ctx context.Context, s *scope, arbiter bool) (reterr error) {
	oacp, cluster := s.oacp, s.cluster
	tmpl := machineTemplate(oacp, arbiter)
	name := names.SimpleNameGenerator.GenerateName(oacp.Name + "-")
	lbls := machineObjectLabels(s, arbiter)
	owner := metav1.NewControllerRef(oacp, controlplanev1.GroupVersion.WithKind("OpenshiftAssistedControlPlane"))
	var created []client.Object
	defer func() {
		if reterr == nil {
			return
		}
		for _, o := range created {
			if err := r.Client.Delete(ctx, o); err != nil && !apierrors.IsNotFound(err) {
				ctrl.LoggerFrom(ctx).Error(err, "Cannot clean up after a failed Machine creation", "object", o.GetName())
			}
		}
	}()

	template, err := getTemplate(ctx, r.Client, oacp.Namespace, tmpl.Spec.InfrastructureRef)
	if err != nil {
		return err
	}
	infra, err := external.GenerateTemplate(&external.GenerateTemplateInput{
		Template:    template,
		TemplateRef: objectReference(template),
		Namespace:   oacp.Namespace,
		Name:        name,
		ClusterName: cluster.Name,
		OwnerRef:    owner,
		Labels:      lbls,
		Annotations: tmpl.ObjectMeta.Annotations,
	})
	if err != nil {
		return fmt.Errorf("generating the infrastructure of Machine %s: %w", name, err)
	}
	if err := r.Client.Create(ctx, infra); err != nil {
		return fmt.Errorf("cloning the infrastructure template for Machine %s: %w", name, err)
	}
	created = append(created, infra)

	config := &bootstrapv1.OpenshiftAssistedConfig{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: oacp.Namespace, Labels: lbls,
			Annotations: tmpl.ObjectMeta.Annotations, OwnerReferences: []metav1.OwnerReference{*owner},
		},
		Spec: *desiredConfigSpec(oacp),
	}
	if err := r.Client.Create(ctx, config); err != nil {
		return fmt.Errorf("creating the OpenshiftAssistedConfig of Machine %s: %w", name, err)
	}
	created = append(created, config)

	machineAnnotations := map[string]string{controlplanev1.EtcdMemberHookAnnotation: "", templateMetadataAnnotation: recordTemplateMetadata(tmpl)}
	for k, v := range tmpl.ObjectMeta.Annotations {
		machineAnnotations[k] = v
	}
	if v, ok := oacp.Annotations[controlplanev1.RemediationInProgressAnnotation]; ok {
		// The replacement of a remediated Machine: it carries the remediation, to count retries.
		machineAnnotations[controlplanev1.RemediationForAnnotation] = v
	}
	machine := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: oacp.Namespace, Labels: lbls,
			Annotations: machineAnnotations, OwnerReferences: []metav1.OwnerReference{*owner},
		},
		Spec: clusterv1.MachineSpec{
			ClusterName: cluster.Name,
			Version:     s.specKubeVersion,
			Bootstrap: clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: bootstrapv1.GroupVersion.Group, Kind: "OpenshiftAssistedConfig", Name: name,
			}},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: infra.GroupVersionKind().Group, Kind: infra.GetKind(), Name: infra.GetName(),
			},
			FailureDomain:  failureDomainForNewMachine(cluster, s.machines),
			Deletion:       desiredDeletion(tmpl),
			ReadinessGates: tmpl.Spec.ReadinessGates,
			Taints:         tmpl.Spec.Taints,
		},
	}
	if err := r.Client.Create(ctx, machine); err != nil {
		// A create whose response was lost (a timeout, a reset connection) may have succeeded.
		// Deleting the config and infrastructure of a Machine that exists would leave it Pending
		// forever (its bootstrap config "does not exist") while it counts as a replica, so they
		// are cleaned up only when the API server says the Machine is not there. Found in the
		// lab's API-faults spec. (KubeadmControlPlane's cleanupFromGeneration has the same gap.)
		got := &clusterv1.Machine{}
		switch getErr := r.APIReader.Get(ctx, client.ObjectKeyFromObject(machine), got); {
		case getErr == nil && metav1.IsControlledBy(got, oacp):
			ctrl.LoggerFrom(ctx).Info("The create of a Machine failed but the Machine exists; keeping it", "Machine", name, "error", err.Error())
			machine = got
		case apierrors.IsNotFound(getErr):
			return fmt.Errorf("creating control-plane Machine %s: %w", name, err)
		default:
			created = nil // unknown: keep what was created rather than break a Machine that may exist
			return fmt.Errorf("creating control-plane Machine %s: %w", name, err)
		}
	}
	kind := "control-plane Machine"
	if arbiter {
		kind = "arbiter Machine"
	}
	ctrl.LoggerFrom(ctx).Info("Created "+kind, "Machine", name, "failureDomain", machine.Spec.FailureDomain)
	r.Recorder.Eventf(oacp, machine, corev1.EventTypeNormal, "ScalingUp", "CreateMachine", "Created %s %s", kind, name)
	s.machines = append(s.machines, machine)
	delete(oacp.Annotations, controlplanev1.RemediationInProgressAnnotation)
	return r.waitForCache(ctx, machine, func(err error, _ *clusterv1.Machine) bool { return err == nil })
}

// reconcileTemplateOwner makes the Cluster an owner of the infrastructure machine templates
// (the arbiter's too), as KubeadmControlPlane does: a template is then deleted with the Cluster
// and moved with it by clusterctl move. A template that is not there yet is reported by the
// Machines step.
func (r *OpenshiftAssistedControlPlaneReconciler) reconcileTemplateOwner(ctx context.Context, s *scope) error {
	for _, arbiter := range []bool{false, true}[:1+wantArbiters(s.oacp)] {
		if err := r.ownTemplate(ctx, s, machineTemplate(s.oacp, arbiter).Spec.InfrastructureRef); err != nil {
			return err
		}
	}
	return nil
}

func (r *OpenshiftAssistedControlPlaneReconciler) ownTemplate(ctx context.Context, s *scope, ref clusterv1.ContractVersionedObjectReference) error {
	template, err := getTemplate(ctx, metadataReader{r.Client}, s.oacp.Namespace, ref)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	owner := metav1.OwnerReference{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: s.cluster.Name, UID: s.cluster.UID}
	if util.HasExactOwnerRef(template.GetOwnerReferences(), owner) {
		return nil
	}
	helper, err := patch.NewHelper(template, r.Client)
	if err != nil {
		return fmt.Errorf("creating the patch helper of %s %s: %w", template.GetKind(), template.GetName(), err)
	}
	template.SetOwnerReferences(util.EnsureOwnerRef(template.GetOwnerReferences(), owner))
	if err := helper.Patch(ctx, template); err != nil {
		return fmt.Errorf("making Cluster %s an owner of %s %s: %w", s.cluster.Name, template.GetKind(), template.GetName(), err)
	}
	return nil
}

// getTemplate returns an infrastructure template of the control plane.
func getTemplate(ctx context.Context, c client.Reader, namespace string, ref clusterv1.ContractVersionedObjectReference) (*unstructured.Unstructured, error) {
	t, err := external.GetObjectFromContractVersionedRef(ctx, c, ref, namespace)
	if err != nil {
		return nil, fmt.Errorf("getting the infrastructure template %s %s: %w", ref.Kind, ref.Name, err)
	}
	return t, nil
}

func trimTemplate(kind string) string { return strings.TrimSuffix(kind, "Template") }

func objectReference(u *unstructured.Unstructured) *corev1.ObjectReference {
	return &corev1.ObjectReference{APIVersion: u.GetAPIVersion(), Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName(), UID: u.GetUID()}
}

// reconcileMachinesUpToDate sets the UpToDate condition of the control-plane Machines, as the
// owner of Machines does in Cluster API v1beta2. OpenShift updates its nodes in place: a Machine
// is up to date when the cluster runs spec.distributionVersion (or is being installed with it)
// and the Machine still matches the spec (see rollout.go). Once an upgrade completed, each
// Machine's spec.version becomes the Kubernetes version of the release its node now runs, as
// Cluster API's in-place updates leave a Machine (rather than the version it was created with).
func (r *OpenshiftAssistedControlPlaneReconciler) reconcileMachinesUpToDate(ctx context.Context, s *scope) error {
	running, want := s.oacp.Status.DistributionVersion, release.Version(s.oacp.Spec.DistributionVersion)
	cond := metav1.Condition{Type: clusterv1.MachineUpToDateCondition, Status: metav1.ConditionTrue, Reason: clusterv1.MachineUpToDateReason}
	version := "" // the Machines' spec.version, when known
	switch {
	case running == "" || running == want:
		version = s.specKubeVersion
	case s.upgrade.refused != "":
		cond = metav1.Condition{Type: clusterv1.MachineUpToDateCondition, Status: metav1.ConditionFalse, Reason: clusterv1.MachineNotUpToDateReason,
			Message: fmt.Sprintf("* OpenShift %s is requested but cannot be reached: %s", want, s.upgrade.refused)}
	default:
		cond = metav1.Condition{Type: clusterv1.MachineUpToDateCondition, Status: metav1.ConditionFalse, Reason: clusterv1.MachineUpToDateUpdatingReason,
			Message: fmt.Sprintf("* OpenShift is being updated in place from %s to %s", running, want)}
	}
	for _, m := range s.machines {
		if !m.DeletionTimestamp.IsZero() {
			continue
		}
		cond := cond
		if why, ok := s.outdated[m.Name]; ok {
			cond = metav1.Condition{Type: clusterv1.MachineUpToDateCondition, Status: metav1.ConditionFalse, Reason: clusterv1.MachineNotUpToDateReason,
				Message: fmt.Sprintf("* The Machine is replaced because %s", why)}
		}
		newVersion := version != "" && m.Spec.Version != "" && m.Spec.Version != version
		if c := conditions.Get(m, clusterv1.MachineUpToDateCondition); !newVersion && c != nil && c.Status == cond.Status && c.Reason == cond.Reason && c.Message == cond.Message {
			continue
		}
		helper, err := patch.NewHelper(m, r.Client)
		if err != nil {
			return fmt.Errorf("creating the patch helper of Machine %s: %w", m.Name, err)
		}
		conditions.Set(m, cond)
		if newVersion {
			m.Spec.Version = version
		}
		if err := helper.Patch(ctx, m, patch.WithOwnedConditions{Conditions: []string{clusterv1.MachineUpToDateCondition}}); err != nil {
			return fmt.Errorf("setting the UpToDate condition and version of Machine %s: %w", m.Name, err)
		}
	}
	return nil
}

// metadataReader reads an unstructured object (an infrastructure template or machine of any
// provider) as its metadata only, from the manager's metadata cache: the reconciles that look at
// nothing else (the templates' owner, the clones' cloned-from annotations) ran on every reconcile
// and were each an uncached GET of the whole object, two per control-plane Machine and reconcile
// (make bench, the fleet table). The object it fills has apiVersion, kind and metadata only;
// other kinds are read as c reads them.
type metadataReader struct{ client.Reader }

func (m metadataReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return m.Reader.Get(ctx, key, obj, opts...)
	}
	gvk := u.GroupVersionKind()
	meta := &metav1.PartialObjectMetadata{}
	meta.SetGroupVersionKind(gvk)
	if err := m.Reader.Get(ctx, key, meta, opts...); err != nil {
		return err
	}
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(meta)
	if err != nil {
		return fmt.Errorf("reading the metadata of %s %s: %w", gvk.Kind, key.Name, err)
	}
	u.Object = raw
	u.SetGroupVersionKind(gvk)
	return nil
}
