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
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path"
	"strings"

	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The discovery ignition, as assisted-service formats it (internal/ignition/discovery.go
// FormatDiscoveryIgnitionFile with the templates internal/ignition/templates/discovery.ign and
// agent.service): Ignition spec 3.1.0; the user core with the InfraEnv's SSH keys; agent.service,
// which runs the discovery agent against the service (--url SERVICE_BASE_URL, --infra-env-id)
// with the InfraEnv's token in PULL_SECRET_TOKEN (internal/cluster/auth.go AgentToken:
// LocalJWT(infra env ID, InfraEnvKey) under local authentication); the pull secret in
// /root/.docker/config.json and the service's CA in /etc/assisted-service/service-ca-cert.crt
// (common.HostCACertPath, with --cacert, as when SERVICE_CA_CERT_PATH is set). The lab leaves out
// the units and files that only matter on a real host (selinux, multipathd, iscsistart, the
// agent's helper scripts, motd, NetworkManager's IPv6 settings) and does not merge the InfraEnv's
// spec.ignitionConfigOverride.
const (
	discoveryIgnitionVersion = "3.1.0"
	// agentImage is assisted-service's default AGENT_DOCKER_IMAGE.
	agentImage = "quay.io/edge-infrastructure/assisted-installer-agent:latest"
	// agentTimeoutStartSec is AGENT_TIMEOUT_START's default, 10m.
	agentTimeoutStartSec = 600
	hostCACertPath       = "/etc/assisted-service/service-ca-cert.crt"
	agentUnit            = "agent.service"
)

// ignitionConfig is the part of an Ignition spec 3 config the lab reads or writes.
type ignitionConfig struct {
	Ignition ignitionSection `json:"ignition"`
	Passwd   *ignitionPasswd `json:"passwd,omitempty"`
	Systemd  ignitionSystemd `json:"systemd"`
	Storage  *ignitionFiles  `json:"storage,omitempty"`
}

type ignitionSection struct {
	Version string `json:"version"`
	Config  struct {
		Merge   []ignitionResource `json:"merge,omitempty"`
		Replace *ignitionResource  `json:"replace,omitempty"`
	} `json:"config,omitzero"`
}

type ignitionResource struct {
	Source      *string `json:"source,omitempty"`
	Compression *string `json:"compression,omitempty"`
}

type ignitionPasswd struct {
	Users []ignitionUser `json:"users"`
}

type ignitionUser struct {
	Name              string   `json:"name"`
	PasswordHash      string   `json:"passwordHash"`
	SSHAuthorizedKeys []string `json:"sshAuthorizedKeys"`
	Groups            []string `json:"groups"`
}

type ignitionSystemd struct {
	Units []ignitionUnit `json:"units,omitempty"`
}

type ignitionUnit struct {
	Name     string  `json:"name"`
	Enabled  *bool   `json:"enabled,omitempty"`
	Mask     *bool   `json:"mask,omitempty"`
	Contents *string `json:"contents,omitempty"`
}

type ignitionFiles struct {
	Files []ignitionFile `json:"files"`
}

type ignitionFile struct {
	Path      string           `json:"path"`
	Overwrite bool             `json:"overwrite"`
	Mode      int              `json:"mode"`
	User      map[string]any   `json:"user"`
	Contents  ignitionResource `json:"contents"`
}

// agentServiceUnit is internal/ignition/templates/agent.service with the lab's values.
func agentServiceUnit(serviceURL, infraEnvID, token string, proxy *aiv1beta1.Proxy) string {
	var httpProxy, httpsProxy, noProxy string
	if proxy != nil {
		// systemd expands % in Environment= (hence %% for the proxy URLs, as assisted-service).
		httpProxy = strings.ReplaceAll(proxy.HTTPProxy, "%", "%%")
		httpsProxy = strings.ReplaceAll(proxy.HTTPSProxy, "%", "%%")
		noProxy = proxy.NoProxy
	}
	return fmt.Sprintf(`[Service]
Type=simple
Restart=always
RestartSec=3
StartLimitInterval=0
Environment=HTTP_PROXY=%[1]s
Environment=http_proxy=%[1]s
Environment=HTTPS_PROXY=%[2]s
Environment=https_proxy=%[2]s
Environment=NO_PROXY=%[3]s
Environment=no_proxy=%[3]s
Environment=PULL_SECRET_TOKEN=%[4]s
TimeoutStartSec=%[5]d
ExecStartPre=/usr/local/bin/agent-fix-bz1964591 %[6]s
ExecStartPre=/usr/local/bin/agent-pull-image %[6]s
ExecStartPre=podman run --pull=never --privileged --rm -v /usr/local/bin:/hostbin %[6]s cp /usr/bin/agent /hostbin
ExecStart=/usr/local/bin/agent --url %[7]s --infra-env-id %[8]s --agent-version %[6]s --insecure=false --cacert %[9]s

[Unit]
Wants=network-online.target
After=network-online.target

[Install]
WantedBy=multi-user.target
`, httpProxy, httpsProxy, noProxy, token, agentTimeoutStartSec, agentImage, serviceURL, infraEnvID, hostCACertPath)
}

// discoveryIgnition is the InfraEnv's discovery ignition.
func (s *Simulator) discoveryIgnition(ctx context.Context, ie *aiv1beta1.InfraEnv) ([]byte, error) {
	token, err := s.token(infraEnvScope, string(ie.UID))
	if err != nil {
		return nil, err
	}
	pullSecret, err := s.pullSecret(ctx, ie)
	if err != nil {
		return nil, err
	}
	enabled := true
	unit := agentServiceUnit(s.ServiceURL(), string(ie.UID), token, ie.Spec.Proxy)
	root := map[string]any{"name": "root"}
	cfg := ignitionConfig{
		Ignition: ignitionSection{Version: discoveryIgnitionVersion},
		Passwd:   &ignitionPasswd{Users: []ignitionUser{}},
		Systemd:  ignitionSystemd{Units: []ignitionUnit{{Name: agentUnit, Enabled: &enabled, Contents: &unit}}},
		Storage: &ignitionFiles{Files: []ignitionFile{
			{Path: "/root/.docker/config.json", Overwrite: true, Mode: 0o644, User: root,
				Contents: ignitionResource{Source: ptrTo("data:," + url.PathEscape(pullSecret))}},
			{Path: hostCACertPath, Overwrite: true, Mode: 0o644, User: root,
				Contents: ignitionResource{Source: ptrTo("data:text/plain;charset=utf-8;base64," + base64.StdEncoding.EncodeToString(s.CACertPEM()))}},
		}},
	}
	// getUserSSHKey: one user, core, with every non-empty line of the InfraEnv's key.
	var keys []string
	for _, k := range strings.Split(ie.Spec.SSHAuthorizedKey, "\n") {
		if k = strings.TrimSpace(k); k != "" {
			keys = append(keys, k)
		}
	}
	if len(keys) > 0 {
		cfg.Passwd.Users = append(cfg.Passwd.Users, ignitionUser{Name: "core", PasswordHash: "!", SSHAuthorizedKeys: keys, Groups: []string{"sudo"}})
	}
	out, err := json.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("encoding the discovery ignition: %w", err)
	}
	return out, nil
}

// pullSecret is the InfraEnv's pull secret (the .dockerconfigjson of spec.pullSecretRef), "" when
// it has none.
func (s *Simulator) pullSecret(ctx context.Context, ie *aiv1beta1.InfraEnv) (string, error) {
	if ie.Spec.PullSecretRef == nil || ie.Spec.PullSecretRef.Name == "" {
		return "", nil
	}
	sec := &corev1.Secret{}
	err := s.reader.Get(ctx, client.ObjectKey{Namespace: ie.Namespace, Name: ie.Spec.PullSecretRef.Name}, sec)
	switch {
	case apierrors.IsNotFound(err):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("reading the pull secret of InfraEnv %s: %w", ie.Name, err)
	}
	return string(sec.Data[corev1.DockerConfigJsonKey]), nil
}

// ipxeScript is the InfraEnv's iPXE boot script (internal/bminventory/inventory_v2_handlers.go
// ipxeBootScriptFormat, with the signed initrd URL, the kernel and the rootfs of its boot
// artifacts).
func (s *Simulator) ipxeScript(ie *aiv1beta1.InfraEnv) string {
	a := s.bootArtifacts(ie)
	return fmt.Sprintf(`#!ipxe
initrd --name initrd %s
kernel %s initrd=initrd coreos.live.rootfs_url=%s random.trust_cpu=on rd.luks.options=discard ignition.firstboot ignition.platform.id=metal console=tty1 console=ttyS1,115200n8 coreos.inst.persistent-kargs="console=tty1 console=ttyS1,115200n8"
boot
`, a.InitrdURL, a.KernelURL, a.RootfsURL)
}

// discoveryAgent is how a host's discovery agent was told to reach the service.
type discoveryAgent struct {
	serviceURL, infraEnvID, token string
}

// readsConfigDrive tells whether the Ignition of the disk image at imageURL reads its config from
// a config drive: RHCOS's openstack and nutanix images do (coreos/ignition
// docs/supported-platforms.md; internal/providers/openstack and nutanix read the config-2
// device). A metal image reads it from kernel arguments (ignition.config.url), which a deployed
// disk image has none of: its Ignition applies an empty config (internal/providers/metal returns
// ErrEmpty, which the engine ignores) and no agent starts; so do the other platforms' images.
func readsConfigDrive(imageURL string) bool {
	name := imageURL
	if u, err := url.Parse(imageURL); err == nil {
		name = path.Base(u.Path)
	}
	return strings.Contains(name, "openstack") || strings.Contains(name, "nutanix")
}

// discoveryAgentOf is the discovery agent the Ignition config userData starts: the ExecStart of
// its agent.service, enabled and not masked, once its ignition.config.replace and .merge are
// followed as Ignition does (internal/exec/config_fetcher.go RenderConfig: the replacing config
// rendered in its place; each merged config rendered, then merged over the config, its units'
// fields overriding those of the same name). Only data URLs are followed: the lab's hosts reach
// no other server, so a config that references one fails, as Ignition does when it cannot fetch.
// An error says why Ignition fails or no agent starts.
func discoveryAgentOf(userData []byte) (*discoveryAgent, error) {
	cfg, err := renderIgnition(userData, 0)
	if err != nil {
		return nil, err
	}
	for _, u := range cfg.Systemd.Units {
		if u.Name != agentUnit {
			continue
		}
		if u.Contents == nil || u.Enabled == nil || !*u.Enabled || u.Mask != nil && *u.Mask {
			return nil, fmt.Errorf("%s is not enabled", agentUnit)
		}
		return parseAgentUnit(*u.Contents)
	}
	return nil, fmt.Errorf("the config has no %s", agentUnit)
}

// maxConfigDepth bounds the references followed (a config that references itself).
const maxConfigDepth = 10

func renderIgnition(data []byte, depth int) (ignitionConfig, error) {
	if depth > maxConfigDepth {
		return ignitionConfig{}, errors.New("too many nested config references")
	}
	var cfg ignitionConfig
	if err := json.Unmarshal(data, &cfg); err != nil {
		return ignitionConfig{}, fmt.Errorf("the config is not an Ignition config: %w", err)
	}
	// RHCOS 4's Ignition (v2) parses spec 3 configs only.
	if !strings.HasPrefix(cfg.Ignition.Version, "3.") {
		return ignitionConfig{}, fmt.Errorf("unsupported config version %q", cfg.Ignition.Version)
	}
	if ref := cfg.Ignition.Config.Replace; ref != nil && ref.Source != nil {
		child, err := fetchConfig(*ref)
		if err != nil {
			return ignitionConfig{}, err
		}
		return renderIgnition(child, depth+1)
	}
	merged := cfg
	for _, ref := range cfg.Ignition.Config.Merge {
		raw, err := fetchConfig(ref)
		if err != nil {
			return ignitionConfig{}, err
		}
		child, err := renderIgnition(raw, depth+1)
		if err != nil {
			return ignitionConfig{}, err
		}
		merged.Systemd.Units = mergeUnits(merged.Systemd.Units, child.Systemd.Units)
	}
	return merged, nil
}

// mergeUnits merges child's units over parent's, as Ignition's merge does for a list keyed by
// name: a unit of the same name takes the fields the child sets.
func mergeUnits(parent, child []ignitionUnit) []ignitionUnit {
	out := append([]ignitionUnit(nil), parent...)
	for _, c := range child {
		i := -1
		for j := range out {
			if out[j].Name == c.Name {
				i = j
			}
		}
		if i < 0 {
			out = append(out, c)
			continue
		}
		if c.Enabled != nil {
			out[i].Enabled = c.Enabled
		}
		if c.Mask != nil {
			out[i].Mask = c.Mask
		}
		if c.Contents != nil {
			out[i].Contents = c.Contents
		}
	}
	return out
}

// fetchConfig reads a referenced config: a data URL (RFC 2397: base64, or percent-encoded),
// gzip-compressed when the reference says so.
func fetchConfig(ref ignitionResource) ([]byte, error) {
	if scheme, _, _ := strings.Cut(*ref.Source, ":"); scheme != "data" {
		return nil, fmt.Errorf("cannot fetch a config from a %s URL: the lab's hosts reach no server", scheme)
	}
	decoded, err := dataURLContents(*ref.Source)
	if err != nil {
		return nil, fmt.Errorf("malformed data URL: %w", err)
	}
	data := []byte(decoded)
	if ref.Compression == nil || *ref.Compression == "" {
		return data, nil
	}
	if *ref.Compression != "gzip" {
		return nil, fmt.Errorf("unsupported compression %q", *ref.Compression)
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("decompressing a config: %w", err)
	}
	defer func() { _ = zr.Close() }()
	out, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("decompressing a config: %w", err)
	}
	return out, nil
}

// parseAgentUnit reads the agent's --url and --infra-env-id from the unit's ExecStart, and its
// token from Environment=PULL_SECRET_TOKEN.
func parseAgentUnit(unit string) (*discoveryAgent, error) {
	a := &discoveryAgent{}
	for _, line := range strings.Split(unit, "\n") {
		line = strings.TrimSpace(line)
		if tok, ok := strings.CutPrefix(line, "Environment=PULL_SECRET_TOKEN="); ok {
			a.token = tok
		}
		exec, ok := strings.CutPrefix(line, "ExecStart=")
		if !ok {
			continue
		}
		args := strings.Fields(exec)
		for i, arg := range args {
			for flag, dst := range map[string]*string{"--url": &a.serviceURL, "--infra-env-id": &a.infraEnvID} {
				if v, ok := strings.CutPrefix(arg, flag+"="); ok {
					*dst = v
				} else if arg == flag && i+1 < len(args) {
					*dst = args[i+1]
				}
			}
		}
	}
	if a.serviceURL == "" || a.infraEnvID == "" {
		return nil, fmt.Errorf("%s's ExecStart names no --url and --infra-env-id", agentUnit)
	}
	return a, nil
}

func ptrTo[T any](v T) *T { return &v }
