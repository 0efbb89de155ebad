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
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/testenv"
)

// The upstream schemas compared, copied at a named tag or commit into testdata (the newest tag
// of each project, and the newest commit of its default branch), and HyperShift's copy of
// cluster-api-provider-agent's CRDs. Between them they hold every constraint-free value of the
// other refs checked when this was written (cluster-api-provider-openshift-assisted v0.3.0 to
// v0.3.4, backplane-2.17 and 5.1; cluster-api-provider-agent release-ocm-2.17).
var upstreamDirs = []string{
	"test/support/schemadiff/testdata/cluster-api-provider-openshift-assisted/v0.4.0",
	"test/support/schemadiff/testdata/cluster-api-provider-openshift-assisted/master-24cdcec",
	"test/support/schemadiff/testdata/cluster-api-provider-agent/v0.1.0",
	"test/support/schemadiff/testdata/cluster-api-provider-agent/release-ocm-2.9-f1c652a",
	"test/support/schemadiff/testdata/cluster-api-provider-agent/master-79696ce",
	"test/support/testenv/hypershift-crds",
}

// inventoryDoc holds the inventory: the tables of its section inventorySection.
const (
	inventoryDoc     = "docs/migration.md"
	inventorySection = "## Constraints added on upstream's fields"
)

// Entry is one constraint of ours on an upstream path, for one kind and version.
type Entry struct {
	Kind, Version string
	Constraint
}

// Key names the entry as the inventory's table does.
func (e Entry) Key() string { return e.Kind + " " + e.Version + " | " + e.Constraint.Key() }

// Compute lists, for every version of ours that an upstream schema of the same kind also
// serves, the constraints ours adds on upstream's paths (the union over the upstream schemas).
func Compute(ours []*apiextensionsv1.CustomResourceDefinition) ([]Entry, error) {
	root, err := testenv.RepoRoot()
	if err != nil {
		return nil, err
	}
	var upstream []*apiextensionsv1.CustomResourceDefinition
	for _, dir := range upstreamDirs {
		files, err := filepath.Glob(filepath.Join(root, dir, "*.yaml"))
		if err != nil {
			return nil, err
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("no CRDs in %s", dir)
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				return nil, err
			}
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := yaml.Unmarshal(data, crd); err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			upstream = append(upstream, crd)
		}
	}
	seen := map[string]Entry{}
	for _, o := range ours {
		for _, u := range upstream {
			if u.Spec.Group != o.Spec.Group || u.Spec.Names.Kind != o.Spec.Names.Kind {
				continue
			}
			for _, uv := range u.Spec.Versions {
				ov := testenv.CRDVersion(o, uv.Name)
				if ov == nil || ov.Schema == nil || uv.Schema == nil {
					continue
				}
				for _, c := range Added(ov.Schema.OpenAPIV3Schema, uv.Schema.OpenAPIV3Schema) {
					e := Entry{Kind: o.Spec.Names.Kind, Version: ov.Name, Constraint: c}
					seen[e.Key()] = e
				}
			}
		}
	}
	out := make([]Entry, 0, len(seen))
	for _, e := range seen {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key() < out[j].Key() })
	return out, nil
}

// Inventory reads the inventory rows of kinds from docs/migration.md: `| Kind | versions |
// `path` | `constraint` | ... |`, versions separated by commas, `\|` for a | in a cell.
func Inventory(kinds ...string) (map[string]bool, error) {
	root, err := testenv.RepoRoot()
	if err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join(root, inventoryDoc))
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	out := map[string]bool{}
	in := false
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		line := s.Text()
		if strings.HasPrefix(line, "## ") {
			in = line == inventorySection
			continue
		}
		if !in || !strings.HasPrefix(line, "| ") {
			continue
		}
		cells := splitRow(line)
		if len(cells) < 4 || !slices.Contains(kinds, cells[0]) || !isCode(cells[2]) || !isCode(cells[3]) {
			continue
		}
		for _, v := range strings.Split(cells[1], ",") {
			key := cells[0] + " " + strings.TrimSpace(v) + " | " + strings.Trim(cells[2], "`") + " | " + strings.Trim(cells[3], "`")
			if out[key] {
				return nil, fmt.Errorf("%s lists %q twice", inventoryDoc, key)
			}
			out[key] = true
		}
	}
	return out, s.Err()
}

func isCode(cell string) bool { return len(cell) > 1 && cell[0] == '`' && cell[len(cell)-1] == '`' }

// splitRow splits a Markdown table row into its trimmed cells, with `\|` as a | inside a cell.
func splitRow(line string) []string {
	line = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(line), "|"), "|")
	var cells []string
	var cur strings.Builder
	for i := 0; i < len(line); i++ {
		switch {
		case line[i] == '\\' && i+1 < len(line) && line[i+1] == '|':
			cur.WriteByte('|')
			i++
		case line[i] == '|':
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(line[i])
		}
	}
	return append(cells, strings.TrimSpace(cur.String()))
}

// Row is the inventory row an entry needs, for a failure message to paste from.
func Row(e Entry, versions string) string {
	esc := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
	what := "to review"
	if e.Message != "" {
		what = "refused: " + esc(e.Message)
	}
	return fmt.Sprintf("| %s | %s | `%s` | `%s` | %s | |", e.Kind, versions, esc(e.Path), esc(e.What), what)
}

// CheckInventory fails tb, naming each path and constraint, when the constraints that ours
// adds on upstream's paths differ from the inventory in docs/migration.md.
func CheckInventory(tb testing.TB, ours ...*apiextensionsv1.CustomResourceDefinition) {
	tb.Helper()
	entries, err := Compute(ours)
	if err != nil {
		tb.Fatal(err)
	}
	kinds := make([]string, 0, len(ours))
	for _, o := range ours {
		kinds = append(kinds, o.Spec.Names.Kind)
	}
	listed, err := Inventory(kinds...)
	if err != nil {
		tb.Fatal(err)
	}
	computed := map[string]bool{}
	var missing []string
	for _, e := range entries {
		computed[e.Key()] = true
		if !listed[e.Key()] {
			missing = append(missing, Row(e, e.Version))
		}
	}
	var stale []string
	for k := range listed {
		if !computed[k] {
			stale = append(stale, k)
		}
	}
	sort.Strings(stale)
	if len(missing) > 0 {
		tb.Errorf("%d constraints of ours on upstream's paths are not in %s %q; review each against upstream and add its row:\n%s",
			len(missing), inventoryDoc, inventorySection, strings.Join(missing, "\n"))
	}
	rows, err := InventoryRows(kinds...)
	if err != nil {
		tb.Fatal(err)
	}
	var unchecked []string
	for _, r := range rows {
		if !r.Refused() {
			continue
		}
		switch {
		case r.CheckedBy == "none yet" || r.CheckedBy == "":
			unchecked = append(unchecked, fmt.Sprintf("line %d: %s %s `%s` `%s`: names no test", r.Line, r.Kind, strings.Join(r.Versions, ", "), r.Path, r.What))
		case r.Simple() && !strings.Contains(r.CheckedBy, "`"+RefusalsTest+"`"):
			unchecked = append(unchecked, fmt.Sprintf("line %d: %s %s `%s` `%s`: does not name %s, which checks it", r.Line, r.Kind, strings.Join(r.Versions, ", "), r.Path, r.What, RefusalsTest))
		}
	}
	if len(unchecked) > 0 {
		tb.Errorf("%d refused rows of %s %q name no test that shows the refusal: a row of a simple keyword names %s (which checks it), any other the CRD test that tries it:\n%s",
			len(unchecked), inventoryDoc, inventorySection, RefusalsTest, strings.Join(unchecked, "\n"))
	}
	if len(stale) > 0 {
		tb.Errorf("%d rows of %s %q name a constraint our schema no longer adds; remove them:\n%s",
			len(stale), inventoryDoc, inventorySection, strings.Join(stale, "\n"))
	}
}
