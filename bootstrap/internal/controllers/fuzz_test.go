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
	"testing"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	capm3v1beta2 "github.com/metal3-io/cluster-api-provider-metal3/api/v1beta2"
	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	"github.com/openshift/assisted-service/models"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	capoascheme "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/scheme"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/fuzzpick"
)

// FuzzConfigReconcile: no shape of an OpenshiftAssistedConfig and what surrounds it (Machine,
// Cluster, ClusterDeployment, AgentClusterInstall, InfraEnv, Metal3Machine, BareMetalHost,
// Agents) that the API server accepts makes a reconcile panic or hang: nil or empty maps,
// references to nothing, annotations holding garbage, objects being deleted, InfraEnvs owned by
// someone else, Agents without inventory, host metadata and the variables that name it, names of
// another tenant's objects. Errors are fine (they are reported); a panic is not, nor a read or
// write in another tenant's namespace.
// `go test` runs the seeds; `go test -fuzz FuzzConfigReconcile` explores.
func FuzzConfigReconcile(f *testing.F) {
	scheme, err := capoascheme.New(bootstrapv1.AddToScheme)
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte{})
	f.Add([]byte{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1})
	f.Add([]byte{2, 0, 2, 0, 3, 1, 2, 2, 0, 1, 3, 2, 1, 0, 2, 3, 1, 1, 2, 0, 0, 2, 1, 3, 2, 2, 1, 0, 3, 1, 2, 2})
	f.Fuzz(func(t *testing.T, data []byte) {
		objs := configFuzzObjects(fuzzpick.New(data))
		// Nothing in another tenant's namespace is read or written.
		c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).
			WithInterceptorFuncs(fuzzpick.Confined(t, otherNS)).
			WithStatusSubresource(&bootstrapv1.OpenshiftAssistedConfig{}, &clusterv1.Machine{}, &clusterv1.Cluster{}, &aiv1beta1.InfraEnv{},
				&aiv1beta1.Agent{}, &capm3v1beta2.Metal3Machine{}, &bmov1alpha1.BareMetalHost{}, &hiveextv1beta1.AgentClusterInstall{}).
			Build()
		r := &OpenshiftAssistedConfigReconciler{Client: c, Recorder: events.NewFakeRecorder(100)}
		fuzzpick.NoPanic(t, objs, func() {
			for range 4 {
				_, _ = r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "m1"}})
			}
		})
	})
}

// otherNS is another tenant's namespace, whose objects the fuzzed objects may name.
const otherNS = "other-tenant"

// configFuzzObjects builds a config m1 in namespace ns and what surrounds it from p. The first
// option of every choice (the one past the end of the input) is the healthy one: the empty input
// is a Metal3 worker whose host registered, and each byte turns one piece away from it.
func configFuzzObjects(p *fuzzpick.Picker) []client.Object {
	const ns, mac = "ns", "52:54:00:00:00:01"
	now := metav1.Now()
	deleting := func(m *metav1.ObjectMeta, finalizer string) {
		if p.Intn(4) == 3 {
			m.DeletionTimestamp = &now
			m.Finalizers = append(m.Finalizers, finalizer) // the API server keeps only objects being deleted that have one
		}
	}
	ownedBy := func(kind, name, uid string) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: bootstrapv1.GroupVersion.String(), Kind: kind, Name: name, UID: types.UID(uid), Controller: ptr.To(true)}}
	}

	config := &bootstrapv1.OpenshiftAssistedConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m1", UID: "config-uid",
		Labels:          map[string]string{clusterv1.ClusterNameLabel: "c1"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: clusterv1.GroupVersion.String(), Kind: "Machine", Name: "m1", UID: "m1-uid"}}}}
	if p.Bool() {
		config.Labels = p.Map([]string{clusterv1.ClusterNameLabel, clusterv1.WatchLabel}, []string{"c1", "", "x"}, false)
	}
	switch p.Intn(4) {
	case 1:
		config.OwnerReferences = nil
	case 2:
		config.OwnerReferences[0].Name = "gone"
	}
	if p.Bool() {
		config.Finalizers = []string{bootstrapv1.ConfigFinalizer}
	}
	deleting(&config.ObjectMeta, "other.example.com/finalizer")
	config.Annotations = p.Map([]string{bootstrapv1.IgnitionOverrideAnnotation, bootstrapv1.DiscoveryIgnitionOverrideAnnotation, clusterv1.PausedAnnotation,
		"clusterctl.cluster.x-k8s.io/delete-for-move"}, []string{`{"ignition":{"version":"3.2.0"}}`, "{", "null", "", `{"ignition":{"version":"9"}}`}, true)
	config.Spec.NodeRegistration.Name = p.Pick("", "worker-1", "-bad-", "a.b", "$METADATA_NAME", "${METADATA_LOCAL_HOSTNAME}", "$METADATA_NOPE", "$METADATA_")
	if p.Bool() {
		config.Spec.NodeRegistration.KubeletExtraLabels = []string{p.Pick("a=b", "=", "a", "", "node-role.kubernetes.io/infra=", "rack=$METADATA_RACK", "rack=${METADATA_UUID}")}
	}
	config.Spec.NodeRegistration.ProviderID = p.Pick("", "metal3://$METADATA_UUID", "$METADATA_UUID", "metal3://${METADATA_NOPE}/x", "agent://$METADATA_")
	if p.Bool() {
		config.Spec.PullSecretRef = &corev1.LocalObjectReference{Name: p.Pick("pull", "", "missing")}
	}
	if p.Bool() {
		config.Spec.NMStateConfigLabelSelector = metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: p.Pick("k", ""), Operator: metav1.LabelSelectorOperator(p.Pick("In", "Bogus", "Exists")), Values: []string{p.Pick("v", "")}}}}
	}
	if p.Bool() {
		config.Status.AgentRef = &corev1.ObjectReference{Namespace: p.Pick(ns, "", "elsewhere"), Name: p.Pick("a1", "gone", "")}
		config.Status.InfraEnvRef = &corev1.ObjectReference{Namespace: ns, Name: p.Pick("m1", "")}
	}
	// Decoys of another tenant, named as the config's own objects: never read nor written.
	objs := []client.Object{config,
		&bmov1alpha1.BareMetalHost{ObjectMeta: metav1.ObjectMeta{Namespace: otherNS, Name: "host-0", UID: "their-bmh"},
			Spec: bmov1alpha1.BareMetalHostSpec{MetaData: &corev1.SecretReference{Name: "m1-metadata"}}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: otherNS, Name: "m1-metadata"}, Data: map[string][]byte{"metaData": []byte("rack: theirs\n")}},
	}

	if !p.Bool() {
		m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m1", UID: "m1-uid",
			Labels: p.Map([]string{clusterv1.ClusterNameLabel, clusterv1.MachineControlPlaneLabel}, []string{"c1", ""}, false)},
			Spec: clusterv1.MachineSpec{ClusterName: p.Pick("c1", "", "c2"),
				Bootstrap: clusterv1.Bootstrap{ConfigRef: clusterv1.ContractVersionedObjectReference{
					APIGroup: bootstrapv1.GroupVersion.Group, Kind: "OpenshiftAssistedConfig", Name: "m1"}}}}
		switch p.Intn(3) {
		case 0:
			m.Spec.InfrastructureRef = clusterv1.ContractVersionedObjectReference{APIGroup: capm3v1beta2.GroupVersion.Group, Kind: "Metal3Machine", Name: p.Pick("m1", "gone")}
		case 1:
			m.Spec.InfrastructureRef = clusterv1.ContractVersionedObjectReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "AgentMachine", Name: "m1"}
		}
		if p.Bool() {
			m.Spec.Bootstrap.DataSecretName = ptr.To(p.Pick("m1", "", "other"))
		}
		if p.Bool() {
			m.Spec.ProviderID = p.Pick("metal3://ns/host-0/m1", "", "agent://a1")
			m.Status.NodeRef = clusterv1.MachineNodeReference{Name: p.Pick("worker-1", "")}
		}
		deleting(&m.ObjectMeta, "machine.cluster.x-k8s.io")
		objs = append(objs, m)
	}
	if !p.Bool() {
		cl := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c1"},
			Spec: clusterv1.ClusterSpec{Paused: ptr.To(p.Intn(5) == 4)}}
		if !p.Bool() {
			cl.Spec.ControlPlaneRef = clusterv1.ContractVersionedObjectReference{APIGroup: "controlplane.cluster.x-k8s.io",
				Kind: p.Pick("OpenshiftAssistedControlPlane", "KubeadmControlPlane"), Name: p.Pick("c1", "gone")}
		}
		switch p.Intn(3) {
		case 0:
			cl.Status.Initialization.InfrastructureProvisioned = ptr.To(true)
		case 1:
			cl.Status.Initialization.InfrastructureProvisioned = ptr.To(false)
		}
		deleting(&cl.ObjectMeta, "cluster.cluster.x-k8s.io")
		objs = append(objs, cl)
	}
	if !p.Bool() {
		cd := &hivev1.ClusterDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c1"},
			Spec: hivev1.ClusterDeploymentSpec{ClusterName: "c1", BaseDomain: "example.com"}}
		if !p.Bool() {
			cd.Spec.PullSecretRef = &corev1.LocalObjectReference{Name: p.Pick("pull", "")}
		}
		switch p.Intn(3) {
		case 0:
			cd.Spec.ClusterInstallRef = &hivev1.ClusterInstallLocalReference{Group: hiveextv1beta1.Group, Version: "v1beta1", Kind: "AgentClusterInstall", Name: p.Pick("c1", "gone", "")}
		case 1:
			cd.Spec.ClusterInstallRef = &hivev1.ClusterInstallLocalReference{Group: "other.example.com", Version: "v1", Kind: "Other", Name: "c1"}
		}
		deleting(&cd.ObjectMeta, "hive.openshift.io/deprovision")
		objs = append(objs, cd)
	}
	if !p.Bool() {
		aci := &hiveextv1beta1.AgentClusterInstall{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c1"}}
		aci.Status.DebugInfo.State = p.Pick("adding-hosts", "installed", "", "installing", "finalizing", "error", "insufficient")
		objs = append(objs, aci)
	}
	if !p.Bool() {
		ie := &aiv1beta1.InfraEnv{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m1",
			Labels: p.Map([]string{clusterv1.ClusterNameLabel}, []string{"c1", ""}, false)}}
		switch p.Intn(3) {
		case 0:
			ie.OwnerReferences = ownedBy("OpenshiftAssistedConfig", "m1", "config-uid")
		case 1:
			ie.OwnerReferences = ownedBy("OpenshiftAssistedConfig", "someone-else", "other-uid")
		}
		ie.Status.ISODownloadURL = p.Pick("https://assisted.example.com/images/m1.iso", "", "not a url")
		deleting(&ie.ObjectMeta, "infraenv."+aiv1beta1.Group+"/ai-deprovision")
		objs = append(objs, ie)
	}
	if !p.Bool() {
		m3m := &capm3v1beta2.Metal3Machine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m1",
			Annotations: map[string]string{"metal3.io/BareMetalHost": "ns/host-0"}}}
		if p.Bool() {
			m3m.Annotations = p.Map([]string{"metal3.io/BareMetalHost"}, []string{"ns/host-0", "host-0", "/", "", "ns/gone", otherNS + "/host-0", "ns/"}, true)
		}
		switch p.Intn(3) {
		case 1:
			m3m.Spec.Image.URL, m3m.Spec.Image.DiskFormat = "https://assisted.example.com/images/m1.iso", "live-iso"
		case 2:
			m3m.Spec.Image.URL, m3m.Spec.ProviderID = "https://old.example.com/x.iso", "metal3://ns/host-0/m1"
		}
		objs = append(objs, m3m)
	}
	if !p.Bool() {
		bmh := &bmov1alpha1.BareMetalHost{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "host-0", UID: "bmh-uid"},
			Spec: bmov1alpha1.BareMetalHostSpec{BootMACAddress: p.Pick(mac, "", "52:54:00:ff:ff:ff"),
				BootMode: bmov1alpha1.BootMode(p.Pick("", "UEFI", "legacy")),
				BMC:      bmov1alpha1.BMCDetails{Address: p.Pick("redfish-virtualmedia://bmc/1", "ipmi://bmc", "")}}}
		switch p.Intn(3) {
		case 1:
			bmh.Spec.RootDeviceHints = &bmov1alpha1.RootDeviceHints{DeviceName: p.Pick("/dev/sda", "/dev/nvme0n1", "")}
		case 2:
			bmh.Spec.RootDeviceHints = &bmov1alpha1.RootDeviceHints{MinSizeGigabytes: 1 << 20, Rotational: ptr.To(p.Bool())}
		}
		// Its metadata, which nodeRegistration's variables name: in its namespace, in another
		// (never read), missing, or not a YAML map.
		switch p.Intn(4) {
		case 1:
			bmh.Spec.MetaData = &corev1.SecretReference{Name: p.Pick("m1-metadata", "gone")}
		case 2:
			bmh.Spec.MetaData = &corev1.SecretReference{Namespace: p.Pick(otherNS, ns), Name: "m1-metadata"}
		}
		objs = append(objs, bmh, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "m1-metadata"},
			Data: map[string][]byte{"metaData": []byte(p.Pick("rack: r7\nlocal-hostname: node-7\nuuid: 12345\n", "- a\n", "{", "", "name: \"\"\n",
				"local_hostname: Not_A-Hostname\n"))}})
	}
	for i := range []int{1, 2, 0, 3}[p.Intn(4)] {
		a := &aiv1beta1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("a%d", i+1), UID: types.UID(fmt.Sprintf("agent-%d", i)),
			Labels: map[string]string{aiv1beta1.InfraEnvNameLabel: "m1"}}}
		if p.Bool() {
			a.Labels = p.Map([]string{aiv1beta1.InfraEnvNameLabel, bootstrapv1.AgentConfigLabel, clusterv1.ClusterNameLabel}, []string{"m1", "other", ""}, false)
		}
		a.Annotations = p.Map([]string{"agent-install.openshift.io/hostname"}, nil, true)
		deleting(&a.ObjectMeta, "agent."+aiv1beta1.Group+"/ai-deprovision")
		a.Spec.Approved = p.Bool()
		a.Spec.Role = models.HostRole(p.Pick("", "worker", "master", "bogus"))
		if p.Bool() {
			a.Spec.NodeLabels = p.Map([]string{"a", "node-role.kubernetes.io/worker"}, []string{"", "b"}, false)
		}
		if !p.Bool() {
			a.Status.Inventory = aiv1beta1.HostInventory{Hostname: p.Pick("h1", ""),
				Interfaces: []aiv1beta1.HostInterface{{Name: "eth0", MacAddress: p.Pick(mac, "", "52:54:00:00:00:02", "garbage")}},
				Disks: []aiv1beta1.HostDisk{{ID: p.Pick("/dev/disk/by-id/wwn-1", ""), Path: p.Pick("/dev/sda", ""), ByPath: p.Pick("", "pci-0000"),
					SizeBytes: int64(p.Intn(3)) << 40, DriveType: p.Pick("HDD", "SSD", ""), Bootable: p.Bool()}}}
		}
		a.Status.DebugInfo.State = p.Pick("known", "", "installing-in-progress", "added-to-existing-cluster", "error", "binding")
		objs = append(objs, a)
	}
	return objs
}
