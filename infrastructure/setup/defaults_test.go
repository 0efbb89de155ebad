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

package setup_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	setup "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/infrastructure/setup"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/manager"
)

// TestClientRateLimits: the infrastructure manager's own defaults (chosen with make bench), which
// the flags still override; the other managers keep Cluster API's.
func TestClientRateLimits(t *testing.T) {
	for name, tc := range map[string]struct {
		opts  *manager.Options
		args  []string
		qps   float32
		burst int
	}{
		"infrastructure defaults": {opts: setup.NewManagerOptions(), qps: setup.DefaultQPS, burst: setup.DefaultBurst},
		"flags override":          {opts: setup.NewManagerOptions(), args: []string{"--kube-api-qps=20", "--kube-api-burst=30"}, qps: 20, burst: 30},
		"other managers":          {opts: manager.NewOptions("other"), qps: manager.DefaultQPS, burst: manager.DefaultBurst},
	} {
		t.Run(name, func(t *testing.T) {
			fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
			tc.opts.AddFlags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			if tc.opts.QPS != tc.qps || tc.opts.Burst != tc.burst {
				t.Errorf("QPS %v, burst %d; want %v, %d", tc.opts.QPS, tc.opts.Burst, tc.qps, tc.burst)
			}
		})
	}
	if setup.DefaultQPS == manager.DefaultQPS {
		t.Error("the infrastructure manager's defaults are Cluster API's")
	}
}

// TestAgentWatchesTrimmed: the manager's clients trim the Agent watches its caches decode.
func TestAgentWatchesTrimmed(t *testing.T) {
	o := setup.NewManagerOptions()
	if o.WrapTransport == nil {
		t.Fatal("the infrastructure manager's transport is not wrapped")
	}
	event := `{"type":"ADDED","object":{"kind":"Agent","metadata":{"name":"a","managedFields":[{"manager":"m"}]},"status":{"validationsInfo":{"x":[]}}}}` + "\n"
	rt := o.WrapTransport(roundTripFunc(func(*http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(strings.NewReader(event))}, nil
	}))
	resp, err := rt.RoundTrip(httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/apis/agent-install.openshift.io/v1beta1/agents?watch=true", nil))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"type":"ADDED","object":{"kind":"Agent","metadata":{"name":"a"},"status":{}}}` + "\n"; string(got) != want {
		t.Errorf("the Agent watch as the cache reads it:\n%s\nwant\n%s", got, want)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// TestSecretCache: the cache holds only the Secrets of Cluster API clusters (by their label), and
// of those the data of bootstrap data alone, without managed fields.
func TestSecretCache(t *testing.T) {
	var secrets *cache.ByObject
	for obj, by := range setup.CacheByObject() {
		if _, ok := obj.(*corev1.Secret); ok {
			secrets = &by
		}
	}
	if secrets == nil || secrets.Label == nil || secrets.Transform == nil {
		t.Fatal("Secrets are not cached by label with a transform")
	}
	if !secrets.Label.Matches(labels.Set{clusterv1.ClusterNameLabel: "c1"}) || secrets.Label.Matches(labels.Set{"other": "x"}) {
		t.Errorf("selector %s: want the Secrets with a cluster name label only", secrets.Label)
	}
	meta := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Labels: map[string]string{clusterv1.ClusterNameLabel: "c1"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}}}
	}
	data := &corev1.Secret{ObjectMeta: meta("m1-data"), Data: map[string][]byte{"format": []byte("ignition"), "value": []byte("{}")}}
	kubeconfig := &corev1.Secret{ObjectMeta: meta("c1-kubeconfig"), Data: map[string][]byte{"value.kubeconfig": []byte("secret")}}
	for _, s := range []*corev1.Secret{data, kubeconfig} {
		if _, err := secrets.Transform(s); err != nil {
			t.Fatal(err)
		}
		if s.ManagedFields != nil {
			t.Errorf("%s keeps its managed fields", s.Name)
		}
	}
	if len(data.Data) != 2 {
		t.Errorf("bootstrap data dropped: %v", data.Data)
	}
	if kubeconfig.Data != nil {
		t.Errorf("a kubeconfig's data is cached: %v", kubeconfig.Data)
	}
}
