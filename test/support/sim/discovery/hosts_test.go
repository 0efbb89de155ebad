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
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/go-openapi/strfmt"
	"github.com/openshift/assisted-service/models"
	corev1 "k8s.io/api/core/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/inventory"
)

// eventually fails the test unless cond holds within 10 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// lab is a fake service, one host booting its ISO and the hosts' and cluster's software.
type testLab struct {
	svc      *fakeService
	host     *inventory.Host
	hosts    *Hosts
	workload client.Client
	storage  string
	isoURL   string
}

func newTestLab(t *testing.T, override inventory.BootOverride) *testLab {
	t.Helper()
	svc := newFakeService(t)
	h := inventory.Generate("d", 1, inventory.GenerateOptions{})[0]
	workload := fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).WithStatusSubresource(&corev1.Node{}).Build()
	tl := &testLab{svc: svc, host: h, workload: workload, storage: t.TempDir(),
		isoURL: "http://images.lab/byid/" + svc.infraEnvID + "/4.17/x86_64/minimal.iso"}
	cluster := &Cluster{
		Workload: func(context.Context, *models.Cluster) (client.Client, error) { return workload, nil },
		Kubeconfig: func(context.Context, *models.Cluster) ([]byte, error) {
			return []byte("kubeconfig of the workload"), nil
		},
		StorageDir: tl.storage, PollInterval: 10 * time.Millisecond,
	}
	tl.hosts = &Hosts{Inventory: inventory.New(h), ImageService: &ImageService{BaseURL: "http://images.lab", ServiceURL: svc.URL},
		Cluster: cluster, PollInterval: 10 * time.Millisecond, StageInterval: time.Millisecond}
	t.Cleanup(func() { tl.hosts.Stop(); cluster.Stop() })
	// The service's record of the host: the single node of its cluster, bootstrap.
	id, ie := strfmt.UUID(hostID(h)), strfmt.UUID(svc.infraEnvID)
	status, ha := models.HostStatusInstallingInProgress, models.ClusterHighAvailabilityModeNone
	svc.cluster.Hosts = []*models.Host{{ID: &id, InfraEnvID: ie, Role: models.HostRoleMaster, Bootstrap: true, Status: &status,
		RequestedHostname: "sno-0", NodeLabels: `{"example.com/a":"b"}`}}
	svc.cluster.HighAvailabilityMode = &ha
	h.InsertMedia(tl.isoURL, true, override)
	if iso := h.PowerOn(); iso != tl.isoURL {
		t.Fatalf("the host booted %q", iso)
	}
	return tl
}

func (tl *testLab) installStep(t *testing.T) *models.Step {
	t.Helper()
	role, cid, ha := models.HostRoleBootstrap, strfmt.UUID(testClusterID), models.ClusterHighAvailabilityModeNone
	req, err := json.Marshal(models.InstallCmdRequest{Role: &role, ClusterID: &cid, HighAvailabilityMode: &ha, BootDevice: new(string)})
	if err != nil {
		t.Fatal(err)
	}
	return &models.Step{StepType: models.StepTypeInstall, StepID: "install-1", Args: []string{string(req)}}
}

// TestSingleNodeInstall: a host boots the ISO, registers with its system UUID, answers its
// steps, installs, reboots into its disk (UEFI: efibootmgr put it first), its kubelet registers
// its Node and the installer controller reports the rest of its stages and completes the cluster.
func TestSingleNodeInstall(t *testing.T) {
	tl := newTestLab(t, inventory.OverrideOnce)
	svc, h := tl.svc, tl.host
	if err := tl.hosts.Booted(context.Background(), inventory.Boot{Host: h, ISOURL: tl.isoURL}); err != nil {
		t.Fatal(err)
	}
	if err := tl.hosts.Booted(context.Background(), inventory.Boot{Host: h, ISOURL: tl.isoURL}); err != nil {
		t.Fatal(err) // again: nothing new
	}
	id := hostID(h)
	eventually(t, "the registration", func() bool { svc.mu.Lock(); defer svc.mu.Unlock(); return len(svc.registered) > 0 })
	svc.queue(id, &models.Step{StepType: models.StepTypeInventory, StepID: "inventory-1"})
	eventually(t, "the inventory", func() bool { svc.mu.Lock(); defer svc.mu.Unlock(); return len(svc.replies[id]) > 0 })
	svc.mu.Lock()
	inv, registered := svc.replies[id][0], slices.Clone(svc.registered)
	svc.mu.Unlock()
	got := models.Inventory{}
	if err := json.Unmarshal([]byte(inv.Output), &got); err != nil || inv.ExitCode != 0 || got.Hostname != h.Hostname || len(got.Routes) == 0 {
		t.Fatalf("inventory reply %+v (%v)", inv, err)
	}
	if !slices.Equal(registered, []string{id}) {
		t.Fatalf("registered %v, want the host once, by its system UUID", registered)
	}

	svc.queue(id, tl.installStep(t))
	want := append(installerStages(models.HostRoleBootstrap, true), models.HostStageJoined, models.HostStageDone)
	eventually(t, "every stage", func() bool { svc.mu.Lock(); defer svc.mu.Unlock(); return len(svc.progress[id]) >= len(want) })
	svc.mu.Lock()
	stages := slices.Clone(svc.progress[id])
	svc.mu.Unlock()
	if !slices.Equal(stages[:len(want)], want) {
		t.Fatalf("stages %v, want %v", stages, want)
	}
	if !h.RunsDisk() {
		t.Fatal("the host does not run its disk after the installer's reboot")
	}
	node := &corev1.Node{}
	if err := tl.workload.Get(context.Background(), client.ObjectKey{Name: "sno-0"}, node); err != nil {
		t.Fatalf("the kubelet registered no Node named as the service was told: %v", err)
	}
	if node.Labels["example.com/a"] != "b" || node.Labels["node-role.kubernetes.io/master"] != "" {
		t.Fatalf("Node labels %v", node.Labels)
	}

	svc.mu.Lock()
	status := models.ClusterStatusFinalizing
	svc.cluster.Status = &status
	svc.mu.Unlock()
	eventually(t, "the completion", func() bool { svc.mu.Lock(); defer svc.mu.Unlock(); return svc.completed })
	svc.mu.Lock()
	defer svc.mu.Unlock()
	if !slices.Equal(svc.operators, []string{"console", "cvo"}) || svc.ingressCA == "" {
		t.Fatalf("operators reported %v, ingress CA %q", svc.operators, svc.ingressCA)
	}
	kc, err := os.ReadFile(filepath.Join(tl.storage, testClusterID, "kubeconfig-noingress"))
	if err != nil || string(kc) != "kubeconfig of the workload" {
		t.Fatalf("kubeconfig-noingress %q, %v", kc, err)
	}
}

// TestRebootIntoTheISO: a host whose BMC keeps booting the CD comes back in the discovery ISO
// after writing its disk: its agent registers again, and no Node appears.
func TestRebootIntoTheISO(t *testing.T) {
	tl := newTestLab(t, inventory.OverrideContinuous)
	svc, h := tl.svc, tl.host
	if err := tl.hosts.Booted(context.Background(), inventory.Boot{Host: h, ISOURL: tl.isoURL}); err != nil {
		t.Fatal(err)
	}
	id := hostID(h)
	svc.queue(id, tl.installStep(t))
	eventually(t, "a second registration", func() bool { svc.mu.Lock(); defer svc.mu.Unlock(); return len(svc.registered) >= 2 })
	if h.Running() != tl.isoURL {
		t.Fatalf("the host runs %q, want the ISO", h.Running())
	}
	nodes := &corev1.NodeList{}
	if err := tl.workload.List(context.Background(), nodes); err != nil || len(nodes.Items) != 0 {
		t.Fatalf("Nodes %v (%v), want none", nodes.Items, err)
	}
}

// TestPoweredOffAndDisconnected: a host that is off, or cut from the network, asks for nothing.
func TestPoweredOffAndDisconnected(t *testing.T) {
	tl := newTestLab(t, inventory.OverrideOnce)
	svc, h := tl.svc, tl.host
	tl.hosts.Disconnect(h.SystemUUID, true)
	if err := tl.hosts.Booted(context.Background(), inventory.Boot{Host: h, ISOURL: tl.isoURL}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	svc.mu.Lock()
	n := len(svc.registered)
	svc.mu.Unlock()
	if n != 0 {
		t.Fatal("a disconnected host registered")
	}
	tl.hosts.Disconnect(h.SystemUUID, false)
	eventually(t, "the registration", func() bool { svc.mu.Lock(); defer svc.mu.Unlock(); return len(svc.registered) > 0 })
	if err := tl.hosts.PoweredOff(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	id := hostID(h)
	svc.queue(id, &models.Step{StepType: models.StepTypeInventory, StepID: "inventory-1"})
	time.Sleep(100 * time.Millisecond)
	svc.mu.Lock()
	defer svc.mu.Unlock()
	if len(svc.replies[id]) != 0 {
		t.Fatal("a host that is off answered a step")
	}
}

// TestBootedRefusesForeignISOs: an ISO of another image service is an error; a disk image whose
// Ignition reads no config drive starts nothing.
func TestBootedRefusesForeignISOs(t *testing.T) {
	tl := newTestLab(t, inventory.OverrideOnce)
	if err := tl.hosts.Booted(context.Background(), inventory.Boot{Host: tl.host, ISOURL: "http://other/byid/x/4.17/x86_64/minimal.iso"}); err == nil {
		t.Fatal("an ISO of another image service booted")
	}
	if err := tl.hosts.Booted(context.Background(), inventory.Boot{Host: tl.host, DiskImageURL: "http://m/rhcos-metal.raw.gz",
		UserData: []byte(tl.svc.discoveryIgnition())}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	tl.svc.mu.Lock()
	defer tl.svc.mu.Unlock()
	if len(tl.svc.registered) != 0 {
		t.Fatal("a metal disk image's agent registered")
	}
}
