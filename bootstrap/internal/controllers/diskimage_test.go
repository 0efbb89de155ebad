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
	"encoding/pem"
	"net/http/httptest"
	"testing"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	capm3v1beta2 "github.com/metal3-io/cluster-api-provider-metal3/api/v1beta2"
	. "github.com/onsi/gomega"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	"github.com/openshift/assisted-service/models"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
)

// trustService puts the CA of the simulated assisted-service's certificate where the bootstrap
// provider looks for it by default (upstream CAPOA's assisted-installer/assisted-installer-ca).
func trustService(ctx context.Context, service *httptest.Server) error {
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "assisted-installer"}}); err != nil {
		return err
	}
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: service.Certificate().Raw})
	return env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "assisted-installer", Name: "assisted-installer-ca"},
		Data: map[string][]byte{"ca.crt": ca}})
}

// rhcosImage is an RHCOS disk image as a Metal3MachineTemplate of the image-based flow names it.
func rhcosImage() *capm3v1beta2.Image {
	return &capm3v1beta2.Image{URL: "https://mirror.example/rhcos-4.17.0-x86_64-openstack.x86_64.qcow2", DiskFormat: "qcow2",
		Checksum: ptr.To("https://mirror.example/sha256sum.txt"), ChecksumType: "sha256"}
}

// TestDiskImageFlow follows a Metal3 host that boots an RHCOS disk image: its Metal3Machine keeps
// the image, its bootstrap data carries the InfraEnv's discovery ignition (downloaded over TLS,
// trusted through the CA bundle), and it installs whatever its BMC driver and boot mode, which
// the live ISO would refuse (IPMI, legacy BIOS).
func TestDiskImageFlow(t *testing.T) {
	g := NewWithT(t)
	l := newLab(t, models.ClusterStatusInsufficient)
	h := l.newHost(t, "worker-disk", hostOptions{mac: "52:54:00:00:05:01", image: rhcosImage(),
		bmc: "ipmi://192.168.111.1:6230", bootMode: bmov1alpha1.Legacy})

	g.Eventually(func(g Gomega) {
		c := condition(g, h.config, bootstrapv1.InstallingCondition)
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue), c.Message)
	}, timeout).Should(Succeed())
	cfg := get(g, h.config)
	g.Expect(condition(g, h.config, bootstrapv1.ReadyCondition).Status).To(Equal(metav1.ConditionTrue))
	g.Expect(cfg.Status.ISODownloadURL).To(BeEmpty())

	// The Metal3Machine boots the template's image, not the ISO.
	g.Expect(get(g, h.m3m).Spec.Image).To(Equal(*rhcosImage()))

	// The data Secret merges the discovery ignition of the config's InfraEnv.
	ie := get(g, &aiv1beta1.InfraEnv{ObjectMeta: metav1.ObjectMeta{Namespace: l.ns, Name: cfg.Name}})
	secret := get(g, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: l.ns, Name: cfg.Status.DataSecretName}})
	g.Expect(registersWith(secret.Data["value"])).To(Equal(string(ie.UID)))
	g.Expect(string(secret.Data["value"])).To(ContainSubstring(`"path":"/etc/hostname"`))

	// Its Agent was recognized and approved.
	agent := agentOf(t, h)
	g.Expect(agent.Name).To(Equal("agent-" + h.bmh.Name))
	g.Expect(agent.Spec.Approved).To(BeTrue())
	g.Expect(agent.Spec.Hostname).To(Equal("worker-disk"))
}

// TestDiskImageFlowWithoutDiscoveryIgnition: when assisted-service does not serve the discovery
// ignition (here it refuses the token), the config says why in DataSecretAvailable, with a
// Warning event, and no bootstrap data exists, so CAPM3 provisions nothing; the token appears
// nowhere. Once the InfraEnv carries a valid token the host gets its data.
func TestDiskImageFlowWithoutDiscoveryIgnition(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	l := newLab(t, models.ClusterStatusInsufficient)
	simulator.setStaleToken(l.ns)
	h := l.newHost(t, "worker-refused", hostOptions{mac: "52:54:00:00:05:02", image: rhcosImage()})

	ie := &aiv1beta1.InfraEnv{ObjectMeta: metav1.ObjectMeta{Namespace: l.ns, Name: h.config.Name}}
	var msg string
	g.Eventually(func(g Gomega) {
		c := condition(g, h.config, bootstrapv1.DataSecretAvailableCondition)
		g.Expect(c.Reason).To(Equal(bootstrapv1.DiscoveryIgnitionUnavailableReason))
		msg = c.Message
	}, timeout).Should(Succeed())
	g.Expect(msg).To(ContainSubstring("refused the InfraEnv's token (401 Unauthorized)"))
	g.Expect(msg).To(ContainSubstring(h.m3m.Name))
	g.Expect(msg).NotTo(ContainSubstring("stale-token"))
	g.Expect(get(g, h.config).Status.DataSecretName).To(BeEmpty())
	g.Eventually(func(g Gomega) {
		events := &corev1.EventList{}
		g.Expect(env.Client.List(ctx, events, client.InNamespace(l.ns))).To(Succeed())
		var found bool
		for _, e := range events.Items {
			found = found || (e.InvolvedObject.Name == h.config.Name && e.Type == corev1.EventTypeWarning &&
				e.Reason == bootstrapv1.DiscoveryIgnitionUnavailableReason && e.Message == msg)
		}
		g.Expect(found).To(BeTrue())
	}, timeout).Should(Succeed())

	// assisted-service publishes a valid token (a recreated InfraEnv has a new one).
	g.Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(ie), ie)).To(Succeed())
		ie.Status.InfraEnvDebugInfo.EventsURL = simulator.eventsURL(string(ie.UID), serviceToken(string(ie.UID)))
		g.Expect(env.Client.Status().Update(ctx, ie)).To(Succeed())
	}, timeout).Should(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(condition(g, h.config, bootstrapv1.AgentApprovedCondition).Status).To(Equal(metav1.ConditionTrue))
	}, timeout).Should(Succeed())
}
