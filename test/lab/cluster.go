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

package lab

import (
	"context"
	"fmt"

	capm3v1 "github.com/metal3-io/cluster-api-provider-metal3/api/v1beta2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/bootstrap/api/v1alpha2"
	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/controlplane/api/v1alpha3"
)

// ClusterOptions describe a Metal3-backed OpenShift cluster, as a user would apply it.
type ClusterOptions struct {
	Namespace, Name string
	// ControlPlanes is the number of control-plane nodes: 1 (single-node OpenShift), 3, 4 or 5.
	ControlPlanes int32
	// Workers is the number of worker nodes, in a MachineDeployment.
	Workers int32
	// Version is the OpenShift version (distributionVersion).
	Version string
	// BaseDomain defaults to lab.example.com.
	BaseDomain string
}

const (
	apiVIP     = "192.168.111.5"
	ingressVIP = "192.168.111.4"
)

// ClusterObjects returns the objects of the cluster o: what a user applies to get a cluster.
func (l *Lab) ClusterObjects(o ClusterOptions) []client.Object {
	if o.BaseDomain == "" {
		o.BaseDomain = "lab.example.com"
	}
	ns, name := o.Namespace, o.Name
	meta := func(n string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: ns, Name: n, Labels: map[string]string{clusterv1.ClusterNameLabel: name}}
	}
	pullSecret := name + "-pull-secret"
	endpoint := capm3v1.APIEndpoint{Host: apiVIP, Port: 6443}
	config := controlplanev1.OpenshiftAssistedControlPlaneConfigSpec{
		BaseDomain:       o.BaseDomain,
		PullSecretRef:    &corev1.LocalObjectReference{Name: pullSecret},
		SSHAuthorizedKey: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOpenShiftLabKey lab@example.com",
	}
	if o.ControlPlanes > 1 {
		config.APIVIPs, config.IngressVIPs = []string{apiVIP}, []string{ingressVIP}
	} else {
		// Single-node OpenShift: the API is the node itself, found by name.
		endpoint.Host = fmt.Sprintf("api.%s.%s", name, o.BaseDomain)
	}
	objs := []client.Object{
		&corev1.Secret{
			ObjectMeta: meta(pullSecret),
			Type:       corev1.SecretTypeDockerConfigJson,
			StringData: map[string]string{corev1.DockerConfigJsonKey: `{"auths":{"quay.io":{"auth":"bGFiOmxhYg=="}}}`},
		},
		&clusterv1.Cluster{
			ObjectMeta: meta(name),
			Spec: clusterv1.ClusterSpec{
				ClusterNetwork: clusterv1.ClusterNetwork{
					Pods:     clusterv1.NetworkRanges{CIDRBlocks: []string{"10.128.0.0/14"}},
					Services: clusterv1.NetworkRanges{CIDRBlocks: []string{"172.30.0.0/16"}},
				},
				ControlPlaneRef: clusterv1.ContractVersionedObjectReference{
					APIGroup: controlplanev1.GroupVersion.Group, Kind: "OpenshiftAssistedControlPlane", Name: name,
				},
				InfrastructureRef: clusterv1.ContractVersionedObjectReference{
					APIGroup: capm3v1.GroupVersion.Group, Kind: "Metal3Cluster", Name: name,
				},
			},
		},
		&capm3v1.Metal3Cluster{ObjectMeta: meta(name), Spec: capm3v1.Metal3ClusterSpec{ControlPlaneEndpoint: endpoint}},
		metal3MachineTemplate(meta(name + "-controlplane")),
		&controlplanev1.OpenshiftAssistedControlPlane{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
				Labels:      map[string]string{clusterv1.ClusterNameLabel: name},
				Annotations: map[string]string{controlplanev1.ReleaseImageRepositoryAnnotation: l.Releases.Repository()}},
			Spec: controlplanev1.OpenshiftAssistedControlPlaneSpec{
				DistributionVersion: o.Version,
				Replicas:            ptr.To(o.ControlPlanes),
				Config:              config,
				MachineTemplate: controlplanev1.OpenshiftAssistedControlPlaneMachineTemplate{
					InfrastructureRef: clusterv1.ContractVersionedObjectReference{
						APIGroup: capm3v1.GroupVersion.Group, Kind: "Metal3MachineTemplate", Name: name + "-controlplane",
					},
				},
			},
		},
	}
	if o.Workers > 0 {
		objs = append(objs,
			metal3MachineTemplate(meta(name+"-workers")),
			&bootstrapv1.OpenshiftAssistedConfigTemplate{ObjectMeta: meta(name + "-workers")},
			&clusterv1.MachineDeployment{
				ObjectMeta: meta(name + "-workers"),
				Spec: clusterv1.MachineDeploymentSpec{
					ClusterName: name,
					Replicas:    ptr.To(o.Workers),
					// What Cluster API's defaulting webhook writes (the lab runs no webhooks of Cluster API).
					Rollout: clusterv1.MachineDeploymentRolloutSpec{Strategy: clusterv1.MachineDeploymentRolloutStrategy{
						Type: clusterv1.RollingUpdateMachineDeploymentStrategyType,
						RollingUpdate: clusterv1.MachineDeploymentRolloutStrategyRollingUpdate{
							MaxSurge: ptr.To(intstr.FromInt32(1)), MaxUnavailable: ptr.To(intstr.FromInt32(0)),
						},
					}},
					Selector: metav1.LabelSelector{MatchLabels: map[string]string{
						clusterv1.ClusterNameLabel: name, clusterv1.MachineDeploymentNameLabel: name + "-workers",
					}},
					Template: clusterv1.MachineTemplateSpec{
						ObjectMeta: clusterv1.ObjectMeta{Labels: map[string]string{
							clusterv1.ClusterNameLabel: name, clusterv1.MachineDeploymentNameLabel: name + "-workers",
						}},
						Spec: clusterv1.MachineSpec{
							ClusterName: name,
							Bootstrap: clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{
								APIGroup: bootstrapv1.GroupVersion.Group, Kind: "OpenshiftAssistedConfigTemplate", Name: name + "-workers",
							}},
							InfrastructureRef: clusterv1.ContractVersionedObjectReference{
								APIGroup: capm3v1.GroupVersion.Group, Kind: "Metal3MachineTemplate", Name: name + "-workers",
							},
						},
					},
				},
			})
	}
	return objs
}

// CreateCluster creates the objects of the cluster o.
func (l *Lab) CreateCluster(ctx context.Context, o ClusterOptions) error {
	for _, obj := range l.ClusterObjects(o) {
		if err := l.Mgmt.Client.Create(ctx, obj); err != nil {
			return fmt.Errorf("creating %T %s: %w", obj, obj.GetName(), err)
		}
	}
	return nil
}

// metal3MachineTemplate is the template of Metal3Machines whose hosts boot the discovery ISO that
// the bootstrap provider sets on each Metal3Machine: no image of its own, no disk cleaning.
func metal3MachineTemplate(meta metav1.ObjectMeta) *capm3v1.Metal3MachineTemplate {
	return &capm3v1.Metal3MachineTemplate{ObjectMeta: meta, Spec: capm3v1.Metal3MachineTemplateSpec{
		Template: capm3v1.Metal3MachineTemplateResource{Spec: capm3v1.Metal3MachineSpec{AutomatedCleaningMode: "disabled"}},
	}}
}
