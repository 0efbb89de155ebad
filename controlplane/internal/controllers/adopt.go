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

	hivev1 "github.com/openshift/hive/apis/hive/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/reconciler"
)

// A control plane that openshift-assisted/cluster-api-provider-openshift-assisted created
// carries that provider's finalizer (replaced in Reconcile), and its ClusterDeployment and
// AgentClusterInstall, named after the control plane, are owned by it without a controller
// reference (ensureClusterDeployment and ensureAgentClusterInstall upstream, controllerutil.SetOwnerReference).
// Its Machines carry the same labels and controller reference as this provider's, so they are
// the control plane's Machines as they are.

// takeOver makes the control plane the controller of obj, the ClusterDeployment or
// AgentClusterInstall of the Cluster's name, when openshift-assisted/cluster-api-provider-openshift-assisted
// created it for this control plane (a plain owner reference, no controller): its spec is kept,
// so an installed cluster goes on running. Any other owner's object is refused with a Problem.
func (r *OpenshiftAssistedControlPlaneReconciler) takeOver(ctx context.Context, s *scope, obj client.Object, kind string) error {
	if metav1.IsControlledBy(obj, s.oacp) {
		return nil
	}
	adopted, err := reconciler.AdoptOwned(ctx, r.Client, s.oacp, controlplanev1.GroupVersion.WithKind(controlplanev1.ControlPlaneKind), obj,
		map[string]string{clusterv1.ClusterNameLabel: s.cluster.Name})
	if err != nil {
		return err
	}
	if !adopted {
		return reconciler.NewProblem(controlplanev1.AvailableCondition, controlplanev1.NotOwnedReason,
			fmt.Errorf("%s %s exists and is not owned by this control plane: it is not taken over; delete it, or name the Cluster otherwise", kind, obj.GetName()))
	}
	ctrl.LoggerFrom(ctx).Info("Adopted an object the upstream provider created", "kind", kind, "name", obj.GetName())
	r.Recorder.Eventf(s.oacp, obj, corev1.EventTypeNormal, "Adopted", "Adopt",
		"Adopted %s %s, which cluster-api-provider-openshift-assisted created for this control plane", kind, obj.GetName())
	return nil
}

// refuseUpstreamName returns a Problem when the upstream provider created this control plane's
// ClusterDeployment under the control plane's name, which is not the Cluster's: this provider
// names it after the Cluster, and a ClusterDeployment cannot be renamed, so creating another one
// would install the cluster a second time.
func (r *OpenshiftAssistedControlPlaneReconciler) refuseUpstreamName(ctx context.Context, s *scope) error {
	cd := &hivev1.ClusterDeployment{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: s.oacp.Namespace, Name: s.oacp.Name}, cd)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("getting ClusterDeployment %s: %w", s.oacp.Name, err)
	case !reconciler.OwnedBy(cd, s.oacp):
		return nil
	}
	return reconciler.NewProblem(controlplanev1.AvailableCondition, controlplanev1.NotOwnedReason,
		fmt.Errorf("ClusterDeployment %s was created for this control plane by cluster-api-provider-openshift-assisted, which names it after the control plane; "+
			"this provider names it %s, after the Cluster, and does not create a second one: switch back to the upstream provider for this cluster, "+
			"or see docs/migration.md", cd.Name, s.cluster.Name))
}
