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
	"testing"

	. "github.com/onsi/gomega"

	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
)

// TestDeletedForMoveIsLeftAlone checks that a config clusterctl move deletes from the management
// cluster it leaves keeps its InfraEnv: it lives on in the other management cluster.
func TestDeletedForMoveIsLeftAlone(t *testing.T) {
	g := NewWithT(t)
	f := newFixture()
	now := metav1.Now()
	f.config.DeletionTimestamp = &now
	f.config.Annotations = map[string]string{"clusterctl.cluster.x-k8s.io/delete-for-move": ""}
	ie := &aiv1beta1.InfraEnv{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m1", OwnerReferences: []metav1.OwnerReference{{
		APIVersion: bootstrapv1.GroupVersion.String(), Kind: "OpenshiftAssistedConfig", Name: "m1", Controller: ptr.To(true)}}}}
	c, got := reconcileConfig(g, f, 1, f.config, f.cluster, f.cd, f.aci, ie)
	g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(ie), &aiv1beta1.InfraEnv{})).To(Succeed())
	g.Expect(got.Finalizers).To(ConsistOf(bootstrapv1.ConfigFinalizer), "clusterctl removes the finalizers itself")
}

// TestDeletionCleansUpWhatUpstreamLeft: the InfraEnv that
// openshift-assisted/cluster-api-provider-openshift-assisted created for a config is owned by it
// without a controller reference, and the Agent it approved carries no config label. Deleting
// the config after the switch deletes that InfraEnv (no garbage collector needed) and releases
// that Agent; an InfraEnv another object controls, and an Agent of another InfraEnv, are left.
func TestDeletionCleansUpWhatUpstreamLeft(t *testing.T) {
	for name, tc := range map[string]struct {
		owners       []metav1.OwnerReference
		agentLabels  map[string]string
		wantInfraEnv bool
		wantApproved bool
	}{
		"upstream's InfraEnv and Agent": {
			owners:      []metav1.OwnerReference{{APIVersion: "bootstrap.cluster.x-k8s.io/v1alpha1", Kind: "OpenshiftAssistedConfig", Name: "m1", UID: "config-uid"}},
			agentLabels: map[string]string{aiv1beta1.InfraEnvNameLabel: "m1"},
		},
		"an InfraEnv another object controls, an Agent of another InfraEnv": {
			owners: []metav1.OwnerReference{
				{APIVersion: "bootstrap.cluster.x-k8s.io/v1alpha1", Kind: "OpenshiftAssistedConfig", Name: "m1", UID: "config-uid"},
				{APIVersion: "example.com/v1", Kind: "Other", Name: "o", UID: "other-uid", Controller: ptr.To(true)},
			},
			agentLabels:  map[string]string{aiv1beta1.InfraEnvNameLabel: "other"},
			wantInfraEnv: true, wantApproved: true,
		},
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			f := newFixture()
			f.config.UID = "config-uid"
			f.config.Finalizers = []string{bootstrapv1.UpstreamConfigFinalizer, "other"}
			now := metav1.Now()
			f.config.DeletionTimestamp = &now
			ie := &aiv1beta1.InfraEnv{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m1", OwnerReferences: tc.owners,
				Labels: map[string]string{"bootstrap.cluster.x-k8s.io/openshiftAssistedConfig": "m1"}}}
			agent := &aiv1beta1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a1", Labels: tc.agentLabels},
				Spec: aiv1beta1.AgentSpec{Approved: true}}
			c, got := reconcileConfig(g, f, 2, f.config, f.machine, f.cluster, f.cd, f.aci, ie, agent)
			g.Expect(got.Finalizers).To(ConsistOf("other"))
			err := c.Get(context.Background(), client.ObjectKeyFromObject(ie), ie)
			g.Expect(err == nil).To(Equal(tc.wantInfraEnv), "InfraEnv kept: %v", err)
			g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(agent), agent)).To(Succeed())
			g.Expect(agent.Spec.Approved).To(Equal(tc.wantApproved))
		})
	}
}

// TestOwnsInfraEnv: a config's deletion deletes the InfraEnv it controls, and the one
// openshift-assisted/cluster-api-provider-openshift-assisted created for it (owned, no controller);
// not one another object controls, nor one of another config.
func TestOwnsInfraEnv(t *testing.T) {
	config := &bootstrapv1.OpenshiftAssistedConfig{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m1", UID: "config-uid"}}
	ours := metav1.OwnerReference{APIVersion: bootstrapv1.GroupVersion.String(), Kind: "OpenshiftAssistedConfig", Name: "m1", UID: "config-uid"}
	upstream := metav1.OwnerReference{APIVersion: "bootstrap.cluster.x-k8s.io/v1alpha1", Kind: "OpenshiftAssistedConfig", Name: "m1", UID: "config-uid"}
	other := metav1.OwnerReference{APIVersion: "example.com/v1", Kind: "Other", Name: "o", UID: "other-uid", Controller: ptr.To(true)}
	controller := ours
	controller.Controller = ptr.To(true)
	for name, tc := range map[string]struct {
		owners []metav1.OwnerReference
		want   bool
	}{
		"controlled by the config":                  {owners: []metav1.OwnerReference{controller}, want: true},
		"owned by upstream's config, no controller": {owners: []metav1.OwnerReference{upstream}, want: true},
		"owned by the config, another controller":   {owners: []metav1.OwnerReference{upstream, other}},
		"controlled by another object":              {owners: []metav1.OwnerReference{other}},
		"owned by another config of the same name":  {owners: []metav1.OwnerReference{{APIVersion: ours.APIVersion, Kind: ours.Kind, Name: "m1", UID: "other-config"}}},
		"no owner": {},
	} {
		t.Run(name, func(t *testing.T) {
			ie := &aiv1beta1.InfraEnv{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m1", OwnerReferences: tc.owners}}
			NewWithT(t).Expect(ownsInfraEnv(config, ie)).To(Equal(tc.want))
		})
	}
}
