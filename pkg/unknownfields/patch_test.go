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

package unknownfields_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"

	. "github.com/onsi/gomega"
	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/unknownfields"
)

// hub is an API server whose CRDs are newer than the Go types: it stores objects as unstructured
// and keeps every field, serves typed reads without the fields the types lack (as the cache
// decodes them), applies JSON merge patches with their resourceVersion precondition, and counts
// requests. controller-runtime's fake client cannot play it: it stores the objects of the kinds
// its scheme knows as those types, and drops the unknown fields at once, inside array elements
// too (checked with v0.23.3).
type hub struct {
	client.Client // nil: the methods the helper does not use panic
	scheme        *runtime.Scheme
	objects       map[client.ObjectKey]map[string]any
	rv            int
	gets, patches int
	creates       int
	// beforePatch, when set, runs before each patch is applied (a concurrent writer).
	beforePatch func(h *hub)
	// bodies are the patches received.
	bodies []map[string]any
}

func newHub() *hub {
	s := runtime.NewScheme()
	if err := hiveextv1beta1.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := aiv1beta1.AddToScheme(s); err != nil {
		panic(err)
	}
	return &hub{scheme: s, objects: map[client.ObjectKey]map[string]any{}}
}

func (h *hub) Scheme() *runtime.Scheme { return h.scheme }

func (h *hub) store(obj map[string]any) {
	u := &unstructured.Unstructured{Object: obj}
	h.rv++
	u.SetResourceVersion(strconv.Itoa(h.rv))
	h.objects[client.ObjectKeyFromObject(u)] = u.Object
}

func (h *hub) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	h.gets++
	stored, ok := h.objects[key]
	if !ok {
		return apierrors.NewNotFound(schema.GroupResource{}, key.Name)
	}
	return h.into(stored, obj)
}

// into writes stored into obj: whole into an unstructured object, without the unknown fields into
// a typed one.
func (h *hub) into(stored map[string]any, obj client.Object) error {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		u.Object = runtime.DeepCopyJSON(stored)
		return nil
	}
	return runtime.DefaultUnstructuredConverter.FromUnstructured(runtime.DeepCopyJSON(stored), obj)
}

func (h *hub) Create(_ context.Context, obj client.Object, _ ...client.CreateOption) error {
	h.creates++
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return err
	}
	h.store(u)
	return h.into(h.objects[client.ObjectKeyFromObject(obj)], obj)
}

func (h *hub) Patch(_ context.Context, obj client.Object, p client.Patch, _ ...client.PatchOption) error {
	h.patches++
	if p.Type() != types.MergePatchType {
		return fmt.Errorf("patch type %s", p.Type())
	}
	data, err := p.Data(obj)
	if err != nil {
		return err
	}
	var doc map[string]any
	if err := utiljson.Unmarshal(data, &doc); err != nil {
		return err
	}
	h.bodies = append(h.bodies, doc)
	if h.beforePatch != nil {
		h.beforePatch(h)
	}
	key := client.ObjectKeyFromObject(obj)
	stored, ok := h.objects[key]
	if !ok {
		return apierrors.NewNotFound(schema.GroupResource{}, key.Name)
	}
	if meta, ok := doc["metadata"].(map[string]any); ok {
		if rv, ok := meta["resourceVersion"]; ok && rv != (&unstructured.Unstructured{Object: stored}).GetResourceVersion() {
			return apierrors.NewConflict(schema.GroupResource{}, key.Name, fmt.Errorf("resourceVersion %v is not the current one", rv))
		}
	}
	merged, ok := mergePatch(stored, doc).(map[string]any)
	if !ok {
		return fmt.Errorf("patch of %s is not an object", key.Name)
	}
	h.store(merged)
	return h.into(h.objects[key], obj)
}

// mergePatch applies a JSON merge patch (RFC 7386).
func mergePatch(target, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	t, ok := target.(map[string]any)
	if !ok {
		t = map[string]any{}
	}
	out := runtime.DeepCopyJSON(t)
	for k, v := range p {
		if v == nil {
			delete(out, k)
			continue
		}
		out[k] = mergePatch(out[k], v)
	}
	return out
}

const ns, name = "ns", "c1"

// newerACI is an AgentClusterInstall as a newer hub stores it: a newer field in the spec and in
// elements of its arrays of objects.
func newerACI() map[string]any {
	return map[string]any{
		"apiVersion": "extensions.hive.openshift.io/v1beta1", "kind": "AgentClusterInstall",
		"metadata": map[string]any{"namespace": ns, "name": name},
		"spec": map[string]any{
			"clusterDeploymentRef":  map[string]any{"name": name},
			"provisionRequirements": map[string]any{"controlPlaneAgents": int64(3)},
			"sshPublicKey":          "ssh-ed25519 AAAA",
			"newerSpecField":        "kept",
			"networking": map[string]any{
				"clusterNetwork": []any{
					map[string]any{"cidr": "10.128.0.0/14", "hostPrefix": int64(23), "newerElementField": "v4"},
				},
				"machineNetwork": []any{map[string]any{"cidr": "192.168.111.0/24", "newerElementField": map[string]any{"nested": []any{"a"}}}},
				"serviceNetwork": []any{"172.30.0.0/16"},
			},
			"manifestsConfigMapRefs": []any{map[string]any{"name": "m1", "newerElementField": "m1"}, map[string]any{"name": "m2"}},
		},
	}
}

// read returns the AgentClusterInstall as the cache holds it (typed) and a copy to patch from.
func read(g Gomega, h *hub) (*hiveextv1beta1.AgentClusterInstall, *hiveextv1beta1.AgentClusterInstall) {
	aci := &hiveextv1beta1.AgentClusterInstall{}
	g.Expect(h.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, aci)).To(Succeed())
	return aci, aci.DeepCopy()
}

func stored(h *hub, path ...string) any {
	v, _, _ := unstructured.NestedFieldNoCopy(h.objects[client.ObjectKey{Namespace: ns, Name: name}], path...)
	return v
}

func TestPatchKeepsTheUnknownFieldsOfUnchangedElements(t *testing.T) {
	for title, tc := range map[string]struct {
		change             func(*hiveextv1beta1.AgentClusterInstall)
		wantClusterNetwork []any
		wantManifests      []any
	}{
		"an element added after the element with a newer field": {
			change: func(aci *hiveextv1beta1.AgentClusterInstall) {
				aci.Spec.Networking.ClusterNetwork = append(aci.Spec.Networking.ClusterNetwork, hiveextv1beta1.ClusterNetworkEntry{CIDR: "fd01::/48", HostPrefix: 64})
			},
			wantClusterNetwork: []any{
				map[string]any{"cidr": "10.128.0.0/14", "hostPrefix": int64(23), "newerElementField": "v4"},
				map[string]any{"cidr": "fd01::/48", "hostPrefix": int64(64)},
			},
		},
		"an element added before it (the element moves)": {
			change: func(aci *hiveextv1beta1.AgentClusterInstall) {
				aci.Spec.Networking.ClusterNetwork = append([]hiveextv1beta1.ClusterNetworkEntry{{CIDR: "fd01::/48", HostPrefix: 64}}, aci.Spec.Networking.ClusterNetwork...)
			},
			wantClusterNetwork: []any{
				map[string]any{"cidr": "fd01::/48", "hostPrefix": int64(64)},
				map[string]any{"cidr": "10.128.0.0/14", "hostPrefix": int64(23), "newerElementField": "v4"},
			},
		},
		"the element itself changed: it carries only what the types know": {
			change: func(aci *hiveextv1beta1.AgentClusterInstall) {
				aci.Spec.Networking.ClusterNetwork[0].HostPrefix = 22
			},
			wantClusterNetwork: []any{map[string]any{"cidr": "10.128.0.0/14", "hostPrefix": int64(22)}},
		},
		"another element removed, in another array": {
			change: func(aci *hiveextv1beta1.AgentClusterInstall) {
				aci.Spec.ManifestsConfigMapRefs = aci.Spec.ManifestsConfigMapRefs[:1]
			},
			wantManifests: []any{map[string]any{"name": "m1", "newerElementField": "m1"}},
		},
	} {
		t.Run(title, func(t *testing.T) {
			g := NewWithT(t)
			h := newHub()
			h.store(newerACI())
			aci, before := read(g, h)
			tc.change(aci)
			h.gets = 0

			g.Expect(unknownfields.Patch(context.Background(), h, h, before, aci)).To(Succeed())

			g.Expect(h.gets).To(Equal(1), "the live object is read once")
			g.Expect(h.patches).To(Equal(1))
			g.Expect(h.bodies[0]).To(HaveKeyWithValue("metadata", HaveKey("resourceVersion")), "locked to the live object")
			if tc.wantClusterNetwork != nil {
				g.Expect(stored(h, "spec", "networking", "clusterNetwork")).To(Equal(tc.wantClusterNetwork))
			}
			if tc.wantManifests != nil {
				g.Expect(stored(h, "spec", "manifestsConfigMapRefs")).To(Equal(tc.wantManifests))
			}
			// What the patch did not change is as it was, newer fields and all.
			g.Expect(stored(h, "spec", "newerSpecField")).To(Equal("kept"))
			g.Expect(stored(h, "spec", "networking", "machineNetwork")).To(Equal(newerACI()["spec"].(map[string]any)["networking"].(map[string]any)["machineNetwork"]))
			g.Expect(aci.Spec.SSHPublicKey).To(Equal("ssh-ed25519 AAAA"), "obj is updated from the response")
		})
	}
}

// TestMergeFromLosesTheUnknownFields shows the problem Patch solves, on the same hub: a merge
// patch of a changed array sends its elements as the types encode them.
func TestMergeFromLosesTheUnknownFields(t *testing.T) {
	g := NewWithT(t)
	h := newHub()
	h.store(newerACI())
	aci, before := read(g, h)
	aci.Spec.Networking.ClusterNetwork = append(aci.Spec.Networking.ClusterNetwork, hiveextv1beta1.ClusterNetworkEntry{CIDR: "fd01::/48", HostPrefix: 64})
	g.Expect(h.Patch(context.Background(), aci, client.MergeFrom(before))).To(Succeed())
	first := stored(h, "spec", "networking", "clusterNetwork").([]any)[0]
	g.Expect(first).NotTo(HaveKey("newerElementField"))
}

func TestPatchWithoutArraysOfObjectsIsOneMergePatch(t *testing.T) {
	for title, change := range map[string]func(*hiveextv1beta1.AgentClusterInstall){
		"a string": func(aci *hiveextv1beta1.AgentClusterInstall) { aci.Spec.SSHPublicKey = "ssh-ed25519 BBBB" },
		"an array of strings": func(aci *hiveextv1beta1.AgentClusterInstall) {
			aci.Spec.Networking.ServiceNetwork = []string{"172.31.0.0/16"}
		},
		"labels": func(aci *hiveextv1beta1.AgentClusterInstall) { aci.Labels = map[string]string{"a": "b"} },
		"owner references (array)": func(aci *hiveextv1beta1.AgentClusterInstall) {
			aci.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "owner", UID: "uid"}})
		},
	} {
		t.Run(title, func(t *testing.T) {
			g := NewWithT(t)
			h := newHub()
			h.store(newerACI())
			aci, before := read(g, h)
			change(aci)
			want, err := client.MergeFrom(before).Data(aci)
			g.Expect(err).NotTo(HaveOccurred())
			h.gets = 0

			g.Expect(unknownfields.Patch(context.Background(), h, h, before, aci)).To(Succeed())

			g.Expect(h.gets).To(Equal(0), "no read: the patch of client.MergeFrom keeps everything")
			g.Expect(h.patches).To(Equal(1))
			got, err := json.Marshal(h.bodies[0])
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(MatchJSON(want))
			g.Expect(stored(h, "spec", "networking", "clusterNetwork")).To(Equal(newerACI()["spec"].(map[string]any)["networking"].(map[string]any)["clusterNetwork"]))
		})
	}
}

// TestPatchIsRetriedOnAConcurrentChange: a writer that changes the object between the read of the
// live object and the patch makes the patch fail its precondition; it is read and sent again, and
// what that writer wrote is kept.
func TestPatchIsRetriedOnAConcurrentChange(t *testing.T) {
	g := NewWithT(t)
	h := newHub()
	h.store(newerACI())
	aci, before := read(g, h)
	aci.Spec.Networking.ClusterNetwork = append(aci.Spec.Networking.ClusterNetwork, hiveextv1beta1.ClusterNetworkEntry{CIDR: "fd01::/48", HostPrefix: 64})
	h.gets = 0
	h.beforePatch = func(h *hub) {
		h.beforePatch = nil
		obj := newerACI()
		_ = unstructured.SetNestedSlice(obj, []any{
			map[string]any{"cidr": "10.128.0.0/14", "hostPrefix": int64(23), "newerElementField": "written meanwhile"},
		}, "spec", "networking", "clusterNetwork")
		h.store(obj)
	}

	g.Expect(unknownfields.Patch(context.Background(), h, h, before, aci)).To(Succeed())

	g.Expect(h.gets).To(Equal(2))
	g.Expect(h.patches).To(Equal(2))
	g.Expect(stored(h, "spec", "networking", "clusterNetwork")).To(Equal([]any{
		map[string]any{"cidr": "10.128.0.0/14", "hostPrefix": int64(23), "newerElementField": "written meanwhile"},
		map[string]any{"cidr": "fd01::/48", "hostPrefix": int64(64)},
	}))
}

// TestPatchKeepsNestedUnknownFields: an InfraEnv's kernel arguments and the match expressions of
// its NMStateConfig selector (an array inside an object), with newer fields in their elements and
// inside those.
func TestPatchKeepsNestedUnknownFields(t *testing.T) {
	g := NewWithT(t)
	h := newHub()
	h.store(map[string]any{
		"apiVersion": "agent-install.openshift.io/v1beta1", "kind": "InfraEnv",
		"metadata": map[string]any{"namespace": ns, "name": name},
		"spec": map[string]any{
			"pullSecretRef":   map[string]any{"name": "pull"},
			"kernelArguments": []any{map[string]any{"operation": "append", "value": "quiet", "newer": map[string]any{"deep": []any{map[string]any{"x": "y"}}}}},
			"nmStateConfigLabelSelector": map[string]any{"matchExpressions": []any{
				map[string]any{"key": "k", "operator": "In", "values": []any{"a"}, "newer": "e"},
			}},
		},
	})
	ie := &aiv1beta1.InfraEnv{}
	g.Expect(h.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, ie)).To(Succeed())
	before := ie.DeepCopy()
	ie.Spec.KernelArguments = append(ie.Spec.KernelArguments, aiv1beta1.KernelArgument{Operation: "append", Value: "rd.net.timeout.carrier=60"})
	ie.Spec.NMStateConfigLabelSelector.MatchExpressions = append(ie.Spec.NMStateConfigLabelSelector.MatchExpressions,
		ie.Spec.NMStateConfigLabelSelector.MatchExpressions[0])
	ie.Spec.NMStateConfigLabelSelector.MatchExpressions[1].Key = "k2"

	g.Expect(unknownfields.Patch(context.Background(), h, h, before, ie)).To(Succeed())

	g.Expect(stored(h, "spec", "kernelArguments")).To(Equal([]any{
		map[string]any{"operation": "append", "value": "quiet", "newer": map[string]any{"deep": []any{map[string]any{"x": "y"}}}},
		map[string]any{"operation": "append", "value": "rd.net.timeout.carrier=60"},
	}))
	g.Expect(stored(h, "spec", "nmStateConfigLabelSelector", "matchExpressions")).To(Equal([]any{
		map[string]any{"key": "k", "operator": "In", "values": []any{"a"}, "newer": "e"},
		map[string]any{"key": "k2", "operator": "In", "values": []any{"a"}},
	}))
}

func TestCreateOrPatch(t *testing.T) {
	ctx := context.Background()
	desired := func(aci *hiveextv1beta1.AgentClusterInstall, networks ...string) controllerutil.MutateFn {
		return func() error {
			aci.Spec.ClusterDeploymentRef.Name = name
			aci.Spec.ProvisionRequirements.ControlPlaneAgents = 3
			aci.Spec.SSHPublicKey = "ssh-ed25519 AAAA"
			aci.Spec.Networking.ServiceNetwork = []string{"172.30.0.0/16"}
			aci.Spec.Networking.MachineNetwork = []hiveextv1beta1.MachineNetworkEntry{{CIDR: "192.168.111.0/24"}}
			aci.Spec.ManifestsConfigMapRefs = []hiveextv1beta1.ManifestsConfigMapReference{{Name: "m1"}, {Name: "m2"}}
			aci.Spec.Networking.ClusterNetwork = nil
			for _, n := range networks {
				aci.Spec.Networking.ClusterNetwork = append(aci.Spec.Networking.ClusterNetwork, hiveextv1beta1.ClusterNetworkEntry{CIDR: n, HostPrefix: 23})
			}
			return nil
		}
	}
	g := NewWithT(t)
	h := newHub()

	aci := &hiveextv1beta1.AgentClusterInstall{}
	aci.Namespace, aci.Name = ns, name
	result, err := unknownfields.CreateOrPatch(ctx, h, h, aci, desired(aci, "10.128.0.0/14"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(result).To(Equal(controllerutil.OperationResultCreated))
	g.Expect(h.creates).To(Equal(1))

	// A newer hub's controller writes newer fields.
	obj := h.objects[client.ObjectKey{Namespace: ns, Name: name}]
	net, _, _ := unstructured.NestedSlice(obj, "spec", "networking", "clusterNetwork")
	net[0].(map[string]any)["newerElementField"] = "v4"
	_ = unstructured.SetNestedSlice(obj, net, "spec", "networking", "clusterNetwork")
	h.gets = 0

	aci = &hiveextv1beta1.AgentClusterInstall{}
	aci.Namespace, aci.Name = ns, name
	result, err = unknownfields.CreateOrPatch(ctx, h, h, aci, desired(aci, "10.128.0.0/14"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(result).To(Equal(controllerutil.OperationResultNone))
	g.Expect(h.gets).To(Equal(1), "the cached read alone")
	g.Expect(h.patches).To(Equal(0))

	h.gets = 0
	aci = &hiveextv1beta1.AgentClusterInstall{}
	aci.Namespace, aci.Name = ns, name
	result, err = unknownfields.CreateOrPatch(ctx, h, h, aci, desired(aci, "10.128.0.0/14", "fd01::/48"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(result).To(Equal(controllerutil.OperationResultUpdated))
	g.Expect(h.gets).To(Equal(2), "the cached read and the live one")
	g.Expect(h.patches).To(Equal(1))
	g.Expect(stored(h, "spec", "networking", "clusterNetwork")).To(Equal([]any{
		map[string]any{"cidr": "10.128.0.0/14", "hostPrefix": int64(23), "newerElementField": "v4"},
		map[string]any{"cidr": "fd01::/48", "hostPrefix": int64(23)},
	}))
	g.Expect(aci.Spec.Networking.ClusterNetwork).To(HaveLen(2))

	aci = &hiveextv1beta1.AgentClusterInstall{}
	aci.Namespace, aci.Name = "ns", name
	_, err = unknownfields.CreateOrPatch(ctx, h, h, aci, func() error { aci.Name = "other"; return nil })
	g.Expect(err).To(MatchError(ContainSubstring("cannot mutate object name")))
}
