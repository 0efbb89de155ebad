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

package controllers_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"sigs.k8s.io/randfill"

	infracontroller "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/infrastructure/internal/controllers"
)

// watchEvent is one event of a watch stream as the API server writes it.
func watchEvent(tb testing.TB, typ string, obj any) []byte {
	tb.Helper()
	raw, err := json.Marshal(map[string]any{"type": typ, "object": obj})
	if err != nil {
		tb.Fatal(err)
	}
	return append(raw, '\n')
}

// decodeEvents decodes a watch stream's events as client-go's informers do (the JSON serializer
// of the scheme) and passes each Agent through TrimAgent.
func decodeEvents(tb testing.TB, stream []byte) []any {
	tb.Helper()
	decoder := serializer.WithoutConversionCodecFactory{CodecFactory: serializer.NewCodecFactory(env.Scheme)}.UniversalDeserializer()
	var out []any
	dec := json.NewDecoder(bytes.NewReader(stream))
	for dec.More() {
		var ev struct {
			Type   string          `json:"type"`
			Object json.RawMessage `json:"object"`
		}
		if err := dec.Decode(&ev); err != nil {
			tb.Fatal(err)
		}
		obj, _, err := decoder.Decode(ev.Object, nil, &aiv1beta1.Agent{})
		if err != nil {
			tb.Fatalf("decoding %s: %v", ev.Object, err)
		}
		trimmed, err := infracontroller.TrimAgent(obj)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, trimmed)
	}
	return out
}

// trimStream passes a whole stream through the watch trimmer as a response to an Agent watch.
func trimStream(tb testing.TB, stream []byte) []byte {
	tb.Helper()
	rt := infracontroller.TrimAgentWatches(roundTripFunc(func(*http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(bytes.NewReader(stream)), ContentLength: int64(len(stream))}, nil
	}))
	resp, err := rt.RoundTrip(httptest.NewRequestWithContext(tb.Context(), http.MethodGet, "/apis/agent-install.openshift.io/v1beta1/agents?watch=true&sendInitialEvents=true", nil))
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.ContentLength != -1 {
		tb.Errorf("Content-Length %d kept for a body of another length", resp.ContentLength)
	}
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// TestTrimmedWatchKeepsWhatTrimAgentKeeps: an Agent decoded from a trimmed watch event is, once
// through TrimAgent, the Agent decoded from the whole event: for Agents as assisted-service
// reports real servers (servedAgent) and for Agents with every field filled at random. The
// realistic ones lose most of their bytes.
func TestTrimmedWatchKeepsWhatTrimAgentKeeps(t *testing.T) {
	var stream bytes.Buffer
	for i := range 20 {
		var a aiv1beta1.Agent
		if err := json.Unmarshal(servedAgent(t, i), &a); err != nil {
			t.Fatal(err)
		}
		stream.Write(watchEvent(t, "ADDED", &a))
	}
	realistic := stream.Len()
	filler := randfill.NewWithSeed(45).NilChance(0.2).NumElements(0, 3).Funcs(
		func(f *metav1.FieldsV1, _ randfill.Continue) { f.Raw = []byte(`{"f:spec":{}}`) },
		func(t *metav1.Time, c randfill.Continue) { *t = metav1.Unix(c.Int63n(1<<32), 0) },
	)
	for range 200 {
		a := &aiv1beta1.Agent{}
		filler.Fill(a)
		a.APIVersion, a.Kind = aiv1beta1.GroupVersion.String(), "Agent"
		stream.Write(watchEvent(t, "MODIFIED", a))
	}
	whole := stream.Bytes()
	trimmed := trimStream(t, whole)
	want, got := decodeEvents(t, whole), decodeEvents(t, trimmed)
	if len(got) != len(want) {
		t.Fatalf("%d events through the trimmer, %d sent", len(got), len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Fatalf("event %d: trimmed Agent\n%+v\nwhole Agent\n%+v", i, got[i], want[i])
		}
	}
	realisticTrimmed := bytes.Index(trimmed, []byte(`"MODIFIED"`))
	if realisticTrimmed < 0 || realisticTrimmed*4 > realistic {
		t.Errorf("20 realistic Agents: %d bytes trimmed of %d, want less than a quarter", realisticTrimmed, realistic)
	}
	t.Logf("20 realistic Agents: %d bytes of JSON trimmed to %d", realistic, realisticTrimmed)
}

// TestTrimmedWatchStreams: each event is passed on as soon as it arrives (a watch never ends), an
// error event keeps its Status, a stream broken off mid-event ends with the parser's error, and
// closing the body closes the API server's.
func TestTrimmedWatchStreams(t *testing.T) {
	pr, pw := io.Pipe()
	rt := infracontroller.TrimAgentWatches(roundTripFunc(func(*http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}}, Body: pr, ContentLength: -1}, nil
	}))
	resp, err := rt.RoundTrip(httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/apis/agent-install.openshift.io/v1beta1/namespaces/ns/agents?watch=1", nil)) //nolint:bodyclose // closed below, and again at the end
	if err != nil {
		t.Fatal(err)
	}
	lines, ended := make(chan string), make(chan error, 1)
	go func() {
		buf := make([]byte, 1<<16)
		var line strings.Builder
		for {
			n, err := resp.Body.Read(buf)
			line.Write(buf[:n])
			for {
				s := line.String()
				i := strings.IndexByte(s, '\n')
				if i < 0 {
					break
				}
				lines <- s[:i]
				line.Reset()
				line.WriteString(s[i+1:])
			}
			if err != nil {
				ended <- err
				close(lines)
				return
			}
		}
	}()
	var a aiv1beta1.Agent
	if err := json.Unmarshal(servedAgent(t, 1), &a); err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = pw.Write(watchEvent(t, "ADDED", &a)) }()
	if got := <-lines; !strings.Contains(got, `"ADDED"`) || strings.Contains(got, "validationsInfo") || strings.Contains(got, "managedFields") {
		t.Fatalf("first event, before any other was sent: %.300s", got)
	}
	status := metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure,
		Message: "too old resource version", Reason: metav1.StatusReasonExpired, Code: http.StatusGone}
	go func() { _, _ = pw.Write(watchEvent(t, "ERROR", status)) }()
	var ev struct {
		Object metav1.Status `json:"object"`
	}
	if err := json.Unmarshal([]byte(<-lines), &ev); err != nil || !reflect.DeepEqual(ev.Object, status) {
		t.Fatalf("error event: %+v (%v), want %+v", ev.Object, err, status)
	}
	// A stream the API server broke off mid-event (the parser waits for the rest until it ends).
	go func() {
		_, _ = pw.Write([]byte(`{"type":"ADDED","object":{"kind":"Agent",]`))
		_ = pw.Close()
	}()
	if got, open := <-lines; open {
		t.Fatalf("a broken stream went on: %q", got)
	}
	if err := <-ended; err == nil || errors.Is(err, io.EOF) {
		t.Errorf("a broken stream ended with %v, want the parser's error", err)
	}
	_ = resp.Body.Close()

	// A watch the informer stops: closing the trimmed body closes the API server's.
	pr, pw = io.Pipe()
	resp, err = rt.RoundTrip(httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/apis/agent-install.openshift.io/v1beta1/agents?watch=true", nil)) //nolint:bodyclose // closed below: what is tested
	if err != nil {
		t.Fatal(err)
	}
	if err := resp.Body.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := pw.Write([]byte("{}")); !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("a write to the API server's body after the trimmed one was closed: %v, want it closed", err)
	}
}

// TestTrimAgentWatchesLeavesTheRestAlone: only a successful plain-JSON watch of Agents is trimmed;
// reads of one Agent, lists, other resources, errors, compressed and protobuf bodies pass as they
// came.
func TestTrimAgentWatchesLeavesTheRestAlone(t *testing.T) {
	var a aiv1beta1.Agent
	if err := json.Unmarshal(servedAgent(t, 2), &a); err != nil {
		t.Fatal(err)
	}
	event := watchEvent(t, "ADDED", &a)
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	_, _ = zw.Write(event)
	_ = zw.Close()
	const agents = "/apis/agent-install.openshift.io/v1beta1/agents"
	for name, tc := range map[string]struct {
		method, url string
		status      int
		header      http.Header
		body        []byte
		trimmed     bool
	}{
		"a watch of every namespace": {method: http.MethodGet, url: agents + "?watch=true", trimmed: true},
		"a watch of one namespace":   {method: http.MethodGet, url: "/apis/agent-install.openshift.io/v1beta1/namespaces/a/agents?watch=true", trimmed: true},
		"one Agent":                  {method: http.MethodGet, url: "/apis/agent-install.openshift.io/v1beta1/namespaces/a/agents/x"},
		"a watch of one Agent":       {method: http.MethodGet, url: "/apis/agent-install.openshift.io/v1beta1/namespaces/a/agents/x?watch=true"},
		"a list":                     {method: http.MethodGet, url: agents + "?limit=500"},
		"a patch":                    {method: http.MethodPatch, url: "/apis/agent-install.openshift.io/v1beta1/namespaces/a/agents/x?watch=true"},
		"AgentMachines":              {method: http.MethodGet, url: "/apis/capi-provider.agent-install.openshift.io/v1beta1/agentmachines?watch=true"},
		"another group's agents":     {method: http.MethodGet, url: "/apis/example.com/v1/agents?watch=true"},
		"an error":                   {method: http.MethodGet, url: agents + "?watch=true", status: http.StatusGone},
		"gzip":                       {method: http.MethodGet, url: agents + "?watch=true", header: http.Header{"Content-Encoding": {"gzip"}}, body: zipped.Bytes()},
		"protobuf": {method: http.MethodGet, url: agents + "?watch=true",
			header: http.Header{"Content-Type": {"application/vnd.kubernetes.protobuf;stream=watch"}}},
		"JSON with parameters": {method: http.MethodGet, url: agents + "?watch=true", trimmed: true,
			header: http.Header{"Content-Type": {"application/json; charset=utf-8"}}},
	} {
		t.Run(name, func(t *testing.T) {
			body, status, header := event, http.StatusOK, http.Header{"Content-Type": {"application/json"}}
			if tc.body != nil {
				body = tc.body
			}
			if tc.status != 0 {
				status = tc.status
			}
			for k, v := range tc.header {
				header[k] = v
			}
			rt := infracontroller.TrimAgentWatches(roundTripFunc(func(*http.Request) (*http.Response, error) {
				return &http.Response{StatusCode: status, Header: header, Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body))}, nil
			}))
			resp, err := rt.RoundTrip(httptest.NewRequestWithContext(t.Context(), tc.method, tc.url, nil))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			got, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if trimmed := !bytes.Equal(got, body); trimmed != tc.trimmed {
				t.Errorf("trimmed %v, want %v (%d bytes of %d)", trimmed, tc.trimmed, len(got), len(body))
			}
		})
	}
}

// BenchmarkTrimmedAgentWatch reports what decoding a watch of Agents costs the manager with and
// without the trimmer: the bytes each path scans, the time and the memory allocated per Agent
// until TrimAgent has it.
func BenchmarkTrimmedAgentWatch(b *testing.B) {
	const n = 500
	var stream bytes.Buffer
	for i := range n {
		var a aiv1beta1.Agent
		if err := json.Unmarshal(servedAgent(b, i), &a); err != nil {
			b.Fatal(err)
		}
		stream.Write(watchEvent(b, "ADDED", &a))
	}
	whole := stream.Bytes()
	for _, trim := range []bool{false, true} {
		b.Run(fmt.Sprintf("trimmed=%v", trim), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				s := whole
				if trim {
					s = trimStream(b, whole)
				}
				if got := decodeEvents(b, s); len(got) != n {
					b.Fatalf("%d Agents decoded", len(got))
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n), "µs/Agent")
		})
	}
}
