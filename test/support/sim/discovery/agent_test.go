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
	"strings"
	"testing"
	"time"

	"github.com/openshift/assisted-service/models"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/inventory"
)

// TestInstallStepReplies: the install step starts one installer; a second while it runs fails
// as podman's container name does, with podman's exit status 125 and message (which the service
// ignores: bminventory handleReplyError), and a request that is not one fails otherwise.
func TestInstallStepReplies(t *testing.T) {
	tl := newTestLab(t, inventory.OverrideOnce)
	// Each stage takes a second: the installer still runs when the next install step comes.
	tl.hosts.StageInterval = time.Second
	if err := tl.hosts.Booted(context.Background(), inventory.Boot{Host: tl.host, ISOURL: tl.isoURL}); err != nil {
		t.Fatal(err)
	}
	id := hostID(tl.host)
	install := tl.installStep(t)
	tl.svc.queue(id, install, install, &models.Step{StepType: models.StepTypeInstall, StepID: "bad", Args: []string{"{"}})
	eventually(t, "three replies", func() bool { tl.svc.mu.Lock(); defer tl.svc.mu.Unlock(); return len(tl.svc.replies[id]) >= 3 })
	tl.svc.mu.Lock()
	defer tl.svc.mu.Unlock()
	r := tl.svc.replies[id]
	if r[0].ExitCode != 0 || r[1].ExitCode != 125 || !strings.Contains(r[1].Error, `the container name "assisted-installer" is already in use`) ||
		r[2].ExitCode == 0 || r[2].ExitCode == 125 {
		t.Fatalf("replies %+v", r)
	}
}
