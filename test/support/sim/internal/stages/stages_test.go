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

package stages

import (
	"slices"
	"testing"

	"github.com/openshift/assisted-service/models"
)

// TestHost: the service's lists at 780deffb6a35, ending Done; the bootstrap of a single node has
// no Configuring; an unassigned role has none.
func TestHost(t *testing.T) {
	for _, tc := range []struct {
		role      models.HostRole
		sno       bool
		n         int
		beforeRbt models.HostStage
	}{
		{models.HostRoleBootstrap, true, 7, models.HostStageWritingImageToDisk},
		{models.HostRoleBootstrap, false, 10, models.HostStageWaitingForController},
		{models.HostRoleMaster, false, 7, models.HostStageWritingImageToDisk},
		{models.HostRoleWorker, false, 9, models.HostStageWaitingForControlPlane},
	} {
		st := Host(tc.role, tc.sno)
		i := slices.Index(st, models.HostStageRebooting)
		if len(st) != tc.n || st[len(st)-1] != models.HostStageDone || i < 1 || st[i-1] != tc.beforeRbt {
			t.Errorf("Host(%s, %t) = %v", tc.role, tc.sno, st)
		}
	}
	if slices.Contains(Host(models.HostRoleBootstrap, true), models.HostStageConfiguring) {
		t.Error("a single node's bootstrap configures")
	}
	if Host(models.HostRoleAutoAssign, false) != nil {
		t.Error("an unassigned role has stages")
	}
}

// TestDay2: up to Rebooting as the role's, then Joined and Done.
func TestDay2(t *testing.T) {
	want := []models.HostStage{models.HostStageStartingInstallation, models.HostStageInstalling,
		models.HostStageWritingImageToDisk, models.HostStageWaitingForControlPlane, models.HostStageRebooting,
		models.HostStageJoined, models.HostStageDone}
	if got := Day2(models.HostRoleWorker); !slices.Equal(got, want) {
		t.Errorf("Day2(worker) = %v, want %v", got, want)
	}
	if got := Day2(models.HostRoleMaster); got[len(got)-3] != models.HostStageRebooting {
		t.Errorf("Day2(master) = %v", got)
	}
	if Day2(models.HostRoleAutoAssign) != nil {
		t.Error("an unassigned role has day-2 stages")
	}
}
