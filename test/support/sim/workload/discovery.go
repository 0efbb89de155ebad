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

package workload

import (
	"encoding/json"
	"sort"
	"strings"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
)

// aggregatedContentType is the media type of aggregated discovery documents, which client-go's
// discovery client asks for first and recognises by its parameters (discovery.ContentTypeIsGVK).
const aggregatedContentType = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

var (
	objectVerbs   = metav1.Verbs{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
	statusVerbs   = metav1.Verbs{"get", "patch", "update"}
	evictionVerbs = metav1.Verbs{"create"}
)

// discoveryDocs holds the discovery documents, the same for every cluster, encoded once.
type discoveryDocs struct {
	version []byte
	// legacy and aggregated are the documents of /api and /apis, by path.
	legacy, aggregated map[string][]byte
	// groups are the documents of /apis/<group> and resources those of /api/v1 and
	// /apis/<group>/<version>, by path.
	groups, resources map[string][]byte
}

// newDiscovery builds the discovery documents of kinds, as kube-apiserver's discovery
// handlers (k8s.io/apiserver/pkg/endpoints/discovery) lay them out.
func newDiscovery(kinds []*kindInfo, v version.Info) (*discoveryDocs, error) {
	d := &discoveryDocs{
		legacy:     map[string][]byte{},
		aggregated: map[string][]byte{},
		groups:     map[string][]byte{},
		resources:  map[string][]byte{},
	}
	var err error
	if d.version, err = json.Marshal(v); err != nil {
		return nil, err
	}

	// The groups and their versions in the order the kinds name them; the first version of a
	// group is its preferred one.
	var groupNames []string
	versions := map[string][]string{}
	byGV := map[schema.GroupVersion][]*kindInfo{}
	for _, k := range kinds {
		gv := k.GVK.GroupVersion()
		if _, ok := versions[gv.Group]; !ok {
			groupNames = append(groupNames, gv.Group)
		}
		if len(byGV[gv]) == 0 {
			versions[gv.Group] = append(versions[gv.Group], gv.Version)
		}
		byGV[gv] = append(byGV[gv], k)
	}

	var core []string
	groupList := metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}}
	coreAggregated := apidiscoveryv2.APIGroupDiscoveryList{TypeMeta: aggregatedTypeMeta()}
	apisAggregated := apidiscoveryv2.APIGroupDiscoveryList{TypeMeta: aggregatedTypeMeta()}
	for _, g := range groupNames {
		group := metav1.APIGroup{TypeMeta: metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}, Name: g}
		aggregated := apidiscoveryv2.APIGroupDiscovery{ObjectMeta: metav1.ObjectMeta{Name: g}}
		for _, v := range versions[g] {
			gv := schema.GroupVersion{Group: g, Version: v}
			group.Versions = append(group.Versions, metav1.GroupVersionForDiscovery{GroupVersion: gv.String(), Version: v})
			list, versionDiscovery := resourcesOf(gv, byGV[gv])
			path := "/apis/" + gv.String()
			if g == "" {
				core = append(core, v)
				path = "/api/" + v
			}
			if d.resources[path], err = json.Marshal(list); err != nil {
				return nil, err
			}
			aggregated.Versions = append(aggregated.Versions, versionDiscovery)
		}
		group.PreferredVersion = group.Versions[0]
		if g == "" {
			coreAggregated.Items = append(coreAggregated.Items, aggregated)
			continue
		}
		groupList.Groups = append(groupList.Groups, group)
		apisAggregated.Items = append(apisAggregated.Items, aggregated)
		if d.groups["/apis/"+g], err = json.Marshal(group); err != nil {
			return nil, err
		}
	}

	apiVersions := metav1.APIVersions{
		TypeMeta: metav1.TypeMeta{Kind: "APIVersions"},
		Versions: core,
		ServerAddressByClientCIDRs: []metav1.ServerAddressByClientCIDR{
			{ClientCIDR: "0.0.0.0/0", ServerAddress: "127.0.0.1"},
		},
	}
	for path, doc := range map[string]any{"/api": apiVersions, "/apis": groupList} {
		if d.legacy[path], err = json.Marshal(doc); err != nil {
			return nil, err
		}
	}
	for path, doc := range map[string]any{"/api": coreAggregated, "/apis": apisAggregated} {
		if d.aggregated[path], err = json.Marshal(doc); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// aggregatedTypeMeta is the type of aggregated discovery documents.
func aggregatedTypeMeta() metav1.TypeMeta {
	return metav1.TypeMeta{Kind: "APIGroupDiscoveryList", APIVersion: apidiscoveryv2.SchemeGroupVersion.String()}
}

// resourcesOf returns the legacy and aggregated discovery of a group version's kinds, sorted
// by resource as kube-apiserver sorts them.
func resourcesOf(gv schema.GroupVersion, kinds []*kindInfo) (*metav1.APIResourceList, apidiscoveryv2.APIVersionDiscovery) {
	sorted := append([]*kindInfo(nil), kinds...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Resource < sorted[j].Resource })
	list := &metav1.APIResourceList{
		TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
		GroupVersion: gv.String(),
	}
	aggregated := apidiscoveryv2.APIVersionDiscovery{Version: gv.Version, Freshness: apidiscoveryv2.DiscoveryFreshnessCurrent}
	for _, k := range sorted {
		singular := strings.ToLower(k.GVK.Kind)
		list.APIResources = append(list.APIResources, metav1.APIResource{
			Name:         k.Resource,
			SingularName: singular,
			Namespaced:   k.Namespaced,
			Kind:         k.GVK.Kind,
			Verbs:        objectVerbs,
		})
		scope := apidiscoveryv2.ScopeCluster
		if k.Namespaced {
			scope = apidiscoveryv2.ScopeNamespace
		}
		resource := apidiscoveryv2.APIResourceDiscovery{
			Resource:         k.Resource,
			ResponseKind:     &metav1.GroupVersionKind{Group: k.GVK.Group, Version: k.GVK.Version, Kind: k.GVK.Kind},
			Scope:            scope,
			SingularResource: singular,
			Verbs:            objectVerbs,
		}
		if k.eviction {
			list.APIResources = append(list.APIResources, metav1.APIResource{
				Name:         k.Resource + "/eviction",
				SingularName: singular,
				Namespaced:   k.Namespaced,
				Group:        evictionGVK.Group,
				Version:      evictionGVK.Version,
				Kind:         evictionGVK.Kind,
				Verbs:        evictionVerbs,
			})
			resource.Subresources = append(resource.Subresources, apidiscoveryv2.APISubresourceDiscovery{
				Subresource:  "eviction",
				ResponseKind: &metav1.GroupVersionKind{Group: evictionGVK.Group, Version: evictionGVK.Version, Kind: evictionGVK.Kind},
				Verbs:        evictionVerbs,
			})
		}
		if k.Status {
			list.APIResources = append(list.APIResources, metav1.APIResource{
				Name:         k.Resource + "/status",
				SingularName: singular,
				Namespaced:   k.Namespaced,
				Kind:         k.GVK.Kind,
				Verbs:        statusVerbs,
			})
			resource.Subresources = append(resource.Subresources, apidiscoveryv2.APISubresourceDiscovery{
				Subresource:  "status",
				ResponseKind: &metav1.GroupVersionKind{Group: k.GVK.Group, Version: k.GVK.Version, Kind: k.GVK.Kind},
				Verbs:        statusVerbs,
			})
		}
		aggregated.Resources = append(aggregated.Resources, resource)
	}
	return list, aggregated
}
