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
	"context"
	"fmt"
	"time"

	"sigs.k8s.io/cluster-api/controllers/clustercache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	crmanager "sigs.k8s.io/controller-runtime/pkg/manager"
)

// SetupClusterCache sets up the Cluster API ClusterCache through which a provider reaches its
// workload clusters, with the options' watch filter and concurrency. In a manager that runs
// in-process (InProcess), the ClusterCache is shut down when the manager stops. When the cache
// keeps the cluster-labelled Secrets (CachesClusterSecrets), the ClusterCache reads the
// kubeconfigs from it, as Cluster API's core manager does: it looks for a Cluster's kubeconfig on
// every connection attempt, every 30 s until the Secret exists, which uncached would cost a fleet
// of installing clusters a GET per cluster and attempt.
func (o *Options) SetupClusterCache(ctx context.Context, mgr ctrl.Manager, userAgent string) (clustercache.ClusterCache, error) {
	secretClient := mgr.GetClient()
	if o.CachesClusterSecrets() {
		var err error
		secretClient, err = client.New(mgr.GetConfig(), client.Options{
			HTTPClient: mgr.GetHTTPClient(),
			Scheme:     mgr.GetScheme(),
			Mapper:     mgr.GetRESTMapper(),
			Cache:      &client.CacheOptions{Reader: mgr.GetCache()},
		})
		if err != nil {
			return nil, fmt.Errorf("creating the ClusterCache's Secret client: %w", err)
		}
	}
	cc, err := clustercache.SetupWithManager(ctx, mgr, clustercache.Options{
		SecretClient:     secretClient,
		WatchFilterValue: o.WatchFilterValue,
		Client:           clustercache.ClientOptions{UserAgent: userAgent},
	}, controller.Options{MaxConcurrentReconciles: max(o.Concurrency, 1)})
	if err != nil {
		return nil, fmt.Errorf("setting up the ClusterCache: %w", err)
	}
	if o.ClusterCacheRetryInterval > 0 {
		SetConnectionRetryInterval(cc, o.ClusterCacheRetryInterval)
	}
	if o.InProcess {
		if err := ShutdownWhenStopped(mgr, cc); err != nil {
			return nil, err
		}
	}
	return cc, nil
}

// SetConnectionRetryInterval sets how long cc waits before it tries again to connect to a
// workload cluster (ClusterCache.SetConnectionCreationRetryInterval, which Cluster API's own
// test environment uses; it is not part of the ClusterCache interface).
func SetConnectionRetryInterval(cc clustercache.ClusterCache, interval time.Duration) {
	if s, ok := cc.(interface{ SetConnectionCreationRetryInterval(time.Duration) }); ok {
		s.SetConnectionCreationRetryInterval(interval)
	}
}

// ShutdownWhenStopped shuts cc down when mgr stops, for a manager that does not end with its
// process (tests, the lab). The ClusterCache keeps its watches on the workload clusters open
// until it is shut down, and a workload API server with open watches does not stop on SIGTERM.
// Cluster API's own managers leave that to the process's exit, as the providers' managers do.
func ShutdownWhenStopped(mgr ctrl.Manager, cc clustercache.ClusterCache) error {
	s, ok := cc.(interface{ Shutdown() })
	if !ok {
		return nil
	}
	err := mgr.Add(crmanager.RunnableFunc(func(ctx context.Context) error {
		<-ctx.Done()
		s.Shutdown()
		return nil
	}))
	if err != nil {
		return fmt.Errorf("adding the ClusterCache shutdown to the manager: %w", err)
	}
	return nil
}
