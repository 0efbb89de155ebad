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

package system

import (
	"context"
	"fmt"
	"math/rand"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	"github.com/openshift/assisted-service/models"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	infrav1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/infrastructure/v1beta1"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/lab"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/faults"
)

// faultInjection is the fault spec's API faults: one injector per provider, from one seed,
// wrapping each provider's client of the lab it runs in (lab.Options.ProviderTransport), off until
// the spec turns them on. FAULT_SEED sets the seed (a failed run's report says which it was).
type faultInjection struct {
	seed      int64
	injectors map[string]*faults.Injector
}

func newFaultInjection() *faultInjection {
	f := &faultInjection{seed: time.Now().UnixNano() % 1000, injectors: map[string]*faults.Injector{}}
	if v, err := strconv.ParseInt(os.Getenv("FAULT_SEED"), 10, 64); err == nil {
		f.seed = v
	}
	for i, p := range []string{"infrastructure", "bootstrap", "controlplane"} {
		f.injectors[p] = faults.New(f.seed*5 + int64(i))
		f.injectors[p].SetEnabled(false)
	}
	return f
}

// transport is the lab's ProviderTransport.
func (f *faultInjection) transport(p string) func(http.RoundTripper) http.RoundTripper {
	return f.injectors[p].Wrap
}

func (f *faultInjection) setEnabled(on bool) {
	for _, in := range f.injectors {
		in.SetEnabled(on)
	}
}

// chaos is what the fault spec does to the lab while a cluster installs and is deleted: at
// seeded random moments it restarts a provider's manager. The spec itself restarts
// assisted-service (restartService) at the moments that matter.
type chaos struct {
	l   *lab.Lab
	rng *rand.Rand

	mu       sync.Mutex
	restarts map[string]int
	errs     []error
	// serviceDown is how long each restart of assisted-service took, until its REST API
	// answered.
	serviceDown []time.Duration
}

// restartService restarts assisted-service with its database kept: SIGTERM, then the process
// started again, its REST API down until it answers. Its controllers then wait for the lease
// the old process held (controller-runtime's leader election, 15 s: cmd/main.go
// createControllerManager sets LeaderElection and no release on cancel), as after a pod's
// restart.
func (c *chaos) restartService(ctx context.Context) error {
	start := time.Now()
	if err := c.l.AssistedService.Restart(ctx); err != nil {
		return fmt.Errorf("restarting assisted-service: %w", err)
	}
	c.mu.Lock()
	c.serviceDown = append(c.serviceDown, time.Since(start).Round(100*time.Millisecond))
	c.mu.Unlock()
	return nil
}

// run disturbs the lab until ctx ends: every 2 to 6 s, a provider restart.
func (c *chaos) run(ctx context.Context) {
	providers := []string{"infrastructure", "bootstrap", "controlplane"}
	for {
		c.mu.Lock()
		wait := time.Duration(2000+c.rng.Intn(4000)) * time.Millisecond
		p := providers[c.rng.Intn(len(providers))]
		c.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		err := c.l.RestartProvider(p)
		c.mu.Lock()
		c.restarts[p]++
		if err != nil {
			c.errs = append(c.errs, err)
		}
		c.mu.Unlock()
	}
}

// doubleHolds says which Agents, configs or Machines hold more than they may ("" when none): an
// AgentMachine claims one Agent, a config recognizes one Agent, a providerID names one Machine.
func doubleHolds(g Gomega, c client.Client, ns string) string {
	var out []string
	agents := &aiv1beta1.AgentList{}
	g.Expect(c.List(ctx, agents, client.InNamespace(ns))).To(Succeed())
	byClaim, byConfig := map[string][]string{}, map[string][]string{}
	for _, a := range agents.Items {
		if v := a.Labels[infrav1.AgentClaimedByLabel]; v != "" {
			byClaim[v] = append(byClaim[v], a.Name)
		}
		if v := a.Labels[bootstrapv1.AgentConfigLabel]; v != "" {
			byConfig[v] = append(byConfig[v], a.Name)
		}
	}
	for k, v := range byClaim {
		if len(v) > 1 {
			out = append(out, fmt.Sprintf("AgentMachine %s claims Agents %v", k, v))
		}
	}
	for k, v := range byConfig {
		if len(v) > 1 {
			out = append(out, fmt.Sprintf("config %s recognized Agents %v", k, v))
		}
	}
	ms := &clusterv1.MachineList{}
	g.Expect(c.List(ctx, ms, client.InNamespace(ns))).To(Succeed())
	byID := map[string][]string{}
	for _, m := range ms.Items {
		if m.Spec.ProviderID != "" {
			byID[m.Spec.ProviderID] = append(byID[m.Spec.ProviderID], m.Name)
		}
	}
	for k, v := range byID {
		if len(v) > 1 {
			out = append(out, fmt.Sprintf("providerID %s is Machines' %v", k, v))
		}
	}
	return strings.Join(out, "; ")
}

// faultSpecs are the fault spec, in the lab that lab returns (the real assisted-service's, whose
// providers' clients go through in's injectors): a 3+1 cluster of self-booted hosts installs and
// is deleted while the providers' API requests fail at seeded random (in), their managers are
// restarted, and assisted-service is restarted with its database kept; a sampler checks
// throughout that no Agent, config or providerID is held twice.
func faultSpecs(labOf func() *lab.Lab, in *faultInjection) {
	var (
		l         *lab.Lab
		ns        string
		disturb   *chaos
		stopChaos context.CancelFunc
		chaosDone chan struct{}
		samples   int
		holds     []string
		sampleMu  sync.Mutex
		panics    float64
	)
	const name = "faulty"

	BeforeAll(func() {
		l = labOf()
		var err error
		panics, err = faults.ReconcilePanics()
		Expect(err).NotTo(HaveOccurred())
		ns, err = l.Mgmt.CreateNamespace(ctx, "faulty")
		Expect(err).NotTo(HaveOccurred())
		Expect(l.AddSelfBootedHosts("faulty", 4)).To(Succeed())

		in.setEnabled(true)
		disturb = &chaos{l: l, rng: rand.New(rand.NewSource(in.seed)), restarts: map[string]int{}} //nolint:gosec // a seeded run, reproducible
		cctx, cancel := context.WithCancel(ctx)
		stopChaos, chaosDone = cancel, make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { defer wg.Done(); disturb.run(cctx) }()
		go func() {
			defer close(chaosDone)
			defer wg.Wait()
			for cctx.Err() == nil {
				if v := doubleHolds(Default, l.Mgmt.Client, ns); v != "" {
					sampleMu.Lock()
					holds = append(holds, v)
					sampleMu.Unlock()
				}
				sampleMu.Lock()
				samples++
				sampleMu.Unlock()
				time.Sleep(300 * time.Millisecond)
			}
		}()
		DeferCleanup(func() { stopChaos(); <-chaosDone; in.setEnabled(false) })
	})
	BeforeEach(func() { reportOnFailure(l, ns) })

	It("installs to Available with every host claimed once", func() {
		objs, err := l.ClusterObjects(lab.ClusterOptions{Namespace: ns, Name: name, ControlPlanes: 3, Workers: 1,
			Version: "4.17.5", Infrastructure: lab.Agent}) // the lab's one ClusterVersion: see upstreamSwitchSpecs
		Expect(err).NotTo(HaveOccurred())
		for _, obj := range objs {
			// The chaos restarts the providers, whose admission webhooks refuse connections until
			// they are up again: as a user's kubectl apply would be, the create is tried again.
			Eventually(func() error {
				if err := l.Mgmt.Client.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
					return err
				}
				return nil
			}, timeout, interval).Should(Succeed())
		}
		// Once the hosts install (their installers report progress), assisted-service restarts:
		// a host's installer sends its reports again until the service answers, and the install
		// step the service hands out again is refused as podman refuses it (sim/discovery, as
		// assisted-installer and the agent do).
		Eventually(func(g Gomega) {
			aci := &hiveextv1beta1.AgentClusterInstall{}
			g.Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, aci)).To(Succeed())
			g.Expect(aci.Status.DebugInfo.State).To(Equal(models.ClusterStatusInstalling))
		}, timeout, interval).Should(Succeed())
		Expect(disturb.restartService(ctx)).To(Succeed())
		expectAvailableMachines(l, ns, name, 3, 4)
	})

	It("leaves nothing behind when the Cluster is deleted, and nothing was held twice or panicked", func() {
		// assisted-service restarts while the Agents are released and the InfraEnvs deleted.
		deleteCluster(l, ns, name)
		Expect(disturb.restartService(ctx)).To(Succeed())
		expectNothingLeft(l, ns, name)
		stopChaos()
		<-chaosDone
		sampleMu.Lock()
		defer sampleMu.Unlock()
		Expect(holds).To(BeEmpty(), "held twice during the run")
		Expect(disturb.errs).To(BeEmpty())
		after, err := faults.ReconcilePanics()
		Expect(err).NotTo(HaveOccurred())
		Expect(after-panics).To(BeZero(), "reconciles panicked")

		all := make([]*faults.Injector, 0, len(in.injectors))
		for _, i := range in.injectors {
			all = append(all, i)
		}
		total, kinds := faults.Summary(all...)
		line := faults.Report("system seed %d: a 3+1 cluster of self-booted hosts installed and deleted on the real assisted-service; provider restarts %v (crashes %v), "+
			"assisted-service restarts (down for) %v; faults injected %d (%s); %d invariant samples, 0 held twice, 0 left behind, 0 panics",
			in.seed, disturb.restarts, l.ProviderRestarts(), disturb.serviceDown, total, kinds, samples)
		AddReportEntry("faults", line)
	})
}
