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
	"encoding/json"
	"fmt"
	"time"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	"github.com/metal3-io/cluster-api-provider-metal3/baremetal"
	infraremote "github.com/metal3-io/cluster-api-provider-metal3/baremetal/remote"
	capm3controllers "github.com/metal3-io/cluster-api-provider-metal3/controllers"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/cluster-api/controllers/clustercache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
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
	c := hostClaimLock{mgr.GetClient()}
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

// hostClaimLock is the client of CAPM3's controllers in the lab: its merge patches of a
// BareMetalHost carry the resourceVersion of the host they were computed from, as
// controller-runtime's MergeFromWithOptimisticLock writes them, so the API server refuses one
// computed from a stale read (409).
//
// CAPM3 v1.13.2 claims a host with a plain merge patch (patch.Helper, in Associate,
// baremetal/metal3machine_manager.go) of a host it chose from its cache: two Metal3Machines
// associated at once (the control plane's Machines get their bootstrap data together) can both
// choose the same free host, and the last patch wins. The first Metal3Machine then keeps the
// host in its metal3.io/BareMetalHost annotation while the host provisions for the other, and
// its Machine waits for a host that never boots its image: a system spec failed so under load.
// This is metal3-io/cluster-api-provider-metal3#1004; its fix (#3432, not released in v1.13)
// claims with MergeFromWithOptimisticLock, and Associate already requeues on a conflict. The
// lab runs CAPM3 as that fix will: the bootstrap provider reports the double claim to users of
// a CAPM3 without it (BareMetalHostTaken).
type hostClaimLock struct{ client.Client }

func (c hostClaimLock) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	if patch.Type() != types.MergePatchType || !isBareMetalHost(c.Client, obj) || obj.GetResourceVersion() == "" {
		return c.Client.Patch(ctx, obj, patch, opts...)
	}
	data, err := patch.Data(obj)
	if err != nil {
		return err
	}
	var fields map[string]any
	if err := json.Unmarshal(data, &fields); err != nil {
		return fmt.Errorf("decoding a merge patch of BareMetalHost %s: %w", obj.GetName(), err)
	}
	if len(fields) == 0 {
		return c.Client.Patch(ctx, obj, patch, opts...)
	}
	meta, _ := fields["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		fields["metadata"] = meta
	}
	meta["resourceVersion"] = obj.GetResourceVersion()
	if data, err = json.Marshal(fields); err != nil {
		return err
	}
	return c.Client.Patch(ctx, obj, client.RawPatch(types.MergePatchType, data), opts...)
}

func isBareMetalHost(c client.Client, obj client.Object) bool {
	gvk, err := apiutil.GVKForObject(obj, c.Scheme())
	return err == nil && gvk.GroupKind() == bmov1alpha1.GroupVersion.WithKind("BareMetalHost").GroupKind()
}
