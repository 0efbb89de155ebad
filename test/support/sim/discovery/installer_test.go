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
	"context"
	"slices"
	"testing"
	"time"

	"github.com/go-openapi/strfmt"
	"github.com/openshift/assisted-service/models"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/internal/kubelet"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/inventory"
)

// TestBootstrapWaitsForTheControlPlane: the bootstrap host of a multi-node cluster writes its
// disk, then waits until two other masters' Nodes are Ready before it goes on to reboot.
func TestBootstrapWaitsForTheControlPlane(t *testing.T) {
	tl := newTestLab(t, inventory.OverrideOnce)
	svc := tl.svc
	others := inventory.Generate("m", 2, inventory.GenerateOptions{})
	status := models.HostStatusInstallingInProgress
	for _, o := range others {
		id := strfmt.UUID(hostID(o))
		svc.cluster.Hosts = append(svc.cluster.Hosts, &models.Host{ID: &id, InfraEnvID: strfmt.UUID(svc.infraEnvID), Role: models.HostRoleMaster,
			Status: &status, RequestedHostname: o.Hostname})
	}
	full := models.ClusterHighAvailabilityModeFull
	svc.cluster.HighAvailabilityMode = &full
	if err := tl.hosts.Booted(context.Background(), inventory.Boot{Host: tl.host, ISOURL: tl.isoURL}); err != nil {
		t.Fatal(err)
	}
	id := hostID(tl.host)
	install := tl.installStep(t)
	install.Args[0] = `{"role":"bootstrap","cluster_id":"` + testClusterID + `","high_availability_mode":"Full"}`
	svc.queue(id, install)
	before := []models.HostStage{models.HostStageStartingInstallation, models.HostStageInstalling, models.HostStageWritingImageToDisk}
	eventually(t, "the disk written", func() bool { svc.mu.Lock(); defer svc.mu.Unlock(); return len(svc.progress[id]) >= len(before) })
	time.Sleep(100 * time.Millisecond)
	svc.mu.Lock()
	got := slices.Clone(svc.progress[id])
	svc.mu.Unlock()
	if !slices.Equal(got, before) {
		t.Fatalf("stages %v before the control plane is up, want %v", got, before)
	}
	for _, o := range others {
		if err := kubelet.Register(context.Background(), tl.workload, kubelet.Node{Host: o, Name: o.Hostname, Labels: kubelet.RoleLabels("master")}, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, "the reboot", func() bool {
		svc.mu.Lock()
		defer svc.mu.Unlock()
		return slices.Contains(svc.progress[id], models.HostStageRebooting)
	})
}

// TestInstallerOutlastsAServiceRestart: progress reports that the service refuses while it
// restarts are sent again, as assisted-installer's inventory client sends them, and the
// installation goes on to the reboot with every stage reported once.
func TestInstallerOutlastsAServiceRestart(t *testing.T) {
	tl := newTestLab(t, inventory.OverrideOnce)
	tl.hosts.RetryMinDelay, tl.hosts.RetryMaxDelay = time.Millisecond, 5*time.Millisecond
	svc := tl.svc
	svc.mu.Lock()
	svc.progressDown = 4
	svc.mu.Unlock()
	if err := tl.hosts.Booted(context.Background(), inventory.Boot{Host: tl.host, ISOURL: tl.isoURL}); err != nil {
		t.Fatal(err)
	}
	id := hostID(tl.host)
	svc.queue(id, tl.installStep(t))
	eventually(t, "the reboot", func() bool {
		svc.mu.Lock()
		defer svc.mu.Unlock()
		return slices.Contains(svc.progress[id], models.HostStageRebooting)
	})
	svc.mu.Lock()
	got := slices.Clone(svc.progress[id])
	svc.mu.Unlock()
	// The installer's stages end at the reboot; the rebooted host may report Joined by now (a
	// race this test lost once in CI 42).
	got = got[:slices.Index(got, models.HostStageRebooting)+1]
	if want := installerStages(models.HostRoleBootstrap, true); !slices.Equal(got, want) {
		t.Errorf("stages %v, want %v", got, want)
	}
}
