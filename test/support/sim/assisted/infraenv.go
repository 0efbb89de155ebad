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

package assisted

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	"github.com/openshift/assisted-service/models"
	conditionsv1 "github.com/openshift/custom-resource-status/conditions/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"

	ign "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/internal/ignition"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/inventory"
)

const defaultOSImageVersion = "4.14"

// reconcileInfraEnv publishes the InfraEnv's discovery ISO.
func (s *Simulator) reconcileInfraEnv(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ie := &aiv1beta1.InfraEnv{}
	if err := s.Client.Get(ctx, req.NamespacedName, ie); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !ie.DeletionTimestamp.IsZero() {
		s.timer.Forget(ie.UID)
		// As assisted-service: deleting an InfraEnv deregisters the hosts that booted its image,
		// so a host that boots another InfraEnv's image later registers afresh.
		if err := s.deregisterHosts(ctx, ie); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, removeFinalizer(ctx, s.Client, ie, InfraEnvFinalizer)
	}
	if err := addFinalizer(ctx, s.Client, ie, InfraEnvFinalizer); err != nil {
		return ctrl.Result{}, err
	}
	if ie.Status.ISODownloadURL != "" && conditionsv1.IsStatusConditionTrue(ie.Status.Conditions, aiv1beta1.ImageCreatedCondition) {
		return ctrl.Result{}, nil
	}
	if ok, err := s.imageCanBeCreated(ctx, ie); !ok || err != nil {
		return ctrl.Result{RequeueAfter: requeueImage}, err
	}
	if wait := s.timer.Remaining(ie.UID, "image", s.Durations.ImageCreate); wait > 0 {
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	now := metav1.NewTime(s.now())
	ie.Status.ISODownloadURL = s.isoURL(ie)
	ie.Status.CreatedTime = &now
	ie.Status.AgentLabelSelector = metav1.LabelSelector{MatchLabels: map[string]string{aiv1beta1.InfraEnvNameLabel: ie.Name}}
	// The events URL and the iPXE script's are the service's own, signed for the InfraEnv
	// (infraenv_controller.go populateEventsURL and setSignedBootArtifactURLs).
	id := string(ie.UID)
	events, err := s.eventsURL("infra_env_id", id, infraEnvScope, id)
	if err != nil {
		return ctrl.Result{}, err
	}
	ie.Status.InfraEnvDebugInfo.EventsURL = events
	ie.Status.BootArtifacts = s.bootArtifacts(ie)
	ie.Status.BootArtifacts.IpxeScriptURL, err = s.signedURL("/v2/infra-envs/"+id+"/downloads/files",
		url.Values{"file_name": {fileIPXEScript}}, infraEnvScope, id)
	if err != nil {
		return ctrl.Result{}, err
	}
	conditionsv1.SetStatusConditionNoHeartbeat(&ie.Status.Conditions, conditionsv1.Condition{
		Type: aiv1beta1.ImageCreatedCondition, Status: corev1.ConditionTrue,
		Reason: aiv1beta1.ImageCreatedReason, Message: aiv1beta1.ImageStateCreated,
	})
	if err := s.Client.Status().Update(ctx, ie); err != nil {
		return ctrl.Result{}, fmt.Errorf("updating InfraEnv status: %w", err)
	}
	s.timer.Done(ie.UID, "image")
	s.Recorder.Eventf(ie, nil, corev1.EventTypeNormal, "ImageCreated", "CreateImage", "Discovery image created")
	return ctrl.Result{}, nil
}

func arch(ie *aiv1beta1.InfraEnv) string {
	if ie.Spec.CpuArchitecture != "" {
		return ie.Spec.CpuArchitecture
	}
	return "x86_64"
}

// bootArtifacts are the image service's URLs of the InfraEnv's kernel, rootfs and initrd.
func (s *Simulator) bootArtifacts(ie *aiv1beta1.InfraEnv) aiv1beta1.BootArtifacts {
	base := fmt.Sprintf("%s/boot-artifacts", s.ImageServiceURL)
	return aiv1beta1.BootArtifacts{
		KernelURL: base + "/kernel?arch=" + arch(ie), RootfsURL: base + "/rootfs?arch=" + arch(ie),
		InitrdURL: fmt.Sprintf("%s/images/%s/pxe-initrd?arch=%s", s.ImageServiceURL, ie.UID, arch(ie)),
	}
}

// isoURL is the image service's URL of the InfraEnv's ISO.
func (s *Simulator) isoURL(ie *aiv1beta1.InfraEnv) string {
	version := ie.Spec.OSImageVersion
	if version == "" {
		version = defaultOSImageVersion
	}
	// The ISO type is a setting of the service (AgentServiceConfig), minimal by default.
	q := url.Values{"arch": {arch(ie)}, "type": {"minimal-iso"}, "version": {version}}
	return fmt.Sprintf("%s/images/%s?%s", s.ImageServiceURL, ie.UID, q.Encode())
}

// Booted registers (or reconnects) the Agent of a host that runs the discovery agent: from an
// InfraEnv's discovery ISO (b.ISOURL), or from a disk image (b.DiskImageURL) whose Ignition
// config, read from the config drive (b.UserData), starts the agent against this service and one
// of its InfraEnvs (see discoveryFromDisk). What the host booted is what its firmware chose
// (inventory.Host.PowerOn): a host that boots the discovery ISO runs the discovery agent, whatever
// its disk holds, and the service decides what its registration does (register).
func (s *Simulator) Booted(ctx context.Context, b inventory.Boot) error {
	if b.Host == nil {
		return fmt.Errorf("booting %s: no host", b.ISOURL+b.DiskImageURL)
	}
	if s.down.Load() {
		// The host's agent cannot reach the service: it tries again.
		return fmt.Errorf("host %s cannot register: assisted-service is unavailable", b.Host.Name)
	}
	if s.gaveUp(b.Host.SystemUUID) {
		return nil // Its agent was refused since it booted: it waits for a reboot.
	}
	if b.DiskImageURL != "" {
		ie, err := s.discoveryFromDisk(ctx, b)
		if err != nil || ie == nil {
			return err
		}
		return s.register(ctx, b.Host, ie, true)
	}
	ie, err := s.infraEnvServing(ctx, b.ISOURL)
	if err != nil {
		return err
	}
	return s.register(ctx, b.Host, ie, false)
}

// discoveryFromDisk is the InfraEnv that the discovery agent of a host booted from a disk image
// registers with, or nil when none does, which nothing in the API shows (the host runs, its
// agent never reaches the service; it is logged): an image whose Ignition does not read the
// config drive (ign.ReadsConfigDrive), user data that Ignition cannot render or that starts no agent
// (ign.DiscoveryAgentOf), an agent told another service's URL, a token this service did not sign
// (its agent authentication, local_authenticator.go AuthAgentAuth), or an InfraEnv it does not
// have.
func (s *Simulator) discoveryFromDisk(ctx context.Context, b inventory.Boot) (*aiv1beta1.InfraEnv, error) {
	log := ctrl.LoggerFrom(ctx).WithValues("host", b.Host.Name, "image", b.DiskImageURL)
	if !ign.ReadsConfigDrive(b.DiskImageURL) {
		log.V(1).Info("The disk image's Ignition does not read the config drive: no discovery agent starts")
		return nil, nil
	}
	agent, err := ign.DiscoveryAgentOf(b.UserData)
	if err != nil {
		log.V(1).Info("No discovery agent starts from the config drive's Ignition config", "reason", err.Error())
		return nil, nil
	}
	if agent.ServiceURL != s.ServiceURL() {
		log.V(1).Info("The discovery agent reports to another service", "url", agent.ServiceURL)
		return nil, nil
	}
	if !s.isInfraEnvToken(agent.Token) {
		log.V(1).Info("The discovery agent's token is refused: it cannot register")
		return nil, nil
	}
	ie, err := s.infraEnvByUID(ctx, agent.InfraEnvID)
	if err != nil {
		return nil, err
	}
	if ie == nil || !ie.DeletionTimestamp.IsZero() {
		log.V(1).Info("The discovery agent's InfraEnv does not exist: it cannot register", "infraEnvID", agent.InfraEnvID)
		return nil, nil
	}
	return ie, nil
}

// register registers (or reconnects) the Agent of host, running the discovery agent of InfraEnv
// ie, from the disk (fromDisk: its agent reports the boot device type persistent, the inventory's
// boot.device_type, which the pinned Agent types have no field for) or from the live ISO.
func (s *Simulator) register(ctx context.Context, host *inventory.Host, ie *aiv1beta1.InfraEnv, fromDisk bool) error {
	uuid := host.SystemUUID
	key := client.ObjectKey{Namespace: ie.Namespace, Name: agentName(uuid)}
	// What the service's database holds now, not what the cache has seen of it.
	agent := &aiv1beta1.Agent{}
	err := s.reader.Get(ctx, key, agent)
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("reading the Agent of host %s: %w", host.Name, err)
	}
	s.mu.Lock()
	wasRunning := s.running[uuid]
	s.mu.Unlock()
	if err == nil && !wasRunning && agent.Labels[aiv1beta1.InfraEnvNameLabel] == ie.Name && deregistering(agent) == nil {
		// A host booting the discovery agent again, registered through the same InfraEnv: what
		// the service does depends on where its host's installation is.
		if refused, err := s.registerAgain(ctx, host, agent); refused || err != nil {
			return err
		}
	}
	s.mu.Lock()
	s.running[uuid] = true
	s.registered[key] = true
	s.bootedFromDisk[uuid] = fromDisk
	s.mu.Unlock()

	if apierrors.IsNotFound(err) {
		agent = &aiv1beta1.Agent{
			ObjectMeta: metav1.ObjectMeta{
				Name: key.Name, Namespace: key.Namespace,
				Labels: map[string]string{aiv1beta1.InfraEnvNameLabel: ie.Name},
			},
			Spec: aiv1beta1.AgentSpec{Role: "", Approved: false},
		}
		if ie.Spec.ClusterRef != nil {
			agent.Spec.ClusterDeploymentName = &aiv1beta1.ClusterReference{Name: ie.Spec.ClusterRef.Name, Namespace: ie.Spec.ClusterRef.Namespace}
		}
		controllerutil.AddFinalizer(agent, AgentFinalizer)
		if err := s.Client.Create(ctx, agent); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("registering the Agent of host %s: %w", host.Name, err)
		}
		ctrl.LoggerFrom(ctx).Info("Host registered", "agent", key.String(), "infraEnv", ie.Name, "host", host.Name)
		if !wasRunning {
			s.pokePeers(ctx, uuid)
		}
		return nil
	}
	if err := deregistering(agent); err != nil {
		return fmt.Errorf("host %s cannot register yet: %w", host.Name, err)
	}
	if agent.Labels[aiv1beta1.InfraEnvNameLabel] != ie.Name {
		if err := s.reregister(ctx, agent, ie); err != nil {
			return fmt.Errorf("registering host %s through InfraEnv %s: %w", host.Name, ie.Name, err)
		}
		ctrl.LoggerFrom(ctx).Info("Host registered anew", "agent", key.String(), "infraEnv", ie.Name, "host", host.Name)
	}
	if !wasRunning {
		s.agentsCh <- event.GenericEvent{Object: agent}
		s.pokePeers(ctx, uuid)
	}
	return nil
}

// registerAgain is assisted-service's registration of a host it knows, through the same InfraEnv,
// whose discovery agent starts again (internal/host/statemachine.go, the TransitionTypeRegisterHost
// rules, at the pinned version):
//   - installed: refused ("Register post-installation", PostRegisterAfterInstallation answers
//     403: the host booted the installation image instead of its disk);
//   - installing-pending-user-action: refused ("Wrong boot order detection" from that state,
//     PostRegisterDuringReboot answers 403 "Host is required to be booted from disk");
//   - added-to-existing-cluster with its installation done (a day-2 host): the wrong boot order
//     is detected, the host goes to installing-pending-user-action with the same message as
//     while rebooting (PostRegisterDuringReboot), and its agent is let in;
//   - any other state is let in: the Agent reconcile moves the host on (an unbound host, as
//     unbinding-pending-user-action after its cluster let it go, starts over at
//     discovering-unbound: "Initial registration" in pool_host_statemachine.go).
//
// The agent stops trying after a 403 (assisted-installer-agent src/commands/register_node.go
// RegisterHostWithRetry: "Host will stop trying to register", and waits forever) until its host
// reboots: refused says so, and Booted ignores the host until PoweredOff.
func (s *Simulator) registerAgain(ctx context.Context, host *inventory.Host, agent *aiv1beta1.Agent) (refused bool, err error) {
	log := ctrl.LoggerFrom(ctx).WithValues("agent", agent.Name, "host", host.Name)
	switch state := agent.Status.DebugInfo.State; {
	case state == models.HostStatusInstalled, state == models.HostStatusInstallingPendingUserAction:
		s.mu.Lock()
		s.refused[host.SystemUUID] = true
		s.mu.Unlock()
		log.Info("Host registration refused: it booted the discovery image instead of its installed disk", "state", state)
		return true, nil
	case state == models.HostStatusAddedToExistingCluster && agent.Status.Progress.CurrentStage == models.HostStageDone:
		err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
			a := &aiv1beta1.Agent{}
			if err := s.reader.Get(ctx, client.ObjectKeyFromObject(agent), a); err != nil {
				return err
			}
			if a.Status.DebugInfo.State != models.HostStatusAddedToExistingCluster {
				return nil
			}
			a.Status.DebugInfo.State, a.Status.DebugInfo.StateInfo = models.HostStatusInstallingPendingUserAction, wrongBootOrderInfo(host)
			setAgentConditions(a, a.Status.DebugInfo.State, a.Status.DebugInfo.StateInfo, "", "")
			return s.Client.Status().Update(ctx, a)
		})
		if err != nil {
			return false, fmt.Errorf("registering host %s again: %w", host.Name, err)
		}
		log.Info("Host booted the discovery ISO again after its installation")
	}
	return false, nil
}

// gaveUp tells whether the agent of the host was refused since the host booted.
func (s *Simulator) gaveUp(uuid string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refused[uuid]
}

// PoweredOff is called when the host is powered off: its agent stops reporting.
func (s *Simulator) PoweredOff(ctx context.Context, h *inventory.Host) error {
	s.mu.Lock()
	was := s.running[h.SystemUUID]
	s.running[h.SystemUUID] = false
	delete(s.refused, h.SystemUUID)
	s.mu.Unlock()
	if was {
		s.pokePeers(ctx, h.SystemUUID)
	}
	return nil
}

// Deprovisioned is called when the host's disks were cleaned: it no longer runs anything.
func (s *Simulator) Deprovisioned(ctx context.Context, h *inventory.Host) error {
	s.mu.Lock()
	delete(s.bootedFromDisk, h.SystemUUID)
	s.mu.Unlock()
	return s.PoweredOff(ctx, h)
}

func (s *Simulator) infraEnvServing(ctx context.Context, isoURL string) (*aiv1beta1.InfraEnv, error) {
	list := &aiv1beta1.InfraEnvList{}
	if err := s.Client.List(ctx, list); err != nil {
		return nil, fmt.Errorf("listing InfraEnvs: %w", err)
	}
	// The image service serves an InfraEnv's image from the service's own records, not from the
	// InfraEnv's status (which a cache may not show yet).
	for i := range list.Items {
		if ie := &list.Items[i]; s.isoURL(ie) == isoURL && ie.DeletionTimestamp.IsZero() {
			return ie, nil
		}
	}
	return nil, fmt.Errorf("no InfraEnv serves the ISO %s", isoURL)
}

// agentName is the name assisted-service gives a host's Agent: its host ID, the system UUID.
func agentName(uuid string) string { return strings.ToLower(uuid) }

func addFinalizer(ctx context.Context, c client.Client, obj client.Object, f string) error {
	if controllerutil.ContainsFinalizer(obj, f) {
		return nil
	}
	base := obj.DeepCopyObject().(client.Object)
	controllerutil.AddFinalizer(obj, f)
	if err := c.Patch(ctx, obj, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("adding finalizer %s: %w", f, err)
	}
	return nil
}

func removeFinalizer(ctx context.Context, c client.Client, obj client.Object, f string) error {
	if !controllerutil.ContainsFinalizer(obj, f) {
		return nil
	}
	base := obj.DeepCopyObject().(client.Object)
	controllerutil.RemoveFinalizer(obj, f)
	if err := c.Patch(ctx, obj, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("removing finalizer %s: %w", f, err)
	}
	return nil
}

// deregisterHosts deletes the Agents registered through the InfraEnv ie.
func (s *Simulator) deregisterHosts(ctx context.Context, ie *aiv1beta1.InfraEnv) error {
	agents := &aiv1beta1.AgentList{}
	if err := s.Client.List(ctx, agents, client.InNamespace(ie.Namespace),
		client.MatchingLabels{aiv1beta1.InfraEnvNameLabel: ie.Name}); err != nil {
		return fmt.Errorf("listing the Agents of InfraEnv %s: %w", ie.Name, err)
	}
	for i := range agents.Items {
		a := &agents.Items[i]
		// The Agent controller removes the Agent's finalizer once it is deleting.
		if err := s.Client.Delete(ctx, a); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deregistering Agent %s: %w", a.Name, err)
		}
		ctrl.LoggerFrom(ctx).Info("Host deregistered with its InfraEnv", "agent", a.Name, "infraEnv", ie.Name)
	}
	return nil
}

// deregistering says that the Agent of a host's previous registration is still being removed;
// the host's agent retries until it is gone.
func deregistering(agent *aiv1beta1.Agent) error {
	if agent.DeletionTimestamp.IsZero() {
		return nil
	}
	return fmt.Errorf("its previous Agent %s is being deregistered", client.ObjectKeyFromObject(agent))
}

// reregister makes agent the registration of its host through InfraEnv ie, as assisted-service
// does when a host boots another InfraEnv's discovery image: a new host, unapproved, with no role
// or hostname set, bound to ie's cluster, whose state machine starts over at discovering and which
// is not part of any earlier installation. assisted-service does this in one database transaction;
// here it takes two writes (spec, then status) while the Agent controller may write the status of
// the old registration between them, so each write starts again from the Agent as it is now.
func (s *Simulator) reregister(ctx context.Context, agent *aiv1beta1.Agent, ie *aiv1beta1.InfraEnv) error {
	key := client.ObjectKeyFromObject(agent)
	// write applies change to the Agent as it is now: after a conflict it reads it again.
	write := func(change func() error) error {
		return retry.RetryOnConflict(retry.DefaultBackoff, func() error {
			if agent == nil {
				agent = &aiv1beta1.Agent{}
				if err := s.reader.Get(ctx, key, agent); err != nil {
					return err
				}
			}
			err := change()
			if err != nil {
				agent = nil
			}
			return err
		})
	}
	err := write(func() error {
		if err := deregistering(agent); err != nil {
			return err
		}
		base := agent.DeepCopy()
		if agent.Labels == nil {
			agent.Labels = map[string]string{}
		}
		agent.Labels[aiv1beta1.InfraEnvNameLabel] = ie.Name
		agent.Spec = aiv1beta1.AgentSpec{}
		if ref := ie.Spec.ClusterRef; ref != nil {
			agent.Spec.ClusterDeploymentName = &aiv1beta1.ClusterReference{Name: ref.Name, Namespace: ref.Namespace}
		}
		return s.Client.Patch(ctx, agent, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
	})
	if err != nil {
		return fmt.Errorf("relabelling Agent %s: %w", key.Name, err)
	}
	err = write(func() error {
		agent.Status = aiv1beta1.AgentStatus{}
		return s.Client.Status().Update(ctx, agent)
	})
	if err != nil {
		return fmt.Errorf("resetting the status of Agent %s: %w", key.Name, err)
	}
	// Dropped after the status is reset, so that nothing the Agent controller did for the old
	// registration in between is kept.
	s.forgetHost(key)
	s.timer.Forget(agent.UID)
	return nil
}
