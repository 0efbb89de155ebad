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
	"time"

	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cluster-api/util/secret"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha3"
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
func (r *Reconciler) reconcileDelete(ctx context.Context, s *scope) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	s.deleting = &deletionState{}
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
	for _, obj := range []client.Object{&hivev1.ClusterDeployment{}, &hiveextv1beta1.AgentClusterInstall{}} {
		gone, err := r.deleteOwned(ctx, s, obj, key)
		if err != nil {
			return ctrl.Result{}, err
		}
		if !gone {
			waiting = append(waiting, fmt.Sprintf("%T %s", obj, key.Name))
		}
	}
	if len(waiting) > 0 {
		s.deleting.message = fmt.Sprintf("Waiting for Hive and assisted-service to release %v (finalizers are removed after %s)", waiting, r.ForceCleanupAfter)
		return ctrl.Result{RequeueAfter: 5 * time.Second}, nil
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
	log.Info("Deleted the control plane")
	r.Recorder.Eventf(s.oacp, nil, corev1.EventTypeNormal, "Deleted", "Delete", "Deleted the control-plane Machines, ClusterDeployment, AgentClusterInstall and ClusterImageSet")
	return ctrl.Result{}, nil
}

// deleteOwned deletes obj (named key) when this control plane owns it, and tells whether it is
// gone. Objects stuck in deletion longer than ForceCleanupAfter (their controller is gone) lose
// their finalizers.
func (r *Reconciler) deleteOwned(ctx context.Context, s *scope, obj client.Object, key client.ObjectKey) (bool, error) {
	if err := r.Client.Get(ctx, key, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, fmt.Errorf("getting %T %s: %w", obj, key.Name, err)
	}
	if !metav1.IsControlledBy(obj, s.oacp) {
		return true, nil
	}
	if obj.GetDeletionTimestamp().IsZero() {
		if err := r.Client.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
			return false, fmt.Errorf("deleting %T %s: %w", obj, key.Name, err)
		}
		return false, nil
	}
	if len(obj.GetFinalizers()) > 0 && time.Since(obj.GetDeletionTimestamp().Time) > r.ForceCleanupAfter {
		ctrl.LoggerFrom(ctx).Info("Removing finalizers of an object whose controller did not release it",
			"kind", fmt.Sprintf("%T", obj), "name", key.Name, "finalizers", obj.GetFinalizers())
		r.Recorder.Eventf(s.oacp, obj, corev1.EventTypeWarning, "ForcedCleanup", "Delete",
			"%T %s was not released within %s (is assisted-service or Hive running?): removed its finalizers %v",
			obj, key.Name, r.ForceCleanupAfter, obj.GetFinalizers())
		before := obj.DeepCopyObject().(client.Object)
		obj.SetFinalizers(nil)
		if err := r.Client.Patch(ctx, obj, client.MergeFrom(before)); err != nil && !apierrors.IsNotFound(err) {
			return false, fmt.Errorf("removing the finalizers of %T %s: %w", obj, key.Name, err)
		}
	}
	return false, nil
}

func (r *Reconciler) deleteIfOwned(ctx context.Context, s *scope, obj client.Object) error {
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
func (r *Reconciler) deleteLeftovers(ctx context.Context, s *scope) error {
	sel := client.MatchingLabels(machineLabels(s.oacp, s.cluster))
	configs := &bootstrapv1.OpenshiftAssistedConfigList{}
	if err := r.Client.List(ctx, configs, client.InNamespace(s.oacp.Namespace), sel); err != nil {
		return fmt.Errorf("listing OpenshiftAssistedConfigs: %w", err)
	}
	objs := []client.Object{}
	for i := range configs.Items {
		objs = append(objs, &configs.Items[i])
	}
	// The infrastructure kind is the template's kind without the "Template" suffix.
	ref := s.oacp.Spec.MachineTemplate.InfrastructureRef
	if template, err := getTemplate(ctx, r.Client, s.oacp); err == nil {
		list := &unstructured.UnstructuredList{}
		gvk := template.GroupVersionKind()
		gvk.Kind = trimTemplate(ref.Kind) + "List"
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
