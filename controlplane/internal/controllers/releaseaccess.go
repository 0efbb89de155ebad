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

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/controlplane/internal/release"
)

// releaseAccess is what the control plane's release reads use: the credentials of its pull secret
// (spec.config.pullSecretRef), which a mirror needs as much as the install does, and the CA and
// mirrors of its image registry ConfigMap (spec.config.imageRegistryRef: ca-bundle.crt and
// registries.conf), so that a disconnected cluster's release is read where the cluster pulls it.
// They are read from the API server (the manager caches neither) only when the reader asks a
// registry: a release it knows costs no read.
func (r *OpenshiftAssistedControlPlaneReconciler) releaseAccess(oacp *controlplanev1.OpenshiftAssistedControlPlane) release.Access {
	cfg := oacp.Spec.Config
	scope := oacp.Namespace + "/"
	if cfg.PullSecretRef != nil {
		scope += cfg.PullSecretRef.Name
	}
	scope += "/"
	if cfg.ImageRegistryRef != nil {
		scope += cfg.ImageRegistryRef.Name
	}
	return release.Access{Scope: scope, Load: func(ctx context.Context) (release.Config, error) {
		var out release.Config
		if ref := cfg.PullSecretRef; ref != nil {
			secret := &corev1.Secret{}
			if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: oacp.Namespace, Name: ref.Name}, secret); err != nil {
				if apierrors.IsNotFound(err) {
					return out, fmt.Errorf("the pull secret %s (spec.config.pullSecretRef) does not exist", ref.Name)
				}
				return out, fmt.Errorf("getting the pull secret %s: %w", ref.Name, err)
			}
			var ok bool
			if out.PullSecret, ok = secret.Data[corev1.DockerConfigJsonKey]; !ok {
				return out, fmt.Errorf("the pull secret %s (spec.config.pullSecretRef) has no %s key", ref.Name, corev1.DockerConfigJsonKey)
			}
		}
		if ref := cfg.ImageRegistryRef; ref != nil {
			// A missing or unusable ConfigMap is reported on Available (reconcileRegistryManifests);
			// without it the release is read from its own registry meanwhile.
			cm := &corev1.ConfigMap{}
			switch err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: oacp.Namespace, Name: ref.Name}, cm); {
			case err == nil:
				out.CABundle = []byte(cm.Data[registryCAKey])
				conf, err := parseRegistriesConf(cm.Data[registriesConfKey])
				if err != nil {
					return out, fmt.Errorf("the image registry ConfigMap %s cannot be used (see the Available condition)", ref.Name)
				}
				out.Mirrors = conf.releaseMirrors()
			case !apierrors.IsNotFound(err):
				return out, fmt.Errorf("getting the image registry ConfigMap %s: %w", ref.Name, err)
			}
		}
		return out, nil
	}}
}
