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

// Package inplace is the control-plane provider's Cluster API runtime extension for in-place
// updates (Cluster API's InPlaceUpdates and RuntimeSDK features, docs/book/src/tasks/
// experimental-features/runtime-sdk/implement-in-place-update-hooks.md).
//
// OpenShift upgrades its own nodes: once the control plane's ClusterVersion moves to a release,
// the machine-config operator drains, updates and reboots every node, pool by pool, and the
// kubelet comes back at the release's Kubernetes version. A worker Machine whose spec.version
// follows the control plane (a topology's MachineDeployment, a user's version bump) therefore
// needs no new host: the extension answers CanUpdateMachineSet with "the version, in place" and
// UpdateMachine with "wait" until the Machine's Node reports the version. Any other change (a
// new infrastructure or bootstrap template) it leaves to Cluster API's rollout, which replaces
// the host.
package inplace

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	runtimehooksv1 "sigs.k8s.io/cluster-api/api/runtime/hooks/v1alpha1"
	"sigs.k8s.io/cluster-api/controllers/clustercache"
	runtimecatalog "sigs.k8s.io/cluster-api/exp/runtime/catalog"

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/controlplane/internal/release"
)

// The names of the extension's handlers, one per hook: Cluster API refuses a discovery that names
// two handlers alike, and registers each as <name>.<ExtensionConfig name>.
const (
	CanUpdateMachineSetHandler = "can-update-machine-set"
	UpdateMachineHandler       = "update-machine"
)

// DefaultRetryAfter is how long Cluster API waits between two UpdateMachine calls while a node
// updates: the machine-config operator takes minutes per node.
const DefaultRetryAfter = 30 * time.Second

// Extension answers Cluster API's in-place update hooks for the Machines of clusters whose
// control plane is an OpenshiftAssistedControlPlane.
type Extension struct {
	// Client reads Clusters and Machines in the management cluster.
	Client client.Reader
	// ClusterCache reaches the workload clusters' Nodes.
	ClusterCache clustercache.ClusterCache
	// RetryAfter is the wait UpdateMachine asks for while a node updates (0: DefaultRetryAfter).
	RetryAfter time.Duration
	// ClientCA, when not nil, admits only the requests of Cluster API's runtime client (those
	// with a client certificate its CAs issued); nil admits whoever reaches the webhook port.
	ClientCA *ClientCA
}

// handler is one hook the extension serves.
type handler struct {
	name  string
	hook  runtimecatalog.Hook
	serve func(ctx context.Context, req runtime.Object, resp runtimehooksv1.ResponseObject)
}

// Register serves the extension's discovery and hooks on srv, the manager's webhook server: the
// runtime extension shares the admission webhooks' Service, certificate and TLS profile, under
// the paths Cluster API calls (runtimecatalog.GVHToPath), which no webhook uses.
func (e *Extension) Register(srv webhook.Server) error {
	catalog := runtimecatalog.New()
	if err := runtimehooksv1.AddToCatalog(catalog); err != nil {
		return fmt.Errorf("building the runtime hooks catalog: %w", err)
	}
	handlers := []handler{
		{name: CanUpdateMachineSetHandler, hook: runtimehooksv1.CanUpdateMachineSet, serve: func(ctx context.Context, req runtime.Object, resp runtimehooksv1.ResponseObject) {
			e.CanUpdateMachineSet(ctx, req.(*runtimehooksv1.CanUpdateMachineSetRequest), resp.(*runtimehooksv1.CanUpdateMachineSetResponse))
		}},
		{name: UpdateMachineHandler, hook: runtimehooksv1.UpdateMachine, serve: func(ctx context.Context, req runtime.Object, resp runtimehooksv1.ResponseObject) {
			e.UpdateMachine(ctx, req.(*runtimehooksv1.UpdateMachineRequest), resp.(*runtimehooksv1.UpdateMachineResponse))
		}},
	}
	discovered := make([]runtimehooksv1.ExtensionHandler, 0, len(handlers))
	for _, h := range handlers {
		gvh, err := catalog.GroupVersionHook(h.hook)
		if err != nil {
			return fmt.Errorf("looking up hook %s: %w", runtimecatalog.HookName(h.hook), err)
		}
		discovered = append(discovered, runtimehooksv1.ExtensionHandler{
			Name:        h.name,
			RequestHook: runtimehooksv1.GroupVersionHook{APIVersion: gvh.GroupVersion().String(), Hook: gvh.Hook},
			// Fail: an extension that cannot be reached must not let Cluster API take it for
			// "cannot update in place" and replace a host that OpenShift would have updated.
		})
		if err := serveHook(srv, e.ClientCA, catalog, gvh, h.name, h.serve); err != nil {
			return err
		}
	}
	discovery, err := catalog.GroupVersionHook(runtimehooksv1.Discovery)
	if err != nil {
		return fmt.Errorf("looking up the discovery hook: %w", err)
	}
	return serveHook(srv, e.ClientCA, catalog, discovery, "", func(_ context.Context, _ runtime.Object, resp runtimehooksv1.ResponseObject) {
		resp.SetStatus(runtimehooksv1.ResponseStatusSuccess)
		resp.(*runtimehooksv1.DiscoveryResponse).Handlers = discovered
	})
}

// maxHookRequestBytes bounds the body of a hook request. The largest, CanUpdateMachineSet's,
// carries at most six objects (the current and desired MachineSet, and their infrastructure and
// bootstrap templates), each at most 1.5 MiB, the size the API server stores. The webhook port
// takes requests from anyone who reaches it: an unbounded read let one request make the manager
// allocate more memory than its limit.
const maxHookRequestBytes = 10 << 20

// serveHook registers the handler of one hook at its path, decoding the request and encoding the
// response as Cluster API's exp/runtime/server does; the request's body is read up to
// maxHookRequestBytes, once ca (when not nil) admitted the request.
func serveHook(srv webhook.Server, ca *ClientCA, catalog *runtimecatalog.Catalog, gvh runtimecatalog.GroupVersionHook, name string,
	serve func(context.Context, runtime.Object, runtimehooksv1.ResponseObject)) error {
	if _, err := catalog.NewRequest(gvh); err != nil {
		return fmt.Errorf("hook %s: %w", gvh.Hook, err)
	}
	responseGVK, err := catalog.Response(gvh)
	if err != nil {
		return fmt.Errorf("hook %s: %w", gvh.Hook, err)
	}
	srv.Register(runtimecatalog.GVHToPath(gvh, name), ca.admit(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, _ := catalog.NewRequest(gvh)
		obj, _ := catalog.NewResponse(gvh)
		resp := obj.(runtimehooksv1.ResponseObject)
		resp.GetObjectKind().SetGroupVersionKind(responseGVK)
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxHookRequestBytes))
		if err == nil {
			err = json.Unmarshal(body, req)
		}
		if err != nil {
			resp.SetStatus(runtimehooksv1.ResponseStatusFailure)
			resp.SetMessage(fmt.Sprintf("reading the %s request: %v", gvh.Hook, err))
		} else {
			serve(ctrl.LoggerInto(r.Context(), ctrl.Log.WithName("inplace").WithValues("hook", gvh.Hook)), req, resp)
		}
		out, err := json.Marshal(resp)
		if err != nil {
			http.Error(w, fmt.Sprintf("encoding the %s response: %v", gvh.Hook, err), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(out)
	})))
	return nil
}

// CanUpdateMachineSet tells Cluster API which changes between the current and the desired
// MachineSet OpenShift makes in place: a newer spec.version of the workers of an OpenShift
// cluster, which the machine-config operator applies to every node when the control plane
// upgrades. It patches nothing else, so a change of template still replaces the hosts.
func (e *Extension) CanUpdateMachineSet(ctx context.Context, req *runtimehooksv1.CanUpdateMachineSetRequest, resp *runtimehooksv1.CanUpdateMachineSetResponse) {
	current, desired := &req.Current.MachineSet, &req.Desired.MachineSet
	resp.SetStatus(runtimehooksv1.ResponseStatusSuccess)
	ours, err := e.openShiftCluster(ctx, current.Namespace, current.Spec.ClusterName)
	if err != nil {
		resp.SetStatus(runtimehooksv1.ResponseStatusFailure)
		resp.SetMessage(err.Error())
		return
	}
	if !ours {
		return // Not an OpenShift cluster of ours: Cluster API's rollout, as without the extension.
	}
	from, to := current.Spec.Template.Spec.Version, desired.Spec.Template.Spec.Version
	if c, ok := release.CompareKubernetesVersions(from, to); !ok || c >= 0 {
		return // No newer version (OpenShift only moves forward), or not versions at all.
	}
	patch, err := json.Marshal([]map[string]string{{"op": "replace", "path": "/spec/template/spec/version", "value": to}})
	if err != nil {
		resp.SetStatus(runtimehooksv1.ResponseStatusFailure)
		resp.SetMessage(fmt.Sprintf("encoding the version patch: %v", err))
		return
	}
	resp.MachineSetPatch = runtimehooksv1.Patch{PatchType: runtimehooksv1.JSONPatchType, Patch: patch}
	ctrl.LoggerFrom(ctx).V(2).Info("The version changes in place", "MachineSet", client.ObjectKeyFromObject(current), "from", from, "to", to)
}

// UpdateMachine reports the in-place update of one Machine done once its Node's kubelet runs
// spec.version (or a later version), and in progress, with what it waits for, until then: the
// machine-config operator updates the node when the cluster's ClusterVersion moves.
func (e *Extension) UpdateMachine(ctx context.Context, req *runtimehooksv1.UpdateMachineRequest, resp *runtimehooksv1.UpdateMachineResponse) {
	desired := &req.Desired.Machine
	resp.SetStatus(runtimehooksv1.ResponseStatusSuccess)
	wait := func(format string, args ...any) {
		retry := e.RetryAfter
		if retry == 0 {
			retry = DefaultRetryAfter
		}
		resp.RetryAfterSeconds = int32(max(retry, time.Second) / time.Second)
		resp.SetMessage(fmt.Sprintf(format, args...))
	}
	fail := func(format string, args ...any) {
		resp.SetStatus(runtimehooksv1.ResponseStatusFailure)
		resp.SetMessage(fmt.Sprintf(format, args...))
	}
	ours, err := e.openShiftCluster(ctx, desired.Namespace, desired.Spec.ClusterName)
	switch {
	case err != nil:
		fail("%v", err)
		return
	case !ours:
		fail("Machine %s/%s is not of an OpenShift cluster of an OpenshiftAssistedControlPlane: this extension cannot update it in place",
			desired.Namespace, desired.Name)
		return
	case desired.Spec.Version == "":
		return // No version asked: nothing to wait for.
	}
	// The request carries the spec only: the Node is in the Machine's status.
	machine := &clusterv1.Machine{}
	if err := e.Client.Get(ctx, client.ObjectKey{Namespace: desired.Namespace, Name: desired.Name}, machine); err != nil {
		fail("reading Machine %s/%s: %v", desired.Namespace, desired.Name, err)
		return
	}
	if !machine.Status.NodeRef.IsDefined() {
		wait("Machine %s has no Node yet", machine.Name)
		return
	}
	node := machine.Status.NodeRef.Name
	// Uncached: one GET per call (every RetryAfter, while a Machine updates) rather than an
	// informer holding every Node of each cluster that ever updated, which the manager reads
	// nowhere else.
	workload, err := e.ClusterCache.GetUncachedClient(ctx, client.ObjectKey{Namespace: machine.Namespace, Name: machine.Spec.ClusterName})
	if err != nil {
		wait("the workload cluster %s cannot be reached yet to read Node %s: %v", machine.Spec.ClusterName, node, err)
		return
	}
	n := &corev1.Node{}
	if err := workload.Get(ctx, client.ObjectKey{Name: node}, n); err != nil {
		if apierrors.IsNotFound(err) {
			fail("Node %s of Machine %s is not in the workload cluster", node, machine.Name)
			return
		}
		wait("reading Node %s: %v", node, err)
		return
	}
	kubelet := n.Status.NodeInfo.KubeletVersion
	if c, ok := release.CompareKubernetesVersions(kubelet, desired.Spec.Version); !ok || c < 0 {
		wait("OpenShift's machine-config operator has not updated Node %s yet: its kubelet runs %s, the Machine asks for %s",
			node, kubelet, desired.Spec.Version)
		return
	}
	ctrl.LoggerFrom(ctx).Info("Node updated in place", "Machine", client.ObjectKeyFromObject(machine), "node", node, "kubelet", kubelet)
}

// openShiftCluster tells whether Cluster namespace/name has an OpenshiftAssistedControlPlane.
func (e *Extension) openShiftCluster(ctx context.Context, namespace, name string) (bool, error) {
	cluster := &clusterv1.Cluster{}
	if err := e.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, cluster); err != nil {
		return false, fmt.Errorf("reading Cluster %s/%s: %w", namespace, name, err)
	}
	ref := cluster.Spec.ControlPlaneRef
	return ref.APIGroup == controlplanev1.GroupVersion.Group && ref.Kind == controlplanev1.ControlPlaneKind, nil
}
