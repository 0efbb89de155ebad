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

package manager

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// countingMapper counts the RESTMapping calls that reach the mapper it wraps.
type countingMapper struct {
	meta.RESTMapper
	calls int
}

func (c *countingMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	c.calls++
	return c.RESTMapper.RESTMapping(gk, versions...)
}

// TestMemoRESTMapper: a mapping found is asked of the wrapped mapper once per group, kind and
// version, each caller gets a copy of it, and what is not found is asked again (a CRD installed
// later); a request without exactly one version passes through.
func TestMemoRESTMapper(t *testing.T) {
	agents := schema.GroupVersionKind{Group: "agent-install.openshift.io", Version: "v1beta1", Kind: "Agent"}
	nodes := schema.GroupVersionKind{Version: "v1", Kind: "Node"}
	inner := meta.NewDefaultRESTMapper([]schema.GroupVersion{agents.GroupVersion(), nodes.GroupVersion()})
	inner.Add(agents, meta.RESTScopeNamespace)
	counting := &countingMapper{RESTMapper: inner}
	m := MemoRESTMapper(counting)

	for range 3 {
		mapping, err := m.RESTMapping(agents.GroupKind(), agents.Version)
		if err != nil {
			t.Fatal(err)
		}
		if mapping.Scope.Name() != meta.RESTScopeNameNamespace || mapping.Resource.Resource != "agents" {
			t.Fatalf("mapping = %+v, want the namespaced resource agents", mapping)
		}
		mapping.Resource.Resource = "changed by a caller"
	}
	if counting.calls != 1 {
		t.Errorf("the wrapped mapper was asked %d times, want once", counting.calls)
	}

	if _, err := m.RESTMapping(nodes.GroupKind(), nodes.Version); !meta.IsNoMatchError(err) {
		t.Fatalf("Node before it is known: err = %v, want no match", err)
	}
	inner.Add(nodes, meta.RESTScopeRoot)
	mapping, err := m.RESTMapping(nodes.GroupKind(), nodes.Version)
	if err != nil || mapping.Scope.Name() != meta.RESTScopeNameRoot {
		t.Fatalf("Node once known: %+v, %v; want its cluster-wide mapping", mapping, err)
	}

	calls := counting.calls
	if _, err := m.RESTMapping(agents.GroupKind()); err != nil {
		t.Fatal(err)
	}
	if _, err := m.RESTMapping(agents.GroupKind()); err != nil {
		t.Fatal(err)
	}
	if counting.calls != calls+2 {
		t.Errorf("without a version: %d calls reached the wrapped mapper, want 2", counting.calls-calls)
	}
}

// TestMemoRESTMapperAllocations: a remembered mapping costs two allocations (the caller's copy,
// and the caller's variadic versions, which escape through the interface call), where the dynamic mapper's MultiRESTMapper allocated a NoKindMatchError per API version it
// knows that does not serve the kind.
func TestMemoRESTMapperAllocations(t *testing.T) {
	agents := schema.GroupVersionKind{Group: "agent-install.openshift.io", Version: "v1beta1", Kind: "Agent"}
	var versions []schema.GroupVersion
	multi := meta.MultiRESTMapper{}
	for _, gv := range []schema.GroupVersion{{Version: "v1"}, {Group: "apps", Version: "v1"}, {Group: "cluster.x-k8s.io", Version: "v1beta2"}, agents.GroupVersion()} {
		versions = append(versions, gv)
		multi = append(multi, meta.NewDefaultRESTMapper([]schema.GroupVersion{gv}))
	}
	multi[len(multi)-1].(*meta.DefaultRESTMapper).Add(agents, meta.RESTScopeNamespace)
	m := MemoRESTMapper(multi)
	ask := func(mapper meta.RESTMapper) func() {
		return func() {
			if _, err := mapper.RESTMapping(agents.GroupKind(), agents.Version); err != nil {
				t.Fatal(err)
			}
		}
	}
	direct, remembered := testing.AllocsPerRun(100, ask(multi)), testing.AllocsPerRun(100, ask(m))
	t.Logf("allocations per RESTMapping with %d API versions: %.0f directly, %.0f remembered", len(versions), direct, remembered)
	if remembered > 2 {
		t.Errorf("a remembered mapping allocated %.0f times, want at most 2", remembered)
	}
	if direct <= remembered {
		t.Errorf("the direct mapping allocated %.0f times, no more than the remembered one (%.0f): the test measures nothing", direct, remembered)
	}
}
