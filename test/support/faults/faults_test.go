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

package faults

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

func TestSumMetric(t *testing.T) {
	gauge := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "faults_test_gauge", Help: "test"}, []string{"ns", "kind"})
	hist := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "faults_test_seconds", Help: "test"})
	for _, c := range []prometheus.Collector{gauge, hist} {
		ctrlmetrics.Registry.MustRegister(c)
		t.Cleanup(func() { ctrlmetrics.Registry.Unregister(c) })
	}
	gauge.WithLabelValues("a", "x").Set(2)
	gauge.WithLabelValues("a", "y").Set(3)
	gauge.WithLabelValues("b", "x").Set(5)
	hist.Observe(1)
	hist.Observe(7)

	for _, tc := range []struct {
		name string
		want map[string]string
		sum  float64
	}{
		{"faults_test_gauge", nil, 10},
		{"faults_test_gauge", map[string]string{"ns": "a"}, 5},
		{"faults_test_gauge", map[string]string{"ns": "a", "kind": "x"}, 2},
		{"faults_test_gauge", map[string]string{"ns": "c"}, 0},
		{"faults_test_seconds", nil, 2}, // a histogram's count of observations
		{"faults_test_missing", nil, 0},
	} {
		got, err := SumMetric(tc.name, tc.want)
		if err != nil || got != tc.sum {
			t.Errorf("SumMetric(%s, %v) = %v, %v; want %v", tc.name, tc.want, got, err, tc.sum)
		}
	}
}
