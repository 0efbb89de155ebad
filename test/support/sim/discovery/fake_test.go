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
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/go-openapi/strfmt"
	"github.com/openshift/assisted-service/models"
)

// fakeService is enough of assisted-service's REST API for the hosts' tests: it hands out the
// steps queued for a host, records what the hosts post, and serves one cluster.
type fakeService struct {
	*httptest.Server
	t          *testing.T
	infraEnvID string

	mu         sync.Mutex
	registered []string
	steps      map[string][]*models.Step // host ID → steps still to hand out
	replies    map[string][]models.StepReply
	progress   map[string][]models.HostStage
	// progressDown is how many progress reports are still answered 503, as by a service that
	// restarts.
	progressDown int
	cluster      models.Cluster
	operators    []string // reported available
	ingressCA    string
	completed    bool
}

const testClusterID = "c6a1c8a0-1111-4222-8333-444455556666"

func newFakeService(t *testing.T) *fakeService {
	t.Helper()
	f := &fakeService{t: t, infraEnvID: "0b5f3b6e-aaaa-4bbb-8ccc-ddddeeeeffff", steps: map[string][]*models.Step{},
		replies: map[string][]models.StepReply{}, progress: map[string][]models.HostStage{}}
	id := strfmt.UUID(testClusterID)
	status := models.ClusterStatusInstalling
	f.cluster = models.Cluster{ID: &id, Name: "c", BaseDNSDomain: "lab", Status: &status, OpenshiftVersion: "4.17.3"}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

// discoveryIgnition is the InfraEnv's discovery ignition: agent.service runs the agent against
// this service.
func (f *fakeService) discoveryIgnition() string {
	unit := "[Service]\nExecStart=/usr/local/bin/agent --url " + f.URL + " --infra-env-id " + f.infraEnvID +
		" --agent-version " + AgentVersion + " --insecure=false\n"
	b, err := json.Marshal(map[string]any{"ignition": map[string]any{"version": "3.1.0"},
		"systemd": map[string]any{"units": []map[string]any{{"name": "agent.service", "enabled": true, "contents": unit}}}})
	if err != nil {
		f.t.Fatal(err)
	}
	return string(b)
}

func (f *fakeService) queue(hostID string, steps ...*models.Step) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.steps[hostID] = append(f.steps[hostID], steps...)
}

func (f *fakeService) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	path := strings.TrimPrefix(r.URL.Path, apiBase)
	parts := strings.Split(strings.Trim(path, "/"), "/")
	body, _ := io.ReadAll(r.Body)
	write := func(v any) {
		w.Header().Set("Content-Type", "application/json")
		if err := json.NewEncoder(w).Encode(v); err != nil {
			f.t.Error(err)
		}
	}
	switch {
	case r.Method == http.MethodGet && path == "/infra-envs/"+f.infraEnvID+"/downloads/files":
		if r.Header.Get("Accept") == "application/json" {
			// It produces application/octet-stream (go-swagger's content negotiation).
			w.WriteHeader(http.StatusNotAcceptable)
			return
		}
		_, _ = io.WriteString(w, f.discoveryIgnition())
	case r.Method == http.MethodPost && path == "/infra-envs/"+f.infraEnvID+"/hosts":
		p := models.HostCreateParams{}
		_ = json.Unmarshal(body, &p)
		f.registered = append(f.registered, p.HostID.String())
		w.WriteHeader(http.StatusCreated)
		write(models.HostRegistrationResponse{})
	case len(parts) == 5 && parts[4] == "instructions" && r.Method == http.MethodGet:
		steps := f.steps[parts[3]]
		f.steps[parts[3]] = nil
		write(models.Steps{Instructions: steps, NextInstructionSeconds: 60})
	case len(parts) == 5 && parts[4] == "instructions" && r.Method == http.MethodPost:
		reply := models.StepReply{}
		_ = json.Unmarshal(body, &reply)
		f.replies[parts[3]] = append(f.replies[parts[3]], reply)
	case len(parts) == 5 && parts[4] == "progress" && f.progressDown > 0:
		f.progressDown--
		http.Error(w, "restarting", http.StatusServiceUnavailable)
	case len(parts) == 5 && parts[4] == "progress":
		p := models.HostProgress{}
		_ = json.Unmarshal(body, &p)
		f.progress[parts[3]] = append(f.progress[parts[3]], p.CurrentStage)
		for _, h := range f.cluster.Hosts {
			if h.ID.String() == parts[3] {
				h.Progress = &models.HostProgressInfo{CurrentStage: p.CurrentStage}
			}
		}
	case len(parts) == 4 && parts[2] == "hosts" && r.Method == http.MethodGet:
		// v2GetHost is userAuth's only (swagger.yaml): an agent's token is refused.
		http.Error(w, `{"code":401,"message":"unauthenticated for invalid credentials"}`, http.StatusUnauthorized)
	case path == "/clusters/"+testClusterID:
		write(f.cluster)
	case path == "/clusters/"+testClusterID+"/uploads/ingress-cert":
		_ = json.Unmarshal(body, &f.ingressCA)
		w.WriteHeader(http.StatusCreated)
	case path == "/clusters/"+testClusterID+"/monitored-operators" && r.Method == http.MethodGet:
		write(models.MonitoredOperatorsList{{Name: "console"}, {Name: "cvo"}})
	case path == "/clusters/"+testClusterID+"/monitored-operators" && r.Method == http.MethodPut:
		rep := models.OperatorMonitorReport{}
		_ = json.Unmarshal(body, &rep)
		if rep.Status == models.OperatorStatusAvailable {
			f.operators = append(f.operators, rep.Name)
		}
	case path == "/clusters/"+testClusterID+"/actions/complete-installation":
		f.completed = true
		status := models.ClusterStatusInstalled
		f.cluster.Status = &status
		w.WriteHeader(http.StatusAccepted)
	default:
		http.NotFound(w, r)
	}
}
