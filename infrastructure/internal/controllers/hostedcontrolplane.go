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

package controllers

import (
	"context"
	"fmt"
	"strings"
	"time"

	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/infrastructure/v1beta1"
)

// Under HyperShift's agent platform the Cluster's control plane is a HostedControlPlane: the
// cluster is already running, and the Agents join it as day-2 workers. Its ClusterDeployment must
// say so, as openshift/cluster-api-provider-agent writes it (controllers/agentcluster_controller.go,
// getControlPlane and createClusterDeploymentObject): installed, named after the
// HostedControlPlane, with its base domain, pull secret and admin kubeconfig. The
// HostedControlPlane is read as an unstructured object of hypershift.openshift.io/v1beta1, as
// upstream reads it (HyperShift's API module would bring in its cloud providers' SDKs), through
// the API server: it is read once, when the ClusterDeployment is created.

const (
	hostedControlPlaneGroup = "hypershift.openshift.io"
	hostedControlPlaneKind  = "HostedControlPlane"
	// hostedControlPlaneWait is how long an AgentCluster waits before reading a HostedControlPlane
	// that has not reported its kubeconfig yet again (nothing here watches HostedControlPlanes).
	hostedControlPlaneWait = 10 * time.Second
)

// hostedControlPlane is what the ClusterDeployment of a HyperShift cluster takes from its
// HostedControlPlane.
type hostedControlPlane struct {
	name, baseDomain, pullSecret, kubeconfig, kubeadminPassword string
}

func isHostedControlPlane(ref clusterv1.ContractVersionedObjectReference) bool {
	return ref.APIGroup == hostedControlPlaneGroup && ref.Kind == hostedControlPlaneKind
}

// hostedControlPlane reads the Cluster's HostedControlPlane, or says what the AgentCluster waits
// for (the HostedControlPlane, or the fields HyperShift fills in as it starts). It reads nothing
// (nil, "") when the control plane is not a HostedControlPlane, or when the AgentCluster's
// ClusterDeployment exists already: one cluster-api-provider-agent created, which is adopted as
// it is.
func (r *AgentClusterReconciler) hostedControlPlane(ctx context.Context, ac *infrav1.AgentCluster, cluster *clusterv1.Cluster) (*hostedControlPlane, string, error) {
	ref := cluster.Spec.ControlPlaneRef
	if !isHostedControlPlane(ref) {
		return nil, "", nil
	}
	switch err := r.Client.Get(ctx, client.ObjectKeyFromObject(ac), &hivev1.ClusterDeployment{}); {
	case err == nil:
		return nil, "", nil
	case !apierrors.IsNotFound(err):
		return nil, "", fmt.Errorf("getting ClusterDeployment %s: %w", ac.Name, err)
	}
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(hostedControlPlaneGroup + "/v1beta1")
	u.SetKind(hostedControlPlaneKind)
	key := client.ObjectKey{Namespace: cluster.Namespace, Name: ref.Name}
	if err := r.APIReader.Get(ctx, key, u); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Sprintf("Waiting for HostedControlPlane %s of Cluster %s", key.Name, cluster.Name), nil
		}
		return nil, "", fmt.Errorf("getting HostedControlPlane %s: %w", key.Name, err)
	}
	hcp := &hostedControlPlane{name: ref.Name}
	var missing []string
	for _, f := range []struct {
		into *string
		path []string
	}{
		{&hcp.baseDomain, []string{"spec", "dns", "baseDomain"}},
		{&hcp.pullSecret, []string{"spec", "pullSecret", "name"}},
		{&hcp.kubeconfig, []string{"status", "kubeConfig", "name"}},
	} {
		if *f.into, _, _ = unstructured.NestedString(u.Object, f.path...); *f.into == "" {
			missing = append(missing, "."+strings.Join(f.path, "."))
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Sprintf("Waiting for HostedControlPlane %s to report %v", key.Name, missing), nil
	}
	hcp.kubeadminPassword, _, _ = unstructured.NestedString(u.Object, "status", "kubeadminPassword", "name")
	return hcp, "", nil
}

// describe makes cd and aci those of the running hosted cluster: installed, with the
// HostedControlPlane's names and Secrets; user-managed networking (HyperShift's workers have no
// VIPs), as upstream writes them.
func (hcp *hostedControlPlane) describe(cd *hivev1.ClusterDeployment, aci *hiveextv1beta1.AgentClusterInstall, cluster *clusterv1.Cluster) {
	cd.Spec.Installed = true
	cd.Spec.ClusterName = hcp.name
	cd.Spec.BaseDomain = hcp.baseDomain
	cd.Spec.PullSecretRef = &corev1.LocalObjectReference{Name: hcp.pullSecret}
	cd.Spec.ClusterMetadata = &hivev1.ClusterMetadata{
		ClusterID:                string(cluster.UID),
		InfraID:                  string(cluster.UID),
		AdminKubeconfigSecretRef: corev1.LocalObjectReference{Name: hcp.kubeconfig},
	}
	if hcp.kubeadminPassword != "" {
		cd.Spec.ClusterMetadata.AdminPasswordSecretRef = &corev1.LocalObjectReference{Name: hcp.kubeadminPassword}
	}
	aci.Spec.ProvisionRequirements.ControlPlaneAgents = 3
	aci.Spec.Networking.UserManagedNetworking = ptr.To(true)
}
