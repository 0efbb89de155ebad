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
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/testenv"
)

// RefusalsTest is the test, in each crd package, that CheckRefusals runs from: the inventory's
// column "refusal checked by" names it for every row of a simple keyword.
const RefusalsTest = "TestInventoriedRefusals"

// simpleKeywords are the schema keywords whose refusal Break builds from the row alone.
var simpleKeywords = []string{"required", "minLength", "maxLength", "minItems", "maxItems",
	"minProperties", "maxProperties", "pattern", "minimum", "maximum", "enum", "format"}

// InventoryRow is one row of the inventory's tables.
type InventoryRow struct {
	// Line is the row's line in docs/migration.md, from 1.
	Line     int
	Kind     string
	Versions []string
	// Path and What are the row's path and constraint, without their backquotes.
	Path, What string
	// Outcome is the column "upstream's value: what happens", CheckedBy "refusal checked by".
	Outcome, CheckedBy string
}

// Keyword is the schema keyword of the row's constraint (`maxLength`, `rule`, `required`, ...).
func (r InventoryRow) Keyword() string {
	k, _, _ := strings.Cut(r.What, ":")
	k, _, _ = strings.Cut(k, " ")
	return k
}

// Simple says whether Break builds the row's refusal: a keyword of simpleKeywords.
func (r InventoryRow) Simple() bool { return slices.Contains(simpleKeywords, r.Keyword()) }

// Refused says whether the row says upstream's value is refused.
func (r InventoryRow) Refused() bool { return strings.HasPrefix(r.Outcome, "refused") }

// Message is the API server's message the row quotes: the text in backquotes after "refused:",
// "" when it quotes none.
func (r InventoryRow) Message() string {
	_, rest, ok := strings.Cut(r.Outcome, "refused: `")
	if !ok {
		return ""
	}
	msg, _, ok := strings.Cut(rest, "`")
	if !ok {
		return ""
	}
	return msg
}

// InventoryRows reads the rows of kinds from the inventory in docs/migration.md.
func InventoryRows(kinds ...string) ([]InventoryRow, error) {
	root, err := testenv.RepoRoot()
	if err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join(root, inventoryDoc))
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	return parseRows(f, kinds)
}

func parseRows(f *os.File, kinds []string) ([]InventoryRow, error) {
	var out []InventoryRow
	in := false
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; s.Scan(); n++ {
		line := s.Text()
		if strings.HasPrefix(line, "## ") {
			in = line == inventorySection
			continue
		}
		if !in || !strings.HasPrefix(line, "| ") {
			continue
		}
		cells := splitRow(line)
		if len(cells) < 6 || !slices.Contains(kinds, cells[0]) || !isCode(cells[2]) || !isCode(cells[3]) {
			continue
		}
		r := InventoryRow{Line: n, Kind: cells[0], Path: strings.Trim(cells[2], "`"), What: strings.Trim(cells[3], "`"),
			Outcome: cells[4], CheckedBy: cells[5]}
		for _, v := range strings.Split(cells[1], ",") {
			r.Versions = append(r.Versions, strings.TrimSpace(v))
		}
		out = append(out, r)
	}
	return out, s.Err()
}

// MessageMatches says whether the API server's error text holds the row's quoted message, each
// `...` of it standing for any text.
func MessageMatches(got, message string) bool {
	for _, part := range strings.Split(message, "...") {
		part = strings.TrimSpace(part)
		i := strings.Index(got, part)
		if i < 0 {
			return false
		}
		got = got[i+len(part):]
	}
	return true
}

// FieldPath is the path the API server names for the first value at path: `[*]` is item 0.
func FieldPath(path string) string {
	if i := strings.Index(path, "{*}"); i >= 0 {
		path = path[:i]
	}
	return strings.ReplaceAll(path, "[*]", "[0]")
}

// tokens splits `spec.a[*].b` into spec, a, [*], b.
func tokens(path string) []string {
	var out []string
	for _, part := range strings.Split(path, ".") {
		for {
			i := strings.IndexAny(part, "[{")
			if i < 0 {
				break
			}
			if i > 0 {
				out = append(out, part[:i])
			}
			out = append(out, part[i:i+3])
			part = part[i+3:]
		}
		if part != "" {
			out = append(out, part)
		}
	}
	return out
}

// Break returns a copy of obj (an object of the kind, as JSON decodes it) in which the value at
// path breaks the constraint what of schema (the version's OpenAPI schema) and nothing else:
// required removes the field; minLength gives a string one byte shorter, maxLength extends the
// value (or "a") to one byte more, repeating its last byte; minItems and maxItems give one item
// fewer or more, copies of the first item the object holds, made distinct (a string item and a
// list map's keys get a suffix); minProperties and maxProperties one property fewer or more;
// minimum and maximum a number one below or above; enum, pattern and format a string they refuse
// within the value's length bounds. Objects and lists on the way are created as needed (a list
// with one empty object); every item of a `[*]` list is broken.
func Break(obj map[string]any, schema *apiextensionsv1.JSONSchemaProps, path, what string) (map[string]any, error) {
	kw, arg, _ := strings.Cut(what, ":")
	arg = strings.TrimSpace(arg)
	leaf, err := breaker(kw, arg)
	if err != nil {
		return nil, err
	}
	cp, ok := runtime.DeepCopyJSONValue(obj).(map[string]any)
	if !ok {
		return nil, fmt.Errorf("not an object")
	}
	out, keep, err := rewrite(cp, true, schema, tokens(path), leaf)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", path, what, err)
	}
	if !keep {
		return nil, fmt.Errorf("%s %s: cannot remove the object itself", path, what)
	}
	return out.(map[string]any), nil
}

type leafFunc func(v any, present bool, s *apiextensionsv1.JSONSchemaProps) (any, bool, error)

func rewrite(v any, present bool, s *apiextensionsv1.JSONSchemaProps, toks []string, leaf leafFunc) (any, bool, error) {
	if s == nil {
		return nil, false, fmt.Errorf("the schema has no such path")
	}
	if len(toks) == 0 {
		return leaf(v, present, s)
	}
	switch tok := toks[0]; tok {
	case "[*]":
		if s.Items == nil || s.Items.Schema == nil {
			return nil, false, fmt.Errorf("the schema has no items")
		}
		list, _ := v.([]any)
		if len(list) == 0 {
			list = []any{map[string]any{}}
		}
		for i := range list {
			nv, keep, err := rewrite(list[i], true, s.Items.Schema, toks[1:], leaf)
			if err != nil {
				return nil, false, err
			}
			if !keep {
				return nil, false, fmt.Errorf("cannot remove a list's item")
			}
			list[i] = nv
		}
		return list, true, nil
	case "{*}":
		if s.AdditionalProperties == nil || s.AdditionalProperties.Schema == nil {
			return nil, false, fmt.Errorf("the schema has no additional properties")
		}
		m, _ := v.(map[string]any)
		if len(m) == 0 {
			m = map[string]any{"key": map[string]any{}}
		}
		for k := range m {
			nv, keep, err := rewrite(m[k], true, s.AdditionalProperties.Schema, toks[1:], leaf)
			if err != nil {
				return nil, false, err
			}
			if keep {
				m[k] = nv
			} else {
				delete(m, k)
			}
		}
		return m, true, nil
	default:
		m, _ := v.(map[string]any)
		if m == nil {
			m = map[string]any{}
		}
		child, ok := s.Properties[tok]
		if !ok {
			return nil, false, fmt.Errorf("the schema has no field %s", tok)
		}
		cur, has := m[tok]
		nv, keep, err := rewrite(cur, has, &child, toks[1:], leaf)
		if err != nil {
			return nil, false, err
		}
		if keep {
			m[tok] = nv
		} else {
			delete(m, tok)
		}
		return m, true, nil
	}
}

func breaker(kw, arg string) (leafFunc, error) {
	num := func() (int, error) { return strconv.Atoi(arg) }
	switch kw {
	case "required":
		return func(any, bool, *apiextensionsv1.JSONSchemaProps) (any, bool, error) { return nil, false, nil }, nil
	case "minLength", "maxLength":
		n, err := num()
		if err != nil {
			return nil, err
		}
		if kw == "minLength" {
			return func(any, bool, *apiextensionsv1.JSONSchemaProps) (any, bool, error) {
				return strings.Repeat("a", max(n-1, 0)), true, nil
			}, nil
		}
		return func(v any, _ bool, _ *apiextensionsv1.JSONSchemaProps) (any, bool, error) {
			s, _ := v.(string)
			if s == "" {
				s = "a"
			}
			if len(s) > n {
				return nil, false, fmt.Errorf("the value is longer than %d already", n)
			}
			return s + strings.Repeat(s[len(s)-1:], n+1-len(s)), true, nil
		}, nil
	case "minItems", "maxItems":
		n, err := num()
		if err != nil {
			return nil, err
		}
		want := n + 1
		if kw == "minItems" {
			want = n - 1
		}
		return func(v any, _ bool, s *apiextensionsv1.JSONSchemaProps) (any, bool, error) {
			list, _ := v.([]any)
			if len(list) == 0 {
				return nil, false, fmt.Errorf("the object holds no item to copy")
			}
			out := make([]any, 0, want)
			for i := range want {
				out = append(out, distinct(list[0], i, s))
			}
			return out, true, nil
		}, nil
	case "minProperties", "maxProperties":
		n, err := num()
		if err != nil {
			return nil, err
		}
		return func(v any, _ bool, _ *apiextensionsv1.JSONSchemaProps) (any, bool, error) {
			m, _ := v.(map[string]any)
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			out := map[string]any{}
			if kw == "minProperties" {
				for _, k := range keys[:min(max(n-1, 0), len(keys))] {
					out[k] = m[k]
				}
				return out, true, nil
			}
			if len(keys) == 0 {
				return nil, false, fmt.Errorf("the object holds no property to copy")
			}
			for i := 0; i <= n; i++ {
				out[keys[0]+strconv.Itoa(i)] = runtime.DeepCopyJSONValue(m[keys[0]])
			}
			return out, true, nil
		}, nil
	case "minimum", "maximum":
		f, err := strconv.ParseFloat(arg, 64)
		if err != nil {
			return nil, err
		}
		if kw == "minimum" {
			f--
		} else {
			f++
		}
		return func(_ any, _ bool, s *apiextensionsv1.JSONSchemaProps) (any, bool, error) {
			if s.Type == "integer" {
				return int64(f), true, nil
			}
			return f, true, nil
		}, nil
	case "pattern":
		re, err := regexp.Compile(arg)
		if err != nil {
			return nil, err
		}
		return func(_ any, _ bool, s *apiextensionsv1.JSONSchemaProps) (any, bool, error) {
			return refusedString(s, func(c string) bool { return !re.MatchString(c) })
		}, nil
	case "enum":
		return func(_ any, _ bool, s *apiextensionsv1.JSONSchemaProps) (any, bool, error) {
			values := enumValues(s.Enum)
			return refusedString(s, func(c string) bool { return !slices.Contains(values, c) })
		}, nil
	case "format":
		return func(_ any, _ bool, s *apiextensionsv1.JSONSchemaProps) (any, bool, error) {
			return refusedString(s, func(c string) bool { return strings.ContainsAny(c, " !") })
		}, nil
	}
	return nil, fmt.Errorf("no refusal is built for %s", kw)
}

// refusedCandidates are strings a pattern, enum or format may refuse, tried in order.
var refusedCandidates = []string{"Not Valid!", "not valid", "-", "_", "a b", "relative/path", "NotValid", "x", `$HOME "quoted"`}

// refusedString is the first candidate that refused accepts and that fits s's length bounds.
func refusedString(s *apiextensionsv1.JSONSchemaProps, refused func(string) bool) (any, bool, error) {
	for _, c := range refusedCandidates {
		if s.MinLength != nil && int64(len(c)) < *s.MinLength || s.MaxLength != nil && int64(len(c)) > *s.MaxLength {
			continue
		}
		if refused(c) {
			return c, true, nil
		}
	}
	return nil, false, fmt.Errorf("no candidate string is refused within the length bounds")
}

// distinct is the i-th copy of item for a list of schema s: a string item gets the suffix i, an
// object item of a list map gets it on its keys.
func distinct(item any, i int, s *apiextensionsv1.JSONSchemaProps) any {
	cp := runtime.DeepCopyJSONValue(item)
	switch v := cp.(type) {
	case string:
		return v + strconv.Itoa(i)
	case map[string]any:
		for _, k := range s.XListMapKeys {
			if str, ok := v[k].(string); ok {
				v[k] = str + strconv.Itoa(i)
			}
		}
	}
	return cp
}

// CheckRefusals checks, with the real API server c reaches, every refused row of a simple
// keyword of the crds' kinds: for each version the row names, base(kind, version) is a valid
// object of that version (which the API server must accept, status included), and the object
// Break makes of it must be refused as invalid with the row's quoted message, on the row's path
// (created; for a status path, the status written through the status subresource).
func CheckRefusals(tb testing.TB, c client.Client, ns string, crds []*apiextensionsv1.CustomResourceDefinition,
	base func(kind, version string) map[string]any) {
	tb.Helper()
	ctx := context.Background()
	kinds := map[string]*apiextensionsv1.CustomResourceDefinition{}
	names := make([]string, 0, len(crds))
	for _, crd := range crds {
		kinds[crd.Spec.Names.Kind] = crd
		names = append(names, crd.Spec.Names.Kind)
	}
	rows, err := InventoryRows(names...)
	if err != nil {
		tb.Fatal(err)
	}
	checked := 0
	validated := map[string]bool{}
	for _, r := range rows {
		if !r.Simple() || !r.Refused() {
			continue
		}
		for _, version := range r.Versions {
			crd := kinds[r.Kind]
			v := testenv.CRDVersion(crd, version)
			name := fmt.Sprintf("%s %s %s %s (%s line %d)", r.Kind, version, r.Path, r.What, inventoryDoc, r.Line)
			if v == nil || v.Schema == nil {
				tb.Errorf("%s: the CRD serves no such version", name)
				continue
			}
			obj := base(r.Kind, version)
			if obj == nil {
				tb.Errorf("%s: no valid object of this kind and version to start from", name)
				continue
			}
			if msg := r.Message(); msg == "" {
				tb.Errorf("%s: the row quotes no message after \"refused:\"", name)
				continue
			}
			gvk := crd.Spec.Group + "/" + version + ", Kind=" + r.Kind
			if !validated[gvk] {
				validated[gvk] = true
				if err := create(ctx, c, ns, crd.Spec.Group, version, r.Kind, obj, nil); err != nil {
					tb.Errorf("%s %s: the valid object is not accepted: %v", r.Kind, version, err)
					continue
				}
			}
			broken, err := Break(obj, v.Schema.OpenAPIV3Schema, r.Path, r.What)
			if err != nil {
				tb.Errorf("%s: %v", name, err)
				continue
			}
			err = create(ctx, c, ns, crd.Spec.Group, version, r.Kind, obj, broken)
			switch {
			case err == nil:
				tb.Errorf("%s: accepted, the row says refused: `%s`", name, r.Message())
			case !apierrors.IsInvalid(err):
				tb.Errorf("%s: not refused as invalid: %v", name, err)
			case !MessageMatches(err.Error(), r.Message()) || !strings.Contains(err.Error(), FieldPath(r.Path)):
				tb.Errorf("%s: refused with %q, the row quotes `%s` on %s", name, err.Error(), r.Message(), FieldPath(r.Path))
			default:
				checked++
			}
		}
	}
	if checked == 0 {
		tb.Errorf("no refused row of a simple keyword was checked for %v", names)
	}
	tb.Logf("%d refusals of %v checked", checked, names)
}

// create creates obj in ns (with a generated name); with broken, the object created is broken
// when the row's path is in its spec, or else obj, whose status is then written as broken's.
// Without broken, obj's status is written after it.
func create(ctx context.Context, c client.Client, ns, group, version, kind string, obj, broken map[string]any) error {
	u := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(obj)}
	status, hasStatus := u.Object["status"]
	if broken != nil {
		if !statusDiffers(obj, broken) {
			u.Object = runtime.DeepCopyJSON(broken)
			hasStatus = false
		} else {
			status, hasStatus = broken["status"], true
			if status == nil {
				status = map[string]any{}
			}
		}
	}
	u.SetAPIVersion(group + "/" + version)
	u.SetKind(kind)
	u.SetNamespace(ns)
	u.SetName("")
	u.SetGenerateName(strings.ToLower(kind) + "-")
	delete(u.Object, "status")
	if err := c.Create(ctx, u); err != nil {
		return err
	}
	if !hasStatus {
		return nil
	}
	u.Object["status"] = runtime.DeepCopyJSONValue(status)
	return c.Status().Update(ctx, u)
}

func statusDiffers(a, b map[string]any) bool { return !reflect.DeepEqual(a["status"], b["status"]) }
