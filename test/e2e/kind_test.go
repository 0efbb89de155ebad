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

package e2e

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "sigs.k8s.io/cluster-api/util/yaml"
	"sigs.k8s.io/yaml"
)

// The kind path (kind/run.sh) cannot run here (no Docker engine, no libvirt). These tests keep it
// honest: its script parses (and passes shellcheck where installed), its templates use only the
// variables the script renders and render into valid YAML, XML and objects the pinned APIs accept,
// and the host inventory it writes is what the suite reads.

const kindDir = "kind"

func TestKindScripts(t *testing.T) {
	scripts, err := filepath.Glob(filepath.Join(kindDir, "*.sh"))
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no scripts in %s: %v", kindDir, err)
	}
	shellcheck, _ := exec.LookPath("shellcheck")
	for _, s := range scripts {
		if out, err := exec.CommandContext(t.Context(), "bash", "-n", s).CombinedOutput(); err != nil {
			t.Errorf("bash -n %s: %v\n%s", s, err, out)
		}
		if shellcheck == "" {
			t.Logf("shellcheck is not installed: only bash -n checked %s", s)
			continue
		}
		cmd := exec.CommandContext(t.Context(), shellcheck, "-x", filepath.Base(s))
		cmd.Dir = filepath.Dir(s)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("shellcheck %s: %v\n%s", s, err, out)
		}
	}
}

// renderVars reads the RENDER_VARS line of run.sh: the variables its render function substitutes.
func renderVars(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(kindDir, "run.sh"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^RENDER_VARS="([A-Z0-9_ ]+)"$`).FindSubmatch(raw)
	if m == nil {
		t.Fatal(`run.sh has no RENDER_VARS="..." line`)
	}
	return strings.Fields(string(m[1]))
}

// sampleValues are values of the render variables as run.sh would set them.
func sampleValues(vars []string) map[string]string {
	values := map[string]string{
		"KIND_CLUSTER_NAME": "capoa-e2e", "KIND_NODE_IMAGE": "kindest/node:v1.33.1", "PROVISIONING_IP": "192.168.111.1",
		"LIBVIRT_NETWORK": "capoa-e2e", "LIBVIRT_BRIDGE": "capoa-e2e0", "BASE_DOMAIN": "e2e.example.com",
		"VM_NAME": "capoa-e2e-host-0", "VM_MEMORY_GIB": "16",
		"VM_VCPUS": "8", "VM_DISK": "/tmp/capoa-e2e-host-0.qcow2", "VM_MAC": "52:54:00:e2:e0:00",
		"VM_UUID": "6f1c2a3e-8d4b-4c1e-9a57-0b1f2e3d4c5b", "SUSHY_PORT": "8000", "BMC_USERNAME": "admin",
		"BMC_PASSWORD": "password", "BMO_REF": "v0.13.2", "IRONIC_IMAGE_NAME": "quay.io/metal3-io/ironic",
		"IRONIC_IMAGE_TAG": "release-31.0", "ASSISTED_SERVICE_REF": "v2.40.0", "HIVE_REF": "master",
		"OPENSHIFT_MINOR": "4.17", "RHCOS_VERSION": "417.94.202409121747-0",
		"RHCOS_ISO_URL": "https://mirror.openshift.com/pub/openshift-v4/x86_64/dependencies/rhcos/4.17/4.17.0/rhcos-4.17.0-x86_64-live.x86_64.iso",
	}
	out := map[string]string{}
	for _, v := range vars {
		out[v] = values[v]
	}
	return out
}

var templateVar = regexp.MustCompile(`\$\{([A-Za-z0-9_]+)\}`)

// renderTemplate substitutes ${VAR} as run.sh's envsubst call does, failing on a variable run.sh
// does not render.
func renderTemplate(t *testing.T, path string, values map[string]string) []byte {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return templateVar.ReplaceAllFunc(raw, func(m []byte) []byte {
		name := string(templateVar.FindSubmatch(m)[1])
		v, ok := values[name]
		if !ok {
			t.Errorf("%s uses ${%s}, which run.sh does not render (RENDER_VARS)", path, name)
			return m
		}
		if v == "" {
			t.Errorf("no sample value for ${%s} (used by %s)", name, path)
		}
		return []byte(v)
	})
}

func TestKindManifestsRender(t *testing.T) {
	vars := renderVars(t)
	values := sampleValues(vars)
	scheme, err := managementScheme()
	if err != nil {
		t.Fatal(err)
	}
	decoder := serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDeserializer()
	var files []string
	err = filepath.WalkDir(kindDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && !strings.HasSuffix(path, ".sh") && filepath.Base(path) != "versions.env" {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	typed := 0
	for _, path := range files {
		rendered := renderTemplate(t, path, values)
		switch filepath.Ext(path) {
		case ".xml":
			if err := wellFormedXML(rendered); err != nil {
				t.Errorf("%s does not render into well-formed XML: %v", path, err)
			}
		case ".yaml":
			if filepath.Base(path) == "inventory-host.yaml" {
				continue // TestKindInventory
			}
			objs, err := utilyaml.ToUnstructured(rendered)
			if err != nil || len(objs) == 0 {
				t.Errorf("%s does not render into YAML objects: %v", path, err)
				continue
			}
			for _, o := range objs {
				if o.GetKind() == "Kustomization" {
					checkKustomization(t, path, rendered)
					continue
				}
				if !scheme.Recognizes(o.GroupVersionKind()) {
					continue // the kind cluster config
				}
				if _, _, err := decoder.Decode(rendered, nil, nil); err != nil {
					t.Errorf("%s: %s is not valid for the pinned API: %v", path, o.GetKind(), err)
				}
				typed++
			}
		}
	}
	if typed < 2 {
		t.Errorf("the AgentServiceConfig and HiveConfig were not checked against their APIs (%d objects)", typed)
	}
}

// checkKustomization checks that every local file a kustomization refers to exists.
func checkKustomization(t *testing.T, path string, rendered []byte) {
	t.Helper()
	var k struct {
		Resources          []string `json:"resources"`
		ConfigMapGenerator []struct {
			Envs []string `json:"envs"`
		} `json:"configMapGenerator"`
	}
	if err := yaml.Unmarshal(rendered, &k); err != nil {
		t.Errorf("%s: %v", path, err)
		return
	}
	local := []string{}
	for _, r := range k.Resources {
		if !strings.HasPrefix(r, "https://") {
			local = append(local, r)
		} else if !strings.Contains(r, "?ref=") {
			t.Errorf("%s: remote resource %s is not pinned with ?ref=", path, r)
		}
	}
	for _, g := range k.ConfigMapGenerator {
		local = append(local, g.Envs...)
	}
	for _, f := range local {
		if _, err := os.Stat(filepath.Join(filepath.Dir(path), f)); err != nil {
			t.Errorf("%s refers to %s: %v", path, f, err)
		}
	}
}

func wellFormedXML(data []byte) error {
	d := xml.NewDecoder(bytes.NewReader(data))
	for {
		if _, err := d.Token(); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
	}
}

// TestKindInventory renders the inventory as run.sh writes it (the header, then the host template
// once per VM) and reads it the way the suite does.
func TestKindInventory(t *testing.T) {
	values := sampleValues(renderVars(t))
	var b bytes.Buffer
	b.WriteString("hosts:\n")
	for i, mac := range []string{"52:54:00:e2:e0:00", "52:54:00:e2:e0:01"} {
		values["VM_NAME"], values["VM_MAC"] = fmt.Sprintf("capoa-e2e-host-%d", i), mac
		for _, line := range strings.SplitAfter(string(renderTemplate(t, filepath.Join(kindDir, "manifests", "inventory-host.yaml"), values)), "\n") {
			if !strings.HasPrefix(line, "#") { // run.sh drops the comment lines (grep -v '^#')
				b.WriteString(line)
			}
		}
	}
	path := filepath.Join(t.TempDir(), "hosts.yaml")
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	inv, err := LoadInventory(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(inv.Hosts) != 2 {
		t.Fatalf("want 2 hosts, got %d", len(inv.Hosts))
	}
	scheme, err := managementScheme()
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range inv.Hosts {
		host, secret := h.BareMetalHost("ns", h.Name)
		if !strings.HasPrefix(host.Spec.BMC.Address, "redfish-virtualmedia+http://192.168.111.1:8000/redfish/v1/Systems/") {
			t.Errorf("BMC address %q is not sushy-tools' Redfish virtual media", host.Spec.BMC.Address)
		}
		if host.Spec.BootMACAddress != h.BootMACAddress || secret.StringData["username"] != "admin" || host.Spec.BMC.CredentialsName != secret.Name {
			t.Errorf("BareMetalHost of %s does not carry the inventory's MAC and credentials", h.Name)
		}
		if _, err := runtime.DefaultUnstructuredConverter.ToUnstructured(host); err != nil {
			t.Errorf("BareMetalHost of %s: %v", h.Name, err)
		}
		if gvks, _, err := scheme.ObjectKinds(host); err != nil || len(gvks) == 0 {
			t.Errorf("the management scheme does not know BareMetalHost: %v", err)
		}
	}
	if _, err := LoadInventory(filepath.Join(t.TempDir(), "missing.yaml")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing inventory must fail with not-exist, got %v", err)
	}
}

// TestE2EConfigs loads the lab path's config and the kind path's overlay, as the suite does.
func TestE2EConfigs(t *testing.T) {
	for _, paths := range [][]string{{"config/e2e.yaml"}, {"config/e2e.yaml", "config/kind.yaml"}} {
		c, err := LoadE2EConfig(paths...)
		if err != nil {
			t.Fatalf("%v: %v", paths, err)
		}
		if got := c.GetIntervals("quick-start", "wait-control-plane"); len(got) != 2 {
			t.Errorf("%v: wait-control-plane intervals: %v", paths, got)
		}
	}
	kind, err := LoadE2EConfig("config/e2e.yaml", "config/kind.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if kind.Intervals["default/wait-control-plane"][0] != "120m" {
		t.Errorf("the kind overlay does not replace the lab's intervals: %v", kind.Intervals["default/wait-control-plane"])
	}
	if _, err := LoadE2EConfig(filepath.Join(t.TempDir(), "missing.yaml")); err == nil {
		t.Error("a missing config must fail")
	}
}
