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
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ign "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/internal/ignition"
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
)

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
	cfg := ign.Config{
		Ignition: ign.Section{Version: discoveryIgnitionVersion},
		Passwd:   &ign.Passwd{Users: []ign.User{}},
		Systemd:  ign.Systemd{Units: []ign.Unit{{Name: ign.AgentUnit, Enabled: &enabled, Contents: &unit}}},
		Storage: &ign.Files{Files: []ign.File{
			{Path: "/root/.docker/config.json", Overwrite: true, Mode: 0o644, User: root,
				Contents: ign.Resource{Source: ign.Ptr("data:," + url.PathEscape(pullSecret))}},
			{Path: hostCACertPath, Overwrite: true, Mode: 0o644, User: root,
				Contents: ign.Resource{Source: ign.Ptr("data:text/plain;charset=utf-8;base64," + base64.StdEncoding.EncodeToString(s.CACertPEM()))}},
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
		cfg.Passwd.Users = append(cfg.Passwd.Users, ign.User{Name: "core", PasswordHash: "!", SSHAuthorizedKeys: keys, Groups: []string{"sudo"}})
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
