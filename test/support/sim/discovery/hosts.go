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

// Package discovery plays the lab's hosts toward the real assisted-service, over its REST API,
// as assisted-service's own subsystem tests do (subsystem/utils_test.go at 780deffb6a35) and as
// the real discovery agent, assisted-installer and assisted-installer-controller do: a host that
// boots a discovery ISO (or a disk image whose config drive starts the agent) runs the agent its
// discovery ignition configures, registers, answers the steps the service sends from its hardware,
// installs when told to, reboots into what its firmware chooses, and its kubelet registers its
// Node. Hosts is the bare-metal side's inventory.HostEvents; Cluster plays what runs in the
// installed cluster (the installer controller's reports and the kubelet). No host shortcuts the
// API: all the service learns, it learns from requests a real host would send.
package discovery

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"

	ign "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/internal/ignition"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/inventory"
)

var _ inventory.HostEvents = &Hosts{}

// Hosts runs the software of the lab's hosts: the discovery agent and the installer, and, once
// OpenShift is installed, tells Cluster. It implements inventory.HostEvents.
type Hosts struct {
	Inventory *inventory.Inventory
	// ImageService tells what an ISO URL holds (required).
	ImageService *ImageService
	// Cluster is told when a host boots the OpenShift installed on its disk (required for
	// installations).
	Cluster *Cluster
	// HTTP is the hosts' client of a service whose discovery ignition names no CA (default
	// http.DefaultClient); an agent given --cacert trusts that CA only.
	HTTP *http.Client
	// DNS is the lab's name server (default LabDNS).
	DNS Resolver
	// PollInterval is how often the agent asks for its next steps (default 1 s). The service
	// asks for 60 s (hostcommands/instruction_manager.go defaultNextInstructionInSec); a lab's
	// agent asks sooner, which the service allows.
	PollInterval time.Duration
	// StageInterval is how long each install stage takes on the host (default 200 ms).
	StageInterval time.Duration
	// RetryMinDelay and RetryMaxDelay bound the installer's delays before it sends a failed
	// request again (retrying; default 2 and 10 s, assisted-installer's own).
	RetryMinDelay, RetryMaxDelay time.Duration
	Log                          logr.Logger

	mu             sync.Mutex
	running        map[string]*process     // system UUID → the software the host runs
	installed      map[string]installation // system UUID → the OpenShift on its disk
	failValidation map[string]bool
	disconnected   map[string]bool
	wg             sync.WaitGroup
}

// process is what a host runs: the agent from an ISO or a disk image, or the installed system.
type process struct {
	boot   string // the ISO URL, "disk-image:<url>", or "os"
	cancel context.CancelFunc
	done   chan struct{}
}

// installation is the OpenShift the installer wrote to a host's disk, and the service and
// cluster it was installed for.
type installation struct {
	service                     *apiClient
	infraEnvID, hostID, cluster string
	role                        string
	sno                         bool
}

func (hs *Hosts) init() {
	if hs.running == nil {
		hs.running = map[string]*process{}
		hs.installed = map[string]installation{}
		hs.failValidation = map[string]bool{}
		hs.disconnected = map[string]bool{}
	}
	if hs.DNS == nil {
		hs.DNS = LabDNS
	}
	if hs.PollInterval == 0 {
		hs.PollInterval = time.Second
	}
	if hs.StageInterval == 0 {
		hs.StageInterval = 200 * time.Millisecond
	}
	if hs.RetryMinDelay == 0 {
		hs.RetryMinDelay = 2 * time.Second
	}
	if hs.RetryMaxDelay == 0 {
		hs.RetryMaxDelay = 10 * time.Second
	}
}

// retrying is the installer's retry policy, with the hosts' delays.
func (hs *Hosts) retrying() retrying { return retrying{min: hs.RetryMinDelay, max: hs.RetryMaxDelay} }

// hostID is the host ID the agent registers with: its system UUID (the real agent reads it from
// SMBIOS), which the service names the host's Agent after.
func hostID(h *inventory.Host) string { return strings.ToLower(h.SystemUUID) }

// Booted starts what the host boots: the discovery agent of the ISO's ignition, or of the disk
// image's config drive. Again for what it already runs, nothing.
func (hs *Hosts) Booted(ctx context.Context, b inventory.Boot) error {
	hs.mu.Lock()
	hs.init()
	hs.mu.Unlock()
	log := hs.Log.WithValues("host", b.Host.Name)
	switch {
	case b.ISOURL != "":
		if hs.runs(b.Host, b.ISOURL) {
			return nil
		}
		data, err := hs.ImageService.DiscoveryIgnition(ctx, b.ISOURL)
		if err != nil {
			return err
		}
		agent, err := ign.DiscoveryAgentOf(data)
		if err != nil {
			// The ISO boots; no agent starts. Nothing tells the service.
			log.Info("The ISO's ignition starts no discovery agent", "reason", err.Error())
			return nil
		}
		hs.start(b.Host, b.ISOURL, func(ctx context.Context) { hs.runAgent(ctx, b.Host, *agent, false) })
	case b.DiskImageURL != "":
		boot := "disk-image:" + b.DiskImageURL
		if hs.runs(b.Host, boot) {
			return nil
		}
		if !ign.ReadsConfigDrive(b.DiskImageURL) {
			log.V(1).Info("The disk image's Ignition does not read the config drive: no discovery agent starts")
			return nil
		}
		agent, err := ign.DiscoveryAgentOf(b.UserData)
		if err != nil {
			log.V(1).Info("No discovery agent starts from the config drive's Ignition config", "reason", err.Error())
			return nil
		}
		hs.start(b.Host, boot, func(ctx context.Context) { hs.runAgent(ctx, b.Host, *agent, true) })
	}
	return nil
}

// PoweredOff stops whatever the host ran.
func (hs *Hosts) PoweredOff(_ context.Context, h *inventory.Host) error {
	hs.stop(h)
	return nil
}

// Deprovisioned is told the host is off and its disk wiped: the installed system is gone.
func (hs *Hosts) Deprovisioned(_ context.Context, h *inventory.Host) error {
	hs.stop(h)
	hs.mu.Lock()
	delete(hs.installed, h.SystemUUID)
	hs.mu.Unlock()
	return nil
}

// Stop stops every host's software and waits for it.
func (hs *Hosts) Stop() {
	hs.mu.Lock()
	procs := make([]*process, 0, len(hs.running))
	for _, p := range hs.running {
		procs = append(procs, p)
	}
	hs.mu.Unlock()
	for _, p := range procs {
		p.cancel()
	}
	hs.wg.Wait()
}

// FailValidation makes the host with that system UUID report too little memory for any role
// (has-memory-for-role fails), or, with false, its real memory again.
func (hs *Hosts) FailValidation(systemUUID string, fail bool) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	hs.init()
	hs.failValidation[systemUUID] = fail
}

// Disconnect makes the agent of the host with that system UUID stop (or, with false, resume)
// contacting the service, as when its network is cut: the service marks it disconnected after
// its own timeout.
func (hs *Hosts) Disconnect(systemUUID string, disconnect bool) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	hs.init()
	hs.disconnected[systemUUID] = disconnect
}

func (hs *Hosts) faults(uuid string) (failValidation, disconnected bool) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return hs.failValidation[uuid], hs.disconnected[uuid]
}

// runs tells whether the host runs that boot.
func (hs *Hosts) runs(h *inventory.Host, boot string) bool {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	p := hs.running[h.SystemUUID]
	return p != nil && p.boot == boot
}

// start stops what the host ran and runs f for the boot until the host stops.
func (hs *Hosts) start(h *inventory.Host, boot string, f func(ctx context.Context)) {
	hs.stop(h)
	ctx, cancel := context.WithCancel(context.Background())
	p := &process{boot: boot, cancel: cancel, done: make(chan struct{})}
	hs.mu.Lock()
	hs.running[h.SystemUUID] = p
	hs.mu.Unlock()
	hs.wg.Add(1)
	go func() {
		defer hs.wg.Done()
		defer close(p.done)
		f(ctx)
	}()
}

// stop stops what the host runs and waits for it.
func (hs *Hosts) stop(h *inventory.Host) {
	hs.mu.Lock()
	hs.init()
	p := hs.running[h.SystemUUID]
	delete(hs.running, h.SystemUUID)
	hs.mu.Unlock()
	if p != nil {
		p.cancel()
		<-p.done
	}
}

// reboot is the host restarting itself (the installer's reboot): what it ran stops, and its
// firmware boots the CD or the disk, as its boot order says.
func (hs *Hosts) reboot(h *inventory.Host) {
	hs.stop(h)
	iso := h.PowerOn()
	switch {
	case iso != "":
		if err := hs.Booted(context.Background(), inventory.Boot{Host: h, ISOURL: iso}); err != nil {
			hs.Log.Error(err, "The host rebooted into the ISO, which does not boot", "host", h.Name)
		}
	case h.RunsDisk():
		hs.bootOS(h)
	}
}

// bootOS runs the OpenShift installed on the host's disk: its kubelet joins the cluster.
func (hs *Hosts) bootOS(h *inventory.Host) {
	hs.mu.Lock()
	inst, ok := hs.installed[h.SystemUUID]
	hs.mu.Unlock()
	if !ok || hs.Cluster == nil {
		return
	}
	hs.start(h, "os", func(ctx context.Context) { hs.Cluster.nodeBooted(ctx, h, inst) })
}
