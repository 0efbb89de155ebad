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
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/managedfields"
	clientgoapplyconfigurations "k8s.io/client-go/applyconfigurations"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// Kind is a kind of object that every workload cluster of a Server serves.
type Kind struct {
	// GVK is the kind's group, version and kind. The Server's scheme must know it and its list
	// kind (GVK.Kind + "List").
	GVK schema.GroupVersionKind
	// Resource is the kind's resource: its plural, lower-case name in URLs ("nodes").
	Resource string
	// Namespaced tells whether objects of the kind live in a namespace.
	Namespaced bool
	// Status tells whether the kind has a status subresource: then writes to the object ignore
	// its status and writes to .../status change only the status, as in a real API server.
	// For the built-in kinds that have one (Node, Pod, Namespace, ...) it must be true.
	Status bool
	// Fields are the field selectors the kind supports besides metadata.name and
	// metadata.namespace, as dotted paths into the object ("spec.nodeName"). A selector on
	// any other field is refused (400), as kube-apiserver refuses it.
	Fields []string
}

// Well-known kinds, used in DefaultKinds and for behaviour that is specific to them.
var (
	namespaceGVK = schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}
	podGVK       = schema.GroupVersionKind{Version: "v1", Kind: "Pod"}
	serviceGVK   = schema.GroupVersionKind{Version: "v1", Kind: "Service"}
	evictionGVK  = schema.GroupVersionKind{Group: "policy", Version: "v1", Kind: "Eviction"}
)

// DefaultKinds returns the kinds a simulated OpenShift workload cluster serves: from core/v1
// Namespace, Node, Pod, Secret, ConfigMap, Event, Service and PersistentVolume; from
// storage.k8s.io/v1 VolumeAttachment (Cluster API's Machine controller lists them before it
// deletes a Node); from config.openshift.io/v1 ClusterVersion, ClusterOperator and
// Infrastructure. machine.openshift.io is deliberately absent, as on a cluster without the
// Machine API. The field selectors are those kube-apiserver's registries support for each kind
// (k8s.io/kubernetes pkg/registry/core/*/strategy.go, ...ToSelectableFields).
func DefaultKinds() []Kind {
	core := func(kind, resource string, namespaced, status bool, fields ...string) Kind {
		return Kind{
			GVK:        schema.GroupVersionKind{Version: "v1", Kind: kind},
			Resource:   resource,
			Namespaced: namespaced,
			Status:     status,
			Fields:     fields,
		}
	}
	config := func(kind, resource string) Kind {
		return Kind{
			GVK:      schema.GroupVersionKind{Group: "config.openshift.io", Version: "v1", Kind: kind},
			Resource: resource,
			Status:   true,
		}
	}
	return []Kind{
		core("Namespace", "namespaces", false, true, "status.phase"),
		core("Node", "nodes", false, true, "spec.unschedulable"),
		core("Pod", "pods", true, true, "spec.nodeName", "spec.restartPolicy", "spec.schedulerName",
			"spec.serviceAccountName", "spec.hostNetwork", "status.phase", "status.podIP", "status.nominatedNodeName"),
		core("Secret", "secrets", true, false, "type"),
		core("ConfigMap", "configmaps", true, false),
		core("Event", "events", true, false, "involvedObject.kind", "involvedObject.namespace",
			"involvedObject.name", "involvedObject.uid", "involvedObject.apiVersion",
			"involvedObject.resourceVersion", "involvedObject.fieldPath", "reason", "reportingComponent", "type"),
		core("Service", "services", true, true),
		core("PersistentVolume", "persistentvolumes", false, true),
		{
			GVK:      schema.GroupVersionKind{Group: "storage.k8s.io", Version: "v1", Kind: "VolumeAttachment"},
			Resource: "volumeattachments",
			Status:   true,
		},
		config("ClusterVersion", "clusterversions"),
		config("ClusterOperator", "clusteroperators"),
		config("Infrastructure", "infrastructures"),
	}
}

// kindInfo is a Kind with what the Server derives from it once, shared by every cluster.
type kindInfo struct {
	Kind
	// storeGVR is the resource under which controller-runtime's fake client keeps the kind's
	// objects (it guesses it from the kind, meta.UnsafeGuessKindToResource).
	storeGVR schema.GroupVersionResource
	listGVK  schema.GroupVersionKind
	// builtin is true for the kinds kube-apiserver serves itself (those client-go's scheme knows);
	// the others are served as a real server serves custom resources: JSON only, no strategic
	// merge patch, metadata.generation kept, status dropped on create.
	builtin bool
	// generation tells whether metadata.generation is kept: for every kind outside the core
	// group, as kube-apiserver does for custom resources and most built-in groups.
	generation bool
	fields     map[string]bool
	nameFn     apimachineryvalidation.ValidateNameFunc
	serializer runtime.NegotiatedSerializer
	// managers are the field managers of the object ([0]) and of its status subresource ([1]).
	managers [2]*managedfields.FieldManager
	// eviction tells whether the kind has the pods/eviction subresource.
	eviction bool
}

// newKindInfo checks k against the scheme and derives its kindInfo.
func newKindInfo(k Kind, scheme *runtime.Scheme, codecs serializer.CodecFactory, clientGoConverter managedfields.TypeConverter) (*kindInfo, error) {
	if k.Resource == "" || k.Resource != strings.ToLower(k.Resource) || strings.Contains(k.Resource, "/") {
		return nil, fmt.Errorf("kind %s: resource %q is not a lower-case plural name", k.GVK, k.Resource)
	}
	if !scheme.Recognizes(k.GVK) {
		return nil, fmt.Errorf("kind %s is not in the scheme", k.GVK)
	}
	ki := &kindInfo{
		Kind:       k,
		listGVK:    k.GVK.GroupVersion().WithKind(k.GVK.Kind + "List"),
		builtin:    clientgoscheme.Scheme.Recognizes(k.GVK),
		generation: k.GVK.Group != "",
		fields:     map[string]bool{"metadata.name": true, "metadata.namespace": true},
		nameFn:     apimachineryvalidation.NameIsDNSSubdomain,
		eviction:   k.GVK == podGVK,
	}
	ki.storeGVR, _ = meta.UnsafeGuessKindToResource(k.GVK)
	if !scheme.Recognizes(ki.listGVK) {
		return nil, fmt.Errorf("kind %s: its list kind %s is not in the scheme", k.GVK, ki.listGVK.Kind)
	}
	obj, err := scheme.New(k.GVK)
	if err != nil {
		return nil, err
	}
	if _, ok := obj.(client.Object); !ok {
		return nil, fmt.Errorf("kind %s: %T has no object metadata", k.GVK, obj)
	}
	list, err := scheme.New(ki.listGVK)
	if err != nil {
		return nil, err
	}
	if _, ok := list.(client.ObjectList); !ok {
		return nil, fmt.Errorf("kind %s: %T is not a list", k.GVK, list)
	}
	for _, f := range k.Fields {
		ki.fields[f] = true
	}
	switch k.GVK {
	case namespaceGVK:
		ki.nameFn = apimachineryvalidation.NameIsDNSLabel
	case serviceGVK:
		ki.nameFn = apimachineryvalidation.NameIsDNS1035Label
	}

	// Built-in kinds are served in every media type the scheme's codecs have (JSON, YAML and
	// protobuf); the others in JSON and YAML only, as apiextensions-apiserver serves custom
	// resources.
	ki.serializer = codecs
	if !ki.builtin {
		var infos []runtime.SerializerInfo
		for _, info := range codecs.SupportedMediaTypes() {
			if info.MediaType != runtime.ContentTypeProtobuf {
				infos = append(infos, info)
			}
		}
		ki.serializer = mediaTypes{NegotiatedSerializer: codecs, infos: infos}
	}

	// Server-side apply needs the kind's schema: client-go's for built-in kinds (what
	// kube-apiserver uses), one deduced from the object for the others.
	converter := managedfields.NewDeducedTypeConverter()
	if ki.builtin {
		if _, err := clientGoConverter.ObjectToTyped(obj); err == nil {
			converter = clientGoConverter
		}
	}
	// The object's writes do not own its status, and its status's writes own only the status:
	// kube-apiserver's "reset fields" of the two strategies (GetResetFields).
	var objectReset, statusReset map[fieldpath.APIVersion]fieldpath.Filter
	if k.Status {
		version := fieldpath.APIVersion(k.GVK.GroupVersion().String())
		objectReset = map[fieldpath.APIVersion]fieldpath.Filter{
			version: fieldpath.NewExcludeSetFilter(fieldpath.NewSet(fieldpath.MakePathOrDie("status"))),
		}
		statusReset = map[fieldpath.APIVersion]fieldpath.Filter{
			version: fieldpath.NewIncludeMatcherFilter(fieldpath.MakePrefixMatcherOrDie("status")),
		}
	}
	for i, sub := range []string{"", "status"} {
		reset := objectReset
		if sub != "" {
			reset = statusReset
		}
		ki.managers[i], err = managedfields.NewDefaultFieldManager(converter, scheme, noDefaults{}, scheme,
			k.GVK, k.GVK.GroupVersion(), sub, reset)
		if err != nil {
			return nil, fmt.Errorf("kind %s: %w", k.GVK, err)
		}
	}
	return ki, nil
}

// newClientGoConverter returns the type converter of client-go's apply configurations, which
// knows the schema of every built-in kind.
func newClientGoConverter() managedfields.TypeConverter {
	return clientgoapplyconfigurations.NewTypeConverter(clientgoscheme.Scheme)
}

// manager returns the field manager for writes to the object (subresource "") or its status.
func (k *kindInfo) manager(subresource string) *managedfields.FieldManager {
	if subresource == "status" {
		return k.managers[1]
	}
	return k.managers[0]
}

// newObject returns a new, empty object of the kind with its type set.
func (k *kindInfo) newObject(scheme *runtime.Scheme) client.Object {
	obj, _ := scheme.New(k.GVK) // Known to work: checked by newKindInfo.
	o := obj.(client.Object)
	o.GetObjectKind().SetGroupVersionKind(k.GVK)
	return o
}

// newList returns a new, empty list of the kind with its type set.
func (k *kindInfo) newList(scheme *runtime.Scheme) client.ObjectList {
	obj, _ := scheme.New(k.listGVK) // Known to work: checked by newKindInfo.
	l := obj.(client.ObjectList)
	l.GetObjectKind().SetGroupVersionKind(k.listGVK)
	return l
}

// mediaTypes is a NegotiatedSerializer restricted to some media types.
type mediaTypes struct {
	runtime.NegotiatedSerializer
	infos []runtime.SerializerInfo
}

// SupportedMediaTypes returns the media types kept.
func (m mediaTypes) SupportedMediaTypes() []runtime.SerializerInfo { return m.infos }

// noDefaults is a defaulter that sets no defaults: the simulated clusters do not default fields.
type noDefaults struct{}

// Default does nothing.
func (noDefaults) Default(runtime.Object) {}
