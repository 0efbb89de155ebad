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
	"strings"

	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The hub's assisted-service CRDs are newer than the Go types this project pins
// (github.com/openshift/assisted-service/api of 2024-05). The AgentClusterInstall fields the
// control plane needs that those types lack (spec.provisionRequirements.arbiterAgents,
// spec.mirrorRegistryRef) are written as unstructured fields: in the same write that creates the
// AgentClusterInstall, so assisted-service never sees it without them, and afterwards by a merge
// patch of those fields alone, so every other field, known to the types or not, is kept. Writes
// use strict field validation: a hub whose CRD lacks a field refuses the write rather than
// pruning the field in silence.

// newerField is an AgentClusterInstall field the pinned Go types lack, and the value the
// control plane wants in it. A nil value wants the field absent.
type newerField struct {
	path  []string
	value any
}

// hasValues tells whether any of fields wants a value (rather than the field's absence).
func hasValues(fields []newerField) bool {
	for _, f := range fields {
		if f.value != nil {
			return true
		}
	}
	return false
}

// createWithNewerFields creates aci (its desired state, controller reference set) with fields,
// in one write with strict field validation.
func (r *OpenshiftAssistedControlPlaneReconciler) createWithNewerFields(ctx context.Context, aci *hiveextv1beta1.AgentClusterInstall, fields []newerField) error {
	aci.SetGroupVersionKind(hiveextv1beta1.GroupVersion.WithKind("AgentClusterInstall"))
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(aci)
	if err != nil {
		return fmt.Errorf("converting AgentClusterInstall %s: %w", aci.Name, err)
	}
	u := &unstructured.Unstructured{Object: raw}
	for _, f := range fields {
		if f.value == nil {
			continue
		}
		if err := unstructured.SetNestedField(u.Object, f.value, f.path...); err != nil {
			return fmt.Errorf("setting %s: %w", strings.Join(f.path, "."), err)
		}
	}
	if err := r.Client.Create(ctx, u, client.FieldValidation(metav1.FieldValidationStrict)); err != nil {
		return newerFieldsRefusal(aci.Name, err)
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, aci); err != nil {
		return fmt.Errorf("converting AgentClusterInstall %s: %w", aci.Name, err)
	}
	return nil
}

// writeNewerFields brings fields of the AgentClusterInstall to their wanted values, by one merge
// patch of those that differ, with strict field validation. The typed object cannot carry them:
// the AgentClusterInstall is read live (the client caches no unstructured objects), once per
// reconcile until its installation starts.
func (r *OpenshiftAssistedControlPlaneReconciler) writeNewerFields(ctx context.Context, aci *hiveextv1beta1.AgentClusterInstall, fields []newerField) error {
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(hiveextv1beta1.GroupVersion.WithKind("AgentClusterInstall"))
	if err := r.Client.Get(ctx, client.ObjectKeyFromObject(aci), live); err != nil {
		return fmt.Errorf("reading AgentClusterInstall %s: %w", aci.Name, err)
	}
	patch := map[string]any{}
	for _, f := range fields {
		got, found, _ := unstructured.NestedFieldNoCopy(live.Object, f.path...)
		if (f.value == nil && !found) || (found && apiequality.Semantic.DeepEqual(got, f.value)) {
			continue
		}
		// A nil value in a merge patch removes the field (RFC 7386).
		if err := unstructured.SetNestedField(patch, f.value, f.path...); err != nil {
			return fmt.Errorf("patching %s: %w", strings.Join(f.path, "."), err)
		}
	}
	if len(patch) == 0 {
		return nil
	}
	raw, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	if err := r.Client.Patch(ctx, live, client.RawPatch(types.MergePatchType, raw), client.FieldValidation(metav1.FieldValidationStrict)); err != nil {
		return newerFieldsRefusal(aci.Name, err)
	}
	return nil
}

// newerFieldsRefusal is the error of a write of newer fields that the API server refused: a
// problem the user can act on when the hub cannot install what the spec asks for.
func newerFieldsRefusal(aciName string, err error) error {
	if problem := arbiterRefusal(err); problem != nil {
		return problem
	}
	return fmt.Errorf("writing AgentClusterInstall %s: %w", aciName, err)
}
