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

package webhooks

import (
	"context"
	"os"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	capoascheme "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/scheme"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/testenv"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/validationtest"
)

var env *testenv.Environment

// metal3Templates is the CRD of the machine templates the tests' control planes name: conversion
// reads it for the apiVersion of a v1alpha2 infrastructureRef.
const metal3Templates = testenv.ThirdPartyCRDDir + "/metal3/infrastructure.cluster.x-k8s.io_metal3machinetemplates.yaml"

// TestMain starts an API server with the provider's webhook configuration and a manager serving it.
func TestMain(m *testing.M) {
	s, err := capoascheme.New(bootstrapv1.AddToScheme, controlplanev1.AddToScheme)
	if err != nil {
		panic(err)
	}
	os.Exit(testenv.WebhookMain(m, testenv.Options{Scheme: s, CRDPaths: []string{"controlplane/config/crd/bases", metal3Templates},
		WebhookManifestDirs: []string{"controlplane/config/webhook"}}, SetupWithManager, &env))
}

func controlPlane(spec, running string) *controlplanev1.OpenshiftAssistedControlPlane {
	cp := &controlplanev1.OpenshiftAssistedControlPlane{ObjectMeta: metav1.ObjectMeta{Name: "cp"}}
	cp.Spec.DistributionVersion = spec
	cp.Status.DistributionVersion = running
	if running != "" {
		cp.Status.Initialization.ControlPlaneInitialized = ptr.To(true)
	}
	return cp
}

// installingControlPlane is a control plane whose installation the controller reports in progress.
func installingControlPlane(spec string) *controlplanev1.OpenshiftAssistedControlPlane {
	cp := controlPlane(spec, "")
	cp.Status.Conditions = []metav1.Condition{{Type: controlplanev1.AvailableCondition, Status: metav1.ConditionFalse,
		Reason: controlplanev1.InstallingReason}}
	return cp
}

// movedControlPlane is an installed control plane right after clusterctl move: no status yet.
func movedControlPlane(spec string) *controlplanev1.OpenshiftAssistedControlPlane {
	return controlPlane(spec, "")
}

// installedWithoutVersion is installed (kubeconfig written) but its ClusterVersion not read yet.
func installedWithoutVersion(spec string) *controlplanev1.OpenshiftAssistedControlPlane {
	cp := controlPlane(spec, "")
	cp.Status.Initialization.ControlPlaneInitialized = ptr.To(true)
	cp.Status.Conditions = []metav1.Condition{{Type: controlplanev1.AvailableCondition, Status: metav1.ConditionTrue,
		Reason: controlplanev1.InstalledReason}}
	return cp
}

const (
	installingMessage = "spec.distributionVersion: Forbidden: changing distributionVersion from 4.17.3 to 4.18.0 is not allowed while the cluster is being installed: " +
		"the installation goes on with OpenShift 4.17.3 whatever the spec says. Wait for the installation to complete " +
		"(condition Available True and status.distributionVersion set), then change distributionVersion: the change will be carried out as an upgrade"
	unknownMessage = "spec.distributionVersion: Forbidden: changing distributionVersion from 4.17.3 to 4.18.0 is not allowed while the OpenShift version the cluster runs is not known: " +
		"status.distributionVersion is empty (it is read from the workload cluster's ClusterVersion once the cluster is installed and reachable, " +
		"and is empty for a while after clusterctl move or before the controller first reconciled). Retry once status.distributionVersion is set"
)

func TestValidateUpdate(t *testing.T) {
	for name, tc := range map[string]struct {
		old     *controlplanev1.OpenshiftAssistedControlPlane
		newVer  string
		wantErr string // a substring of the error; "" when accepted
	}{
		"installing: a change is refused":            {old: installingControlPlane("4.17.3"), newVer: "4.18.0", wantErr: installingMessage},
		"installing: a downgrade is refused":         {old: installingControlPlane("4.17.3"), newVer: "4.16.0", wantErr: "is not allowed while the cluster is being installed"},
		"installing: other changes are accepted":     {old: installingControlPlane("4.17.3"), newVer: "4.17.3"},
		"install failed: a change is refused":        {old: withAvailableReason(installingControlPlane("4.17.3"), controlplanev1.InstallFailedReason), newVer: "4.18.0", wantErr: installingMessage},
		"after clusterctl move: a change is refused": {old: movedControlPlane("4.17.3"), newVer: "4.18.0", wantErr: unknownMessage},
		"installed, version not read yet: refused":   {old: installedWithoutVersion("4.17.3"), newVer: "4.18.0", wantErr: unknownMessage},
		"version not known: unchanged is accepted":   {old: movedControlPlane("4.17.3"), newVer: "4.17.3"},
		"patch upgrade": {old: controlPlane("4.17.3", "4.17.3"), newVer: "4.17.9"},
		"minor upgrade": {old: controlPlane("4.17.3", "4.17.3"), newVer: "4.18.0"},
		"downgrade":     {old: controlPlane("4.18.0", "4.18.0"), newVer: "4.17.3", wantErr: "downgrading OpenShift from 4.18.0 to 4.17.3 is not supported"},
		"downgrade below what runs during an upgrade": {old: controlPlane("4.18.0", "4.17.3"), newVer: "4.17.1",
			wantErr: "downgrading OpenShift from 4.17.3 to 4.17.1 is not supported"},
		"two minors":                  {old: controlPlane("4.17.3", "4.17.3"), newVer: "4.19.0", wantErr: "one minor version at a time"},
		"two minors from what runs":   {old: controlPlane("4.18.0", "4.17.3"), newVer: "4.19.0", wantErr: "cannot upgrade OpenShift from 4.17.3 to 4.19.0"},
		"back to the running version": {old: controlPlane("4.18.0", "4.17.3"), newVer: "4.17.3"},
		"unchanged version":           {old: controlPlane("4.15.0", "4.17.3"), newVer: "4.15.0"},
		// Upstream v0.3.0-v0.3.2's form, the version with its release's architecture.
		"the architecture dropped while installing": {old: installingControlPlane("4.19.0-ec.2-x86_64"), newVer: "4.19.0-ec.2"},
		"the architecture added, version not known": {old: movedControlPlane("4.17.3"), newVer: "4.17.3-x86_64"},
		"upgrade with the architecture":             {old: controlPlane("4.17.3-x86_64", "4.17.3"), newVer: "4.17.9-x86_64"},
		"downgrade with the architecture": {old: controlPlane("4.18.0-x86_64", "4.18.0"), newVer: "4.17.3-x86_64",
			wantErr: "downgrading OpenShift from 4.18.0 to 4.17.3 is not supported"},
	} {
		t.Run(name, func(t *testing.T) {
			newCP := tc.old.DeepCopy()
			newCP.Spec.DistributionVersion = tc.newVer
			_, err := (&ControlPlaneValidator{}).ValidateUpdate(context.Background(), tc.old, newCP)
			if tc.wantErr == "" && err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func withAvailableReason(cp *controlplanev1.OpenshiftAssistedControlPlane, reason string) *controlplanev1.OpenshiftAssistedControlPlane {
	cp.Status.Conditions[0].Reason = reason
	return cp
}

// TestWebhookRefusesDowngradeThroughTheAPIServer checks the webhook as installed from
// config/webhook: the API server refuses a version change while the running version is not
// known (status empty, then installing), and a downgrade of an installed cluster.
func TestWebhookRefusesDowngradeThroughTheAPIServer(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns, err := env.CreateNamespace(ctx, "webhook")
	g.Expect(err).NotTo(HaveOccurred())
	cp := &controlplanev1.OpenshiftAssistedControlPlane{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cp"},
		Spec: controlplanev1.OpenshiftAssistedControlPlaneSpec{
			Replicas: ptr.To[int32](1), DistributionVersion: "4.18.0",
			Config: controlplanev1.OpenshiftAssistedControlPlaneConfigSpec{BaseDomain: "example.com"},
			MachineTemplate: controlplanev1.OpenshiftAssistedControlPlaneMachineTemplate{Spec: controlplanev1.OpenshiftAssistedControlPlaneMachineTemplateSpec{InfrastructureRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "Metal3MachineTemplate", Name: "t"}}},
		},
	}
	g.Expect(env.Client.Create(ctx, cp)).To(Succeed())

	// While what runs is not known, no version change is let through.
	cp.Spec.DistributionVersion = "4.18.3"
	err = env.Client.Update(ctx, cp)
	g.Expect(err).To(MatchError(ContainSubstring("Retry once status.distributionVersion is set")))
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(cp), cp)).To(Succeed())
	cp.Status.Conditions = []metav1.Condition{{Type: controlplanev1.AvailableCondition, Status: metav1.ConditionFalse,
		Reason: controlplanev1.InstallingReason, LastTransitionTime: metav1.Now()}}
	g.Expect(env.Client.Status().Update(ctx, cp)).To(Succeed())
	cp.Spec.DistributionVersion = "4.18.3"
	err = env.Client.Update(ctx, cp)
	g.Expect(err).To(MatchError(ContainSubstring("not allowed while the cluster is being installed")))
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(cp), cp)).To(Succeed())
	g.Expect(cp.Spec.DistributionVersion).To(Equal("4.18.0"))

	// Installed: the controller read the running version from the cluster.
	cp.Status.Initialization.ControlPlaneInitialized = ptr.To(true)
	cp.Status.DistributionVersion = "4.18.0"
	g.Expect(env.Client.Status().Update(ctx, cp)).To(Succeed())

	cp.Spec.DistributionVersion = "4.17.3"
	err = env.Client.Update(ctx, cp)
	g.Expect(err).To(MatchError(ContainSubstring("downgrading OpenShift from 4.18.0 to 4.17.3 is not supported")))

	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(cp), cp)).To(Succeed())
	cp.Spec.DistributionVersion = "4.18.3"
	g.Expect(env.Client.Update(ctx, cp)).To(Succeed())
}

// TestFormatsChecked covers the format checks of the spec: on create every field, on update only
// the fields that changed (a control plane stored with a value a check now refuses can still have
// its finalizers, labels and other fields written).
func TestFormatsChecked(t *testing.T) {
	valid := func() *controlplanev1.OpenshiftAssistedControlPlane {
		cp := controlPlane("4.17.3", "")
		cp.Spec.Config = controlplanev1.OpenshiftAssistedControlPlaneConfigSpec{
			BaseDomain: "example.com", SSHAuthorizedKey: validationtest.SSHKey,
			PullSecretRef:          &corev1.LocalObjectReference{Name: "pull-secret"},
			ManifestsConfigMapRefs: []hiveextv1beta1.ManifestsConfigMapReference{{Name: "manifests"}},
			Proxy:                  &hiveextv1beta1.Proxy{HTTPProxy: "http://proxy:3128", HTTPSProxy: "https://proxy:3129", NoProxy: ".cluster.local"},
			DiskEncryption:         &controlplanev1.DiskEncryption{TangServers: `[{"url":"http://tang:7500","thumbprint":"abc"}]`},
		}
		cp.Spec.OpenshiftAssistedConfigSpec.SSHAuthorizedKey = validationtest.SSHKey
		return cp
	}
	for _, tc := range []struct {
		name   string
		change func(*controlplanev1.OpenshiftAssistedControlPlane)
		want   string // the field of the error; "" when accepted
	}{
		{"valid", func(*controlplanev1.OpenshiftAssistedControlPlane) {}, ""},
		{"base domain", func(cp *controlplanev1.OpenshiftAssistedControlPlane) { cp.Spec.Config.BaseDomain = "Example.com" }, "spec.config.baseDomain"},
		{"ssh key", func(cp *controlplanev1.OpenshiftAssistedControlPlane) { cp.Spec.Config.SSHAuthorizedKey = "key" }, "spec.config.sshAuthorizedKey"},
		{"pull secret", func(cp *controlplanev1.OpenshiftAssistedControlPlane) { cp.Spec.Config.PullSecretRef.Name = "Pull" }, "spec.config.pullSecretRef.name"},
		{"manifests", func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
			cp.Spec.Config.ManifestsConfigMapRefs = append(cp.Spec.Config.ManifestsConfigMapRefs, hiveextv1beta1.ManifestsConfigMapReference{Name: "a_b"})
		}, "spec.config.manifestsConfigMapRefs[1].name"},
		{"http proxy", func(cp *controlplanev1.OpenshiftAssistedControlPlane) { cp.Spec.Config.Proxy.HTTPProxy = "proxy:3128" }, "spec.config.proxy.httpProxy"},
		{"no proxy", func(cp *controlplanev1.OpenshiftAssistedControlPlane) { cp.Spec.Config.Proxy.NoProxy = "a b" }, "spec.config.proxy.noProxy"},
		{"tang servers", func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
			cp.Spec.Config.DiskEncryption.TangServers = "tang"
		}, "spec.config.diskEncryption.tangServers"},
		{"bootstrap settings", func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
			cp.Spec.OpenshiftAssistedConfigSpec.AdditionalTrustBundle = "cert"
		}, "spec.openshiftAssistedConfigSpec.additionalTrustBundle"},
		{"upstream's release mirror annotation", func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
			cp.Annotations = map[string]string{controlplanev1.UpstreamReleaseImageRepositoryAnnotation: "mirror.example.com/ocp-release"}
		}, ""},
		{"both release mirror annotations, the same", func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
			cp.Annotations = map[string]string{controlplanev1.UpstreamReleaseImageRepositoryAnnotation: "mirror.example.com/ocp-release",
				controlplanev1.ReleaseImageRepositoryAnnotation: "mirror.example.com/ocp-release"}
		}, ""},
		{"both release mirror annotations, different", func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
			cp.Annotations = map[string]string{controlplanev1.UpstreamReleaseImageRepositoryAnnotation: "mirror.example.com/ocp-release",
				controlplanev1.ReleaseImageRepositoryAnnotation: "other.example.com/ocp-release"}
		}, "metadata.annotations[cluster.x-k8s.io/release-image-repository-override]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cp := valid()
			tc.change(cp)
			v := &ControlPlaneValidator{}
			_, createErr := v.ValidateCreate(context.Background(), cp)
			_, updateErr := v.ValidateUpdate(context.Background(), valid(), cp)
			// Stored with the value: an update of something else is accepted.
			withLabel := cp.DeepCopy()
			withLabel.Labels = map[string]string{"a": "b"}
			withLabel.Spec.Config.MastersSchedulable = true
			_, ratchetErr := v.ValidateUpdate(context.Background(), cp, withLabel)
			if ratchetErr != nil {
				t.Errorf("update of other fields: unexpected error %v", ratchetErr)
			}
			for op, err := range map[string]error{"create": createErr, "update": updateErr} {
				switch {
				case tc.want == "" && err != nil:
					t.Errorf("%s: unexpected error %v", op, err)
				case tc.want != "" && (err == nil || !strings.Contains(err.Error(), "is invalid: "+tc.want+": Invalid value")):
					t.Errorf("%s: error = %v, want one on %s", op, err, tc.want)
				}
			}
		})
	}
}

// TestIgnoredVIPsWarning checks the warning given for the VIPs of a single-node control plane.
func TestIgnoredVIPsWarning(t *testing.T) {
	sno := controlPlane("4.17.3", "")
	sno.Spec.Replicas = ptr.To[int32](1)
	sno.Spec.Config.APIVIPs, sno.Spec.Config.IngressVIPs = []string{"192.168.111.5"}, []string{"192.168.111.4"}
	ha := sno.DeepCopy()
	ha.Spec.Replicas = ptr.To[int32](3)
	v := &ControlPlaneValidator{}
	for name, tc := range map[string]struct {
		old, cp *controlplanev1.OpenshiftAssistedControlPlane
		warn    bool
	}{
		"create, single node with VIPs":       {cp: sno, warn: true},
		"create, three nodes with VIPs":       {cp: ha},
		"update, single node, VIPs unchanged": {old: sno, cp: sno},
		"update, single node, VIPs added":     {old: controlPlane("4.17.3", ""), cp: sno, warn: true},
	} {
		var warnings []string
		if tc.old == nil {
			warnings, _ = v.ValidateCreate(context.Background(), tc.cp)
		} else {
			warnings, _ = v.ValidateUpdate(context.Background(), tc.old, tc.cp)
		}
		if got := len(warnings) > 0; got != tc.warn {
			t.Errorf("%s: warnings %q, want a warning: %v", name, warnings, tc.warn)
		}
	}
}
