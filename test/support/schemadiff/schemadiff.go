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

// Package schemadiff lists the constraints a CRD version's OpenAPI schema adds, on the paths an
// upstream project's schema of the same kind and version also has: each one is a value that
// upstream accepted and this project may refuse. The crd tests compare that list with the
// inventory in docs/migration.md, so that no constraint is added or dropped without a review.
package schemadiff

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// Constraint is one constraint of ours on a path upstream's schema has: Path is the field's
// path from the object's root (`spec.config.baseDomain`; `[*]` for a list's items, `{*}` for a
// map's values), What the constraint (`required`, `enum: a, b`, `rule: <CEL>`, ...).
type Constraint struct {
	Path string
	What string
	// Message is a CEL rule's message, empty for the other constraints.
	Message string
}

// Key is the constraint as the inventory names it.
func (c Constraint) Key() string { return c.Path + " | " + c.What }

// Added lists the constraints ours adds to upstream's schema, by path.
func Added(ours, upstream *apiextensionsv1.JSONSchemaProps) []Constraint {
	var out []Constraint
	walk("", ours, upstream, &out)
	sort.Slice(out, func(i, j int) bool { return out[i].Key() < out[j].Key() })
	return slices.CompactFunc(out, func(a, b Constraint) bool { return a.Key() == b.Key() })
}

func join(path, field string) string {
	if path == "" {
		return field
	}
	return path + "." + field
}

func walk(path string, ours, up *apiextensionsv1.JSONSchemaProps, out *[]Constraint) {
	if ours == nil || up == nil {
		return
	}
	add := func(what string) { *out = append(*out, Constraint{Path: orRoot(path), What: what}) }
	if ours.Type != up.Type && up.Type != "" && (!ours.XIntOrString || !up.XIntOrString) {
		add(fmt.Sprintf("type %s (upstream %s)", orAny(ours.Type), up.Type))
	} else if ours.Type != "" && up.Type == "" && !up.XIntOrString && !preserves(up) {
		add(fmt.Sprintf("type %s (upstream any)", ours.Type))
	}
	if up.XIntOrString && !ours.XIntOrString {
		add(fmt.Sprintf("type %s (upstream int-or-string)", orAny(ours.Type)))
	}
	if up.Nullable && !ours.Nullable {
		add("not nullable (upstream nullable)")
	}
	if len(ours.Enum) > 0 {
		if missing := enumMissing(ours.Enum, up.Enum); len(up.Enum) == 0 || len(missing) > 0 {
			add("enum: " + enumString(ours.Enum))
		}
	}
	if ours.Pattern != "" && ours.Pattern != up.Pattern {
		add("pattern: " + ours.Pattern)
	}
	if ours.Format != "" && ours.Format != up.Format {
		add("format: " + ours.Format)
	}
	if ours.Minimum != nil && (up.Minimum == nil || *ours.Minimum > *up.Minimum) {
		add(fmt.Sprintf("minimum: %v", *ours.Minimum))
	}
	if ours.Maximum != nil && (up.Maximum == nil || *ours.Maximum < *up.Maximum) {
		add(fmt.Sprintf("maximum: %v", *ours.Maximum))
	}
	if ours.ExclusiveMinimum && !up.ExclusiveMinimum {
		add("exclusiveMinimum")
	}
	if ours.ExclusiveMaximum && !up.ExclusiveMaximum {
		add("exclusiveMaximum")
	}
	if ours.MultipleOf != nil && (up.MultipleOf == nil || *ours.MultipleOf != *up.MultipleOf) {
		add(fmt.Sprintf("multipleOf: %v", *ours.MultipleOf))
	}
	lower := func(name string, o, u *int64) {
		if o != nil && (u == nil || *o > *u) {
			add(fmt.Sprintf("%s: %d", name, *o))
		}
	}
	upper := func(name string, o, u *int64) {
		if o != nil && (u == nil || *o < *u) {
			add(fmt.Sprintf("%s: %d", name, *o))
		}
	}
	lower("minLength", ours.MinLength, up.MinLength)
	upper("maxLength", ours.MaxLength, up.MaxLength)
	lower("minItems", ours.MinItems, up.MinItems)
	upper("maxItems", ours.MaxItems, up.MaxItems)
	lower("minProperties", ours.MinProperties, up.MinProperties)
	upper("maxProperties", ours.MaxProperties, up.MaxProperties)
	if ours.UniqueItems && !up.UniqueItems {
		add("uniqueItems")
	}
	if lt := deref(ours.XListType); (lt == "map" || lt == "set") && lt != deref(up.XListType) {
		if lt == "map" {
			add("listType map, keys " + strings.Join(ours.XListMapKeys, ", "))
		} else {
			add("listType set")
		}
	} else if lt == "map" && !slices.Equal(ours.XListMapKeys, up.XListMapKeys) {
		add("listType map, keys " + strings.Join(ours.XListMapKeys, ", "))
	}
	if preserves(up) && !preserves(ours) && len(up.Properties) == 0 && len(ours.Properties) > 0 {
		add("fields of its own (upstream: any fields)")
	}
	upRules := map[string]bool{}
	for _, r := range up.XValidations {
		upRules[r.Rule] = true
	}
	for _, r := range ours.XValidations {
		if !upRules[r.Rule] {
			msg := r.Message
			if msg == "" && r.MessageExpression != "" {
				msg = "(expression) " + r.MessageExpression
			}
			*out = append(*out, Constraint{Path: orRoot(path), What: "rule: " + r.Rule, Message: msg})
		}
	}
	for _, f := range ours.Required {
		if _, upstreamHas := up.Properties[f]; upstreamHas && !slices.Contains(up.Required, f) {
			*out = append(*out, Constraint{Path: join(path, f), What: "required"})
		}
	}
	for name, o := range ours.Properties {
		u, ok := up.Properties[name]
		if !ok {
			continue
		}
		walk(join(path, name), &o, &u, out)
	}
	if ours.Items != nil && up.Items != nil {
		walk(path+"[*]", ours.Items.Schema, up.Items.Schema, out)
	}
	if ours.AdditionalProperties != nil && up.AdditionalProperties != nil {
		walk(path+"{*}", ours.AdditionalProperties.Schema, up.AdditionalProperties.Schema, out)
	}
}

func preserves(s *apiextensionsv1.JSONSchemaProps) bool {
	return s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields
}

func orRoot(path string) string {
	if path == "" {
		return "(root)"
	}
	return path
}

func orAny(t string) string {
	if t == "" {
		return "any"
	}
	return t
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func enumValues(vals []apiextensionsv1.JSON) []string {
	out := make([]string, 0, len(vals))
	for _, v := range vals {
		var s any
		if err := json.Unmarshal(v.Raw, &s); err == nil {
			out = append(out, fmt.Sprint(s))
		} else {
			out = append(out, string(v.Raw))
		}
	}
	return out
}

func enumString(vals []apiextensionsv1.JSON) string {
	v := enumValues(vals)
	sort.Strings(v)
	return strings.Join(v, ", ")
}

// enumMissing: the values of upstream's enum that ours lacks.
func enumMissing(ours, up []apiextensionsv1.JSON) []string {
	o := enumValues(ours)
	var missing []string
	for _, v := range enumValues(up) {
		if !slices.Contains(o, v) {
			missing = append(missing, v)
		}
	}
	return missing
}
