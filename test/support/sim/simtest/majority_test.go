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

package simtest

import (
	"testing"

	. "github.com/onsi/gomega"
	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	"github.com/openshift/assisted-service/models"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/inventory"
)

// TestMajorityGroupNeedsRunningPeers: as with the real assisted-service, a host of a
// three-node cluster whose peer is off has no connectivity to the majority of hosts (its
// peer's agent does not answer its connectivity checks): both running hosts turn
// insufficient with that message and the cluster does not install, approved; once the host is
// on again (its agent registers), every host is known and the cluster installs.
func TestMajorityGroupNeedsRunningPeers(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t, "majority")
	hosts := inventory.Generate("majority-"+ns, 3, inventory.GenerateOptions{})
	for _, h := range hosts {
		inv.Add(h)
	}
	off := hosts[2]
	wc := watchClient(t, mgmt)
	aciStates := recordStates(t, wc, &hiveextv1beta1.AgentClusterInstallList{}, ns, "maj", aciState)
	peerStates := recordStates(t, wc, &aiv1beta1.AgentList{}, ns, hosts[0].SystemUUID, agentState)

	cd, aci := createCluster(g, ns, "maj", 3, 0)
	ie := createInfraEnv(t, g, ns, "maj", &aiv1beta1.ClusterReference{Name: cd.Name, Namespace: ns})
	bootHosts(g, ie, hosts)
	clusterIs := func(state string) {
		t.Helper()
		g.Eventually(func(g Gomega) {
			g.Expect(mgmt.Client.Get(ctx, client.ObjectKeyFromObject(aci), aci)).To(Succeed())
			g.Expect(aci.Status.DebugInfo.State).To(Equal(state))
		}, timeout).Should(Succeed())
	}
	clusterIs(models.ClusterStatusReady)

	g.Expect(sim.PoweredOff(ctx, off)).To(Succeed())
	for _, h := range hosts[:2] {
		g.Eventually(func(g Gomega) {
			a := agentOf(g, ns, h)
			g.Expect(a.Status.DebugInfo.State).To(Equal(models.HostStatusInsufficient))
			v := agentCondition(a, aiv1beta1.ValidatedCondition)
			g.Expect(v.Status).To(Equal(corev1.ConditionFalse))
			g.Expect(v.Message).To(ContainSubstring("No connectivity to the majority of hosts in the cluster"))
			g.Expect(a.Status.ValidationsInfo["network"]).To(ContainElement(And(
				HaveField("ID", string(models.HostValidationIDBelongsToMajorityGroup)), HaveField("Status", "failure"))))
		}, timeout).Should(Succeed())
	}
	g.Eventually(func(g Gomega) {
		g.Expect(agentOf(g, ns, off).Status.DebugInfo.State).To(Equal(models.HostStatusDisconnected))
	}, timeout).Should(Succeed())
	clusterIs(models.ClusterStatusInsufficient)
	approve(g, ns, hosts, models.HostRoleMaster)

	// Powered on again: its agent registers, its peers reach it.
	bootHosts(g, ie, []*inventory.Host{off})
	// The recorded sequences show that nothing installed while the host was off.
	g.Eventually(aciStates.States, timeout).Should(Equal([]string{models.ClusterStatusInsufficient, models.ClusterStatusReady,
		models.ClusterStatusInsufficient, models.ClusterStatusReady, models.ClusterStatusPreparingForInstallation,
		models.ClusterStatusInstalling, models.ClusterStatusFinalizing, models.ClusterStatusInstalled, models.ClusterStatusAddingHosts}))
	g.Eventually(peerStates.States, timeout).Should(Equal([]string{models.HostStatusDiscovering, models.HostStatusKnown,
		models.HostStatusInsufficient, models.HostStatusKnown, models.HostStatusPreparingForInstallation,
		models.HostStatusPreparingSuccessful, models.HostStatusInstalling, models.HostStatusInstallingInProgress,
		models.HostStatusInstalled}))
}
