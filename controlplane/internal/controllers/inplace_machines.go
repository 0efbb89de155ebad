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
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/controllers/external"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
)

// What KubeadmControlPlane changes in place on its Machines (syncMachines, v1.13.4: labels and
// annotations of spec.machineTemplate.metadata on the Machine, its infrastructure machine and its
// bootstrap config; the Machine's deletion timeouts, readiness gates and taints) is changed in
// place here too, without a rollout: none of them is a reason to replace a host (see rollout.go).
// A label or annotation removed from the template is removed from the objects. KCP knows which
// it applied from its server-side-apply field ownership; here the Machine records the keys that
// came from the template (templateMetadataAnnotation), so that those alone are removed, never
// one a user or another controller set. A Machine created before the record existed gets it on
// its first sync, and nothing is removed from it then.

// templateMetadataAnnotation records, on a control-plane Machine, the label and annotation keys
// that spec.machineTemplate.metadata gave it and its infrastructure and bootstrap config.
const templateMetadataAnnotation = "controlplane.cluster.x-k8s.io/template-metadata"

// templateMetadata is the value of templateMetadataAnnotation.
type templateMetadata struct {
	Labels      []string `json:"labels,omitempty"`
	Annotations []string `json:"annotations,omitempty"`
}

// machineObjectLabels are the labels of a control-plane Machine, its infrastructure and its
// config: the template's, the control plane's own (machineLabels), the arbiter's, the fencing one
// of two-node OpenShift with fencing, and the watch label.
func machineObjectLabels(s *scope, arbiter bool) map[string]string {
	lbls := maps.Clone(machineTemplate(s.oacp, arbiter).ObjectMeta.Labels)
	if lbls == nil {
		lbls = map[string]string{}
	}
	maps.Copy(lbls, machineLabels(s.oacp, s.cluster))
	if arbiter {
		lbls[controlplanev1.ArbiterMachineLabel] = ""
	}
	if s.oacp.Spec.Fencing != nil {
		lbls[controlplanev1.FencingMachineLabel] = ""
	}
	copyWatchLabel(lbls, s.oacp)
	return lbls
}

// recordTemplateMetadata returns the templateMetadataAnnotation value for tmpl.
func recordTemplateMetadata(tmpl *controlplanev1.OpenshiftAssistedControlPlaneMachineTemplate) string {
	data, _ := json.Marshal(templateMetadata{ //nolint:errchkjson // two string slices
		Labels: slices.Sorted(maps.Keys(tmpl.ObjectMeta.Labels)), Annotations: slices.Sorted(maps.Keys(tmpl.ObjectMeta.Annotations))})
	return string(data)
}

// reconcileMachinesInPlace brings every control-plane Machine that is not being deleted, with its
// infrastructure and bootstrap config, to the template's labels and annotations, and the Machine
// to its deletion timeouts, readiness gates and taints, in merge patches of those fields alone.
// A Machine being deleted gets its deletion timeouts and taints only, as with KCP.
func (r *OpenshiftAssistedControlPlaneReconciler) reconcileMachinesInPlace(ctx context.Context, s *scope) error {
	for _, m := range s.machines {
		tmpl := machineTemplate(s.oacp, isArbiter(m))
		if !m.DeletionTimestamp.IsZero() {
			if err := r.patchMachine(ctx, m, tmpl, nil, nil); err != nil {
				return err
			}
			continue
		}
		record := recordTemplateMetadata(tmpl)
		var previous templateMetadata
		if v, ok := m.Annotations[templateMetadataAnnotation]; ok {
			_ = json.Unmarshal([]byte(v), &previous) // a record that does not parse removes nothing
		}
		labels := metadataDelta(m.Labels, machineObjectLabels(s, isArbiter(m)), previous.Labels)
		annotations := metadataDelta(m.Annotations, tmpl.ObjectMeta.Annotations, previous.Annotations)
		if len(labels) > 0 || len(annotations) > 0 {
			// The infrastructure and config first: the Machine's record, written last, says
			// they were done.
			if err := r.patchMetadata(ctx, m, labels, annotations); err != nil {
				return err
			}
		}
		if m.Annotations[templateMetadataAnnotation] != record {
			annotations[templateMetadataAnnotation] = record
		}
		if err := r.patchMachine(ctx, m, tmpl, labels, annotations); err != nil {
			return err
		}
	}
	return nil
}

// metadataDelta is the merge patch of a labels or annotations map that brings have to want: the
// keys of want with another value in have, and, as null, the keys of previous (what the template
// gave before) that want no longer has.
func metadataDelta(have, want map[string]string, previous []string) map[string]any {
	delta := map[string]any{}
	for k, v := range want {
		if cur, ok := have[k]; !ok || cur != v {
			delta[k] = v
		}
	}
	for _, k := range previous {
		if _, keep := want[k]; !keep {
			if _, ok := have[k]; ok {
				delta[k] = nil
			}
		}
	}
	return delta
}

// patchMetadata applies the labels and annotations delta to the infrastructure machine and the
// OpenshiftAssistedConfig of m, which were created with the same metadata (createMachine), read
// the infrastructure as metadata from the cache, as rollout.go reads it. One that is gone is
// skipped.
func (r *OpenshiftAssistedControlPlaneReconciler) patchMetadata(ctx context.Context, m *clusterv1.Machine, labels, annotations map[string]any) error {
	body, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": labels, "annotations": annotations}})
	if err != nil {
		return err
	}
	var targets []client.Object
	if ref := m.Spec.InfrastructureRef; ref.IsDefined() {
		infra, err := external.GetObjectFromContractVersionedRef(ctx, metadataReader{r.Client}, ref, m.Namespace)
		switch {
		case err == nil:
			targets = append(targets, infra)
		case !apierrors.IsNotFound(err):
			return fmt.Errorf("getting %s %s of Machine %s: %w", ref.Kind, ref.Name, m.Name, err)
		}
	}
	if ref := m.Spec.Bootstrap.ConfigRef; ref.Kind == bootstrapv1.ConfigKind && ref.APIGroup == bootstrapv1.GroupVersion.Group {
		config := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: m.Namespace, Name: ref.Name}}
		config.SetGroupVersionKind(bootstrapv1.GroupVersion.WithKind(bootstrapv1.ConfigKind))
		targets = append(targets, config)
	}
	for _, obj := range targets {
		if err := r.Client.Patch(ctx, obj, client.RawPatch(types.MergePatchType, body)); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("updating the labels and annotations of %s %s in place: %w", obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName(), err)
		}
	}
	return nil
}

// patchMachine applies the labels and annotations delta to m, with its deletion timeouts and
// taints, and unless m is being deleted its readiness gates, where they differ from tmpl's.
func (r *OpenshiftAssistedControlPlaneReconciler) patchMachine(ctx context.Context, m *clusterv1.Machine, tmpl *controlplanev1.OpenshiftAssistedControlPlaneMachineTemplate,
	labels, annotations map[string]any) error {
	patch := map[string]any{}
	meta := map[string]any{}
	if len(labels) > 0 {
		meta["labels"] = labels
	}
	if len(annotations) > 0 {
		meta["annotations"] = annotations
	}
	if len(meta) > 0 {
		patch["metadata"] = meta
	}
	if spec := machineSpecDelta(m, tmpl, m.DeletionTimestamp.IsZero()); len(spec) > 0 {
		patch["spec"] = spec
	}
	return r.sendMachinePatch(ctx, m, patch)
}

// defaultNodeDeletionTimeoutSeconds is what Cluster API's Machine webhook writes when
// spec.deletion.nodeDeletionTimeoutSeconds is unset (internal/webhooks/machine.go, v1.13.4).
const defaultNodeDeletionTimeoutSeconds = int32(10)

// desiredDeletion is the spec.deletion of a Machine of tmpl: the template's, with the default
// that Cluster API's webhook writes, so that a Machine it defaulted compares equal (as KCP
// compares, with webhooks.DefaultMachineNodeDeletionTimeoutSeconds) and is not written again.
func desiredDeletion(tmpl *controlplanev1.OpenshiftAssistedControlPlaneMachineTemplate) clusterv1.MachineDeletionSpec {
	d := tmpl.Spec.Deletion
	if d.NodeDeletionTimeoutSeconds == nil {
		d.NodeDeletionTimeoutSeconds = ptr.To(defaultNodeDeletionTimeoutSeconds)
	}
	return d
}

// machineSpecDelta is the merge patch of m's spec that gives it tmpl's deletion timeouts and
// taints (and readiness gates, when readinessGates). A timeout the template no longer sets is
// removed (null); the lists are replaced whole, as a merge patch does.
func machineSpecDelta(m *clusterv1.Machine, tmpl *controlplanev1.OpenshiftAssistedControlPlaneMachineTemplate, readinessGates bool) map[string]any {
	spec := map[string]any{}
	if d := desiredDeletion(tmpl); !apiequality.Semantic.DeepEqual(m.Spec.Deletion, d) {
		spec["deletion"] = map[string]any{
			"nodeDrainTimeoutSeconds":        d.NodeDrainTimeoutSeconds,
			"nodeVolumeDetachTimeoutSeconds": d.NodeVolumeDetachTimeoutSeconds,
			"nodeDeletionTimeoutSeconds":     d.NodeDeletionTimeoutSeconds,
		}
	}
	if !apiequality.Semantic.DeepEqual(m.Spec.Taints, tmpl.Spec.Taints) {
		spec["taints"] = tmpl.Spec.Taints
	}
	if readinessGates && !apiequality.Semantic.DeepEqual(m.Spec.ReadinessGates, tmpl.Spec.ReadinessGates) {
		spec["readinessGates"] = tmpl.Spec.ReadinessGates
	}
	return spec
}

// sendMachinePatch sends patch, when it is not empty, as a merge patch of m, and keeps m as the
// API server returns it.
func (r *OpenshiftAssistedControlPlaneReconciler) sendMachinePatch(ctx context.Context, m *clusterv1.Machine, patch map[string]any) error {
	if len(patch) == 0 {
		return nil
	}
	body, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	if err := r.Client.Patch(ctx, m, client.RawPatch(types.MergePatchType, body)); err != nil {
		return fmt.Errorf("updating control-plane Machine %s in place: %w", m.Name, err)
	}
	return nil
}
