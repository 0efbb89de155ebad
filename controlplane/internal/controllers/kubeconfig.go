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
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cluster-api/util/kubeconfig"
	"sigs.k8s.io/cluster-api/util/secret"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha3"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/metrics"
)

// adminKubeconfigKey is the key of the admin kubeconfig in the Secret assisted-service writes.
const adminKubeconfigKey = "kubeconfig"

// reconcileKubeconfig copies the admin kubeconfig assisted-service wrote (the Secret named by the
// AgentClusterInstall's spec.clusterMetadata.adminKubeconfigSecretRef) into the Cluster API
// <cluster>-kubeconfig Secret, once the AgentClusterInstall reports the cluster installed.
func (r *Reconciler) reconcileKubeconfig(ctx context.Context, s *scope) error {
	if !s.installed() || s.aci.Spec.ClusterMetadata == nil || s.aci.Spec.ClusterMetadata.AdminKubeconfigSecretRef.Name == "" {
		return nil
	}
	source := &corev1.Secret{}
	key := client.ObjectKey{Namespace: s.aci.Namespace, Name: s.aci.Spec.ClusterMetadata.AdminKubeconfigSecretRef.Name}
	if err := r.APIReader.Get(ctx, key, source); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("getting the admin kubeconfig Secret %s: %w", key.Name, err)
	}
	data := source.Data[adminKubeconfigKey]
	if len(data) == 0 {
		return nil
	}
	clusterKey := client.ObjectKeyFromObject(s.cluster)
	existing := &corev1.Secret{}
	err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: s.cluster.Namespace, Name: secret.Name(s.cluster.Name, secret.Kubeconfig)}, existing)
	switch {
	case apierrors.IsNotFound(err):
		owner := *metav1.NewControllerRef(s.oacp, controlplanev1.GroupVersion.WithKind("OpenshiftAssistedControlPlane"))
		if err := r.Client.Create(ctx, kubeconfig.GenerateSecretWithOwner(clusterKey, data, owner)); err != nil {
			return fmt.Errorf("creating the kubeconfig Secret: %w", err)
		}
		ctrl.LoggerFrom(ctx).Info("Wrote the kubeconfig Secret", "Secret", secret.Name(s.cluster.Name, secret.Kubeconfig))
		metrics.InstallSeconds.Observe(time.Since(s.oacp.CreationTimestamp.Time).Seconds())
		r.Recorder.Eventf(s.oacp, nil, corev1.EventTypeNormal, "KubeconfigAvailable", "WriteKubeconfig",
			"The cluster is installed; wrote Secret %s", secret.Name(s.cluster.Name, secret.Kubeconfig))
	case err != nil:
		return fmt.Errorf("getting the kubeconfig Secret: %w", err)
	default:
		if owner := metav1.GetControllerOf(existing); owner != nil && owner.UID != s.oacp.UID {
			return fmt.Errorf("the kubeconfig Secret %s is controlled by %s %s, not by this control plane: delete it, and it is written again",
				existing.Name, owner.Kind, owner.Name)
		}
		if metav1.IsControlledBy(existing, s.oacp) && bytes.Equal(existing.Data[secret.KubeconfigDataName], data) {
			break
		}
		// A Secret someone created ahead of the install (possibly empty) is adopted and filled.
		before := existing.DeepCopy()
		if existing.Data == nil {
			existing.Data = map[string][]byte{}
		}
		existing.Data[secret.KubeconfigDataName] = data
		if err := controllerutil.SetControllerReference(s.oacp, existing, r.Client.Scheme()); err != nil {
			return fmt.Errorf("adopting the kubeconfig Secret: %w", err)
		}
		if err := r.Client.Patch(ctx, existing, client.MergeFrom(before)); err != nil {
			return fmt.Errorf("updating the kubeconfig Secret: %w", err)
		}
	}
	s.kubeconfigWritten = true
	s.oacp.Status.Initialization.ControlPlaneInitialized = ptr.To(true)
	return nil
}
