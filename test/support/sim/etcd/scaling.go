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

package etcd

import (
	"context"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The scaling gate of cluster-etcd-operator. A new member needs a new revision of the etcd static
// pods (its pod, endpoints and certificates), and every new revision waits for
// CheckSafeToScaleCluster (pkg/operator/ceohelpers/bootstrap.go, the revision controller's
// precondition in starter.go): once bootstrap is complete, at least 3 control-plane nodes and a
// membership that stays fault tolerant (etcdcli.IsQuorumFaultTolerantErr: members beyond quorum,
// and healthy members beyond quorum), unless the operator config's
// spec.unsupportedConfigOverrides.useUnsupportedUnsafeNonHANonProductionUnstableEtcd is true
// (ceohelpers/unsupported_override.go IsUnsupportedUnsafeEtcd: a bool, or a string ParseBool
// accepts). Replacing a dead member of a three-member cluster therefore needs the override, as
// OpenShift's documented procedure sets it (modules/restore-replace-stopped-etcd-member.adoc).

// OperatorConfigName is the name of cluster-etcd-operator's config, etcds.operator.openshift.io.
const OperatorConfigName = "cluster"

// UnsafeScalingOverride is the key of spec.unsupportedConfigOverrides that lets it scale etcd
// without fault tolerance.
const UnsafeScalingOverride = "useUnsupportedUnsafeNonHANonProductionUnstableEtcd"

// OperatorConfigGVK is the kind of cluster-etcd-operator's config.
var OperatorConfigGVK = schema.GroupVersionKind{Group: "operator.openshift.io", Version: "v1", Kind: "Etcd"}

// ensureOperatorConfig creates etcds.operator.openshift.io/cluster, as the installer's manifests do.
func (s *Simulator) ensureOperatorConfig(ctx context.Context) error {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(OperatorConfigGVK)
	u.SetName(OperatorConfigName)
	u.Object["spec"] = map[string]any{"managementState": "Managed"}
	if err := s.client.Create(ctx, u); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the etcd operator config: %w", err)
	}
	return nil
}

// unsafeScaling tells whether the operator config sets the unsafe scaling override.
func (s *Simulator) unsafeScaling(ctx context.Context) (bool, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(OperatorConfigGVK)
	if err := s.client.Get(ctx, client.ObjectKey{Name: OperatorConfigName}, u); err != nil {
		if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
			return false, nil
		}
		return false, fmt.Errorf("reading the etcd operator config: %w", err)
	}
	v, found, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "unsupportedConfigOverrides", UnsafeScalingOverride)
	if !found {
		return false, nil
	}
	switch v := v.(type) {
	case bool:
		return v, nil
	case string:
		on, err := strconv.ParseBool(v)
		return on && err == nil, nil
	}
	return false, nil
}

// unsafeToScale returns why cluster-etcd-operator would roll no revision for a new member now
// ("" when it would): CheckSafeToScaleCluster with the HA scaling strategy. Before bootstrap
// completes every scaling is safe.
func (s *Simulator) unsafeToScale(ctx context.Context, nodes map[string]*corev1.Node, sampled []Member) (string, error) {
	if !s.bootstrapComplete {
		return "", nil
	}
	unsafe, err := s.unsafeScaling(ctx)
	if err != nil || unsafe {
		return "", err
	}
	if len(nodes) < 3 {
		return fmt.Sprintf("CheckSafeToScaleCluster 3 nodes are required, but only %d are available", len(nodes)), nil
	}
	return faultTolerance(sampled), nil
}

// faultTolerance is etcdcli.IsQuorumFaultTolerantErr over every member: "" when members beyond
// quorum remain, healthy ones included.
func faultTolerance(members []Member) string {
	total, healthy := len(members), 0
	for _, m := range members {
		if m.Healthy {
			healthy++
		}
	}
	quorum := total/2 + 1
	switch {
	case total-quorum < 1:
		return fmt.Sprintf("etcd cluster has quorum of %d which is not fault tolerant: %s", quorum, memberNames(members))
	case healthy-quorum < 1:
		return fmt.Sprintf("etcd cluster has quorum of %d and %d healthy members which is not fault tolerant: %s", quorum, healthy, memberNames(members))
	}
	return ""
}

func memberNames(members []Member) string {
	out := ""
	for i, m := range members {
		if i > 0 {
			out += ", "
		}
		out += fmt.Sprintf("%s(healthy=%t)", m.Name, m.Healthy)
	}
	return out
}
