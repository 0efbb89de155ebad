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
	"errors"
	"fmt"
	"testing"
	"time"

	capm3v1beta2 "github.com/metal3-io/cluster-api-provider-metal3/api/v1beta2"
	configv1 "github.com/openshift/api/config/v1"
	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/controllers/clustercache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/controlplane/internal/release"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/foreign"
	capoascheme "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/scheme"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/fuzzpick"
)

// FuzzControlPlaneReconcile: no shape of an OpenshiftAssistedControlPlane and what surrounds it
// (Cluster, Machines and their configs, ClusterDeployment, AgentClusterInstall, kubeconfig
// Secrets, machine template, the workload cluster's ClusterVersion, a release that cannot be
// read, etcd that cannot be reached) that the API server accepts makes a reconcile panic or hang.
// Errors are fine (they are reported); a panic is not. `go test` runs the seeds;
// `go test -fuzz FuzzControlPlaneReconcile` explores.
func FuzzControlPlaneReconcile(f *testing.F) {
	scheme, err := capoascheme.New(bootstrapv1.AddToScheme, controlplanev1.AddToScheme)
	if err != nil {
		f.Fatal(err)
	}
	workloadScheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{configv1.Install, corev1.AddToScheme} {
		if err := add(workloadScheme); err != nil {
			f.Fatal(err)
		}
	}
	f.Add([]byte{})
	f.Add([]byte{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1})
	f.Add([]byte{2, 0, 2, 0, 3, 1, 2, 2, 0, 1, 3, 2, 1, 0, 2, 3, 1, 1, 2, 0, 0, 2, 1, 3, 2, 2, 1, 0, 3, 1, 2, 2})
	f.Fuzz(func(t *testing.T, data []byte) {
		p := fuzzpick.New(data)
		objs, world := controlPlaneFuzzObjects(p)
		c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).
			WithStatusSubresource(&controlplanev1.OpenshiftAssistedControlPlane{}, &clusterv1.Machine{}, &clusterv1.Cluster{},
				&bootstrapv1.OpenshiftAssistedConfig{}, &hiveextv1beta1.AgentClusterInstall{}, &hivev1.ClusterDeployment{}).
			Build()
		var cache clustercache.ClusterCache = unreachableWorkload{}
		if world.workload != nil {
			cache = reachableWorkload{client: fake.NewClientBuilder().WithScheme(workloadScheme).WithObjects(world.workload...).Build()}
		}
		r := &OpenshiftAssistedControlPlaneReconciler{Client: c, APIReader: c, Recorder: events.NewFakeRecorder(100), Release: world.release,
			ClusterCache: cache, Etcd: refusedEtcd{}, Foreign: foreign.Policy{Timeout: time.Minute}}
		all := append(objs, world.workload...)
		fuzzpick.NoPanic(t, all, func() {
			for range 4 {
				_, _ = r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "cp"}})
			}
		})
	})
}

// fuzzWorld is what a fuzz input builds outside the management cluster's objects.
type fuzzWorld struct {
	// workload are the workload cluster's objects; nil when it cannot be reached.
	workload []client.Object
	release  ReleaseReader
}

// controlPlaneFuzzObjects builds a control plane cp of Cluster c1 in namespace ns and what
// surrounds it from p. The first option of every choice is the healthy one: the empty input is an
// installed three-node control plane whose workload cluster answers.
func controlPlaneFuzzObjects(p *fuzzpick.Picker) ([]client.Object, fuzzWorld) {
	const ns = "ns"
	now := metav1.Now()
	deleting := func(m *metav1.ObjectMeta, finalizer string) {
		if p.Intn(5) == 4 {
			m.DeletionTimestamp = &now
			m.Finalizers = append(m.Finalizers, finalizer) // the API server keeps only objects being deleted that have one
		}
	}
	versions := []string{"4.17.3", "4.18.1", "", "4.16.0", "bogus", "4.17.3-rc.1"}

	oacp := &controlplanev1.OpenshiftAssistedControlPlane{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cp", UID: "cp-uid",
		Labels:          map[string]string{clusterv1.ClusterNameLabel: "c1"},
		Finalizers:      []string{controlplanev1.OpenshiftAssistedControlPlaneFinalizer},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: "c1", UID: "c1-uid"}}}}
	switch p.Intn(4) {
	case 1:
		oacp.OwnerReferences = nil
	case 2:
		oacp.Labels = nil
	case 3:
		oacp.Finalizers = nil
	}
	deleting(&oacp.ObjectMeta, "other.example.com/finalizer")
	oacp.Annotations = p.Map([]string{controlplanev1.InstallConfigOverrideAnnotation, controlplanev1.ReleaseImageRepositoryAnnotation, clusterv1.PausedAnnotation,
		"clusterctl.cluster.x-k8s.io/delete-for-move"}, []string{`{"fips":true}`, "{", "", "quay.io/openshift-release-dev/ocp-release", "not a repo"}, true)
	oacp.Spec.Replicas = ptr.To([]int32{3, 1, 5, 0, 2}[p.Intn(5)])
	if p.Intn(6) == 5 {
		oacp.Spec.Replicas = nil
	}
	oacp.Spec.DistributionVersion = p.Pick(versions...)
	oacp.Spec.Config.BaseDomain = p.Pick("example.com", "")
	switch p.Intn(4) {
	case 1:
		oacp.Spec.Config.APIVIPs, oacp.Spec.Config.IngressVIPs = []string{"192.0.2.10"}, []string{"192.0.2.11"}
	case 2:
		oacp.Spec.Config.APIVIPs, oacp.Spec.Config.IngressVIPs = []string{"fd00::10", "192.0.2.10"}, []string{"fd00::11"}
	case 3:
		oacp.Spec.Config.APIVIPs = []string{"not-an-ip"}
	}
	oacp.Spec.Config.MachineNetworks = [][]string{nil, {"192.0.2.0/24"}, {"fd00::/64", "192.0.2.0/24"}, {"fd00::/64"}, {"not-a-cidr"}}[p.Intn(5)]
	if p.Bool() {
		oacp.Spec.Config.PullSecretRef = &corev1.LocalObjectReference{Name: p.Pick("pull", "", "missing")}
	}
	oacp.Spec.MachineTemplate.Spec.InfrastructureRef = clusterv1.ContractVersionedObjectReference{APIGroup: capm3v1beta2.GroupVersion.Group, Kind: "Metal3MachineTemplate", Name: "cp"}
	switch p.Intn(4) {
	case 1:
		oacp.Spec.MachineTemplate.Spec.InfrastructureRef.Name = "gone"
	case 2:
		oacp.Spec.MachineTemplate.Spec.InfrastructureRef = clusterv1.ContractVersionedObjectReference{}
	case 3:
		oacp.Spec.MachineTemplate.Spec.InfrastructureRef.Kind = "Unknown"
	}
	oacp.Spec.OpenshiftAssistedConfigSpec.NodeRegistration.Name = p.Pick("", "master-0")
	switch p.Intn(4) {
	case 3:
		// Two nodes and an arbiter (whatever replicas was picked: the API server would refuse
		// some of these shapes; the reconciler must not panic on them either).
		oacp.Spec.Arbiter = &controlplanev1.OpenshiftAssistedControlPlaneArbiterSpec{MachineTemplate: controlplanev1.OpenshiftAssistedControlPlaneMachineTemplate{
			Spec: controlplanev1.OpenshiftAssistedControlPlaneMachineTemplateSpec{InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: capm3v1beta2.GroupVersion.Group, Kind: "Metal3MachineTemplate", Name: p.Pick("arbiter", "gone")}}}}
	case 2:
		// Two nodes with fencing, on a hub whose Agent CRD the fake client does not serve.
		oacp.Spec.Fencing = &controlplanev1.OpenshiftAssistedControlPlaneFencingSpec{CredentialsFrom: controlplanev1.FencingCredentialsFromBareMetalHost}
	}
	if p.Bool() {
		oacp.Status.DistributionVersion = p.Pick(versions...)
		oacp.Status.Version = p.Pick("v1.30.4", "", "bogus")
		oacp.Status.Initialization.ControlPlaneInitialized = ptr.To(p.Bool())
	}
	objs := []client.Object{oacp}

	cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c1", UID: "c1-uid"},
		Spec: clusterv1.ClusterSpec{Paused: ptr.To(p.Intn(6) == 5),
			ControlPlaneRef: clusterv1.ContractVersionedObjectReference{APIGroup: controlplanev1.GroupVersion.Group, Kind: "OpenshiftAssistedControlPlane", Name: "cp"}}}
	switch p.Intn(4) {
	case 1:
		cluster.Spec.ClusterNetwork.Pods.CIDRBlocks, cluster.Spec.ClusterNetwork.Services.CIDRBlocks = []string{"10.0.0.0/26"}, []string{"bad"}
	case 2:
		cluster.Spec.ClusterNetwork.Pods.CIDRBlocks = []string{"fd01::/48", "10.128.0.0/14"}
	}
	deleting(&cluster.ObjectMeta, "cluster.cluster.x-k8s.io")
	if !p.Bool() {
		objs = append(objs, cluster)
	}

	owner := []metav1.OwnerReference{*metav1.NewControllerRef(oacp, controlplanev1.GroupVersion.WithKind("OpenshiftAssistedControlPlane"))}
	if !p.Bool() {
		cd := &hivev1.ClusterDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c1", OwnerReferences: owner},
			Spec: hivev1.ClusterDeploymentSpec{ClusterName: "c1", BaseDomain: "example.com", Installed: p.Intn(3) == 0}}
		if p.Bool() {
			cd.OwnerReferences = nil
		}
		deleting(&cd.ObjectMeta, "hive.openshift.io/deprovision")
		objs = append(objs, cd)
	}
	if !p.Bool() {
		aci := &hiveextv1beta1.AgentClusterInstall{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c1", OwnerReferences: owner}}
		aci.Status.DebugInfo.State = p.Pick("adding-hosts", "installed", "", "installing", "finalizing", "error", "insufficient", "ready")
		if !p.Bool() {
			aci.Spec.ClusterMetadata = &hivev1.ClusterMetadata{ClusterID: "id", InfraID: "infra",
				AdminKubeconfigSecretRef: corev1.LocalObjectReference{Name: p.Pick("c1-admin-kubeconfig", "", "gone")}}
		}
		if p.Bool() {
			aci.Status.Conditions = []hivev1.ClusterInstallCondition{{Type: hiveextv1beta1.ClusterSpecSyncedCondition,
				Status: corev1.ConditionStatus(p.Pick("False", "True", "")), Reason: p.Pick(hiveextv1beta1.ClusterInputErrorReason, ""), Message: p.String(16)}}
		}
		deleting(&aci.ObjectMeta, "agentclusterinstall.agent-install.openshift.io/ai-deprovision")
		objs = append(objs, aci)
	}
	if !p.Bool() {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c1-admin-kubeconfig"}}
		switch p.Intn(3) {
		case 0:
			s.Data = map[string][]byte{"kubeconfig": []byte("apiVersion: v1\nkind: Config\n")}
		case 1:
			s.Data = map[string][]byte{"kubeconfig": {}}
		}
		objs = append(objs, s)
	}
	if p.Bool() {
		// A <cluster>-kubeconfig Secret there already: empty, someone else's, or ours.
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c1-kubeconfig"}}
		if p.Bool() {
			s.OwnerReferences = owner
			s.Data = map[string][]byte{"value": []byte(p.String(8))}
		}
		objs = append(objs, s)
	}
	if !p.Bool() {
		objs = append(objs, &capm3v1beta2.Metal3MachineTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cp"}})
		objs = append(objs, &capm3v1beta2.Metal3MachineTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "arbiter"}})
		for _, plural := range []string{"metal3machinetemplates", "metal3machines"} {
			objs = append(objs, &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{
				Name: plural + "." + capm3v1beta2.GroupVersion.Group, Labels: map[string]string{"cluster.x-k8s.io/v1beta2": capm3v1beta2.GroupVersion.Version}}})
		}
	}

	nodes := []client.Object{}
	for i := range []int{3, 2, 4, 0, 1}[p.Intn(5)] {
		name := fmt.Sprintf("cp-%d", i)
		m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("m-" + name),
			CreationTimestamp: metav1.NewTime(now.Add(time.Duration(i) * time.Minute)),
			Labels:            map[string]string{clusterv1.ClusterNameLabel: "c1", clusterv1.MachineControlPlaneLabel: "", clusterv1.MachineControlPlaneNameLabel: "cp"},
			Annotations:       map[string]string{controlplanev1.EtcdMemberHookAnnotation: ""},
			OwnerReferences:   owner},
			Spec: clusterv1.MachineSpec{ClusterName: "c1", Version: p.Pick("v1.30.4", "", "bogus"),
				Bootstrap: clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{
					APIGroup: bootstrapv1.GroupVersion.Group, Kind: "OpenshiftAssistedConfig", Name: name}},
				InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: capm3v1beta2.GroupVersion.Group, Kind: "Metal3Machine", Name: name}}}
		if p.Intn(4) == 3 {
			m.Labels[controlplanev1.ArbiterMachineLabel] = ""
		}
		if p.Bool() {
			m.Annotations = p.Map([]string{controlplanev1.EtcdMemberHookAnnotation, clusterv1.DeleteMachineAnnotation, controlplanev1.RemediationForAnnotation,
				controlplanev1.RemediationInProgressAnnotation, clusterv1.PreTerminateDeleteHookAnnotationPrefix + "/other"}, []string{"", "{", `{"machine":"cp-0","timestamp":"2026-01-01T00:00:00Z","retryCount":1}`}, true)
		}
		if p.Bool() {
			m.OwnerReferences = nil
		}
		if !p.Bool() {
			m.Status.NodeRef = clusterv1.MachineNodeReference{Name: p.Pick("master-"+fmt.Sprint(i), "")}
			m.Spec.ProviderID = "metal3://ns/host-" + fmt.Sprint(i)
			nodes = append(nodes, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "master-" + fmt.Sprint(i)}})
		}
		m.Status.Conditions = []metav1.Condition{{Type: clusterv1.MachineReadyCondition, Status: metav1.ConditionStatus(p.Pick("True", "False", "Unknown"))}}
		if p.Bool() {
			m.Status.Conditions = append(m.Status.Conditions, metav1.Condition{Type: clusterv1.MachineHealthCheckSucceededCondition, Status: metav1.ConditionFalse},
				metav1.Condition{Type: clusterv1.MachineOwnerRemediatedCondition, Status: metav1.ConditionFalse})
		}
		m.Spec.FailureDomain = p.Pick("", "fd1", "fd2")
		deleting(&m.ObjectMeta, clusterv1.MachineFinalizer)
		objs = append(objs, m)
		if !p.Bool() {
			config := &bootstrapv1.OpenshiftAssistedConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
				Labels: map[string]string{clusterv1.ClusterNameLabel: "c1", clusterv1.MachineControlPlaneLabel: ""}, OwnerReferences: owner}}
			config.Spec.NodeRegistration.Name = p.Pick("", "other")
			objs = append(objs, config)
		}
	}

	world := fuzzWorld{release: fakeRelease{err: nil}}
	switch p.Intn(3) {
	case 1:
		world.release = fakeRelease{err: errors.New("reading the release image: 401 Unauthorized")}
	case 2:
		world.release = fakeRelease{info: release.Info{KubernetesVersion: "bogus"}}
	}
	if p.Intn(4) != 3 {
		cv := &configv1.ClusterVersion{ObjectMeta: metav1.ObjectMeta{Name: "version"}}
		cv.Status.Desired.Version = p.Pick(versions...)
		switch p.Intn(3) {
		case 0:
			cv.Status.History = []configv1.UpdateHistory{{State: configv1.CompletedUpdate, Version: cv.Status.Desired.Version}}
		case 1:
			cv.Status.History = []configv1.UpdateHistory{{State: configv1.PartialUpdate, Version: p.Pick(versions...)}}
		}
		if p.Bool() {
			cv.Spec.DesiredUpdate = &configv1.Update{Version: p.Pick(versions...), Image: p.Pick("", "quay.io/x@sha256:00")}
		}
		cv.Status.Conditions = []configv1.ClusterOperatorStatusCondition{{Type: configv1.ClusterStatusConditionType(p.Pick("Progressing", "Failing", "Available")),
			Status: configv1.ConditionStatus(p.Pick("True", "False", ""))}}
		world.workload = append(nodes, cv)
	}
	return objs, world
}

// fakeRelease answers every release read with info or err.
type fakeRelease struct {
	info release.Info
	err  error
}

func (f fakeRelease) Read(context.Context, string, release.Access) (release.Info, error) {
	if f.err != nil {
		return release.Info{}, f.err
	}
	if f.info.KubernetesVersion != "" {
		return f.info, nil
	}
	return release.Info{Digest: "sha256:00", DigestImage: "quay.io/x@sha256:00", KubernetesVersion: "v1.30.4"}, nil
}

// unreachableWorkload is a ClusterCache that has not connected to the workload cluster.
type unreachableWorkload struct{ clustercache.ClusterCache }

func (unreachableWorkload) GetClient(context.Context, client.ObjectKey) (client.Client, error) {
	return nil, clustercache.ErrClusterNotConnected
}

func (unreachableWorkload) GetReader(context.Context, client.ObjectKey) (client.Reader, error) {
	return nil, clustercache.ErrClusterNotConnected
}

func (unreachableWorkload) GetRESTConfig(context.Context, client.ObjectKey) (*rest.Config, error) {
	return nil, clustercache.ErrClusterNotConnected
}

func (unreachableWorkload) Watch(context.Context, client.ObjectKey, clustercache.Watcher) error {
	return clustercache.ErrClusterNotConnected
}

// reachableWorkload is a ClusterCache connected to a workload cluster whose client is client.
type reachableWorkload struct {
	clustercache.ClusterCache
	client client.Client
}

func (w reachableWorkload) GetClient(context.Context, client.ObjectKey) (client.Client, error) {
	return w.client, nil
}

func (w reachableWorkload) GetReader(context.Context, client.ObjectKey) (client.Reader, error) {
	return w.client, nil
}

func (reachableWorkload) GetRESTConfig(context.Context, client.ObjectKey) (*rest.Config, error) {
	return &rest.Config{Host: "https://workload.invalid"}, nil
}

func (reachableWorkload) Watch(context.Context, client.ObjectKey, clustercache.Watcher) error {
	return nil
}

// refusedEtcd is an etcd whose members do not answer.
type refusedEtcd struct{}

func (refusedEtcd) Connect(_ context.Context, _ *rest.Config, node string) (*clientv3.Client, error) {
	return nil, fmt.Errorf("connecting to the etcd member of node %s: connection refused", node)
}
