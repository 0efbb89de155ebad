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

// Package machineapi plays, in the lab's workload cluster, what OpenShift's installer leaves of
// Machine API on platform baremetal, and answers cluster-etcd-operator's questions about it.
//
// The installer writes one master machine.openshift.io Machine per control-plane host (named
// <infraID>-master-<n>, label machine.openshift.io/cluster-api-machine-role=master, namespace
// openshift-machine-api) and its BareMetalHost, on platform baremetal, only while the MachineAPI
// capability is enabled (openshift/installer pkg/asset/machines/master.go, case
// baremetaltypes.Name: "if !enabledCaps.Has(configv1.ClusterVersionCapabilityMachineAPI) {
// break }"); on platform none it writes none. assisted-service lists the cluster's hosts in the
// install-config (openshift/assisted-service 063b257 internal/provider/baremetal/installConfig.go),
// so those Machines are the installation's control-plane nodes, and they are Running once the
// cluster is up (their hosts are externally provisioned: an inference, see the research note
// capabilities.md). The CRD (machines.machine.openshift.io) is served only while the capability is
// enabled: it is one of the capability's manifests (openshift/api config/v1/types_cluster_version.go,
// ClusterVersionCapabilityMachineAPI, "The following CRDs are disabled as well: machines").
//
// Functional and MachineForNode are cluster-etcd-operator's view (openshift/cluster-etcd-operator
// b4786ae pkg/operator/ceohelpers/machine_api.go IsFunctional; FindMachineByNodeInternalIP in
// pkg/operator/clustermembercontroller).
package machineapi

import (
	"context"
	_ "embed" // the CRD
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/testenv"
)

// Names of Machine API.
const (
	Namespace  = "openshift-machine-api"
	RoleLabel  = "machine.openshift.io/cluster-api-machine-role"
	TypeLabel  = "machine.openshift.io/cluster-api-machine-type"
	Capability = "MachineAPI"
	// Running is the phase of a Machine whose host runs its node.
	Running = "Running"
)

var (
	// MachineGVK is machine.openshift.io/v1beta1 Machine.
	MachineGVK     = schema.GroupVersionKind{Group: "machine.openshift.io", Version: "v1beta1", Kind: "Machine"}
	machineListGVK = schema.GroupVersionKind{Group: "machine.openshift.io", Version: "v1beta1", Kind: "MachineList"}
	clusterVersion = schema.GroupVersionKind{Group: "config.openshift.io", Version: "v1", Kind: "ClusterVersion"}
)

//go:embed crds/machine.openshift.io_machines.yaml
var crdYAML []byte

// InstallCRD creates machines.machine.openshift.io (OpenShift's own CRD, copied from the pinned
// github.com/openshift/api module by `make manifests`) in the API server cfg reaches, unless it
// exists, and waits until it is established.
func InstallCRD(ctx context.Context, cfg *rest.Config) error {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(crdYAML, crd); err != nil {
		return fmt.Errorf("reading the Machine CRD: %w", err)
	}
	s := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(s); err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		return fmt.Errorf("creating a client: %w", err)
	}
	return testenv.InstallCRD(ctx, c, crd)
}

// EnsureInstallerMachines creates, for each control-plane Node of the installation, the master
// Machine the installer wrote (<infraID>-master-<n>, in the order of the Nodes' names), Running,
// with the Node's addresses and a nodeRef, as Machine API leaves it once the cluster is up.
// Existing Machines are left alone. The CRD must be served (InstallCRD).
func EnsureInstallerMachines(ctx context.Context, c client.Client, infraID string, nodes []corev1.Node) error {
	nodes = slices.Clone(nodes)
	slices.SortFunc(nodes, func(a, b corev1.Node) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace}}); client.IgnoreAlreadyExists(err) != nil {
		return fmt.Errorf("creating namespace %s: %w", Namespace, err)
	}
	for i, n := range nodes {
		m := &unstructured.Unstructured{}
		m.SetGroupVersionKind(MachineGVK)
		m.SetNamespace(Namespace)
		m.SetName(fmt.Sprintf("%s-master-%d", infraID, i))
		m.SetLabels(map[string]string{RoleLabel: "master", TypeLabel: "master", "machine.openshift.io/cluster-api-cluster": infraID})
		m.Object["spec"] = map[string]any{"providerSpec": map[string]any{}}
		if err := c.Create(ctx, m); err != nil {
			if apierrors.IsAlreadyExists(err) {
				continue
			}
			return fmt.Errorf("creating Machine %s: %w", m.GetName(), err)
		}
		var addrs []any
		for _, a := range n.Status.Addresses {
			addrs = append(addrs, map[string]any{"type": string(a.Type), "address": a.Address})
		}
		m.Object["status"] = map[string]any{
			"phase": Running, "addresses": addrs,
			"nodeRef": map[string]any{"kind": "Node", "name": n.Name, "uid": string(n.UID)},
		}
		if err := c.Status().Update(ctx, m); err != nil {
			return fmt.Errorf("writing the status of Machine %s: %w", m.GetName(), err)
		}
	}
	return nil
}

// Functional is cluster-etcd-operator's MachineAPI.IsFunctional: Machine API is enabled (the
// ClusterVersion lists the MachineAPI capability in status.capabilities.enabledCapabilities) or
// available (the Machine kind is served), and a master Machine is Running.
func Functional(ctx context.Context, c client.Reader) (bool, error) {
	cv := &unstructured.Unstructured{}
	cv.SetGroupVersionKind(clusterVersion)
	enabled := false
	switch err := c.Get(ctx, client.ObjectKey{Name: "version"}, cv); {
	case err == nil:
		caps, _, _ := unstructured.NestedStringSlice(cv.Object, "status", "capabilities", "enabledCapabilities")
		enabled = slices.Contains(caps, Capability)
	case !apierrors.IsNotFound(err) && !meta.IsNoMatchError(err):
		return false, fmt.Errorf("reading the ClusterVersion: %w", err)
	}
	machines, served, err := masterMachines(ctx, c)
	if err != nil || !enabled && !served {
		return false, err
	}
	for _, m := range machines {
		if phase, _, _ := unstructured.NestedString(m.Object, "status", "phase"); phase == Running {
			return true, nil
		}
	}
	return false, nil
}

// MachineForNode is FindMachineByNodeInternalIP: a master Machine, not being deleted, whose
// status.addresses hold one of the Node's internal IPs. cluster-etcd-operator adds no member for a
// Node without one while Machine API is functional.
func MachineForNode(ctx context.Context, c client.Reader, node *corev1.Node) (string, error) {
	machines, _, err := masterMachines(ctx, c)
	if err != nil {
		return "", err
	}
	var ips []string
	for _, a := range node.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			ips = append(ips, a.Address)
		}
	}
	for _, m := range machines {
		if m.GetDeletionTimestamp() != nil {
			continue
		}
		addrs, _, _ := unstructured.NestedSlice(m.Object, "status", "addresses")
		for _, a := range addrs {
			am, _ := a.(map[string]any)
			if am["type"] == string(corev1.NodeInternalIP) && slices.Contains(ips, fmt.Sprint(am["address"])) {
				return m.GetName(), nil
			}
		}
	}
	return "", nil
}

// masterMachines lists the master Machines; served is false when the kind is not served.
func masterMachines(ctx context.Context, c client.Reader) (_ []unstructured.Unstructured, served bool, _ error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(machineListGVK)
	if err := c.List(ctx, list, client.InNamespace(Namespace), client.MatchingLabels{RoleLabel: "master"}); err != nil {
		if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("listing the master Machines: %w", err)
	}
	return list.Items, true, nil
}
