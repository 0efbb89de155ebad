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

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

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

	// installs creates the cluster on hosts of a namespace of their own and waits until it is
	// Available with every node, timing it.
	installs := func(name string, controlPlanes, workers int32) {
		GinkgoHelper()
		start := time.Now()
		_, ns := addHosts(l, "real-"+name, "real-"+name, int(controlPlanes+workers))
		reportOnFailure(l, ns)
		Expect(l.CreateCluster(ctx, lab.ClusterOptions{Namespace: ns, Name: name, ControlPlanes: controlPlanes, Workers: workers,
			Version: "4.17.3"})).To(Succeed())
		// Available, and every Machine Running on its Node (the lab's clusters share one workload
		// API server: its Nodes are every cluster's).
		Eventually(func(g Gomega) {
			cp := controlPlane(l, ns, name)(g)
			g.Expect(conditionTrue(cp.Status.Conditions, "Available")).To(BeTrue(), "control plane not Available")
			g.Expect(cp.Status.ReadyReplicas).To(HaveValue(BeEquivalentTo(controlPlanes)))
			g.Expect(runningMachines(g, l, ns, client.MatchingLabels{clusterv1.ClusterNameLabel: name})).To(BeEquivalentTo(controlPlanes + workers))
		}, timeout, interval).Should(Succeed())
		AddReportEntry(name+" install on the real assisted-service", time.Since(start).Round(time.Second).String())
	}

	It("installs single-node OpenShift", func() {
		installs("sno", 1, 0)
	})

	It("installs a three-node control plane with a worker", func() {
		installs("multi", 3, 1)
	})
})
