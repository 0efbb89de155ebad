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

package fleet_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/fleet"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/lab"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/benchprofile"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/ports"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/procstat"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/workload"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/testenv"
)

// providers are the three providers, in the order of the table.
var providers = []string{"infrastructure", "bootstrap", "controlplane"}

// result is one fleet size's row.
type result struct {
	clusters int
	// wall is from the first cluster created to the last Available (the Cluster, as Cluster API
	// reports it); quiet until the providers then sent no request for quietPeriod.
	wall, quiet time.Duration
	// available are the times from each cluster's creation to its control plane's Available,
	// clusterAvailable to the Cluster's (Cluster API's Available), sorted.
	available, clusterAvailable []time.Duration
	// hub are the management API server's requests by client; workload the workload clusters'.
	hub, workload fleet.Requests
	rssKiB        map[string]int
	// cpu is each provider's CPU from the first cluster's creation to quiet, serverCPU the
	// management API server's and etcd's.
	cpu       map[string]time.Duration
	serverCPU time.Duration
	load      [2]string
	// clusterNotAvailable is why a Cluster that is not Available is not (its Available condition).
	clusterNotAvailable string
	// profiles are each provider's CPU profiles (slices from the lab's start to quiet) and heap
	// profile (when quiet), and its Go memory statistics then; none when not profiled.
	profiles map[string]providerProfiles
}

// providerProfiles are the profiles of one provider's process in one fleet run.
type providerProfiles struct {
	cpu      []string
	heap     string
	memStats string
}

// quietPeriod: the providers are quiet when they sent no request for this long.
const quietPeriod = 10 * time.Second

// BenchmarkFleet creates FLEET_CLUSTERS (50 200 500 1000) single-node clusters at once, each from the
// agent-sno template on a simulated self-booted host, with the three providers each a process
// of its own at its default flags (lab.RunProviderProcess), Cluster API's controllers and the
// assisted-service simulator in the benchmark's process, and a light workload cluster per
// cluster (test/support/sim/workload). It prints, per fleet size, the time to Available (p50,
// p95), each provider's requests per cluster until it is quiet (from the management API
// server's audit log, by verb and resource), peak RSS and CPU; then the ratio of the largest
// fleet's per-cluster costs to the smallest's. make bench runs it; by hand:
//
//	go test ./fleet/ -run XXX -bench BenchmarkFleet -benchtime 1x -timeout 3h
func BenchmarkFleet(b *testing.B) {
	sizes := []int{50, 200, 500, 1000}
	if v := os.Getenv("FLEET_CLUSTERS"); v != "" {
		sizes = nil
		for _, f := range strings.Fields(v) {
			n, err := strconv.Atoi(f)
			if err != nil || n < 1 {
				b.Fatalf("FLEET_CLUSTERS: %q is not a number of clusters", f)
			}
			sizes = append(sizes, n)
		}
	}
	var results []result
	for _, n := range sizes {
		b.Run(fmt.Sprintf("clusters=%d", n), func(b *testing.B) {
			for range b.N {
				r := runFleet(b, n, func(running bool) {
					if running {
						b.StartTimer()
					} else {
						b.StopTimer()
					}
				}, profileDir(b, fmt.Sprintf("fleet-%d", n)))
				b.ReportMetric(r.wall.Seconds(), "s/all-available")
				b.ReportMetric(float64(r.hubPerCluster()), "hub-requests/cluster")
				results = append(results, r)
			}
		})
	}
	printResults(results)
}

// smokeCeilings are at most how many requests per cluster each provider may send in
// TestFleetSmoke: about twice what two clusters cost (make bench prints the figures), so that a
// provider that starts writing in a loop, or reading what it should cache, fails make test.
var smokeCeilings = map[string]int{"infrastructure": 80, "bootstrap": 170, "controlplane": 150}

// TestFleetSmoke runs the fleet benchmark's harness with two clusters: both become Available
// with the three providers running as processes (lab.RunProviderProcess, as their main.go),
// every provider is counted in the audit log, and none sends more requests per cluster than
// smokeCeilings allows.
func TestFleetSmoke(t *testing.T) {
	r := runFleet(t, 2, nil, "")
	if t.Failed() {
		return
	}
	if len(r.available) != 2 || len(r.clusterAvailable) != 2 {
		t.Fatalf("Available: %d control planes and %d Clusters of 2", len(r.available), len(r.clusterAvailable))
	}
	for _, p := range providers {
		n := r.hub.Total(lab.ProviderUserAgent(p)) / r.clusters
		if n == 0 || n > smokeCeilings[p] {
			t.Errorf("the %s provider sent %d requests per cluster, want between 1 and %d: %v", p, n, smokeCeilings[p], r.hub[lab.ProviderUserAgent(p)])
		}
		if r.rssKiB[p] == 0 {
			t.Errorf("no peak RSS read for the %s provider", p)
		}
	}
}

func (r result) hubPerCluster() float64 {
	n := 0
	for _, p := range providers {
		n += r.hub.Total(lab.ProviderUserAgent(p))
	}
	return float64(n) / float64(r.clusters)
}

// profileDir is where the benchmark keeps the providers' profiles of one fleet run:
// FLEET_PROFILES (make bench sets _artifacts/bench), else the benchmark's temporary directory.
func profileDir(b *testing.B, name string) string {
	b.Helper()
	root := os.Getenv("FLEET_PROFILES")
	if root == "" {
		root = b.TempDir()
	}
	dir := filepath.Join(root, name)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		b.Fatal(err)
	}
	return dir
}

// runFleet runs a fleet of n clusters and measures it; timer, when set, is told when the time
// from the first creation to the last Available starts (true) and ends (false). With profiles,
// each provider serves pprof (--profiler-address) and its CPU and heap profiles are kept there.
func runFleet(tb testing.TB, n int, timer func(running bool), profiles string) result {
	tb.Helper()
	if timer == nil {
		timer = func(bool) {}
	}
	timer(false)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := tb.TempDir()
	policy, auditLog := filepath.Join(dir, "audit-policy.yaml"), filepath.Join(dir, "audit.log")
	if err := os.WriteFile(policy, []byte(fleet.AuditPolicy), 0o600); err != nil {
		tb.Fatal(err)
	}
	workloadScheme, err := lab.WorkloadScheme()
	if err != nil {
		tb.Fatal(err)
	}
	workloads, err := workload.New(workloadScheme, workload.DefaultKinds())
	if err != nil {
		tb.Fatal(err)
	}
	defer func() { _ = workloads.Close() }()
	self, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	r := result{clusters: n, load: [2]string{loadAverage()}}
	var profilers sync.Map // provider name: its --profiler-address
	l, err := lab.Start(ctx, lab.Options{
		// Cluster API's controllers at their defaults (--*-concurrency 10).
		Concurrency: 10,
		Workloads: func(_ context.Context, cd types.NamespacedName) (*rest.Config, error) {
			return workloads.AddCluster(cd.String())
		},
		ProviderCommand: func(name string, args []string) *exec.Cmd {
			if profiles != "" {
				addr, err := ports.Address()
				if err != nil {
					tb.Fatal(err)
				}
				profilers.Store(name, addr)
				args = append(slices.Clone(args), "--profiler-address", addr)
			}
			cmd := exec.Command(self, args...) //nolint:noctx // this benchmark's own binary, run as a provider; the lab stops it
			cmd.Env = append(os.Environ(), providerEnv+"="+name)
			return cmd
		},
		APIServerArgs: fleet.AuditArgs(policy, auditLog),
	})
	if err != nil {
		tb.Fatal(err)
	}
	logDir := l.ProviderLogDir()
	defer func() {
		if err := l.Stop(); err != nil {
			tb.Errorf("stopping the lab: %v", err)
			return
		}
		// The providers' logs and kubeconfig go with a lab that stopped cleanly.
		if _, err := os.Stat(logDir); logDir == "" || !errors.Is(err, fs.ErrNotExist) {
			tb.Errorf("the providers' log folder %q after the lab stopped: %v, want it removed", logDir, err)
		}
	}()
	pids := l.ProviderPIDs()
	if len(pids) != len(providers) {
		tb.Fatalf("provider processes %v, want %v", pids, providers)
	}
	cpuProfilers := map[string]*benchprofile.CPUProfiler{}
	if profiles != "" {
		for _, p := range providers {
			addr, _ := profilers.Load(p)
			cpuProfilers[p] = benchprofile.StartCPU(ctx, addr.(string), profiles, p+"-cpu")
		}
	}
	fast := rest.CopyConfig(l.Mgmt.Config)
	fast.QPS, fast.Burst = -1, -1
	c, err := client.NewWithWatch(fast, client.Options{Scheme: l.Mgmt.Scheme})
	if err != nil {
		tb.Fatal(err)
	}
	if err := l.AddSelfBootedHosts("fleet", n); err != nil {
		tb.Fatal(err)
	}
	objs := make([][]client.Object, n)
	for i := range n {
		if objs[i], err = l.ClusterObjects(lab.ClusterOptions{Namespace: fmt.Sprintf("fleet-%04d", i), Name: fmt.Sprintf("sno-%04d", i),
			ControlPlanes: 1, Version: "4.17.3", Infrastructure: lab.Agent}); err != nil {
			tb.Fatal(err)
		}
	}
	audit := fleet.NewAuditCounter(auditLog)
	if _, err := audit.Update(); err != nil {
		tb.Fatal(err)
	}
	serverCPU := hubCPU(tb, l.Mgmt)
	// Each provider's CPU is counted from here: what it used to start (its caches' first sync,
	// discovery) is once per process, not per cluster.
	startCPU := map[string]time.Duration{}
	for _, p := range providers {
		_, cpu, err := procstat.Usage(pids[p])
		if err != nil {
			tb.Fatal(err)
		}
		startCPU[p] = cpu
	}

	created := &timeline{at: map[string]time.Time{}}
	cpAvailable := &timeline{at: map[string]time.Time{}}
	clusterAvailable := &timeline{at: map[string]time.Time{}}
	go watchAvailable(ctx, c, &controlplanev1.OpenshiftAssistedControlPlaneList{}, controlplanev1.AvailableCondition, cpAvailable)
	go watchAvailable(ctx, c, &clusterv1.ClusterList{}, clusterv1.ClusterAvailableCondition, clusterAvailable)

	timer(true)
	start := time.Now()
	var eg errgroup.Group
	eg.SetLimit(8)
	for i := range n {
		eg.Go(func() error { return createCluster(ctx, c, objs[i], created) })
	}
	if err := eg.Wait(); err != nil {
		tb.Fatal(err)
	}
	// Until every Cluster is Available as Cluster API sees it: its ClusterCache connected to the
	// workload cluster (it retries every 30 s, from before the kubeconfig was written), the
	// control plane and the Machine ready.
	deadline := time.Now().Add(time.Duration(n)*6*time.Second + 10*time.Minute)
	for cpAvailable.len() < n || clusterAvailable.len() < n {
		if time.Now().After(deadline) {
			tb.Errorf("by the deadline, %d of %d control planes and %d Clusters were Available", cpAvailable.len(), n, clusterAvailable.len())
			break
		}
		time.Sleep(time.Second)
	}
	r.wall = time.Since(start)
	timer(false)

	// Then until the providers are quiet.
	var counts fleet.Requests
	last, quietSince := -1, time.Now()
	for time.Since(quietSince) < quietPeriod {
		time.Sleep(time.Second)
		if counts, err = audit.Update(); err != nil {
			tb.Fatal(err)
		}
		total := 0
		for _, p := range providers {
			total += counts.Total(lab.ProviderUserAgent(p))
		}
		if total != last {
			last, quietSince = total, time.Now()
		}
	}
	r.quiet = time.Since(start) - quietPeriod
	if profiles != "" {
		r.profiles = map[string]providerProfiles{}
		for _, p := range providers {
			addr, _ := profilers.Load(p)
			pp := providerProfiles{cpu: cpuProfilers[p].Stop(), heap: filepath.Join(profiles, p+"-heap.pb.gz")}
			if err := benchprofile.SaveHeap(ctx, addr.(string), pp.heap); err != nil {
				tb.Fatal(err)
			}
			if pp.memStats, err = benchprofile.MemStats(ctx, addr.(string)); err != nil {
				tb.Fatal(err)
			}
			r.profiles[p] = pp
		}
	}
	r.hub = counts
	r.workload = workloadRequests(workloads.Requests())
	r.serverCPU = hubCPU(tb, l.Mgmt) - serverCPU
	r.rssKiB, r.cpu = map[string]int{}, map[string]time.Duration{}
	for _, p := range providers {
		rss, cpu, err := procstat.Usage(pids[p])
		if err != nil {
			tb.Fatal(err)
		}
		r.rssKiB[p], r.cpu[p] = rss, cpu-startCPU[p]
	}
	if clusterAvailable.len() < n {
		r.clusterNotAvailable = whyNotAvailable(ctx, c, clusterAvailable)
	}
	r.available = created.durationsTo(cpAvailable)
	r.clusterAvailable = created.durationsTo(clusterAvailable)
	r.load[1] = loadAverage()
	return r
}

// whyNotAvailable returns the Available condition of a Cluster that t has not seen Available.
func whyNotAvailable(ctx context.Context, c client.Client, t *timeline) string {
	clusters := &clusterv1.ClusterList{}
	if err := c.List(ctx, clusters); err != nil {
		return err.Error()
	}
	for i := range clusters.Items {
		cl := &clusters.Items[i]
		if t.has(cl.Namespace + "/" + cl.Name) {
			continue
		}
		if cond := conditions.Get(cl, clusterv1.ClusterAvailableCondition); cond != nil {
			return fmt.Sprintf("Cluster %s/%s: Available %s %s: %s", cl.Namespace, cl.Name, cond.Status, cond.Reason, cond.Message)
		}
		return fmt.Sprintf("Cluster %s/%s has no Available condition", cl.Namespace, cl.Name)
	}
	return ""
}

// createCluster creates a cluster's objects, its namespace first, as `kubectl apply` would.
func createCluster(ctx context.Context, c client.Client, objs []client.Object, created *timeline) error {
	ns := objs[0].GetNamespace()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return fmt.Errorf("creating namespace %s: %w", ns, err)
	}
	for _, obj := range objs {
		if err := c.Create(ctx, obj, client.FieldValidation(metav1.FieldValidationStrict)); err != nil {
			return fmt.Errorf("creating %s %s/%s: %w", obj.GetObjectKind().GroupVersionKind().Kind, ns, obj.GetName(), err)
		}
		if _, ok := obj.(*clusterv1.Cluster); ok {
			created.set(ns + "/" + obj.GetName())
		}
	}
	return nil
}

// timeline records when each cluster (namespace/name) reached a point.
type timeline struct {
	mu sync.Mutex
	at map[string]time.Time
}

func (t *timeline) set(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.at[key]; !ok {
		t.at[key] = time.Now()
	}
}

func (t *timeline) has(key string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, ok := t.at[key]
	return ok
}

func (t *timeline) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.at)
}

// durationsTo returns, sorted, the time from each cluster's point in t to its point in later.
func (t *timeline) durationsTo(later *timeline) []time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	later.mu.Lock()
	defer later.mu.Unlock()
	var out []time.Duration
	for k, from := range t.at {
		if to, ok := later.at[k]; ok {
			out = append(out, to.Sub(from))
		}
	}
	slices.Sort(out)
	return out
}

// watchAvailable records in t when each object of the list's kind first reports the condition
// True (the control plane and the Cluster are named alike): a watch, listed again when it ends,
// rather than lists every second, which would load the API server under test.
func watchAvailable(ctx context.Context, c client.WithWatch, list client.ObjectList, condition string, t *timeline) {
	check := func(obj any) {
		if g, ok := obj.(interface {
			conditions.Getter
			client.Object
		}); ok && conditions.IsTrue(g, condition) {
			t.set(g.GetNamespace() + "/" + g.GetName())
		}
	}
	for ctx.Err() == nil {
		l := list.DeepCopyObject().(client.ObjectList) //nolint:forcetypeassert // a copy of an ObjectList
		if err := c.List(ctx, l); err != nil {
			time.Sleep(time.Second)
			continue
		}
		items, _ := meta.ExtractList(l)
		for _, obj := range items {
			check(obj)
		}
		w, err := c.Watch(ctx, list.DeepCopyObject().(client.ObjectList), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: l.GetResourceVersion()}}) //nolint:forcetypeassert // as above
		if err != nil {
			time.Sleep(time.Second)
			continue
		}
		for ev := range w.ResultChan() {
			if ev.Type == watch.Added || ev.Type == watch.Modified {
				check(ev.Object)
			}
		}
		w.Stop()
	}
}

// workloadRequests sums the workload clusters' requests by client.
func workloadRequests(byCluster map[workload.RequestKey]int) fleet.Requests {
	out := fleet.Requests{}
	for k, v := range byCluster {
		if out[k.UserAgent] == nil {
			out[k.UserAgent] = map[string]int{}
		}
		out[k.UserAgent][k.Verb+" "+k.Resource] += v
	}
	return out
}

// hubCPU is the CPU time the management cluster's kube-apiserver and etcd used.
func hubCPU(tb testing.TB, hub *testenv.Environment) time.Duration {
	tb.Helper()
	apiServer, etcd, err := hub.ControlPlaneCPU()
	if err != nil {
		tb.Fatal(err)
	}
	return apiServer + etcd
}

func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:3], " ")
}

func percentile(d []time.Duration, p float64) string {
	if len(d) == 0 {
		return "-"
	}
	i := int(float64(len(d)-1) * p)
	return fmt.Sprintf("%.1f s", d[i].Seconds())
}

func printResults(results []result) {
	if len(results) == 0 {
		return
	}
	fmt.Printf("\n| clusters | all Available (quiet) | control plane Available p50 / p95 | Cluster Available p50 / p95 (of) | hub requests / cluster: infrastructure, bootstrap, controlplane | workload requests / cluster | peak RSS: infrastructure, bootstrap, controlplane | CPU / cluster: infrastructure, bootstrap, controlplane | API server and etcd CPU / cluster | load before, after |\n")
	fmt.Printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, r := range results {
		per := func(n int) float64 { return float64(n) / float64(r.clusters) }
		workloadTotal := 0
		for ua := range r.workload {
			workloadTotal += r.workload.Total(ua)
		}
		fmt.Printf("| %d | %.0f s (%.0f s) | %s / %s | %s / %s (%d) | %.1f, %.1f, %.1f | %.1f | %.0f, %.0f, %.0f MiB | %.0f, %.0f, %.0f ms | %.0f ms | %s; %s |\n",
			r.clusters, r.wall.Seconds(), r.quiet.Seconds(),
			percentile(r.available, 0.5), percentile(r.available, 0.95),
			percentile(r.clusterAvailable, 0.5), percentile(r.clusterAvailable, 0.95), len(r.clusterAvailable),
			per(r.hub.Total(lab.ProviderUserAgent("infrastructure"))), per(r.hub.Total(lab.ProviderUserAgent("bootstrap"))), per(r.hub.Total(lab.ProviderUserAgent("controlplane"))),
			per(workloadTotal),
			float64(r.rssKiB["infrastructure"])/1024, float64(r.rssKiB["bootstrap"])/1024, float64(r.rssKiB["controlplane"])/1024,
			perMs(r.cpu["infrastructure"], r.clusters), perMs(r.cpu["bootstrap"], r.clusters), perMs(r.cpu["controlplane"], r.clusters),
			perMs(r.serverCPU, r.clusters), r.load[0], r.load[1])
	}
	for _, r := range results {
		if r.clusterNotAvailable != "" {
			fmt.Printf("not every Cluster was Available at %d clusters; %s\n", r.clusters, r.clusterNotAvailable)
		}
	}
	first, last := results[0], results[len(results)-1]
	if len(results) > 1 {
		fmt.Printf("\nper-cluster cost at %d clusters / at %d:\n", last.clusters, first.clusters)
		for _, p := range providers {
			ua := lab.ProviderUserAgent(p)
			fmt.Printf("  %-15s requests %.2f  CPU %.2f\n", p,
				ratio(float64(last.hub.Total(ua))/float64(last.clusters), float64(first.hub.Total(ua))/float64(first.clusters)),
				ratio(last.cpu[p].Seconds()/float64(last.clusters), first.cpu[p].Seconds()/float64(first.clusters)))
		}
		fmt.Printf("  %-15s %.2f\n", "API server CPU", ratio(last.serverCPU.Seconds()/float64(last.clusters), first.serverCPU.Seconds()/float64(first.clusters)))
	}
	for _, r := range results {
		fmt.Printf("\nrequests per cluster at %d clusters, by client, verb and resource (the management API server's audit log; workload clusters' own counts):\n", r.clusters)
		printRequests("hub", r.hub, r.clusters)
		printRequests("workload", r.workload, r.clusters)
	}
	for _, r := range results {
		printProfiles(r)
	}
}

// printProfiles prints where each provider's profiles of a fleet run are, its Go memory when
// quiet, and the top entries of its CPU profile (from the lab's start to quiet) and of its heap
// in use when quiet.
func printProfiles(r result) {
	for _, p := range providers {
		pp, ok := r.profiles[p]
		if !ok {
			continue
		}
		fmt.Printf("\nthe %s provider at %d clusters: profiles in %s; Go memory when quiet: %s\n", p, r.clusters, filepath.Dir(pp.heap), pp.memStats)
		if len(pp.cpu) > 0 {
			top, err := benchprofile.Top(10, nil, pp.cpu...)
			fmt.Printf("  CPU (%d slices of %s merged):\n%s", len(pp.cpu), benchprofile.CPUSlice, orError(top, err))
		}
		top, err := benchprofile.Top(10, []string{"-sample_index=inuse_space"}, pp.heap)
		fmt.Printf("  heap in use when quiet:\n%s", orError(top, err))
	}
}

func orError(s string, err error) string {
	if err != nil {
		return "    " + err.Error() + "\n"
	}
	return s
}

func perMs(d time.Duration, n int) float64 { return float64(d.Milliseconds()) / float64(n) }

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

func printRequests(where string, reqs fleet.Requests, clusters int) {
	uas := make([]string, 0, len(reqs))
	for ua := range reqs {
		uas = append(uas, ua)
	}
	sort.Strings(uas)
	for _, ua := range uas {
		fmt.Printf("  %s %s: %.2f\n", where, ua, float64(reqs.Total(ua))/float64(clusters))
		keys := make([]string, 0, len(reqs[ua]))
		for k := range reqs[ua] {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Printf("      %-60s %8.2f\n", k, float64(reqs[ua][k])/float64(clusters))
		}
	}
}
