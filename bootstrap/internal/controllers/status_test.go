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
	"testing"

	. "github.com/onsi/gomega"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	"github.com/openshift/assisted-service/models"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
)

// TestStepsWaitInOrder: a step that is not done sets every later step False, each waiting for the
// one before it with its own reason.
func TestStepsWaitInOrder(t *testing.T) {
	g := NewWithT(t)
	c := &bootstrapv1.OpenshiftAssistedConfig{}
	waiting(c, bootstrapv1.WaitingForClusterReason, "Waiting for the cluster")
	g.Expect(conditions.Get(c, bootstrapv1.InfraEnvReadyCondition)).To(And(
		HaveField("Status", metav1.ConditionFalse), HaveField("Reason", bootstrapv1.WaitingForClusterReason)))
	for i, step := range stepConditions[1:] {
		got := conditions.Get(c, step)
		g.Expect(got).NotTo(BeNil(), step)
		g.Expect(got.Status).To(Equal(metav1.ConditionFalse), step)
		g.Expect(got.Reason).To(Equal(waitingReasons[step]), step)
		g.Expect(got.Message).To(Equal("Waiting for "+stepConditions[i]), step)
	}

	// The InfraEnv is ready and the data Secret waits: the steps before it are left as they are.
	conditions.Set(c, metav1.Condition{Type: bootstrapv1.InfraEnvReadyCondition, Status: metav1.ConditionTrue, Reason: bootstrapv1.ISOAvailableReason})
	setWaitingAfter(c, bootstrapv1.InfraEnvReadyCondition, bootstrapv1.WaitingForMetal3MachineReason, "Waiting for the Metal3Machine")
	g.Expect(conditions.IsTrue(c, bootstrapv1.InfraEnvReadyCondition)).To(BeTrue())
	g.Expect(conditions.Get(c, bootstrapv1.DataSecretAvailableCondition)).To(And(
		HaveField("Reason", bootstrapv1.WaitingForMetal3MachineReason), HaveField("Message", "Waiting for the Metal3Machine")))
	g.Expect(conditions.GetReason(c, bootstrapv1.AgentRegisteredCondition)).To(Equal(bootstrapv1.WaitingForDataSecretReason))
}

// TestInstallConditions: Installing and Installed follow the assisted-service state of the host,
// with the stage and its progress while it installs.
func TestInstallConditions(t *testing.T) {
	for state, want := range map[string]struct {
		installing         metav1.ConditionStatus
		installingReason   string
		installed          metav1.ConditionStatus
		installedReason    string
		installingContains string
	}{
		models.HostStatusKnown:                  {metav1.ConditionFalse, bootstrapv1.NotInstallingReason, metav1.ConditionFalse, bootstrapv1.NotInstalledReason, `state "known"`},
		models.HostStatusInstallingInProgress:   {metav1.ConditionTrue, bootstrapv1.InstallingReason, metav1.ConditionFalse, bootstrapv1.NotInstalledReason, `(stage "Writing image to disk", 42%)`},
		models.HostStatusInstalled:              {metav1.ConditionFalse, bootstrapv1.InstalledReason, metav1.ConditionTrue, bootstrapv1.InstalledReason, `state "installed"`},
		models.HostStatusAddedToExistingCluster: {metav1.ConditionFalse, bootstrapv1.InstalledReason, metav1.ConditionTrue, bootstrapv1.InstalledReason, `added-to-existing-cluster`},
		models.HostStatusError:                  {metav1.ConditionFalse, bootstrapv1.InstallationFailedReason, metav1.ConditionFalse, bootstrapv1.InstallationFailedReason, `: disk failed`},
	} {
		t.Run(state, func(t *testing.T) {
			g := NewWithT(t)
			c := &bootstrapv1.OpenshiftAssistedConfig{}
			a := &aiv1beta1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "a"}}
			a.Status.DebugInfo.State = state
			if state == models.HostStatusError {
				a.Status.DebugInfo.StateInfo = "disk failed"
			}
			a.Status.Progress.CurrentStage = "Writing image to disk"
			a.Status.Progress.InstallationPercentage = 42
			setInstallConditions(c, a)
			g.Expect(conditions.Get(c, bootstrapv1.InstallingCondition)).To(And(HaveField("Status", want.installing),
				HaveField("Reason", want.installingReason), HaveField("Message", ContainSubstring(want.installingContains))))
			g.Expect(conditions.Get(c, bootstrapv1.InstalledCondition)).To(And(HaveField("Status", want.installed),
				HaveField("Reason", want.installedReason)))
		})
	}
}

// TestJoinedCompletesTheStepsAMoveLost: a config whose Machine is a Node reports the steps done
// (a clusterctl move carries no status), keeps the reason of a step that completed here, and
// takes the Machine's data Secret.
func TestJoinedCompletesTheStepsAMoveLost(t *testing.T) {
	g := NewWithT(t)
	c := &bootstrapv1.OpenshiftAssistedConfig{}
	conditions.Set(c, metav1.Condition{Type: bootstrapv1.InfraEnvReadyCondition, Status: metav1.ConditionTrue, Reason: bootstrapv1.ISOAvailableReason})
	m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "m0"}}
	m.Spec.Bootstrap.DataSecretName = ptr.To("m0-data")
	m.Status.NodeRef = clusterv1.MachineNodeReference{Name: "node-0"}
	setJoined(c, m)
	g.Expect(c.Status.DataSecretName).To(Equal("m0-data"))
	g.Expect(c.Status.Initialization.DataSecretCreated).To(Equal(ptr.To(true)))
	g.Expect(conditions.GetReason(c, bootstrapv1.InfraEnvReadyCondition)).To(Equal(bootstrapv1.ISOAvailableReason), "a step done here keeps its reason")
	for _, step := range stepConditions[1:] {
		got := conditions.Get(c, step)
		g.Expect(got).NotTo(BeNil(), step)
		g.Expect(got.Reason).To(Equal(bootstrapv1.NodeJoinedReason), step)
		g.Expect(got.Message).To(Equal("Machine m0 is Node node-0 of the cluster"), step)
		g.Expect(got.Status).To(Equal(map[bool]metav1.ConditionStatus{true: metav1.ConditionFalse, false: metav1.ConditionTrue}[step == bootstrapv1.InstallingCondition]), step)
	}
}

func TestPendingUserActionSaysWhatToDo(t *testing.T) {
	g := NewWithT(t)
	c := &bootstrapv1.OpenshiftAssistedConfig{}
	a := &aiv1beta1.Agent{ObjectMeta: metav1.ObjectMeta{Name: "a"}}
	a.Status.DebugInfo.State = models.HostStatusInstallingPendingUserAction
	a.Status.DebugInfo.StateInfo = "Expected the host to boot from disk, but it booted the installation image - please reboot and fix boot order to boot from disk"
	setInstallConditions(c, a)
	cond := conditions.Get(c, bootstrapv1.InstallingCondition)
	g.Expect(cond.Reason).To(Equal(bootstrapv1.InstallationPendingUserActionReason))
	g.Expect(cond.Message).To(And(ContainSubstring("booted the installation image"), ContainSubstring("LIVE_ISO_FORCE_PERSISTENT_BOOT_DEVICE=Never"),
		ContainSubstring("reboot.metal3.io")))
	g.Expect(conditions.GetReason(c, bootstrapv1.InstalledCondition)).To(Equal(bootstrapv1.NotInstalledReason))

	// Ready says it too (Cluster API mirrors it into the Machine), and goes back to Ready after.
	for _, ct := range []string{bootstrapv1.InfraEnvReadyCondition, bootstrapv1.DataSecretAvailableCondition,
		bootstrapv1.AgentRegisteredCondition, bootstrapv1.AgentApprovedCondition} {
		conditions.Set(c, metav1.Condition{Type: ct, Status: metav1.ConditionTrue, Reason: "Done"})
	}
	setSummary(c)
	ready := conditions.Get(c, bootstrapv1.ReadyCondition)
	g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
	g.Expect(ready.Reason).To(Equal(bootstrapv1.InstallationPendingUserActionReason))
	g.Expect(ready.Message).To(Equal(cond.Message))
	a.Status.DebugInfo.State = models.HostStatusInstallingInProgress
	setInstallConditions(c, a)
	setSummary(c)
	ready = conditions.Get(c, bootstrapv1.ReadyCondition)
	g.Expect(ready.Status).To(Equal(metav1.ConditionTrue))
	g.Expect(ready.Reason).To(Equal(bootstrapv1.ReadyReason))
}
