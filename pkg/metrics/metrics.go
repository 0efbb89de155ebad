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

// Package metrics holds the providers' own Prometheus metrics, beside controller-runtime's (which
// the managers' metrics endpoint serves too): what an operator of a hub asks (how many hosts are
// free, claimed or stuck, how long a Machine waits for a host, how many installs run and how long
// they take, how often control planes are remediated and upgraded). Each provider registers its
// own with controller-runtime's registry; docs/dashboards/capoa.json charts them.
//
// The gauges are computed when Prometheus scrapes, from the manager's cache (a Source the
// provider's setup sets): no reconcile keeps a count that a restart or a missed event could
// leave wrong.
package metrics

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Names of the providers' metrics, as dashboards and alerts query them.
const (
	AgentsName                   = "capoa_agents"
	AgentMachineClaimSecondsName = "capoa_agentmachine_claim_seconds"
	AgentsApprovedName           = "capoa_agents_approved_total"
	ControlPlanesName            = "capoa_control_planes"
	InstallSecondsName           = "capoa_install_seconds"
	RemediationsName             = "capoa_control_plane_remediations_total"
	UpgradesName                 = "capoa_upgrades_started_total"
)

// waitBuckets are the buckets of the waits the providers measure, from a second to a day: a claim
// takes seconds when hosts are free and hours when none is; an install takes 30 to 90 minutes.
var waitBuckets = []float64{1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 2700, 3600, 5400, 7200, 14400, 43200, 86400}

var (
	// AgentMachineClaimSeconds observes, at each claim, the seconds from the AgentMachine's
	// creation to the claim of its Agent (infrastructure).
	AgentMachineClaimSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    AgentMachineClaimSecondsName,
		Help:    "Seconds from the creation of an AgentMachine to the claim of its Agent.",
		Buckets: waitBuckets,
	})
	// AgentsApproved counts the Agents the bootstrap provider approved (bootstrap).
	AgentsApproved = prometheus.NewCounter(prometheus.CounterOpts{
		Name: AgentsApprovedName,
		Help: "Agents approved by the bootstrap provider for the Machine whose host they run on.",
	})
	// InstallSeconds observes, when a cluster is installed (its kubeconfig first written), the
	// seconds from its control plane's creation (control plane).
	InstallSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    InstallSecondsName,
		Help:    "Seconds from the creation of an OpenshiftAssistedControlPlane to its cluster installed (the kubeconfig written).",
		Buckets: waitBuckets,
	})
	// Remediations counts the unhealthy control-plane Machines deleted for remediation
	// (control plane).
	Remediations = prometheus.NewCounter(prometheus.CounterOpts{
		Name: RemediationsName,
		Help: "Unhealthy control-plane Machines deleted to be replaced (MachineHealthCheck remediation).",
	})
	// Upgrades counts the OpenShift upgrades requested of workload clusters (control plane).
	Upgrades = prometheus.NewCounter(prometheus.CounterOpts{
		Name: UpgradesName,
		Help: "OpenShift upgrades requested of workload clusters through their ClusterVersion.",
	})
)

// Count is one value of a gauge computed at scrape time, by its label values.
type Count struct {
	Labels []string
	Value  float64
}

// Source counts what a gauge reports, from a cache. It is called at every scrape.
type Source func(ctx context.Context) ([]Count, error)

// gauge is a gauge whose values a Source computes at scrape time. The source is swapped (the
// lab restarts managers in one process); until one is set, the gauge reports nothing.
type gauge struct {
	name   string
	desc   *prometheus.Desc
	source atomic.Pointer[Source]
}

func newGauge(name, help string, labels ...string) *gauge {
	return &gauge{name: name, desc: prometheus.NewDesc(name, help, labels, nil)}
}

func (g *gauge) Describe(ch chan<- *prometheus.Desc) { ch <- g.desc }

func (g *gauge) Collect(ch chan<- prometheus.Metric) {
	src := g.source.Load()
	if src == nil {
		return
	}
	// A cache still syncing (a manager that just started) makes List wait: not longer than a
	// fraction of Prometheus's default 10 s scrape timeout.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	counts, err := (*src)(ctx)
	if err != nil {
		// An invalid metric would fail the manager's whole scrape (controller-runtime's
		// endpoint answers an error for any): the gauge goes missing, which an alert on
		// absent() sees, and the log says why.
		ctrl.Log.WithName("metrics").Error(err, "Counting for a metric", "metric", g.name)
		return
	}
	for _, c := range counts {
		m, err := prometheus.NewConstMetric(g.desc, prometheus.GaugeValue, c.Value, c.Labels...)
		if err != nil {
			m = prometheus.NewInvalidMetric(g.desc, err)
		}
		ch <- m
	}
}

var (
	// agents reports the Agents of the hub (infrastructure): by namespace, by whether they are
	// free, claimed or why they cannot be claimed, and by assisted-service's host state.
	agents = newGauge(AgentsName,
		"Agents by namespace, availability to AgentMachines (free, claimed, or why not claimable) and assisted-service host state.",
		"namespace", "availability", "state")
	// controlPlanes reports the control planes (control plane): by namespace and the reason of
	// their Available condition (Installing: installs in progress).
	controlPlanes = newGauge(ControlPlanesName,
		"OpenshiftAssistedControlPlanes by namespace and the reason of their Available condition (Installing: installs in progress).",
		"namespace", "reason")
)

var (
	registerOnce sync.Map // provider name -> *sync.Once
)

// register registers collectors with controller-runtime's registry once per process and provider.
func register(provider string, cs ...prometheus.Collector) {
	once, _ := registerOnce.LoadOrStore(provider, &sync.Once{})
	once.(*sync.Once).Do(func() {
		for _, c := range cs {
			if err := ctrlmetrics.Registry.Register(c); err != nil {
				ctrl.Log.WithName("metrics").Error(err, "Registering a metric", "provider", provider)
			}
		}
	})
}

// RegisterInfrastructure registers the infrastructure provider's metrics; agents counts the
// Agents for capoa_agents (labels: namespace, availability, state).
func RegisterInfrastructure(agentsSource Source) {
	agents.source.Store(&agentsSource)
	register("infrastructure", agents, AgentMachineClaimSeconds)
}

// RegisterBootstrap registers the bootstrap provider's metrics.
func RegisterBootstrap() {
	register("bootstrap", AgentsApproved)
}

// RegisterControlPlane registers the control-plane provider's metrics; controlPlanesSource
// counts the control planes for capoa_control_planes (labels: namespace, reason).
func RegisterControlPlane(controlPlanesSource Source) {
	controlPlanes.source.Store(&controlPlanesSource)
	register("controlplane", controlPlanes, InstallSeconds, Remediations, Upgrades)
}

// Tally counts label tuples into a Source's result, in a stable order.
func Tally(keys [][]string) []Count {
	byKey := map[string]*Count{}
	for _, k := range keys {
		id := strings.Join(k, "\x00")
		if c, ok := byKey[id]; ok {
			c.Value++
			continue
		}
		byKey[id] = &Count{Labels: k, Value: 1}
	}
	out := make([]Count, 0, len(byKey))
	for _, id := range slices.Sorted(maps.Keys(byKey)) {
		out = append(out, *byKey[id])
	}
	return out
}
