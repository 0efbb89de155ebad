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
	"context"
	"testing"

	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	"github.com/openshift/assisted-service/models"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/inventory"
)

// TestBootedRegistersAgain: a host whose Agent the service knows boots the discovery ISO again
// (its firmware chose it, whatever the disk holds). As assisted-service's RegisterHost: an
// installed host, or one already waiting for its boot order to be fixed, is refused, and its
// agent stops trying until the host reboots; a day-2 host whose installation is done is put in
// installing-pending-user-action (wrong boot order); any other host is let in, an unbound one
// (unbinding-pending-user-action, its cluster gone) to start over.
func TestBootedRegistersAgain(t *testing.T) {
	for _, tc := range []struct {
		name  string
		state string
		stage models.HostStage
		// wantRunning: let in, its agent runs; else refused.
		wantRunning bool
		wantState   string
	}{
		{name: "installed", state: models.HostStatusInstalled, stage: models.HostStageDone, wantState: models.HostStatusInstalled},
		{name: "waiting for its boot order to be fixed", state: models.HostStatusInstallingPendingUserAction, stage: models.HostStageRebooting,
			wantState: models.HostStatusInstallingPendingUserAction},
		{name: "unbound after its installation", state: models.HostStatusUnbindingPendingUserAction, stage: models.HostStageDone,
			wantRunning: true, wantState: models.HostStatusUnbindingPendingUserAction},
		{name: "day-2 host installed", state: models.HostStatusAddedToExistingCluster, stage: models.HostStageDone,
			wantRunning: true, wantState: models.HostStatusInstallingPendingUserAction},
		{name: "failed", state: models.HostStatusError, stage: models.HostStageFailed, wantRunning: true, wantState: models.HostStatusError},
		{name: "known", state: models.HostStatusKnown, wantRunning: true, wantState: models.HostStatusKnown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			host := inventory.Generate("booted", 1, inventory.GenerateOptions{})[0]
			ie := &aiv1beta1.InfraEnv{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "ie", UID: types.UID("ie-uid")}}
			agent := &aiv1beta1.Agent{ObjectMeta: metav1.ObjectMeta{
				Namespace: "ns", Name: agentName(host.SystemUUID),
				Labels: map[string]string{aiv1beta1.InfraEnvNameLabel: ie.Name},
			}}
			agent.Status.DebugInfo.State = tc.state
			agent.Status.Progress.CurrentStage = tc.stage
			s := unitSimulator(t, ie, agent)
			boot := inventory.Boot{Host: host, ISOURL: s.isoURL(ie)}

			if err := s.Booted(ctx, boot); err != nil {
				t.Fatal(err)
			}
			running, _, _ := s.hostFlags(host.SystemUUID)
			got := &aiv1beta1.Agent{}
			if err := s.Client.Get(ctx, client.ObjectKeyFromObject(agent), got); err != nil {
				t.Fatal(err)
			}
			if running != tc.wantRunning || got.Status.DebugInfo.State != tc.wantState {
				t.Fatalf("agent running %t in state %s; want running %t in %s", running, got.Status.DebugInfo.State, tc.wantRunning, tc.wantState)
			}
			if tc.wantState == models.HostStatusInstallingPendingUserAction && tc.state != tc.wantState &&
				got.Status.DebugInfo.StateInfo != wrongBootOrderInfo(host) {
				t.Errorf("state info %q, want assisted-service's wrong boot order message", got.Status.DebugInfo.StateInfo)
			}
			if tc.wantRunning {
				return
			}
			// Refused, the agent waits: booting the same ISO is not registering again until
			// the host was powered off.
			got.Status.DebugInfo.State = models.HostStatusUnbindingPendingUserAction
			if err := s.Client.Status().Update(ctx, got); err != nil {
				t.Fatal(err)
			}
			if err := s.Booted(ctx, boot); err != nil {
				t.Fatal(err)
			}
			if running, _, _ := s.hostFlags(host.SystemUUID); running {
				t.Fatal("the agent refused registered again without a reboot")
			}
			if err := s.PoweredOff(ctx, host); err != nil {
				t.Fatal(err)
			}
			if err := s.Booted(ctx, boot); err != nil {
				t.Fatal(err)
			}
			if running, _, _ := s.hostFlags(host.SystemUUID); !running {
				t.Fatal("after a reboot the host's agent did not register (its Agent is unbound now)")
			}
		})
	}
}

// unitSimulator is a Simulator over a fake client holding objs, without a manager.
func unitSimulator(t *testing.T, objs ...client.Object) *Simulator {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := aiv1beta1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).WithStatusSubresource(&aiv1beta1.Agent{}, &aiv1beta1.InfraEnv{}).Build()
	return &Simulator{
		Client: c, reader: c, ImageServiceURL: "https://assisted-image-service.lab.sim",
		agentsCh:   make(chan event.GenericEvent, 16),
		registered: map[types.NamespacedName]bool{}, running: map[string]bool{}, refused: map[string]bool{},
		bootedFromDisk: map[string]bool{}, failValidation: map[string]bool{}, disconnected: map[string]bool{},
	}
}
