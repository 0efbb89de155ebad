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

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/internal/stages"
)

// installerStages are the stages the assisted-installer on the host reports, up to its reboot;
// nodeStages those reported for it once it runs OpenShift (by the installer controller, from the
// cluster), after after: the stages that follow it.
func installerStages(role models.HostRole, sno bool) []models.HostStage {
	st := stages.Host(role, sno)
	if i := slices.Index(st, models.HostStageRebooting); i >= 0 {
		return st[:i+1]
	}
	return st
}

func nodeStages(role models.HostRole, sno bool, after models.HostStage) []models.HostStage {
	st := stages.Host(role, sno)
	i := slices.Index(st, after)
	if i < 0 {
		i = slices.Index(st, models.HostStageRebooting)
	}
	return st[i+1:]
}
