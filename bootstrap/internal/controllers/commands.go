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

package controllers

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
)

// Pre- and post-bootstrap commands reach the installed host through the Agent's
// ignitionConfigOverrides, which assisted-service merges into the host's installation
// Ignition. The unit names, script paths, sentinel files and the post unit's wait follow the
// upstream provider (openshift-assisted/cluster-api-provider-openshift-assisted, MGMT-23670:
// capoa-pre-bootstrap.service before the kubelet, capoa-post-bootstrap.service after it, each
// running once and recording it in <dir>/{pre,post}-bootstrap.done, default /var/lib/capoa;
// the post unit waits up to 600 s, every 10 s, for the API server's /readyz and then the
// host's Node), so that a host switched from the upstream provider, whose sentinels exist, does
// not run them again. Unlike upstream, postBootstrapKubeconfigPath is honoured.

const (
	defaultSentinelDir        = "/var/lib/capoa"
	defaultPostKubeconfigPath = "/var/lib/kubelet/kubeconfig"
	preBootstrapScript        = "/usr/local/bin/capoa-pre-bootstrap.sh"
	postBootstrapScript       = "/usr/local/bin/capoa-post-bootstrap.sh"
	scriptMode                = 0o755
	dropInMode                = 0o644
)

// preBootstrapUnit and postBootstrapUnit are the systemd units; %[1]s is the sentinel file and
// %[2]s the script.
const (
	preBootstrapUnit = `[Unit]
Description=Cluster API pre-bootstrap commands (OpenshiftAssistedConfig spec.preBootstrapCommands)
Wants=network-online.target
After=network-online.target ostree-finalize-staged.service
Before=kubelet.service
ConditionPathExists=!%[1]s

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=%[2]s

[Install]
WantedBy=multi-user.target
`
	postBootstrapUnit = `[Unit]
Description=Cluster API post-bootstrap commands (OpenshiftAssistedConfig spec.postBootstrapCommands)
Requires=kubelet.service
After=kubelet.service
ConditionPathExists=!%[1]s

[Service]
Type=oneshot
RemainAfterExit=yes
TimeoutStartSec=0
ExecStart=%[2]s

[Install]
WantedBy=multi-user.target
`
)

// postBootstrapWait waits for the API server and the host's Node with the kubeconfig %[1]s (a
// path on the host, no credential, quoted by shellQuote). CAPOA_POST_BOOTSTRAP_TIMEOUT and
// CAPOA_POST_BOOTSTRAP_INTERVAL (seconds) exist for tests.
//
//nolint:gosec // G101: a shell script that names the path of a kubeconfig, not a credential
const postBootstrapWait = `kubeconfig=%[1]s
deadline=$((SECONDS + ${CAPOA_POST_BOOTSTRAP_TIMEOUT:-600}))
until kubectl --kubeconfig="$kubeconfig" get --raw /readyz >/dev/null 2>&1; do
  if ((SECONDS >= deadline)); then echo "capoa-post-bootstrap: the API server is not ready; the commands run at the next boot" >&2; exit 1; fi
  sleep "${CAPOA_POST_BOOTSTRAP_INTERVAL:-10}"
done
until kubectl --kubeconfig="$kubeconfig" get node "$(hostname)" >/dev/null 2>&1; do
  if ((SECONDS >= deadline)); then echo "capoa-post-bootstrap: Node $(hostname) is not registered; the commands run at the next boot" >&2; exit 1; fi
  sleep "${CAPOA_POST_BOOTSTRAP_INTERVAL:-10}"
done
`

// script is a bash script that runs commands after prelude and, once they all succeeded,
// writes the sentinel file.
func script(prelude string, commands []string, sentinel string) string {
	var b strings.Builder
	b.WriteString("#!/bin/bash\n# Written by the Cluster API OpenShift assisted bootstrap provider.\nset -euo pipefail\n")
	b.WriteString(prelude)
	for _, c := range commands {
		b.WriteString(c)
		b.WriteString("\n")
	}
	dir := sentinel[:strings.LastIndex(sentinel, "/")+1]
	fmt.Fprintf(&b, "mkdir -p '%s'\ntouch '%s'\n", dir, sentinel)
	return b.String()
}

// shellQuote quotes s as one word of a bash script: in single quotes, with each single quote of
// s ending the quotes, escaped with a backslash, and quotes opened again.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func dataURL(s string) resource {
	return resource{Source: dataURLPrefix + base64.StdEncoding.EncodeToString([]byte(s))}
}

// dataURLPrefix starts a base64 data URL of unspecified media type (RFC 2397).
const dataURLPrefix = "data:;base64,"

// providerIDDropIn is where the kubelet's providerID is set. OpenShift's kubelet.service (the
// machine-config-operator's templates/*/01-*-kubelet/_base/units/kubelet.service.yaml) runs
// the kubelet with --provider-id=${KUBELET_PROVIDERID}, and the machine-config-operator's own
// AWS template (templates/common/aws/files/usr-local-bin-aws-kubelet-providerid.yaml) sets that
// variable with this drop-in, as OpenShift's guide for external platforms tells providers to.
const providerIDDropIn = "/etc/systemd/system/kubelet.service.d/20-providerid.conf"

// providerIDDropInContents is the drop-in that gives the kubelet providerID: systemd's
// specifier character and the quoting characters are escaped.
func providerIDDropInContents(providerID string) string {
	v := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "%", "%%").Replace(providerID)
	return fmt.Sprintf("# Written by the Cluster API OpenShift assisted bootstrap provider (nodeRegistration.providerID).\n[Service]\nEnvironment=\"KUBELET_PROVIDERID=%s\"\n", v)
}

// installIgnitionOverride returns the Agent's ignitionConfigOverrides: the config's
// IgnitionOverrideAnnotation as it is when the spec has no bootstrap commands and no providerID
// (the resolved nodeRegistration.providerID), else an Ignition config with the command units and
// the kubelet's providerID drop-in that merges the annotation's config.
func installIgnitionOverride(config *bootstrapv1.OpenshiftAssistedConfig, providerID string) (string, error) {
	spec := &config.Spec
	if len(spec.PreBootstrapCommands) == 0 && len(spec.PostBootstrapCommands) == 0 && providerID == "" {
		return config.Annotations[bootstrapv1.IgnitionOverrideAnnotation], nil
	}
	dir := strings.TrimSuffix(spec.BootstrapCommandSentinelDir, "/")
	if dir == "" {
		dir = defaultSentinelDir
	}
	kubeconfig := spec.PostBootstrapKubeconfigPath
	if kubeconfig == "" {
		kubeconfig = defaultPostKubeconfigPath
	}
	ign := ignitionConfig{Ignition: ignitionSection{Version: ignitionVersion}, Storage: &storageSection{}, Systemd: &systemdSection{}}
	if err := mergeOverride(&ign, config); err != nil {
		return "", err
	}
	add := func(name, path, unitTemplate, prelude string, commands []string, sentinel string) {
		ign.Storage.Files = append(ign.Storage.Files, file{Path: path, Mode: scriptMode, Overwrite: true,
			Contents: dataURL(script(prelude, commands, sentinel))})
		ign.Systemd.Units = append(ign.Systemd.Units, unit{Name: name, Enabled: true, Contents: fmt.Sprintf(unitTemplate, sentinel, path)})
	}
	if providerID != "" {
		ign.Storage.Files = append(ign.Storage.Files, file{Path: providerIDDropIn, Mode: dropInMode, Overwrite: true,
			Contents: dataURL(providerIDDropInContents(providerID))})
	}
	if len(spec.PreBootstrapCommands) > 0 {
		add("capoa-pre-bootstrap.service", preBootstrapScript, preBootstrapUnit, "", spec.PreBootstrapCommands, dir+"/pre-bootstrap.done")
	}
	if len(spec.PostBootstrapCommands) > 0 {
		add("capoa-post-bootstrap.service", postBootstrapScript, postBootstrapUnit, fmt.Sprintf(postBootstrapWait, shellQuote(kubeconfig)),
			spec.PostBootstrapCommands, dir+"/post-bootstrap.done")
	}
	out, err := json.Marshal(ign)
	if err != nil {
		return "", fmt.Errorf("encoding the bootstrap commands' and providerID's Ignition: %w", err)
	}
	return string(out), nil
}
