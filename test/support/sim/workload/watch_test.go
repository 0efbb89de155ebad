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
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// seen is a watch event as a test compares it.
type seen struct {
	typ  watch.EventType
	name string
}

// nextEvents reads n events from w, failing after 10 seconds without one.
func nextEvents(t *testing.T, w watch.Interface, n int) []watch.Event {
	t.Helper()
	var out []watch.Event
	for len(out) < n {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("the watch ended after %v", out)
			}
			out = append(out, ev)
		case <-time.After(10 * time.Second):
			t.Fatalf("no event after %v", out)
		}
	}
	return out
}

// summary returns the types and names of events.
func summary(events []watch.Event) []seen {
	out := make([]seen, 0, len(events))
	for _, ev := range events {
		o, _ := ev.Object.(client.Object)
		name := ""
		if o != nil {
			name = o.GetName()
		}
		out = append(out, seen{ev.Type, name})
	}
	return out
}

// watchCase is a case of TestWatch, run against a cluster of its own.
type watchCase struct {
	name string
	run  func(e *env)
}

// TestWatch checks watches with client-go's clientset: events from a resourceVersion as the
// selectors see them, 410 Gone from a stale one, WatchList's initial events and bookmark, the
// initial events of a watch without a resourceVersion, the bookmark at the timeout, watches of
// one object, and protobuf.
func TestWatch(t *testing.T) {
	s := newServer(t)
	for i, tc := range []watchCase{
		{"events from a resourceVersion, as the selectors see them", func(e *env) {
			t, ctx, cs, c := e.t, e.t.Context(), e.cs, e.c
			if err := c.Create(ctx, node("n1", map[string]string{"role": "worker"})); err != nil {
				t.Fatal(err)
			}
			list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			w, err := cs.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion, LabelSelector: "role=worker"})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			n1 := &corev1.Node{}
			if err := c.Get(ctx, client.ObjectKey{Name: "n1"}, n1); err != nil {
				t.Fatal(err)
			}
			steps := []func() error{
				// A write that changes nothing sends no event.
				func() error { return c.Update(ctx, n1) },
				func() error { return c.Status().Update(ctx, n1) },
				func() error { return c.Patch(ctx, n1, client.RawPatch("application/merge-patch+json", []byte(`{}`))) },
				func() error { return c.Create(ctx, node("n2", map[string]string{"role": "worker"})) },
				func() error { return c.Create(ctx, node("n3", nil)) },
				func() error {
					n := node("n1", map[string]string{"role": "worker"})
					n.Status.Phase = corev1.NodeRunning
					return c.Status().Patch(ctx, n, client.RawPatch("application/merge-patch+json", []byte(`{"status":{"phase":"Running"}}`)))
				},
				func() error {
					return c.Patch(ctx, node("n1", nil), client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"labels":null}}`)))
				},
				func() error {
					return c.Patch(ctx, node("n3", nil), client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"labels":{"role":"worker"}}}`)))
				},
				func() error { return c.Delete(ctx, node("n2", nil)) },
			}
			for _, step := range steps {
				if err := step(); err != nil {
					t.Fatal(err)
				}
			}
			events := nextEvents(t, w, 5)
			want := []seen{{watch.Added, "n2"}, {watch.Modified, "n1"}, {watch.Deleted, "n1"}, {watch.Added, "n3"}, {watch.Deleted, "n2"}}
			if got := summary(events); !slices.Equal(got, want) {
				t.Errorf("events %v, want %v", got, want)
			}
			last := uint64(0)
			for _, ev := range events {
				rv := mustRV(t, ev.Object.(client.Object).GetResourceVersion())
				if rv <= last {
					t.Errorf("event resourceVersions do not increase: %d after %d", rv, last)
				}
				last = rv
			}
		}},
		{"a watch from before the resource's last change is gone", func(e *env) {
			t, ctx, cs, c := e.t, e.t.Context(), e.cs, e.c
			nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			cms, err := cs.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Create(ctx, node("n", nil)); err != nil {
				t.Fatal(err)
			}
			if _, err := cs.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{ResourceVersion: nodes.ResourceVersion}); !apierrors.IsResourceExpired(err) {
				t.Errorf("watch of nodes from before a node was created: got %v, want expired", err)
			}
			w, err := cs.CoreV1().ConfigMaps("").Watch(ctx, metav1.ListOptions{ResourceVersion: cms.ResourceVersion})
			if err != nil {
				t.Errorf("watch of config maps, which did not change: %v", err)
			} else {
				w.Stop()
			}
			if _, err := cs.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{ResourceVersion: "x"}); !apierrors.IsBadRequest(err) {
				t.Errorf("watch from a bad resourceVersion: got %v, want bad request", err)
			}
		}},
		{"WatchList: the objects, then the bookmark that ends them", func(e *env) {
			t, ctx, cs, c := e.t, e.t.Context(), e.cs, e.c
			for _, n := range []string{"n1", "n2"} {
				if err := c.Create(ctx, node(n, nil)); err != nil {
					t.Fatal(err)
				}
			}
			list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			w, err := cs.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{
				SendInitialEvents:    ptr.To(true),
				ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
				AllowWatchBookmarks:  true,
			})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			events := nextEvents(t, w, 3)
			if got, want := summary(events), []seen{{watch.Added, "n1"}, {watch.Added, "n2"}, {watch.Bookmark, ""}}; !slices.Equal(got, want) {
				t.Fatalf("events %v, want %v", got, want)
			}
			bookmark := events[2].Object.(client.Object)
			if bookmark.GetAnnotations()[metav1.InitialEventsAnnotationKey] != "true" || bookmark.GetResourceVersion() != list.ResourceVersion {
				t.Errorf("bookmark %+v, want the annotation and resourceVersion %s", bookmark, list.ResourceVersion)
			}
			if err := c.Create(ctx, node("n3", nil)); err != nil {
				t.Fatal(err)
			}
			if got := summary(nextEvents(t, w, 1)); !slices.Equal(got, []seen{{watch.Added, "n3"}}) {
				t.Errorf("then %v, want n3 added", got)
			}
			if _, err := cs.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{SendInitialEvents: ptr.To(true)}); !apierrors.IsInvalid(err) {
				t.Errorf("sendInitialEvents without resourceVersionMatch: got %v, want invalid", err)
			}
		}},
		{"a watch without a resourceVersion starts with the objects", func(e *env) {
			t, ctx, cs, c := e.t, e.t.Context(), e.cs, e.c
			if err := c.Create(ctx, node("n1", nil)); err != nil {
				t.Fatal(err)
			}
			w, err := cs.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{AllowWatchBookmarks: true})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			if got := summary(nextEvents(t, w, 1)); !slices.Equal(got, []seen{{watch.Added, "n1"}}) {
				t.Errorf("events %v, want n1 added", got)
			}
		}},
		{"a watch ends at its timeout with a bookmark", func(e *env) {
			t, ctx, cs, c := e.t, e.t.Context(), e.cs, e.c
			list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			w, err := cs.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion, AllowWatchBookmarks: true, TimeoutSeconds: ptr.To[int64](1)})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			// A change to another resource moves the resourceVersion on.
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "cm"}}
			if err := c.Create(ctx, cm); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			events := nextEvents(t, w, 1)
			if events[0].Type != watch.Bookmark || events[0].Object.(client.Object).GetResourceVersion() != cm.ResourceVersion {
				t.Errorf("event %v %+v, want a bookmark at %s", events[0].Type, events[0].Object, cm.ResourceVersion)
			}
			if _, ok := <-w.ResultChan(); ok {
				t.Error("the watch did not end after its bookmark")
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("the watch ended after %v, want about a second", d)
			}
			// The client resumes from the bookmark.
			w2, err := cs.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{ResourceVersion: cm.ResourceVersion})
			if err != nil {
				t.Fatalf("resuming from the bookmark: %v", err)
			}
			w2.Stop()
		}},
		{"a watch of one object", func(e *env) {
			t, ctx, cs, c, cfg := e.t, e.t.Context(), e.cs, e.c, e.cfg
			for _, n := range []string{"n1", "n2"} {
				if err := c.Create(ctx, node(n, nil)); err != nil {
					t.Fatal(err)
				}
			}
			w, err := cs.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=n2"})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			for _, n := range []string{"n1", "n2"} {
				if err := c.Patch(ctx, node(n, nil), client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"labels":{"a":"b"}}}`))); err != nil {
					t.Fatal(err)
				}
			}
			if got, want := summary(nextEvents(t, w, 2)), []seen{{watch.Added, "n2"}, {watch.Modified, "n2"}}; !slices.Equal(got, want) {
				t.Errorf("events %v, want %v", got, want)
			}
			// The deprecated /watch/ path names the object.
			pb := rest.CopyConfig(cfg)
			pb.ContentType = runtime.ContentTypeProtobuf
			pb.AcceptContentTypes = runtime.ContentTypeProtobuf
			rc, err := rest.RESTClientFor(withCodecs(pb))
			if err != nil {
				t.Fatal(err)
			}
			w2, err := rc.Get().AbsPath("/api/v1/watch/nodes/n1").Watch(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer w2.Stop()
			if got, want := summary(nextEvents(t, w2, 1)), []seen{{watch.Added, "n1"}}; !slices.Equal(got, want) {
				t.Errorf("protobuf events of /watch/nodes/n1: %v, want %v", got, want)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := addCluster(t, s, fmt.Sprintf("watch-%d", i), "watch-test/v1")
			tc.run(&env{t: t, cfg: cfg, c: newClient(t, cfg), cs: newClientset(t, cfg)})
		})
	}
}

// withCodecs returns a copy of cfg for a REST client of core/v1 with client-go's codecs.
func withCodecs(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.GroupVersion = &corev1.SchemeGroupVersion
	cfg.APIPath = "/api"
	cfg.NegotiatedSerializer = clientgoscheme.Codecs.WithoutConversion()
	return cfg
}

// TestCache checks that a controller-runtime cache, as Cluster API's ClusterCache and our
// controllers use one, syncs with a cluster through WatchList (it lists nothing) and then sees
// objects created, changed and deleted.
func TestCache(t *testing.T) {
	ctx := testContext(t)
	s := newServer(t)
	cfg := addCluster(t, s, "a", "cache-test/v1")
	writer := rest.CopyConfig(cfg)
	writer.UserAgent = "writer"
	c := newClient(t, writer)
	if err := c.Create(ctx, node("before", nil)); err != nil {
		t.Fatal(err)
	}
	cv := clusterVersion()
	if err := c.Create(ctx, cv); err != nil {
		t.Fatal(err)
	}

	ca, err := cache.New(cfg, cache.Options{Scheme: testScheme(t)})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []client.Object{&corev1.Node{}, &configv1.ClusterVersion{}} {
		if _, err := ca.GetInformer(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	cacheCtx, stop := context.WithCancel(ctx)
	done := make(chan error)
	go func() { done <- ca.Start(cacheCtx) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	syncCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if !ca.WaitForCacheSync(syncCtx) {
		t.Fatal("the cache did not sync")
	}
	if err := ca.Get(ctx, client.ObjectKey{Name: "before"}, &corev1.Node{}); err != nil {
		t.Errorf("node created before the cache: %v", err)
	}

	eventually := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the cache did not see %s", what)
			}
		}
	}
	if err := c.Create(ctx, node("after", nil)); err != nil {
		t.Fatal(err)
	}
	eventually("a node created", func() bool { return ca.Get(ctx, client.ObjectKey{Name: "after"}, &corev1.Node{}) == nil })
	before := cv.DeepCopy()
	cv.Spec.Channel = "fast-4.18"
	if err := c.Patch(ctx, cv, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
	eventually("a ClusterVersion changed", func() bool {
		got := &configv1.ClusterVersion{}
		return ca.Get(ctx, client.ObjectKeyFromObject(cv), got) == nil && got.Spec.Channel == "fast-4.18"
	})
	if err := c.Delete(ctx, node("after", nil)); err != nil {
		t.Fatal(err)
	}
	eventually("a node deleted", func() bool {
		return apierrors.IsNotFound(ca.Get(ctx, client.ObjectKey{Name: "after"}, &corev1.Node{}))
	})

	requests := s.Requests()
	for _, resource := range []string{"nodes", "clusterversions"} {
		lists := requests[RequestKey{Cluster: "a", UserAgent: "cache-test", Verb: "list", Resource: resource}]
		watches := requests[RequestKey{Cluster: "a", UserAgent: "cache-test", Verb: "watch", Resource: resource}]
		if lists != 0 || watches == 0 {
			t.Errorf("%s: the cache listed %d times and watched %d times, want WatchList: no list", resource, lists, watches)
		}
	}
}

// TestSlowWatchIsDropped checks that the store drops a watch that falls watchBuffer events
// behind, so that a slow client cannot hold the cluster's writes.
func TestSlowWatchIsDropped(t *testing.T) {
	ctx := testContext(t)
	s := newServer(t)
	addCluster(t, s, "a", "slow-test/v1")
	st := s.clusters["a"].store
	w := &watcher{events: make(chan *event, watchBuffer), dropped: make(chan struct{})}
	gvr := corev1.SchemeGroupVersion.WithResource("nodes")
	st.mu.Lock()
	st.watchLocked(gvr, w)
	st.mu.Unlock()
	c := s.Client("a")
	for i := range watchBuffer {
		if err := c.Create(ctx, node(fmt.Sprintf("n%d", i), nil)); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-w.dropped:
		t.Fatal("the watch was dropped before it fell behind")
	default:
	}
	if err := c.Create(ctx, node("one-too-many", nil)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.dropped:
	default:
		t.Fatal("the watch was not dropped")
	}
	if _, ok := st.unwatchAt(gvr, w); ok {
		t.Error("a dropped watch was still subscribed")
	}
}

// TestClientWatch checks the watch of Server.Client: it sees the changes made over HTTP as the
// API's watches do, and ends when stopped or when its cluster is removed.
func TestClientWatch(t *testing.T) {
	ctx := testContext(t)
	s := newServer(t)
	c := newClient(t, addCluster(t, s, "a", "client-watch-test/v1"))
	w, err := s.Client("a").Watch(ctx, &corev1.NodeList{}, client.MatchingLabels{"role": "worker"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, node("other", nil)); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, node("worker", map[string]string{"role": "worker"})); err != nil {
		t.Fatal(err)
	}
	events := nextEvents(t, w, 1)
	if got := summary(events); !slices.Equal(got, []seen{{watch.Added, "worker"}}) {
		t.Errorf("events %v, want worker added", got)
	}
	if _, ok := events[0].Object.(*corev1.Node); !ok {
		t.Errorf("event object %T, want a Node", events[0].Object)
	}
	w.Stop()
	for range w.ResultChan() {
	}
	if _, err := s.Client("a").Watch(ctx, &corev1.ServiceAccountList{}); err == nil {
		t.Error("a watch of a kind the cluster does not serve started")
	}
	w, err = s.Client("a").Watch(ctx, &configv1.ClusterOperatorList{})
	if err != nil {
		t.Fatalf("watch of cluster operators: %v", err)
	}
	if err := s.RemoveCluster("a"); err != nil {
		t.Fatal(err)
	}
	select {
	case _, ok := <-w.ResultChan():
		if ok {
			t.Error("a watch of a removed cluster sent an event")
		}
	case <-time.After(10 * time.Second):
		t.Error("a watch of a removed cluster did not end")
	}
}

// TestConcurrentWrites writes to several clusters from several goroutines at once, each
// cluster watched, and checks that every watch sees every change of its cluster in order (run
// it with -race).
func TestConcurrentWrites(t *testing.T) {
	ctx := testContext(t)
	s := newServer(t)
	const clusters, writers, nodes = 3, 3, 5
	type result struct {
		cluster string
		events  int
		err     error
	}
	results := make(chan result, clusters)
	var writes sync.WaitGroup
	for i := range clusters {
		name := fmt.Sprintf("c%d", i)
		cfg := addCluster(t, s, name, "concurrency-test/v1")
		cs := newClientset(t, cfg)
		w, err := cs.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{ResourceVersion: "", AllowWatchBookmarks: true})
		if err != nil {
			t.Fatal(err)
		}
		// Each writer creates its nodes, puts their status and patches their labels: three
		// changes a node.
		want := writers * nodes * 3
		go func() {
			defer w.Stop()
			last, n := uint64(0), 0
			for n < want {
				select {
				case ev, ok := <-w.ResultChan():
					if !ok {
						results <- result{name, n, fmt.Errorf("the watch ended")}
						return
					}
					rv, err := strconv.ParseUint(ev.Object.(client.Object).GetResourceVersion(), 10, 64)
					if err != nil || rv <= last {
						results <- result{name, n, fmt.Errorf("resourceVersion %d after %d (%v)", rv, last, err)}
						return
					}
					last = rv
					n++
				case <-time.After(20 * time.Second):
					results <- result{name, n, fmt.Errorf("no event")}
					return
				}
			}
			results <- result{name, n, nil}
		}()
		for j := range writers {
			c := newClient(t, cfg)
			writes.Add(1)
			go func() {
				defer writes.Done()
				for k := range nodes {
					n := node(fmt.Sprintf("w%d-n%d", j, k), nil)
					if err := c.Create(ctx, n); err != nil {
						t.Error(err)
						return
					}
					n.Status.Phase = corev1.NodeRunning
					if err := c.Status().Update(ctx, n); err != nil {
						t.Error(err)
						return
					}
					patch := client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"labels":{"done":"yes"}}}`))
					if err := c.Patch(ctx, n, patch); err != nil {
						t.Error(err)
						return
					}
					if err := c.List(ctx, &corev1.NodeList{}); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
	}
	writes.Wait()
	for range clusters {
		r := <-results
		if r.err != nil {
			t.Errorf("cluster %s: after %d events: %v", r.cluster, r.events, r.err)
		}
	}
}
