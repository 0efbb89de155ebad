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
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/controlplane/internal/etcd"
)

// cluster-etcd-operator adds a member only through a new revision of the etcd static pods, and
// rolls a new revision only when CheckSafeToScaleCluster allows it (pkg/operator/ceohelpers/
// bootstrap.go): after bootstrap, three control-plane nodes and a fault-tolerant membership
// (etcdcli.IsQuorumFaultTolerantErr), unless its config etcds.operator.openshift.io/cluster sets
// spec.unsupportedConfigOverrides.useUnsupportedUnsafeNonHANonProductionUnstableEtcd
// (ceohelpers/unsupported_override.go). So once the dead member of a three-member cluster is
// removed, the replacement never joins: OpenShift's documented replacement of a dead member sets
// the override, replaces the member and removes the override
// (modules/restore-replace-stopped-etcd-member.adoc). The control plane does the same, only while
// a Machine's member waits to join a healthy membership that is not fault tolerant, records that
// it did (EtcdUnsafeScalingAnnotation) and removes the override once three healthy members vote.

// unsafeScalingKey is the override's key in spec.unsupportedConfigOverrides.
const unsafeScalingKey = "useUnsupportedUnsafeNonHANonProductionUnstableEtcd"

// etcdOperatorConfig is cluster-etcd-operator's config in the workload cluster.
var etcdOperatorConfig = schema.GroupVersionKind{Group: "operator.openshift.io", Version: "v1", Kind: "Etcd"}

// unsafeScalingRequeue is how often the control plane looks again while it holds the override.
const unsafeScalingRequeue = 10 * time.Second

// unsafeScalingNeeded returns why cluster-etcd-operator cannot add the member of a control-plane
// Machine without the unsafe scaling override ("" when it can, or when no member waits to join):
// a Machine with a node but no member, every member healthy and voting (while one is not, the
// operator adds nothing, override or not: remediation removes a dead member first), and fewer
// than three control-plane nodes or a membership that tolerates no failure.
func unsafeScalingNeeded(ec *etcd.Cluster, machines []*clusterv1.Machine) string {
	joining := joiningMachines(ec, machines)
	nodes := 0
	for _, m := range machines {
		if nodeName(m) != "" {
			nodes++
		}
	}
	if len(joining) == 0 || ec.Problem() != "" {
		return ""
	}
	why := ec.FaultTolerance()
	if nodes < 3 {
		why = fmt.Sprintf("%d control-plane nodes, fewer than the 3 it requires", nodes)
	}
	if why == "" {
		return ""
	}
	return fmt.Sprintf("the etcd member of Machine %s cannot join without it: %s", strings.Join(joining, ", "), why)
}

// unsafeScalingDone tells whether an override the control plane set can go: no Machine's member
// waits to join, and at least three healthy voting members tolerate a failure again.
func unsafeScalingDone(ec *etcd.Cluster, machines []*clusterv1.Machine) bool {
	return ec.Problem() == "" && ec.FaultTolerance() == "" && len(ec.Members) >= 3 &&
		machinesWithoutMember(ec, machines, nil) == ""
}

// unsafeScalingApplies tells whether the control plane may need the override: with three or
// more etcd members wanted, an arbiter's included.
func unsafeScalingApplies(oacp *controlplanev1.OpenshiftAssistedControlPlane) bool {
	return wantMachines(oacp) >= 3
}

// reconcileUnsafeScaling sets or removes cluster-etcd-operator's unsafe scaling override (see
// above). Single-node control planes never need it: the operator scales them unsafely anyway.
// Two nodes with an arbiter do: their three members (the arbiter's included) follow the same
// rule (cluster-etcd-operator's HA scaling strategy in the HighlyAvailableArbiter topology).
func (r *OpenshiftAssistedControlPlaneReconciler) reconcileUnsafeScaling(ctx context.Context, s *scope) (ctrl.Result, error) {
	_, set := s.oacp.Annotations[controlplanev1.EtcdUnsafeScalingAnnotation]
	if !etcdReachable(s) || (!set && !unsafeScalingApplies(s.oacp)) {
		return ctrl.Result{}, nil
	}
	ec, err := r.loadEtcd(ctx, s)
	if err != nil {
		return ctrl.Result{}, nil //nolint:nilerr // reported by the EtcdClusterHealthy condition; retried
	}
	switch {
	case !set:
		why := unsafeScalingNeeded(ec, s.machines)
		if why == "" {
			return ctrl.Result{}, nil
		}
		changed, err := r.setUnsafeScaling(ctx, s, true)
		if err != nil || !changed {
			return ctrl.Result{}, err
		}
		if s.oacp.Annotations == nil {
			s.oacp.Annotations = map[string]string{}
		}
		s.oacp.Annotations[controlplanev1.EtcdUnsafeScalingAnnotation] = r.now().UTC().Format(time.RFC3339)
		ctrl.LoggerFrom(ctx).Info("Set cluster-etcd-operator's unsafe scaling override", "reason", why)
		r.Recorder.Eventf(s.oacp, nil, corev1.EventTypeWarning, "EtcdUnsafeScalingSet", "SetEtcdUnsafeScaling",
			"Set %s in etcds.operator.openshift.io/cluster: %s; it is removed once three healthy members vote", unsafeScalingKey, why)
		return ctrl.Result{RequeueAfter: unsafeScalingRequeue}, nil
	case unsafeScalingDone(ec, s.machines):
		if _, err := r.setUnsafeScaling(ctx, s, false); err != nil {
			return ctrl.Result{}, err
		}
		delete(s.oacp.Annotations, controlplanev1.EtcdUnsafeScalingAnnotation)
		ctrl.LoggerFrom(ctx).Info("Removed cluster-etcd-operator's unsafe scaling override")
		r.Recorder.Eventf(s.oacp, nil, corev1.EventTypeNormal, "EtcdUnsafeScalingRemoved", "RemoveEtcdUnsafeScaling",
			"Removed %s from etcds.operator.openshift.io/cluster: %d healthy members vote", unsafeScalingKey, len(ec.Members))
		return ctrl.Result{}, nil
	}
	return ctrl.Result{RequeueAfter: unsafeScalingRequeue}, nil
}

// setUnsafeScaling sets (on) or removes the override in the workload cluster's etcd operator
// config with a merge patch of that one key, so that the config's other fields and overrides
// stay. It reports whether it changed anything: an override already set by someone else is left
// to them (and not recorded as the control plane's).
func (r *OpenshiftAssistedControlPlaneReconciler) setUnsafeScaling(ctx context.Context, s *scope, on bool) (bool, error) {
	c, err := r.ClusterCache.GetClient(ctx, client.ObjectKeyFromObject(s.cluster))
	if err != nil {
		return false, fmt.Errorf("reaching the workload cluster to change etcd's unsafe scaling override: %w", err)
	}
	cfg := &unstructured.Unstructured{}
	cfg.SetGroupVersionKind(etcdOperatorConfig)
	if err := c.Get(ctx, client.ObjectKey{Name: "cluster"}, cfg); err != nil {
		if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
			return false, nil // not cluster-etcd-operator's cluster: nothing gates its scaling
		}
		return false, fmt.Errorf("reading etcds.operator.openshift.io/cluster: %w", err)
	}
	current, _, _ := unstructured.NestedFieldNoCopy(cfg.Object, "spec", "unsupportedConfigOverrides", unsafeScalingKey)
	if on && overrideOn(current) {
		return false, nil
	}
	value := "null"
	if on {
		value = "true"
	}
	patch := fmt.Sprintf(`{"spec":{"unsupportedConfigOverrides":{%q:%s}}}`, unsafeScalingKey, value)
	if err := c.Patch(ctx, cfg, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		return false, fmt.Errorf("patching etcds.operator.openshift.io/cluster: %w", err)
	}
	return true, nil
}

// overrideOn reads the override as cluster-etcd-operator does: a bool, or a string ParseBool takes.
func overrideOn(v any) bool {
	switch v := v.(type) {
	case bool:
		return v
	case string:
		on, err := strconv.ParseBool(v)
		return err == nil && on
	}
	return false
}
