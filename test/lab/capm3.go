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

package lab

import (
	"context"
	"fmt"
	"time"

	"github.com/metal3-io/cluster-api-provider-metal3/baremetal"
	infraremote "github.com/metal3-io/cluster-api-provider-metal3/baremetal/remote"
	capm3controllers "github.com/metal3-io/cluster-api-provider-metal3/controllers"
	"sigs.k8s.io/cluster-api/controllers/clustercache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/testenv"
)

// SetupCAPM3Controllers registers CAPM3's own controllers (Metal3Cluster, Metal3Machine,
// Metal3MachineTemplate and Metal3DataTemplate) with mgr, as CAPM3's manager does. They talk to
// BareMetalHost objects only, never to Ironic, so they run unchanged against the simulated hosts.
// A requeueCap other than zero caps their delayed requeues (testenv.CappedRequeues), for hosts on
// the lab's fast clock.
func SetupCAPM3Controllers(ctx context.Context, mgr ctrl.Manager, cc clustercache.ClusterCache, concurrency int, requeueCap time.Duration) error {
	opts := controller.Options{MaxConcurrentReconciles: concurrency}
	if requeueCap > 0 {
		opts.NewQueue = testenv.CappedRequeues(requeueCap)
	}
	c := mgr.GetClient()
	factory := baremetal.NewManagerFactory(c)
	log := ctrl.Log.WithName("capm3")
	for name, setup := range map[string]func() error{
		"Metal3Cluster": func() error {
			return (&capm3controllers.Metal3ClusterReconciler{Client: c, ClusterCache: cc, ManagerFactory: factory,
				Log: log.WithName("Metal3Cluster")}).SetupWithManager(ctx, mgr, opts)
		},
		"Metal3Machine": func() error {
			return (&capm3controllers.Metal3MachineReconciler{Client: c, ClusterCache: cc, ManagerFactory: factory,
				Log: log.WithName("Metal3Machine"), CapiClientGetter: infraremote.NewClusterClient}).SetupWithManager(ctx, mgr, opts)
		},
		"Metal3MachineTemplate": func() error {
			return (&capm3controllers.Metal3MachineTemplateReconciler{Client: c, ClusterCache: cc, ManagerFactory: factory,
				Log: log.WithName("Metal3MachineTemplate")}).SetupWithManager(ctx, mgr, opts)
		},
		"Metal3Data": func() error {
			return (&capm3controllers.Metal3DataReconciler{Client: c, ClientReader: mgr.GetAPIReader(), ClusterCache: cc, ManagerFactory: factory,
				Log: log.WithName("Metal3Data")}).SetupWithManager(ctx, mgr, opts)
		},
		"Metal3DataTemplate": func() error {
			return (&capm3controllers.Metal3DataTemplateReconciler{Client: c, ClusterCache: cc, ManagerFactory: factory,
				Log: log.WithName("Metal3DataTemplate")}).SetupWithManager(ctx, mgr, opts)
		},
	} {
		if err := setup(); err != nil {
			return fmt.Errorf("setting up CAPM3's %s controller: %w", name, err)
		}
	}
	return nil
}
