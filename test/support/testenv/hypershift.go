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

package testenv

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// HyperShiftAPI is the release of HyperShift's API module whose HostedControlPlane CRD the tests
// install. The module ships its CRDs (one manifest per feature gate; AAA_ungated.yaml is the
// CRD without gated fields); it is fetched through the module proxy, not required by any go.mod:
// its Go types would bring in the SDKs of HyperShift's cloud platforms.
const HyperShiftAPI = "github.com/openshift/hypershift/api@v0.0.0-20251120083117-dea6d2f24af6"

// InstallHostedControlPlaneCRD installs HyperShift's HostedControlPlane CRD (of HyperShiftAPI,
// downloaded into the module cache if it is not there) and waits until it is served.
func InstallHostedControlPlaneCRD(ctx context.Context, c client.Client) error {
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", HyperShiftAPI)
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GONOSUMDB=github.com/openshift")
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("downloading %s: %w", HyperShiftAPI, err)
	}
	var mod struct{ Dir, Error string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		return fmt.Errorf("downloading %s: %s (%v)", HyperShiftAPI, mod.Error, err)
	}
	data, err := os.ReadFile(filepath.Join(mod.Dir, "hypershift", "v1beta1", "zz_generated.featuregated-crd-manifests",
		"hostedcontrolplanes.hypershift.openshift.io", "AAA_ungated.yaml"))
	if err != nil {
		return err
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(data, crd); err != nil {
		return fmt.Errorf("reading the HostedControlPlane CRD of %s: %w", HyperShiftAPI, err)
	}
	// The feature-gate annotations are for OpenShift's manifest renderer, which drops them (the
	// empty-named one is not a valid annotation key).
	crd.Annotations = nil
	return InstallCRD(ctx, c, crd)
}

// HostedControlPlane is a HostedControlPlane as HyperShift writes it for the agent platform
// (hostedcontrolplane of hostedcluster_controller.go), without status.
func HostedControlPlane(ns, name, agentNamespace string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "hypershift.openshift.io/v1beta1", "kind": "HostedControlPlane",
		"metadata": map[string]any{"namespace": ns, "name": name},
		"spec": map[string]any{
			"dns": map[string]any{"baseDomain": name + ".example.com"},
			"etcd": map[string]any{"managementType": "Managed",
				"managed": map[string]any{"storage": map[string]any{"type": "PersistentVolume"}}},
			"infraID":      name + "-x7k2p",
			"issuerURL":    "https://kubernetes.default.svc",
			"platform":     map[string]any{"type": "Agent", "agent": map[string]any{"agentNamespace": agentNamespace}},
			"pullSecret":   map[string]any{"name": "pull-secret"},
			"releaseImage": "quay.io/openshift-release-dev/ocp-release:4.19.0-x86_64",
			"sshKey":       map[string]any{"name": "ssh-key"},
			"services": []any{
				map[string]any{"service": "APIServer", "servicePublishingStrategy": map[string]any{"type": "LoadBalancer"}},
				map[string]any{"service": "OAuthServer", "servicePublishingStrategy": map[string]any{"type": "Route"}},
				map[string]any{"service": "Konnectivity", "servicePublishingStrategy": map[string]any{"type": "Route"}},
				map[string]any{"service": "Ignition", "servicePublishingStrategy": map[string]any{"type": "Route"}},
			},
		},
	}}
}

// HostedControlPlaneStarted sets, on hcp, the status HyperShift reports once the hosted
// control plane runs: initialized, ready, its admin kubeconfig and kubeadmin password Secrets.
func HostedControlPlaneStarted(hcp *unstructured.Unstructured) error {
	return unstructured.SetNestedMap(hcp.Object, map[string]any{
		"initialized": true, "ready": true,
		"kubeConfig":        map[string]any{"name": "admin-kubeconfig", "key": "kubeconfig"},
		"kubeadminPassword": map[string]any{"name": "kubeadmin-password"},
	}, "status")
}

// HyperShiftAgentCRDDir is the folder, relative to the repository root, of the copy of the agent
// provider's CRDs that `hypershift install` applies (see hack/hypershift-crds).
const HyperShiftAgentCRDDir = "test/support/testenv/hypershift-crds"

// InstallHyperShiftAgentCRDs puts HyperShift's copy of the agent provider's CRDs in place of the
// installed ones, as `hypershift install` does on a hub where they exist (a server-side apply
// with forced ownership of their spec), and waits until the API server publishes their schemas.
func InstallHyperShiftAgentCRDs(ctx context.Context, c client.Client, cfg *rest.Config) error {
	for _, plural := range []string{"agentclusters", "agentmachines", "agentmachinetemplates"} {
		crd, err := ReadCRD(filepath.Join(HyperShiftAgentCRDDir, "capi-provider.agent-install.openshift.io_"+plural+".yaml"))
		if err != nil {
			return err
		}
		live := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(ctx, client.ObjectKey{Name: crd.Name}, live); err != nil {
			return err
		}
		live.Labels = crd.Labels
		live.Spec = crd.Spec
		if err := c.Update(ctx, live); err != nil {
			return fmt.Errorf("replacing CRD %s: %w", crd.Name, err)
		}
	}
	// The API server publishes a changed schema a moment later; HyperShift's has Cluster API v1beta1
	// conditions (a severity) and no status.initialization.
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		paths, err := dc.OpenAPIV3().Paths()
		if err != nil {
			return false, nil //nolint:nilerr // not published yet: poll again
		}
		gv, ok := paths["apis/capi-provider.agent-install.openshift.io/v1beta1"]
		if !ok {
			return false, nil
		}
		doc, err := gv.Schema("application/json")
		if err != nil {
			return false, nil //nolint:nilerr // not published yet: poll again
		}
		return strings.Contains(string(doc), `"severity"`) && !strings.Contains(string(doc), `"initialization"`), nil
	})
}
