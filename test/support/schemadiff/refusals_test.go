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

package schemadiff

import (
	"reflect"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// breakSchema is a small schema with one constraint of each simple keyword.
const breakSchema = `
type: object
properties:
  spec:
    type: object
    required: [name]
    properties:
      name: {type: string, minLength: 1, maxLength: 8, pattern: "^[a-z]+$"}
      arch: {type: string, enum: [x86_64, aarch64]}
      path: {type: string, maxLength: 10, pattern: "^/[a-z/]*$"}
      port: {type: integer, minimum: 1, maximum: 65535}
      labels: {type: array, maxItems: 2, minItems: 1, items: {type: string, maxLength: 4}}
      refs:
        type: array
        maxItems: 1
        x-kubernetes-list-type: map
        x-kubernetes-list-map-keys: [name]
        items: {type: object, required: [name], properties: {name: {type: string}, kind: {type: string}}}
      endpoint: {type: object, minProperties: 1, properties: {host: {type: string}}}
  status:
    type: object
    properties:
      conditions:
        type: array
        items: {type: object, required: [reason], properties: {reason: {type: string}}}
`

func TestBreakBreaksOneConstraint(t *testing.T) {
	schema := &apiextensionsv1.JSONSchemaProps{}
	if err := yaml.Unmarshal([]byte(breakSchema), schema); err != nil {
		t.Fatal(err)
	}
	valid := map[string]any{"spec": map[string]any{"name": "abc", "path": "/etc", "labels": []any{"a"},
		"refs": []any{map[string]any{"name": "r", "kind": "K"}}, "endpoint": map[string]any{"host": "h"}}}
	spec := func(o map[string]any) map[string]any { return o["spec"].(map[string]any) }
	tests := []struct {
		path, what string
		want       func(map[string]any) any // the broken value, read from the broken object
		expect     any
	}{
		{"spec.name", "required", func(o map[string]any) any { _, ok := spec(o)["name"]; return ok }, false},
		{"spec.name", "minLength: 1", func(o map[string]any) any { return spec(o)["name"] }, ""},
		{"spec.name", "maxLength: 8", func(o map[string]any) any { return spec(o)["name"] }, "abcccccc" + "c"},
		{"spec.path", "maxLength: 10", func(o map[string]any) any { return spec(o)["path"] }, "/etc" + strings.Repeat("c", 7)},
		{"spec.path", "pattern: ^/[a-z/]*$", func(o map[string]any) any { return spec(o)["path"] }, "Not Valid!"},
		{"spec.name", "pattern: ^[a-z]+$", func(o map[string]any) any { return spec(o)["name"] }, "-"},
		{"spec.arch", "enum: aarch64, x86_64", func(o map[string]any) any { return spec(o)["arch"] }, "Not Valid!"},
		{"spec.port", "minimum: 1", func(o map[string]any) any { return spec(o)["port"] }, int64(0)},
		{"spec.port", "maximum: 65535", func(o map[string]any) any { return spec(o)["port"] }, int64(65536)},
		{"spec.labels", "maxItems: 2", func(o map[string]any) any { return spec(o)["labels"] }, []any{"a0", "a1", "a2"}},
		{"spec.labels", "minItems: 1", func(o map[string]any) any { return spec(o)["labels"] }, []any{}},
		{"spec.labels[*]", "maxLength: 4", func(o map[string]any) any { return spec(o)["labels"] }, []any{"aaaaa"}},
		{"spec.refs", "maxItems: 1", func(o map[string]any) any { return spec(o)["refs"] },
			[]any{map[string]any{"name": "r0", "kind": "K"}, map[string]any{"name": "r1", "kind": "K"}}},
		{"spec.endpoint", "minProperties: 1", func(o map[string]any) any { return spec(o)["endpoint"] }, map[string]any{}},
		// Objects and lists on the way are created.
		{"status.conditions[*].reason", "maxLength: 2", func(o map[string]any) any { return o["status"] },
			map[string]any{"conditions": []any{map[string]any{"reason": "aaa"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.path+" "+tt.what, func(t *testing.T) {
			before, _ := yaml.Marshal(valid)
			broken, err := Break(valid, schema, tt.path, tt.what)
			if err != nil {
				t.Fatal(err)
			}
			if got := tt.want(broken); !reflect.DeepEqual(got, tt.expect) {
				t.Errorf("broken value %#v, want %#v", got, tt.expect)
			}
			if after, _ := yaml.Marshal(valid); string(after) != string(before) {
				t.Errorf("Break changed its argument:\n%s", after)
			}
			// Every other field is as it was.
			for k, v := range spec(valid) {
				if !strings.HasPrefix(tt.path, "spec."+k) && !reflect.DeepEqual(spec(broken)[k], v) {
					t.Errorf("%s changed to %#v", k, spec(broken)[k])
				}
			}
		})
	}
}

func TestBreakSaysWhatItCannotBuild(t *testing.T) {
	schema := &apiextensionsv1.JSONSchemaProps{}
	if err := yaml.Unmarshal([]byte(breakSchema), schema); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ obj, path, what, err string }{
		{`{spec: {}}`, "spec.labels", "maxItems: 2", "no item to copy"},
		{`{spec: {}}`, "spec.nothere", "maxLength: 2", "no field nothere"},
		{`{spec: {}}`, "spec", "rule: self.x", "no refusal is built for rule"},
		{`{spec: {name: abcdefghij}}`, "spec.name", "maxLength: 8", "longer than 8 already"},
		{`{spec: {}}`, "spec.labels[*]", "pattern: .*", "no candidate string"},
	} {
		obj := map[string]any{}
		if err := yaml.Unmarshal([]byte(tt.obj), &obj); err != nil {
			t.Fatal(err)
		}
		_, err := Break(obj, schema, tt.path, tt.what)
		if err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%s %s: error %v, want one containing %q", tt.path, tt.what, err, tt.err)
		}
	}
}

func TestMessageMatches(t *testing.T) {
	got := `OpenshiftAssistedConfig.bootstrap.cluster.x-k8s.io "c" is invalid: spec.kernelArguments: Too many: 65: must have at most 64 items`
	for msg, want := range map[string]bool{
		"Too many: ...: must have at most 64 items": true,
		"Too many: ...: must have at most 32 items": false,
		"must have at most 64 items ... Too many":   false,
		"Too long: may not be more than 64 bytes":   false,
		"...": true,
	} {
		if MessageMatches(got, msg) != want {
			t.Errorf("MessageMatches(%q) = %v, want %v", msg, !want, want)
		}
	}
}

func TestFieldPathAndTokens(t *testing.T) {
	if got := FieldPath("status.conditions[*].reason"); got != "status.conditions[0].reason" {
		t.Errorf("FieldPath: %s", got)
	}
	if got := tokens("spec.a[*].b{*}.c"); !reflect.DeepEqual(got, []string{"spec", "a", "[*]", "b", "{*}", "c"}) {
		t.Errorf("tokens: %q", got)
	}
}

func TestInventoryRowMessage(t *testing.T) {
	r := InventoryRow{What: "maxItems: 64", Outcome: "refused: `Too many: ...: must have at most 64 items`; could not have worked"}
	if !r.Simple() || !r.Refused() || r.Message() != "Too many: ...: must have at most 64 items" {
		t.Errorf("row %+v: simple %v, refused %v, message %q", r, r.Simple(), r.Refused(), r.Message())
	}
	rule := InventoryRow{What: "rule: self.x", Outcome: "refused: “x”"}
	if rule.Simple() || rule.Message() != "" {
		t.Errorf("a rule row: simple %v, message %q", rule.Simple(), rule.Message())
	}
}
