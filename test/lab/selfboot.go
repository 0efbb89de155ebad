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

package lab

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/cluster-api/util"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	infrav1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/infrastructure/v1beta1"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/move"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/inventory"
)

// selfBooter plays the person who boots hosts by hand in the agent flavor: for every
// OpenshiftAssistedConfig of a Machine whose infrastructure is an AgentMachine, once the config
// reports its discovery ISO URL, it takes a free self-booted host and boots it from that ISO (as
// one would with a USB stick or a BMC's virtual media). When the config goes away, the host is
// wiped and returned to the pool.
type selfBooter struct {
	client.Client
	// Hosts is told when a host boots or is wiped (the assisted-service simulator).
	Hosts inventory.HostEvents

	mu sync.Mutex
	// pool holds the self-booted hosts, in the order they were added.
	pool []*inventory.Host
	// assigned maps a config to the host booted for it, and its ISO URL.
	assigned map[types.NamespacedName]assignment
	// moved holds the configs clusterctl move took to another management cluster.
	moved map[types.NamespacedName]bool
}

type assignment struct {
	host   *inventory.Host
	isoURL string
}

func (b *selfBooter) setupWithManager(mgr ctrl.Manager, opts controller.Options) error {
	b.Client = mgr.GetClient()
	b.assigned = map[types.NamespacedName]assignment{}
	b.moved = map[types.NamespacedName]bool{}
	// A config that clusterctl move deletes from this management cluster (it annotates it first)
	// lives on elsewhere: its host is not wiped.
	movedAway := predicate.Funcs{DeleteFunc: func(e event.DeleteEvent) bool {
		if move.DeletingForMove(e.Object) {
			b.mu.Lock()
			b.moved[client.ObjectKeyFromObject(e.Object)] = true
			b.mu.Unlock()
		}
		return true
	}}
	return ctrl.NewControllerManagedBy(mgr).Named("lab-selfboot").WithOptions(opts).
		For(&bootstrapv1.OpenshiftAssistedConfig{}, builder.WithPredicates(movedAway)).Complete(b)
}

// add puts hosts into the pool of self-booted hosts.
func (b *selfBooter) add(hosts ...*inventory.Host) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pool = append(b.pool, hosts...)
}

// take returns the host assigned to key, or assigns it the first free one.
func (b *selfBooter) take(key types.NamespacedName) *inventory.Host {
	b.mu.Lock()
	defer b.mu.Unlock()
	if a, ok := b.assigned[key]; ok {
		return a.host
	}
	used := map[*inventory.Host]bool{}
	for _, a := range b.assigned {
		used[a.host] = true
	}
	for _, h := range b.pool {
		if !used[h] {
			b.assigned[key] = assignment{host: h}
			return h
		}
	}
	return nil
}

func (b *selfBooter) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	config := &bootstrapv1.OpenshiftAssistedConfig{}
	err := b.Get(ctx, req.NamespacedName, config)
	if apierrors.IsNotFound(err) || (err == nil && !config.DeletionTimestamp.IsZero()) {
		return ctrl.Result{}, b.release(ctx, req.NamespacedName)
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	if config.Status.ISODownloadURL == "" {
		return ctrl.Result{}, nil
	}
	machine, err := util.GetOwnerMachine(ctx, b.Client, config.ObjectMeta)
	if err != nil || machine == nil {
		return ctrl.Result{}, err
	}
	if ref := machine.Spec.InfrastructureRef; ref.Kind != "AgentMachine" || ref.APIGroup != infrav1.GroupVersion.Group {
		return ctrl.Result{}, nil // CAPM3 boots Metal3 hosts.
	}
	b.mu.Lock()
	a, ok := b.assigned[req.NamespacedName]
	b.mu.Unlock()
	if ok && a.isoURL == config.Status.ISODownloadURL {
		return b.approve(ctx, config, a.host)
	}
	host := b.take(req.NamespacedName)
	if host == nil {
		log.Info("No free self-booted host for the Machine", "machine", machine.Name)
		// Hosts are added to the pool without an event of this controller's: look again.
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	// As a person boots a server from an ISO: the ISO attached (virtual media or a USB stick, UEFI)
	// with a one-time boot to it, then the power button. The host runs it through its firmware,
	// so it is on for its peers' connectivity checks, and after the installer writes its disk it
	// boots the disk (the override used up, efibootmgr's entry first).
	host.InsertMedia(config.Status.ISODownloadURL, true, inventory.OverrideOnce)
	booted := host.PowerOn()
	if err := b.Hosts.Booted(ctx, inventory.Boot{Host: host, ISOURL: booted}); err != nil {
		return ctrl.Result{}, fmt.Errorf("booting host %s from the discovery ISO of %s: %w", host.Name, req.Name, err)
	}
	b.mu.Lock()
	b.assigned[req.NamespacedName] = assignment{host: host, isoURL: config.Status.ISODownloadURL}
	b.mu.Unlock()
	log.Info("Booted a host from the Machine's discovery ISO", "host", host.Name, "machine", machine.Name)
	return b.approve(ctx, config, host)
}

// approve plays the person who booted host checking that the Agent registered through the
// config's InfraEnv is that host, and approving it: without a BareMetalHost the bootstrap
// provider approves no Agent on its own. assisted-service names the Agent after the host's
// system UUID. It looks again until the Agent registered.
func (b *selfBooter) approve(ctx context.Context, config *bootstrapv1.OpenshiftAssistedConfig, host *inventory.Host) (ctrl.Result, error) {
	agent := &aiv1beta1.Agent{}
	err := b.Get(ctx, client.ObjectKey{Namespace: config.Namespace, Name: strings.ToLower(host.SystemUUID)}, agent)
	if apierrors.IsNotFound(err) {
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	if config.Status.InfraEnvRef != nil && agent.Labels[aiv1beta1.InfraEnvNameLabel] != config.Status.InfraEnvRef.Name {
		return ctrl.Result{RequeueAfter: time.Second}, nil // still the Agent of its last boot
	}
	if agent.Spec.Approved {
		return ctrl.Result{}, nil
	}
	before := agent.DeepCopy()
	agent.Spec.Approved = true
	if err := b.Patch(ctx, agent, client.MergeFrom(before)); err != nil {
		return ctrl.Result{}, fmt.Errorf("approving Agent %s of host %s: %w", agent.Name, host.Name, err)
	}
	ctrl.LoggerFrom(ctx).Info("Approved the Agent of a self-booted host", "host", host.Name, "agent", agent.Name)
	return ctrl.Result{}, nil
}

// release wipes the host booted for a config that is gone and returns it to the pool; the host
// of a config moved to another management cluster keeps running, and leaves this pool.
func (b *selfBooter) release(ctx context.Context, key types.NamespacedName) error {
	b.mu.Lock()
	a, ok := b.assigned[key]
	if moved := b.moved[key]; moved {
		delete(b.moved, key)
		if ok {
			b.pool = slices.DeleteFunc(b.pool, func(h *inventory.Host) bool { return h == a.host })
			delete(b.assigned, key)
		}
		b.mu.Unlock()
		return nil
	}
	b.mu.Unlock()
	if !ok {
		return nil
	}
	// The person wipes the host and turns it off before it goes back to the pool.
	a.host.Deprovision()
	if err := b.Hosts.Deprovisioned(ctx, a.host); err != nil {
		return fmt.Errorf("wiping host %s: %w", a.host.Name, err)
	}
	b.mu.Lock()
	delete(b.assigned, key)
	b.mu.Unlock()
	return nil
}

// AddSelfBootedHosts adds n simulated hosts named <prefix>-<i> that have no BareMetalHost: the
// lab boots each from the discovery ISO of a Machine whose infrastructure is an AgentMachine. A
// prefix the lab's hosts already have is refused (inventory.AddNew).
func (l *Lab) AddSelfBootedHosts(prefix string, n int) error {
	hosts := inventory.Generate(prefix, n, inventory.GenerateOptions{FirstIP: 20 + len(l.Inventory.Hosts())})
	if err := l.Inventory.AddNew(hosts...); err != nil {
		return fmt.Errorf("adding self-booted hosts %s-*: %w", prefix, err)
	}
	l.current().selfBoot.add(hosts...)
	return nil
}
