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

package inplace

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	runtimehooksv1 "sigs.k8s.io/cluster-api/api/runtime/hooks/v1alpha1"
	"sigs.k8s.io/cluster-api/controllers/clustercache"
	runtimecatalog "sigs.k8s.io/cluster-api/exp/runtime/catalog"

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
)

const ns = "default"

func scheme(tb testing.TB) *runtime.Scheme {
	tb.Helper()
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, clusterv1.AddToScheme} {
		if err := add(s); err != nil {
			tb.Fatal(err)
		}
	}
	return s
}

// cluster is a Cluster whose control plane is of kind (an OpenshiftAssistedControlPlane, or a
// KubeadmControlPlane).
func cluster(name, apiGroup, kind string) *clusterv1.Cluster {
	return &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: clusterv1.ClusterSpec{ControlPlaneRef: clusterv1.ContractVersionedObjectReference{APIGroup: apiGroup, Kind: kind, Name: name}}}
}

func clusters() []client.Object {
	return []client.Object{
		cluster("ocp", controlplanev1.GroupVersion.Group, controlplanev1.ControlPlaneKind),
		cluster("kubeadm", "controlplane.cluster.x-k8s.io", "KubeadmControlPlane"),
	}
}

func machineSet(cluster, version, infra string) clusterv1.MachineSet {
	return clusterv1.MachineSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ms-" + version},
		Spec: clusterv1.MachineSetSpec{ClusterName: cluster, Template: clusterv1.MachineTemplateSpec{Spec: clusterv1.MachineSpec{
			ClusterName: cluster, Version: version,
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "Metal3MachineTemplate", Name: infra},
		}}}}
}

func TestCanUpdateMachineSetPatchesOnlyAnOpenShiftUpgrade(t *testing.T) {
	tests := []struct {
		name             string
		cluster          string
		from, to         string
		wantStatus       runtimehooksv1.ResponseStatus
		wantVersionPatch bool
	}{
		{name: "a newer version of an OpenShift cluster's workers", cluster: "ocp", from: "v1.30.4", to: "v1.30.6",
			wantStatus: runtimehooksv1.ResponseStatusSuccess, wantVersionPatch: true},
		{name: "a newer minor version", cluster: "ocp", from: "v1.30.6", to: "v1.31.1",
			wantStatus: runtimehooksv1.ResponseStatusSuccess, wantVersionPatch: true},
		{name: "an older version: OpenShift does not downgrade", cluster: "ocp", from: "v1.30.6", to: "v1.30.4",
			wantStatus: runtimehooksv1.ResponseStatusSuccess},
		{name: "the same version (another change): a rollout", cluster: "ocp", from: "v1.30.6", to: "v1.30.6",
			wantStatus: runtimehooksv1.ResponseStatusSuccess},
		{name: "not a version", cluster: "ocp", from: "v1.30.6", to: "latest",
			wantStatus: runtimehooksv1.ResponseStatusSuccess},
		{name: "a kubeadm cluster's workers: not ours to update", cluster: "kubeadm", from: "v1.30.4", to: "v1.30.6",
			wantStatus: runtimehooksv1.ResponseStatusSuccess},
		{name: "a Cluster that cannot be read", cluster: "gone", from: "v1.30.4", to: "v1.30.6",
			wantStatus: runtimehooksv1.ResponseStatusFailure},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &Extension{Client: fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(clusters()...).Build()}
			req := &runtimehooksv1.CanUpdateMachineSetRequest{
				Current: runtimehooksv1.CanUpdateMachineSetRequestObjects{MachineSet: machineSet(tt.cluster, tt.from, "workers")},
				Desired: runtimehooksv1.CanUpdateMachineSetRequestObjects{MachineSet: machineSet(tt.cluster, tt.to, "workers")},
			}
			resp := &runtimehooksv1.CanUpdateMachineSetResponse{}
			e.CanUpdateMachineSet(context.Background(), req, resp)
			if resp.GetStatus() != tt.wantStatus {
				t.Fatalf("status %s (%s), want %s", resp.GetStatus(), resp.GetMessage(), tt.wantStatus)
			}
			if got := resp.MachineSetPatch.IsDefined(); got != tt.wantVersionPatch {
				t.Fatalf("MachineSet patch defined: %t, want %t", got, tt.wantVersionPatch)
			}
			if resp.InfrastructureMachineTemplatePatch.IsDefined() || resp.BootstrapConfigTemplatePatch.IsDefined() {
				t.Fatal("a template patch: a template change must replace the host")
			}
			if tt.wantVersionPatch {
				var ops []map[string]string
				if err := json.Unmarshal(resp.MachineSetPatch.Patch, &ops); err != nil {
					t.Fatal(err)
				}
				want := []map[string]string{{"op": "replace", "path": "/spec/template/spec/version", "value": tt.to}}
				if len(ops) != 1 || ops[0]["path"] != want[0]["path"] || ops[0]["value"] != tt.to || ops[0]["op"] != "replace" {
					t.Fatalf("patch %s, want %v", resp.MachineSetPatch.Patch, want)
				}
			}
		})
	}
}

func TestUpdateMachineWaitsForTheNodesKubelet(t *testing.T) {
	machine := func(nodeRef string) *clusterv1.Machine {
		m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "worker-0"},
			Spec: clusterv1.MachineSpec{ClusterName: "ocp", Version: "v1.30.6"}}
		if nodeRef != "" {
			m.Status.NodeRef = clusterv1.MachineNodeReference{Name: nodeRef}
		}
		return m
	}
	node := func(kubelet string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "worker-0"},
			Status: corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{KubeletVersion: kubelet}}}
	}
	tests := []struct {
		name        string
		machine     *clusterv1.Machine
		node        *corev1.Node
		wantStatus  runtimehooksv1.ResponseStatus
		wantRetry   int32
		wantMessage string
	}{
		{name: "the kubelet still runs the old version", machine: machine("worker-0"), node: node("v1.30.4+a1b2c3d"),
			wantStatus: runtimehooksv1.ResponseStatusSuccess, wantRetry: 5,
			wantMessage: "machine-config operator has not updated Node worker-0 yet: its kubelet runs v1.30.4+a1b2c3d, the Machine asks for v1.30.6"},
		{name: "the kubelet runs the version (OpenShift's build metadata aside)", machine: machine("worker-0"), node: node("v1.30.6+a1b2c3d"),
			wantStatus: runtimehooksv1.ResponseStatusSuccess},
		{name: "the kubelet runs a later version", machine: machine("worker-0"), node: node("v1.31.1"),
			wantStatus: runtimehooksv1.ResponseStatusSuccess},
		{name: "no Node yet", machine: machine(""),
			wantStatus: runtimehooksv1.ResponseStatusSuccess, wantRetry: 5, wantMessage: "has no Node yet"},
		{name: "the Node is gone", machine: machine("worker-0"),
			wantStatus: runtimehooksv1.ResponseStatusFailure, wantMessage: "is not in the workload cluster"},
		{name: "the Machine is gone",
			wantStatus: runtimehooksv1.ResponseStatusFailure, wantMessage: "reading Machine default/worker-0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := clusters()
			if tt.machine != nil {
				objs = append(objs, tt.machine)
			}
			var workload []client.Object
			if tt.node != nil {
				workload = append(workload, tt.node)
			}
			e := &Extension{
				Client: fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(objs...).WithStatusSubresource(&clusterv1.Machine{}).Build(),
				ClusterCache: clustercache.NewFakeClusterCache(fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(workload...).Build(),
					client.ObjectKey{Namespace: ns, Name: "ocp"}),
				RetryAfter: 5 * time.Second,
			}
			req := &runtimehooksv1.UpdateMachineRequest{Desired: runtimehooksv1.UpdateMachineRequestObjects{Machine: *machine("")}}
			resp := &runtimehooksv1.UpdateMachineResponse{}
			e.UpdateMachine(context.Background(), req, resp)
			if resp.GetStatus() != tt.wantStatus || resp.GetRetryAfterSeconds() != tt.wantRetry {
				t.Fatalf("status %s, retry after %ds (%q), want %s, %ds", resp.GetStatus(), resp.GetRetryAfterSeconds(), resp.GetMessage(), tt.wantStatus, tt.wantRetry)
			}
			if !strings.Contains(resp.GetMessage(), tt.wantMessage) {
				t.Fatalf("message %q, want it to contain %q", resp.GetMessage(), tt.wantMessage)
			}
		})
	}
}

func TestUpdateMachineRefusesAnotherKindOfCluster(t *testing.T) {
	e := &Extension{Client: fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(clusters()...).Build()}
	req := &runtimehooksv1.UpdateMachineRequest{Desired: runtimehooksv1.UpdateMachineRequestObjects{Machine: clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "kubeadm-worker"}, Spec: clusterv1.MachineSpec{ClusterName: "kubeadm", Version: "v1.30.6"}}}}
	resp := &runtimehooksv1.UpdateMachineResponse{}
	e.UpdateMachine(context.Background(), req, resp)
	if resp.GetStatus() != runtimehooksv1.ResponseStatusFailure || !strings.Contains(resp.GetMessage(), "not of an OpenShift cluster") {
		t.Fatalf("status %s (%q), want a failure that says the Machine is not ours", resp.GetStatus(), resp.GetMessage())
	}
}

// mux is a webhook.Server that only records the handlers registered on it.
type mux struct {
	webhook.Server
	*http.ServeMux
}

func (m mux) Register(path string, h http.Handler) { m.Handle(path, h) }

// serveExtension serves the extension's registered handlers over HTTP (closed with the test) and
// returns the server and the catalog of Cluster API's hooks, to call them as Cluster API does.
func serveExtension(t *testing.T) (*httptest.Server, *runtimecatalog.Catalog) {
	t.Helper()
	m, catalog := extensionHandler(t, nil)
	srv := httptest.NewServer(m)
	t.Cleanup(srv.Close)
	return srv, catalog
}

// extensionHandler is the handler of the extension's registered paths, admitting what ca admits
// (everyone when nil), and the catalog of Cluster API's hooks.
func extensionHandler(tb testing.TB, ca *ClientCA) (http.Handler, *runtimecatalog.Catalog) {
	tb.Helper()
	m := mux{ServeMux: http.NewServeMux()}
	e := &Extension{Client: fake.NewClientBuilder().WithScheme(scheme(tb)).WithObjects(clusters()...).Build(), ClientCA: ca}
	if err := e.Register(m); err != nil {
		tb.Fatal(err)
	}
	catalog := runtimecatalog.New()
	if err := runtimehooksv1.AddToCatalog(catalog); err != nil {
		tb.Fatal(err)
	}
	return m.ServeMux, catalog
}

// FuzzHookRequest: no request body (malformed JSON, the wrong types, deep nesting, requests of
// another hook, references to nothing) makes a hook panic or answer other than a hook response:
// HTTP 200 with Success or Failure. `go test` runs the seeds; `go test -fuzz FuzzHookRequest`
// explores.
func FuzzHookRequest(f *testing.F) {
	for _, seed := range []string{
		"", "{", "null", "[]", `"x"`, `{"current":null}`, strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
		`{"current":{"machineSet":{"metadata":{"namespace":"default"},"spec":{"clusterName":"ocp","template":{"spec":{"version":"v1.30.4"}}}}},` +
			`"desired":{"machineSet":{"spec":{"clusterName":"ocp","template":{"spec":{"version":"v1.30.6"}}}}}}`,
		`{"desired":{"machine":{"metadata":{"namespace":"default","name":"m"},"spec":{"clusterName":"ocp","version":"v1.30.6"}}}}`,
		`{"desired":{"machine":{"spec":{"clusterName":"gone","version":7}}}}`,
	} {
		f.Add([]byte(seed))
	}
	h, catalog := extensionHandler(f, nil)
	var paths []string
	for _, hook := range []struct {
		hook runtimecatalog.Hook
		name string
	}{{runtimehooksv1.Discovery, ""}, {runtimehooksv1.CanUpdateMachineSet, CanUpdateMachineSetHandler}, {runtimehooksv1.UpdateMachine, UpdateMachineHandler}} {
		gvh, err := catalog.GroupVersionHook(hook.hook)
		if err != nil {
			f.Fatal(err)
		}
		paths = append(paths, runtimecatalog.GVHToPath(gvh, hook.name))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, path := range paths {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequestWithContext(context.Background(), http.MethodPost, path, bytes.NewReader(body)))
			var resp struct {
				Status runtimehooksv1.ResponseStatus `json:"status"`
			}
			if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &resp) != nil ||
				(resp.Status != runtimehooksv1.ResponseStatusSuccess && resp.Status != runtimehooksv1.ResponseStatusFailure) {
				t.Fatalf("%s answered HTTP %d %q to %q, want a hook response", path, rec.Code, rec.Body.String(), body)
			}
		}
	})
}

// TestRegisterServesDiscoveryAndHooksAtCatalogPaths calls the extension as Cluster API does: the
// discovery path, then a hook at the path its discovery names.
func TestRegisterServesDiscoveryAndHooksAtCatalogPaths(t *testing.T) {
	srv, catalog := serveExtension(t)
	call := func(hook runtimecatalog.Hook, name string, req runtime.Object, resp runtimehooksv1.ResponseObject) {
		t.Helper()
		gvh, err := catalog.GroupVersionHook(hook)
		if err != nil {
			t.Fatal(err)
		}
		body, err := json.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		post, err := http.NewRequestWithContext(context.Background(), http.MethodPost, srv.URL+runtimecatalog.GVHToPath(gvh, name), bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		r, err := http.DefaultClient.Do(post)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = r.Body.Close() }()
		if r.StatusCode != http.StatusOK {
			t.Fatalf("%s: HTTP %d", gvh.Hook, r.StatusCode)
		}
		if err := json.NewDecoder(r.Body).Decode(resp); err != nil {
			t.Fatal(err)
		}
		if want, err := catalog.Response(gvh); err != nil || resp.GetObjectKind().GroupVersionKind() != want {
			t.Fatalf("%s answered as %v, want %v", gvh.Hook, resp.GetObjectKind().GroupVersionKind(), want)
		}
	}

	discovery := &runtimehooksv1.DiscoveryResponse{}
	call(runtimehooksv1.Discovery, "", &runtimehooksv1.DiscoveryRequest{}, discovery)
	hooks := map[string]string{}
	for _, h := range discovery.Handlers {
		hooks[h.RequestHook.Hook] = h.Name
	}
	if len(hooks) != 2 || hooks["CanUpdateMachineSet"] != CanUpdateMachineSetHandler || hooks["UpdateMachine"] != UpdateMachineHandler {
		t.Fatalf("discovery lists %v, want CanUpdateMachineSet and UpdateMachine", hooks)
	}
	// As Cluster API's discovery validation (internal/runtime/client defaultAndValidateDiscoveryResponse).
	names := map[string]bool{}
	for _, h := range discovery.Handlers {
		if names[h.Name] {
			t.Fatalf("two handlers named %s: Cluster API refuses the discovery", h.Name)
		}
		names[h.Name] = true
	}
	if _, ok := hooks["CanUpdateMachine"]; ok {
		t.Fatal("CanUpdateMachine is the KubeadmControlPlane's hook: the extension must not claim it")
	}

	can := &runtimehooksv1.CanUpdateMachineSetResponse{}
	call(runtimehooksv1.CanUpdateMachineSet, CanUpdateMachineSetHandler, &runtimehooksv1.CanUpdateMachineSetRequest{
		Current: runtimehooksv1.CanUpdateMachineSetRequestObjects{MachineSet: machineSet("ocp", "v1.30.4", "workers")},
		Desired: runtimehooksv1.CanUpdateMachineSetRequestObjects{MachineSet: machineSet("ocp", "v1.30.6", "workers")},
	}, can)
	if can.GetStatus() != runtimehooksv1.ResponseStatusSuccess || !can.MachineSetPatch.IsDefined() {
		t.Fatalf("CanUpdateMachineSet over HTTP: %s %q, patch %s", can.GetStatus(), can.GetMessage(), can.MachineSetPatch.Patch)
	}
}

// TestHookRequestBodyIsBounded: a request larger than maxHookRequestBytes is refused, though it
// is valid JSON (a small request followed by whitespace), without being read whole.
func TestHookRequestBodyIsBounded(t *testing.T) {
	srv, catalog := serveExtension(t)
	gvh, err := catalog.GroupVersionHook(runtimehooksv1.Discovery)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		padding int
		want    runtimehooksv1.ResponseStatus
	}{
		{name: "at the bound", padding: maxHookRequestBytes - len(`{}`), want: runtimehooksv1.ResponseStatusSuccess},
		{name: "over the bound", padding: maxHookRequestBytes, want: runtimehooksv1.ResponseStatusFailure},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := io.MultiReader(strings.NewReader(`{}`), io.LimitReader(spaces{}, int64(tc.padding)))
			post, err := http.NewRequestWithContext(context.Background(), http.MethodPost, srv.URL+runtimecatalog.GVHToPath(gvh, ""), body)
			if err != nil {
				t.Fatal(err)
			}
			r, err := http.DefaultClient.Do(post)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = r.Body.Close() }()
			resp := &runtimehooksv1.DiscoveryResponse{}
			if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(resp); err != nil {
				t.Fatal(err)
			}
			if resp.GetStatus() != tc.want {
				t.Fatalf("status %s (%q), want %s", resp.GetStatus(), resp.GetMessage(), tc.want)
			}
			if tc.want == runtimehooksv1.ResponseStatusFailure && !strings.Contains(resp.GetMessage(), "request body too large") {
				t.Errorf("message %q does not say the request is too large", resp.GetMessage())
			}
		})
	}
}

// spaces reads as endless JSON whitespace.
type spaces struct{}

func (spaces) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	return len(p), nil
}
