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

package testenv

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/api/core/v1beta2/index"
	runtimev1 "sigs.k8s.io/cluster-api/api/runtime/v1beta2"
	"sigs.k8s.io/cluster-api/controllers"
	"sigs.k8s.io/cluster-api/controllers/clustercache"
	"sigs.k8s.io/cluster-api/feature"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/manager"
)

// ControllerConfig is the controller configuration of the managers that tests and the lab start
// for Cluster API's and CAPM3's controllers and the simulators: the same controllers may start
// more than once in one process (-count, restarts, several management clusters), and the
// priority queue is off, as in the providers' managers (see manager.Options.PriorityQueue: it
// can hang a manager's shutdown). A provider under test gets the same from its production
// options through Environment.ManagerOptions.
func ControllerConfig() config.Controller {
	return config.Controller{SkipNameValidation: ptr.To(true), UsePriorityQueue: ptr.To(false)}
}

// ClusterCacheRetryInterval is how long the ClusterCaches of tests and the lab wait before they
// try again to connect to a workload cluster (Cluster API's default is 30 s). A cluster's
// kubeconfig Secret appears seconds after its Cluster here, not after a 45-minute installation,
// so with the default every installation waited up to 30 s more for its Nodes (its Machines'
// nodeRefs) after it had finished.
const ClusterCacheRetryInterval = time.Second

// SetupCAPIControllers registers Cluster API's own core controllers (Cluster, Machine,
// MachineSet, MachineDeployment, MachineHealthCheck and ExtensionConfig) with mgr, as Cluster
// API's manager does (with its default grace periods), so that tests and the lab run our providers
// against the real thing. It returns the ClusterCache those controllers use, which providers under
// test can share, and their RuntimeClient. Cluster API's MachineSet and MachineDeployment
// controllers read managed fields from the cache (ssa.MitigateManagedFieldsIssue rewrites those of
// an object it finds without any): on a manager built with our providers' options, whose caches
// drop them (pkg/manager), keep them to one manager that makes no MachineSets, or give Cluster API
// a manager of its own, as the lab does.
func SetupCAPIControllers(ctx context.Context, mgr ctrl.Manager, concurrency int) (*CAPI, error) {
	if err := waitForMappings(ctx, mgr.GetRESTMapper(), "Cluster", "Machine", "MachineSet", "MachineDeployment", "MachineHealthCheck"); err != nil {
		return nil, err
	}
	// The Machine and MachineDeployment controllers call runtime extensions (in-place updates,
	// with the InPlaceUpdates and RuntimeSDK gates, EnableInPlaceUpdates) through the
	// RuntimeClient, which the ExtensionConfig controller fills: both run always, as the gates
	// are the process's and may be turned on by another lab of the same test binary.
	// StartWithOptions adds it to its environments' schemes before their managers start: a
	// scheme another manager already decodes with must not be written (it is not safe to write
	// while read).
	if !mgr.GetScheme().Recognizes(runtimev1.GroupVersion.WithKind("ExtensionConfig")) {
		if err := runtimev1.AddToScheme(mgr.GetScheme()); err != nil {
			return nil, fmt.Errorf("adding Cluster API's runtime API to the scheme: %w", err)
		}
	}
	rc := NewRuntimeClient(mgr.GetClient())
	// As Cluster API's manager (its main.go setupIndexes): the Machine controller maps Node events
	// to Machines, and the MachineHealthCheck controller finds a Node's Machine, through these
	// indexes. Without them a Node that gets its providerID after the Machine's last reconcile
	// never wakes the Machine (a lab run waited forever for nodeRefs). Only the two the controllers
	// below use: the ClusterClass and MachinePool indexes belong to controllers the lab does not run.
	if err := index.ByMachineNode(ctx, mgr); err != nil {
		return nil, fmt.Errorf("indexing Machines by Node name: %w", err)
	}
	if err := index.ByMachineProviderID(ctx, mgr); err != nil {
		return nil, fmt.Errorf("indexing Machines by providerID: %w", err)
	}
	cc, err := clustercache.SetupWithManager(ctx, mgr, clustercache.Options{
		SecretClient: mgr.GetClient(),
		// As Cluster API's manager: the Machine controller finds Nodes by providerID.
		Cache: clustercache.CacheOptions{Indexes: []clustercache.CacheOptionsIndex{clustercache.NodeProviderIDIndex}},
		Client: clustercache.ClientOptions{
			UserAgent: "capoa-testenv-capi",
			// As Cluster API's manager: what drain and volume detachment list is read uncached.
			Cache: clustercache.ClientCacheOptions{DisableFor: []client.Object{
				&corev1.ConfigMap{}, &corev1.Secret{}, &corev1.Pod{}, &appsv1.DaemonSet{},
				&storagev1.VolumeAttachment{}, &corev1.PersistentVolume{},
			}},
		},
	}, controller.Options{MaxConcurrentReconciles: concurrency})
	if err != nil {
		return nil, fmt.Errorf("setting up the ClusterCache: %w", err)
	}
	manager.SetConnectionRetryInterval(cc, ClusterCacheRetryInterval)
	if err := manager.ShutdownWhenStopped(mgr, cc); err != nil {
		return nil, err
	}
	opts := controller.Options{MaxConcurrentReconciles: concurrency}
	// As Cluster API's manager (--machineset-preflight-checks=All).
	preflight := sets.New(clusterv1.MachineSetPreflightCheckAll)
	reader := mgr.GetAPIReader()
	c := mgr.GetClient()
	for name, setup := range map[string]func() error{
		"Cluster": func() error {
			return (&controllers.ClusterReconciler{Client: c, APIReader: reader, ClusterCache: cc,
				RemoteConnectionGracePeriod: 50 * time.Second}).SetupWithManager(ctx, mgr, opts)
		},
		"Machine": func() error {
			return (&controllers.MachineReconciler{Client: c, APIReader: reader, ClusterCache: cc, RuntimeClient: rc,
				RemoteConditionsGracePeriod: 5 * time.Minute}).SetupWithManager(ctx, mgr, opts)
		},
		"MachineSet": func() error {
			return (&controllers.MachineSetReconciler{Client: c, APIReader: reader, ClusterCache: cc,
				PreflightChecks: preflight}).SetupWithManager(ctx, mgr, opts)
		},
		"MachineDeployment": func() error {
			return (&controllers.MachineDeploymentReconciler{Client: c, APIReader: reader, RuntimeClient: rc}).SetupWithManager(ctx, mgr, opts)
		},
		"ExtensionConfig": func() error {
			// As Cluster API's manager with RuntimeSDK: it discovers each ExtensionConfig's
			// handlers, injects its caBundle from the Secret its annotation names, and fills rc.
			return (&controllers.ExtensionConfigReconciler{Client: c, APIReader: reader, RuntimeClient: rc,
				PartialSecretCache: mgr.GetCache()}).SetupWithManager(ctx, mgr, opts)
		},
		"MachineHealthCheck": func() error {
			return (&controllers.MachineHealthCheckReconciler{Client: c, ClusterCache: cc}).SetupWithManager(ctx, mgr, opts)
		},
	} {
		if err := setup(); err != nil {
			return nil, fmt.Errorf("setting up Cluster API's %s controller: %w", name, err)
		}
	}
	return &CAPI{ClusterCache: cc, RuntimeClient: rc}, nil
}

// CAPI is what SetupCAPIControllers set up that other controllers share.
type CAPI struct {
	// ClusterCache reaches the workload clusters (providers under test can share it).
	ClusterCache clustercache.ClusterCache
	// RuntimeClient calls the runtime extensions the ExtensionConfigs register.
	RuntimeClient *RuntimeClient
}

// EnableInPlaceUpdates turns on, in this process, Cluster API's RuntimeSDK and InPlaceUpdates
// feature gates (alpha, off by default; a management cluster's are set by clusterctl's
// EXP_RUNTIME_SDK and EXP_IN_PLACE_UPDATES): a MachineDeployment whose Machines an extension can
// update in place (CanUpdateMachineSet) moves them to its new MachineSet and the Machine
// controller calls the extension's UpdateMachine until it is done, rather than replacing them.
func EnableInPlaceUpdates() error {
	for _, gate := range []string{string(feature.RuntimeSDK), string(feature.InPlaceUpdates)} {
		if err := feature.MutableGates.Set(gate + "=true"); err != nil {
			return fmt.Errorf("turning on Cluster API's %s feature gate: %w", gate, err)
		}
	}
	return nil
}

// SetupCAPITopologyControllers registers Cluster API's managed-topology controllers (ClusterClass,
// Cluster topology, and the MachineDeployment and MachineSet topology finalizers) with mgr, as
// Cluster API's manager does with CLUSTER_TOPOLOGY=true, sharing cc, the ClusterCache of
// SetupCAPIControllers. It turns Cluster API's ClusterTopology feature gate on in this process (it
// is alpha and off by default; it changes nothing for a Cluster without spec.topology). Cluster
// API's webhooks are not served here: the topology controller defaults the variables itself.
func SetupCAPITopologyControllers(ctx context.Context, mgr ctrl.Manager, capi *CAPI, concurrency int) error {
	cc := capi.ClusterCache
	if err := feature.MutableGates.Set(string(feature.ClusterTopology) + "=true"); err != nil {
		return fmt.Errorf("turning on Cluster API's %s feature gate: %w", feature.ClusterTopology, err)
	}
	if err := waitForMappings(ctx, mgr.GetRESTMapper(), "ClusterClass"); err != nil {
		return err
	}
	// As Cluster API's manager (index.AddDefaultIndexes with the gate on): the ClusterClass
	// controller finds the Clusters of a class through it.
	if err := index.ByClusterClassRef(ctx, mgr); err != nil {
		return fmt.Errorf("indexing Clusters by ClusterClass: %w", err)
	}
	opts := controller.Options{MaxConcurrentReconciles: concurrency}
	reader := mgr.GetAPIReader()
	c := mgr.GetClient()
	for name, setup := range map[string]func() error{
		"ClusterClass": func() error {
			return (&controllers.ClusterClassReconciler{Client: c, RuntimeClient: capi.RuntimeClient}).SetupWithManager(ctx, mgr, opts)
		},
		"ClusterTopology": func() error {
			return (&controllers.ClusterTopologyReconciler{Client: c, APIReader: reader, ClusterCache: cc,
				RuntimeClient: capi.RuntimeClient}).SetupWithManager(ctx, mgr, opts)
		},
		"MachineDeploymentTopology": func() error {
			return (&controllers.MachineDeploymentTopologyReconciler{Client: c, APIReader: reader}).SetupWithManager(ctx, mgr, opts)
		},
		"MachineSetTopology": func() error {
			return (&controllers.MachineSetTopologyReconciler{Client: c, APIReader: reader}).SetupWithManager(ctx, mgr, opts)
		},
	} {
		if err := setup(); err != nil {
			return fmt.Errorf("setting up Cluster API's %s controller: %w", name, err)
		}
	}
	return nil
}

// waitForMappings waits until mapper maps Cluster API's kinds. On a loaded machine the API
// server's discovery can show a CRD that envtest saw established a moment later, and a controller
// set up meanwhile fails with "no matches for kind" (seen in CI: the lab's Machine controller).
func waitForMappings(ctx context.Context, mapper meta.RESTMapper, kinds ...string) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		for _, k := range kinds {
			if _, err := mapper.RESTMapping(schema.GroupKind{Group: clusterv1.GroupVersion.Group, Kind: k}, clusterv1.GroupVersion.Version); err != nil {
				last = err
				return false, nil //nolint:nilerr // retried until the timeout, which reports the last error
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the API server to serve Cluster API's kinds: %w (last: %w)", err, last)
	}
	return nil
}
