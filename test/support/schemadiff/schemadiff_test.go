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
	"slices"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/utils/ptr"
)

func str() apiextensionsv1.JSONSchemaProps { return apiextensionsv1.JSONSchemaProps{Type: "string"} }

// TestAddedListsWhatOursRefuses: every kind of constraint ours adds on a path upstream has is
// listed, and none on a path upstream lacks or that upstream has too.
func TestAddedListsWhatOursRefuses(t *testing.T) {
	upstream := &apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
		"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"name":  {Type: "string", MaxLength: ptr.To[int64](10)},
			"arch":  str(),
			"items": {Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{Type: "string"}}},
			"count": {Type: "integer"},
			"shape": {Type: "object"},
		}},
	}}
	ours := upstream.DeepCopy()
	spec := ours.Properties["spec"]
	name := spec.Properties["name"]
	name.MaxLength = ptr.To[int64](20) // looser than upstream's: nothing to list
	name.XValidations = apiextensionsv1.ValidationRules{{Rule: "self != ''", Message: "name is empty"}}
	spec.Properties["name"] = name
	arch := spec.Properties["arch"]
	arch.Enum = []apiextensionsv1.JSON{{Raw: []byte(`"x86_64"`)}}
	spec.Properties["arch"] = arch
	items := spec.Properties["items"]
	items.MaxItems = ptr.To[int64](3)
	items.Items.Schema.MinLength = ptr.To[int64](1)
	spec.Properties["items"] = items
	count := spec.Properties["count"]
	count.Minimum = ptr.To(1.0)
	spec.Properties["count"] = count
	shape := spec.Properties["shape"]
	shape.Type = "array"
	spec.Properties["shape"] = shape
	spec.Properties["ours"] = apiextensionsv1.JSONSchemaProps{Type: "string", MinLength: ptr.To[int64](1)} // upstream lacks the path
	spec.Required = []string{"arch", "ours"}
	ours.Properties["spec"] = spec

	var got []string
	for _, c := range Added(ours, upstream) {
		got = append(got, c.Key())
	}
	want := []string{
		"spec.arch | enum: x86_64",
		"spec.arch | required",
		"spec.count | minimum: 1",
		"spec.items | maxItems: 3",
		"spec.items[*] | minLength: 1",
		"spec.name | rule: self != ''",
		"spec.shape | type array (upstream object)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
	if extra := Added(upstream, upstream); len(extra) != 0 {
		t.Errorf("a schema adds nothing to itself, got %v", extra)
	}
}

func TestSplitRow(t *testing.T) {
	got := splitRow("| Kind | v1, v2 | `spec.a` | `rule: a \\|\\| b` | refused |")
	want := []string{"Kind", "v1, v2", "`spec.a`", "`rule: a || b`", "refused"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
