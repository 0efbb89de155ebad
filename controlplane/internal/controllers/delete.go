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

	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/cluster-api/util/secret"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/foreign"
)

// deletionState is what the deletion waits for, for the Deleting condition.
type deletionState struct {
	reason, message string
}

// reconcileDelete removes the control plane's Machines first, then its ClusterDeployment and
// AgentClusterInstall, the ClusterImageSet, the kubeconfig Secret and anything left of the
// Machines (their OpenshiftAssistedConfigs and infrastructure clones), and only then releases the
// control plane. Owner references would let Kubernetes' garbage collector do part of this, but
// deleting explicitly works without it and in a known order.
func (r *OpenshiftAssistedControlPlaneReconciler) reconcileDelete(ctx context.Context, s *scope) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	s.deleting = &deletionState{}
	r.kubeconfigs.forget(s.oacp.UID)
	if len(s.machines) > 0 {
		// The whole cluster goes: no etcd member is removed, the Machines must not wait for it.
		if err := r.removeEtcdHooks(ctx, s); err != nil {
			return ctrl.Result{}, err
		}
		for _, m := range s.machines {
			if m.DeletionTimestamp.IsZero() {
				if err := r.Client.Delete(ctx, m); err != nil && !apierrors.IsNotFound(err) {
					return ctrl.Result{}, fmt.Errorf("deleting Machine %s: %w", m.Name, err)
				}
			}
		}
		s.deleting.reason = controlplanev1.DeletingMachinesReason
		s.deleting.message = fmt.Sprintf("Waiting for %d control-plane Machines to be deleted", len(s.machines))
		return ctrl.Result{RequeueAfter: 5 * time.Second}, nil
	}

	s.deleting.reason = controlplanev1.DeletingInstallResourcesReason
	key := controlplanev1.ClusterDeploymentKey(s.cluster)
	var waiting []string
	requeue := 5 * time.Second
	for _, o := range []struct {
		obj     client.Object
		service string
	}{{&hivev1.ClusterDeployment{}, "Hive"}, {&hiveextv1beta1.AgentClusterInstall{}, "assisted-service"}} {
		gone, wait, err := r.deleteOwned(ctx, s, o.obj, key, o.service)
		if err != nil {
			return ctrl.Result{}, err
		}
		if !gone {
			waiting = append(waiting, wait.Message)
			if wait.RequeueAfter > 0 {
				requeue = min(requeue, wait.RequeueAfter)
			}
		}
	}
	if len(waiting) > 0 {
		s.deleting.message = strings.Join(waiting, "; ")
		return ctrl.Result{RequeueAfter: requeue}, nil
	}

	cis := &hivev1.ClusterImageSet{ObjectMeta: metav1.ObjectMeta{Name: ImageSetName(s.oacp)}}
	if err := r.Client.Delete(ctx, cis); err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, fmt.Errorf("deleting ClusterImageSet %s: %w", cis.Name, err)
	}
	kubeconfigSecret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: s.cluster.Namespace, Name: secret.Name(s.cluster.Name, secret.Kubeconfig)}}
	if err := r.deleteIfOwned(ctx, s, kubeconfigSecret); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.deleteLeftovers(ctx, s); err != nil {
		return ctrl.Result{}, err
	}
	controllerutil.RemoveFinalizer(s.oacp, controlplanev1.OpenshiftAssistedControlPlaneFinalizer)
	controllerutil.RemoveFinalizer(s.oacp, controlplanev1.UpstreamOpenshiftAssistedControlPlaneFinalizer)
	log.Info("Deleted the control plane")
	r.Recorder.Eventf(s.oacp, nil, corev1.EventTypeNormal, "Deleted", "Delete", "Deleted the control-plane Machines, ClusterDeployment, AgentClusterInstall and ClusterImageSet")
	return ctrl.Result{}, nil
}

// deleteOwned deletes obj (named key) when this control plane owns it, and tells whether it is
// gone and, when not, what its deletion waits for. The finalizers service (Hive,
// assisted-service) keeps on it are removed only when that service is shown to be gone
// (foreign.Policy), with a Warning event.
func (r *OpenshiftAssistedControlPlaneReconciler) deleteOwned(ctx context.Context, s *scope, obj client.Object, key client.ObjectKey, service string) (bool, foreign.Verdict, error) {
	kind := fmt.Sprintf("%T", obj)
	if err := r.Client.Get(ctx, key, obj); err != nil {
		if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
			return true, foreign.Verdict{}, nil
		}
		return false, foreign.Verdict{}, fmt.Errorf("getting %s %s: %w", kind, key.Name, err)
	}
	if !metav1.IsControlledBy(obj, s.oacp) {
		return true, foreign.Verdict{}, nil
	}
	if obj.GetDeletionTimestamp().IsZero() {
		if err := r.Client.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
			return false, foreign.Verdict{}, fmt.Errorf("deleting %s %s: %w", kind, key.Name, err)
		}
		return false, foreign.Verdict{Message: fmt.Sprintf("Waiting for %s to delete %s", service, key.Name)}, nil
	}
	if len(obj.GetFinalizers()) == 0 {
		return false, foreign.Verdict{Message: fmt.Sprintf("Waiting for %s to be deleted", key.Name)}, nil
	}
	v, err := r.Foreign.Wait(ctx, r.Client, obj, service)
	if err != nil {
		return false, v, err
	}
	if v.Removed {
		ctrl.LoggerFrom(ctx).Info("Removed the finalizers of an object whose controller is gone",
			"kind", kind, "name", key.Name, "finalizers", v.Finalizers, "reason", v.Reason)
		r.Recorder.Eventf(s.oacp, obj, corev1.EventTypeWarning, "ForeignFinalizersRemoved", "Delete", "%s", v.Message)
	}
	return false, v, nil
}

func (r *OpenshiftAssistedControlPlaneReconciler) deleteIfOwned(ctx context.Context, s *scope, obj client.Object) error {
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		return client.IgnoreNotFound(err)
	}
	if !metav1.IsControlledBy(obj, s.oacp) {
		return nil
	}
	if err := r.Client.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting %s: %w", obj.GetName(), err)
	}
	return nil
}

// deleteLeftovers deletes the OpenshiftAssistedConfigs and infrastructure clones this control
// plane created that outlived their Machines (for example when a Machine's creation failed).
func (r *OpenshiftAssistedControlPlaneReconciler) deleteLeftovers(ctx context.Context, s *scope) error {
	sel := client.MatchingLabels(machineLabels(s.oacp, s.cluster))
	configs := &bootstrapv1.OpenshiftAssistedConfigList{}
	if err := r.Client.List(ctx, configs, client.InNamespace(s.oacp.Namespace), sel); err != nil {
		return fmt.Errorf("listing OpenshiftAssistedConfigs: %w", err)
	}
	objs := []client.Object{}
	for i := range configs.Items {
		objs = append(objs, &configs.Items[i])
	}
	// The infrastructure kind is a template's kind without the "Template" suffix (the arbiter's
	// template may be of another kind).
	listed := map[schema.GroupVersionKind]bool{}
	for _, arbiter := range []bool{false, true}[:1+wantArbiters(s.oacp)] {
		ref := machineTemplate(s.oacp, arbiter).Spec.InfrastructureRef
		template, err := getTemplate(ctx, r.Client, s.oacp.Namespace, ref)
		if err != nil {
			continue
		}
		list := &unstructured.UnstructuredList{}
		gvk := template.GroupVersionKind()
		gvk.Kind = trimTemplate(ref.Kind) + "List"
		if listed[gvk] {
			continue
		}
		listed[gvk] = true
		list.SetGroupVersionKind(gvk)
		if err := r.Client.List(ctx, list, client.InNamespace(s.oacp.Namespace), sel); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("listing %s: %w", gvk.Kind, err)
		}
		for i := range list.Items {
			objs = append(objs, &list.Items[i])
		}
	}
	for _, o := range objs {
		if !metav1.IsControlledBy(o, s.oacp) {
			continue
		}
		if err := r.Client.Delete(ctx, o); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting %s %s: %w", o.GetObjectKind().GroupVersionKind().Kind, o.GetName(), err)
		}
	}
	return nil
}
