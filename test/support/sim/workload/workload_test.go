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
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// testScheme is the scheme of the tests' servers and clients: client-go's kinds and
// config.openshift.io/v1.
func testScheme(tb testing.TB) *runtime.Scheme {
	tb.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		tb.Fatal(err)
	}
	if err := configv1.Install(s); err != nil {
		tb.Fatal(err)
	}
	return s
}

// newServer returns a Server of DefaultKinds, closed at the end of the test.
func newServer(tb testing.TB) *Server {
	tb.Helper()
	s, err := New(testScheme(tb), DefaultKinds())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Error(err)
		}
	})
	return s
}

// addCluster adds a cluster and returns its rest.Config, with the user agent given.
func addCluster(tb testing.TB, s *Server, name, userAgent string) *rest.Config {
	tb.Helper()
	cfg, err := s.AddCluster(name)
	if err != nil {
		tb.Fatal(err)
	}
	cfg.UserAgent = userAgent
	return cfg
}

// newClient returns a controller-runtime client of a cluster.
func newClient(tb testing.TB, cfg *rest.Config) client.WithWatch {
	tb.Helper()
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: testScheme(tb)})
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// env is what a case of a table-driven test gets: a cluster of its own and clients of it.
type env struct {
	t   *testing.T
	cfg *rest.Config
	c   client.WithWatch
	cs  *kubernetes.Clientset
}

// newClientset returns a client-go clientset of a cluster.
func newClientset(tb testing.TB, cfg *rest.Config) *kubernetes.Clientset {
	tb.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return cs
}

// testContext returns a context that ends with the test, after a minute at most.
func testContext(tb testing.TB) context.Context {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	tb.Cleanup(cancel)
	return ctx
}

// response is a raw HTTP response.
type response struct {
	code   int
	header http.Header
	body   []byte
}

// do sends a raw HTTP request to a cluster.
func do(tb testing.TB, ctx context.Context, cfg *rest.Config, method, path string, header map[string]string, body string) response {
	tb.Helper()
	req, err := http.NewRequestWithContext(ctx, method, cfg.Host+path, strings.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("User-Agent", cfg.UserAgent)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return response{code: resp.StatusCode, header: resp.Header, body: b}
}

// statusOf decodes a metav1.Status answer.
func statusOf(tb testing.TB, r response) metav1.Status {
	tb.Helper()
	var st metav1.Status
	if err := json.Unmarshal(r.body, &st); err != nil || st.Kind != "Status" {
		tb.Fatalf("answer %d %q is not a Status: %v", r.code, r.body, err)
	}
	return st
}

// codeOf returns the HTTP code of an API error, 0 for nil or another error.
func codeOf(err error) int32 {
	var s apierrors.APIStatus
	if errors.As(err, &s) {
		return s.Status().Code
	}
	return 0
}

// mustRV parses a resourceVersion.
func mustRV(tb testing.TB, rv string) uint64 {
	tb.Helper()
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		tb.Fatalf("resourceVersion %q: %v", rv, err)
	}
	return n
}

// names returns the names of a list's items.
func names[T any, PT interface {
	*T
	client.Object
}](items []T) []string {
	out := make([]string, 0, len(items))
	for i := range items {
		out = append(out, PT(&items[i]).GetName())
	}
	return out
}

func TestNew(t *testing.T) {
	scheme := testScheme(t)
	unknown := schema.GroupVersionKind{Group: "machine.openshift.io", Version: "v1beta1", Kind: "Machine"}
	for _, tc := range []struct {
		name  string
		kinds []Kind
		ok    bool
	}{
		{"default kinds", DefaultKinds(), true},
		{"no kind", nil, true},
		{"kind not in the scheme", []Kind{{GVK: unknown, Resource: "machines", Namespaced: true}}, false},
		{"resource twice", append(DefaultKinds(), DefaultKinds()[1]), false},
		{"upper-case resource", []Kind{{GVK: corev1.SchemeGroupVersion.WithKind("Node"), Resource: "Nodes"}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(scheme, tc.kinds)
			if (err == nil) != tc.ok {
				t.Fatalf("New: error %v, want ok %v", err, tc.ok)
			}
			if s != nil {
				if err := s.Close(); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

// TestNonResource checks the health checks, /version, the discovery documents' codes and
// content types, and the answers to paths and methods a real API server does not serve.
func TestNonResource(t *testing.T) {
	ctx := testContext(t)
	s, err := New(testScheme(t), DefaultKinds(), WithVersion(version.Info{Major: "1", Minor: "33", GitVersion: "v1.33.1"}))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cfg := addCluster(t, s, "a", "paths-test/v1")
	for _, tc := range []struct {
		method, path, accept string
		code                 int
		contentType, body    string
	}{
		{http.MethodGet, "/", "", http.StatusOK, "text/plain; charset=utf-8", "ok"},
		{http.MethodGet, "/healthz", "", http.StatusOK, "text/plain; charset=utf-8", "ok"},
		{http.MethodGet, "/readyz", "", http.StatusOK, "text/plain; charset=utf-8", "ok"},
		{http.MethodGet, "/readyz/ping", "", http.StatusOK, "text/plain; charset=utf-8", "ok"},
		{http.MethodGet, "/livez", "", http.StatusOK, "text/plain; charset=utf-8", "ok"},
		{http.MethodGet, "/version", "", http.StatusOK, "application/json", `"gitVersion":"v1.33.1"`},
		{http.MethodGet, "/api", "", http.StatusOK, "application/json", `"kind":"APIVersions"`},
		{http.MethodGet, "/api", discovery.AcceptV2 + "," + discovery.AcceptV1, http.StatusOK, aggregatedContentType, `"kind":"APIGroupDiscoveryList"`},
		{http.MethodGet, "/apis", discovery.AcceptV2Beta1 + "," + discovery.AcceptV1, http.StatusOK, "application/json", `"kind":"APIGroupList"`},
		{http.MethodGet, "/apis", discovery.AcceptV2, http.StatusOK, aggregatedContentType, `"name":"config.openshift.io"`},
		{http.MethodGet, "/api/v1", "", http.StatusOK, "application/json", `"name":"nodes/status"`},
		{http.MethodGet, "/apis/config.openshift.io", "", http.StatusOK, "application/json", `"preferredVersion"`},
		{http.MethodGet, "/apis/config.openshift.io/v1", "", http.StatusOK, "application/json", `"kind":"ClusterVersion"`},
		{http.MethodGet, "/apis/config.openshift.io/v1", "application/vnd.kubernetes.protobuf", http.StatusNotAcceptable, "application/json", `"reason":"NotAcceptable"`},
		{http.MethodGet, "/apis/machine.openshift.io", "", http.StatusNotFound, "application/json", `"reason":"NotFound"`},
		{http.MethodGet, "/apis/machine.openshift.io/v1beta1", "", http.StatusNotFound, "application/json", `"reason":"NotFound"`},
		{http.MethodGet, "/apis/config.openshift.io/v2", "", http.StatusNotFound, "application/json", `"reason":"NotFound"`},
		{http.MethodGet, "/openapi/v2", "", http.StatusNotFound, "application/json", `"reason":"NotFound"`},
		{http.MethodPost, "/apis", "", http.StatusMethodNotAllowed, "application/json", `"reason":"MethodNotAllowed"`},
	} {
		t.Run(tc.method+" "+tc.path+" "+tc.accept, func(t *testing.T) {
			r := do(t, ctx, cfg, tc.method, tc.path, map[string]string{"Accept": tc.accept}, "")
			if r.code != tc.code || r.header.Get("Content-Type") != tc.contentType || !strings.Contains(string(r.body), tc.body) {
				t.Errorf("got %d %q %q, want %d %q and a body with %q", r.code, r.header.Get("Content-Type"), r.body, tc.code, tc.contentType, tc.body)
			}
		})
	}
}

// TestDiscovery checks discovery with client-go's discovery client, aggregated and legacy, and
// with controller-runtime's dynamic RESTMapper, which must resolve Node and ClusterVersion and
// not machine.openshift.io's Machine.
func TestDiscovery(t *testing.T) {
	s := newServer(t)
	cfg := addCluster(t, s, "a", "discovery-test/v1")
	for _, legacy := range []bool{false, true} {
		t.Run(fmt.Sprintf("legacy %v", legacy), func(t *testing.T) {
			dc, err := discovery.NewDiscoveryClientForConfig(cfg)
			if err != nil {
				t.Fatal(err)
			}
			dc.UseLegacyDiscovery = legacy
			groups, lists, err := dc.ServerGroupsAndResources()
			if err != nil {
				t.Fatal(err)
			}
			var groupNames []string
			for _, g := range groups {
				groupNames = append(groupNames, g.Name)
			}
			if want := []string{"", "storage.k8s.io", "config.openshift.io"}; !slices.Equal(groupNames, want) {
				t.Errorf("groups %v, want %v", groupNames, want)
			}
			resources := map[string]metav1.APIResource{}
			for _, l := range lists {
				for _, r := range l.APIResources {
					resources[l.GroupVersion+" "+r.Name] = r
				}
			}
			for key, want := range map[string]metav1.APIResource{
				"v1 nodes":                               {Name: "nodes", SingularName: "node", Kind: "Node", Verbs: objectVerbs},
				"v1 nodes/status":                        {Name: "nodes/status", SingularName: "node", Kind: "Node", Verbs: statusVerbs},
				"v1 pods/eviction":                       {Name: "pods/eviction", SingularName: "pod", Namespaced: true, Group: "policy", Version: "v1", Kind: "Eviction", Verbs: evictionVerbs},
				"v1 configmaps":                          {Name: "configmaps", SingularName: "configmap", Namespaced: true, Kind: "ConfigMap", Verbs: objectVerbs},
				"config.openshift.io/v1 clusterversions": {Name: "clusterversions", SingularName: "clusterversion", Kind: "ClusterVersion", Verbs: objectVerbs},
				"config.openshift.io/v1 clusterversions/status": {Name: "clusterversions/status", SingularName: "clusterversion", Kind: "ClusterVersion", Verbs: statusVerbs},
			} {
				got := resources[key]
				// Aggregated discovery fills in the group and version of every resource.
				if want.Group == "" {
					got.Group, got.Version = "", ""
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s: got %+v, want %+v", key, got, want)
				}
			}
			if _, ok := resources["v1 secrets/status"]; ok {
				t.Error("secrets have no status subresource")
			}
		})
	}

	t.Run("Cluster API's ClusterCache connection and health probe", func(t *testing.T) {
		// As clustercache's createHTTPClientAndMapper and clusterAccessor.HealthCheck do.
		hc, err := rest.HTTPClientFor(cfg)
		if err != nil {
			t.Fatal(err)
		}
		mapper, err := apiutil.NewDynamicRESTMapper(cfg, hc)
		if err != nil {
			t.Fatal(err)
		}
		rc := rest.CopyConfig(cfg)
		rc.NegotiatedSerializer = serializer.NegotiatedSerializerWrapper(runtime.SerializerInfo{
			Serializer: runtime.NoopEncoder{Decoder: clientgoscheme.Codecs.UniversalDecoder()},
		})
		restClient, err := rest.UnversionedRESTClientForConfigAndClient(rc, hc)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := restClient.Get().AbsPath("/").Timeout(5 * time.Second).DoRaw(t.Context()); err != nil {
			t.Errorf("health probe: %v", err)
		}
		if _, err := mapper.RESTMapping(schema.GroupKind{Kind: "Node"}, "v1"); err != nil {
			t.Errorf("Node mapping: %v", err)
		}
	})

	t.Run("dynamic RESTMapper", func(t *testing.T) {
		hc, err := rest.HTTPClientFor(cfg)
		if err != nil {
			t.Fatal(err)
		}
		mapper, err := apiutil.NewDynamicRESTMapper(cfg, hc)
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			gk         schema.GroupKind
			resource   string
			namespaced bool
		}{
			{schema.GroupKind{Kind: "Node"}, "nodes", false},
			{schema.GroupKind{Kind: "Pod"}, "pods", true},
			{schema.GroupKind{Group: "config.openshift.io", Kind: "ClusterVersion"}, "clusterversions", false},
		} {
			m, err := mapper.RESTMapping(tc.gk)
			if err != nil {
				t.Fatalf("%s: %v", tc.gk, err)
			}
			if m.Resource.Resource != tc.resource || (m.Scope.Name() == meta.RESTScopeNameNamespace) != tc.namespaced {
				t.Errorf("%s: got %s %s", tc.gk, m.Resource, m.Scope.Name())
			}
		}
		_, err = mapper.RESTMapping(schema.GroupKind{Group: "machine.openshift.io", Kind: "Machine"}, "v1beta1")
		if !meta.IsNoMatchError(err) {
			t.Errorf("machine.openshift.io Machine: got %v, want a no-match error", err)
		}
	})
}

// TestIsolation checks that clusters do not see each other's objects.
func TestIsolation(t *testing.T) {
	ctx := testContext(t)
	s := newServer(t)
	a := newClient(t, addCluster(t, s, "a", "isolation-test/v1"))
	b := newClient(t, addCluster(t, s, "b", "isolation-test/v1"))
	if _, err := s.AddCluster("a"); err == nil {
		t.Error("a second cluster a was added")
	}
	if err := a.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "only-in-a"}}); err != nil {
		t.Fatal(err)
	}
	if err := b.Get(ctx, client.ObjectKey{Name: "only-in-a"}, &corev1.Node{}); !apierrors.IsNotFound(err) {
		t.Errorf("b: get only-in-a: got %v, want not found", err)
	}
	nodes := &corev1.NodeList{}
	if err := b.List(ctx, nodes); err != nil || len(nodes.Items) != 0 {
		t.Errorf("b: nodes %v (%v), want none", names(nodes.Items), err)
	}
	if err := s.Client("b").Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "only-in-b"}}); err != nil {
		t.Fatal(err)
	}
	if err := a.List(ctx, nodes); err != nil || !slices.Equal(names(nodes.Items), []string{"only-in-a"}) {
		t.Errorf("a: nodes %v (%v), want only-in-a", names(nodes.Items), err)
	}
	if got := s.Clusters(); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("clusters %v, want a and b", got)
	}
}

// TestRequests checks that requests are counted by cluster, client, verb and resource or path.
func TestRequests(t *testing.T) {
	ctx := testContext(t)
	s := newServer(t)
	cfgA := addCluster(t, s, "a", "alpha/v1.2.3 (linux/amd64) kubernetes/abcdef")
	cfgB := addCluster(t, s, "b", "beta")
	// A static mapper: the discovery of controller-runtime's client would add requests.
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(corev1.SchemeGroupVersion.WithKind("Node"), meta.RESTScopeRoot)
	a, err := client.New(cfgA, client.Options{Scheme: testScheme(t), Mapper: mapper})
	if err != nil {
		t.Fatal(err)
	}
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}}
	if err := a.Create(ctx, n); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := a.Get(ctx, client.ObjectKeyFromObject(n), n); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Status().Update(ctx, n); err != nil {
		t.Fatal(err)
	}
	if err := a.Get(ctx, client.ObjectKey{Name: "missing"}, &corev1.Node{}); !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	do(t, ctx, cfgB, http.MethodGet, "/apis", nil, "")
	do(t, ctx, cfgB, http.MethodGet, "/healthz", nil, "")
	do(t, ctx, cfgB, http.MethodGet, "/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=1", nil, "")
	do(t, ctx, cfgB, http.MethodDelete, "/api/v1/namespaces/default/configmaps", nil, "")

	want := map[RequestKey]int{
		{Cluster: "a", UserAgent: "alpha", Verb: "create", Resource: "nodes"}:               1,
		{Cluster: "a", UserAgent: "alpha", Verb: "get", Resource: "nodes"}:                  3,
		{Cluster: "a", UserAgent: "alpha", Verb: "update", Resource: "nodes/status"}:        1,
		{Cluster: "b", UserAgent: "beta", Verb: "get", Path: "/apis"}:                       1,
		{Cluster: "b", UserAgent: "beta", Verb: "get", Path: "/healthz"}:                    1,
		{Cluster: "b", UserAgent: "beta", Verb: "watch", Resource: "configmaps"}:            1,
		{Cluster: "b", UserAgent: "beta", Verb: "deletecollection", Resource: "configmaps"}: 1,
	}
	if got := s.Requests(); !reflect.DeepEqual(got, want) {
		t.Errorf("requests:\n got %v\nwant %v", got, want)
	}
	// A removed cluster's requests still count.
	if err := s.RemoveCluster("a"); err != nil {
		t.Fatal(err)
	}
	if got := s.Requests()[RequestKey{Cluster: "a", UserAgent: "alpha", Verb: "get", Resource: "nodes"}]; got != 3 {
		t.Errorf("after removal: %d gets of nodes, want 3", got)
	}
}

// TestRemoveAndClose checks that removing a cluster and closing the server end open watches
// and stop the listeners.
func TestRemoveAndClose(t *testing.T) {
	ctx := testContext(t)
	s, err := New(testScheme(t), DefaultKinds())
	if err != nil {
		t.Fatal(err)
	}
	cfgA := addCluster(t, s, "a", "close-test/v1")
	cfgB := addCluster(t, s, "b", "close-test/v1")
	watchA, err := newClientset(t, cfgA).CoreV1().Nodes().Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	watchB, err := newClientset(t, cfgB).CoreV1().Nodes().Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ended := func(w watch.Interface) bool {
		timeout := time.After(10 * time.Second)
		for {
			select {
			case _, ok := <-w.ResultChan():
				if !ok {
					return true
				}
			case <-timeout:
				return false
			}
		}
	}

	if err := s.RemoveCluster("a"); err != nil {
		t.Fatal(err)
	}
	if !ended(watchA) {
		t.Error("the watch of a removed cluster did not end")
	}
	if s.Client("a") != nil {
		t.Error("a removed cluster has a client")
	}
	if err := s.RemoveCluster("a"); err == nil {
		t.Error("removing a removed cluster succeeded")
	}
	if _, err := newClientset(t, cfgA).Discovery().ServerVersion(); err == nil {
		t.Error("a removed cluster still answers")
	}
	if _, err := s.AddCluster("a"); err != nil {
		t.Errorf("adding a removed cluster again: %v", err)
	}

	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if !ended(watchB) {
		t.Error("a watch did not end when the server closed")
	}
	if _, err := s.AddCluster("c"); err == nil {
		t.Error("a closed server added a cluster")
	}
}
