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

package ignition

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// ProviderIDDropIn is the systemd drop-in through which an OpenShift host's kubelet gets
// its --provider-id: the machine-config-operator's kubelet.service passes
// --provider-id=${KUBELET_PROVIDERID}, and this drop-in (the path its AWS template writes) sets
// the variable.
const ProviderIDDropIn = "/etc/systemd/system/kubelet.service.d/20-providerid.conf"

var providerIDLine = regexp.MustCompile(`(?m)^Environment="KUBELET_PROVIDERID=((?:[^"\\]|\\.)*)"$`)

// KubeletProviderID returns the providerID the kubelet of a host installed with the Agent's
// ignitionConfigOverrides registers its Node with, "" when the overrides set none. assisted-
// service merges the overrides into the host's installation Ignition (Ignition 3: storage.files
// with data URLs), so the file is on the installed host when the kubelet first starts. An
// override that is not valid Ignition fails the installation in reality; here it is an error.
func KubeletProviderID(overrides string) (string, error) {
	if overrides == "" {
		return "", nil
	}
	var ign Config
	if err := json.Unmarshal([]byte(overrides), &ign); err != nil {
		return "", fmt.Errorf("the Agent's ignitionConfigOverrides is not Ignition JSON: %w", err)
	}
	if ign.Storage == nil {
		return "", nil
	}
	for _, f := range ign.Storage.Files {
		if f.Path != ProviderIDDropIn {
			continue
		}
		var source string
		if f.Contents.Source != nil {
			source = *f.Contents.Source
		}
		data, err := DataURLContents(source)
		if err != nil {
			return "", fmt.Errorf("%s: %w", ProviderIDDropIn, err)
		}
		m := providerIDLine.FindStringSubmatch(data)
		if m == nil {
			return "", nil
		}
		// systemd unquoting of the Environment= value and its %% specifier escape.
		return strings.NewReplacer(`\\`, `\`, `\"`, `"`, "%%", "%").Replace(m[1]), nil
	}
	return "", nil
}

// DataURLContents decodes an Ignition data URL (RFC 2397, base64 or percent-encoded).
func DataURLContents(source string) (string, error) {
	rest, ok := strings.CutPrefix(source, "data:")
	if !ok {
		return "", fmt.Errorf("contents source %q is not a data URL (the simulator reads no remote sources)", source)
	}
	meta, data, ok := strings.Cut(rest, ",")
	if !ok {
		return "", fmt.Errorf("data URL without a comma")
	}
	if strings.HasSuffix(meta, ";base64") {
		b, err := base64.StdEncoding.DecodeString(data)
		return string(b), err
	}
	return url.PathUnescape(data)
}
