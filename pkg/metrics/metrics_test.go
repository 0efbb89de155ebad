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

package metrics

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	_ "sigs.k8s.io/controller-runtime/pkg/controller" // registers controller-runtime's reconcile metrics, as every manager does
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// dashboard is the Grafana dashboard the repository ships.
const dashboard = "../../docs/dashboards/capoa.json"

func registerAll(t *testing.T, agents, controlPlanes Source) {
	t.Helper()
	RegisterInfrastructure(agents)
	RegisterBootstrap()
	RegisterControlPlane(controlPlanes)
}

func TestGaugesComputedAtScrape(t *testing.T) {
	calls := 0
	registerAll(t, func(context.Context) ([]Count, error) {
		calls++
		return Tally([][]string{{"hosts", "free", "known"}, {"hosts", "claimed", "installed"}, {"hosts", "free", "known"}}), nil
	}, func(context.Context) ([]Count, error) {
		return nil, errors.New("cache not started")
	})
	want := `
# HELP capoa_agents Agents by namespace, availability to AgentMachines (free, claimed, or why not claimable) and assisted-service host state.
# TYPE capoa_agents gauge
capoa_agents{availability="claimed",namespace="hosts",state="installed"} 1
capoa_agents{availability="free",namespace="hosts",state="known"} 2
`
	if err := testutil.GatherAndCompare(ctrlmetrics.Registry, strings.NewReader(want), AgentsName); err != nil {
		t.Error(err)
	}
	if calls != 1 {
		t.Errorf("the Agents were counted %d times for one scrape, want 1", calls)
	}
	// A source that fails leaves its gauge out (not a stale or zero count), and the rest of the
	// scrape succeeds.
	if n, err := testutil.GatherAndCount(ctrlmetrics.Registry, ControlPlanesName); err != nil || n != 0 {
		t.Errorf("capoa_control_planes with a failing source: %d series, error %v; want none and no error", n, err)
	}
	// A manager started again (the lab restarts them in one process) replaces the source.
	RegisterControlPlane(func(context.Context) ([]Count, error) {
		return []Count{{Labels: []string{"clusters", "Installing"}, Value: 3}}, nil
	})
	if got := testutil.ToFloat64(controlPlanes); got != 3 {
		t.Errorf("capoa_control_planes = %v, want 3 from the new source", got)
	}
}

func TestTally(t *testing.T) {
	got := Tally([][]string{{"b", "x"}, {"a", "y"}, {"b", "x"}})
	want := []Count{{Labels: []string{"a", "y"}, Value: 1}, {Labels: []string{"b", "x"}, Value: 2}}
	if len(got) != len(want) {
		t.Fatalf("Tally = %v, want %v", got, want)
	}
	for i := range want {
		if !slices.Equal(got[i].Labels, want[i].Labels) || got[i].Value != want[i].Value {
			t.Errorf("Tally[%d] = %v, want %v", i, got[i], want[i])
		}
	}
}

// metricName matches the metric names a PromQL expression may use from the providers' managers:
// ours and controller-runtime's (reconciles, work queues, the client's requests).
var metricName = regexp.MustCompile(`\b(?:capoa|controller_runtime|workqueue|rest_client)_[a-z0-9_]+\b`)

// TestDashboardQueriesNameExistingMetrics reads every query of the shipped dashboard and checks
// that each metric it names is one a provider's manager serves: registering a metric of that name
// in controller-runtime's registry (which the managers' metrics endpoint serves) must collide.
func TestDashboardQueriesNameExistingMetrics(t *testing.T) {
	registerAll(t, func(context.Context) ([]Count, error) { return nil, nil }, func(context.Context) ([]Count, error) { return nil, nil })
	data, err := os.ReadFile(dashboard)
	if err != nil {
		t.Fatal(err)
	}
	var model struct {
		Panels []struct {
			Title   string `json:"title"`
			Type    string `json:"type"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(data, &model); err != nil {
		t.Fatalf("%s is not a dashboard: %v", dashboard, err)
	}
	ours := map[string]bool{}
	for _, p := range model.Panels {
		if p.Type == "row" {
			continue
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, target := range p.Targets {
			names := metricName.FindAllString(target.Expr, -1)
			if len(names) == 0 {
				t.Errorf("panel %q: query %q names no metric of the providers", p.Title, target.Expr)
			}
			for _, name := range names {
				if !served(name) {
					t.Errorf("panel %q: query %q names %s, which no provider's manager serves", p.Title, target.Expr, name)
				}
				if strings.HasPrefix(name, "capoa_") {
					ours[strings.TrimSuffix(name, "_bucket")] = true
				}
			}
		}
	}
	// Every metric of ours is charted.
	for _, name := range []string{AgentsName, AgentMachineClaimSecondsName, AgentsApprovedName, ControlPlanesName,
		InstallSecondsName, RemediationsName, UpgradesName} {
		if !ours[name] {
			t.Errorf("%s is charted by no panel of %s", name, dashboard)
		}
	}
	if served("capoa_no_such_metric") || served("controller_runtime_no_such_metric_total") {
		t.Error("the probe finds metrics that do not exist: the test checks nothing")
	}
}

// served tells whether controller-runtime's registry has a metric of that name (a histogram's
// _bucket, _sum and _count series are its own name's).
func served(name string) bool {
	for _, n := range []string{name, strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, "_bucket"), "_sum"), "_count")} {
		probe := prometheus.NewGauge(prometheus.GaugeOpts{Name: n, Help: "probe"})
		if err := ctrlmetrics.Registry.Register(probe); err != nil {
			return true
		}
		ctrlmetrics.Registry.Unregister(probe)
	}
	return false
}
