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

	"github.com/openshift/assisted-service/models"
)

// hostStages are the progress stages assisted-service expects of a host of that role
// (internal/host/common.go FindMatchingStages and BootstrapStages, MasterStages, WorkerStages,
// SnoStages at 780deffb6a35): role "bootstrap" is the bootstrap master, whose stages differ on a
// single-node cluster (sno).
func hostStages(role models.HostRole, sno bool) []models.HostStage {
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

// installerStages are the stages the assisted-installer on the host reports, up to its reboot;
// nodeStages those reported for it once it runs OpenShift (by the installer controller, from the
// cluster), after after: the stages that follow it.
func installerStages(role models.HostRole, sno bool) []models.HostStage {
	st := hostStages(role, sno)
	if i := slices.Index(st, models.HostStageRebooting); i >= 0 {
		return st[:i+1]
	}
	return st
}

func nodeStages(role models.HostRole, sno bool, after models.HostStage) []models.HostStage {
	st := hostStages(role, sno)
	i := slices.Index(st, after)
	if i < 0 {
		i = slices.Index(st, models.HostStageRebooting)
	}
	return st[i+1:]
}
