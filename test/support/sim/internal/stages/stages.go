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

// Package stages holds the progress stages assisted-service expects of a host, shared by the
// assisted-service simulator and the hosts that talk to the real service.
package stages

import (
	"slices"

	"github.com/openshift/assisted-service/models"
)

// Host are the progress stages assisted-service expects of a host of that role
// (internal/host/common.go FindMatchingStages and BootstrapStages, MasterStages, WorkerStages,
// SnoStages at 780deffb6a35): role "bootstrap" is the bootstrap master, whose stages differ on a
// single-node cluster (sno). Any other role has none.
func Host(role models.HostRole, sno bool) []models.HostStage {
	switch {
	case role == models.HostRoleBootstrap && sno:
		return []models.HostStage{models.HostStageStartingInstallation, models.HostStageInstalling,
			models.HostStageWaitingForBootkube, models.HostStageWritingImageToDisk,
			models.HostStageRebooting, models.HostStageJoined, models.HostStageDone}
	case role == models.HostRoleBootstrap:
		return []models.HostStage{models.HostStageStartingInstallation, models.HostStageInstalling,
			models.HostStageWritingImageToDisk, models.HostStageWaitingForControlPlane,
			models.HostStageWaitingForBootkube, models.HostStageWaitingForController,
			models.HostStageRebooting, models.HostStageConfiguring, models.HostStageJoined,
			models.HostStageDone}
	case role == models.HostRoleMaster:
		return []models.HostStage{models.HostStageStartingInstallation, models.HostStageInstalling,
			models.HostStageWritingImageToDisk, models.HostStageRebooting,
			models.HostStageConfiguring, models.HostStageJoined, models.HostStageDone}
	case role == models.HostRoleWorker:
		return []models.HostStage{models.HostStageStartingInstallation, models.HostStageInstalling,
			models.HostStageWritingImageToDisk, models.HostStageWaitingForControlPlane, models.HostStageRebooting,
			models.HostStageWaitingForIgnition, models.HostStageConfiguring,
			models.HostStageJoined, models.HostStageDone}
	}
	return nil
}

// Day2 are the stages a host added to an installed cluster goes through: its role's up to
// Rebooting, which its installer reports, then Joined once its Node registered and Done once it
// is Ready, which the service's agent controller sets itself (there is no installer controller
// of the cluster to report the others: internal/controller/controllers/agent_controller.go
// updateHostInstallProgress with HostStageJoined and HostStageDone).
func Day2(role models.HostRole) []models.HostStage {
	st := Host(role, false)
	i := slices.Index(st, models.HostStageRebooting)
	if i < 0 {
		return nil
	}
	return append(slices.Clone(st[:i+1]), models.HostStageJoined, models.HostStageDone)
}
