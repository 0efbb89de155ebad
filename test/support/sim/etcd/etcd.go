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

// Package etcd plays OpenShift's cluster-etcd-operator (CEO) and its etcd static pods in the lab's
// workload cluster, with real etcd processes: one member per control-plane Node, named after the
// Node. The first member bootstraps a one-member cluster; each later one is added as CEO's
// ClusterMemberController adds it (MemberAddAsLearner, then the process joins with
// --initial-cluster-state=existing, then the learner is promoted). As on UPI, agent-based and
// platform None clusters, nothing ever removes a member: only a client does (the control-plane
// provider, through the Connector).
//
// Host events (PoweredOff, Deprovisioned) kill a member's process, and wipe its data dir; the
// member restarts from its data dir once its Node is Ready again, unless its host's disk was
// written since (a reinstallation, disk.go). Health is what etcd answers,
// sampled from etcd itself (never a flag of the simulator); it is reported as OpenShift reports it: a Pod openshift-etcd/etcd-<node> per member
// and the ClusterOperator "etcd" (InstallCRD installs its CRD, OpenShift's own).
package etcd

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/inventory"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/testenv"
)

// Labels of a control-plane Node.
const (
	MasterLabel       = "node-role.kubernetes.io/master"
	ControlPlaneLabel = "node-role.kubernetes.io/control-plane"
	// ArbiterLabel is the role label of the arbiter node of two-node OpenShift.
	ArbiterLabel = "node-role.kubernetes.io/arbiter"
)

// Simulator runs the etcd members of the workload cluster whose manager it is set up with.
// It implements inventory.HostEvents and, structurally, the control-plane provider's
// etcd.Connector.
type Simulator struct {
	// Binary is the etcd binary (default: etcd in testenv.AssetsDir, i.e. KUBEBUILDER_ASSETS).
	Binary string
	// Selector restricts the control-plane Nodes the simulator serves (default: all of them).
	Selector labels.Selector
	// Resync is how often membership and health are sampled and reported (default 300 ms; CEO's
	// controllers resync every minute, but react to events).
	Resync time.Duration
	// Inventory, when set, tells on which host each control-plane Node runs and whether its disk
	// was rewritten since its member's data dir was created (disk.go); without it a member keeps
	// its data dir until Deprovisioned.
	Inventory *inventory.Inventory
	// Fencer is the BMCs that pacemaker reaches to fence a node of two-node OpenShift with fencing
	// (fencing.go); nil: every fencing fails.
	Fencer Fencer

	client client.Client
	// cache reads Nodes and the members' pods from the workload manager's informers, as CEO's
	// controllers do; client writes (and reads what is not watched).
	cache  client.Reader
	binary string
	dir    string

	mu      sync.Mutex
	members map[string]*member // by node name
	// bootstrapped: the first member started a new cluster.
	bootstrapped bool
	// bootstrapComplete: the cluster has had three healthy voting members (its installation's
	// bootstrap is over): from then on new members pass cluster-etcd-operator's scaling gate
	// (scaling.go).
	bootstrapComplete bool
	// last is the last membership read from etcd (for the quorum watcher when no member answers).
	last    []Member
	stopped bool
	// namespaced: the namespace openshift-etcd exists.
	namespaced bool
	// configured: the operator config etcds.operator.openshift.io/cluster exists.
	configured bool
}

// Member is one member of the etcd cluster, as etcd reports it.
type Member struct {
	// Name is the node name ("" while an added member has not started).
	Name string
	ID   uint64
	// PeerURL and ClientURL are the member's first URLs.
	PeerURL, ClientURL  string
	IsLearner, IsLeader bool
	// Alive: the member's process runs (the simulator runs it: no network check whose timing a
	// busy machine could upset), whether or not its cluster has a leader.
	Alive bool
	// Healthy: the member served its health check (a read, see checkHealth) in time.
	Healthy bool
}

// SetupWithManager starts the simulator's controller in mgr, the workload cluster's manager.
func (s *Simulator) SetupWithManager(mgr ctrl.Manager, opts controller.Options) error {
	if s.Resync == 0 {
		s.Resync = 300 * time.Millisecond
	}
	if s.Selector == nil {
		s.Selector = labels.Everything()
	}
	s.binary = s.Binary
	if s.binary == "" {
		root, err := testenv.RepoRoot()
		if err != nil {
			return err
		}
		assets, err := testenv.AssetsDir(root)
		if err != nil {
			return fmt.Errorf("finding the etcd binary: %w", err)
		}
		s.binary = filepath.Join(assets, "etcd")
	}
	if _, err := os.Stat(s.binary); err != nil {
		return fmt.Errorf("finding the etcd binary: %w", err)
	}
	dir, err := os.MkdirTemp("", "lab-etcd-")
	if err != nil {
		return fmt.Errorf("creating the etcd data folder: %w", err)
	}
	// Its own client: the simulator syncs several times a second, too often for the manager's
	// default client-side rate limit.
	cfg := rest.CopyConfig(mgr.GetConfig())
	cfg.QPS, cfg.Burst = 200, 400
	c, err := client.New(cfg, client.Options{Scheme: mgr.GetScheme()})
	if err != nil {
		return fmt.Errorf("creating a workload client: %w", err)
	}
	s.mu.Lock()
	s.dir, s.client, s.cache, s.members = dir, c, mgr.GetCache(), map[string]*member{}
	s.mu.Unlock()
	// One worker and one key: every Node event triggers a sync of the whole cluster, as CEO's
	// controllers sync on informer events.
	opts.MaxConcurrentReconciles = 1
	key := reconcile.Request{NamespacedName: types.NamespacedName{Name: "etcd"}}
	return ctrl.NewControllerManagedBy(mgr).Named("etcd-sim").WithOptions(opts).
		Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
			return []reconcile.Request{key}
		})).
		Complete(reconcile.Func(s.reconcile))
}

// Dir is the folder of the members' data dirs (and logs), removed by Stop.
func (s *Simulator) Dir() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dir
}

// Stop kills every member and removes their data. The simulator does nothing afterwards.
func (s *Simulator) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopped = true
	for _, m := range s.members {
		s.kill(m)
	}
	if s.dir == "" {
		return nil
	}
	if err := os.RemoveAll(s.dir); err != nil {
		return fmt.Errorf("removing the etcd data: %w", err)
	}
	return nil
}

// Booted is a host booting a live ISO: nothing of etcd runs there.
func (s *Simulator) Booted(context.Context, inventory.Boot) error { return nil }

// PoweredOff kills the member of the host's Node, as a power cut does; its data stays.
func (s *Simulator) PoweredOff(ctx context.Context, h *inventory.Host) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range s.membersOf(h) {
		ctrl.LoggerFrom(ctx).Info("Host powered off: its etcd member stops", "member", m.name, "host", h.Name)
		s.kill(m)
		m.downAt = time.Now()
	}
	return nil
}

// Deprovisioned kills the member of the host's Node and deletes its data dir (the disks were
// wiped). Its membership stays: only a client removes it.
func (s *Simulator) Deprovisioned(ctx context.Context, h *inventory.Host) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range s.membersOf(h) {
		ctrl.LoggerFrom(ctx).Info("Host wiped: its etcd member stops and loses its data", "member", m.name, "host", h.Name)
		s.kill(m)
		m.downAt = time.Now()
		if err := s.wipe(m); err != nil {
			return err
		}
	}
	return nil
}

// Kill kills the member of node (a crash or a power cut); it restarts once the Node reports
// Ready after this.
func (s *Simulator) Kill(node string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m := s.members[node]; m != nil {
		s.kill(m)
	}
}

// KillHost kills the member of the host's Node (see Kill).
func (s *Simulator) KillHost(h *inventory.Host) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range s.membersOf(h) {
		s.kill(m)
		m.downAt = time.Now()
	}
}

// Running tells whether the member of node has a running process.
func (s *Simulator) Running(node string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.members[node]
	return m != nil && m.running()
}

// membersOf returns the members on the host's Nodes (matched by system UUID, or by hostname).
func (s *Simulator) membersOf(h *inventory.Host) []*member {
	var ms []*member
	for _, m := range s.members {
		if m.systemUUID != "" && strings.EqualFold(m.systemUUID, h.SystemUUID) || m.systemUUID == "" && m.name == h.Hostname {
			ms = append(ms, m)
		}
	}
	return ms
}

func (s *Simulator) wipe(m *member) error {
	if err := os.RemoveAll(m.dataDir); err != nil {
		return fmt.Errorf("wiping the data of member %s: %w", m.name, err)
	}
	m.hasData = false
	return nil
}

// Connect returns a client whose only endpoint is the member of node (the control-plane
// provider's etcd.Connector). workload is not used: the lab has one workload cluster.
func (s *Simulator) Connect(ctx context.Context, _ *rest.Config, node string) (*clientv3.Client, error) {
	s.mu.Lock()
	m := s.members[node]
	running := m != nil && m.running()
	var endpoint string
	if m != nil {
		endpoint = m.clientURL
	}
	s.mu.Unlock()
	if !running {
		// What a port-forward to a pod whose etcd does not listen gets.
		return nil, fmt.Errorf("connecting to the etcd member of node %s: connection refused", node)
	}
	return newClient(ctx, endpoint)
}

func newClient(ctx context.Context, endpoints ...string) (*clientv3.Client, error) {
	c, err := clientv3.New(clientv3.Config{
		Endpoints: endpoints, DialTimeout: 2 * time.Second, Context: ctx,
		Logger: zap.NewNop(),
	})
	if err != nil {
		return nil, fmt.Errorf("creating an etcd client: %w", err)
	}
	return c, nil
}

// Members returns the members of the cluster as etcd lists them, with their health and the
// leader. When no member answers, the last membership read, all unhealthy.
func (s *Simulator) Members(ctx context.Context) ([]Member, error) {
	members, _, err := s.sample(ctx)
	return members, err
}

// sample reads the membership (serializable, from any running member) and checks each member's
// health. listed is false when no member answered (then members is the last membership known).
func (s *Simulator) sample(ctx context.Context) (members []Member, listed bool, err error) {
	s.mu.Lock()
	var endpoints []string
	for _, m := range s.members {
		if m.running() {
			endpoints = append(endpoints, m.clientURL)
		}
	}
	last := slices.Clone(s.last)
	s.mu.Unlock()
	sort.Strings(endpoints)

	var list *clientv3.MemberListResponse
	var errs []error
	for _, ep := range endpoints {
		if list, err = memberList(ctx, ep); err == nil {
			break
		}
		errs = append(errs, err)
		list = nil
	}
	if list == nil {
		for i := range last {
			last[i].Healthy, last[i].IsLeader = false, false
		}
		s.mu.Lock()
		s.markAlive(last)
		s.mu.Unlock()
		if len(endpoints) == 0 && len(last) == 0 {
			return nil, false, nil
		}
		return last, false, fmt.Errorf("listing the etcd members: no member answered: %w", errors.Join(errs...))
	}
	members = make([]Member, len(list.Members))
	var wg sync.WaitGroup
	for i, pm := range list.Members {
		members[i] = Member{Name: pm.Name, ID: pm.ID, IsLearner: pm.IsLearner}
		if len(pm.PeerURLs) > 0 {
			members[i].PeerURL = pm.PeerURLs[0]
		}
		if len(pm.ClientURLs) == 0 {
			continue // not started
		}
		members[i].ClientURL = pm.ClientURLs[0]
		wg.Add(1)
		go func() {
			defer wg.Done()
			members[i].Healthy, members[i].IsLeader = checkHealth(ctx, members[i])
		}()
	}
	wg.Wait()
	sort.Slice(members, func(i, j int) bool { return members[i].Name < members[j].Name })
	s.mu.Lock()
	s.markAlive(members)
	s.last = slices.Clone(members)
	if votingHealthy(members) >= 3 {
		s.bootstrapComplete = true
	}
	s.mu.Unlock()
	return members, true, nil
}

// markAlive sets each member's Alive from its process. Called with s.mu held.
func (s *Simulator) markAlive(members []Member) {
	for i := range members {
		members[i].Alive = false
		for _, m := range s.members {
			if m.peerURL == members[i].PeerURL {
				members[i].Alive = m.running()
			}
		}
	}
}

func memberList(ctx context.Context, endpoint string) (*clientv3.MemberListResponse, error) {
	c, err := newClient(ctx, endpoint)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	list, err := c.MemberList(ctx, clientv3.WithSerializable())
	if err != nil {
		return nil, fmt.Errorf("listing the members through %s: %w", endpoint, err)
	}
	return list, nil
}

// checkHealth asks the member itself, as CEO's checkSingleMemberHealth (pkg/etcdcli/health.go)
// does: a voting member must serve a linearizable read (it has a leader and quorum), a learner
// (which serves no linearizable read) a serializable one. isLeader comes from its Status.
func checkHealth(ctx context.Context, m Member) (healthy, isLeader bool) {
	c, err := newClient(ctx, m.ClientURL)
	if err != nil {
		return false, false
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, 700*time.Millisecond)
	defer cancel()
	var opts []clientv3.OpOption
	if m.IsLearner {
		opts = append(opts, clientv3.WithSerializable())
	}
	if _, err := c.Get(ctx, "health", opts...); err != nil {
		return false, false
	}
	st, err := c.Status(ctx, m.ClientURL)
	if err != nil {
		return true, false
	}
	return true, st.Leader == m.ID && st.Leader != 0
}

// controlPlaneNodes lists the control-plane Nodes the simulator serves: masters, and the arbiter
// of two-node OpenShift, whose etcd member votes like the others (cluster-etcd-operator targets
// the arbiter nodes beside the masters in the HighlyAvailableArbiter topology: its
// ceohelpers.ArbiterNodeLabelSelectorString, "node-role.kubernetes.io/arbiter").
func (s *Simulator) controlPlaneNodes(ctx context.Context) (map[string]*corev1.Node, error) {
	nodes := map[string]*corev1.Node{}
	for _, role := range []string{MasterLabel, ArbiterLabel} {
		list := &corev1.NodeList{}
		// One selector: HasLabels and MatchingLabelsSelector each replace the list's label selector.
		req, err := labels.NewRequirement(role, selection.Exists, nil)
		if err != nil {
			return nil, fmt.Errorf("selecting control-plane Nodes: %w", err)
		}
		if err := s.cache.List(ctx, list, client.MatchingLabelsSelector{Selector: s.Selector.DeepCopySelector().Add(*req)}); err != nil {
			return nil, fmt.Errorf("listing the control-plane Nodes: %w", err)
		}
		for i := range list.Items {
			nodes[list.Items[i].Name] = &list.Items[i]
		}
	}
	return nodes, nil
}

// readySince tells whether the Node is Ready and since when its kubelet last posted it.
func readySince(n *corev1.Node) (bool, time.Time) {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			t := c.LastHeartbeatTime.Time
			if c.LastTransitionTime.After(t) {
				t = c.LastTransitionTime.Time
			}
			return c.Status == corev1.ConditionTrue, t
		}
	}
	return false, time.Time{}
}

// reconcile is one sync of CEO's controllers over the whole cluster: start the members whose
// Nodes are Ready, add at most one new member, promote learners, report.
func (s *Simulator) reconcile(ctx context.Context, _ reconcile.Request) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	nodes, err := s.controlPlaneNodes(ctx)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !s.configured {
		if err := s.ensureOperatorConfig(ctx); err != nil {
			log.V(1).Info("No etcd operator config yet", "error", err.Error())
		} else {
			s.configured = true
		}
	}
	creds, err := s.fencingCredentials(ctx, nodes)
	if err != nil {
		return ctrl.Result{}, err
	}
	if creds != nil && s.pacemaker(ctx, creds) {
		return ctrl.Result{RequeueAfter: s.Resync}, nil
	}
	sampled, listed, sampleErr := s.sample(ctx)
	if sampleErr != nil {
		log.V(1).Info("Sampling the etcd members", "error", sampleErr.Error())
	}
	joinErrs := s.ensureMembers(ctx, nodes, sampled, listed)
	s.promoteLearners(ctx, sampled)
	if err := s.report(ctx, nodes, sampled, listed, joinErrs); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: s.Resync}, nil
}

// votingHealthy counts the healthy voting members.
func votingHealthy(members []Member) int {
	n := 0
	for _, m := range members {
		if m.Healthy && !m.IsLearner {
			n++
		}
	}
	return n
}

// ensureMembers starts or adds the member of every Ready control-plane Node, and returns the
// errors of the members that could not be added, by node.
func (s *Simulator) ensureMembers(ctx context.Context, nodes map[string]*corev1.Node, sampled []Member, listed bool) map[string]string {
	log := ctrl.LoggerFrom(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return nil
	}
	names := make([]string, 0, len(nodes))
	for name := range nodes {
		names = append(names, name)
	}
	sort.Strings(names)
	added := false
	for _, name := range names {
		node := nodes[name]
		if !node.DeletionTimestamp.IsZero() {
			continue // CEO skips deleting Nodes
		}
		m, err := s.memberFor(name)
		if err != nil {
			log.Error(err, "Preparing an etcd member", "node", name)
			continue
		}
		m.systemUUID = node.Status.NodeInfo.SystemUUID
		ready, since := readySince(node)
		if m.running() || !ready {
			continue
		}
		if !m.downAt.IsZero() && since.Before(m.downAt.Truncate(time.Second)) {
			// Its host is off or wiped: no kubelet runs the static pod there until it posts
			// again (heartbeats are stored to the second).
			continue
		}
		if why := s.dataGone(m); why != "" {
			log.Info("The data dir of an etcd member is gone: it starts without data", "node", name, "why", why)
			if err := s.wipe(m); err != nil {
				log.Error(err, "Wiping a member whose data is gone")
				continue
			}
		}
		inList := slices.IndexFunc(sampled, func(x Member) bool { return x.Name == name || x.PeerURL == m.peerURL }) >= 0
		if m.hasData && listed && !inList {
			// Its member was removed (etcd then stops the process): a fresh one is added as
			// for a new Node, as CEO does for a control-plane Node that is not a member.
			log.Info("The member of a Ready control-plane Node was removed: it will be added again", "node", name)
			if err := s.wipe(m); err != nil {
				log.Error(err, "Wiping a removed member")
				continue
			}
		}
		if m.hasData {
			// The static pod restarts with the data it has, once the kubelet runs again.
			// Heartbeats are stored to the second: one in the second the process stopped counts
			// as after it (as for downAt above); otherwise a kubelet that posts again within
			// that second would never restart it.
			restart := !since.Before(m.stoppedAt.Truncate(time.Second))
			if m.crashed {
				// It exited on its own while its kubelet runs: the kubelet restarts it.
				restart = time.Since(m.stoppedAt) >= crashBackoff(m.crashes)
			}
			if restart {
				log.Info("Restarting an etcd member from its data dir", "member", name, "crashes", m.crashes)
				if err := s.start(m, initialCluster(m, sampled, listed), "existing"); err != nil {
					log.Error(err, "Restarting an etcd member")
				}
			}
			continue
		}
		if !s.bootstrapped {
			log.Info("Starting a new etcd cluster", "member", name)
			if err := s.start(m, []string{name + "=" + m.peerURL}, "new"); err != nil {
				m.joinError = err.Error()
				continue
			}
			s.bootstrapped = true
			continue
		}
		if added || slices.ContainsFunc(sampled, func(x Member) bool { return x.IsLearner }) {
			continue // one learner at a time (etcd refuses a second one: "too many learner members")
		}
		// ClusterMemberController.reconcileMembers (pkg/operator/clustermembercontroller/
		// clustermembercontroller.go) adds nothing while a member is unhealthy (OCPBUGS-14296).
		// A Node whose old member (same name and peer URL) still exists is tried anyway: in a
		// real cluster its etcd pod then crash-loops; here MemberAddAsLearner reports the
		// conflict as etcd does, and it is retried on every sync.
		if !inList && slices.ContainsFunc(sampled, func(x Member) bool { return !x.Healthy }) {
			m.joinError = ""
			continue
		}
		if !inList {
			// A node the membership does not know changes etcd-endpoints and needs a pod of
			// its own: a new revision, which the scaling gate holds back (scaling.go). A node
			// whose member exists (same name and peer URL) runs the current revision.
			why, err := s.unsafeToScale(ctx, nodes, sampled)
			if err != nil {
				log.Error(err, "Checking whether etcd may scale")
				continue
			}
			if why != "" {
				m.joinError = why
				continue
			}
			if why, err := s.machineAPIIgnores(ctx, node); err != nil || why != "" {
				if err != nil {
					log.Error(err, "Checking Machine API")
					continue
				}
				m.joinError = why
				continue
			}
		}
		added = true
		if err := s.join(ctx, m, sampled); err != nil {
			m.joinError = err.Error()
			log.Info("Could not add an etcd member", "member", name, "error", m.joinError)
			continue
		}
		m.joinError = ""
	}
	errs := map[string]string{}
	for name, m := range s.members {
		if m.joinError != "" && nodes[name] != nil && !m.running() {
			errs[name] = m.joinError
		}
	}
	return errs
}

// initialCluster is the --initial-cluster a restarted member gets. etcd reads it only when the
// data dir holds no member yet (a learner that exited before it joined): as CEO's
// discover-etcd-initial-cluster does in the pod, it is the current membership, the member
// itself named; without one, the member alone.
func initialCluster(m *member, sampled []Member, listed bool) []string {
	own := []string{m.name + "=" + m.peerURL}
	if !listed {
		return own
	}
	var out []string
	for _, x := range sampled {
		switch {
		case x.PeerURL == m.peerURL:
			out = append(out, own[0])
		case x.Name != "" && x.PeerURL != "":
			out = append(out, x.Name+"="+x.PeerURL)
		}
	}
	if !slices.Contains(out, own[0]) {
		return own
	}
	return out
}

// memberFor returns the member of node, giving it URLs and a data dir the first time.
func (s *Simulator) memberFor(node string) (*member, error) {
	if m := s.members[node]; m != nil {
		return m, nil
	}
	clientURL, err := freeURL()
	if err != nil {
		return nil, err
	}
	peerURL, err := freeURL()
	if err != nil {
		return nil, err
	}
	m := &member{name: node, clientURL: clientURL, peerURL: peerURL, dataDir: filepath.Join(s.dir, node+".etcd")}
	s.members[node] = m
	return m, nil
}

// join adds m as a learner through the running members, then starts it with
// --initial-cluster-state=existing. Called with s.mu held.
func (s *Simulator) join(ctx context.Context, m *member, sampled []Member) error {
	var endpoints []string
	for _, x := range sampled {
		if x.Healthy && !x.IsLearner {
			endpoints = append(endpoints, x.ClientURL)
		}
	}
	if len(endpoints) == 0 {
		for _, x := range s.members {
			if x.running() {
				endpoints = append(endpoints, x.clientURL)
			}
		}
	}
	if len(endpoints) == 0 {
		return errors.New("failed to add learner member :no etcd member is running")
	}
	c, err := newClient(ctx, endpoints...)
	if err != nil {
		return err
	}
	defer c.Close()
	actx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	resp, err := c.MemberAddAsLearner(actx, []string{m.peerURL})
	if err != nil {
		// CEO's message (clustermembercontroller.go reconcileMembers).
		return fmt.Errorf("failed to add learner member :%w", err)
	}
	initial := make([]string, 0, len(resp.Members))
	for _, x := range resp.Members {
		name := x.Name
		if x.ID == resp.Member.ID {
			name = m.name
		}
		for _, u := range x.PeerURLs {
			initial = append(initial, name+"="+u)
		}
	}
	if err := s.wipe(m); err != nil {
		return err
	}
	ctrl.LoggerFrom(ctx).Info("Added an etcd learner", "member", m.name, "id", fmt.Sprintf("%x", resp.Member.ID))
	return s.start(m, initial, "existing")
}

// promoteLearners promotes every learner, as CEO's ensureEtcdLearnerPromotion does when Machine
// API is not functional (shouldPromote, clustermembercontroller.go). etcd refuses while the
// learner has not caught up with the leader; the next sync tries again.
func (s *Simulator) promoteLearners(ctx context.Context, sampled []Member) {
	var endpoints []string
	var learners []Member
	for _, x := range sampled {
		switch {
		case x.IsLearner && x.Name != "":
			learners = append(learners, x)
		case x.Healthy:
			endpoints = append(endpoints, x.ClientURL)
		}
	}
	if len(learners) == 0 || len(endpoints) == 0 {
		return
	}
	c, err := newClient(ctx, endpoints...)
	if err != nil {
		return
	}
	defer c.Close()
	for _, l := range learners {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := c.MemberPromote(pctx, l.ID)
		cancel()
		if err != nil {
			ctrl.LoggerFrom(ctx).V(1).Info("Learner not promoted yet", "member", l.Name, "error", err.Error())
			continue
		}
		ctrl.LoggerFrom(ctx).Info("Promoted an etcd learner", "member", l.Name)
	}
}

// hostOf returns the host part of a URL.
func hostOf(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	return p.Host
}
