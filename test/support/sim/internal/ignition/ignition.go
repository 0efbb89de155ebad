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

// Package ignition reads the Ignition configs a simulated host boots: which discovery agent the
// configuration starts (the discovery ignition assisted-service writes, embedded in the ISO by the
// image service or put on a config drive), and what the kubelet of an installed host gets from it.
// The assisted-service simulator and the hosts that talk to the real service share it.
package ignition

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path"
	"slices"
	"strings"
)

// AgentUnit is the systemd unit of the discovery agent (internal/ignition/templates/agent.service
// in openshift/assisted-service).
const AgentUnit = "agent.service"

// Config is the part of an Ignition spec 3 config the lab reads or writes.
type Config struct {
	Ignition Section `json:"ignition"`
	Passwd   *Passwd `json:"passwd,omitempty"`
	Systemd  Systemd `json:"systemd"`
	Storage  *Files  `json:"storage,omitempty"`
}

// Section is the config's ignition section: its version and the configs it merges or is replaced by.
type Section struct {
	Version string `json:"version"`
	Config  struct {
		Merge   []Resource `json:"merge,omitempty"`
		Replace *Resource  `json:"replace,omitempty"`
	} `json:"config,omitzero"`
}

// Resource is a referenced config or a file's contents: its source URL and compression.
type Resource struct {
	Source      *string `json:"source,omitempty"`
	Compression *string `json:"compression,omitempty"`
}

// Passwd holds the config's users.
type Passwd struct {
	Users []User `json:"users"`
}

// User is a user the config creates.
type User struct {
	Name              string   `json:"name"`
	PasswordHash      string   `json:"passwordHash"`
	SSHAuthorizedKeys []string `json:"sshAuthorizedKeys"`
	Groups            []string `json:"groups"`
}

// Systemd holds the config's units.
type Systemd struct {
	Units []Unit `json:"units,omitempty"`
}

// Unit is a systemd unit of the config.
type Unit struct {
	Name     string  `json:"name"`
	Enabled  *bool   `json:"enabled,omitempty"`
	Mask     *bool   `json:"mask,omitempty"`
	Contents *string `json:"contents,omitempty"`
}

// Files holds the config's storage files.
type Files struct {
	Files []File `json:"files"`
}

// File is a file the config writes.
type File struct {
	Path      string         `json:"path"`
	Overwrite bool           `json:"overwrite"`
	Mode      int            `json:"mode"`
	User      map[string]any `json:"user"`
	Contents  Resource       `json:"contents"`
}

// Agent is how a host's discovery agent was told to reach the service: agent.service's --url
// and --infra-env-id, and its PULL_SECRET_TOKEN ("" under AUTH_TYPE=none, where assisted-service's
// template leaves the variable out).
type Agent struct {
	ServiceURL, InfraEnvID, Token string
	// CACertPath is its --cacert ("" when it has none: it trusts the system's roots), and
	// CACert that file's contents in the config (nil when the config writes no such file).
	CACertPath string
	CACert     []byte
}

// ReadsConfigDrive tells whether the Ignition of the disk image at imageURL reads its config from
// a config drive: RHCOS's openstack and nutanix images do (coreos/ignition
// docs/supported-platforms.md; internal/providers/openstack and nutanix read the config-2
// device). A metal image reads it from kernel arguments (ignition.config.url), which a deployed
// disk image has none of: its Ignition applies an empty config (internal/providers/metal returns
// ErrEmpty, which the engine ignores) and no agent starts; so do the other platforms' images.
func ReadsConfigDrive(imageURL string) bool {
	name := imageURL
	if u, err := url.Parse(imageURL); err == nil {
		name = path.Base(u.Path)
	}
	return strings.Contains(name, "openstack") || strings.Contains(name, "nutanix")
}

// DiscoveryAgentOf is the discovery agent the Ignition config userData starts: the ExecStart of
// its agent.service, enabled and not masked, once its ignition.config.replace and .merge are
// followed as Ignition does (internal/exec/config_fetcher.go RenderConfig: the replacing config
// rendered in its place; each merged config rendered, then merged over the config, its units'
// fields overriding those of the same name). Only data URLs are followed: the lab's hosts reach
// no other server, so a config that references one fails, as Ignition does when it cannot fetch.
// An error says why Ignition fails or no agent starts.
func DiscoveryAgentOf(userData []byte) (*Agent, error) {
	cfg, err := renderIgnition(userData, 0)
	if err != nil {
		return nil, err
	}
	for _, u := range cfg.Systemd.Units {
		if u.Name != AgentUnit {
			continue
		}
		if u.Contents == nil || u.Enabled == nil || !*u.Enabled || u.Mask != nil && *u.Mask {
			return nil, fmt.Errorf("%s is not enabled", AgentUnit)
		}
		a, err := ParseAgentUnit(*u.Contents)
		if err != nil || a.CACertPath == "" || cfg.Storage == nil {
			return a, err
		}
		for _, f := range cfg.Storage.Files {
			if f.Path != a.CACertPath || f.Contents.Source == nil {
				continue
			}
			data, err := DataURLContents(*f.Contents.Source)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f.Path, err)
			}
			a.CACert = []byte(data)
		}
		return a, nil
	}
	return nil, fmt.Errorf("the config has no %s", AgentUnit)
}

// maxConfigDepth bounds the references followed (a config that references itself).
const maxConfigDepth = 10

func renderIgnition(data []byte, depth int) (Config, error) {
	if depth > maxConfigDepth {
		return Config{}, errors.New("too many nested config references")
	}
	var cfg Config
	if err := json.Unmarshal(data, &cfg); err != nil {
		return Config{}, fmt.Errorf("the config is not an Ignition config: %w", err)
	}
	// RHCOS 4's Ignition (v2) parses spec 3 configs only.
	if !strings.HasPrefix(cfg.Ignition.Version, "3.") {
		return Config{}, fmt.Errorf("unsupported config version %q", cfg.Ignition.Version)
	}
	if ref := cfg.Ignition.Config.Replace; ref != nil && ref.Source != nil {
		child, err := fetchConfig(*ref)
		if err != nil {
			return Config{}, err
		}
		return renderIgnition(child, depth+1)
	}
	merged := cfg
	for _, ref := range cfg.Ignition.Config.Merge {
		raw, err := fetchConfig(ref)
		if err != nil {
			return Config{}, err
		}
		child, err := renderIgnition(raw, depth+1)
		if err != nil {
			return Config{}, err
		}
		merged.Systemd.Units = mergeUnits(merged.Systemd.Units, child.Systemd.Units)
		merged.Storage = mergeFiles(merged.Storage, child.Storage)
	}
	return merged, nil
}

// mergeUnits merges child's units over parent's, as Ignition's merge does for a list keyed by
// name: a unit of the same name takes the fields the child sets.
func mergeUnits(parent, child []Unit) []Unit {
	out := append([]Unit(nil), parent...)
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

// mergeFiles merges child's files over parent's, as Ignition's merge does for a list keyed by
// path: a file of the same path is the child's.
func mergeFiles(parent, child *Files) *Files {
	if child == nil {
		return parent
	}
	out := &Files{}
	if parent != nil {
		out.Files = append(out.Files, parent.Files...)
	}
	for _, c := range child.Files {
		i := slices.IndexFunc(out.Files, func(f File) bool { return f.Path == c.Path })
		if i < 0 {
			out.Files = append(out.Files, c)
		} else {
			out.Files[i] = c
		}
	}
	return out
}

// fetchConfig reads a referenced config: a data URL (RFC 2397: base64, or percent-encoded),
// gzip-compressed when the reference says so.
func fetchConfig(ref Resource) ([]byte, error) {
	if scheme, _, _ := strings.Cut(*ref.Source, ":"); scheme != "data" {
		return nil, fmt.Errorf("cannot fetch a config from a %s URL: the lab's hosts reach no server", scheme)
	}
	decoded, err := DataURLContents(*ref.Source)
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

// ParseAgentUnit reads the agent's --url and --infra-env-id from the unit's ExecStart, and its
// token from Environment=PULL_SECRET_TOKEN.
func ParseAgentUnit(unit string) (*Agent, error) {
	a := &Agent{}
	for _, line := range strings.Split(unit, "\n") {
		line = strings.TrimSpace(line)
		if tok, ok := strings.CutPrefix(line, "Environment=PULL_SECRET_TOKEN="); ok {
			a.Token = tok
		}
		exec, ok := strings.CutPrefix(line, "ExecStart=")
		if !ok {
			continue
		}
		args := strings.Fields(exec)
		for i, arg := range args {
			for flag, dst := range map[string]*string{"--url": &a.ServiceURL, "--infra-env-id": &a.InfraEnvID, "--cacert": &a.CACertPath} {
				if v, ok := strings.CutPrefix(arg, flag+"="); ok {
					*dst = v
				} else if arg == flag && i+1 < len(args) {
					*dst = args[i+1]
				}
			}
		}
	}
	if a.ServiceURL == "" || a.InfraEnvID == "" {
		return nil, fmt.Errorf("%s's ExecStart names no --url and --infra-env-id", AgentUnit)
	}
	return a, nil
}

// Ptr returns a pointer to v.
func Ptr[T any](v T) *T { return &v }
