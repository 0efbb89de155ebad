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

package controllers

import (
	"context"
	"crypto/sha256"
	"errors"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	infrav1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/infrastructure/v1beta1"
)

func TestParseBootstrapData(t *testing.T) {
	pointer := `{"ignition":{"version":"3.1.0","config":{"merge":[{"source":"https://[fd00::1]:22623/config/worker",` +
		`"httpHeaders":[{"name":"Authorization","value":"Bearer s3cr3t"},{"name":"X-Extra","value":"1"}]}]}}}`
	tests := []struct {
		name    string
		data    map[string][]byte
		want    ignitionSource
		wantErr bool
	}{
		{"pointer ignition", map[string][]byte{"format": []byte("ignition"), "value": []byte(pointer)},
			ignitionSource{URL: "https://[fd00::1]:22623/config/worker", Token: "s3cr3t", Headers: map[string]string{"X-Extra": "1"},
				MachineConfigPool: "worker"}, false},
		{"no headers", map[string][]byte{"value": []byte(`{"ignition":{"version":"3.1.0"}}`)}, ignitionSource{}, false},
		{"cloud-config", map[string][]byte{"format": []byte("cloud-config"), "value": []byte("#cloud-config")}, ignitionSource{}, true},
		{"no value", map[string][]byte{"format": []byte("ignition")}, ignitionSource{}, true},
		{"not json", map[string][]byte{"value": []byte("Bearer s3cr3t")}, ignitionSource{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			got, err := parseBootstrapData(&corev1.Secret{Data: tt.data})
			if tt.wantErr {
				g.Expect(err).To(HaveOccurred())
				g.Expect(err.Error()).NotTo(ContainSubstring("s3cr3t"))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(tt.want))
		})
	}
}

// TestSplitIgnitionURL: the AgentClusterInstall's endpoint and the Agent's machine config pool
// join back (assisted-service: path.Join(url.Path, pool)) into the ignition URL.
func TestSplitIgnitionURL(t *testing.T) {
	for in, want := range map[string][2]string{
		"https://ignition.hosted.example.com/ignition":   {"https://ignition.hosted.example.com", "ignition"},
		"https://ignition.hosted.example.com/ignition/":  {"https://ignition.hosted.example.com", "ignition"},
		"https://api.c1.example.com:22623/config/worker": {"https://api.c1.example.com:22623/config", "worker"},
		"https://[fd00::5]:22623/config/master":          {"https://[fd00::5]:22623/config", "master"},
		"https://ignition.example.com":                   {"https://ignition.example.com", ""},
		"https://ignition.example.com/":                  {"https://ignition.example.com/", ""},
		"not a url":                                      {"not a url", ""},
	} {
		endpoint, pool := splitIgnitionURL(in)
		if endpoint != want[0] || pool != want[1] {
			t.Errorf("splitIgnitionURL(%q) = %q, %q; want %q, %q", in, endpoint, pool, want[0], want[1])
		}
	}
}

// TestParseBootstrapDataHeaders: the first merge source is the URL; a bearer Authorization header
// (any case) is the token, trimmed; other headers, a non-bearer Authorization included, are kept
// from every merge entry; a header without a value is dropped.
func TestParseBootstrapDataHeaders(t *testing.T) {
	g := NewWithT(t)
	value := `{"ignition":{"version":"3.2.0","config":{"merge":[` +
		`{"httpHeaders":[{"name":"X-Without-Value"},{"name":"X-First","value":"1"}]},` +
		`{"source":"https://ignition.hosted.example.com/ignition","httpHeaders":[{"name":"authorization","value":"Bearer  tok "}]},` +
		`{"source":"https://other.example.com/config/worker","httpHeaders":[{"name":"Proxy-Authorization","value":"Basic abc"},{"name":"X-Empty","value":""}]}]}}}`
	got, err := parseBootstrapData(&corev1.Secret{Data: map[string][]byte{"format": []byte("ignition"), "value": []byte(value)}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(Equal(ignitionSource{
		URL:               "https://ignition.hosted.example.com/ignition",
		Token:             "tok",
		Headers:           map[string]string{"X-First": "1", "Proxy-Authorization": "Basic abc", "X-Empty": ""},
		MachineConfigPool: "ignition",
	}))

	value = `{"ignition":{"config":{"merge":[{"source":"https://h/config/worker","httpHeaders":[{"name":"Authorization","value":"Basic abc"}]}]}}}`
	got, err = parseBootstrapData(&corev1.Secret{Data: map[string][]byte{"value": []byte(value)}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(Equal(ignitionSource{URL: "https://h/config/worker", Headers: map[string]string{"Authorization": "Basic abc"},
		MachineConfigPool: "worker"}), "a basic Authorization header is a header, not a token")
}

// TestParseBootstrapDataErrors: each refusal says why, and never quotes the data.
func TestParseBootstrapDataErrors(t *testing.T) {
	for _, tt := range []struct {
		data map[string][]byte
		want string
	}{
		{map[string][]byte{"format": []byte("cloud-config"), "value": []byte("s3cr3t")}, `bootstrap data format is "cloud-config", only "ignition" is supported`},
		{map[string][]byte{"format": []byte("ignition")}, `bootstrap data Secret has no "value"`},
		{map[string][]byte{"value": {}}, `bootstrap data Secret has no "value"`},
		{map[string][]byte{"value": []byte("s3cr3t")}, "bootstrap data is not an Ignition JSON document"},
	} {
		_, err := parseBootstrapData(&corev1.Secret{Data: tt.data})
		NewWithT(t).Expect(err).To(MatchError(tt.want))
	}
}

// TestBootstrapData: the bootstrap data Secret is read from SecretReader when it has it, else
// from the API server (Client); an error of SecretReader other than NotFound is returned as is.
func TestBootstrapData(t *testing.T) {
	scheme := testScheme(t)
	key := client.ObjectKey{Namespace: "ns", Name: "data"}
	secret := func(from string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "data"}, Data: map[string][]byte{"from": []byte(from)}}
	}
	failing := fake.NewClientBuilder().WithScheme(scheme).WithInterceptorFuncs(interceptor.Funcs{
		Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
			return errors.New("cache broken")
		},
	}).Build()
	for _, tt := range []struct {
		name         string
		secretReader client.Reader
		live         bool
		wantFrom     string
		wantErr      string
		wantNotFound bool
	}{
		{name: "no SecretReader", live: true, wantFrom: "api"},
		{name: "in the cache", secretReader: fake.NewClientBuilder().WithScheme(scheme).WithObjects(secret("cache")).Build(), live: true, wantFrom: "cache"},
		{name: "not in the cache (no cluster name label)", secretReader: fake.NewClientBuilder().WithScheme(scheme).Build(), live: true, wantFrom: "api"},
		{name: "the cache fails", secretReader: failing, live: true, wantErr: "cache broken"},
		{name: "nowhere", secretReader: fake.NewClientBuilder().WithScheme(scheme).Build(), wantNotFound: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			b := fake.NewClientBuilder().WithScheme(scheme)
			if tt.live {
				b = b.WithObjects(secret("api"))
			}
			r := &AgentMachineReconciler{Client: b.Build(), SecretReader: tt.secretReader}
			got, err := r.bootstrapData(context.Background(), key)
			switch {
			case tt.wantErr != "":
				g.Expect(err).To(MatchError(tt.wantErr))
			case tt.wantNotFound:
				g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%v", err)
			default:
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(string(got.Data["from"])).To(Equal(tt.wantFrom))
			}
		})
	}
}

// pointerConfig is a bootstrap provider's pointer ignition with a bearer token and one header.
func pointerConfig(token, header string) string {
	return `{"ignition":{"version":"3.2.0","config":{"merge":[{"source":"https://ignition.hosted.example.com/ignition",` +
		`"httpHeaders":[{"name":"Authorization","value":"Bearer ` + token + `"},{"name":"X-Nodepool","value":"` + header + `"}]}]}}}`
}

// TestRefreshIgnition: a claimed host that is not installed follows the token and headers of its
// bootstrap data, read at most once per period; the token Secret is written only when the token
// changed (with an event when it replaced one), the Agent patched only when the headers changed.
func TestRefreshIgnition(t *testing.T) {
	scheme := testScheme(t)
	const period = 5 * time.Minute
	tokenSecretKey := client.ObjectKey{Namespace: "ns", Name: "agentmachine-m1-ignition-token"}
	tokenSecret := func(token string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: tokenSecretKey.Name},
			Data: map[string][]byte{IgnitionTokenSecretKey: []byte(token)}}
	}
	bootstrap := func(value string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "data"},
			Data: map[string][]byte{"format": []byte("ignition"), "value": []byte(value)}}
	}
	type result struct {
		res   ctrl.Result
		err   string
		reads int // Gets of the bootstrap data Secret
	}
	for _, tt := range []struct {
		name        string
		period      time.Duration
		claimedNow  bool
		mutate      func(*aiv1beta1.Agent, *clusterv1.Machine)
		objects     []client.Object
		lastRead    time.Duration // ago; 0: never
		lastToken   string        // the token this process last wrote; "": none
		getErr      error
		patchErr    error
		want        result
		wantToken   string // in the token Secret; "": no token Secret
		wantPatch   string // the patch sent to the Agent; "": none
		wantEvents  []string
		wantHeaders map[string]string
	}{
		{name: "never (negative period)", period: -1, objects: []client.Object{bootstrap(pointerConfig("t2", "np2"))},
			want: result{}, wantHeaders: map[string]string{"X-Nodepool": "np1"}},
		{name: "no token reference", mutate: func(a *aiv1beta1.Agent, _ *clusterv1.Machine) { a.Spec.IgnitionEndpointTokenReference = nil },
			objects: []client.Object{bootstrap(pointerConfig("t2", "np2"))}, wantHeaders: map[string]string{"X-Nodepool": "np1"}},
		{name: "no bootstrap data name", mutate: func(_ *aiv1beta1.Agent, m *clusterv1.Machine) { m.Spec.Bootstrap.DataSecretName = nil },
			objects: []client.Object{bootstrap(pointerConfig("t2", "np2"))}, wantHeaders: map[string]string{"X-Nodepool": "np1"}},
		{name: "installed", mutate: func(a *aiv1beta1.Agent, _ *clusterv1.Machine) {
			withCondition(aiv1beta1.InstalledCondition, corev1.ConditionTrue)(a)
		}, objects: []client.Object{bootstrap(pointerConfig("t2", "np2"))}, wantHeaders: map[string]string{"X-Nodepool": "np1"}},
		// The claim read the bootstrap data: the next read is a period later.
		{name: "just claimed", claimedNow: true, objects: []client.Object{bootstrap(pointerConfig("t2", "np2"))},
			want: result{res: ctrl.Result{RequeueAfter: period}}, wantHeaders: map[string]string{"X-Nodepool": "np1"}},
		{name: "read a minute ago", lastRead: time.Minute, objects: []client.Object{bootstrap(pointerConfig("t2", "np2"))},
			want: result{res: ctrl.Result{RequeueAfter: period - time.Minute}}, wantHeaders: map[string]string{"X-Nodepool": "np1"}},
		{name: "the bootstrap data is gone", lastRead: period + time.Second,
			want: result{res: ctrl.Result{RequeueAfter: period}, reads: 1}, wantHeaders: map[string]string{"X-Nodepool": "np1"}},
		{name: "the default period", period: -2, // see below: 0
			want: result{res: ctrl.Result{RequeueAfter: DefaultIgnitionTokenRefreshPeriod}, reads: 1}, wantHeaders: map[string]string{"X-Nodepool": "np1"}},
		{name: "the bootstrap data cannot be read", getErr: errors.New("boom"),
			want: result{err: "getting bootstrap data Secret data: boom", reads: 1}, wantHeaders: map[string]string{"X-Nodepool": "np1"}},
		{name: "no token in the bootstrap data", objects: []client.Object{bootstrap(`{"ignition":{"version":"3.2.0"}}`)},
			want: result{res: ctrl.Result{RequeueAfter: period}, reads: 1}, wantHeaders: map[string]string{"X-Nodepool": "np1"}},
		{name: "unreadable bootstrap data", objects: []client.Object{bootstrap("not json")},
			want: result{res: ctrl.Result{RequeueAfter: period}, reads: 1}, wantHeaders: map[string]string{"X-Nodepool": "np1"}},
		// After a restart this process does not know the token it wrote: it writes it again,
		// without an event.
		{name: "first read since the start", objects: []client.Object{bootstrap(pointerConfig("t2", "np1"))},
			want: result{res: ctrl.Result{RequeueAfter: period}, reads: 1}, wantToken: "t2", wantHeaders: map[string]string{"X-Nodepool": "np1"}},
		{name: "the token rotated", lastToken: "t1", objects: []client.Object{bootstrap(pointerConfig("t2", "np1")), tokenSecret("t1")},
			want: result{res: ctrl.Result{RequeueAfter: period}, reads: 1}, wantToken: "t2", wantHeaders: map[string]string{"X-Nodepool": "np1"},
			wantEvents: []string{"Normal IgnitionTokenRefreshed The ignition token in bootstrap data Secret data changed; Agent a1 fetches its ignition with the new one"},
			// The token Secret's token and owner, patched and locked: nothing else of it.
			wantPatch: `{"data":{"ignition-token":"dDI="},"metadata":{"ownerReferences":[{"apiVersion":"capi-provider.agent-install.openshift.io/v1beta1",` +
				`"blockOwnerDeletion":true,"controller":true,"kind":"AgentMachine","name":"m1","uid":"am-uid"}],"resourceVersion":"999"}}`},
		{name: "the same token", lastToken: "t2", objects: []client.Object{bootstrap(pointerConfig("t2", "np1"))},
			want: result{res: ctrl.Result{RequeueAfter: period}, reads: 1}, wantHeaders: map[string]string{"X-Nodepool": "np1"}},
		{name: "the headers changed", lastToken: "t2", objects: []client.Object{bootstrap(pointerConfig("t2", "np2"))},
			want: result{res: ctrl.Result{RequeueAfter: period}, reads: 1}, wantHeaders: map[string]string{"X-Nodepool": "np2"},
			wantPatch: `{"metadata":{"resourceVersion":"999"},"spec":{"ignitionEndpointHTTPHeaders":{"X-Nodepool":"np2"}}}`},
		{name: "the headers cannot be written", lastToken: "t2", patchErr: errors.New("boom"), objects: []client.Object{bootstrap(pointerConfig("t2", "np2"))},
			want: result{err: "updating the ignition headers of Agent agents/a1: boom", reads: 1}, wantHeaders: map[string]string{"X-Nodepool": "np1"},
			wantPatch: `{"metadata":{"resourceVersion":"999"},"spec":{"ignitionEndpointHTTPHeaders":{"X-Nodepool":"np2"}}}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := context.Background()
			am := &infrav1.AgentMachine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m1", UID: "am-uid"}}
			machine := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m1"},
				Spec: clusterv1.MachineSpec{Bootstrap: clusterv1.Bootstrap{DataSecretName: ptr.To("data")}}}
			agent := testAgent("a1")
			agent.Spec.IgnitionEndpointTokenReference = &aiv1beta1.IgnitionEndpointTokenReference{Namespace: "ns", Name: tokenSecretKey.Name}
			agent.Spec.IgnitionEndpointHTTPHeaders = map[string]string{"X-Nodepool": "np1"}
			if tt.mutate != nil {
				tt.mutate(agent, machine)
			}
			reads := 0
			var patches []string
			c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(append([]client.Object{am, agent}, tt.objects...)...).
				WithInterceptorFuncs(interceptor.Funcs{
					Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
						if _, ok := obj.(*corev1.Secret); ok && key.Name == "data" {
							reads++
							if tt.getErr != nil {
								return tt.getErr
							}
						}
						return c.Get(ctx, key, obj, opts...)
					},
					Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
						data, err := patch.Data(obj)
						g.Expect(err).NotTo(HaveOccurred())
						patches = append(patches, string(data))
						if tt.patchErr != nil {
							return tt.patchErr
						}
						return c.Patch(ctx, obj, patch, opts...)
					},
				}).Build()
			recorder := events.NewFakeRecorder(10)
			r := &AgentMachineReconciler{Client: c, Recorder: recorder, IgnitionTokenRefreshPeriod: period}
			switch tt.period {
			case -1:
				r.IgnitionTokenRefreshPeriod = -time.Second
			case -2:
				r.IgnitionTokenRefreshPeriod = 0
			}
			if tt.lastRead > 0 {
				r.tokensRead.Store(am.UID, time.Now().Add(-tt.lastRead))
			}
			if tt.lastToken != "" {
				r.tokens.Store(am.UID, sha256.Sum256([]byte(tt.lastToken)))
			}
			live := &aiv1beta1.Agent{}
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(agent), live)).To(Succeed())
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(am), am)).To(Succeed())

			before := time.Now()
			res, err := r.refreshIgnition(ctx, &scope{agentMachine: am, machine: machine}, live, tt.claimedNow)
			if tt.want.err != "" {
				g.Expect(err).To(MatchError(tt.want.err))
			} else {
				g.Expect(err).NotTo(HaveOccurred())
			}
			if tt.lastRead > 0 && tt.want.reads == 0 {
				// The rest of the period, as time passed since the read.
				g.Expect(res.RequeueAfter).To(BeNumerically("~", tt.want.res.RequeueAfter, time.Second))
			} else {
				g.Expect(res).To(Equal(tt.want.res))
			}
			g.Expect(reads).To(Equal(tt.want.reads), "reads of the bootstrap data")
			if tt.want.reads > 0 || tt.claimedNow {
				last, ok := r.tokensRead.Load(am.UID)
				g.Expect(ok).To(BeTrue())
				g.Expect(last.(time.Time)).To(BeTemporally(">=", before), "the time of this read is recorded")
			}

			stored := &corev1.Secret{}
			err = c.Get(ctx, tokenSecretKey, stored)
			switch {
			case tt.wantToken == "": // no case has a token Secret it does not change
				g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "no token Secret is written")
			case tt.wantToken != "":
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(string(stored.Data[IgnitionTokenSecretKey])).To(Equal(tt.wantToken))
				g.Expect(metav1.IsControlledBy(stored, am)).To(BeTrue())
				sum, ok := r.tokens.Load(am.UID)
				g.Expect(ok).To(BeTrue())
				g.Expect(sum).To(Equal(sha256.Sum256([]byte(tt.wantToken))))
			}
			if tt.wantPatch == "" {
				g.Expect(patches).To(BeEmpty())
			} else {
				g.Expect(patches).To(Equal([]string{tt.wantPatch}))
			}
			got := &aiv1beta1.Agent{}
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(agent), got)).To(Succeed())
			g.Expect(got.Spec.IgnitionEndpointHTTPHeaders).To(Equal(tt.wantHeaders))
			g.Expect(drain(recorder)).To(Equal(tt.wantEvents))
		})
	}
}

// drain returns the events the recorder holds.
func drain(r *events.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-r.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}
