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

package workload

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// benchNode returns a Node with a status about the size of a real control-plane node's
// (conditions, addresses, capacity, node info), without images.
func benchNode(name string) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
		"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
		"node-role.kubernetes.io/master": "", "node-role.kubernetes.io/control-plane": "",
	}}}
	n.Spec.ProviderID = "metal3://openshift-machine-api/" + name + "/0b5e2b8e-7c6c-4a4e-9f67-8a0b5c0d7a3e"
	now := metav1.Now()
	for _, t := range []corev1.NodeConditionType{corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure} {
		n.Status.Conditions = append(n.Status.Conditions, corev1.NodeCondition{Type: t, Status: corev1.ConditionFalse,
			LastHeartbeatTime: now, LastTransitionTime: now, Reason: "KubeletHasSufficient", Message: "kubelet has sufficient resources"})
	}
	n.Status.Conditions = append(n.Status.Conditions, corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionTrue,
		LastHeartbeatTime: now, LastTransitionTime: now, Reason: "KubeletReady", Message: "kubelet is posting ready status"})
	n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "192.0.2.10"}, {Type: corev1.NodeHostName, Address: name}}
	n.Status.Capacity = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("16"), corev1.ResourceMemory: resource.MustParse("64Gi"), corev1.ResourcePods: resource.MustParse("250")}
	n.Status.Allocatable = n.Status.Capacity
	n.Status.NodeInfo = corev1.NodeSystemInfo{KubeletVersion: "v1.32.5", OSImage: "Red Hat Enterprise Linux CoreOS", ContainerRuntimeVersion: "cri-o://1.32.5",
		KernelVersion: "5.14.0-427.el9.x86_64", OperatingSystem: "linux", Architecture: "amd64"}
	return n
}

// benchClusterVersion returns a ClusterVersion with an installed release in its status.
func benchClusterVersion() *configv1.ClusterVersion {
	cv := clusterVersion()
	now := metav1.Now()
	cv.Status = configv1.ClusterVersionStatus{
		Desired:            configv1.Release{Version: "4.18.1", Image: "quay.io/openshift-release-dev/ocp-release:4.18.1-x86_64"},
		History:            []configv1.UpdateHistory{{State: configv1.CompletedUpdate, StartedTime: now, CompletionTime: &now, Version: "4.18.1", Image: "quay.io/openshift-release-dev/ocp-release:4.18.1-x86_64"}},
		ObservedGeneration: 1,
		VersionHash:        "abc",
		Conditions: []configv1.ClusterOperatorStatusCondition{
			{Type: configv1.OperatorAvailable, Status: configv1.ConditionTrue, LastTransitionTime: now, Message: "Done applying 4.18.1"},
			{Type: configv1.OperatorProgressing, Status: configv1.ConditionFalse, LastTransitionTime: now},
			{Type: configv1.OperatorDegraded, Status: configv1.ConditionFalse, LastTransitionTime: now},
		},
	}
	return cv
}

// seed creates a cluster's Node and ClusterVersion, with their statuses, through its client.
func seed(tb testing.TB, ctx context.Context, c client.Client) {
	tb.Helper()
	n := benchNode("master-0")
	status := n.Status
	if err := c.Create(ctx, n); err != nil {
		tb.Fatal(err)
	}
	n.Status = status
	if err := c.Status().Update(ctx, n); err != nil {
		tb.Fatal(err)
	}
	cv := benchClusterVersion()
	cvStatus := cv.Status
	if err := c.Create(ctx, cv); err != nil {
		tb.Fatal(err)
	}
	cv.Status = cvStatus
	if err := c.Status().Update(ctx, cv); err != nil {
		tb.Fatal(err)
	}
}

// heapInUse returns the heap in use after a garbage collection.
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// BenchmarkAddCluster adds clusters, each with a Node and a ClusterVersion, and reports the
// heap and the goroutines each one keeps (run it with -benchtime=500x for a fleet of 500).
func BenchmarkAddCluster(b *testing.B) {
	ctx := context.Background()
	s := newServer(b)
	before, goroutines := heapInUse(), runtime.NumGoroutine()
	i := 0
	for b.Loop() {
		name := fmt.Sprintf("c%d", i)
		i++
		if _, err := s.AddCluster(name); err != nil {
			b.Fatal(err)
		}
		seed(b, ctx, s.Client(name))
	}
	b.StopTimer()
	b.ReportMetric(float64(heapInUse()-before)/float64(i), "heap-B/cluster")
	b.ReportMetric(float64(runtime.NumGoroutine()-goroutines)/float64(i), "goroutines/cluster")
}

// benchClient returns a controller-runtime client of a cluster that needs no discovery.
func benchClient(b *testing.B, cfg *rest.Config) client.Client {
	b.Helper()
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(corev1.SchemeGroupVersion.WithKind("Node"), meta.RESTScopeRoot)
	mapper.Add(configv1.GroupVersion.WithKind("ClusterVersion"), meta.RESTScopeRoot)
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = -1, 0 // No client-side rate limit.
	c, err := client.New(cfg, client.Options{Scheme: testScheme(b), Mapper: mapper})
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// BenchmarkGet gets a cluster's Node over HTTP with controller-runtime's client (protobuf, as it
// gets built-in kinds), from as many goroutines as GOMAXPROCS, and reports requests per second.
func BenchmarkGet(b *testing.B) {
	ctx := context.Background()
	s := newServer(b)
	cfg := addCluster(b, s, "a", "bench/v1")
	c := benchClient(b, cfg)
	seed(b, ctx, c)
	start := time.Now()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		n := &corev1.Node{}
		for pb.Next() {
			if err := c.Get(ctx, client.ObjectKey{Name: "master-0"}, n); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
}

// BenchmarkUpdateNodeStatus puts a Node's status over HTTP, as the simulated kubelet does, and
// reports requests per second: a write costs more than a read (managed fields, the watch
// events).
func BenchmarkUpdateNodeStatus(b *testing.B) {
	ctx := context.Background()
	s := newServer(b)
	cfg := addCluster(b, s, "a", "bench/v1")
	c := benchClient(b, cfg)
	seed(b, ctx, c)
	n := &corev1.Node{}
	if err := c.Get(ctx, client.ObjectKey{Name: "master-0"}, n); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	for b.Loop() {
		n.Status.Conditions[3].LastHeartbeatTime = metav1.Now()
		if err := c.Status().Update(ctx, n); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
}
