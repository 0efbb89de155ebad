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
	"testing"
	"time"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/inventory"
)

// TestSingleNodeClusterInstallsOnRealBMO installs a single-node cluster with the real
// baremetal-operator driving the host (Options.BareMetal real): CAPM3 meets BMO's own state
// machine, and the host BMO provisions boots the discovery ISO. A second host, whose BMC refuses
// the credentials of its BareMetalHost, fails registration as Ironic fails it; BMO's webhook
// refuses a host it would not provision.
func TestSingleNodeClusterInstallsOnRealBMO(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Now()
	l, err := Start(ctx, Options{BareMetal: BareMetalReal})
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { g.Expect(l.Stop()).To(Succeed()) }()

	ns, err := l.Mgmt.CreateNamespace(ctx, "sno-bmo")
	g.Expect(err).NotTo(HaveOccurred())
	hosts, err := l.AddHosts(ctx, ns, "sno-bmo-host", 1)
	g.Expect(err).NotTo(HaveOccurred())
	_, err = l.AddHosts(ctx, ns, "wrong-creds", 1, func(h *inventory.Host, _ *bmov1alpha1.BareMetalHost) {
		h.BMCPassword = "not-what-the-secret-says"
	})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(l.CreateCluster(ctx, ClusterOptions{Namespace: ns, Name: "sno", ControlPlanes: 1, Version: "4.17.3"})).To(Succeed())
	defer func() {
		if t.Failed() {
			s, _ := l.Snapshot(ctx, ns)
			t.Logf("lab state:\n%s\nmanager errors: %v", s, l.Err())
		}
	}()

	// BMO's registration of the host whose BMC refuses its credentials fails with Ironic's
	// verification error, and the host goes no further.
	g.Eventually(func(g Gomega) {
		bmh := &bmov1alpha1.BareMetalHost{}
		g.Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "wrong-creds-0"}, bmh)).To(Succeed())
		g.Expect(bmh.Status.Provisioning.State).To(Equal(bmov1alpha1.StateRegistering))
		g.Expect(bmh.Status.ErrorType).To(Equal(bmov1alpha1.RegistrationError))
		g.Expect(bmh.Status.ErrorMessage).To(ContainSubstring("returned code 401"))
	}, time.Minute, 100*time.Millisecond).Should(Succeed())

	g.Eventually(func(g Gomega) {
		cp := &controlplanev1.OpenshiftAssistedControlPlane{}
		g.Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "sno"}, cp)).To(Succeed())
		g.Expect(cp.Status.Initialization.ControlPlaneInitialized).To(Equal(ptr.To(true)))
		kubeconfig := &corev1.Secret{}
		g.Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "sno-kubeconfig"}, kubeconfig)).To(Succeed())
	}, 3*time.Minute, time.Second).Should(Succeed())
	t.Logf("lab start to an initialized control plane on the real BMO: %s", time.Since(start).Round(100*time.Millisecond))

	// BMO's status of the host it provisioned: the hardware Ironic's inspection reported, the live
	// ISO, the credentials it verified, and the HostFirmwareSettings it created at registration.
	bmh := &bmov1alpha1.BareMetalHost{}
	g.Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: hosts[0].Name}, bmh)).To(Succeed())
	g.Expect(bmh.Status.Provisioning.State).To(Equal(bmov1alpha1.StateProvisioned))
	g.Expect(bmh.Status.Provisioning.ID).NotTo(BeEmpty())
	g.Expect(bmh.Status.HardwareDetails).To(Equal(hosts[0].HardwareDetails()))
	g.Expect(bmh.Status.GoodCredentials.Reference).NotTo(BeNil())
	g.Expect(bmh.Status.PoweredOn).To(BeTrue())
	hfs := &bmov1alpha1.HostFirmwareSettings{}
	g.Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: hosts[0].Name}, hfs)).To(Succeed())

	// BMO's webhook refuses at admission a host whose disk image has no checksum.
	refused := hosts[0].BareMetalHost(ns, "sno-bmo-host-bmc")
	refused.Name = "no-checksum"
	refused.Spec.BMC.Address += "-other"
	refused.Spec.BootMACAddress = "52:54:00:ff:ff:01"
	refused.Spec.Image = &bmov1alpha1.Image{URL: "https://images.lab/rhcos.qcow2"}
	err = l.Mgmt.Client.Create(ctx, refused)
	g.Expect(err).To(MatchError(ContainSubstring("checksum is required for normal images")))
}

// TestUnknownBareMetal: a bare-metal operator the lab does not know is refused, naming the two it
// knows.
func TestUnknownBareMetal(t *testing.T) {
	g := NewWithT(t)
	l := &Lab{opts: Options{BareMetal: "ironic"}}
	err := l.setupBareMetal(context.Background(), nil, nil, nil, controller.Options{})
	g.Expect(err).To(MatchError(`unknown bare-metal operator "ironic": want "sim" or "real"`))
}
