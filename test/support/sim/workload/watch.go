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
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/endpoints/handlers/negotiation"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// watch serves a watch of a collection, or of one object through a metadata.name selector, as
// kube-apiserver's watch cache (k8s.io/apiserver/pkg/storage/cacher) serves it:
//
//   - Without a resourceVersion (or "0"), the watch starts with an ADDED event for every
//     object that matches ("Get State and Start at Most Recent").
//   - With sendInitialEvents=true (WatchList, which client-go's reflectors use by default
//     since v0.35), it also sends, after those events, a BOOKMARK whose object carries the
//     resourceVersion they are as of and the annotation k8s.io/initial-events-end: "true".
//   - From a resourceVersion, it sends the changes after it. History is not kept: if the
//     resource changed since, the watch is refused with 410 Gone ("too old resource
//     version"), as when etcd has compacted it, and the client lists again.
//   - A change that makes an object match the selectors is sent as ADDED, one that makes it
//     stop matching as DELETED.
//   - It ends after timeoutSeconds, first sending a BOOKMARK with the current resourceVersion
//     if the client allows bookmarks, as kube-apiserver does shortly before a watch times out,
//     so that the client resumes from there without missing anything; it ends at once when the
//     client falls watchBuffer events behind (the client then lists again).
//
// Events are newline-delimited JSON metav1.WatchEvent frames (or length-delimited protobuf ones
// if the client asks), flushed as they are written.
func (c *cluster) watch(rr *resourceRequest, opts *metainternalversion.ListOptions) {
	mt, info, err := negotiation.NegotiateOutputMediaType(rr.r, rr.k.serializer, partialRestrictions{})
	if err == nil && info.StreamSerializer == nil {
		err = negotiation.NewNotAcceptableError([]string{runtime.ContentTypeJSON, runtime.ContentTypeProtobuf})
	}
	if err != nil {
		writeError(rr.w, err)
		return
	}
	flusher, ok := rr.w.(http.Flusher)
	if !ok {
		writeError(rr.w, errors.New("the response cannot be streamed"))
		return
	}
	if !c.startWatch() {
		writeError(rr.w, apierrors.NewServiceUnavailable("the cluster is shutting down"))
		return
	}
	defer c.watching.Done()

	initial := opts.ResourceVersion == "" || opts.ResourceVersion == "0"
	if opts.SendInitialEvents != nil {
		initial = *opts.SendInitialEvents
	}
	initialBookmark := opts.SendInitialEvents != nil && *opts.SendInitialEvents && opts.AllowWatchBookmarks
	sel := newSelector(opts)
	gvr := rr.k.storeGVR
	st := c.store
	w := &watcher{namespace: rr.namespace, events: make(chan *event, watchBuffer), dropped: make(chan struct{})}

	var items []client.Object
	st.mu.Lock()
	if !initial && opts.SendInitialEvents == nil {
		from, err := strconv.ParseUint(opts.ResourceVersion, 10, 64)
		if err == nil && st.lastRV[gvr] > from {
			err = apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", from, st.lastRV[gvr]))
		}
		if err != nil {
			st.mu.Unlock()
			if !apierrors.IsResourceExpired(err) {
				err = apierrors.NewBadRequest(fmt.Sprintf("invalid resource version %q: %v", opts.ResourceVersion, err))
			}
			writeError(rr.w, err)
			return
		}
	}
	if initial {
		items, err = c.listLocked(rr.k, rr.namespace, sel)
		if err != nil {
			st.mu.Unlock()
			writeError(rr.w, err)
			return
		}
	}
	startRV := st.rv
	st.watchLocked(gvr, w)
	st.mu.Unlock()
	defer st.unwatch(gvr, w)

	contentType := info.MediaType
	if info.MediaType == runtime.ContentTypeProtobuf {
		contentType += ";stream=watch"
	}
	rr.w.Header().Set("Content-Type", contentType)
	rr.w.Header().Set("X-Content-Type-Options", "nosniff")
	rr.w.WriteHeader(http.StatusOK)
	flusher.Flush()

	ww := &watchWriter{
		encoder:  streaming.NewEncoder(info.StreamSerializer.Framer.NewFrameWriter(rr.w), info.StreamSerializer.Serializer),
		embedded: info.Serializer,
		partial:  mt.Convert,
		sel:      sel,
	}
	for _, o := range items {
		if err := ww.send(watch.Added, o); err != nil {
			return
		}
	}
	if initialBookmark {
		if err := ww.send(watch.Bookmark, c.bookmark(rr.k, startRV, true)); err != nil {
			return
		}
	}
	flusher.Flush()

	var timeout <-chan time.Time
	if opts.TimeoutSeconds != nil && *opts.TimeoutSeconds > 0 {
		t := time.NewTimer(time.Duration(*opts.TimeoutSeconds) * time.Second)
		defer t.Stop()
		timeout = t.C
	}
	for {
		select {
		case ev := <-w.events:
			if err := ww.sendEvent(ev); err != nil {
				return
			}
			if len(w.events) == 0 {
				flusher.Flush()
			}
		case <-timeout:
			rv, ok := st.unwatchAt(gvr, w)
			if !ok {
				return
			}
			for len(w.events) > 0 {
				if err := ww.sendEvent(<-w.events); err != nil {
					return
				}
			}
			if opts.AllowWatchBookmarks {
				_ = ww.send(watch.Bookmark, c.bookmark(rr.k, rv, false))
			}
			flusher.Flush()
			return
		case <-w.dropped:
			return
		case <-rr.r.Context().Done():
			return
		case <-c.done:
			return
		}
	}
}

// bookmark returns the object of a BOOKMARK event: an empty object of the kind with only a
// resourceVersion and, for the end of the initial events, their annotation.
func (c *cluster) bookmark(k *kindInfo, rv uint64, initialEnd bool) client.Object {
	o := k.newObject(c.srv.kinds.scheme)
	o.SetResourceVersion(strconv.FormatUint(rv, 10))
	if initialEnd {
		o.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
	}
	return o
}

// watchWriter writes a watch's events.
type watchWriter struct {
	encoder  streaming.Encoder
	embedded runtime.Encoder
	partial  *schema.GroupVersionKind
	sel      *selector
	buf      bytes.Buffer
}

// sendEvent writes a change as the watch's selectors see it.
func (ww *watchWriter) sendEvent(ev *event) error {
	typ, ok := ww.sel.eventType(ev)
	if !ok {
		return nil
	}
	return ww.send(typ, ev.obj)
}

// eventType returns the type of event a change is for a watch with the selectors, as
// kube-apiserver's watch cache gives it (cacheWatcher.convertToWatchEvent): a modification that
// makes an object match is ADDED, one that makes it stop matching is DELETED; false if the
// watch does not see the change.
func (s *selector) eventType(ev *event) (watch.EventType, bool) {
	matches := s.matches(ev.obj)
	if ev.typ != watch.Modified || ev.old == nil {
		return ev.typ, matches
	}
	matched := s.matches(ev.old)
	switch {
	case matches && matched:
		return watch.Modified, true
	case matches:
		return watch.Added, true
	case matched:
		return watch.Deleted, true
	default:
		return "", false
	}
}

// send writes an event.
func (ww *watchWriter) send(typ watch.EventType, obj runtime.Object) error {
	if ww.partial != nil {
		obj = toPartial(obj, *ww.partial)
	}
	ww.buf.Reset()
	if err := ww.embedded.Encode(obj, &ww.buf); err != nil {
		return err
	}
	return ww.encoder.Encode(&metav1.WatchEvent{Type: string(typ), Object: runtime.RawExtension{Raw: ww.buf.Bytes()}})
}

// unwatchAt ends w's subscription and returns the resourceVersion all the events it was sent
// are as of; false if the store had dropped it.
func (s *store) unwatchAt(gvr schema.GroupVersionResource, w *watcher) (uint64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.watchers[gvr][w]; !ok {
		return 0, false
	}
	delete(s.watchers[gvr], w)
	return s.rv, true
}
