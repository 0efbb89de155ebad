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

package etcd

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Two-node OpenShift with fencing (TNF, the DualReplica control-plane topology). After the
// installation cluster-etcd-operator hands etcd over to pacemaker (its pkg/tnf setup jobs: a
// two-node corosync cluster, a fence_redfish stonith device per node from the Secrets
// openshift-etcd/fencing-credentials-<node>, pkg/tnf/pkg/pcs/fencing.go ConfigureFencing, and the
// etcd resource ocf:heartbeat:podman-etcd, pkg/tnf/pkg/pcs/etcd.go ConfigureEtcd;
// openshift/cluster-etcd-operator b4786ae33ca2aceae72d67e6644e9928ead71f18). Both members vote,
// so the loss of one leaves the other without quorum: etcd serves no write until pacemaker on the
// survivor has fenced the peer, powering it off and on through its BMC (fence_redfish's reboot),
// and podman-etcd has restarted the survivor's etcd as a new one-member cluster
// (--force-new-cluster, podman-etcd's force_new_cluster attribute; bindata/etcd/
// cluster-restore-tnf.sh names it). When the fenced node is back, its stale member is added again
// as a learner and promoted, as ensureMembers does for a Node whose member was removed. Fencing
// that fails (no credentials, a BMC that refuses them or does not answer) is retried, and etcd
// stays without quorum meanwhile: pacemaker never runs the survivor alone without having fenced
// its peer (that would risk a split brain). Not simulated: corosync's token timeout and the
// stonith devices' pcmk_delay_base (10 s on the first device, fencing.go), which delay the fencing
// by seconds; a failure of both nodes; a network split (the fence race the delay settles).

// Where the installed cluster keeps the fencing credentials (cluster-etcd-operator
// pkg/tnf/pkg/tools/secrets.go fencingNamespace and fencingSecretNamePrefix).
const (
	FencingNamespace    = "openshift-etcd"
	FencingSecretPrefix = "fencing-credentials-"
)

// fenceRetry is how long pacemaker waits before it tries again a fencing that failed.
const fenceRetry = time.Second

// FencingCredentials are a node's fencing credentials, as its Secret holds them.
type FencingCredentials struct {
	// Node is the node they fence.
	Node                                          string
	Address, Username, Password, CertVerification string
}

// Fencer reaches hosts' BMCs as pacemaker's fence_redfish does: Fence power-cycles the host whose
// BMC answers at c.Address (its reboot action: off, then on), or fails as the BMC answers (wrong
// credentials, no BMC there).
type Fencer interface {
	Fence(ctx context.Context, c FencingCredentials) error
}

// fencingCredentials reads the fencing credentials of the two control-plane nodes, or nil when
// the cluster is not two-node OpenShift with fencing: two control-plane nodes, none of them an
// arbiter, each with its Secret (the installation of such a cluster writes them; assisted-service
// installs two control-plane nodes without an arbiter only with both nodes' credentials).
func (s *Simulator) fencingCredentials(ctx context.Context, nodes map[string]*corev1.Node) (map[string]FencingCredentials, error) {
	if len(nodes) != 2 {
		return nil, nil
	}
	out := map[string]FencingCredentials{}
	for name, n := range nodes {
		if _, ok := n.Labels[ArbiterLabel]; ok {
			return nil, nil
		}
		secret := &corev1.Secret{}
		if err := s.client.Get(ctx, client.ObjectKey{Namespace: FencingNamespace, Name: FencingSecretPrefix + name}, secret); err != nil {
			if apierrors.IsNotFound(err) {
				return nil, nil
			}
			return nil, fmt.Errorf("reading the fencing credentials of node %s: %w", name, err)
		}
		out[name] = FencingCredentials{Node: name, Address: string(secret.Data["address"]), Username: string(secret.Data["username"]),
			Password: string(secret.Data["password"]), CertVerification: string(secret.Data["certificateVerification"])}
	}
	return out, nil
}

// pacemaker plays pacemaker on the survivor of a two-node cluster with fencing: when one member's
// host went down, it fences that host through its BMC and restarts the survivor's etcd as a new
// single-member cluster. It tells whether it changed the membership (the sync's sample is stale
// then).
func (s *Simulator) pacemaker(ctx context.Context, creds map[string]FencingCredentials) bool {
	log := ctrl.LoggerFrom(ctx)
	s.mu.Lock()
	var survivor, failed *member
	for name := range creds {
		m := s.members[name]
		switch {
		case m == nil:
		case m.running():
			survivor = m
		case !m.downAt.IsZero() && m.fencedAt.Before(m.downAt):
			failed = m
		}
	}
	if s.stopped || survivor == nil || failed == nil || time.Since(failed.fenceAttempt) < fenceRetry {
		s.mu.Unlock()
		return false
	}
	failed.fenceAttempt = time.Now()
	c := creds[failed.name]
	s.mu.Unlock()

	// Outside the lock: the BMC's power-off reaches this simulator too (PoweredOff).
	err := errors.New("no fencing agent is configured")
	if s.Fencer != nil {
		err = s.Fencer.Fence(ctx, c)
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		failed.fenceError = err.Error()
		log.Info("Fencing failed: etcd stays without quorum", "node", failed.name, "error", failed.fenceError)
		return false
	}
	failed.fencedAt, failed.fenceError = time.Now(), ""
	log.Info("Fenced the failed node; its peer's etcd starts a new single-member cluster", "fenced", failed.name, "survivor", survivor.name)
	s.kill(survivor)
	if err := s.start(survivor, []string{survivor.name + "=" + survivor.peerURL}, "existing", "--force-new-cluster"); err != nil {
		log.Error(err, "Restarting the survivor's etcd with --force-new-cluster")
	}
	return true
}

// Fenced returns when pacemaker last fenced node's host (zero when never) and why its last
// attempt failed ("" when it did not).
func (s *Simulator) Fenced(node string) (time.Time, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.members[node]
	if m == nil {
		return time.Time{}, ""
	}
	return m.fencedAt, m.fenceError
}

// Reset forgets the cluster: every member is killed and its data wiped, and the next Ready
// control-plane Node starts a new cluster. The lab calls it when its workload cluster is
// replaced by a new one (Lab.NewWorkloadCluster), for the next cluster it installs.
func (s *Simulator) Reset() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range s.members {
		s.kill(m)
		if err := s.wipe(m); err != nil {
			return err
		}
	}
	s.members, s.last = map[string]*member{}, nil
	s.bootstrapped, s.bootstrapComplete = false, false
	return nil
}
