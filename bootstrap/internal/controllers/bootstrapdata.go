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
	"errors"
	"fmt"
	"net/url"
	"strings"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
)

// ignitionVersion is the Ignition spec version of the bootstrap data (read by every OpenShift 4
// release the assisted installer installs).
const ignitionVersion = "3.2.0"

// The bootstrap data is the Ignition config the infrastructure provider hands the host. With the
// assisted installer the host's real configuration comes from assisted-service (the discovery
// ISO, then the Agent's installation); the bootstrap data only carries what belongs to the
// Machine: its hostname (/etc/hostname) and, when the config has the IgnitionOverrideAnnotation,
// that Ignition config, merged by Ignition itself (ignition.config.merge with a data URL).
type ignitionConfig struct {
	Ignition ignitionSection `json:"ignition"`
	Storage  *storageSection `json:"storage,omitempty"`
	Systemd  *systemdSection `json:"systemd,omitempty"`
}

type systemdSection struct {
	Units []unit `json:"units,omitempty"`
}

type unit struct {
	Name     string `json:"name"`
	Enabled  bool   `json:"enabled"`
	Contents string `json:"contents"`
}

type ignitionSection struct {
	Version string         `json:"version"`
	Config  *configSection `json:"config,omitempty"`
}

type configSection struct {
	Merge []resource `json:"merge,omitempty"`
}

type resource struct {
	Source string `json:"source"`
}

type storageSection struct {
	Files []file `json:"files,omitempty"`
}

type file struct {
	Path      string   `json:"path"`
	Mode      int      `json:"mode"`
	Overwrite bool     `json:"overwrite"`
	Contents  resource `json:"contents"`
}

// bootstrapData returns the Ignition config of the Machine's host named hostname (no
// /etc/hostname when hostname is "": a name resolved from the host's metadata). A host that boots
// an RHCOS disk image gets the discovery ignition too, which starts the discovery agent (a live
// ISO carries it itself): Ignition merges each ignition.config.merge config over the one that
// lists it, in order (internal/exec/engine.go renderConfig), so the override, listed after it,
// wins over it; the discovery ignition writes no /etc/hostname.
// It fails when the IgnitionOverrideAnnotation is not a JSON object.
func bootstrapData(config *bootstrapv1.OpenshiftAssistedConfig, hostname string, discovery []byte) ([]byte, error) {
	ign := ignitionConfig{Ignition: ignitionSection{Version: ignitionVersion}}
	if len(discovery) > 0 {
		ign.Ignition.Config = &configSection{Merge: []resource{dataURL(string(discovery))}}
	}
	if hostname != "" {
		ign.Storage = &storageSection{Files: []file{{
			Path:      "/etc/hostname",
			Mode:      0o644,
			Overwrite: true,
			Contents:  resource{Source: "data:," + url.PathEscape(hostname+"\n")},
		}}}
	}
	if err := mergeOverride(&ign, config); err != nil {
		return nil, err
	}
	return json.Marshal(ign)
}

// mergeOverride makes ign merge the config's IgnitionOverrideAnnotation, when it has one, as
// Ignition itself merges configs (ignition.config.merge with a data URL). It fails when the
// annotation is not an Ignition config.
func mergeOverride(ign *ignitionConfig, config *bootstrapv1.OpenshiftAssistedConfig) error {
	override := config.Annotations[bootstrapv1.IgnitionOverrideAnnotation]
	if override == "" {
		return nil
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(override), &obj); err != nil {
		return fmt.Errorf("annotation %s is not a JSON Ignition config: %w", bootstrapv1.IgnitionOverrideAnnotation, err)
	}
	if _, ok := obj["ignition"]; !ok {
		return errors.New("annotation " + bootstrapv1.IgnitionOverrideAnnotation + " is not an Ignition config: it has no \"ignition\" section")
	}
	if ign.Ignition.Config == nil {
		ign.Ignition.Config = &configSection{}
	}
	ign.Ignition.Config.Merge = append(ign.Ignition.Config.Merge, dataURL(override))
	return nil
}

// discoveryIgnitionOf is the discovery ignition that bootstrapData merged into data (its first
// merged config), or nil when data has none.
func discoveryIgnitionOf(data []byte) []byte {
	var ign ignitionConfig
	if err := json.Unmarshal(data, &ign); err != nil || ign.Ignition.Config == nil || len(ign.Ignition.Config.Merge) == 0 {
		return nil
	}
	encoded, ok := strings.CutPrefix(ign.Ignition.Config.Merge[0].Source, dataURLPrefix)
	if !ok {
		return nil
	}
	discovery, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil {
		return nil
	}
	return discovery
}
