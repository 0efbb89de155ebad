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
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	infrav1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/infrastructure/v1beta1"
)

// reconcileDelete deletes the ClusterDeployment and AgentClusterInstall this AgentCluster created
// and waits until they are gone, so that none is orphaned; one it did not create is left alone.
// The wait is bounded: the finalizers Hive and assisted-service keep on them are removed when
// those services are shown to be gone (foreign.Policy), with a Warning event, and the condition
// says what the deletion waits for meanwhile.
func (r *AgentClusterReconciler) reconcileDelete(ctx context.Context, ac *infrav1.AgentCluster) (ctrl.Result, error) {
	var waiting []string
	var requeue time.Duration
	for _, o := range []struct {
		obj           client.Object
		kind, service string
	}{
		{&hivev1.ClusterDeployment{}, "ClusterDeployment", "Hive"},
		{&hiveextv1beta1.AgentClusterInstall{}, agentClusterInstallKind, "assisted-service"},
	} {
		obj := o.obj
		err := r.Client.Get(ctx, client.ObjectKey{Namespace: ac.Namespace, Name: ac.Name}, obj)
		if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
			continue
		}
		if err != nil {
			return ctrl.Result{}, fmt.Errorf("getting %s %s: %w", o.kind, ac.Name, err)
		}
		if !metav1.IsControlledBy(obj, ac) {
			continue
		}
		if obj.GetDeletionTimestamp().IsZero() {
			if err := r.Client.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
				return ctrl.Result{}, fmt.Errorf("deleting %s %s: %w", o.kind, ac.Name, err)
			}
			waiting = append(waiting, fmt.Sprintf("Waiting for %s %s to be deleted", o.kind, ac.Name))
			continue
		}
		if len(obj.GetFinalizers()) == 0 {
			waiting = append(waiting, fmt.Sprintf("Waiting for %s %s to be deleted", o.kind, ac.Name))
			continue
		}
		v, err := r.Foreign.Wait(ctx, r.Client, obj, o.service)
		if err != nil {
			return ctrl.Result{}, err
		}
		if v.Removed {
			ctrl.LoggerFrom(ctx).Info("Removed the finalizers of an object whose controller is gone",
				"kind", o.kind, "name", ac.Name, "finalizers", v.Finalizers, "reason", v.Reason)
			r.Recorder.Eventf(ac, obj, corev1.EventTypeWarning, "ForeignFinalizersRemoved", "Delete", "%s", v.Message)
			// The object goes now; its deletion event brings the AgentCluster back.
			waiting = append(waiting, fmt.Sprintf("Waiting for %s %s to be deleted", o.kind, ac.Name))
			continue
		}
		waiting = append(waiting, v.Message)
		if v.RequeueAfter > 0 && (requeue == 0 || v.RequeueAfter < requeue) {
			requeue = v.RequeueAfter
		}
	}
	if len(waiting) > 0 {
		setCDCondition(ac, metav1.ConditionFalse, infrav1.DeletingClusterDeploymentReason, strings.Join(waiting, "; "))
		return ctrl.Result{RequeueAfter: requeue}, nil
	}
	controllerutil.RemoveFinalizer(ac, infrav1.AgentClusterFinalizer)
	controllerutil.RemoveFinalizer(ac, infrav1.UpstreamAgentClusterFinalizer)
	return ctrl.Result{}, nil
}
