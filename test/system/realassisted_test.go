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

package system

import (
	"time"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/lab"
)

// The first lab on the real assisted-service (lab.Options.Assisted = AssistedReal): the service
// at the commit test/support/assistedservice pins, its hosts played over its REST API
// (test/support/sim/discovery). Each install is timed (a report entry).
var _ = Describe("The real assisted-service", Ordered, startsFirst, func() {
	var l *lab.Lab
	BeforeAll(func() {
		l = startLabWithOptions(lab.Options{Assisted: lab.AssistedReal})
	})

	// installs creates the cluster on hosts of a namespace of their own (edited by edit, when
	// set) and waits until it is Available with every node, timing it; it returns the namespace.
	installs := func(name string, controlPlanes, workers int32, edit func(client.Object)) string {
		GinkgoHelper()
		start := time.Now()
		_, ns := addHosts(l, "real-"+name, "real-"+name, int(controlPlanes+workers))
		reportOnFailure(l, ns)
		objs, err := l.ClusterObjects(lab.ClusterOptions{Namespace: ns, Name: name, ControlPlanes: controlPlanes, Workers: workers, Version: "4.17.3"})
		Expect(err).NotTo(HaveOccurred())
		for _, o := range objs {
			if edit != nil {
				edit(o)
			}
			Expect(l.Mgmt.Client.Create(ctx, o, client.FieldValidation(metav1.FieldValidationStrict))).To(Succeed())
		}
		// Available, and every Machine Running on its Node (the lab's clusters share one workload
		// API server: its Nodes are every cluster's).
		Eventually(func(g Gomega) {
			cp := controlPlane(l, ns, name)(g)
			g.Expect(conditionTrue(cp.Status.Conditions, "Available")).To(BeTrue(), "control plane not Available")
			g.Expect(cp.Status.ReadyReplicas).To(HaveValue(BeEquivalentTo(controlPlanes)))
			g.Expect(runningMachines(g, l, ns, client.MatchingLabels{clusterv1.ClusterNameLabel: name})).To(BeEquivalentTo(controlPlanes + workers))
		}, timeout, interval).Should(Succeed())
		AddReportEntry(name+" install on the real assisted-service", time.Since(start).Round(time.Second).String())
		return ns
	}

	It("installs single-node OpenShift on one host, named from its metadata as upstream's manifests name it", func() {
		ns := installs("sno", 1, 0, func(o client.Object) {
			if cp, ok := o.(*controlplanev1.OpenshiftAssistedControlPlane); ok {
				// Host metadata variables, resolved from the BareMetalHost's metadata as the
				// upstream provider resolves them from the host's config drive.
				cp.Spec.OpenshiftAssistedConfigSpec.NodeRegistration.Name = "$METADATA_LOCAL_HOSTNAME"
				cp.Spec.OpenshiftAssistedConfigSpec.NodeRegistration.KubeletExtraLabels = []string{"example.com/host-uid=${METADATA_UUID}"}
			}
		})
		host := &bmov1alpha1.BareMetalHost{}
		Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "real-sno-0"}, host)).To(Succeed())
		node := &corev1.Node{}
		Eventually(func(g Gomega) {
			g.Expect(l.Workload.Client.Get(ctx, client.ObjectKey{Name: "real-sno-0"}, node)).To(Succeed(), "the node is named after the host's local-hostname, not the Machine")
			g.Expect(node.Labels).To(HaveKeyWithValue("example.com/host-uid", string(host.UID)))
		}, timeout, interval).Should(Succeed())

		aci := &hiveextv1beta1.AgentClusterInstall{}
		Expect(l.Mgmt.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "sno"}, aci)).To(Succeed())
		Expect(aci.Spec.ProvisionRequirements.ControlPlaneAgents).To(Equal(1))
		Expect(aci.Spec.ProvisionRequirements.WorkerAgents).To(Equal(0))
		Expect(aci.Spec.PlatformType).To(Equal(hiveextv1beta1.NonePlatformType))
	})

	It("installs a three-node control plane with a worker", func() {
		installs("multi", 3, 1, nil)
	})
})
