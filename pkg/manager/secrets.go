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

package manager

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ClusterSecretsCache is the cache of Secrets that a provider reading Machines' bootstrap data
// keeps (Options.CacheByObject, for &corev1.Secret{}): only the Secrets that carry a Cluster API
// cluster name label, as Cluster API's managers cache them, trimmed by TrimClusterSecret. Reads
// of those go through the manager's cache (mgr.GetCache()); the manager's client still reads
// every Secret from the API server (Secrets are not cached by the client, see ManagerOptions).
func ClusterSecretsCache() cache.ByObject {
	clusterSecrets, err := labels.Parse(clusterv1.ClusterNameLabel)
	if err != nil {
		panic(err) // a constant
	}
	return cache.ByObject{Label: clusterSecrets, Transform: TrimClusterSecret}
}

// TrimClusterSecret keeps of a cached Secret its metadata, without managed fields, and its data
// only when it holds a "value": a Machine's bootstrap data, or a <cluster>-kubeconfig (which the
// ClusterCache and the control-plane manager read). The same label selects every other Secret of
// a cluster (certificates, the users' own), whose data the providers never read from the cache.
// As Cluster API's core manager drops the data of the cluster Secrets it does not use
// (sigs.k8s.io/cluster-api core/setup/setup.go).
func TrimClusterSecret(obj any) (any, error) {
	if s, ok := obj.(*corev1.Secret); ok {
		s.ManagedFields = nil
		if _, bootstrapData := s.Data["value"]; !bootstrapData {
			s.Data = nil
		}
		delete(s.Annotations, corev1.LastAppliedConfigAnnotation)
	}
	return obj, nil
}

// CachesClusterSecrets tells whether o's cache keeps the cluster-labelled Secrets
// (ClusterSecretsCache, set by the provider's NewManagerOptions). Reading a Secret through a
// cache that is not told so would start an informer of every Secret of the hub.
func (o *Options) CachesClusterSecrets() bool {
	for obj := range o.CacheByObject {
		if _, ok := obj.(*corev1.Secret); ok {
			return true
		}
	}
	return false
}

// ClusterSecretReader is what a controller reads the cluster-labelled Secrets through: the
// manager's cache when o keeps them (CachesClusterSecrets), nil otherwise (read them from the API
// server).
func (o *Options) ClusterSecretReader(mgr ctrl.Manager) client.Reader {
	if !o.CachesClusterSecrets() {
		return nil
	}
	return mgr.GetCache()
}
