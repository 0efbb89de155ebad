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
	"maps"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	capm3v1beta2 "github.com/metal3-io/cluster-api-provider-metal3/api/v1beta2"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
)

// machineToConfig maps a Machine to its OpenshiftAssistedConfig.
func machineToConfig(_ context.Context, o client.Object) []reconcile.Request {
	m, ok := o.(*clusterv1.Machine)
	if !ok {
		return nil
	}
	ref := m.Spec.Bootstrap.ConfigRef
	if !ref.IsDefined() || ref.APIGroup != bootstrapv1.GroupVersion.Group || ref.Kind != "OpenshiftAssistedConfig" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: m.Namespace, Name: ref.Name}}}
}

// clusterNameToConfigs maps an object named after a Cluster (the Cluster itself, its
// ClusterDeployment, its AgentClusterInstall through clusterName) to the cluster's configs.
func (r *OpenshiftAssistedConfigReconciler) clusterNameToConfigs(clusterName func(client.Object) string) func(context.Context, client.Object) []reconcile.Request {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		name := clusterName(o)
		if name == "" {
			return nil
		}
		list := &bootstrapv1.OpenshiftAssistedConfigList{}
		if err := r.Client.List(ctx, list, client.InNamespace(o.GetNamespace()), client.MatchingLabels{clusterv1.ClusterNameLabel: name}); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "Listing the configs of a cluster", "cluster", name)
			return nil
		}
		out := make([]reconcile.Request, 0, len(list.Items))
		for i := range list.Items {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
		return out
	}
}

// agentToConfig maps an Agent to the config whose InfraEnv it registered through (InfraEnvs are
// named after their config), and to the config that claimed it.
func agentToConfig(_ context.Context, o client.Object) []reconcile.Request {
	var out []reconcile.Request
	seen := map[string]bool{}
	for _, key := range []string{aiv1beta1.InfraEnvNameLabel, bootstrapv1.AgentConfigLabel} {
		if name := o.GetLabels()[key]; name != "" && !seen[name] {
			seen[name] = true
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKey{Namespace: o.GetNamespace(), Name: name}})
		}
	}
	return out
}

// bareMetalHostToConfig maps a BareMetalHost to the config of the Machine whose Metal3Machine
// consumes it (CAPM3 sets spec.consumerRef when it associates them).
func (r *OpenshiftAssistedConfigReconciler) bareMetalHostToConfig(ctx context.Context, o client.Object) []reconcile.Request {
	bmh, ok := o.(*bmov1alpha1.BareMetalHost)
	if !ok || bmh.Spec.ConsumerRef == nil || bmh.Spec.ConsumerRef.Kind != "Metal3Machine" {
		return nil
	}
	// CAPM3 consumes hosts of the Metal3Machine's own namespace only (bareMetalHostFor refuses
	// others): a consumer in another namespace wakes nothing there.
	if ns := bmh.Spec.ConsumerRef.Namespace; ns != "" && ns != bmh.Namespace {
		return nil
	}
	m3m := &capm3v1beta2.Metal3Machine{} // from the cache the Metal3Machine watch keeps
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: bmh.Namespace, Name: bmh.Spec.ConsumerRef.Name}, m3m); err != nil {
		return nil
	}
	return r.metal3MachineToConfig(ctx, m3m)
}

// hostIdentityChanged passes the BareMetalHost updates that change what the config checks or
// matches: its annotations, its spec (boot mode, boot MAC, BMC address, consumer) and the
// hardware inspection found; BMO's other status writes are not passed.
var hostIdentityChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		before, ok1 := e.ObjectOld.(*bmov1alpha1.BareMetalHost)
		after, ok2 := e.ObjectNew.(*bmov1alpha1.BareMetalHost)
		if !ok1 || !ok2 {
			return false
		}
		return before.Generation != after.Generation || !maps.Equal(before.Annotations, after.Annotations) ||
			!apiequality.Semantic.DeepEqual(before.Status.HardwareDetails, after.Status.HardwareDetails)
	},
	CreateFunc:  func(event.CreateEvent) bool { return true },
	DeleteFunc:  func(event.DeleteEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
}

// metal3MachineToConfig maps a Metal3Machine to the config of the Machine that owns it.
func (r *OpenshiftAssistedConfigReconciler) metal3MachineToConfig(ctx context.Context, o client.Object) []reconcile.Request {
	for _, ref := range o.GetOwnerReferences() {
		if ref.Kind != "Machine" {
			continue
		}
		m := &clusterv1.Machine{}
		if err := r.Client.Get(ctx, client.ObjectKey{Namespace: o.GetNamespace(), Name: ref.Name}, m); err != nil {
			return nil
		}
		return machineToConfig(ctx, m)
	}
	return nil
}
