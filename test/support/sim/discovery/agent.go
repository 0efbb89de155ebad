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

// The discovery agent (openshift/assisted-installer-agent, which assisted-service's discovery
// ignition runs as agent.service): it registers the host with the service (POST
// /v2/infra-envs/{id}/hosts, host_id its system UUID, subsystem/utils_test.go registerHostByUUID),
// then its next-step runner asks for steps (GET .../hosts/{id}/instructions, getNextSteps), runs
// each and posts its reply (POST .../instructions, the generate*PostStepReply helpers), until the
// service says exit or the host stops. A host the service no longer knows (404) registers again.

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/go-openapi/strfmt"
	"github.com/openshift/assisted-service/models"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ign "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/internal/ignition"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/inventory"
)

// agent is one run of the discovery agent on a host.
type agent struct {
	hs       *Hosts
	host     *inventory.Host
	api      *apiClient
	infraEnv string
	id       string
	fromDisk bool
	net      network

	mu        sync.Mutex
	installer context.CancelFunc // the installer it started, nil when none
}

func (a *agent) hostPath() string {
	return "/infra-envs/" + url.PathEscape(a.infraEnv) + "/hosts/" + url.PathEscape(a.id)
}

// runAgent runs the discovery agent cfg configures until ctx ends (the host stops).
func (hs *Hosts) runAgent(ctx context.Context, h *inventory.Host, cfg ign.Agent, fromDisk bool) {
	a := &agent{hs: hs, host: h, api: &apiClient{base: cfg.ServiceURL, token: cfg.Token, http: agentHTTPClient(cfg, hs.HTTP)},
		infraEnv: cfg.InfraEnvID, id: hostID(h), fromDisk: fromDisk, net: network{inventory: hs.Inventory, dns: hs.DNS}}
	defer a.stopInstaller()
	log := hs.Log.WithValues("host", h.Name, "infraEnv", cfg.InfraEnvID)
	registered := false
	for ctx.Err() == nil {
		if _, disconnected := hs.faults(h.SystemUUID); disconnected {
			sleep(ctx, hs.PollInterval)
			continue
		}
		if !registered {
			if err := a.register(ctx); err != nil {
				log.V(1).Info("Registration failed; the agent tries again", "reason", err.Error())
				sleep(ctx, hs.PollInterval)
				continue
			}
			registered = true
		}
		steps, err := a.nextSteps(ctx)
		switch {
		case statusOf(err) == http.StatusNotFound:
			registered = false
			continue
		case err != nil:
			log.V(1).Info("Asking for the next steps failed", "reason", err.Error())
		default:
			for _, s := range steps.Instructions {
				a.run(ctx, s)
			}
			if steps.PostStepAction != nil && *steps.PostStepAction == models.StepsPostStepActionExit {
				log.Info("The service told the agent to exit")
				return
			}
		}
		sleep(ctx, hs.PollInterval)
	}
}

// agentHTTPClient is the agent's client of the service: it trusts the CA its --cacert names (the
// file the discovery ignition writes), the system's roots without one, and base's otherwise.
func agentHTTPClient(cfg ign.Agent, base *http.Client) *http.Client {
	if cfg.CACertPath == "" {
		return base
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(cfg.CACert) // none when the config wrote no such file: TLS then fails
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

func (a *agent) register(ctx context.Context) error {
	id := strfmt.UUID(a.id)
	return a.api.do(ctx, http.MethodPost, "/infra-envs/"+url.PathEscape(a.infraEnv)+"/hosts", nil,
		models.HostCreateParams{HostID: &id, DiscoveryAgentVersion: AgentVersion}, nil)
}

func (a *agent) nextSteps(ctx context.Context) (models.Steps, error) {
	var steps models.Steps
	q := url.Values{"timestamp": {strconv.FormatInt(time.Now().Unix(), 10)}}
	err := a.api.do(ctx, http.MethodGet, a.hostPath()+"/instructions", q, nil, &steps)
	return steps, err
}

// run runs one step and posts its reply.
func (a *agent) run(ctx context.Context, s *models.Step) {
	if s == nil {
		return
	}
	reply := &models.StepReply{StepID: s.StepID, StepType: s.StepType}
	switch s.StepType {
	case models.StepTypeInstall:
		if err := a.startInstaller(s); errors.Is(err, errInstallerRunning) {
			reply.ExitCode, reply.Error = podmanErrorExitCode, err.Error()
		} else if err != nil {
			reply.ExitCode, reply.Error = -1, err.Error()
		}
	case models.StepTypeStopInstallation:
		a.stopInstaller()
	default:
		failMemory, _ := a.hs.faults(a.host.SystemUUID)
		out, err := a.net.reply(a.host, s, metav1.Now(), failMemory)
		if err == nil {
			var b []byte
			if b, err = json.Marshal(out); err == nil {
				reply.Output = string(b)
			}
		}
		if err != nil {
			reply.ExitCode, reply.Error = -1, err.Error()
		}
	}
	if err := a.api.do(ctx, http.MethodPost, a.hostPath()+"/instructions", nil, reply, nil); err != nil && ctx.Err() == nil {
		a.hs.Log.V(1).Info("Posting a step reply failed", "host", a.host.Name, "step", s.StepType, "reason", err.Error())
	}
}

// errInstallerRunning is podman's error for an install step while the installer runs: the
// service hands the install step out again (after a restart, say), and ignores this reply
// (bminventory/inventory.go handleReplyError: ContainerAlreadyRunningExitCode and this message),
// where any other failed install step puts the host in error.
var errInstallerRunning = errors.New(`Error: creating container storage: the container name "assisted-installer" is already in use`)

// podmanErrorExitCode is podman's exit status for an error of podman itself (podman-run(1): 125),
// the step's exit code.
const podmanErrorExitCode = 125

// startInstaller starts the assisted-installer the install step asks for (its request, JSON, in
// Args[0]: hostcommands/install_cmd.go getFullInstallerCommand); one at a time, as podman's
// container name assisted-installer allows.
func (a *agent) startInstaller(s *models.Step) error {
	if len(s.Args) == 0 {
		return fmt.Errorf("the install step has no request")
	}
	req := models.InstallCmdRequest{}
	if err := json.Unmarshal([]byte(s.Args[0]), &req); err != nil {
		return fmt.Errorf("the install step's request: %w", err)
	}
	if req.Role == nil || req.ClusterID == nil {
		return fmt.Errorf("the install step's request names no role or cluster")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.installer != nil {
		return errInstallerRunning
	}
	ctx, cancel := context.WithCancel(context.Background())
	a.installer = cancel
	a.hs.wg.Add(1)
	go func() {
		defer a.hs.wg.Done()
		a.install(ctx, req)
	}()
	return nil
}

func (a *agent) stopInstaller() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.installer != nil {
		a.installer()
		a.installer = nil
	}
}
