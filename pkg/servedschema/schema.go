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

// Package servedschema writes the provider's objects in the shape that the API server serves
// when that is not the shape of this project's CRDs.
//
// HyperShift installs its own copy of openshift/cluster-api-provider-agent's CRDs, over ours,
// each time `hypershift install` runs (cmd/install/assets/crds/cluster-api-provider-agent, applied
// server-side with forced ownership; the multicluster engine's add-on re-runs it). That copy has
// upstream's v1beta1 status: Cluster API v1beta1 conditions (reason and message at least one
// character long when present, a severity), failure domains as a map, a required
// status.clusterDeploymentReference, no status.initialization; it is labelled for the v1beta1
// contract, so Cluster API reads status.ready. A status written in our shape is refused there
// (an empty message, a missing clusterDeploymentReference) or pruned.
//
// Client reads the served schema from OpenAPI v3 discovery (which every authenticated user may
// read; HyperShift grants the provider no cluster-scoped rights, so the CRD itself cannot be
// read) and, when it is not ours, rewrites each merge patch of an adapted kind to fit it (Adapt).
package servedschema

import (
	"encoding/json"
	"fmt"
	"maps"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/openapi"
)

// Schema is the OpenAPI v3 schema of one kind, decoded from JSON.
type Schema map[string]any

// Fetch reads the schema of gvk that the API server publishes. It returns nil, and no error,
// when the group version or the kind is not published (yet).
func Fetch(oa openapi.Client, gvk schema.GroupVersionKind) (Schema, error) {
	paths, err := oa.Paths()
	if err != nil {
		return nil, fmt.Errorf("reading the OpenAPI v3 paths: %w", err)
	}
	gv, ok := paths["apis/"+gvk.Group+"/"+gvk.Version]
	if !ok {
		return nil, nil
	}
	data, err := gv.Schema("application/json")
	if err != nil {
		return nil, fmt.Errorf("reading the OpenAPI v3 schema of %s: %w", gvk.GroupVersion(), err)
	}
	var doc struct {
		Components struct {
			Schemas map[string]Schema `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("decoding the OpenAPI v3 schema of %s: %w", gvk.GroupVersion(), err)
	}
	for _, s := range doc.Components.Schemas {
		kinds, _ := s["x-kubernetes-group-version-kind"].([]any)
		for _, k := range kinds {
			if k, ok := k.(map[string]any); ok && k["group"] == gvk.Group && k["version"] == gvk.Version && k["kind"] == gvk.Kind {
				return s, nil
			}
		}
	}
	return nil, nil
}

// Declares says whether the schema declares the property at path (each element a property
// name; "[]" steps into an array's items).
func (s Schema) Declares(path ...string) bool {
	node := map[string]any(s)
	for _, p := range path {
		var next any
		if p == "[]" {
			next = node["items"]
		} else {
			props, _ := node["properties"].(map[string]any)
			next = props[p]
		}
		var ok bool
		if node, ok = next.(map[string]any); !ok {
			return false
		}
	}
	return true
}

// Adapt rewrites a JSON merge patch of the kind (decoded from JSON) so that the schema accepts
// it and means by it what we mean, and returns it:
//   - a property the schema does not declare is left out (the API server would prune it, with a
//     warning), as is a value of the wrong JSON type (a list where the schema has a map, as
//     upstream's status.failureDomains);
//   - an empty string where the schema asks for at least one character, in a property that is
//     not required, is left out: absent is what "empty" means there (Cluster API v1beta1
//     conditions: reason and message are omitempty);
//   - a required object property that an object of the patch lacks is added empty, and one
//     the patch removes is emptied instead (upstream's required status.clusterDeploymentReference:
//     merged into what is stored, an empty object changes nothing and makes the field present);
//   - a Cluster API v1beta1 condition whose status is False gets a severity (see Severity).
//
// Properties under metadata, apiVersion and kind are kept as they are.
func (s Schema) Adapt(patch map[string]any) map[string]any {
	rest := maps.Clone(patch)
	kept := map[string]any{}
	for _, k := range []string{"metadata", "apiVersion", "kind"} {
		if v, ok := rest[k]; ok {
			kept[k] = v
			delete(rest, k)
		}
	}
	out := adaptObject(s, rest)
	maps.Copy(out, kept)
	return out
}

// declaresAny says whether values under node may be anything: no declared structure, or
// x-kubernetes-preserve-unknown-fields, or a reference (resolved elsewhere; left alone).
func declaresAny(node map[string]any) bool {
	if preserve, _ := node["x-kubernetes-preserve-unknown-fields"].(bool); preserve {
		return true
	}
	if _, ok := node["$ref"]; ok {
		return true
	}
	if _, ok := node["allOf"]; ok {
		return true
	}
	_, props := node["properties"]
	_, items := node["items"]
	_, addl := node["additionalProperties"]
	return !props && !items && !addl && node["type"] == nil
}

// adapt returns v as the schema node accepts it, and whether to keep it at all.
func adapt(node map[string]any, v any) (any, bool) {
	if v == nil || declaresAny(node) {
		return v, true
	}
	switch val := v.(type) {
	case map[string]any:
		if node["type"] != nil && node["type"] != "object" {
			return nil, false
		}
		return adaptObject(node, val), true
	case []any:
		if node["type"] != "array" {
			return nil, false
		}
		items, _ := node["items"].(map[string]any)
		out := make([]any, 0, len(val))
		for _, item := range val {
			if items == nil {
				out = append(out, item)
				continue
			}
			if a, keep := adapt(items, item); keep {
				out = append(out, a)
			}
		}
		return out, true
	default:
		if t, _ := node["type"].(string); t == "object" || t == "array" {
			return nil, false
		}
		return v, true
	}
}

func adaptObject(node map[string]any, obj map[string]any) map[string]any {
	props, _ := node["properties"].(map[string]any)
	addl, _ := node["additionalProperties"].(map[string]any)
	required := map[string]bool{}
	if req, ok := node["required"].([]any); ok {
		for _, r := range req {
			if r, ok := r.(string); ok {
				required[r] = true
			}
		}
	}
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		sub, declared := props[k].(map[string]any)
		if !declared {
			if addl == nil {
				continue // not declared: the API server would prune it
			}
			sub = addl
		}
		if v == nil && required[k] {
			// A required property cannot be removed: an object one is emptied instead.
			if empty, ok := emptied(sub); ok {
				out[k] = empty
			}
			continue
		}
		if s, ok := v.(string); ok && s == "" && minLength(sub) > 0 && !required[k] {
			continue // absent, as the omitempty of the served type writes it
		}
		if a, keep := adapt(sub, v); keep {
			out[k] = a
		}
	}
	for r := range required {
		if _, ok := out[r]; ok {
			continue
		}
		if sub, ok := props[r].(map[string]any); ok && sub["type"] == "object" {
			out[r] = map[string]any{}
		}
	}
	if isV1Beta1Condition(props) && out["status"] == "False" && out["severity"] == nil {
		out["severity"] = Severity(fmt.Sprint(out["reason"]))
	}
	return out
}

// emptied returns the merge patch that empties an object property: each declared property null.
func emptied(node map[string]any) (map[string]any, bool) {
	if node["type"] != "object" {
		return nil, false
	}
	out := map[string]any{}
	if props, ok := node["properties"].(map[string]any); ok {
		for k := range props {
			out[k] = nil
		}
	}
	return out, true
}

func minLength(node map[string]any) float64 {
	n, _ := node["minLength"].(float64)
	return n
}

// isV1Beta1Condition says whether an object with these properties is a Cluster API v1beta1
// condition (sigs.k8s.io/cluster-api/api/core/v1beta1 Condition): a type, a status, a
// lastTransitionTime and a severity.
func isV1Beta1Condition(props map[string]any) bool {
	for _, p := range []string{"type", "status", "lastTransitionTime", "severity"} {
		if _, ok := props[p]; !ok {
			return false
		}
	}
	return true
}

// Severity classifies the reason of a False condition as Cluster API v1beta1 conditions do
// (ConditionSeverity; set only when the status is False): Info for a wait or a deletion in
// progress, which resolves itself, and Warning for everything else, which asks for a look.
func Severity(reason string) string {
	for _, p := range []string{"Waiting", "Deleting", "Draining", "Creating", "Provisioning"} {
		if strings.HasPrefix(reason, p) {
			return "Info"
		}
	}
	return "Warning"
}
