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
	"crypto/sha256"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/kubeconfig"
	"sigs.k8s.io/cluster-api/util/secret"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/metrics"
)

// adminKubeconfigKey is the key of the admin kubeconfig in the Secret assisted-service writes.
const adminKubeconfigKey = "kubeconfig"

// adminKubeconfigRecheck is how long a copy of the admin kubeconfig is trusted without reading the
// admin Secret again, while the AgentClusterInstall's generation and the <cluster>-kubeconfig's
// data stay what they were at the copy (see kubeconfigCopies).
const adminKubeconfigRecheck = 10 * time.Minute

// reconcileKubeconfig copies the admin kubeconfig assisted-service wrote (the Secret named by the
// AgentClusterInstall's spec.clusterMetadata.adminKubeconfigSecretRef) into the Cluster API
// <cluster>-kubeconfig Secret, once the AgentClusterInstall reports the cluster installed.
//
// assisted-service writes the admin kubeconfig twice: without the ingress CA when the install
// starts, and the final one when it completes, in the same reconcile as it updates the
// AgentClusterInstall's spec.clusterMetadata (assisted-service
// internal/controller/controllers/clusterdeployments_controller.go, createNoIngressKubeConfig and
// updateClusterMetadata). So a copy stays good while the AgentClusterInstall's generation does;
// the control plane is reconciled tens of times after the install (assisted-service's status
// updates, the Machines, the ClusterCache), and a fleet would otherwise read both Secrets from the
// API server each time (issue 19). The <cluster>-kubeconfig is read from the cache of
// cluster-labelled Secrets (SecretReader) and the admin Secret only when the copy is not known
// good: at the first reconcile of this process, when the AgentClusterInstall or the
// <cluster>-kubeconfig changed, and every adminKubeconfigRecheck.
func (r *OpenshiftAssistedControlPlaneReconciler) reconcileKubeconfig(ctx context.Context, s *scope) (err error) {
	defer func() { s.kubeconfigChecked = err == nil }()
	if !s.installed() || s.aci.Spec.ClusterMetadata == nil || s.aci.Spec.ClusterMetadata.AdminKubeconfigSecretRef.Name == "" {
		return nil
	}
	existing, err := r.getKubeconfigSecret(ctx, s)
	if err != nil {
		return err
	}
	from := kubeconfigSource{
		secret:        s.aci.Spec.ClusterMetadata.AdminKubeconfigSecretRef.Name,
		aciGeneration: s.aci.Generation,
	}
	if existing != nil && metav1.IsControlledBy(existing, s.oacp) &&
		r.kubeconfigs.current(s.oacp.UID, from, existing.Data[secret.KubeconfigDataName], r.now()) {
		s.kubeconfigWritten = true
		s.oacp.Status.Initialization.ControlPlaneInitialized = ptr.To(true)
		return nil
	}
	source := &corev1.Secret{}
	key := client.ObjectKey{Namespace: s.aci.Namespace, Name: from.secret}
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
	if existing == nil {
		owner := *metav1.NewControllerRef(s.oacp, controlplanev1.GroupVersion.WithKind("OpenshiftAssistedControlPlane"))
		if err := r.Client.Create(ctx, kubeconfig.GenerateSecretWithOwner(clusterKey, data, owner)); err != nil {
			return fmt.Errorf("creating the kubeconfig Secret: %w", err)
		}
		ctrl.LoggerFrom(ctx).Info("Wrote the kubeconfig Secret", "Secret", secret.Name(s.cluster.Name, secret.Kubeconfig))
		metrics.InstallSeconds.Observe(time.Since(s.oacp.CreationTimestamp.Time).Seconds())
		r.Recorder.Eventf(s.oacp, nil, corev1.EventTypeNormal, "KubeconfigAvailable", "WriteKubeconfig",
			"The cluster is installed; wrote Secret %s", secret.Name(s.cluster.Name, secret.Kubeconfig))
	} else {
		if owner := metav1.GetControllerOf(existing); owner != nil && owner.UID != s.oacp.UID {
			return fmt.Errorf("the kubeconfig Secret %s is controlled by %s %s, not by this control plane: delete it, and it is written again",
				existing.Name, owner.Kind, owner.Name)
		}
		if err := r.adoptKubeconfigSecret(ctx, s, existing, data); err != nil {
			return err
		}
	}
	r.kubeconfigs.copied(s.oacp.UID, from, data, r.now())
	s.kubeconfigWritten = true
	s.oacp.Status.Initialization.ControlPlaneInitialized = ptr.To(true)
	return nil
}

// adoptKubeconfigSecret makes an existing <cluster>-kubeconfig hold data, controlled by the
// control plane; it writes nothing when it does.
func (r *OpenshiftAssistedControlPlaneReconciler) adoptKubeconfigSecret(ctx context.Context, s *scope, existing *corev1.Secret, data []byte) error {
	if metav1.IsControlledBy(existing, s.oacp) && existing.Labels[clusterv1.ClusterNameLabel] == s.cluster.Name &&
		bytes.Equal(existing.Data[secret.KubeconfigDataName], data) {
		return nil
	}
	// A Secret someone created ahead of the install (possibly empty) is adopted and filled,
	// and labelled with the Cluster's name as Cluster API's own kubeconfig Secrets are (the
	// caches of the providers and of Cluster API's ClusterCache select them by it).
	before := existing.DeepCopy()
	if existing.Data == nil {
		existing.Data = map[string][]byte{}
	}
	existing.Data[secret.KubeconfigDataName] = data
	if existing.Labels == nil {
		existing.Labels = map[string]string{}
	}
	existing.Labels[clusterv1.ClusterNameLabel] = s.cluster.Name
	if err := controllerutil.SetControllerReference(s.oacp, existing, r.Client.Scheme()); err != nil {
		return fmt.Errorf("adopting the kubeconfig Secret: %w", err)
	}
	if err := r.Client.Patch(ctx, existing, client.MergeFrom(before)); err != nil {
		return fmt.Errorf("updating the kubeconfig Secret: %w", err)
	}
	return nil
}

// getKubeconfigSecret returns the control plane's <cluster>-kubeconfig Secret, nil when there is
// none: from SecretReader (the cache of cluster-labelled Secrets) when the reconciler has one, and
// from the API server when that does not hold it (not labelled yet, or just written).
func (r *OpenshiftAssistedControlPlaneReconciler) getKubeconfigSecret(ctx context.Context, s *scope) (*corev1.Secret, error) {
	key := client.ObjectKey{Namespace: s.cluster.Namespace, Name: secret.Name(s.cluster.Name, secret.Kubeconfig)}
	existing := &corev1.Secret{}
	if r.SecretReader != nil {
		err := r.SecretReader.Get(ctx, key, existing)
		if err == nil {
			return existing, nil
		}
		if !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("getting the kubeconfig Secret from the cache: %w", err)
		}
	}
	switch err := r.APIReader.Get(ctx, key, existing); {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("getting the kubeconfig Secret: %w", err)
	}
	return existing, nil
}

// kubeconfigSource is what a copy of the admin kubeconfig was made from.
type kubeconfigSource struct {
	secret        string
	aciGeneration int64
}

// kubeconfigCopy is the last copy of the admin kubeconfig into a control plane's
// <cluster>-kubeconfig: what it was made from, a digest of the data and when it was checked.
type kubeconfigCopy struct {
	from kubeconfigSource
	sum  [sha256.Size]byte
	at   time.Time
}

// kubeconfigCopies remembers, by control-plane UID, the last copy of each control plane's admin
// kubeconfig this process made or found up to date. It is lost with the process: a new leader reads
// each admin kubeconfig once again. The zero value is ready.
type kubeconfigCopies struct {
	mu     sync.Mutex
	copies map[types.UID]kubeconfigCopy
}

// copied records that the <cluster>-kubeconfig of the control plane uid holds data, copied from.
func (k *kubeconfigCopies) copied(uid types.UID, from kubeconfigSource, data []byte, now time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.copies == nil {
		k.copies = map[types.UID]kubeconfigCopy{}
	}
	k.copies[uid] = kubeconfigCopy{from: from, sum: sha256.Sum256(data), at: now}
}

// current tells whether the <cluster>-kubeconfig of the control plane uid, holding data, is a copy
// of the admin kubeconfig of from, checked less than adminKubeconfigRecheck ago.
func (k *kubeconfigCopies) current(uid types.UID, from kubeconfigSource, data []byte, now time.Time) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	c, ok := k.copies[uid]
	return ok && c.from == from && c.sum == sha256.Sum256(data) && now.Sub(c.at) < adminKubeconfigRecheck
}

// forget drops what is known of the control plane uid's copy (its deletion).
func (k *kubeconfigCopies) forget(uid types.UID) {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.copies, uid)
}
