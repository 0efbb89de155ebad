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

// The assisted-installer the install step starts (openshift/assisted-installer
// src/installer/installer.go): it reports each stage (PUT /v2/infra-envs/{id}/hosts/{id}/progress,
// subsystem/utils_test.go updateProgress), writes the image to the installation disk (and, on a
// UEFI host, the boot entry first: efibootmgr), the bootstrap host waits for the control plane
// (two other masters' Nodes ready, waitForMinMasterNodes) before it reboots, and reboots. What
// runs after the reboot depends on what the host's firmware boots.

import (
	"context"
	"net/http"

	"github.com/openshift/assisted-service/models"
)

// install runs the installer of req until it reboots the host, or ctx ends (the host stopped, or
// the service stopped the installation).
func (a *agent) install(ctx context.Context, req models.InstallCmdRequest) {
	role := *req.Role
	sno := req.HighAvailabilityMode != nil && *req.HighAvailabilityMode == models.ClusterHighAvailabilityModeNone
	log := a.hs.Log.WithValues("host", a.host.Name, "role", role)
	for _, stage := range installerStages(role, sno) {
		switch stage {
		case models.HostStageWritingImageToDisk:
			if a.fromDisk {
				// A host that booted a disk image is installed to its existing root: no
				// efibootmgr, the boot order stays (inventory.Host.InstallToExistingRoot).
				a.host.InstallToExistingRoot()
			} else {
				a.host.WriteOS()
			}
		case models.HostStageWaitingForControlPlane:
			if role == models.HostRoleBootstrap && a.hs.Cluster != nil {
				if err := a.hs.Cluster.waitForControlPlane(ctx, a.api, req.ClusterID.String(), a.hs.PollInterval); err != nil {
					return
				}
			}
		}
		// The installer's UpdateHostInstallProgress (src/installer/installer.go): its inventory
		// client tries again (retrying), and a report that still fails is logged, and the
		// installation goes on.
		progress := &models.HostProgress{CurrentStage: stage}
		if err := a.hs.retrying().do(ctx, func() error {
			return a.api.do(ctx, http.MethodPut, a.hostPath()+"/progress", nil, progress, nil)
		}); err != nil {
			if ctx.Err() != nil {
				return
			}
			log.Error(err, "Failed to update node installation stage", "stage", stage)
		}
		sleep(ctx, a.hs.StageInterval)
		if ctx.Err() != nil {
			return
		}
	}
	a.hs.mu.Lock()
	a.hs.installed[a.host.SystemUUID] = installation{service: a.api, infraEnvID: a.infraEnv, hostID: a.id,
		cluster: req.ClusterID.String(), role: string(role), sno: sno}
	a.hs.mu.Unlock()
	log.Info("The installer reboots the host")
	a.hs.wg.Add(1)
	go func() {
		defer a.hs.wg.Done()
		a.hs.reboot(a.host)
	}()
}
