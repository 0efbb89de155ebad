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
	"testing"

	"github.com/go-openapi/strfmt"
	"github.com/openshift/assisted-service/models"
)

// TestReportNodes: the controller reports the next stage of the hosts that run OpenShift only,
// one a pass, and nothing after Done.
func TestReportNodes(t *testing.T) {
	svc := newFakeService(t)
	status := models.HostStatusInstallingInProgress
	host := func(id string, stage models.HostStage) *models.Host {
		u := strfmt.UUID(id)
		return &models.Host{ID: &u, InfraEnvID: strfmt.UUID(svc.infraEnvID), Role: models.HostRoleMaster, Status: &status,
			Progress: &models.HostProgressInfo{CurrentStage: stage}}
	}
	c := &models.Cluster{Hosts: []*models.Host{host("a", models.HostStageRebooting), host("b", models.HostStageRebooting), host("d", models.HostStageDone)}}
	ctrl := &controller{api: &apiClient{base: svc.URL}, id: testClusterID, booted: map[string]bool{"a": true, "d": true}}
	if err := (&Cluster{}).reportNodes(context.Background(), ctrl, c); err != nil {
		t.Fatal(err)
	}
	svc.mu.Lock()
	defer svc.mu.Unlock()
	if len(svc.progress["a"]) != 1 || svc.progress["a"][0] != models.HostStageConfiguring || len(svc.progress["b"]) != 0 || len(svc.progress["d"]) != 0 {
		t.Fatalf("progress %v", svc.progress)
	}
}

// TestIngressCA: one CA, a PEM certificate, for every cluster.
func TestIngressCA(t *testing.T) {
	cl := &Cluster{}
	a, err := cl.ingressCAPEM()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := cl.ingressCAPEM()
	if a != b || len(a) < 100 || a[:27] != "-----BEGIN CERTIFICATE-----" {
		t.Fatalf("CA %q", a)
	}
}
