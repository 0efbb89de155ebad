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
	"encoding/json"
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	"github.com/openshift/assisted-service/models"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/testenv"
)

// TestNewerAgentCRDFieldsSurviveApproval: on a hub with the newest assisted-service and Hive CRDs,
// whose Agent has spec fields the pinned Go types lack, approving and configuring the Agent of a
// Machine (role, hostname, installation disk, labels) keeps them: the provider patches the fields
// it owns.
func TestNewerAgentCRDFieldsSurviveApproval(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	l := newLab(t, models.ClusterStatusInsufficient)
	restore, err := testenv.UseNewestCRDs(ctx, env.Client, l.ns)
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { g.Expect(restore(context.Background())).To(Succeed()) })
	simulator.setNewerCRD(l.ns)
	h := l.newHost(t, "cp-0", hostOptions{controlPlane: true, mac: "52:54:00:00:10:01"})

	agent := agentOf(t, h)
	key := client.ObjectKeyFromObject(agent)
	g.Eventually(func(g Gomega) {
		a := &aiv1beta1.Agent{}
		g.Expect(env.Client.Get(ctx, key, a)).To(Succeed())
		g.Expect(a.Spec.Approved).To(BeTrue())
		g.Expect(a.Spec.Role).To(Equal(models.HostRoleMaster))
		// The simulator starts installing an approved Agent: nothing is written to it after that.
		g.Expect(a.Status.DebugInfo.State).To(Equal(models.HostStatusInstallingInProgress))
	}, timeout).Should(Succeed())
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(aiv1beta1.GroupVersion.WithKind("Agent"))
	g.Expect(env.Client.Get(ctx, key, u)).To(Succeed())
	g.Expect(testenv.MissingNewerAgentSpecFields(u)).To(BeEmpty(), "the newer fields after approval")
}

// TestInfraEnvTakesTheClusterMirrors: on a hub with the newest assisted-service CRDs, whose
// AgentClusterInstall and InfraEnv have spec.mirrorRegistryRef (assisted-service's per-cluster
// mirror registry), the InfraEnv of a Machine refers to the ConfigMap that the cluster's
// AgentClusterInstall refers to, so that its discovery image pulls from the cluster's mirrors; and
// it stops referring to it when the AgentClusterInstall does, before the host's bootstrap data is
// written.
func TestInfraEnvTakesTheClusterMirrors(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	restore, err := testenv.UseNewestCRDs(ctx, env.Client, "default")
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { g.Expect(restore(context.Background())).To(Succeed()) })

	// A Machine whose host never boots: its config stays before the bootstrap data.
	l := newLab(t, models.ClusterStatusInsufficient)
	setMirrorRef := func(ref any) {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(hiveextv1beta1.GroupVersion.WithKind("AgentClusterInstall"))
		u.SetNamespace(l.ns)
		u.SetName(l.aci.Name)
		patch, err := json.Marshal(map[string]any{"spec": map[string]any{"mirrorRegistryRef": ref}})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(env.Client.Patch(ctx, u, client.RawPatch(types.MergePatchType, patch), client.FieldValidation(metav1.FieldValidationStrict))).To(Succeed())
	}
	setMirrorRef(map[string]any{"name": "mirrors", "namespace": l.ns})
	h := l.newHost(t, "cp-0", hostOptions{controlPlane: true})

	// infraEnvRef returns the InfraEnv's spec.mirrorRegistryRef, and what a failure should show:
	// the InfraEnv's annotations and the AgentClusterInstall's reference as stored.
	infraEnvRef := func(g Gomega) (map[string]any, bool, string) {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(aiv1beta1.GroupVersion.WithKind("InfraEnv"))
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: l.ns, Name: h.config.Name}, u)).To(Succeed())
		ref, found, err := unstructured.NestedMap(u.Object, "spec", "mirrorRegistryRef")
		g.Expect(err).NotTo(HaveOccurred())
		aci := &unstructured.Unstructured{}
		aci.SetGroupVersionKind(hiveextv1beta1.GroupVersion.WithKind("AgentClusterInstall"))
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(l.aci), aci)).To(Succeed())
		aciRef, _, _ := unstructured.NestedMap(aci.Object, "spec", "mirrorRegistryRef")
		config := &bootstrapv1.OpenshiftAssistedConfig{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(h.config), config)).To(Succeed())
		return ref, found, fmt.Sprintf("InfraEnv annotations %v, resourceVersion %s; AgentClusterInstall mirrorRegistryRef %v; config conditions %+v",
			u.GetAnnotations(), u.GetResourceVersion(), aciRef, config.Status.Conditions)
	}
	g.Eventually(func(g Gomega) {
		ref, found, why := infraEnvRef(g)
		g.Expect(found).To(BeTrue(), why)
		g.Expect(ref).To(Equal(map[string]any{"name": "mirrors", "namespace": l.ns}), why)
	}, timeout).Should(Succeed())

	setMirrorRef(nil)
	g.Eventually(func(g Gomega) {
		_, found, why := infraEnvRef(g)
		g.Expect(found).To(BeFalse(), why)
	}, timeout).Should(Succeed())
}

// TestFencingCredentialsReachTheAgent: on a hub with the newest assisted-service CRDs, the Agent
// of a host of two-node OpenShift with fencing gets spec.fencingCredentialsSecretRef, naming a
// Secret beside it, owned by the host's config, with assisted-service's keys taken from the
// host's BareMetalHost; a host whose BMC is not redfish (iLO 5 virtual media) is not approved, and its config says why,
// without quoting the credentials.
func TestFencingCredentialsReachTheAgent(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	l := newLab(t, models.ClusterStatusInsufficient)
	restore, err := testenv.UseNewestCRDs(ctx, env.Client, l.ns)
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { g.Expect(restore(context.Background())).To(Succeed()) })
	simulator.setNewerCRD(l.ns)
	g.Expect(env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: l.ns, Name: "bmc"},
		Data: map[string][]byte{"username": []byte("admin"), "password": []byte("s3cr3t-bmc")}})).To(Succeed())
	fencing := map[string]string{controlplanev1.FencingMachineLabel: ""}
	good := l.newHost(t, "cp-0", hostOptions{controlPlane: true, mac: "52:54:00:00:11:01", bmcCredentials: "bmc", labels: fencing})
	ilo := l.newHost(t, "cp-1", hostOptions{controlPlane: true, mac: "52:54:00:00:11:02", bmcCredentials: "bmc", labels: fencing, bmc: "ilo5-virtualmedia://10.0.0.9"})

	agent := agentOf(t, good)
	g.Eventually(func(g Gomega) {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(aiv1beta1.GroupVersion.WithKind("Agent"))
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(agent), u)).To(Succeed())
		ref, _, _ := unstructured.NestedString(u.Object, "spec", "fencingCredentialsSecretRef")
		g.Expect(ref).To(Equal("cp-0-fencing-credentials"))
		approved, _, _ := unstructured.NestedBool(u.Object, "spec", "approved")
		g.Expect(approved).To(BeTrue())
	}, timeout).Should(Succeed())
	secret := &corev1.Secret{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: agent.Namespace, Name: "cp-0-fencing-credentials"}, secret)).To(Succeed())
	g.Expect(secret.Data).To(Equal(map[string][]byte{
		"address": []byte(good.bmh.Spec.BMC.Address), "username": []byte("admin"), "password": []byte("s3cr3t-bmc"), "certificateVerification": []byte("Enabled"),
	}))
	cfg := get(g, good.config)
	g.Expect(metav1.IsControlledBy(secret, cfg)).To(BeTrue(), "deleted with the host's config")

	g.Eventually(func(g Gomega) {
		c := condition(g, ilo.config, bootstrapv1.AgentApprovedCondition)
		g.Expect(c.Reason).To(Equal(bootstrapv1.FencingCredentialsUnavailableReason))
		g.Expect(c.Message).To(ContainSubstring("BMC address uses ilo5-virtualmedia"))
	}, timeout).Should(Succeed())
	iloAgent := agentOf(t, ilo)
	g.Expect(get(g, iloAgent).Spec.Approved).To(BeFalse(), "a host that cannot be fenced is not installed")
	for _, c := range get(g, ilo.config).Status.Conditions {
		g.Expect(c.Message).NotTo(ContainSubstring("s3cr3t-bmc"))
	}
	events := &eventsv1.EventList{}
	g.Expect(env.Client.List(ctx, events, client.InNamespace(l.ns))).To(Succeed())
	for _, e := range events.Items {
		g.Expect(e.Note).NotTo(ContainSubstring("s3cr3t-bmc"))
	}
}
