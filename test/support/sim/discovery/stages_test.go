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

package discovery

import (
	"slices"
	"testing"

	"github.com/openshift/assisted-service/models"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/internal/stages"
)

// TestStages: the installer reports up to Rebooting, the cluster the rest, for every role.
func TestStages(t *testing.T) {
	for _, tc := range []struct {
		role      models.HostRole
		sno       bool
		installer models.HostStage // its last stage before Rebooting
		node      []models.HostStage
	}{
		{models.HostRoleBootstrap, true, models.HostStageWritingImageToDisk, []models.HostStage{models.HostStageJoined, models.HostStageDone}},
		{models.HostRoleBootstrap, false, models.HostStageWaitingForController, []models.HostStage{models.HostStageConfiguring, models.HostStageJoined, models.HostStageDone}},
		{models.HostRoleMaster, false, models.HostStageWritingImageToDisk, []models.HostStage{models.HostStageConfiguring, models.HostStageJoined, models.HostStageDone}},
		{models.HostRoleWorker, false, models.HostStageWaitingForControlPlane, []models.HostStage{models.HostStageWaitingForIgnition, models.HostStageConfiguring, models.HostStageJoined, models.HostStageDone}},
	} {
		inst := installerStages(tc.role, tc.sno)
		if inst[len(inst)-1] != models.HostStageRebooting || inst[len(inst)-2] != tc.installer {
			t.Errorf("%s (sno %t): installer stages %v", tc.role, tc.sno, inst)
		}
		if got := nodeStages(tc.role, tc.sno, models.HostStageRebooting); !slices.Equal(got, tc.node) {
			t.Errorf("%s (sno %t): node stages %v, want %v", tc.role, tc.sno, got, tc.node)
		}
		if got := nodeStages(tc.role, tc.sno, models.HostStageDone); len(got) != 0 {
			t.Errorf("%s: stages after Done: %v", tc.role, got)
		}
	}
	if stages.Host(models.HostRoleAutoAssign, false) != nil {
		t.Error("an unassigned role has stages")
	}
}
