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

	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/reconciler"
)

// ownsInfraEnv tells whether the config's deletion deletes ie: the config is its controller, or
// ie has no controller and the config is among its owners (what
// cluster-api-provider-openshift-assisted created before the switch, with a plain owner
// reference that only a garbage collector would follow).
func ownsInfraEnv(c *bootstrapv1.OpenshiftAssistedConfig, ie *aiv1beta1.InfraEnv) bool {
	return metav1.IsControlledBy(ie, c) || reconciler.CreatedFor(ie, c)
}

// reconcileDelete releases the config's Agent and deletes its InfraEnv, then removes the
// finalizer. It never waits for assisted-service: an InfraEnv that assisted-service does not
// finish deleting is left to it (and to garbage collection, the config owns it).
func (r *OpenshiftAssistedConfigReconciler) reconcileDelete(ctx context.Context, s *scope) error {
	c := s.config
	if !controllerutil.ContainsFinalizer(c, bootstrapv1.ConfigFinalizer) && !controllerutil.ContainsFinalizer(c, bootstrapv1.UpstreamConfigFinalizer) {
		return nil
	}
	log := ctrl.LoggerFrom(ctx)
	agents, err := r.configAgents(ctx, c)
	if err != nil {
		return err
	}
	for _, a := range agents {
		before := a.DeepCopy()
		releaseAgent(a)
		if err := r.Client.Patch(ctx, a, client.MergeFrom(before)); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("releasing Agent %s: %w", a.Name, err)
		}
		r.Recorder.Eventf(c, a, corev1.EventTypeNormal, "AgentReleased", "ReleaseAgent", "Unapproved and unlabelled Agent %s", a.Name)
		log.Info("Released Agent", "Agent", a.Name)
	}
	ie := &aiv1beta1.InfraEnv{}
	err = r.Client.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: infraEnvName(c)}, ie)
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return fmt.Errorf("getting InfraEnv %s: %w", infraEnvName(c), err)
	case ownsInfraEnv(c, ie) && ie.DeletionTimestamp.IsZero():
		if err := r.Client.Delete(ctx, ie); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting InfraEnv %s: %w", ie.Name, err)
		}
		r.Recorder.Eventf(c, ie, corev1.EventTypeNormal, "InfraEnvDeleted", "DeleteInfraEnv", "Deleted InfraEnv %s", ie.Name)
	}
	// The deferred patch of Reconcile writes the removal.
	controllerutil.RemoveFinalizer(c, bootstrapv1.ConfigFinalizer)
	controllerutil.RemoveFinalizer(c, bootstrapv1.UpstreamConfigFinalizer)
	return nil
}
