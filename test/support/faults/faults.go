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

// Package faults injects, into the requests of a client, the failures a real API server and
// network produce, for the fault suites: 500 and 503 (an etcd leader change, an API server
// restarting), 429 (API priority and fairness shedding load), 409 on writes (optimistic
// concurrency against another writer), added latency, and a write whose response is lost after
// the API server applied it (a connection reset), which the writer must survive by being
// idempotent. Watches are left alone (a broken watch is re-listed by the informer, which the
// injected LIST failures exercise).
package faults

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// kinds are the injected faults, each with its probability per write request; reads (GET,
// LIST) get a quarter of it, so that caches still sync.
var kinds = []struct {
	name   string
	rate   float64
	writes bool // only on writes
}{
	{"latency", 0.15, false},
	{"500", 0.04, false},
	{"503", 0.04, false},
	{"429", 0.04, false},
	{"409", 0.06, true},
	{"lost-response", 0.04, true},
}

// Injector decides, from its seed, which requests fail and how, and counts what it injected.
// It is safe for concurrent use.
type Injector struct {
	mu     sync.Mutex
	rng    *rand.Rand
	counts map[string]int
	off    bool
}

// New returns an Injector whose choices follow seed.
func New(seed int64) *Injector {
	return &Injector{rng: rand.New(rand.NewSource(seed)), counts: map[string]int{}} //nolint:gosec // a seeded run, reproducible
}

// SetEnabled turns the injection on or off (on at first).
func (i *Injector) SetEnabled(on bool) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.off = !on
}

func (i *Injector) pick(write bool) string {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.off {
		return ""
	}
	r := i.rng.Float64()
	for _, k := range kinds {
		if k.writes && !write {
			continue
		}
		rate := k.rate
		if !write && k.name != "latency" {
			rate /= 4
		}
		if r < rate {
			i.counts[k.name]++
			return k.name
		}
		r -= rate
	}
	return ""
}

// Wrap puts the injector in front of next (a rest.Config's WrapTransport).
func (i *Injector) Wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripper{i: i, next: next}
}

// Config returns a copy of base whose requests go through the injector.
func (i *Injector) Config(base *rest.Config) *rest.Config {
	cfg := rest.CopyConfig(base)
	inner := cfg.WrapTransport
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		if inner != nil {
			rt = inner(rt)
		}
		return i.Wrap(rt)
	}
	return cfg
}

type roundTripper struct {
	i    *Injector
	next http.RoundTripper
}

func (t roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Query().Get("watch") == "true" {
		return t.next.RoundTrip(req)
	}
	switch kind := t.i.pick(req.Method != http.MethodGet); kind {
	case "latency":
		time.Sleep(time.Duration(20+rand.Intn(180)) * time.Millisecond) //nolint:gosec // test latency
	case "500", "503", "429", "409":
		code, _ := strconv.Atoi(kind)
		reason := map[int]metav1.StatusReason{500: metav1.StatusReasonInternalError, 503: metav1.StatusReasonServiceUnavailable,
			429: metav1.StatusReasonTooManyRequests, 409: metav1.StatusReasonConflict}[code]
		body := fmt.Sprintf(`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"injected fault %s","reason":%q,"code":%d}`, kind, reason, code)
		h := http.Header{"Content-Type": []string{"application/json"}}
		if code == 429 {
			h.Set("Retry-After", "1")
		}
		return &http.Response{StatusCode: code, Header: h, Body: io.NopCloser(bytes.NewBufferString(body)), Request: req}, nil
	case "lost-response":
		resp, err := t.next.RoundTrip(req)
		if err == nil {
			_ = resp.Body.Close()
		}
		return nil, errors.New("injected fault: connection reset by peer after the request was sent")
	}
	return t.next.RoundTrip(req)
}

// Counts returns how many faults of each kind the injector injected.
func (i *Injector) Counts() map[string]int {
	i.mu.Lock()
	defer i.mu.Unlock()
	out := make(map[string]int, len(i.counts))
	for k, v := range i.counts {
		out[k] = v
	}
	return out
}

// Summary adds up what the injectors injected: the total and "kind=n ..." sorted by kind.
func Summary(injectors ...*Injector) (int, string) {
	counts := map[string]int{}
	for _, in := range injectors {
		for k, v := range in.Counts() {
			counts[k] += v
		}
	}
	parts := make([]string, 0, len(counts))
	total := 0
	for k, v := range counts {
		parts = append(parts, fmt.Sprintf("%s=%d", k, v))
		total += v
	}
	sort.Strings(parts)
	return total, strings.Join(parts, " ")
}

// ReconcilePanics is controller-runtime's count of recovered reconcile panics, over every
// controller of the process.
func ReconcilePanics() (float64, error) {
	return SumMetric("controller_runtime_reconcile_panics_total", nil)
}

// SumMetric sums, over the series of the named metric in controller-runtime's registry whose
// labels include want, their values (a histogram's: its count of observations).
func SumMetric(name string, want map[string]string) (float64, error) {
	mfs, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		return 0, fmt.Errorf("gathering the controller metrics: %w", err)
	}
	total := 0.0
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	series:
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			for k, v := range want {
				if labels[k] != v {
					continue series
				}
			}
			switch {
			case m.GetHistogram() != nil:
				total += float64(m.GetHistogram().GetSampleCount())
			case m.GetCounter() != nil:
				total += m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				total += m.GetGauge().GetValue()
			}
		}
	}
	return total, nil
}

// Report prints a fault suite's figures: to the file named by FAULT_REPORT, when set (the test
// command prints it after the tests, whose output `go test` hides when they pass), and returns
// the line for the test's own log.
func Report(format string, args ...any) string {
	line := fmt.Sprintf(format, args...)
	if path := os.Getenv("FAULT_REPORT"); path != "" {
		// One write per line, in append mode: the suites of several packages run at once.
		if f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
			_, _ = f.WriteString(line + "\n")
			_ = f.Close()
		}
	}
	return line
}
