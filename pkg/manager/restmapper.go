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
	"net/http"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// NewRESTMapper is the managers' RESTMapper (ctrl.Options.MapperProvider): controller-runtime's
// dynamic one, which reads an API group's resources when first asked for them, with the mappings
// it found remembered (MemoRESTMapper).
func NewRESTMapper(cfg *rest.Config, httpClient *http.Client) (meta.RESTMapper, error) {
	m, err := apiutil.NewDynamicRESTMapper(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	return MemoRESTMapper(m), nil
}

// MemoRESTMapper remembers the mapping m returns for each group, kind and version it is asked
// for. A namespaced cache asks for the mapping of the object's kind at every read
// (apiutil.IsObjectNamespaced, to tell namespaced kinds from cluster-wide ones), and the dynamic
// mapper answers through a MultiRESTMapper of every API version it knows, each of which that does
// not serve the kind allocates a NoKindMatchError: 13% of all the bytes the infrastructure
// manager allocated while binding 500 Machines (issue 45). A mapping is only remembered once
// found, and for one version asked: a CRD's scope and resource name cannot change (the API server
// refuses it), and the dynamic mapper itself keeps what it found until asked for a version it
// does not know. Each caller gets a copy of the mapping.
func MemoRESTMapper(m meta.RESTMapper) meta.RESTMapper {
	return &memoRESTMapper{RESTMapper: m}
}

type memoRESTMapper struct {
	meta.RESTMapper
	mappings sync.Map // gvk -> *meta.RESTMapping
}

// RESTMapping implements meta.RESTMapper.
func (m *memoRESTMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	if len(versions) != 1 || versions[0] == "" {
		return m.RESTMapper.RESTMapping(gk, versions...)
	}
	key := gk.WithVersion(versions[0])
	if v, ok := m.mappings.Load(key); ok {
		mapping := *v.(*meta.RESTMapping)
		return &mapping, nil
	}
	mapping, err := m.RESTMapper.RESTMapping(gk, versions...)
	if err != nil {
		return nil, err
	}
	kept := *mapping
	m.mappings.Store(key, &kept)
	return mapping, nil
}
