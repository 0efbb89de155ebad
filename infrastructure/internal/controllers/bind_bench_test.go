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
	"context"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/infrastructure/v1beta1"
	setup "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/infrastructure/setup"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/manager"
)

// requestCounter counts the API requests of a client, by verb and resource.
type requestCounter struct {
	next  http.RoundTripper
	total atomic.Int64
	mu    sync.Mutex
	byKey map[string]int
}

func (c *requestCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	c.total.Add(1)
	verb := req.Method
	if req.URL.Query().Get("watch") == "true" {
		verb = "WATCH"
	}
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	resource := parts[len(parts)-1]
	for i, p := range parts {
		if p == "namespaces" && i+2 < len(parts) {
			resource = parts[i+2]
			if i+4 < len(parts) {
				resource += "/" + parts[i+4]
			}
		}
	}
	c.mu.Lock()
	c.byKey[verb+" "+resource]++
	c.mu.Unlock()
	return c.next.RoundTrip(req)
}

func (c *requestCounter) summary() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	keys := make([]string, 0, len(c.byKey))
	for k := range c.byKey {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "  %-40s %6d\n", k, c.byKey[k])
	}
	return b.String()
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// BenchmarkBind binds BENCH_MACHINES (500) AgentMachines out of a pool of BENCH_AGENTS (2,000)
// Agents and prints the time and the provider's API requests (counted by a RoundTripper on its
// REST config). The provider runs alone (Cluster API's controllers would add their own
// requests), with the production client limits (--kube-api-qps 20, --kube-api-burst 30) unless
// BENCH_QPS is set. Run it with:
//
//	go test ./controllers/ -run XXX -bench BenchmarkBind -benchtime 1x
func BenchmarkBind(b *testing.B) {
	machines, agents := envInt("BENCH_MACHINES", 500), envInt("BENCH_AGENTS", 2000)
	qps := envInt("BENCH_QPS", 20)
	for range b.N {
		b.StopTimer()
		ctx := context.Background()
		g := NewWithT(b)
		f := newFixture(b, ctx, "bench", nil)
		fast := rest.CopyConfig(env.Config)
		fast.QPS, fast.Burst = -1, -1
		fastClient, err := client.New(fast, client.Options{Scheme: env.Scheme})
		g.Expect(err).NotTo(HaveOccurred())

		// The infrastructure is provisioned, as Cluster API's Cluster controller would report.
		cluster := &clusterv1.Cluster{}
		g.Expect(fastClient.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: f.cluster}, cluster)).To(Succeed())
		cluster.Status.Initialization.InfrastructureProvisioned = ptr.To(true)
		g.Expect(fastClient.Status().Update(ctx, cluster)).To(Succeed())

		var eg errgroup.Group
		eg.SetLimit(32)
		for i := range agents {
			eg.Go(func() error { createAgent(b, ctx, f.ns, agentName(i), nil, int64(4+i%8)); return nil })
		}
		for i := range machines {
			eg.Go(func() error { return createOwnedMachine(ctx, fastClient, f, fmt.Sprintf("m%04d", i)) })
		}
		g.Expect(eg.Wait()).To(Succeed())

		counter := &requestCounter{byKey: map[string]int{}}
		cfg := rest.CopyConfig(env.Config)
		cfg.QPS, cfg.Burst = float32(qps), qps*3/2
		cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { counter.next = rt; return counter }
		b.StartTimer()
		start := time.Now()
		stop := startManager(b, managerConfig{
			opts:       manager.Options{WatchNamespace: f.ns, Concurrency: 10},
			infra:      setup.Options{AgentNamespace: f.ns},
			restConfig: cfg,
			noCAPI:     true,
		})
		g.Eventually(func(g Gomega) {
			list := &infrav1.AgentMachineList{}
			g.Expect(fastClient.List(ctx, list, client.InNamespace(f.ns))).To(Succeed())
			bound := 0
			for i := range list.Items {
				if list.Items[i].Spec.ProviderID != "" {
					bound++
				}
			}
			g.Expect(bound).To(Equal(machines))
		}, 30*time.Minute, 500*time.Millisecond).Should(Succeed())
		elapsed := time.Since(start)
		b.StopTimer()
		stop()
		g.Expect(claimedAgents(g, ctx, f.ns)).To(HaveLen(machines))
		total := counter.total.Load()
		b.ReportMetric(elapsed.Seconds(), "s/bind-all")
		b.ReportMetric(float64(total), "requests")
		b.ReportMetric(float64(total)/float64(machines), "requests/machine")
		fmt.Printf("bound %d machines out of %d agents in %s with %d API requests (%.1f per machine; client QPS %d)\n%s",
			machines, agents, elapsed.Round(time.Millisecond), total, float64(total)/float64(machines), qps, counter.summary())
	}
}

// createOwnedMachine creates a Machine and its AgentMachine with the owner reference and labels
// Cluster API's Machine controller would set.
func createOwnedMachine(ctx context.Context, c client.Client, f fixture, name string) error {
	m := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name, Labels: map[string]string{clusterv1.ClusterNameLabel: f.cluster}},
		Spec: clusterv1.MachineSpec{
			ClusterName: f.cluster,
			Bootstrap:   clusterv1.Bootstrap{DataSecretName: ptr.To("bootstrap-data")},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: infrav1.GroupVersion.Group, Kind: "AgentMachine", Name: name,
			},
		},
	}
	if err := c.Create(ctx, m); err != nil {
		return err
	}
	am := &infrav1.AgentMachine{ObjectMeta: metav1.ObjectMeta{
		Namespace: f.ns, Name: name,
		Labels: map[string]string{clusterv1.ClusterNameLabel: f.cluster},
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: name, UID: m.UID, Controller: ptr.To(true),
		}},
	}}
	return c.Create(ctx, am)
}
