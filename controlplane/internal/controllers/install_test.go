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
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	capoascheme "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/scheme"
)

func testOACP(replicas int32, vips ...string) *controlplanev1.OpenshiftAssistedControlPlane {
	return &controlplanev1.OpenshiftAssistedControlPlane{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cp"},
		Spec: controlplanev1.OpenshiftAssistedControlPlaneSpec{
			Replicas:            ptr.To(replicas),
			DistributionVersion: "4.17.3",
			Config: controlplanev1.OpenshiftAssistedControlPlaneConfigSpec{
				BaseDomain: "example.com", APIVIPs: vips, IngressVIPs: vips,
			},
		},
	}
}

func testCluster(pods, services []string) *clusterv1.Cluster {
	c := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c1"}}
	c.Spec.ClusterNetwork.Pods.CIDRBlocks = pods
	c.Spec.ClusterNetwork.Services.CIDRBlocks = services
	return c
}

func TestNetworking(t *testing.T) {
	for name, tc := range map[string]struct {
		pods, services []string
		want           []hiveextv1beta1.ClusterNetworkEntry
		wantServices   []string
		wantErr        string
	}{
		"defaults": {want: []hiveextv1beta1.ClusterNetworkEntry{{CIDR: "10.128.0.0/14", HostPrefix: 23}}, wantServices: []string{"172.30.0.0/16"}},
		"IPv4 /16": {pods: []string{"10.0.0.0/16"}, services: []string{"10.96.0.0/12"}, want: []hiveextv1beta1.ClusterNetworkEntry{{CIDR: "10.0.0.0/16", HostPrefix: 23}}, wantServices: []string{"10.96.0.0/12"}},
		"IPv4 /22 gets smaller node subnets": {pods: []string{"10.0.0.0/22"}, services: []string{"10.96.0.0/12"},
			want: []hiveextv1beta1.ClusterNetworkEntry{{CIDR: "10.0.0.0/22", HostPrefix: 25}}, wantServices: []string{"10.96.0.0/12"}},
		"IPv6": {pods: []string{"fd01::/48"}, services: []string{"fd02::/112"},
			want: []hiveextv1beta1.ClusterNetworkEntry{{CIDR: "fd01::/48", HostPrefix: 64}}, wantServices: []string{"fd02::/112"}},
		"dual stack": {pods: []string{"10.128.0.0/14", "fd01::/48"}, services: []string{"172.30.0.0/16", "fd02::/112"},
			want:         []hiveextv1beta1.ClusterNetworkEntry{{CIDR: "10.128.0.0/14", HostPrefix: 23}, {CIDR: "fd01::/48", HostPrefix: 64}},
			wantServices: []string{"172.30.0.0/16", "fd02::/112"}},
		"IPv4 too small":     {pods: []string{"10.0.0.0/26"}, services: []string{"10.96.0.0/12"}, wantErr: "too small"},
		"IPv6 too small":     {pods: []string{"fd01::/64"}, services: []string{"fd02::/112"}, wantErr: "/61 or larger"},
		"families differ":    {pods: []string{"fd01::/48"}, services: []string{"172.30.0.0/16"}, wantErr: "same IP families"},
		"two IPv4 networks":  {pods: []string{"10.0.0.0/16", "10.1.0.0/16"}, services: []string{"10.96.0.0/16", "10.97.0.0/16"}, wantErr: "one IPv4 and one IPv6"},
		"not a CIDR":         {pods: []string{"10.0.0.0"}, wantErr: "invalid pod network"},
		"three pod networks": {pods: []string{"10.0.0.0/16", "fd01::/48", "10.1.0.0/16"}, wantErr: "at most two"},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := networking(testOACP(3), testCluster(tc.pods, tc.services))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.ClusterNetwork, tc.want) || !reflect.DeepEqual(got.ServiceNetwork, tc.wantServices) {
				t.Errorf("got cluster networks %+v services %v, want %+v %v", got.ClusterNetwork, got.ServiceNetwork, tc.want, tc.wantServices)
			}
			if got.NetworkType != "OVNKubernetes" {
				t.Errorf("networkType = %q, want OVNKubernetes", got.NetworkType)
			}
		})
	}
}

func TestDesiredAgentClusterInstall(t *testing.T) {
	for name, tc := range map[string]struct {
		oacp           *controlplanev1.OpenshiftAssistedControlPlane
		workers        int
		wantPlatform   hiveextv1beta1.PlatformType
		wantVIPs       []string
		wantUMN        bool
		wantSchedule   bool
		wantOverrides  string
		annotationJSON string
	}{
		"SNO": {oacp: testOACP(1), wantPlatform: hiveextv1beta1.NonePlatformType, wantUMN: true, wantSchedule: true},
		"3 control planes, VIP": {oacp: testOACP(3, "192.168.1.5"), workers: 2, wantPlatform: hiveextv1beta1.BareMetalPlatformType, wantVIPs: []string{"192.168.1.5"},
			wantOverrides: `{"capabilities":{"additionalEnabledCapabilities":["baremetal","marketplace","openshift-samples","Console","Insights","Storage",` +
				`"CSISnapshot","NodeTuning","Build","DeploymentConfig","ImageRegistry","OperatorLifecycleManager","CloudCredential","Ingress",` +
				`"CloudControllerManager"],"baselineCapabilitySet":"None"}}`},
		"3 control planes, no VIP (external load balancer)": {oacp: testOACP(3), wantPlatform: hiveextv1beta1.NonePlatformType, wantUMN: true},
		"capabilities and overrides": {
			oacp: func() *controlplanev1.OpenshiftAssistedControlPlane {
				o := testOACP(3, "192.168.1.5")
				o.Spec.Config.Capabilities = controlplanev1.Capabilities{BaselineCapability: "None", AdditionalEnabledCapabilities: []string{"Console", "OperatorLifecycleManagerV1"}}
				return o
			}(),
			annotationJSON: `{"fips":true}`,
			wantPlatform:   hiveextv1beta1.BareMetalPlatformType, wantVIPs: []string{"192.168.1.5"},
			wantOverrides: `{"capabilities":{"additionalEnabledCapabilities":["baremetal","marketplace","openshift-samples","Console","Insights","Storage",` +
				`"CSISnapshot","NodeTuning","Build","DeploymentConfig","ImageRegistry","OperatorLifecycleManager","CloudCredential","Ingress",` +
				`"CloudControllerManager","OperatorLifecycleManagerV1"],"baselineCapabilitySet":"None"},"fips":true}`,
		},
	} {
		t.Run(name, func(t *testing.T) {
			if tc.annotationJSON != "" {
				tc.oacp.Annotations = map[string]string{controlplanev1.InstallConfigOverrideAnnotation: tc.annotationJSON}
			}
			aci := &hiveextv1beta1.AgentClusterInstall{}
			if err := desiredAgentClusterInstall(aci, tc.oacp, testCluster(nil, nil), tc.workers); err != nil {
				t.Fatal(err)
			}
			if aci.Spec.PlatformType != tc.wantPlatform || !reflect.DeepEqual(aci.Spec.APIVIPs, tc.wantVIPs) || !reflect.DeepEqual(aci.Spec.IngressVIPs, tc.wantVIPs) {
				t.Errorf("platform %q VIPs %v/%v, want %q %v", aci.Spec.PlatformType, aci.Spec.APIVIPs, aci.Spec.IngressVIPs, tc.wantPlatform, tc.wantVIPs)
			}
			if got := ptr.Deref(aci.Spec.Networking.UserManagedNetworking, false); got != tc.wantUMN {
				t.Errorf("userManagedNetworking = %v, want %v", got, tc.wantUMN)
			}
			if aci.Spec.MastersSchedulable != tc.wantSchedule {
				t.Errorf("mastersSchedulable = %v, want %v", aci.Spec.MastersSchedulable, tc.wantSchedule)
			}
			if want := (hiveextv1beta1.ProvisionRequirements{ControlPlaneAgents: int(*tc.oacp.Spec.Replicas), WorkerAgents: tc.workers}); aci.Spec.ProvisionRequirements != want {
				t.Errorf("provisionRequirements = %+v, want %+v", aci.Spec.ProvisionRequirements, want)
			}
			if aci.Spec.ClusterDeploymentRef.Name != "c1" || aci.Spec.ImageSetRef == nil || aci.Spec.ImageSetRef.Name != ImageSetName(tc.oacp) {
				t.Errorf("clusterDeploymentRef %v imageSetRef %v", aci.Spec.ClusterDeploymentRef, aci.Spec.ImageSetRef)
			}
			if got := aci.Annotations[InstallConfigOverridesAnnotation]; got != tc.wantOverrides {
				t.Errorf("install-config overrides = %s, want %s", got, tc.wantOverrides)
			}
		})
	}
}

// TestDiskEncryptionReachesTheAgentClusterInstall: every enableOn value, the newer ones
// included, and the mode and tang servers, are written to the AgentClusterInstall.
func TestDiskEncryptionReachesTheAgentClusterInstall(t *testing.T) {
	for _, enableOn := range []string{"none", "all", "masters", "workers", "masters,workers", "masters,arbiters,workers"} {
		o := testOACP(3, "192.168.1.5")
		o.Spec.Config.DiskEncryption = &controlplanev1.DiskEncryption{EnableOn: ptr.To(enableOn), Mode: ptr.To("tang"), TangServers: `[{"url":"http://tang"}]`}
		aci := &hiveextv1beta1.AgentClusterInstall{}
		if err := desiredAgentClusterInstall(aci, o, testCluster(nil, nil), 0); err != nil {
			t.Fatal(err)
		}
		want := &hiveextv1beta1.DiskEncryption{EnableOn: ptr.To(enableOn), Mode: ptr.To("tang"), TangServers: `[{"url":"http://tang"}]`}
		if !reflect.DeepEqual(aci.Spec.DiskEncryption, want) {
			t.Errorf("%s: diskEncryption = %+v, want %+v", enableOn, aci.Spec.DiskEncryption, want)
		}
	}
	o := testOACP(3, "192.168.1.5")
	aci := &hiveextv1beta1.AgentClusterInstall{Spec: hiveextv1beta1.AgentClusterInstallSpec{DiskEncryption: &hiveextv1beta1.DiskEncryption{Mode: ptr.To("tpmv2")}}}
	if err := desiredAgentClusterInstall(aci, o, testCluster(nil, nil), 0); err != nil {
		t.Fatal(err)
	}
	if aci.Spec.DiskEncryption != nil {
		t.Errorf("diskEncryption removed from the spec stays on the AgentClusterInstall: %+v", aci.Spec.DiskEncryption)
	}
}

func TestInstallConfigOverridesRejectsInvalidJSON(t *testing.T) {
	o := testOACP(1)
	o.Annotations = map[string]string{controlplanev1.InstallConfigOverrideAnnotation: "{not json"}
	if _, err := installConfigOverrides(o); err == nil {
		t.Fatal("want an error for an annotation that is not JSON")
	}
	o.Annotations[controlplanev1.InstallConfigOverrideAnnotation] = `{"capabilities":{"baselineCapabilitySet":"v4.14"}}`
	o.Spec.Config.Capabilities.BaselineCapability = "None"
	got, err := installConfigOverrides(o)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]map[string]any{}
	if err := json.Unmarshal([]byte(got), &m); err != nil || m["capabilities"]["baselineCapabilitySet"] != "v4.14" {
		t.Errorf("the annotation's capabilities must win over the spec's: got %s (%v)", got, err)
	}
}

func TestImageSetNameDoesNotCollide(t *testing.T) {
	names := map[string]bool{}
	for _, nn := range [][2]string{{"a-b", "c"}, {"a", "b-c"}, {"ns1", "cluster"}, {"ns2", "cluster"},
		{strings.Repeat("n", 63), "cluster"}, {strings.Repeat("n", 63), "cluster2"}} {
		o := &controlplanev1.OpenshiftAssistedControlPlane{ObjectMeta: metav1.ObjectMeta{Namespace: nn[0], Name: nn[1]}}
		n := ImageSetName(o)
		if names[n] {
			t.Errorf("ImageSetName(%s/%s) = %s collides", nn[0], nn[1], n)
		}
		if len(n) > 63 {
			t.Errorf("ImageSetName(%s/%s) = %s is longer than 63 characters", nn[0], nn[1], n)
		}
		names[n] = true
		if again := ImageSetName(o); again != n {
			t.Errorf("ImageSetName is not stable: %s then %s", n, again)
		}
	}
}

func TestDesiredClusterDeployment(t *testing.T) {
	o := testOACP(3)
	o.Spec.Config.ClusterName = "ocp"
	o.Spec.Config.PullSecretRef = &corev1.LocalObjectReference{Name: "pull"}
	cd := &hivev1.ClusterDeployment{}
	desiredClusterDeployment(cd, o, testCluster(nil, nil))
	if cd.Spec.ClusterName != "ocp" || cd.Spec.BaseDomain != "example.com" || cd.Spec.PullSecretRef == nil || cd.Spec.PullSecretRef.Name != "pull" {
		t.Errorf("unexpected spec %+v", cd.Spec)
	}
	if cd.Spec.Platform.AgentBareMetal == nil || cd.Spec.Platform.AgentBareMetal.AgentSelector.MatchLabels[clusterv1.ClusterNameLabel] != "c1" {
		t.Errorf("platform %+v, want agentBareMetal selecting the Cluster's agents", cd.Spec.Platform)
	}
	if r := cd.Spec.ClusterInstallRef; r == nil || r.Kind != "AgentClusterInstall" || r.Name != "c1" || r.Group != "extensions.hive.openshift.io" || r.Version != "v1beta1" {
		t.Errorf("clusterInstallRef = %+v", r)
	}
}

func TestWatchFilterLabelIsCopied(t *testing.T) {
	o := testOACP(1)
	o.Labels = map[string]string{clusterv1.WatchLabel: "lab"}
	aci := &hiveextv1beta1.AgentClusterInstall{}
	if err := desiredAgentClusterInstall(aci, o, testCluster(nil, nil), 0); err != nil {
		t.Fatal(err)
	}
	cd := &hivev1.ClusterDeployment{}
	desiredClusterDeployment(cd, o, testCluster(nil, nil))
	for _, l := range []map[string]string{aci.Labels, cd.Labels} {
		if l[clusterv1.WatchLabel] != "lab" || l[clusterv1.ClusterNameLabel] != "c1" {
			t.Errorf("labels %v, want the watch-filter and cluster-name labels", l)
		}
	}
}

// TestInstalled checks where the control plane learns that the cluster is installed: from the
// AgentClusterInstall's status, or, when that is gone (after a clusterctl move, which carries no
// status), from Hive's ClusterDeployment spec.installed.
func TestInstalled(t *testing.T) {
	aci := func(state string) *hiveextv1beta1.AgentClusterInstall {
		return &hiveextv1beta1.AgentClusterInstall{Status: hiveextv1beta1.AgentClusterInstallStatus{DebugInfo: hiveextv1beta1.DebugInfo{State: state}}}
	}
	cd := func(installed bool) *hivev1.ClusterDeployment {
		return &hivev1.ClusterDeployment{Spec: hivev1.ClusterDeploymentSpec{Installed: installed}}
	}
	for _, tc := range []struct {
		name string
		s    scope
		want bool
	}{
		{"nothing yet", scope{}, false},
		{"installing", scope{aci: aci("installing"), cd: cd(false)}, false},
		{"installed", scope{aci: aci("installed"), cd: cd(false)}, true},
		{"taking day-2 hosts", scope{aci: aci("adding-hosts"), cd: cd(true)}, true},
		{"moved: no status, ClusterDeployment installed", scope{aci: aci(""), cd: cd(true)}, true},
		{"moved before installing", scope{aci: aci(""), cd: cd(false)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.s.installed(); got != tc.want {
				t.Errorf("installed() = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestVIPFamilyRefusal(t *testing.T) {
	const how = "list the VIPs in the IP families and order of the Cluster's spec.clusterNetwork (pods and services), or change the Cluster's networks"
	v4 := []string{"10.128.0.0/14"}
	dual := []string{"10.128.0.0/14", "fd01::/48"}
	dualV6First := []string{"fd01::/48", "10.128.0.0/14"}
	for name, tc := range map[string]struct {
		pods     []string
		api, ing []string
		want     string
	}{
		"IPv4":                            {pods: v4, api: []string{"192.168.111.5"}, ing: []string{"192.168.111.4"}},
		"dual stack, one IPv4 VIP":        {pods: dual, api: []string{"192.168.111.5"}, ing: []string{"192.168.111.4"}},
		"dual stack, two VIPs":            {pods: dual, api: []string{"192.168.111.5", "fd00::5"}, ing: []string{"192.168.111.4", "fd00::4"}},
		"dual stack IPv6 first, two VIPs": {pods: dualV6First, api: []string{"fd00::5", "192.168.111.5"}, ing: []string{"fd00::4", "192.168.111.4"}},
		"IPv6 VIP on an IPv4 cluster": {pods: v4, api: []string{"fd00::5"}, ing: []string{"fd00::4"},
			want: "spec.config.apiVIPs[0] fd00::5 is an IPv6 address but the Cluster's network 1 (10.128.0.0/14) is IPv4: " + how},
		"two VIPs on an IPv4 cluster": {pods: v4, api: []string{"192.168.111.5", "fd00::5"}, ing: []string{"192.168.111.4", "fd00::4"},
			want: "spec.config.apiVIPs has 2 addresses (dual stack) but the Cluster has only the IPv4 network 10.128.0.0/14: give one VIP, " +
				"or add a pod and a service network of the other IP family to the Cluster"},
		"order differs from the networks'": {pods: dualV6First, api: []string{"fd00::5", "192.168.111.5"}, ing: []string{"192.168.111.4", "fd00::4"},
			want: "spec.config.ingressVIPs[0] 192.168.111.4 is an IPv4 address but the Cluster's network 1 (fd01::/48) is IPv6: " + how},
	} {
		t.Run(name, func(t *testing.T) {
			services := []string{"172.30.0.0/16", "fd02::/112"}[:len(tc.pods)]
			if tc.pods[0] == "fd01::/48" {
				services = []string{"fd02::/112", "172.30.0.0/16"}
			}
			n, err := networking(testOACP(3), testCluster(tc.pods, services))
			if err != nil {
				t.Fatal(err)
			}
			cfg := &controlplanev1.OpenshiftAssistedControlPlaneConfigSpec{APIVIPs: tc.api, IngressVIPs: tc.ing}
			if got := vipFamilyRefusal(cfg, n); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
	// desiredAgentClusterInstall reports it as the control plane's InvalidSpec problem.
	oacp := testOACP(3, "fd00::5")
	err := desiredAgentClusterInstall(&hiveextv1beta1.AgentClusterInstall{}, oacp, testCluster(nil, nil), 0)
	if err == nil || !strings.Contains(err.Error(), "spec.config.apiVIPs[0] fd00::5 is an IPv6 address") {
		t.Errorf("desiredAgentClusterInstall: error = %v, want the VIP family refusal", err)
	}
}

// TestDay1Workers: the workers assisted-service waits for are the replicas of the Cluster's
// MachineDeployments (not deleting ones, not another Cluster's), and none for a control plane
// with spec.version, whose workers Cluster API's MachineSet preflight check holds until the
// control plane reports its version, after the install.
func TestDay1Workers(t *testing.T) {
	md := func(name, cluster string, replicas int32) *clusterv1.MachineDeployment {
		md := &clusterv1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name,
			Labels: map[string]string{clusterv1.ClusterNameLabel: cluster}}}
		md.Spec.Replicas = ptr.To(replicas)
		return md
	}
	deleting := md("deleting", "c1", 4)
	deleting.DeletionTimestamp, deleting.Finalizers = ptr.To(metav1.Now()), []string{"keep"}
	objs := []client.Object{md("a", "c1", 2), md("b", "c1", 1), md("other", "c2", 5), deleting}
	for _, tc := range []struct {
		version string
		want    int
	}{{version: "", want: 3}, {version: "v1.30.4", want: 0}} {
		s, err := capoascheme.New(controlplanev1.AddToScheme)
		if err != nil {
			t.Fatal(err)
		}
		c := fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).Build()
		oacp := testOACP(3)
		oacp.Spec.Version = tc.version
		got, err := (&OpenshiftAssistedControlPlaneReconciler{Client: c}).day1Workers(context.Background(), &scope{oacp: oacp, cluster: testCluster(nil, nil)})
		if err != nil || got != tc.want {
			t.Errorf("spec.version %q: day-1 workers %d (%v), want %d", tc.version, got, err, tc.want)
		}
	}
}
