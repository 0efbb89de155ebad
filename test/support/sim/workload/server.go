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

// Package workload serves many light, simulated workload clusters from one process, each with a
// Kubernetes API endpoint of its own that real clients (client-go, controller-runtime, Cluster
// API's ClusterCache and Machine controller) use over plain HTTP, for fleet benchmarks where a
// kube-apiserver and an etcd per cluster would be far too heavy.
//
// A cluster keeps its objects in memory in controller-runtime's fake client, which checks
// resourceVersions, keeps status subresources, honours finalizers and applies merge, JSON,
// strategic merge and server-side apply patches. The Server adds what clients of a real API
// server see: one resourceVersion sequence per cluster, uid, creationTimestamp and generation,
// metadata validation, managed fields (one field manager per kind, shared by all clusters),
// writes that change nothing left unstored (same resourceVersion, no event), discovery (legacy
// and aggregated), label and field selectors, pagination, watches (including WatchList's
// initial events and bookmark), JSON, YAML and protobuf bodies, PartialObjectMetadata output,
// and errors as metav1.Status with the codes kube-apiserver uses. Requests are parsed by
// k8s.io/apiserver's RequestInfoFactory and media types negotiated by its negotiation package,
// as in kube-apiserver. Kinds it does not serve are answered as a real server answers for a
// group it does not have: 404, no discovery entry.
//
// A cluster costs its store, a listener and one goroutine; each open connection costs what
// net/http's server spends on one (a goroutine or two), each open watch a buffered channel.
//
// Known differences from kube-apiserver, none of which the clients above depend on:
//   - A watch does not replay history: one that starts from an older resourceVersion than the
//     resource's last change is answered 410 Gone (as when etcd has compacted it), and its client
//     lists again. Lists and gets ignore resourceVersion and resourceVersionMatch (they always
//     read the latest state); continue tokens do not pin a snapshot.
//   - No admission, defaulting or kind-specific strategy besides object metadata validation,
//     a new namespace's Active phase and a custom resource's status dropped on create (a
//     Pod's status, for one, is kept on create); no garbage collection (ownerReferences and
//     propagationPolicy are ignored), no graceful deletion (gracePeriodSeconds is ignored), no
//     namespace finalization (deleting a namespace leaves its objects), no disruption budgets
//     (an eviction deletes its pod); no periodic watch bookmarks (only the ones at the end of
//     the initial events and at the timeout).
//   - No OpenAPI (/openapi/v2, /openapi/v3: 404), no Table output, no authentication or
//     authorization, no dry-run of writes (dryRun=All answers without writing or computing
//     the result), no CBOR.
//   - The DELETED event of an object whose last finalizer was removed carries the object as it
//     was before that removal (with the new resourceVersion).
//   - Server-side apply works on the typed object the fake client decodes the configuration
//     into, so an applier of a built-in kind also owns the fields whose zero value the Go type
//     always serializes.
package workload

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// DefaultVersion is the version the clusters report at /version unless WithVersion says
// otherwise: the Kubernetes line of OpenShift 4.19.
var DefaultVersion = version.Info{
	Major:      "1",
	Minor:      "32",
	GitVersion: "v1.32.5",
	GitCommit:  "0000000000000000000000000000000000000000",
	BuildDate:  "2026-01-01T00:00:00Z",
	GoVersion:  runtime.Version(),
	Compiler:   runtime.Compiler,
	Platform:   runtime.GOOS + "/" + runtime.GOARCH,
}

// systemNamespaces are the namespaces kube-apiserver creates at start (its
// SystemNamespaces controller); every cluster has them if it serves Namespaces.
var systemNamespaces = []string{
	metav1.NamespaceDefault, metav1.NamespaceSystem, metav1.NamespacePublic, corev1.NamespaceNodeLease,
}

// Server serves simulated workload clusters, each on a listener of its own. It is safe for
// concurrent use.
type Server struct {
	kinds       *kindSet
	version     version.Info
	discovery   *discoveryDocs
	infoFactory *request.RequestInfoFactory
	log         logr.Logger

	mu       sync.Mutex
	closed   bool
	clusters map[string]*cluster
	// counters outlive their clusters, so that Requests still counts a removed cluster's.
	counters map[string]*requestCounter
}

// kindSet is the kinds a Server serves, with their indexes.
type kindSet struct {
	scheme *apiruntime.Scheme
	codecs serializer.CodecFactory
	list   []*kindInfo
	// byResource indexes the kinds by the group, version and resource of their URLs.
	byResource map[schema.GroupVersionResource]*kindInfo
	// byStoreGVR indexes the kinds by the resource the fake client keeps them under.
	byStoreGVR map[schema.GroupVersionResource]*kindInfo
	// namespaces is the Namespace kind, if served.
	namespaces *kindInfo
}

// Option configures a Server.
type Option func(*Server)

// WithVersion sets the version the clusters report at /version.
func WithVersion(v version.Info) Option {
	return func(s *Server) { s.version = v }
}

// New returns a Server of clusters that serve kinds (DefaultKinds for the usual ones), whose
// types and list types scheme must know. It serves nothing until AddCluster.
func New(scheme *apiruntime.Scheme, kinds []Kind, opts ...Option) (*Server, error) {
	ks := &kindSet{
		scheme:     scheme,
		codecs:     serializer.NewCodecFactory(scheme),
		byResource: map[schema.GroupVersionResource]*kindInfo{},
		byStoreGVR: map[schema.GroupVersionResource]*kindInfo{},
	}
	converter := newClientGoConverter()
	for _, k := range kinds {
		ki, err := newKindInfo(k, scheme, ks.codecs, converter)
		if err != nil {
			return nil, err
		}
		gvr := k.GVK.GroupVersion().WithResource(k.Resource)
		if ks.byResource[gvr] != nil || ks.byStoreGVR[ki.storeGVR] != nil {
			return nil, fmt.Errorf("kind %s: its resource %s is served twice", k.GVK, gvr)
		}
		ks.list = append(ks.list, ki)
		ks.byResource[gvr] = ki
		ks.byStoreGVR[ki.storeGVR] = ki
		if k.GVK == namespaceGVK {
			ks.namespaces = ki
		}
	}
	s := &Server{
		kinds:   ks,
		version: DefaultVersion,
		infoFactory: &request.RequestInfoFactory{
			APIPrefixes:          sets.NewString("api", "apis"),
			GrouplessAPIPrefixes: sets.NewString("api"),
		},
		log:      ctrllog.Log.WithName("workload-apiserver"),
		clusters: map[string]*cluster{},
		counters: map[string]*requestCounter{},
	}
	for _, o := range opts {
		o(s)
	}
	var err error
	if s.discovery, err = newDiscovery(ks.list, s.version); err != nil {
		return nil, err
	}
	return s, nil
}

// cluster is one simulated workload cluster.
type cluster struct {
	name     string
	srv      *Server
	store    *store
	counter  *requestCounter
	http     *http.Server
	serving  chan struct{} // closed when http.Serve has returned
	done     chan struct{} // closed when the cluster is removed
	mu       sync.Mutex
	removed  bool
	watching sync.WaitGroup
}

// AddCluster starts a cluster named name (unique among the Server's clusters) on a listener of
// its own on 127.0.0.1 (plain HTTP, no authentication) and returns a rest.Config for it. The
// cluster starts with the system namespaces (default, kube-system, kube-public,
// kube-node-lease) if it serves Namespaces, as a new kube-apiserver does, and nothing else.
func (s *Server) AddCluster(name string) (*rest.Config, error) {
	if name == "" {
		return nil, errors.New("a cluster needs a name")
	}
	done := make(chan struct{})
	c := &cluster{
		name:    name,
		srv:     s,
		store:   newStore(s.kinds, done),
		serving: make(chan struct{}),
		done:    done,
	}
	if s.kinds.namespaces != nil {
		for _, ns := range systemNamespaces {
			o := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
			create := func() error {
				return c.store.client.Create(context.Background(), o, client.FieldOwner("kube-apiserver"))
			}
			if err := c.store.write("", create); err != nil {
				return nil, fmt.Errorf("creating namespace %s: %w", ns, err)
			}
		}
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errors.New("the server is closed")
	}
	if s.clusters[name] != nil {
		return nil, fmt.Errorf("cluster %s exists", name)
	}
	l, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening for cluster %s: %w", name, err)
	}
	if s.counters[name] == nil {
		s.counters[name] = &requestCounter{counts: map[requestKey]int{}}
	}
	c.counter = s.counters[name]
	c.http = &http.Server{
		Handler:           c,
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	s.clusters[name] = c
	go func() {
		defer close(c.serving)
		if err := c.http.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error(err, "Serving a workload cluster failed", "cluster", name)
		}
	}()
	return &rest.Config{Host: "http://" + l.Addr().String()}, nil
}

// RemoveCluster stops a cluster: it closes its listener and connections, ends its watches and
// drops its objects. Requests still counts the requests it was sent.
func (s *Server) RemoveCluster(name string) error {
	s.mu.Lock()
	c := s.clusters[name]
	delete(s.clusters, name)
	s.mu.Unlock()
	if c == nil {
		return fmt.Errorf("cluster %s does not exist", name)
	}
	return c.stop()
}

// Client returns a client of the cluster's objects that does not go through HTTP (and so is not
// counted by Requests), for tests and to seed objects; nil if there is no such cluster. Its
// writes behave as the API's: they get resourceVersions, are validated and are sent to the
// watches. Its Watch sends the changes from now on, as the API's watches see them (without
// initial events or bookmarks); it ends if its reader falls behind.
func (s *Server) Client(name string) client.WithWatch {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.clusters[name]
	if c == nil {
		return nil
	}
	return c.store.writingClient()
}

// Clusters returns the names of the clusters, sorted.
func (s *Server) Clusters() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make([]string, 0, len(s.clusters))
	for n := range s.clusters {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// RequestKey identifies a kind of request for Requests.
type RequestKey struct {
	// Cluster is the cluster's name.
	Cluster string
	// UserAgent is the first product token of the client's User-Agent, before its "/"
	// ("manager" for "manager/v0.0.0 (linux/amd64) kubernetes/$Format").
	UserAgent string
	// Verb is the verb as k8s.io/apiserver's RequestInfo names it: get, list, watch, create,
	// update, patch, delete, deletecollection for resources; the lower-case HTTP method for
	// other paths.
	Verb string
	// Resource is the resource, followed by "/" and the subresource if any ("nodes/status");
	// empty for requests that are not to a resource.
	Resource string
	// Path is the URL path of the requests that are not to a resource (discovery, health,
	// version: "/apis", "/healthz"); empty for requests to a resource.
	Path string
}

// requestKey is a RequestKey without its cluster.
type requestKey struct {
	userAgent, verb, resource, path string
}

// requestCounter counts a cluster's requests.
type requestCounter struct {
	mu     sync.Mutex
	counts map[requestKey]int
}

// Requests returns how many requests each cluster, including removed ones, has been sent, by
// client, verb and resource or path.
func (s *Server) Requests() map[RequestKey]int {
	s.mu.Lock()
	counters := make(map[string]*requestCounter, len(s.counters))
	for n, c := range s.counters {
		counters[n] = c
	}
	s.mu.Unlock()
	out := map[RequestKey]int{}
	for name, c := range counters {
		c.mu.Lock()
		for k, n := range c.counts {
			out[RequestKey{Cluster: name, UserAgent: k.userAgent, Verb: k.verb, Resource: k.resource, Path: k.path}] += n
		}
		c.mu.Unlock()
	}
	return out
}

// count counts a request.
func (c *requestCounter) count(r *http.Request, info *request.RequestInfo) {
	ua, _, _ := strings.Cut(r.UserAgent(), "/")
	k := requestKey{userAgent: ua, verb: info.Verb}
	if info.IsResourceRequest {
		k.resource = info.Resource
		if info.Subresource != "" {
			k.resource += "/" + info.Subresource
		}
	} else {
		k.path = info.Path
	}
	c.mu.Lock()
	c.counts[k]++
	c.mu.Unlock()
}

// Close stops every cluster, ending their watches. The Server serves no new cluster after it.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	clusters := make([]*cluster, 0, len(s.clusters))
	for _, c := range s.clusters {
		clusters = append(clusters, c)
	}
	s.clusters = map[string]*cluster{}
	s.mu.Unlock()
	errs := make([]error, 0, len(clusters))
	for _, c := range clusters {
		errs = append(errs, c.stop())
	}
	return errors.Join(errs...)
}

// stop closes the cluster's listener and connections and waits for its watches to end.
func (c *cluster) stop() error {
	c.mu.Lock()
	c.removed = true
	close(c.done)
	c.mu.Unlock()
	err := c.http.Close()
	c.watching.Wait()
	<-c.serving
	if err != nil {
		return fmt.Errorf("closing cluster %s: %w", c.name, err)
	}
	return nil
}

// startWatch registers a watch that stop must wait for; false if the cluster is stopping.
func (c *cluster) startWatch() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.removed {
		return false
	}
	c.watching.Add(1)
	return true
}
