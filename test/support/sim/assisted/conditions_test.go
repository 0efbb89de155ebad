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

package assisted

import (
	"strings"
	"testing"

	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	"github.com/openshift/assisted-service/models"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func aciWith(cp, workers int) *hiveextv1beta1.AgentClusterInstall {
	return &hiveextv1beta1.AgentClusterInstall{Spec: hiveextv1beta1.AgentClusterInstallSpec{
		ProvisionRequirements: hiveextv1beta1.ProvisionRequirements{ControlPlaneAgents: cp, WorkerAgents: workers}}}
}

// TestRequirementsMet: the cluster installs only with exactly the required agents, all approved.
func TestRequirementsMet(t *testing.T) {
	for _, tc := range []struct {
		name       string
		state      string
		n          aciCounts
		wantReason string
		wantOK     bool
	}{
		{"too few", models.ClusterStatusReady, aciCounts{registered: 3, approved: 3}, hiveextv1beta1.ClusterInsufficientAgentsReason, false},
		{"unsynced", models.ClusterStatusReady, aciCounts{registered: 5, approved: 5, unsynced: 1}, hiveextv1beta1.ClusterUnsyncedAgentsReason, false},
		{"unapproved", models.ClusterStatusReady, aciCounts{registered: 5, approved: 4}, hiveextv1beta1.ClusterUnapprovedAgentsReason, false},
		{"too many", models.ClusterStatusReady, aciCounts{registered: 6, approved: 6}, hiveextv1beta1.ClusterAdditionalAgentsReason, false},
		{"exactly", models.ClusterStatusReady, aciCounts{registered: 5, approved: 5}, hiveextv1beta1.ClusterReadyReason, true},
		{"insufficient", models.ClusterStatusInsufficient, aciCounts{registered: 5, approved: 5}, hiveextv1beta1.ClusterNotReadyReason, false},
		{"installing", models.ClusterStatusInstalling, aciCounts{}, hiveextv1beta1.ClusterAlreadyInstallingReason, true},
		{"adding hosts", models.ClusterStatusAddingHosts, aciCounts{}, hiveextv1beta1.ClusterAlreadyInstallingReason, true},
		{"error", models.ClusterStatusError, aciCounts{}, hiveextv1beta1.ClusterInstallationStoppedReason, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reason, _, ok := requirementsMet(aciWith(3, 2), tc.state, tc.n)
			if reason != tc.wantReason || ok != tc.wantOK {
				t.Errorf("got %s/%v, want %s/%v", reason, ok, tc.wantReason, tc.wantOK)
			}
		})
	}
}

func agentIn(state string, role models.HostRole) aiv1beta1.Agent {
	a := aiv1beta1.Agent{ObjectMeta: metav1.ObjectMeta{Name: string(role) + state}}
	a.Spec.Role = role
	a.Status.DebugInfo.State = state
	return a
}

// TestBackendState: ready needs every host known and enough control-plane hosts.
// named gives an Agent its name.
func named(a aiv1beta1.Agent, name string) aiv1beta1.Agent {
	a.Name = name
	return a
}

func TestBackendState(t *testing.T) {
	known, master, worker, auto := models.HostStatusKnown, models.HostRoleMaster, models.HostRoleWorker, models.HostRole("")
	for _, tc := range []struct {
		name     string
		cp       int
		agents   []aiv1beta1.Agent
		arbiters int
		want     string
		fenced   map[string]bool
	}{
		{"no hosts", 1, nil, 0, models.ClusterStatusInsufficient, nil},
		{"SNO", 1, []aiv1beta1.Agent{agentIn(known, auto)}, 0, models.ClusterStatusReady, nil},
		{"a host not known", 3, []aiv1beta1.Agent{agentIn(known, master), agentIn(known, master), agentIn(models.HostStatusInsufficient, master)}, 0,
			models.ClusterStatusInsufficient, nil},
		{"too few masters", 3, []aiv1beta1.Agent{agentIn(known, master), agentIn(known, worker), agentIn(known, worker)}, 0,
			models.ClusterStatusInsufficient, nil},
		{"auto-assign counts as master", 3, []aiv1beta1.Agent{agentIn(known, master), agentIn(known, auto), agentIn(known, auto)}, 0,
			models.ClusterStatusReady, nil},
		{"two masters and their arbiter", 2, []aiv1beta1.Agent{agentIn(known, master), agentIn(known, master), agentIn(known, HostRoleArbiter)}, 1,
			models.ClusterStatusReady, nil},
		{"two masters, the arbiter missing", 2, []aiv1beta1.Agent{agentIn(known, master), agentIn(known, master)}, 1,
			models.ClusterStatusInsufficient, nil},
		{"an arbiter does not count as a master", 2, []aiv1beta1.Agent{agentIn(known, master), agentIn(known, HostRoleArbiter), agentIn(known, worker)}, 1,
			models.ClusterStatusInsufficient, nil},
		{"two masters without an arbiter or fencing", 2, []aiv1beta1.Agent{named(agentIn(known, master), "a"), named(agentIn(known, master), "b")}, 0,
			models.ClusterStatusInsufficient, nil},
		{"two masters, one with fencing credentials", 2, []aiv1beta1.Agent{named(agentIn(known, master), "a"), named(agentIn(known, master), "b")}, 0,
			models.ClusterStatusInsufficient, map[string]bool{"a": true}},
		{"two masters with fencing credentials (TNF)", 2, []aiv1beta1.Agent{named(agentIn(known, master), "a"), named(agentIn(known, master), "b")}, 0,
			models.ClusterStatusReady, map[string]bool{"a": true, "b": true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, why := backendState(aciWith(tc.cp, 0), tc.agents, tc.arbiters, tc.fenced); got != tc.want {
				t.Errorf("got %s (%s), want %s", got, why, tc.want)
			}
		})
	}
}

// TestArbiterSpecError: assisted-service refuses arbiter clusters outside 2-5 control-plane nodes
// or off the baremetal platform, and has nothing to say of clusters without arbiters.
func TestArbiterSpecError(t *testing.T) {
	for _, tc := range []struct {
		cp, arbiters int
		platform     hiveextv1beta1.PlatformType
		want         string
	}{
		{3, 0, hiveextv1beta1.NonePlatformType, ""},
		{2, 1, hiveextv1beta1.BareMetalPlatformType, ""},
		{5, 1, "", ""},
		{1, 1, hiveextv1beta1.BareMetalPlatformType, "2 to 5 control plane nodes"},
		{2, 1, hiveextv1beta1.NonePlatformType, "platform baremetal"},
	} {
		aci := aciWith(tc.cp, 0)
		aci.Spec.PlatformType = tc.platform
		if got := arbiterSpecError(aci, tc.arbiters); (got == "") != (tc.want == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%d control plane, %d arbiters, platform %q: got %q, want %q", tc.cp, tc.arbiters, tc.platform, got, tc.want)
		}
	}
}

// TestClusterNameSpecError: assisted-service takes dotted cluster names on platform None only,
// and never an uppercase letter or an empty label.
func TestClusterNameSpecError(t *testing.T) {
	for _, tc := range []struct {
		name     string
		platform hiveextv1beta1.PlatformType
		umn      *bool
		refused  bool
	}{
		{"prod", hiveextv1beta1.BareMetalPlatformType, nil, false},
		{"east.prod", hiveextv1beta1.NonePlatformType, nil, false},
		{"east.prod", "", ptr.To(true), false},
		{"east.prod", hiveextv1beta1.BareMetalPlatformType, nil, true},
		{"east.prod", "", nil, true},
		{"east..prod", hiveextv1beta1.NonePlatformType, nil, true},
		{"Prod", hiveextv1beta1.NonePlatformType, nil, true},
	} {
		aci := aciWith(3, 0)
		aci.Spec.PlatformType = tc.platform
		aci.Spec.Networking.UserManagedNetworking = tc.umn
		got := clusterNameSpecError(aci, tc.name)
		if (got != "") != tc.refused || (tc.refused && !strings.Contains(got, "Cluster name format is not valid: '"+tc.name+"'")) {
			t.Errorf("%q on platform %q: got %q, want refused %v", tc.name, tc.platform, got, tc.refused)
		}
	}
}
