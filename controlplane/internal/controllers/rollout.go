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
	"strings"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/controllers/external"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
)

// A control-plane Machine is replaced (rolled out) when it no longer matches the spec, as
// KubeadmControlPlane decides it (controlplane/kubeadm/internal/desiredstate and
// filters.go UpToDate): it was created before spec.rollout.after, its infrastructure was
// cloned from another template than spec.machineTemplate.infrastructureRef, or its
// OpenshiftAssistedConfig differs from spec.openshiftAssistedConfigSpec. Labels, annotations,
// deletion timeouts, taints and readiness gates of spec.machineTemplate are not a reason: they
// are changed in place (inplace_machines.go), as KCP changes them. OpenShift updates its nodes in
// place, so a new distributionVersion is not one either.

// desiredConfigSpec is the OpenshiftAssistedConfig spec a new control-plane Machine gets, with
// the defaults the OpenshiftAssistedConfig CRD applies (+kubebuilder:default in
// api/bootstrap/v1alpha2), so that it compares equal to what the API server stores. The
// control plane's own CRD does not apply them when openshiftAssistedConfigSpec is left out.
func desiredConfigSpec(oacp *controlplanev1.OpenshiftAssistedControlPlane) *bootstrapv1.OpenshiftAssistedConfigSpec {
	spec := oacp.Spec.OpenshiftAssistedConfigSpec.DeepCopy()
	if spec.PullSecretRef == nil {
		spec.PullSecretRef = oacp.Spec.Config.PullSecretRef.DeepCopy()
	}
	if spec.CpuArchitecture == "" {
		spec.CpuArchitecture = "x86_64"
	}
	return spec
}

// reconcileOutdated finds the Machines (not being deleted) that no longer match the spec, and
// why, into s.outdated.
func (r *OpenshiftAssistedControlPlaneReconciler) reconcileOutdated(ctx context.Context, s *scope) error {
	s.outdated = map[string]string{}
	after := s.oacp.Spec.Rollout.After
	for _, m := range s.machines {
		if !m.DeletionTimestamp.IsZero() {
			continue
		}
		var why []string
		if !after.IsZero() && !after.After(r.now()) && m.CreationTimestamp.Before(&after) {
			why = append(why, fmt.Sprintf("it was created before spec.rollout.after (%s)", after.UTC().Format("2006-01-02T15:04:05Z")))
		}
		w, err := r.infrastructureOutdated(ctx, s, m)
		if err != nil {
			return err
		}
		if w != "" {
			why = append(why, w)
		}
		if w, err = r.configOutdated(ctx, s, m); err != nil {
			return err
		}
		if w != "" {
			why = append(why, w)
		}
		if len(why) > 0 {
			s.outdated[m.Name] = strings.Join(why, "; ")
		}
	}
	return nil
}

// infrastructureOutdated tells whether m's infrastructure was cloned from another template than
// the spec's (Cluster API's cloned-from annotations on the clone).
func (r *OpenshiftAssistedControlPlaneReconciler) infrastructureOutdated(ctx context.Context, s *scope, m *clusterv1.Machine) (string, error) {
	if !m.Spec.InfrastructureRef.IsDefined() {
		return "", nil
	}
	infra, err := external.GetObjectFromContractVersionedRef(ctx, metadataReader{r.Client}, m.Spec.InfrastructureRef, m.Namespace)
	if apierrors.IsNotFound(err) {
		return "", nil // gone or not created yet: the Machine reports it
	}
	if err != nil {
		return "", fmt.Errorf("getting the infrastructure of Machine %s: %w", m.Name, err)
	}
	ref := machineTemplate(s.oacp, isArbiter(m)).Spec.InfrastructureRef
	name, found := infra.GetAnnotations()[clusterv1.TemplateClonedFromNameAnnotation]
	if !found {
		return "", nil // not cloned by a control plane (adopted): nothing to compare
	}
	groupKind := schema.GroupKind{Group: ref.APIGroup, Kind: ref.Kind}.String()
	if name != ref.Name || infra.GetAnnotations()[clusterv1.TemplateClonedFromGroupKindAnnotation] != groupKind {
		return fmt.Sprintf("its infrastructure was cloned from %s %s, %s.infrastructureRef is now %s %s",
			infra.GetAnnotations()[clusterv1.TemplateClonedFromGroupKindAnnotation], name, templateField(isArbiter(m)), groupKind, ref.Name), nil
	}
	return "", nil
}

// configOutdated tells whether m's OpenshiftAssistedConfig differs from the spec's.
func (r *OpenshiftAssistedControlPlaneReconciler) configOutdated(ctx context.Context, s *scope, m *clusterv1.Machine) (string, error) {
	ref := m.Spec.Bootstrap.ConfigRef
	if ref.Kind != bootstrapv1.ConfigKind || ref.APIGroup != bootstrapv1.GroupVersion.Group {
		return "", nil
	}
	config := &bootstrapv1.OpenshiftAssistedConfig{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: ref.Name}, config); err != nil {
		if apierrors.IsNotFound(err) {
			return "", nil
		}
		return "", fmt.Errorf("getting the OpenshiftAssistedConfig of Machine %s: %w", m.Name, err)
	}
	// Upstream's control plane copies openshiftAssistedConfigSpec as it is: a config without a
	// pull secret uses the ClusterDeployment's, spec.config.pullSecretRef, which is what
	// desiredConfigSpec writes. Such a config is not outdated for that.
	spec := config.Spec.DeepCopy()
	if spec.PullSecretRef == nil {
		spec.PullSecretRef = s.oacp.Spec.Config.PullSecretRef.DeepCopy()
	}
	if !apiequality.Semantic.DeepEqual(spec, desiredConfigSpec(s.oacp)) {
		return "its OpenshiftAssistedConfig differs from spec.openshiftAssistedConfigSpec", nil
	}
	return "", nil
}

// rolloutBlocked returns why the outdated Machines cannot be replaced now, or "".
func rolloutBlocked(s *scope) string {
	if len(s.outdated) == 0 {
		return ""
	}
	if replicas(s.oacp) == 1 {
		return "single-node OpenShift cannot replace its only control-plane node (a second one cannot join it); revert the change, or create a new cluster with the new settings"
	}
	if !s.installed() {
		return "the cluster is being installed; the Machines are replaced once it is installed"
	}
	for _, m := range s.machines {
		if !isHealthy(m) {
			return fmt.Sprintf("Machine %s is not ready; Machines are replaced only while every control-plane Machine is ready", m.Name)
		}
	}
	return ""
}
