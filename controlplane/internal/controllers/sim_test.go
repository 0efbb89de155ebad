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

package controllers_test

import (
	"context"
	"testing"
	"time"

	capm3v1beta2 "github.com/metal3-io/cluster-api-provider-metal3/api/v1beta2"
	. "github.com/onsi/gomega"
	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
)

const (
	timeout  = 90 * time.Second
	interval = 250 * time.Millisecond
)

// fixture is one CAPI Cluster with an OpenshiftAssistedControlPlane, in its own namespace.
type fixture struct {
	ns      string
	cluster *clusterv1.Cluster
	oacp    *controlplanev1.OpenshiftAssistedControlPlane
}

type fixtureOptions struct {
	namespace        string
	clusterName      string
	replicas         int32
	vips             []string
	pods, services   []string
	failureDomains   []string
	workers          int32
	version          string
	withoutOwnership bool
	paused           bool
	// arbiter makes the cluster two-node OpenShift with an arbiter, whose Machine is cloned from
	// a template of its own (<cluster>-arbiter).
	arbiter bool
	// fencing makes the cluster two-node OpenShift with fencing (spec.fencing).
	fencing bool
	// releaseRepository overrides the release image repository (default: the in-process registry;
	// "-": no override, OpenShift's repository on quay.io).
	releaseRepository string
	// imageRegistry names the ConfigMap of spec.config.imageRegistryRef.
	imageRegistry string
	// pullSecret is the .dockerconfigjson of the pull secret (default: no auths). A pull secret
	// of that name that exists in the namespace is kept.
	pullSecret []byte
}

// newFixture creates what a user (and Cluster API's Cluster controller) would: an infrastructure
// template, a Cluster whose infrastructure is provisioned, workers if asked, and the control plane.
func newFixture(ctx context.Context, t *testing.T, o fixtureOptions) *fixture {
	t.Helper()
	g := NewWithT(t)
	ns := o.namespace
	if ns == "" {
		var err error
		ns, err = mgmt.CreateNamespace(ctx, "cp")
		g.Expect(err).NotTo(HaveOccurred())
	}
	if o.clusterName == "" {
		o.clusterName = "c1"
	}
	if o.version == "" {
		o.version = "4.17.3"
	}
	tmpl := &capm3v1beta2.Metal3MachineTemplate{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: o.clusterName + "-cp"},
		Spec: capm3v1beta2.Metal3MachineTemplateSpec{Template: capm3v1beta2.Metal3MachineTemplateResource{
			Spec: capm3v1beta2.Metal3MachineSpec{Image: capm3v1beta2.Image{URL: "http://images.example.com/live.iso", Checksum: ptr.To("http://images.example.com/live.iso.sha256"), DiskFormat: "live-iso"}},
		}},
	}
	g.Expect(mgmt.Client.Create(ctx, tmpl)).To(Succeed())

	cluster := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: o.clusterName},
		Spec: clusterv1.ClusterSpec{
			ControlPlaneRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: controlplanev1.GroupVersion.Group, Kind: "OpenshiftAssistedControlPlane", Name: o.clusterName,
			},
		},
	}
	if o.paused {
		cluster.Spec.Paused = ptr.To(true)
	}
	cluster.Spec.ClusterNetwork.Pods.CIDRBlocks = o.pods
	cluster.Spec.ClusterNetwork.Services.CIDRBlocks = o.services
	g.Expect(mgmt.Client.Create(ctx, cluster)).To(Succeed())
	// What Cluster API's Cluster controller reports once the infrastructure is provisioned.
	cluster.Status.Initialization.InfrastructureProvisioned = ptr.To(true)
	for _, fd := range o.failureDomains {
		cluster.Status.FailureDomains = append(cluster.Status.FailureDomains, clusterv1.FailureDomain{Name: fd, ControlPlane: ptr.To(true)})
	}
	g.Expect(mgmt.Client.Status().Update(ctx, cluster)).To(Succeed())

	if o.workers > 0 {
		md := &clusterv1.MachineDeployment{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: o.clusterName + "-workers", Labels: map[string]string{clusterv1.ClusterNameLabel: o.clusterName}},
			Spec: clusterv1.MachineDeploymentSpec{
				ClusterName: o.clusterName,
				Replicas:    ptr.To(o.workers),
				Selector:    metav1.LabelSelector{MatchLabels: map[string]string{"pool": "workers"}},
				Template: clusterv1.MachineTemplateSpec{
					ObjectMeta: clusterv1.ObjectMeta{Labels: map[string]string{"pool": "workers"}},
					Spec: clusterv1.MachineSpec{
						ClusterName: o.clusterName,
						Bootstrap: clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{
							APIGroup: "bootstrap.cluster.x-k8s.io", Kind: "OpenshiftAssistedConfigTemplate", Name: "workers"}},
						InfrastructureRef: clusterv1.ContractVersionedObjectReference{
							APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "Metal3MachineTemplate", Name: tmpl.Name},
					},
				},
			},
		}
		g.Expect(mgmt.Client.Create(ctx, md)).To(Succeed())
	}

	if o.releaseRepository == "" {
		o.releaseRepository = releaseRepo
	}
	if o.pullSecret == nil {
		o.pullSecret = []byte(`{"auths":{}}`)
	}
	pullSecret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pull-secret"},
		Type:       corev1.SecretTypeDockerConfigJson,
		Data:       map[string][]byte{corev1.DockerConfigJsonKey: o.pullSecret},
	}
	g.Expect(client.IgnoreAlreadyExists(mgmt.Client.Create(ctx, pullSecret))).To(Succeed())
	oacp := &controlplanev1.OpenshiftAssistedControlPlane{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: o.clusterName,
			Labels: map[string]string{clusterv1.ClusterNameLabel: o.clusterName},
		},
		Spec: controlplanev1.OpenshiftAssistedControlPlaneSpec{
			Replicas:            ptr.To(o.replicas),
			DistributionVersion: o.version,
			Config: controlplanev1.OpenshiftAssistedControlPlaneConfigSpec{
				BaseDomain:    "example.com",
				APIVIPs:       o.vips,
				IngressVIPs:   o.vips,
				PullSecretRef: &corev1.LocalObjectReference{Name: "pull-secret"},
			},
			MachineTemplate: controlplanev1.OpenshiftAssistedControlPlaneMachineTemplate{
				Spec: controlplanev1.OpenshiftAssistedControlPlaneMachineTemplateSpec{InfrastructureRef: clusterv1.ContractVersionedObjectReference{
					APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "Metal3MachineTemplate", Name: tmpl.Name,
				}},
			},
		},
	}
	if o.releaseRepository != "-" {
		oacp.Annotations = map[string]string{controlplanev1.ReleaseImageRepositoryAnnotation: o.releaseRepository}
	}
	if o.imageRegistry != "" {
		oacp.Spec.Config.ImageRegistryRef = &corev1.LocalObjectReference{Name: o.imageRegistry}
	}
	if o.arbiter {
		arbiterTmpl := tmpl.DeepCopy()
		arbiterTmpl.ObjectMeta = metav1.ObjectMeta{Namespace: ns, Name: o.clusterName + "-arbiter"}
		g.Expect(mgmt.Client.Create(ctx, arbiterTmpl)).To(Succeed())
		oacp.Spec.Arbiter = &controlplanev1.OpenshiftAssistedControlPlaneArbiterSpec{
			MachineTemplate: controlplanev1.OpenshiftAssistedControlPlaneMachineTemplate{
				ObjectMeta: clusterv1.ObjectMeta{Labels: map[string]string{"size": "small"}},
				Spec: controlplanev1.OpenshiftAssistedControlPlaneMachineTemplateSpec{InfrastructureRef: clusterv1.ContractVersionedObjectReference{
					APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "Metal3MachineTemplate", Name: arbiterTmpl.Name,
				}},
			},
		}
	}
	if o.fencing {
		oacp.Spec.Fencing = &controlplanev1.OpenshiftAssistedControlPlaneFencingSpec{CredentialsFrom: controlplanev1.FencingCredentialsFromBareMetalHost}
	}
	if !o.withoutOwnership {
		// What Cluster API's Cluster controller does for the control plane it references.
		oacp.OwnerReferences = []metav1.OwnerReference{{
			APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: cluster.Name, UID: cluster.UID,
		}}
	}
	g.Expect(mgmt.Client.Create(ctx, oacp)).To(Succeed())
	return &fixture{ns: ns, cluster: cluster, oacp: oacp}
}

func (f *fixture) key() client.ObjectKey { return client.ObjectKeyFromObject(f.oacp) }

// getOACP returns the control plane as it is now.
func (f *fixture) getOACP(ctx context.Context, g Gomega) *controlplanev1.OpenshiftAssistedControlPlane {
	o := &controlplanev1.OpenshiftAssistedControlPlane{}
	g.Expect(mgmt.Client.Get(ctx, f.key(), o)).To(Succeed())
	return o
}

// machines returns the control plane's Machines.
func (f *fixture) machines(ctx context.Context, g Gomega) []clusterv1.Machine {
	list := &clusterv1.MachineList{}
	g.Expect(mgmt.Client.List(ctx, list, client.InNamespace(f.ns), client.MatchingLabels{
		clusterv1.ClusterNameLabel: f.cluster.Name, clusterv1.MachineControlPlaneNameLabel: f.oacp.Name})).To(Succeed())
	return list.Items
}

// aci waits for the AgentClusterInstall and returns it.
func (f *fixture) aci(ctx context.Context, g Gomega) *hiveextv1beta1.AgentClusterInstall {
	aci := &hiveextv1beta1.AgentClusterInstall{}
	g.Eventually(func() error {
		return mgmt.Client.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: f.cluster.Name}, aci)
	}, timeout, interval).Should(Succeed())
	return aci
}

// simulateInstall plays assisted-service installing the cluster: the AgentClusterInstall goes
// through the installing state, then assisted-service writes the admin kubeconfig (pointing at
// the workload API server) and reports the cluster installed. It returns when the control plane
// reports the installing state, then the installation.
func (f *fixture) simulateInstall(ctx context.Context, t *testing.T) {
	t.Helper()
	g := NewWithT(t)
	aci := f.aci(ctx, g)
	g.Eventually(func(g Gomega) {
		g.Expect(mgmt.Client.Get(ctx, client.ObjectKeyFromObject(aci), aci)).To(Succeed())
		aci.Status.DebugInfo.State = "installing"
		aci.Status.DebugInfo.StateInfo = "Installation in progress"
		aci.Status.Progress.TotalPercentage = 42
		aci.Status.ControlPlaneAgentsReady = aci.Spec.ProvisionRequirements.ControlPlaneAgents
		g.Expect(mgmt.Client.Status().Update(ctx, aci)).To(Succeed())
	}, timeout, interval).Should(Succeed())
	g.Eventually(func(g Gomega) {
		c := conditions.Get(f.getOACP(ctx, g), controlplanev1.AvailableCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(controlplanev1.InstallingReason))
		g.Expect(c.Message).To(ContainSubstring("installing (Installation in progress), 42% done"))
	}, timeout, interval).Should(Succeed())

	admin := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: f.cluster.Name + "-admin-kubeconfig"},
		Data:       map[string][]byte{"kubeconfig": workloadKubeconfig},
	}
	g.Expect(mgmt.Client.Create(ctx, admin)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(mgmt.Client.Get(ctx, client.ObjectKeyFromObject(aci), aci)).To(Succeed())
		aci.Spec.ClusterMetadata = &hivev1.ClusterMetadata{
			ClusterID: "9b1e9e1c-0000-4000-8000-000000000001", InfraID: f.cluster.Name + "-x1",
			AdminKubeconfigSecretRef: corev1.LocalObjectReference{Name: admin.Name},
		}
		g.Expect(mgmt.Client.Update(ctx, aci)).To(Succeed())
	}, timeout, interval).Should(Succeed())
	// The installation leaves the workload cluster's ClusterVersion at the installed release.
	g.Expect(createClusterVersion(ctx, f.oacp.Spec.DistributionVersion)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(mgmt.Client.Get(ctx, client.ObjectKeyFromObject(aci), aci)).To(Succeed())
		aci.Status.DebugInfo.State = "installed"
		aci.Status.DebugInfo.StateInfo = "Cluster is installed"
		aci.Status.Progress.TotalPercentage = 100
		aci.Status.Conditions = []hivev1.ClusterInstallCondition{{
			Type: hivev1.ClusterInstallCompleted, Status: corev1.ConditionTrue, Reason: "InstallationCompleted",
			Message: "The installation has completed: Cluster is installed", LastTransitionTime: metav1.Now(), LastProbeTime: metav1.Now(),
		}}
		g.Expect(mgmt.Client.Status().Update(ctx, aci)).To(Succeed())
	}, timeout, interval).Should(Succeed())
}

// simulateMachinesReady plays Cluster API's Machine controller for hosts that joined the cluster:
// every control-plane Machine of the fixture becomes Ready and Available, until ctx is done.
func (f *fixture) simulateMachinesReady(ctx context.Context) {
	go func() {
		for ctx.Err() == nil {
			list := &clusterv1.MachineList{}
			if err := mgmt.Client.List(ctx, list, client.InNamespace(f.ns)); err == nil {
				for i := range list.Items {
					m := &list.Items[i]
					if conditions.IsTrue(m, clusterv1.MachineReadyCondition) || !m.DeletionTimestamp.IsZero() {
						continue
					}
					for _, ct := range []string{clusterv1.MachineReadyCondition, clusterv1.MachineAvailableCondition} {
						conditions.Set(m, metav1.Condition{Type: ct, Status: metav1.ConditionTrue, Reason: "Simulated"})
					}
					_ = mgmt.Client.Status().Update(ctx, m)
				}
			}
			time.Sleep(200 * time.Millisecond)
		}
	}()
}

// expectNothingOnAnOlderHub waits for a Warning event on the fixture's namespace containing
// warning, then checks that the control plane created no AgentClusterInstall and no Machine: what
// it does for a topology the hub's assisted-service cannot install.
func (f *fixture) expectNothingOnAnOlderHub(ctx context.Context, g Gomega, warning string) {
	g.Eventually(func(g Gomega) {
		events := &corev1.EventList{}
		g.Expect(mgmt.Client.List(ctx, events, client.InNamespace(f.ns))).To(Succeed())
		warnings := []string{}
		for _, e := range events.Items {
			if e.Type == corev1.EventTypeWarning {
				warnings = append(warnings, e.Message)
			}
		}
		g.Expect(warnings).To(ContainElement(ContainSubstring(warning)))
	}, timeout, interval).Should(Succeed())
	g.Expect(apierrors.IsNotFound(mgmt.Client.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: f.cluster.Name}, &hiveextv1beta1.AgentClusterInstall{}))).
		To(BeTrue(), "no AgentClusterInstall on a hub that cannot install the cluster")
	g.Expect(f.machines(ctx, g)).To(BeEmpty(), "no host is provisioned for a cluster the hub cannot install")
}
