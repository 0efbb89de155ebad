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
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	conditionsv1 "github.com/openshift/custom-resource-status/conditions/v1"
	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/infrastructure/v1beta1"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/benchprofile"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/procstat"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/testenv"
)

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// BenchmarkBind binds BENCH_MACHINES (500) AgentMachines out of a pool of BENCH_AGENTS (2,000)
// Agents, as assisted-service reports real servers (realisticStatus), and prints one row of the
// bind table: wall time until all are bound, the API requests the manager sent until it went
// quiet (per machine, reads and writes), its peak RSS and CPU time. The manager is the
// provider's own binary, built here and run as a process of its own with its default flags
// (BENCH_ARGS adds some), as in production; its requests are read from its
// rest_client_requests_total metric. It runs alone (Cluster API's controllers would add their
// own requests). make bench runs it; by hand:
//
//	go test ./internal/controllers/ -run XXX -bench BenchmarkBind -benchtime 1x
func BenchmarkBind(b *testing.B) {
	machines, agents := envInt("BENCH_MACHINES", 500), envInt("BENCH_AGENTS", 2000)
	// BENCH_AGENT_SHAPE=small: the least inventory the controllers read (smallStatus), as the
	// Agents of the first measurements.
	shape, status := "realistic", realisticStatus
	if os.Getenv("BENCH_AGENT_SHAPE") == "small" {
		shape = "small"
		status = func(name string, _ int, cpus int64, _ []conditionsv1.Condition) aiv1beta1.AgentStatus {
			return smallStatus(name, cpus)
		}
	}
	bin := filepath.Join(b.TempDir(), "manager")
	build := exec.CommandContext(b.Context(), "go", "build", "-o", bin, "../..")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("building the manager: %v\n%s", err, out)
	}
	for range b.N {
		b.StopTimer()
		ctx := context.Background()
		g := NewWithT(b)
		f := newFixture(b, ctx, "bench", nil)
		fast := rest.CopyConfig(env.Config)
		fast.QPS, fast.Burst = -1, -1
		fastClient, err := client.New(fast, client.Options{Scheme: env.Scheme})
		g.Expect(err).NotTo(HaveOccurred())
		watcher, err := client.NewWithWatch(fast, client.Options{Scheme: env.Scheme})
		g.Expect(err).NotTo(HaveOccurred())

		// The infrastructure is provisioned, as Cluster API's Cluster controller would report.
		cluster := &clusterv1.Cluster{}
		g.Expect(fastClient.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: f.cluster}, cluster)).To(Succeed())
		cluster.Status.Initialization.InfrastructureProvisioned = ptr.To(true)
		g.Expect(fastClient.Status().Update(ctx, cluster)).To(Succeed())

		var eg errgroup.Group
		eg.SetLimit(32)
		for i := range agents {
			eg.Go(func() error {
				return createReadyAgent(ctx, fastClient, f.ns, agentName(i), status(agentName(i), i, int64(4+i%8), readyAgentConditions()))
			})
		}
		for i := range machines {
			eg.Go(func() error { return createOwnedMachine(ctx, fastClient, f, fmt.Sprintf("m%04d", i)) })
		}
		g.Expect(eg.Wait()).To(Succeed())

		kubeconfig := filepath.Join(b.TempDir(), "kubeconfig")
		g.Expect(env.WriteKubeconfig(kubeconfig)).To(Succeed())
		metricsAddr, profilerAddr := freeAddress(b), freeAddress(b)
		args := append([]string{"--namespace", f.ns, "--metrics-bind-address", metricsAddr, "--health-addr", "127.0.0.1:0",
			"--profiler-address", profilerAddr}, strings.Fields(os.Getenv("BENCH_ARGS"))...)
		profiles := profileDir(b, fmt.Sprintf("bind-%d-of-%d", machines, agents))
		// Kept with the profiles: its timestamps show the start-up (caches synced, workers started).
		logPath := filepath.Join(profiles, "manager.log")
		logFile, err := os.Create(logPath)
		g.Expect(err).NotTo(HaveOccurred())
		defer func() {
			if b.Failed() {
				out, _ := os.ReadFile(logPath)
				b.Logf("the manager's log:\n%s", out)
			}
		}()
		cmd := exec.CommandContext(ctx, bin, args...) //nolint:gosec // the manager just built, with the benchmark's flags
		cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
		cmd.Stdout, cmd.Stderr = logFile, logFile
		served := apiserverRequests(g, ctx, fast)
		apiserverBefore, etcdBefore := controlPlaneCPU(g)
		b.StartTimer()
		start := time.Now()
		g.Expect(cmd.Start()).To(Succeed())
		stopped := false
		stop := func() {
			if !stopped {
				stopped = true
				_ = cmd.Process.Signal(syscall.SIGTERM)
				_ = cmd.Wait()
			}
		}
		defer stop()
		cpu := benchprofile.StartCPU(ctx, profilerAddr, profiles, "cpu")
		// The API server's too, when it serves pprof (make bench sets testenv.ProfileDirEnv): its
		// CPU, not the manager's, is most of what a bind costs.
		var apiserverCPU *benchprofile.CPUProfiler
		if env.ProfileSocket != "" {
			apiserverCPU = benchprofile.StartCPU(ctx, benchprofile.SocketPrefix+env.ProfileSocket, profiles, "apiserver-cpu")
		}
		resident := sampleResident(ctx, cmd.Process.Pid)
		firstBound := waitBound(g, ctx, watcher, f.ns, machines)
		elapsed := time.Since(start)
		binding := elapsed - firstBound.Sub(start)
		b.StopTimer()
		g.Expect(benchprofile.SaveHeap(ctx, profilerAddr, filepath.Join(profiles, "heap-bound.pb.gz"))).To(Succeed())

		// Until the manager goes quiet: no request for 5 s.
		var requests map[string]int
		last, quietSince := -1, time.Now()
		for time.Since(quietSince) < 5*time.Second {
			time.Sleep(500 * time.Millisecond)
			requests = scrapeRequests(g, metricsAddr)
			if n := sum(requests); n != last {
				last, quietSince = n, time.Now()
			}
		}
		for k, v := range apiserverRequests(g, ctx, fast) {
			served[k] = v - served[k]
		}
		apiserverAfter, etcdAfter := controlPlaneCPU(g)
		apiserverUsed, etcdUsed := apiserverAfter-apiserverBefore, etcdAfter-etcdBefore
		serverCPU := apiserverUsed + etcdUsed
		rssKiB, managerCPU := processUsage(g, cmd.Process.Pid)
		peak := resident.stop()
		cpuFiles := cpu.Stop()
		var apiserverFiles []string
		if apiserverCPU != nil {
			apiserverFiles = apiserverCPU.Stop()
		}
		g.Expect(benchprofile.SaveHeap(ctx, profilerAddr, filepath.Join(profiles, "heap-quiet.pb.gz"))).To(Succeed())
		memStats, err := benchprofile.MemStats(ctx, profilerAddr)
		g.Expect(err).NotTo(HaveOccurred())
		stop()
		g.Expect(claimedAgents(g, ctx, f.ns)).To(HaveLen(machines))
		total := sum(requests)
		reads := requests["GET"] + requests["LIST"]
		perMachine := func(n int) float64 { return float64(n) / float64(machines) }
		b.ReportMetric(elapsed.Seconds(), "s/bind-all")
		b.ReportMetric(binding.Seconds(), "s/first-to-last-bound")
		b.ReportMetric(perMachine(total), "requests/machine")
		b.ReportMetric(float64(rssKiB)/1024, "MiB-peak-RSS")
		b.ReportMetric(float64(peak.AnonKiB)/1024, "MiB-peak-anon-RSS")
		fmt.Printf("| binding %d AgentMachines out of %d Agents (%s) | wall to all bound (from the first) | requests / machine until quiet | reads / machine | writes / machine | "+
			"manager peak RSS (peak anonymous + file-backed then) | manager CPU | API server and etcd CPU |\n", machines, agents, shape)
		fmt.Printf("| --- | --- | --- | --- | --- | --- | --- | --- |\n")
		fmt.Printf("| ours, flags %q | %.1f s (%.1f s) | %.2f | %.2f | %.2f | %.0f MiB (%.0f + %.0f MiB) | %.1f s | %.1f s |\n", strings.Join(args[8:], " "),
			elapsed.Seconds(), binding.Seconds(), perMachine(total), perMachine(reads), perMachine(total-reads), float64(rssKiB)/1024,
			float64(peak.AnonKiB)/1024, float64(peak.FileKiB)/1024, managerCPU.Seconds(), serverCPU.Seconds())
		fmt.Printf("of the API server and etcd CPU: kube-apiserver %.1f s, etcd %.1f s (the test environment's own)\n",
			apiserverUsed.Seconds(), etcdUsed.Seconds())
		fmt.Printf("the manager's Go memory when quiet: %s\n", memStats)
		fmt.Printf("the manager's requests by method until quiet: %v\n", requests)
		fmt.Printf("the API server's requests during the run, by verb and resource (the benchmark's own list and watch of AgentMachines included):\n")
		keys := make([]string, 0, len(served))
		for k, v := range served {
			if v > 0 {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Printf("  %-50s %6d  %5.2f / machine\n", k, served[k], perMachine(served[k]))
		}
		printProfiles(g, bin, profiles, cpuFiles)
		printAPIServerProfile(g, apiserverFiles)
	}
}

// waitBound waits until n AgentMachines of the namespace have a providerID. It watches them
// rather than list them again and again: a LIST of hundreds of AgentMachines several times a
// second would cost the API server, which the manager shares the machine with, more than the
// manager's own requests. A watch the API server ends (at its timeout, or a watcher it found too
// slow on a loaded machine: one ended 47 s into a bind of 10,000) is listed and watched again.
func waitBound(g Gomega, ctx context.Context, c client.WithWatch, ns string, n int) (first time.Time) {
	bound := map[string]bool{}
	see := func(am *infrav1.AgentMachine) {
		if am.Spec.ProviderID != "" && !bound[am.Name] {
			if len(bound) == 0 {
				first = time.Now()
			}
			bound[am.Name] = true
		}
	}
	timeout := time.After(30 * time.Minute)
	for len(bound) < n {
		list := &infrav1.AgentMachineList{}
		// A machine this loaded may time out a TLS handshake (it did at a load average of 33).
		g.Eventually(func() error { return c.List(ctx, list, client.InNamespace(ns)) }).WithTimeout(time.Minute).Should(Succeed())
		for i := range list.Items {
			see(&list.Items[i])
		}
		w, err := c.Watch(ctx, &infrav1.AgentMachineList{}, client.InNamespace(ns), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: list.ResourceVersion}})
		g.Expect(err).NotTo(HaveOccurred())
		for open := true; open && len(bound) < n; {
			select {
			case ev, ok := <-w.ResultChan():
				if open = ok; ok {
					if am, isAM := ev.Object.(*infrav1.AgentMachine); isAM {
						see(am)
					}
				}
			case <-timeout:
				w.Stop()
				g.Expect(bound).To(HaveLen(n), "AgentMachines bound in 30 minutes")
			}
		}
		w.Stop()
	}
	return first
}

// freeAddress returns a local address with a port nothing listens on.
func freeAddress(tb testing.TB) string {
	tb.Helper()
	l, err := (&net.ListenConfig{}).Listen(tb.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// scrapeRequests reads the manager's client requests by method from its metrics
// (controller-runtime's rest_client_requests_total; a watch counts as a GET).
func scrapeRequests(g Gomega, addr string) map[string]int {
	resp, err := http.Get("http://" + addr + "/metrics") //nolint:noctx // a test against a local process
	g.Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	g.Expect(err).NotTo(HaveOccurred())
	out := map[string]int{}
	for _, line := range strings.Split(string(body), "\n") {
		if !strings.HasPrefix(line, "rest_client_requests_total{") {
			continue
		}
		_, rest, _ := strings.Cut(line, `method="`)
		method, _, _ := strings.Cut(rest, `"`)
		fields := strings.Fields(line)
		v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		g.Expect(err).NotTo(HaveOccurred())
		out[method] += int(v)
	}
	return out
}

// apiserverRequests reads the API server's apiserver_request_total by verb and resource
// (resource/subresource).
func apiserverRequests(g Gomega, ctx context.Context, cfg *rest.Config) map[string]int {
	cs, err := kubernetes.NewForConfig(cfg)
	g.Expect(err).NotTo(HaveOccurred())
	body, err := cs.RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	label := func(line, name string) string {
		_, rest, _ := strings.Cut(line, name+`="`)
		v, _, _ := strings.Cut(rest, `"`)
		return v
	}
	out := map[string]int{}
	for _, line := range strings.Split(string(body), "\n") {
		if !strings.HasPrefix(line, "apiserver_request_total{") {
			continue
		}
		resource := label(line, "resource")
		if resource == "" {
			continue
		}
		if sub := label(line, "subresource"); sub != "" {
			resource += "/" + sub
		}
		fields := strings.Fields(line)
		v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		g.Expect(err).NotTo(HaveOccurred())
		out[label(line, "verb")+" "+resource] += int(v)
	}
	return out
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// controlPlaneCPU returns the CPU time the test environment's kube-apiserver and etcd used.
func controlPlaneCPU(g Gomega) (apiServer, etcd time.Duration) {
	apiServer, etcd, err := env.ControlPlaneCPU()
	g.Expect(err).NotTo(HaveOccurred())
	return apiServer, etcd
}

// processUsage reads a process's peak resident set (KiB) and CPU time.
func processUsage(g Gomega, pid int) (int, time.Duration) {
	rss, cpu, err := procstat.Usage(pid)
	g.Expect(err).NotTo(HaveOccurred())
	return rss, cpu
}

// createReadyAgent creates an approved Agent with this status.
func createReadyAgent(ctx context.Context, c client.Client, ns, name string, status aiv1beta1.AgentStatus) error {
	a := &aiv1beta1.Agent{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       aiv1beta1.AgentSpec{Approved: true, Role: "worker"},
	}
	if err := c.Create(ctx, a); err != nil {
		return err
	}
	a.Status = status
	return c.Status().Update(ctx, a)
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

// profileDir is where the bench keeps the manager's profiles of one run: BENCH_PROFILES (make
// bench sets _artifacts/bench), else the test's temporary directory; name tells the runs apart.
func profileDir(b *testing.B, name string) string {
	b.Helper()
	root := os.Getenv("BENCH_PROFILES")
	if root == "" {
		root = b.TempDir()
	}
	dir := filepath.Join(root, name)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		b.Fatal(err)
	}
	return dir
}

// printProfiles prints where the profiles are and their top entries: the CPU of the whole run
// (its slices merged), the memory allocated since the start (what the Agent list and the bind
// decoded and built) and the memory in use once bound and once quiet.
func printProfiles(g Gomega, bin, dir string, cpuFiles []string) {
	fmt.Printf("the manager's profiles are in %s (go tool pprof -http=: %s FILE...)\n", dir, bin)
	top := func(title string, args []string, files ...string) {
		out, err := benchprofile.Top(12, args, append([]string{bin}, files...)...)
		g.Expect(err).NotTo(HaveOccurred())
		fmt.Printf("%s:\n%s", title, out)
	}
	if len(cpuFiles) > 0 {
		top(fmt.Sprintf("CPU, start to quiet (%d slices of %s merged)", len(cpuFiles), benchprofile.CPUSlice), nil, cpuFiles...)
	}
	top("allocated since start, by bytes (heap-quiet.pb.gz)", []string{"-sample_index=alloc_space"}, filepath.Join(dir, "heap-quiet.pb.gz"))
	top("in use when all were bound (heap-bound.pb.gz)", []string{"-sample_index=inuse_space"}, filepath.Join(dir, "heap-bound.pb.gz"))
	top("in use when quiet (heap-quiet.pb.gz)", []string{"-sample_index=inuse_space"}, filepath.Join(dir, "heap-quiet.pb.gz"))
}

// apiserverStages hides from the API server's profile what every request passes through (the
// HTTP server, the handler chain's filters, the runtime), so that its cumulative top shows the
// stages of the requests: decoding, patching, validating, writing to etcd, the watch cache.
const apiserverStages = `^(net/http|runtime|sync|k8s.io/apiserver/pkg/(server|endpoints/(filters|filterlatency|metrics|handlers/finisher)|util/flowcontrol)|` +
	`k8s.io/kube-aggregator|k8s.io/apiextensions-apiserver/pkg/apiserver.\(\*crdHandler\).ServeHTTP|k8s.io/apimachinery/pkg/util/wait)`

// printAPIServerProfile prints the top entries of the API server's CPU profile (its slices
// merged), by their own time and by the request stages they are part of.
func printAPIServerProfile(g Gomega, files []string) {
	if len(files) == 0 {
		fmt.Printf("the API server was not profiled (set %s to a folder)\n", testenv.ProfileDirEnv)
		return
	}
	fmt.Printf("the API server's CPU profiles are in %s (go tool pprof -http=: FILE...)\n", filepath.Dir(files[0]))
	for _, view := range []struct {
		title string
		args  []string
	}{
		{"the API server's CPU, start to quiet, by own time", nil},
		{"the API server's CPU, start to quiet, by request stage (cumulative)", []string{"-cum", "-hide=" + apiserverStages}},
	} {
		out, err := benchprofile.Top(20, view.args, files...)
		g.Expect(err).NotTo(HaveOccurred())
		fmt.Printf("%s (%d slices of %s merged):\n%s", view.title, len(files), benchprofile.CPUSlice, out)
	}
}

// residentSampler reads a process's resident set every residentEvery until stopped, and keeps
// the sample of the largest anonymous part: VmHWM counts the binary's file-backed pages too
// (55 MiB of the manager's text and read-only data, shared with the page cache), which no change
// to the heap moves.
type residentSampler struct {
	cancel context.CancelFunc
	done   chan procstat.Resident
}

const residentEvery = 100 * time.Millisecond

func sampleResident(ctx context.Context, pid int) *residentSampler {
	ctx, cancel := context.WithCancel(ctx)
	s := &residentSampler{cancel: cancel, done: make(chan procstat.Resident, 1)}
	go func() {
		var peak procstat.Resident
		for tick := time.NewTicker(residentEvery); ; {
			if r, err := procstat.ResidentOf(pid); err == nil && r.AnonKiB > peak.AnonKiB {
				peak = r
			}
			select {
			case <-ctx.Done():
				tick.Stop()
				s.done <- peak
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

func (s *residentSampler) stop() procstat.Resident {
	s.cancel()
	return <-s.done
}
