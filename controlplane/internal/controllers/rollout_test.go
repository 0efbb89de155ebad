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
	"strings"
	"testing"
	"time"

	capm3v1beta2 "github.com/metal3-io/cluster-api-provider-metal3/api/v1beta2"
	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	capoascheme "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/scheme"
)

// rolloutMachine is a control-plane Machine created at created, whose Metal3Machine was cloned
// from the template clonedFrom ("": adopted, no cloned-from annotations) and whose
// OpenshiftAssistedConfig has spec.
func rolloutMachine(name string, created time.Time, clonedFrom string, spec *bootstrapv1.OpenshiftAssistedConfigSpec) []client.Object {
	m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, CreationTimestamp: metav1.NewTime(created)}}
	m.Spec.InfrastructureRef = clusterv1.ContractVersionedObjectReference{APIGroup: capm3v1beta2.GroupVersion.Group, Kind: "Metal3Machine", Name: name}
	m.Spec.Bootstrap.ConfigRef = clusterv1.ContractVersionedObjectReference{APIGroup: bootstrapv1.GroupVersion.Group, Kind: bootstrapv1.ConfigKind, Name: name}
	infra := &capm3v1beta2.Metal3Machine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
	if clonedFrom != "" {
		infra.Annotations = map[string]string{
			clusterv1.TemplateClonedFromNameAnnotation:      clonedFrom,
			clusterv1.TemplateClonedFromGroupKindAnnotation: "Metal3MachineTemplate.infrastructure.cluster.x-k8s.io",
		}
	}
	config := &bootstrapv1.OpenshiftAssistedConfig{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Spec: *spec}
	return []client.Object{m, infra, config}
}

// TestReconcileOutdated: a control-plane Machine is outdated, with each reason said, when it was
// created before a past spec.rollout.after, when its infrastructure was cloned from another
// template than the spec's, or when its OpenshiftAssistedConfig differs from the spec's
// (after the defaults and the pull secret the control plane fills in); a Machine being deleted,
// an adopted infrastructure and a rollout.after still to come are no reason.
func TestReconcileOutdated(t *testing.T) {
	s, err := capoascheme.New(bootstrapv1.AddToScheme, controlplanev1.AddToScheme)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	created := now.Add(-time.Hour)
	oacp := testOACP(3)
	oacp.Spec.MachineTemplate.Spec.InfrastructureRef = clusterv1.ContractVersionedObjectReference{
		APIGroup: capm3v1beta2.GroupVersion.Group, Kind: "Metal3MachineTemplate", Name: "cp-v2"}
	oacp.Spec.Config.PullSecretRef = &corev1.LocalObjectReference{Name: "pull-secret"}
	upToDate := desiredConfigSpec(oacp)
	// What upstream's control plane wrote: no pull secret (the ClusterDeployment's is used).
	upstream := upToDate.DeepCopy()
	upstream.PullSecretRef = nil
	changed := upToDate.DeepCopy()
	changed.AdditionalNTPSources = []string{"ntp.example.com"}

	for name, tc := range map[string]struct {
		after    time.Time
		objects  []client.Object
		deleting bool
		want     string
	}{
		"up to date": {objects: rolloutMachine("m0", created, "cp-v2", upToDate)},
		"upstream's config, without a pull secret": {objects: rolloutMachine("m0", created, "cp-v2", upstream)},
		"adopted infrastructure":                   {objects: rolloutMachine("m0", created, "", upToDate)},
		"rollout.after still to come":              {after: now.Add(time.Hour), objects: rolloutMachine("m0", created, "cp-v2", upToDate)},
		"created before rollout.after": {after: now.Add(-time.Minute), objects: rolloutMachine("m0", created, "cp-v2", upToDate),
			want: "it was created before spec.rollout.after (2026-11-29T09:59:00Z)"},
		"another infrastructure template": {objects: rolloutMachine("m0", created, "cp-v1", upToDate),
			want: "its infrastructure was cloned from Metal3MachineTemplate.infrastructure.cluster.x-k8s.io cp-v1, spec.machineTemplate.infrastructureRef is now Metal3MachineTemplate.infrastructure.cluster.x-k8s.io cp-v2"},
		"another config": {objects: rolloutMachine("m0", created, "cp-v2", changed),
			want: "its OpenshiftAssistedConfig differs from spec.openshiftAssistedConfigSpec"},
		"all three": {after: now.Add(-time.Minute), objects: rolloutMachine("m0", created, "cp-v1", changed),
			want: "it was created before spec.rollout.after (2026-11-29T09:59:00Z); its infrastructure was cloned from Metal3MachineTemplate.infrastructure.cluster.x-k8s.io cp-v1, " +
				"spec.machineTemplate.infrastructureRef is now Metal3MachineTemplate.infrastructure.cluster.x-k8s.io cp-v2; its OpenshiftAssistedConfig differs from spec.openshiftAssistedConfigSpec"},
		"being deleted": {after: now.Add(-time.Minute), objects: rolloutMachine("m0", created, "cp-v1", changed), deleting: true},
	} {
		t.Run(name, func(t *testing.T) {
			cp := oacp.DeepCopy()
			if !tc.after.IsZero() {
				cp.Spec.Rollout.After = metav1.NewTime(tc.after)
			}
			// The Metal3Machine CRD names the contract's version, as Cluster API reads it.
			crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "metal3machines.infrastructure.cluster.x-k8s.io",
				Labels: map[string]string{"cluster.x-k8s.io/v1beta2": "v1beta2"}}}
			c := fake.NewClientBuilder().WithScheme(s).WithObjects(append(tc.objects, crd)...).Build()
			m := tc.objects[0].(*clusterv1.Machine)
			if tc.deleting {
				m.DeletionTimestamp = ptr.To(metav1.NewTime(now))
			}
			r := &OpenshiftAssistedControlPlaneReconciler{Client: c, Clock: clocktesting.NewFakePassiveClock(now)}
			sc := &scope{oacp: cp, machines: []*clusterv1.Machine{m}}
			if err := r.reconcileOutdated(context.Background(), sc); err != nil {
				t.Fatal(err)
			}
			if got := sc.outdated["m0"]; got != tc.want {
				t.Errorf("outdated because %q, want %q", got, tc.want)
			}
		})
	}
}

// TestRolloutBlocked: outdated Machines wait for the install, for every control-plane Machine to
// be ready, and are never replaced on a single node.
func TestRolloutBlocked(t *testing.T) {
	ready := func(name string, status metav1.ConditionStatus) *clusterv1.Machine {
		m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: name}}
		m.Status.Conditions = []metav1.Condition{{Type: clusterv1.MachineReadyCondition, Status: status}}
		return m
	}
	installed := &hiveextv1beta1.AgentClusterInstall{Status: hiveextv1beta1.AgentClusterInstallStatus{DebugInfo: hiveextv1beta1.DebugInfo{State: "installed"}}}
	installing := &hiveextv1beta1.AgentClusterInstall{Status: hiveextv1beta1.AgentClusterInstallStatus{DebugInfo: hiveextv1beta1.DebugInfo{State: "installing"}}}
	outdated := map[string]string{"m0": "x"}
	for name, tc := range map[string]struct {
		s    scope
		want string
	}{
		"nothing outdated": {s: scope{oacp: testOACP(3), aci: installing}},
		"ready to replace": {s: scope{oacp: testOACP(3), aci: installed, outdated: outdated,
			machines: []*clusterv1.Machine{ready("m0", metav1.ConditionTrue), ready("m1", metav1.ConditionTrue)}}},
		"single node": {s: scope{oacp: testOACP(1), aci: installed, outdated: outdated},
			want: "single-node OpenShift cannot replace its only control-plane node"},
		"installing": {s: scope{oacp: testOACP(3), aci: installing, outdated: outdated},
			want: "the cluster is being installed"},
		"a Machine not ready": {s: scope{oacp: testOACP(3), aci: installed, outdated: outdated,
			machines: []*clusterv1.Machine{ready("m0", metav1.ConditionTrue), ready("m1", metav1.ConditionFalse)}},
			want: "Machine m1 is not ready"},
	} {
		t.Run(name, func(t *testing.T) {
			got := rolloutBlocked(&tc.s)
			if (tc.want == "") != (got == "") || !strings.HasPrefix(got, tc.want) {
				t.Errorf("rolloutBlocked = %q, want %q...", got, tc.want)
			}
		})
	}
}
