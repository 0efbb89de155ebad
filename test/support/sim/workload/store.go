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
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// defaultFieldManager is the field manager of writes through Server.Client that name none.
const defaultFieldManager = "workload-store"

// watchBuffer is how many events a watch may fall behind before the store drops it. A dropped
// watch ends; its client watches again from the last resourceVersion it saw and, as events are
// not replayed, is told to list again (410 Gone). kube-apiserver's watch cache also ends the
// watches that do not keep up.
const watchBuffer = 64

// store holds one cluster's objects. It is controller-runtime's fake client, which keeps
// resourceVersions and checks them, keeps the status of kinds with a status subresource,
// honours finalizers and applies patches, over an object tracker of ours (the store itself)
// that does what a real API server does besides: one resourceVersion sequence for the whole
// cluster, uid, creationTimestamp and generation, metadata validation, managed fields kept by
// one field manager per kind shared by all clusters, namespaces that must exist, and events
// for the watches.
type store struct {
	kinds  *kindSet
	client client.WithWatch
	// done is closed when the cluster is removed: it ends the watches of Server.Client.
	done chan struct{}
	// objects is client-go's object tracker, which holds the objects.
	objects testing.ObjectTracker

	// writeMu serialises the writes, so that subresource tells the tracker methods, called by
	// the fake client, which subresource the write in progress is to (the fake client does
	// not tell them).
	writeMu     sync.Mutex
	subresource string

	// mu guards the fields below. A write holds it from the moment its resourceVersion is
	// taken until its event is queued to the watches, so that lists and watches started
	// under it see the objects exactly as of rv. It is taken inside the fake client's locks
	// (by the tracker methods), so whoever holds it must not call the fake client, only
	// objects.
	mu sync.RWMutex
	// rv is the cluster's last resourceVersion.
	rv uint64
	// lastRV is, per resource, the resourceVersion of its last change: a watch that starts
	// from an older one has missed events.
	lastRV   map[schema.GroupVersionResource]uint64
	watchers map[schema.GroupVersionResource]map[*watcher]struct{}
}

var _ testing.ObjectTracker = &store{}

// event is a change of an object, as given to the watches. Its objects are shared by the
// watches and must not be changed.
type event struct {
	typ watch.EventType
	// obj is the object after the change (for a deletion, its last state).
	obj client.Object
	// old is the object before a modification, nil otherwise.
	old client.Object
}

// watcher is a watch's subscription to the changes of one resource.
type watcher struct {
	namespace string
	events    chan *event
	// dropped is closed when the store drops the watcher because it fell behind.
	dropped chan struct{}
}

// newStore returns an empty store of a cluster whose removal closes done.
func newStore(kinds *kindSet, done chan struct{}) *store {
	s := &store{
		kinds:    kinds,
		done:     done,
		objects:  testing.NewObjectTracker(kinds.scheme, kinds.codecs.UniversalDecoder()),
		lastRV:   map[schema.GroupVersionResource]uint64{},
		watchers: map[schema.GroupVersionResource]map[*watcher]struct{}{},
	}
	b := fake.NewClientBuilder().
		WithScheme(kinds.scheme).
		WithObjectTracker(s).
		WithReturnManagedFields()
	for _, k := range kinds.list {
		if k.Status {
			b = b.WithStatusSubresource(k.newObject(kinds.scheme))
		}
	}
	s.client = b.Build()
	return s
}

// write runs a write to the fake client, telling the tracker methods the subresource.
func (s *store) write(subresource string, fn func() error) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	s.subresource = subresource
	return fn()
}

// writingClient returns the fake client with every write going through write and watches
// served from the store's events, for tests and seeding.
func (s *store) writingClient() client.WithWatch {
	return interceptor.NewClient(s.client, interceptor.Funcs{
		Watch: func(_ context.Context, _ client.WithWatch, list client.ObjectList, opts ...client.ListOption) (watch.Interface, error) {
			return s.watch(list, opts...)
		},
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			return s.write("", func() error { return c.Create(ctx, obj, opts...) })
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			return s.write("", func() error { return c.Update(ctx, obj, opts...) })
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			return s.write("", func() error { return c.Patch(ctx, obj, patch, opts...) })
		},
		Apply: func(ctx context.Context, c client.WithWatch, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
			return s.write("", func() error { return c.Apply(ctx, obj, opts...) })
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			return s.write("", func() error { return c.Delete(ctx, obj, opts...) })
		},
		DeleteAllOf: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteAllOfOption) error {
			return s.write("", func() error { return c.DeleteAllOf(ctx, obj, opts...) })
		},
		SubResourceCreate: func(ctx context.Context, c client.Client, sub string, obj, subObj client.Object, opts ...client.SubResourceCreateOption) error {
			return s.write(sub, func() error { return c.SubResource(sub).Create(ctx, obj, subObj, opts...) })
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			return s.write(sub, func() error { return c.SubResource(sub).Update(ctx, obj, opts...) })
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			return s.write(sub, func() error { return c.SubResource(sub).Patch(ctx, obj, patch, opts...) })
		},
		SubResourceApply: func(ctx context.Context, c client.Client, sub string, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
			return s.write(sub, func() error { return c.SubResource(sub).Apply(ctx, obj, opts...) })
		},
	})
}

// kindFor returns the kind stored under gvr.
func (s *store) kindFor(gvr schema.GroupVersionResource) (*kindInfo, error) {
	k := s.kinds.byStoreGVR[gvr]
	if k == nil {
		return nil, apierrors.NewNotFound(gvr.GroupResource(), "")
	}
	return k, nil
}

// Add is not used: objects are added through the fake client.
func (s *store) Add(runtime.Object) error {
	return fmt.Errorf("adding objects to a workload cluster's tracker directly is not supported")
}

// Get returns a copy of an object.
func (s *store) Get(gvr schema.GroupVersionResource, ns, name string, opts ...metav1.GetOptions) (runtime.Object, error) {
	return s.objects.Get(gvr, ns, name, opts...)
}

// List returns copies of the objects of a resource in a namespace (all for "").
func (s *store) List(gvr schema.GroupVersionResource, gvk schema.GroupVersionKind, ns string, opts ...metav1.ListOptions) (runtime.Object, error) {
	return s.objects.List(gvr, gvk, ns, opts...)
}

// Watch is client-go's tracker's watch. Nothing uses it: the HTTP watches and the watches of
// Server.Client use the store's own events.
func (s *store) Watch(gvr schema.GroupVersionResource, ns string, opts ...metav1.ListOptions) (watch.Interface, error) {
	return s.objects.Watch(gvr, ns, opts...)
}

// Create stores a new object, as kube-apiserver's generic registry does (rest.BeforeCreate):
// the namespace must exist; uid, creationTimestamp and generation are set; a custom resource's
// status is dropped; metadata is validated; managed fields are recorded.
func (s *store) Create(gvr schema.GroupVersionResource, obj runtime.Object, ns string, opts ...metav1.CreateOptions) error {
	k, err := s.kindFor(gvr)
	if err != nil {
		return err
	}
	o, ok := obj.(client.Object)
	if !ok {
		return fmt.Errorf("%T is not an object", obj)
	}
	manager := defaultFieldManager
	if len(opts) > 0 && opts[0].FieldManager != "" {
		manager = opts[0].FieldManager
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.prepareCreateLocked(k, o); err != nil {
		return err
	}
	live := k.newObject(s.kinds.scheme)
	if res, ok := k.manager(s.subresource).UpdateNoErrors(live, o, manager).(client.Object); ok {
		o.SetManagedFields(res.GetManagedFields())
	}
	return s.storeLocked(k, watch.Added, o, nil, func() error { return s.objects.Create(gvr, o, ns, opts...) })
}

// Update replaces an object. The fake client has checked its resourceVersion and kept what
// the subresource written to does not change.
func (s *store) Update(gvr schema.GroupVersionResource, obj runtime.Object, ns string, opts ...metav1.UpdateOptions) error {
	manager := ""
	if len(opts) > 0 {
		manager = opts[0].FieldManager
	}
	return s.replace(gvr, obj, ns, manager, func(o client.Object) error { return s.objects.Update(gvr, o, ns, opts...) })
}

// Patch replaces an object with its patched version.
func (s *store) Patch(gvr schema.GroupVersionResource, obj runtime.Object, ns string, opts ...metav1.PatchOptions) error {
	manager := ""
	if len(opts) > 0 {
		manager = opts[0].FieldManager
	}
	return s.replace(gvr, obj, ns, manager, func(o client.Object) error { return s.objects.Patch(gvr, o, ns, opts...) })
}

// replace stores a changed object, as kube-apiserver's generic registry does
// (rest.BeforeUpdate): uid, creationTimestamp and deletionTimestamp are kept, generation
// follows the spec, metadata is validated, managed fields are recorded.
func (s *store) replace(gvr schema.GroupVersionResource, obj runtime.Object, ns, manager string, put func(client.Object) error) error {
	k, err := s.kindFor(gvr)
	if err != nil {
		return err
	}
	o, ok := obj.(client.Object)
	if !ok {
		return fmt.Errorf("%T is not an object", obj)
	}
	if manager == "" {
		manager = defaultFieldManager
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	current, err := s.objects.Get(gvr, ns, o.GetName())
	if err != nil {
		return err
	}
	old := current.(client.Object)
	if err := s.prepareUpdate(k, old, o); err != nil {
		return err
	}
	if res, ok := k.manager(s.subresource).UpdateNoErrors(old, o, manager).(client.Object); ok {
		o.SetManagedFields(res.GetManagedFields())
	}
	if unchanged(k, old, o) {
		return nil
	}
	return s.storeLocked(k, watch.Modified, o, old, func() error { return put(o) })
}

// unchanged tells whether a write changes nothing in an object; if so, it gives o the object's
// resourceVersion back. kube-apiserver does not store such a write (its storage compares the
// new object's serialization with the stored one: etcd3 store's GuaranteedUpdate), so it keeps
// the resourceVersion and sends no event. The objects are compared in JSON, as they are
// stored, where times have a precision of a second.
func unchanged(k *kindInfo, old, o client.Object) bool {
	rv := o.GetResourceVersion()
	o.SetResourceVersion(old.GetResourceVersion())
	old.GetObjectKind().SetGroupVersionKind(k.GVK)
	o.GetObjectKind().SetGroupVersionKind(k.GVK)
	a, errA := json.Marshal(old)
	b, errB := json.Marshal(o)
	if errA == nil && errB == nil && bytes.Equal(a, b) {
		return true
	}
	o.SetResourceVersion(rv)
	return false
}

// Apply applies a server-side apply configuration with the kind's field manager, creating the
// object if it does not exist.
func (s *store) Apply(gvr schema.GroupVersionResource, applyConfiguration runtime.Object, ns string, opts ...metav1.PatchOptions) error {
	k, err := s.kindFor(gvr)
	if err != nil {
		return err
	}
	var o metav1.PatchOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	applied, err := meta.Accessor(applyConfiguration)
	if err != nil {
		return err
	}
	applyConfiguration.GetObjectKind().SetGroupVersionKind(k.GVK)
	s.mu.Lock()
	defer s.mu.Unlock()
	var live client.Object
	current, err := s.objects.Get(gvr, ns, applied.GetName())
	switch {
	case err == nil:
		live = current.(client.Object)
	case apierrors.IsNotFound(err):
		live = k.newObject(s.kinds.scheme)
	default:
		return err
	}
	res, err := k.manager(s.subresource).Apply(live, applyConfiguration, o.FieldManager, o.Force != nil && *o.Force)
	if err != nil {
		return err
	}
	merged, ok := res.(client.Object)
	if !ok {
		return fmt.Errorf("applying to %s %s: got a %T", k.GVK.Kind, applied.GetName(), res)
	}
	merged.GetObjectKind().SetGroupVersionKind(k.GVK)
	if live.GetResourceVersion() == "" {
		merged.SetNamespace(ns)
		if err := s.prepareCreateLocked(k, merged); err != nil {
			return err
		}
		return s.storeLocked(k, watch.Added, merged, nil, func() error {
			return s.objects.Create(gvr, merged, ns, metav1.CreateOptions{FieldManager: o.FieldManager})
		})
	}
	if err := s.prepareUpdate(k, live, merged); err != nil {
		return err
	}
	if unchanged(k, live, merged) {
		return nil
	}
	return s.storeLocked(k, watch.Modified, merged, live, func() error {
		return s.objects.Update(gvr, merged, ns, metav1.UpdateOptions{FieldManager: o.FieldManager})
	})
}

// Delete removes an object. (An object with finalizers is not deleted: the fake client sets
// its deletionTimestamp through Update instead, and calls Delete once the last finalizer is
// gone.)
func (s *store) Delete(gvr schema.GroupVersionResource, ns, name string, opts ...metav1.DeleteOptions) error {
	k, err := s.kindFor(gvr)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	current, err := s.objects.Get(gvr, ns, name)
	if err != nil {
		return err
	}
	o := current.(client.Object)
	return s.storeLocked(k, watch.Deleted, o, nil, func() error { return s.objects.Delete(gvr, ns, name, opts...) })
}

// storeLocked gives o the cluster's next resourceVersion, runs put and, if it succeeds, sends
// the event to the watches. s.mu must be held.
func (s *store) storeLocked(k *kindInfo, typ watch.EventType, o, old client.Object, put func() error) error {
	rv := s.rv + 1
	o.SetResourceVersion(strconv.FormatUint(rv, 10))
	o.GetObjectKind().SetGroupVersionKind(k.GVK)
	if err := put(); err != nil {
		return err
	}
	s.rv = rv
	s.lastRV[k.storeGVR] = rv
	ev := &event{typ: typ, obj: o.DeepCopyObject().(client.Object), old: old}
	if old != nil {
		old.GetObjectKind().SetGroupVersionKind(k.GVK)
	}
	for w := range s.watchers[k.storeGVR] {
		if w.namespace != "" && w.namespace != o.GetNamespace() {
			continue
		}
		select {
		case w.events <- ev:
		default:
			s.dropLocked(k.storeGVR, w)
		}
	}
	return nil
}

// prepareCreateLocked sets what the server sets on a new object and validates its metadata.
// s.mu must be held.
func (s *store) prepareCreateLocked(k *kindInfo, o client.Object) error {
	o.GetObjectKind().SetGroupVersionKind(k.GVK)
	if k.Namespaced && s.kinds.namespaces != nil {
		// kube-apiserver's NamespaceLifecycle admission: no object in a missing namespace.
		if _, err := s.objects.Get(s.kinds.namespaces.storeGVR, "", o.GetNamespace()); apierrors.IsNotFound(err) {
			return apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, o.GetNamespace())
		}
	}
	o.SetUID(uuid.NewUUID())
	o.SetCreationTimestamp(metav1.Now().Rfc3339Copy())
	o.SetDeletionTimestamp(nil)
	o.SetDeletionGracePeriodSeconds(nil)
	o.SetGeneration(0)
	if k.generation {
		o.SetGeneration(1)
	}
	if k.Status && !k.builtin {
		// A custom resource's status is not set on create (apiextensions-apiserver's
		// PrepareForCreate).
		clearStatus(o)
	}
	if ns, ok := o.(*corev1.Namespace); ok {
		// A new namespace is active (the namespace registry's PrepareForCreate).
		ns.Status.Phase = corev1.NamespaceActive
	}
	errs := apimachineryvalidation.ValidateObjectMetaAccessor(o, k.Namespaced, k.nameFn, field.NewPath("metadata"))
	if len(errs) > 0 {
		return apierrors.NewInvalid(k.GVK.GroupKind(), o.GetName(), errs)
	}
	return nil
}

// prepareUpdate keeps what a write may not change, moves generation on if the object changed
// outside its metadata and status (or got a deletionTimestamp), and validates the metadata.
func (s *store) prepareUpdate(k *kindInfo, old, o client.Object) error {
	o.GetObjectKind().SetGroupVersionKind(k.GVK)
	if o.GetUID() == "" {
		o.SetUID(old.GetUID())
	}
	o.SetCreationTimestamp(old.GetCreationTimestamp())
	if old.GetDeletionTimestamp() != nil {
		o.SetDeletionTimestamp(old.GetDeletionTimestamp())
		o.SetDeletionGracePeriodSeconds(old.GetDeletionGracePeriodSeconds())
	}
	// The fake client sets deletionTimestamp through an update when it deletes an object that
	// has finalizers: that is a delete (rest.BeforeDelete), not an update.
	deleting := old.GetDeletionTimestamp() == nil && o.GetDeletionTimestamp() != nil
	o.SetGeneration(old.GetGeneration())
	if k.generation && s.subresource == "" && (deleting || !sameSpec(old, o)) {
		o.SetGeneration(old.GetGeneration() + 1)
	}
	path := field.NewPath("metadata")
	errs := apimachineryvalidation.ValidateObjectMetaAccessor(o, k.Namespaced, k.nameFn, path)
	if !deleting {
		errs = append(errs, apimachineryvalidation.ValidateObjectMetaAccessorUpdate(o, old, path)...)
	}
	if len(errs) > 0 {
		return apierrors.NewInvalid(k.GVK.GroupKind(), o.GetName(), errs)
	}
	return nil
}

// sameSpec tells whether two versions of an object are the same outside their type, metadata
// and status.
func sameSpec(a, b client.Object) bool {
	ua, err := runtime.DefaultUnstructuredConverter.ToUnstructured(a)
	if err != nil {
		return false
	}
	ub, err := runtime.DefaultUnstructuredConverter.ToUnstructured(b)
	if err != nil {
		return false
	}
	for _, m := range []map[string]any{ua, ub} {
		for _, f := range []string{"apiVersion", "kind", "metadata", "status"} {
			delete(m, f)
		}
	}
	return apiequality.Semantic.DeepEqual(ua, ub)
}

// clearStatus sets the Status field of a typed object to its zero value.
func clearStatus(o client.Object) {
	v := reflect.ValueOf(o)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return
	}
	if f := v.Elem().FieldByName("Status"); f.IsValid() && f.CanSet() {
		f.Set(reflect.Zero(f.Type()))
	}
}

// watchLocked subscribes w to the changes of a resource. s.mu must be held.
func (s *store) watchLocked(gvr schema.GroupVersionResource, w *watcher) {
	if s.watchers[gvr] == nil {
		s.watchers[gvr] = map[*watcher]struct{}{}
	}
	s.watchers[gvr][w] = struct{}{}
}

// unwatch ends w's subscription, if the store has not dropped it already.
func (s *store) unwatch(gvr schema.GroupVersionResource, w *watcher) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.watchers[gvr], w)
}

// dropLocked ends w's subscription and tells its watch. s.mu must be held.
func (s *store) dropLocked(gvr schema.GroupVersionResource, w *watcher) {
	delete(s.watchers[gvr], w)
	close(w.dropped)
}

// watch starts a watch of the store's changes of the kind of a list, from now on, for the
// client of Server.Client. Like an HTTP watch, it sees the changes as its selectors do; it
// ends when it falls watchBuffer events behind.
func (s *store) watch(list client.ObjectList, opts ...client.ListOption) (watch.Interface, error) {
	gvk, err := apiutil.GVKForObject(list, s.kinds.scheme)
	if err != nil {
		return nil, err
	}
	gvr, _ := meta.UnsafeGuessKindToResource(gvk.GroupVersion().WithKind(strings.TrimSuffix(gvk.Kind, "List")))
	if _, err := s.kindFor(gvr); err != nil {
		return nil, err
	}
	lo := &client.ListOptions{}
	lo.ApplyOptions(opts)
	sel := newSelector(&metainternalversion.ListOptions{LabelSelector: lo.LabelSelector, FieldSelector: lo.FieldSelector})
	w := &watcher{namespace: lo.Namespace, events: make(chan *event, watchBuffer), dropped: make(chan struct{})}
	s.mu.Lock()
	s.watchLocked(gvr, w)
	s.mu.Unlock()
	sw := &storeWatch{result: make(chan watch.Event), stop: make(chan struct{})}
	go func() {
		defer close(sw.result)
		defer s.unwatch(gvr, w)
		for {
			select {
			case ev := <-w.events:
				typ, ok := sel.eventType(ev)
				if !ok {
					continue
				}
				select {
				case sw.result <- watch.Event{Type: typ, Object: ev.obj.DeepCopyObject()}:
				case <-sw.stop:
					return
				}
			case <-w.dropped:
				return
			case <-sw.stop:
				return
			case <-s.done:
				return
			}
		}
	}()
	return sw, nil
}

// storeWatch is a watch.Interface over the store's events.
type storeWatch struct {
	result   chan watch.Event
	stop     chan struct{}
	stopOnce sync.Once
}

// ResultChan returns the watch's events.
func (w *storeWatch) ResultChan() <-chan watch.Event { return w.result }

// Stop ends the watch.
func (w *storeWatch) Stop() { w.stopOnce.Do(func() { close(w.stop) }) }
