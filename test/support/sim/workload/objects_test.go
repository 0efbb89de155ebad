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
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	configv1 "github.com/openshift/api/config/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// objectsCase is a case of TestObjects, run against a cluster of its own.
type objectsCase struct {
	name string
	run  func(e *env)
}

// TestObjects checks reads and writes of objects with controller-runtime's client (and
// client-go's where it matters) against a cluster, as the fleet's clients make them.
func TestObjects(t *testing.T) {
	s := newServer(t)
	cases := slices.Concat(createCases(), listCases(), updateCases(), patchCases(), applyCases(), deleteCases(), clientCases())
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := addCluster(t, s, fmt.Sprintf("objects-%d", i), "objects-test/v1")
			tc.run(&env{t: t, cfg: cfg, c: newClient(t, cfg), cs: newClientset(t, cfg)})
		})
	}
}

func node(name string, labels map[string]string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

func clusterVersion() *configv1.ClusterVersion {
	return &configv1.ClusterVersion{
		ObjectMeta: metav1.ObjectMeta{Name: "version"},
		Spec:       configv1.ClusterVersionSpec{ClusterID: "0b5e2b8e-7c6c-4a4e-9f67-8a0b5c0d7a3e", Channel: "stable-4.18"},
	}
}

func createCases() []objectsCase {
	return []objectsCase{
		{"create sets uid, creationTimestamp, resourceVersion and generation", func(e *env) {
			t, ctx, c := e.t, e.t.Context(), e.c
			n := node("n", map[string]string{"role": "worker"})
			if err := c.Create(ctx, n); err != nil {
				t.Fatal(err)
			}
			if n.UID == "" || n.CreationTimestamp.IsZero() || n.Generation != 0 {
				t.Errorf("node: uid %q, creationTimestamp %v, generation %d; want a uid, a time, 0", n.UID, n.CreationTimestamp, n.Generation)
			}
			cv := clusterVersion()
			if err := c.Create(ctx, cv); err != nil {
				t.Fatal(err)
			}
			if cv.Generation != 1 {
				t.Errorf("cluster version: generation %d, want 1", cv.Generation)
			}
			if mustRV(t, cv.ResourceVersion) <= mustRV(t, n.ResourceVersion) {
				t.Errorf("resourceVersions %s then %s do not increase", n.ResourceVersion, cv.ResourceVersion)
			}
			got := &corev1.Node{}
			if err := c.Get(ctx, client.ObjectKey{Name: "n"}, got); err != nil {
				t.Fatal(err)
			}
			if got.UID != n.UID || got.ResourceVersion != n.ResourceVersion || got.Labels["role"] != "worker" {
				t.Errorf("get: %+v, want %+v", got.ObjectMeta, n.ObjectMeta)
			}
			if err := c.Create(ctx, node("n", nil)); !apierrors.IsAlreadyExists(err) {
				t.Errorf("create again: got %v, want already exists", err)
			}
		}},
		{"create validates metadata and needs the namespace", func(e *env) {
			t, ctx, c := e.t, e.t.Context(), e.c
			namespaces := &corev1.NamespaceList{}
			if err := c.List(ctx, namespaces); err != nil {
				t.Fatal(err)
			}
			if got, want := names(namespaces.Items), []string{"default", "kube-node-lease", "kube-public", "kube-system"}; !slices.Equal(got, want) {
				t.Errorf("namespaces %v, want %v", got, want)
			}
			if phase := namespaces.Items[0].Status.Phase; phase != corev1.NamespaceActive {
				t.Errorf("namespace default is %q", phase)
			}
			if err := c.Create(ctx, node("Not_A_Name", nil)); !apierrors.IsInvalid(err) {
				t.Errorf("bad name: got %v, want invalid", err)
			}
			if err := c.Create(ctx, node("n", map[string]string{"bad": "a b"})); !apierrors.IsInvalid(err) {
				t.Errorf("bad label: got %v, want invalid", err)
			}
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "missing", Name: "cm"}}
			if err := c.Create(ctx, cm); !apierrors.IsNotFound(err) {
				t.Errorf("in a missing namespace: got %v, want not found", err)
			}
			cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceSystem, GenerateName: "cm-"}}
			if err := c.Create(ctx, cm); err != nil || !strings.HasPrefix(cm.Name, "cm-") || len(cm.Name) <= len("cm-") {
				t.Errorf("generateName: got %q (%v)", cm.Name, err)
			}
		}},
		{"custom resources lose their status on create", func(e *env) {
			t, ctx, c := e.t, e.t.Context(), e.c
			cv := clusterVersion()
			cv.Status.Desired.Version = "4.18.1"
			if err := c.Create(ctx, cv); err != nil {
				t.Fatal(err)
			}
			got := &configv1.ClusterVersion{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(cv), got); err != nil {
				t.Fatal(err)
			}
			if got.Status.Desired.Version != "" {
				t.Errorf("status.desired.version %q, want none", got.Status.Desired.Version)
			}
		}},
	}
}

func listCases() []objectsCase {
	return []objectsCase{
		{"list with label and field selectors", func(e *env) {
			t, ctx, c := e.t, e.t.Context(), e.c
			for i := range 5 {
				n := node(fmt.Sprintf("n%d", i), nil)
				if i%2 == 0 {
					n.Labels = map[string]string{"role": "worker"}
				}
				n.Spec.Unschedulable = i == 1
				if err := c.Create(ctx, n); err != nil {
					t.Fatal(err)
				}
			}
			for _, p := range []*corev1.Pod{
				{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "p1"}, Spec: corev1.PodSpec{NodeName: "n1"}},
				{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "p2"}, Spec: corev1.PodSpec{NodeName: "n2"}},
				{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "p3"}, Spec: corev1.PodSpec{NodeName: "n1"}},
			} {
				if err := c.Create(ctx, p); err != nil {
					t.Fatal(err)
				}
			}
			noRole, err := labels.Parse("!role")
			if err != nil {
				t.Fatal(err)
			}
			nodes := &corev1.NodeList{}
			for _, tc := range []struct {
				opts []client.ListOption
				want []string
			}{
				{nil, []string{"n0", "n1", "n2", "n3", "n4"}},
				{[]client.ListOption{client.MatchingLabels{"role": "worker"}}, []string{"n0", "n2", "n4"}},
				{[]client.ListOption{client.MatchingLabelsSelector{Selector: noRole}}, []string{"n1", "n3"}},
				{[]client.ListOption{client.MatchingFields{"metadata.name": "n3"}}, []string{"n3"}},
				{[]client.ListOption{client.MatchingFields{"spec.unschedulable": "true"}}, []string{"n1"}},
				{[]client.ListOption{client.MatchingFields{"spec.unschedulable": "false"}, client.MatchingLabels{"role": "worker"}}, []string{"n0", "n2", "n4"}},
			} {
				if err := c.List(ctx, nodes, tc.opts...); err != nil {
					t.Fatal(err)
				}
				if got := names(nodes.Items); !slices.Equal(got, tc.want) {
					t.Errorf("nodes %v: got %v, want %v", tc.opts, got, tc.want)
				}
			}
			if mustRV(t, nodes.ResourceVersion) < mustRV(t, nodes.Items[0].ResourceVersion) {
				t.Errorf("list resourceVersion %s is older than an item's", nodes.ResourceVersion)
			}
			err = c.List(ctx, nodes, client.MatchingFields{"spec.providerID": "x"})
			if !apierrors.IsBadRequest(err) {
				t.Errorf("unsupported field: got %v, want bad request", err)
			}
			// As Cluster API's drain lists the pods of a node.
			pods := &corev1.PodList{}
			if err := c.List(ctx, pods, client.MatchingFields{"spec.nodeName": "n1"}, client.Limit(100)); err != nil {
				t.Fatal(err)
			}
			if got := names(pods.Items); !slices.Equal(got, []string{"p1", "p3"}) {
				t.Errorf("pods of n1: %v, want p1 and p3", got)
			}
			if err := c.List(ctx, pods, client.InNamespace("kube-system")); err != nil || !slices.Equal(names(pods.Items), []string{"p2", "p3"}) {
				t.Errorf("pods of kube-system: %v (%v), want p2 and p3", names(pods.Items), err)
			}
		}},
		{"list in pages", func(e *env) {
			t, ctx, c := e.t, e.t.Context(), e.c
			for i := range 5 {
				if err := c.Create(ctx, node(fmt.Sprintf("n%d", i), nil)); err != nil {
					t.Fatal(err)
				}
			}
			var all []string
			var rv string
			page := &corev1.NodeList{}
			for i := 0; ; i++ {
				if err := c.List(ctx, page, client.Limit(2), client.Continue(page.Continue)); err != nil {
					t.Fatal(err)
				}
				all = append(all, names(page.Items)...)
				if rv == "" {
					rv = page.ResourceVersion
					if page.RemainingItemCount == nil || *page.RemainingItemCount != 3 {
						t.Errorf("first page: remainingItemCount %v, want 3", page.RemainingItemCount)
					}
				} else if page.ResourceVersion != rv {
					t.Errorf("page %d: resourceVersion %s, want the first page's %s", i, page.ResourceVersion, rv)
				}
				if page.Continue == "" || i > 5 {
					break
				}
			}
			if want := []string{"n0", "n1", "n2", "n3", "n4"}; !slices.Equal(all, want) {
				t.Errorf("pages: %v, want %v", all, want)
			}
			if err := c.List(ctx, page, client.Continue("not a token")); !apierrors.IsBadRequest(err) {
				t.Errorf("bad continue: got %v, want bad request", err)
			}
		}},
	}
}

func updateCases() []objectsCase {
	return []objectsCase{
		{"update, and a conflict on a stale resourceVersion", func(e *env) {
			t, ctx, c := e.t, e.t.Context(), e.c
			n := node("n", nil)
			if err := c.Create(ctx, n); err != nil {
				t.Fatal(err)
			}
			stale := n.DeepCopy()
			n.Labels = map[string]string{"a": "b"}
			if err := c.Update(ctx, n); err != nil {
				t.Fatal(err)
			}
			if n.ResourceVersion == stale.ResourceVersion {
				t.Error("the update did not change the resourceVersion")
			}
			stale.Labels = map[string]string{"c": "d"}
			if err := c.Update(ctx, stale); !apierrors.IsConflict(err) {
				t.Errorf("stale update: got %v, want a conflict", err)
			}
			// A write that changes nothing keeps the resourceVersion, as kube-apiserver's storage
			// does not store it.
			rv := n.ResourceVersion
			if err := c.Update(ctx, n); err != nil || n.ResourceVersion != rv {
				t.Errorf("an update that changes nothing: resourceVersion %s, want %s (%v)", n.ResourceVersion, rv, err)
			}
			if err := c.Patch(ctx, n, client.MergeFrom(n.DeepCopy())); err != nil || n.ResourceVersion != rv {
				t.Errorf("an empty patch: resourceVersion %s, want %s (%v)", n.ResourceVersion, rv, err)
			}
			cv := clusterVersion()
			if err := c.Create(ctx, cv); err != nil {
				t.Fatal(err)
			}
			cv.Spec.Channel = "fast-4.18"
			if err := c.Update(ctx, cv); err != nil {
				t.Fatal(err)
			}
			if cv.Generation != 2 {
				t.Errorf("generation %d after a spec change, want 2", cv.Generation)
			}
			cv.Labels = map[string]string{"a": "b"}
			if err := c.Update(ctx, cv); err != nil || cv.Generation != 2 {
				t.Errorf("generation %d after a metadata change (%v), want 2", cv.Generation, err)
			}
			cv.ResourceVersion = ""
			if err := c.Update(ctx, cv); !apierrors.IsInvalid(err) {
				t.Errorf("unconditional update of a custom resource: got %v, want invalid", err)
			}
			unconditional := node("n", map[string]string{"e": "f"})
			if err := c.Update(ctx, unconditional); err != nil || unconditional.UID != n.UID {
				t.Errorf("unconditional update of a node: %v, uid %q", err, unconditional.UID)
			}
		}},
		{"status subresource", func(e *env) {
			t, ctx, c := e.t, e.t.Context(), e.c
			n := node("n", nil)
			if err := c.Create(ctx, n); err != nil {
				t.Fatal(err)
			}
			// A status update (as the kubelet's) changes only the status.
			n.Spec.Unschedulable = true
			n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
			if err := c.Status().Update(ctx, n); err != nil {
				t.Fatal(err)
			}
			got := &corev1.Node{}
			if err := c.Get(ctx, client.ObjectKey{Name: "n"}, got); err != nil {
				t.Fatal(err)
			}
			if got.Spec.Unschedulable || len(got.Status.Conditions) != 1 {
				t.Errorf("after a status update: unschedulable %v, conditions %v; want false and Ready", got.Spec.Unschedulable, got.Status.Conditions)
			}
			// An update of the object does not change its status.
			got.Status.Conditions = nil
			got.Labels = map[string]string{"a": "b"}
			if err := c.Update(ctx, got); err != nil {
				t.Fatal(err)
			}
			if len(got.Status.Conditions) != 1 || got.Labels["a"] != "b" {
				t.Errorf("after an update: conditions %v, labels %v; want Ready kept and the label", got.Status.Conditions, got.Labels)
			}

			// The simulator's ClusterVersion: created, then its status put.
			cv := clusterVersion()
			if err := c.Create(ctx, cv); err != nil {
				t.Fatal(err)
			}
			cv.Status.Desired.Version = "4.18.1"
			cv.Status.ObservedGeneration = cv.Generation
			if err := c.Status().Update(ctx, cv); err != nil {
				t.Fatal(err)
			}
			if cv.Generation != 1 || cv.Status.Desired.Version != "4.18.1" {
				t.Errorf("after a status update: generation %d, desired %q", cv.Generation, cv.Status.Desired.Version)
			}
			before := cv.DeepCopy()
			cv.Status.Desired.Version = "4.18.2"
			if err := c.Status().Patch(ctx, cv, client.MergeFrom(before)); err != nil {
				t.Fatal(err)
			}
			if cv.Status.Desired.Version != "4.18.2" {
				t.Errorf("after a status patch: desired %q", cv.Status.Desired.Version)
			}
			if err := c.Status().Update(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "s"}}); !apierrors.IsNotFound(err) {
				t.Errorf("status of a kind without one: got %v, want not found", err)
			}
		}},
	}
}

func patchCases() []objectsCase {
	return []objectsCase{
		{"merge patch of a ClusterVersion's spec", func(e *env) {
			t, ctx, c := e.t, e.t.Context(), e.c
			cv := clusterVersion()
			if err := c.Create(ctx, cv); err != nil {
				t.Fatal(err)
			}
			before := cv.DeepCopy()
			cv.Spec.DesiredUpdate = &configv1.Update{Version: "4.18.3", Image: "quay.io/ocp:4.18.3"}
			if err := c.Patch(ctx, cv, client.MergeFrom(before)); err != nil {
				t.Fatal(err)
			}
			got := &configv1.ClusterVersion{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(cv), got); err != nil {
				t.Fatal(err)
			}
			if got.Spec.DesiredUpdate == nil || got.Spec.DesiredUpdate.Version != "4.18.3" || got.Spec.Channel != "stable-4.18" || got.Generation != 2 {
				t.Errorf("after the patch: spec %+v, generation %d", got.Spec, got.Generation)
			}
			if err := c.Patch(ctx, cv, client.StrategicMergeFrom(before)); !apierrors.IsUnsupportedMediaType(err) {
				t.Errorf("strategic merge patch of a custom resource: got %v, want unsupported media type", err)
			}
		}},
		{"strategic merge patch with optimistic lock, as Cluster API patches Nodes", func(e *env) {
			t, ctx, c := e.t, e.t.Context(), e.c
			n := node("n", map[string]string{"kept": "yes"})
			n.Spec.Taints = []corev1.Taint{{Key: "node.cluster.x-k8s.io/uninitialized", Effect: corev1.TaintEffectNoSchedule}}
			if err := c.Create(ctx, n); err != nil {
				t.Fatal(err)
			}
			stale := n.DeepCopy()
			patched := n.DeepCopy()
			patched.Labels["node-role.kubernetes.io/worker"] = ""
			patched.Annotations = map[string]string{"cluster.x-k8s.io/machine": "m"}
			patched.Spec.Taints = nil
			if err := c.Patch(ctx, patched, client.StrategicMergeFrom(n, client.MergeFromWithOptimisticLock{})); err != nil {
				t.Fatal(err)
			}
			if len(patched.Spec.Taints) != 0 || patched.Labels["kept"] != "yes" || patched.Annotations["cluster.x-k8s.io/machine"] != "m" {
				t.Errorf("after the patch: %+v %+v", patched.ObjectMeta, patched.Spec)
			}
			again := stale.DeepCopy()
			again.Labels["other"] = "x"
			if err := c.Patch(ctx, again, client.StrategicMergeFrom(stale, client.MergeFromWithOptimisticLock{})); !apierrors.IsConflict(err) {
				t.Errorf("stale patch: got %v, want a conflict", err)
			}
			// Cordoning, as Cluster API's drain does.
			cordoned := patched.DeepCopy()
			cordoned.Spec.Unschedulable = true
			if err := c.Patch(ctx, cordoned, client.MergeFrom(patched)); err != nil || !cordoned.Spec.Unschedulable {
				t.Errorf("cordon: %v", err)
			}
		}},
		{"JSON patch, and patches that fail", func(e *env) {
			t, ctx, c := e.t, e.t.Context(), e.c
			n := node("n", nil)
			if err := c.Create(ctx, n); err != nil {
				t.Fatal(err)
			}
			patch := client.RawPatch(types.JSONPatchType, []byte(`[{"op":"add","path":"/metadata/labels","value":{"a":"b"}}]`))
			if err := c.Patch(ctx, n, patch); err != nil || n.Labels["a"] != "b" {
				t.Errorf("JSON patch: labels %v (%v)", n.Labels, err)
			}
			failing := client.RawPatch(types.JSONPatchType, []byte(`[{"op":"test","path":"/metadata/labels/a","value":"c"}]`))
			if err := c.Patch(ctx, n, failing); codeOf(err) != http.StatusUnprocessableEntity {
				t.Errorf("failing JSON patch: got %v, want 422", err)
			}
			if err := c.Patch(ctx, node("missing", nil), client.MergeFrom(node("missing", nil))); !apierrors.IsNotFound(err) {
				t.Errorf("patch of a missing object: got %v, want not found", err)
			}
		}},
	}
}

func applyCases() []objectsCase {
	return []objectsCase{
		{"server-side apply", func(e *env) {
			t, ctx, c := e.t, e.t.Context(), e.c
			typed := func(labels map[string]string) *corev1.Node {
				n := node("n", labels)
				n.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Node"))
				return n
			}
			// An apply creates the object.
			n := typed(map[string]string{"x": "1", "y": "1"})
			if err := c.Patch(ctx, n, client.Apply, client.FieldOwner("capi"), client.ForceOwnership); err != nil { //nolint:staticcheck // The patch type many controllers still use.
				t.Fatal(err)
			}
			if n.UID == "" || n.Labels["x"] != "1" {
				t.Fatalf("after the first apply: %+v", n.ObjectMeta)
			}
			nodes := &corev1.NodeList{}
			if err := c.List(ctx, nodes); err != nil || !slices.Equal(names(nodes.Items), []string{"n"}) {
				t.Errorf("nodes after the first apply: %v (%v)", names(nodes.Items), err)
			}
			// Another manager's label stays when the applier drops its own.
			other := n.DeepCopy()
			other.Labels["z"] = "other"
			if err := c.Update(ctx, other, client.FieldOwner("other")); err != nil {
				t.Fatal(err)
			}
			n = typed(map[string]string{"x": "2"})
			if err := c.Patch(ctx, n, client.Apply, client.FieldOwner("capi"), client.ForceOwnership); err != nil { //nolint:staticcheck // As above.
				t.Fatal(err)
			}
			if want := map[string]string{"x": "2", "z": "other"}; !maps.Equal(n.Labels, want) {
				t.Errorf("after the second apply: labels %v, want %v", n.Labels, want)
			}
			managers := map[string]metav1.ManagedFieldsOperationType{}
			for _, e := range n.ManagedFields {
				managers[e.Manager] = e.Operation
			}
			if managers["capi"] != metav1.ManagedFieldsOperationApply || managers["other"] != metav1.ManagedFieldsOperationUpdate {
				t.Errorf("managers %v, want capi applying and other updating", managers)
			}
			// Apply configurations, and a conflict with another applier.
			ac := corev1ac.Node("n").WithLabels(map[string]string{"w": "ac"})
			if err := c.Apply(ctx, ac, client.FieldOwner("ac")); err != nil {
				t.Fatal(err)
			}
			// controller-runtime extracts from the answer the fields the manager owns.
			got := &corev1.Node{}
			if err := c.Get(ctx, client.ObjectKey{Name: "n"}, got); err != nil {
				t.Fatal(err)
			}
			if want := map[string]string{"w": "ac"}; !maps.Equal(ac.Labels, want) {
				t.Errorf("after applying a configuration: its labels %v, want %v", ac.Labels, want)
			}
			if want := map[string]string{"w": "ac", "x": "2", "z": "other"}; !maps.Equal(got.Labels, want) {
				t.Errorf("after applying a configuration: the node's labels %v, want %v", got.Labels, want)
			}
			conflicting := corev1ac.Node("n").WithLabels(map[string]string{"x": "3"})
			if err := c.Apply(ctx, conflicting, client.FieldOwner("ac")); !apierrors.IsConflict(err) {
				t.Errorf("applying a field another applier owns: got %v, want a conflict", err)
			}
			// A custom resource, whose schema is deduced.
			cv := clusterVersion()
			cv.SetGroupVersionKind(configv1.GroupVersion.WithKind("ClusterVersion"))
			if err := c.Patch(ctx, cv, client.Apply, client.FieldOwner("capoa")); err != nil { //nolint:staticcheck // As above.
				t.Fatal(err)
			}
			cv = clusterVersion()
			cv.SetGroupVersionKind(configv1.GroupVersion.WithKind("ClusterVersion"))
			cv.Spec.Channel = "fast-4.18"
			if err := c.Patch(ctx, cv, client.Apply, client.FieldOwner("capoa")); err != nil { //nolint:staticcheck // As above.
				t.Fatal(err)
			}
			cvs := &configv1.ClusterVersionList{}
			if err := c.List(ctx, cvs); err != nil || len(cvs.Items) != 1 || cvs.Items[0].Spec.Channel != "fast-4.18" || cvs.Items[0].Generation != 2 {
				t.Errorf("cluster versions after two applies: %+v (%v)", cvs.Items, err)
			}
			// An apply needs a field manager; an apply to a status needs the object.
			if err := c.Patch(ctx, typed(nil), client.Apply); !apierrors.IsInvalid(err) { //nolint:staticcheck // As above.
				t.Errorf("apply without a field manager: got %v, want invalid", err)
			}
			status := corev1ac.Node("missing").WithStatus(corev1ac.NodeStatus().WithPhase(corev1.NodeRunning))
			if err := c.Status().Apply(ctx, status, client.FieldOwner("kubelet")); !apierrors.IsNotFound(err) {
				t.Errorf("status apply to a missing object: got %v, want not found", err)
			}
		}},
	}
}

func deleteCases() []objectsCase {
	return []objectsCase{
		{"delete, with and without finalizers", func(e *env) {
			t, ctx, c := e.t, e.t.Context(), e.c
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "plain"}}
			if err := c.Create(ctx, cm); err != nil {
				t.Fatal(err)
			}
			if err := c.Delete(ctx, cm); err != nil {
				t.Fatal(err)
			}
			if err := c.Get(ctx, client.ObjectKeyFromObject(cm), cm); !apierrors.IsNotFound(err) {
				t.Errorf("after the delete: got %v, want not found", err)
			}
			if err := c.Delete(ctx, cm); !apierrors.IsNotFound(err) {
				t.Errorf("delete again: got %v, want not found", err)
			}

			cv := clusterVersion()
			cv.Finalizers = []string{"example.com/keep"}
			if err := c.Create(ctx, cv); err != nil {
				t.Fatal(err)
			}
			if err := c.Delete(ctx, cv, client.Preconditions{ResourceVersion: ptr.To("1")}); !apierrors.IsConflict(err) {
				t.Errorf("delete with a stale precondition: got %v, want a conflict", err)
			}
			if err := c.Delete(ctx, cv); err != nil {
				t.Fatal(err)
			}
			got := &configv1.ClusterVersion{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(cv), got); err != nil {
				t.Fatal(err)
			}
			if got.DeletionTimestamp == nil || got.Generation != 2 {
				t.Errorf("after deleting an object with a finalizer: deletionTimestamp %v, generation %d", got.DeletionTimestamp, got.Generation)
			}
			before := got.DeepCopy()
			got.Finalizers = nil
			if err := c.Patch(ctx, got, client.MergeFrom(before)); err != nil {
				t.Fatal(err)
			}
			if err := c.Get(ctx, client.ObjectKeyFromObject(cv), got); !apierrors.IsNotFound(err) {
				t.Errorf("after removing the finalizer: got %v, want not found", err)
			}
		}},
		{"delete a collection", func(e *env) {
			t, ctx, c := e.t, e.t.Context(), e.c
			for i, l := range []string{"a", "a", "b"} {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("cm%d", i), Labels: map[string]string{"l": l}}}
				if err := c.Create(ctx, cm); err != nil {
					t.Fatal(err)
				}
			}
			if err := c.DeleteAllOf(ctx, &corev1.ConfigMap{}, client.InNamespace("default"), client.MatchingLabels{"l": "a"}); err != nil {
				t.Fatal(err)
			}
			cms := &corev1.ConfigMapList{}
			if err := c.List(ctx, cms); err != nil || !slices.Equal(names(cms.Items), []string{"cm2"}) {
				t.Errorf("left: %v (%v), want cm2", names(cms.Items), err)
			}
		}},
		{"eviction deletes the pod", func(e *env) {
			t, ctx, c := e.t, e.t.Context(), e.c
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "p"}}
			if err := c.Create(ctx, pod); err != nil {
				t.Fatal(err)
			}
			eviction := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "p"}}
			if err := c.SubResource("eviction").Create(ctx, pod, eviction); err != nil {
				t.Fatal(err)
			}
			if err := c.Get(ctx, client.ObjectKeyFromObject(pod), pod); !apierrors.IsNotFound(err) {
				t.Errorf("after the eviction: got %v, want not found", err)
			}
		}},
	}
}

func clientCases() []objectsCase {
	return []objectsCase{
		{"a group the cluster does not serve answers 404", func(e *env) {
			t, ctx, cfg := e.t, e.t.Context(), e.cfg
			r := do(t, ctx, cfg, http.MethodGet, "/apis/machine.openshift.io/v1beta1/namespaces/openshift-machine-api/machines", nil, "")
			if st := statusOf(t, r); r.code != http.StatusNotFound || st.Reason != metav1.StatusReasonNotFound {
				t.Errorf("machines: %d %+v, want 404 NotFound", r.code, st)
			}
			// As our controllers list Machines, with a mapper that knows the kind.
			machines := schema.GroupVersionKind{Group: "machine.openshift.io", Version: "v1beta1", Kind: "Machine"}
			mapper := meta.NewDefaultRESTMapper(nil)
			mapper.Add(machines, meta.RESTScopeNamespace)
			c, err := client.New(cfg, client.Options{Scheme: runtime.NewScheme(), Mapper: mapper})
			if err != nil {
				t.Fatal(err)
			}
			list := &unstructured.UnstructuredList{}
			list.SetGroupVersionKind(machines.GroupVersion().WithKind("MachineList"))
			if err := c.List(ctx, list, client.InNamespace("openshift-machine-api"), client.MatchingLabels{"role": "master"}); !apierrors.IsNotFound(err) {
				t.Errorf("list machines: got %v, want not found", err)
			}
			for _, tc := range []struct {
				method, path string
				code         int
			}{
				{http.MethodGet, "/api/v1/namespaces/default/nodes", http.StatusNotFound},
				{http.MethodGet, "/api/v1/nodes/n/proxy", http.StatusNotFound},
				{http.MethodGet, "/api/v1/secrets/s", http.StatusNotFound},
				{http.MethodPut, "/api/v1/nodes", http.StatusMethodNotAllowed},
				{http.MethodPost, "/api/v1/nodes/n", http.StatusMethodNotAllowed},
				{http.MethodPost, "/api/v1/pods", http.StatusMethodNotAllowed},
				{http.MethodPost, "/api/v1/nodes", http.StatusBadRequest},
				{http.MethodPatch, "/api/v1/nodes/n", http.StatusUnsupportedMediaType},
			} {
				if r := do(t, ctx, cfg, tc.method, tc.path, nil, "{"); r.code != tc.code {
					t.Errorf("%s %s: %d %s, want %d", tc.method, tc.path, r.code, r.body, tc.code)
				}
			}
		}},
		{"protobuf, YAML and metadata-only clients", func(e *env) {
			t, ctx, c, cfg := e.t, e.t.Context(), e.c, e.cfg
			pb := rest.CopyConfig(cfg)
			pb.ContentType = runtime.ContentTypeProtobuf
			pb.AcceptContentTypes = runtime.ContentTypeProtobuf
			cs := newClientset(t, pb)
			created, err := cs.CoreV1().Nodes().Create(ctx, node("n", map[string]string{"a": "b"}), metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			got, err := cs.CoreV1().Nodes().Get(ctx, "n", metav1.GetOptions{})
			if err != nil || got.UID != created.UID || got.Labels["a"] != "b" {
				t.Errorf("protobuf get: %+v (%v)", got, err)
			}
			if err := c.Create(ctx, clusterVersion()); err != nil {
				t.Fatal(err)
			}
			r := do(t, ctx, cfg, http.MethodGet, "/api/v1/nodes/n", map[string]string{"Accept": runtime.ContentTypeProtobuf}, "")
			if r.code != http.StatusOK || r.header.Get("Content-Type") != runtime.ContentTypeProtobuf {
				t.Errorf("node in protobuf: %d %q", r.code, r.header.Get("Content-Type"))
			}
			r = do(t, ctx, cfg, http.MethodGet, "/apis/config.openshift.io/v1/clusterversions/version", map[string]string{"Accept": runtime.ContentTypeProtobuf}, "")
			if r.code != http.StatusNotAcceptable {
				t.Errorf("custom resource in protobuf only: %d, want 406", r.code)
			}
			r = do(t, ctx, cfg, http.MethodGet, "/apis/config.openshift.io/v1/clusterversions/version", map[string]string{"Accept": runtime.ContentTypeProtobuf + ", " + runtime.ContentTypeJSON}, "")
			if r.code != http.StatusOK || r.header.Get("Content-Type") != runtime.ContentTypeJSON {
				t.Errorf("custom resource in protobuf or JSON: %d %q, want JSON", r.code, r.header.Get("Content-Type"))
			}
			r = do(t, ctx, cfg, http.MethodGet, "/api/v1/nodes/n", map[string]string{"Accept": runtime.ContentTypeYAML}, "")
			if r.code != http.StatusOK || !strings.Contains(string(r.body), "kind: Node") {
				t.Errorf("node in YAML: %d %s", r.code, r.body)
			}

			mc, err := metadata.NewForConfig(cfg)
			if err != nil {
				t.Fatal(err)
			}
			nodes := corev1.SchemeGroupVersion.WithResource("nodes")
			m, err := mc.Resource(nodes).Get(ctx, "n", metav1.GetOptions{})
			if err != nil || m.UID != created.UID || m.Labels["a"] != "b" {
				t.Errorf("metadata get: %+v (%v)", m, err)
			}
			ml, err := mc.Resource(configv1.GroupVersion.WithResource("clusterversions")).List(ctx, metav1.ListOptions{})
			if err != nil || len(ml.Items) != 1 || ml.Items[0].Name != "version" {
				t.Errorf("metadata list: %+v (%v)", ml, err)
			}
			partial := &metav1.PartialObjectMetadata{}
			partial.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Node"))
			if err := c.Get(ctx, client.ObjectKey{Name: "n"}, partial); err != nil || partial.Labels["a"] != "b" {
				t.Errorf("controller-runtime metadata get: %+v (%v)", partial, err)
			}
		}},
	}
}
