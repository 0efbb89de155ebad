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
	"crypto/sha256"
	_ "embed" // the CRD
	"errors"
	"fmt"
	"sort"
	"strings"

	configv1 "github.com/openshift/api/config/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/testenv"
)

// Where OpenShift reports etcd.
const (
	// Namespace of the etcd static pods.
	Namespace = "openshift-etcd"
	// ClusterOperatorName is the name of CEO's ClusterOperator.
	ClusterOperatorName = "etcd"
	// PodPrefix names a member's pod: etcd-<node>.
	PodPrefix = "etcd-"
)

// CRDFile is the ClusterOperator CRD, relative to the repository root, copied from the pinned
// github.com/openshift/api module (config/v1/0000_00_cluster-version-operator_01_clusteroperator.crd.yaml).
const CRDFile = "test/support/sim/etcd/crds/config.openshift.io_clusteroperators.yaml"

//go:embed crds/config.openshift.io_clusteroperators.yaml
var crdYAML []byte

//go:embed crds/operator.openshift.io_etcds.yaml
var operatorConfigCRDYAML []byte

// InstallCRD creates the ClusterOperator CRD and the etcd operator config's CRD
// (etcds.operator.openshift.io) in the API server cfg reaches (the workload cluster), unless they
// exist, and waits until they are established.
func InstallCRD(ctx context.Context, cfg *rest.Config) error {
	s := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(s); err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		return fmt.Errorf("creating a client: %w", err)
	}
	for _, raw := range [][]byte{crdYAML, operatorConfigCRDYAML} {
		if err := installCRD(ctx, c, raw); err != nil {
			return err
		}
	}
	return nil
}

func installCRD(ctx context.Context, c client.Client, raw []byte) error {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(raw, crd); err != nil {
		return fmt.Errorf("reading a CRD: %w", err)
	}
	return testenv.InstallCRD(ctx, c, crd)
}

// report writes the members' pods and the ClusterOperator.
func (s *Simulator) report(ctx context.Context, nodes map[string]*corev1.Node, sampled []Member, listed bool, joinErrs map[string]string) error {
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return nil
	}
	running := map[string]bool{}
	ours := []string{}
	for name, m := range s.members {
		running[name] = m.running()
		ours = append(ours, name)
	}
	s.mu.Unlock()
	sort.Strings(ours)
	if err := s.ensureNamespace(ctx); err != nil {
		return err
	}
	var errs []error
	for _, name := range ours {
		if nodes[name] == nil {
			// The pod GC force-deletes the pods of a deleted Node; its member stays. Once: the
			// pod is gone from the informer's view afterwards.
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: PodPrefix + name}}
			if err := s.cache.Get(ctx, client.ObjectKeyFromObject(pod), pod); apierrors.IsNotFound(err) {
				continue
			}
			if err := s.client.Delete(ctx, pod, client.GracePeriodSeconds(0)); client.IgnoreNotFound(err) != nil {
				errs = append(errs, fmt.Errorf("deleting pod %s: %w", pod.Name, err))
			}
			continue
		}
		var healthy bool
		for _, x := range sampled {
			if x.Name == name {
				healthy = x.Healthy
			}
		}
		if err := s.ensurePod(ctx, name, running[name], healthy, joinErrs[name]); err != nil {
			errs = append(errs, err)
		}
	}
	if len(ours) > 0 {
		if err := s.ensureClusterOperator(ctx, sampled, listed, joinErrs); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (s *Simulator) ensureNamespace(ctx context.Context) error {
	s.mu.Lock()
	done := s.namespaced
	s.mu.Unlock()
	if done {
		return nil
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace}}
	if err := s.client.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", Namespace, err)
	}
	s.mu.Lock()
	s.namespaced = true
	s.mu.Unlock()
	return nil
}

// containers are the containers of CEO's etcd static pod (bindata/etcd/pod.gotpl.yaml).
var containers = []string{"etcdctl", "etcd", "etcd-metrics", "etcd-readyz", "etcd-rev"}

// ensurePod creates or updates the mirror pod etcd-<node>: Running with its containers started
// while the member's process runs, Ready only while the member is healthy.
func (s *Simulator) ensurePod(ctx context.Context, node string, running, healthy bool, joinErr string) error {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: PodPrefix + node}}
	err := s.cache.Get(ctx, client.ObjectKeyFromObject(pod), pod)
	if apierrors.IsNotFound(err) {
		pod.Labels = map[string]string{"app": "etcd", "etcd": "true", "k8s-app": "etcd", "revision": "1"}
		// A static pod's mirror pod, as the kubelet creates it (pkg/kubelet/pod/mirror_client.go):
		// the config.mirror annotation and the Node as controller owner. Drain (kubectl's and
		// Cluster API's) skips mirror pods; any other pod would be evicted and, with no kubelet
		// here to finish the deletion, block the drain.
		hash := fmt.Sprintf("%x", sha256.Sum256([]byte(node)))[:32]
		pod.Annotations = map[string]string{"kubectl.kubernetes.io/default-container": "etcd",
			corev1.MirrorPodAnnotationKey: hash, "kubernetes.io/config.hash": hash, "kubernetes.io/config.source": "file"}
		n := &corev1.Node{}
		if err := s.client.Get(ctx, client.ObjectKey{Name: node}, n); err == nil {
			pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: n.Name, UID: n.UID, Controller: ptr.To(true)}}
		}
		pod.Spec = corev1.PodSpec{NodeName: node, HostNetwork: true, PriorityClassName: "system-node-critical",
			Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}}}
		for _, c := range containers {
			pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: c, Image: "quay.io/openshift-release-dev/ocp-v4.0-art-dev:etcd"})
		}
		if err := s.client.Create(ctx, pod); apierrors.IsAlreadyExists(err) {
			return nil // created by an earlier sync the informer has not shown yet: the next one writes its status
		} else if err != nil {
			return fmt.Errorf("creating pod %s: %w", pod.Name, err)
		}
	} else if err != nil {
		return fmt.Errorf("reading pod %s: %w", pod.Name, err)
	}

	ready := corev1.ConditionFalse
	if healthy {
		ready = corev1.ConditionTrue
	}
	// The kubelet writes the IP lists and the QoS class beside the IPs (kubelet_pods.go
	// generateAPIPodStatus); the API server would fill them in anyway, and a status without them
	// never equals the stored one, so every sync would write it again.
	status := corev1.PodStatus{Phase: corev1.PodRunning, HostIP: "127.0.0.1", PodIP: "127.0.0.1",
		HostIPs: []corev1.HostIP{{IP: "127.0.0.1"}}, PodIPs: []corev1.PodIP{{IP: "127.0.0.1"}}, QOSClass: corev1.PodQOSBestEffort,
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodInitialized, Status: corev1.ConditionTrue},
			{Type: corev1.PodReady, Status: ready},
			{Type: corev1.ContainersReady, Status: ready},
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
		}}
	if !running {
		status.Conditions[1].Reason, status.Conditions[2].Reason = "ContainersNotReady", "ContainersNotReady"
	}
	for _, c := range containers {
		cs := corev1.ContainerStatus{Name: c, Ready: running, Started: &running, Image: pod.Spec.Containers[0].Image}
		switch {
		case c == "etcd" && joinErr != "":
			cs.Ready, cs.Started = false, ptrTo(false)
			cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: joinErr}
		case c == "etcd" && running:
			cs.Ready = healthy
			cs.State.Running = &corev1.ContainerStateRunning{}
		case running:
			cs.State.Running = &corev1.ContainerStateRunning{}
		default:
			cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}
		}
		status.ContainerStatuses = append(status.ContainerStatuses, cs)
	}
	now := metav1.Now()
	for i := range status.Conditions {
		c := &status.Conditions[i]
		c.LastTransitionTime = now
		for _, old := range pod.Status.Conditions {
			if old.Type == c.Type && old.Status == c.Status {
				c.LastTransitionTime = old.LastTransitionTime
			}
		}
	}
	for i := range status.ContainerStatuses {
		cs := &status.ContainerStatuses[i]
		if cs.State.Running == nil {
			continue
		}
		cs.State.Running.StartedAt = now
		for _, old := range pod.Status.ContainerStatuses {
			if old.Name == cs.Name && old.State.Running != nil {
				cs.State.Running.StartedAt = old.State.Running.StartedAt
			}
		}
	}
	status.StartTime = pod.Status.StartTime
	if status.StartTime == nil {
		status.StartTime = &now
	}
	if apiequality.Semantic.DeepEqual(status, pod.Status) {
		return nil
	}
	pod.Status = status
	if err := s.client.Status().Update(ctx, pod); apierrors.IsConflict(err) {
		return nil // read from an informer that is behind: the next sync reads the newer pod
	} else if err != nil {
		return fmt.Errorf("updating the status of pod %s: %w", pod.Name, err)
	}
	return nil
}

func ptrTo[T any](v T) *T { return &v }

// operatorCondition is one of CEO's operator conditions (etcds.operator.openshift.io/cluster),
// which library-go's status controller folds into the ClusterOperator's.
type operatorCondition struct {
	Type, Reason, Message string
	Status                bool
}

// membersStatus is CEO's memberHealth.Status() (pkg/etcdcli/health.go): "3 members are
// available", or "2 of 3 members are available, NAME is unhealthy" (or "HOST has not started").
func membersStatus(ms []Member) string {
	healthy := 0
	for _, m := range ms {
		if m.Healthy {
			healthy++
		}
	}
	if healthy == len(ms) {
		return fmt.Sprintf("%d members are available", len(ms))
	}
	status := []string{fmt.Sprintf("%d of %d members are available", healthy, len(ms))}
	for _, m := range ms {
		switch {
		case m.Name == "":
			status = append(status, hostOf(m.PeerURL)+" has not started")
		case !m.Healthy:
			status = append(status, m.Name+" is unhealthy")
		}
	}
	return strings.Join(status, ", ")
}

// operatorConditions are the conditions of CEO's EtcdMembersController
// (pkg/operator/etcdmemberscontroller/etcdmemberscontroller.go reportEtcdMembers) and of its
// ClusterMemberController (whose sync errors become ClusterMemberControllerDegraded, reason
// Error, through library-go's WithSyncDegradedOnError).
func operatorConditions(ms []Member, listed bool, joinErrs map[string]string) []operatorCondition {
	status := membersStatus(ms)
	unhealthy, unstarted, healthy := 0, 0, 0
	for _, m := range ms {
		if !m.Healthy {
			unhealthy++
		} else {
			healthy++
		}
		if m.Name == "" {
			unstarted++
		}
	}
	var conds []operatorCondition
	if !listed {
		// No member answers: the member list call fails and the controller degrades.
		conds = append(conds, operatorCondition{Type: "EtcdMembersControllerDegraded", Status: true,
			Reason: "ErrorUpdatingReportEtcdMembers", Message: "etcdserver: request timed out"})
	}
	if unhealthy > 0 {
		conds = append(conds, operatorCondition{Type: "EtcdMembersDegraded", Status: true, Reason: "UnhealthyMembers", Message: status})
	} else {
		conds = append(conds, operatorCondition{Type: "EtcdMembersDegraded", Reason: "AsExpected", Message: "No unhealthy members found"})
	}
	if unstarted > 0 {
		conds = append(conds, operatorCondition{Type: "EtcdMembersProgressing", Status: true, Reason: "MembersNotStarted", Message: status})
	} else {
		conds = append(conds, operatorCondition{Type: "EtcdMembersProgressing", Reason: "AsExpected", Message: "No unstarted etcd members found"})
	}
	if healthy > len(ms)/2 {
		conds = append(conds, operatorCondition{Type: "EtcdMembersAvailable", Status: true, Reason: "EtcdQuorate", Message: status})
	} else {
		conds = append(conds, operatorCondition{Type: "EtcdMembersAvailable", Reason: "NoQuorum", Message: status})
	}
	if len(joinErrs) > 0 {
		nodes := make([]string, 0, len(joinErrs))
		for n := range joinErrs {
			nodes = append(nodes, n)
		}
		sort.Strings(nodes)
		msgs := make([]string, 0, len(nodes))
		for _, n := range nodes {
			msgs = append(msgs, fmt.Sprintf("%s (node %s)", joinErrs[n], n))
		}
		conds = append(conds, operatorCondition{Type: "ClusterMemberControllerDegraded", Status: true, Reason: "Error", Message: strings.Join(msgs, "\n")})
	} else {
		conds = append(conds, operatorCondition{Type: "ClusterMemberControllerDegraded", Reason: "AsExpected"})
	}
	return conds
}

// union folds the operator conditions whose type ends with suffix into one ClusterOperator
// condition, as library-go's status controller does (pkg/operator/status/condition.go
// unionCondition): for Degraded and Progressing any True one wins, for Available any False one;
// the reason is <Type without suffix>_<Reason> of those, "AsExpected" otherwise, and the message
// lists "<Type>: <Message>".
func union(conds []operatorCondition, suffix string, bad bool) (configv1.ConditionStatus, string, string) {
	var interesting, all []string
	var reasons []string
	for _, c := range conds {
		if !strings.HasSuffix(c.Type, suffix) {
			continue
		}
		line := ""
		if c.Message != "" {
			line = c.Type + ": " + c.Message
			all = append(all, line)
		}
		if c.Status == bad {
			if line != "" {
				interesting = append(interesting, line)
			}
			reasons = append(reasons, strings.TrimSuffix(c.Type, suffix)+"_"+c.Reason)
		}
	}
	good, worse := configv1.ConditionFalse, configv1.ConditionTrue
	if !bad {
		good, worse = configv1.ConditionTrue, configv1.ConditionFalse
	}
	if len(reasons) == 0 {
		return good, "AsExpected", strings.Join(all, "\n")
	}
	return worse, strings.Join(reasons, "::"), strings.Join(interesting, "\n")
}

// ensureClusterOperator creates or updates the ClusterOperator etcd.
func (s *Simulator) ensureClusterOperator(ctx context.Context, ms []Member, listed bool, joinErrs map[string]string) error {
	conds := operatorConditions(ms, listed, joinErrs)
	want := make([]configv1.ClusterOperatorStatusCondition, 0, 4)
	for _, t := range []struct {
		typ    configv1.ClusterStatusConditionType
		suffix string
		bad    bool
	}{
		{configv1.OperatorAvailable, "Available", false},
		{configv1.OperatorProgressing, "Progressing", true},
		{configv1.OperatorDegraded, "Degraded", true},
	} {
		st, reason, msg := union(conds, t.suffix, t.bad)
		want = append(want, configv1.ClusterOperatorStatusCondition{Type: t.typ, Status: st, Reason: reason, Message: msg})
	}
	want = append(want, configv1.ClusterOperatorStatusCondition{Type: configv1.OperatorUpgradeable, Status: configv1.ConditionTrue, Reason: "AsExpected", Message: "All is well"})

	co := &configv1.ClusterOperator{ObjectMeta: metav1.ObjectMeta{Name: ClusterOperatorName}}
	err := s.client.Get(ctx, client.ObjectKeyFromObject(co), co)
	if apierrors.IsNotFound(err) {
		if err := s.client.Create(ctx, co); err != nil {
			return fmt.Errorf("creating ClusterOperator %s: %w", co.Name, err)
		}
	} else if err != nil {
		return fmt.Errorf("reading ClusterOperator %s: %w", co.Name, err)
	}
	now := metav1.Now()
	changed := len(co.Status.Conditions) != len(want)
	for i := range want {
		w := &want[i]
		w.LastTransitionTime = now
		for _, old := range co.Status.Conditions {
			if old.Type != w.Type {
				continue
			}
			if old.Status == w.Status {
				w.LastTransitionTime = old.LastTransitionTime
			}
			if old.Status != w.Status || old.Reason != w.Reason || old.Message != w.Message {
				changed = true
			}
		}
	}
	if !changed {
		return nil
	}
	co.Status.Conditions = want
	co.Status.RelatedObjects = []configv1.ObjectReference{
		{Group: "operator.openshift.io", Resource: "etcds", Name: "cluster"},
		{Resource: "namespaces", Name: Namespace},
	}
	if err := s.client.Status().Update(ctx, co); err != nil {
		return fmt.Errorf("updating the status of ClusterOperator %s: %w", co.Name, err)
	}
	return nil
}
