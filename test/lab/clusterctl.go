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

package lab

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"
	clusterctlconfig "sigs.k8s.io/cluster-api/cmd/clusterctl/config"
	utilyaml "sigs.k8s.io/cluster-api/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/testenv"
)

// DevelopmentVersion is the version of this repository's providers in the lab's clusterctl
// inventory: the version hack/release-manifests.sh (make release-manifests) gives the local
// repository it writes when no release version is set, so that `clusterctl upgrade plan
// --config out/clusterctl.yaml` finds each provider's release series there.
const DevelopmentVersion = "v0.1.0"

// InventoryProvider is one provider of the lab's clusterctl inventory.
type InventoryProvider struct {
	// Name and Type as clusterctl names them (clusterctl.yaml's providers:).
	Name string
	Type clusterctlv1.ProviderType
	// Namespace is where its release manifests install it.
	Namespace string
	// Version is the version running in the lab.
	Version string
}

// ManifestLabel is the provider's label (cluster-api, infrastructure-agent, ...): the name of its
// inventory object and of its folder in a clusterctl repository.
func (p InventoryProvider) ManifestLabel() string {
	return clusterctlv1.ManifestLabel(p.Name, p.Type)
}

// InventoryProviders are the providers that run in the lab, in-process, as clusterctl would
// record them had it installed them: Cluster API and CAPM3 at the versions the lab is built
// with (test/go.mod), this repository's three at DevelopmentVersion, each in the namespace its
// release manifests use.
func InventoryProviders(ctx context.Context) ([]InventoryProvider, error) {
	capi, err := moduleVersion(ctx, "sigs.k8s.io/cluster-api")
	if err != nil {
		return nil, err
	}
	capm3, err := moduleVersion(ctx, "github.com/metal3-io/cluster-api-provider-metal3")
	if err != nil {
		return nil, err
	}
	return []InventoryProvider{
		{Name: "cluster-api", Type: clusterctlv1.CoreProviderType, Namespace: "capi-system", Version: capi},
		{Name: "metal3", Type: clusterctlv1.InfrastructureProviderType, Namespace: "capm3-system", Version: capm3},
		{Name: "agent", Type: clusterctlv1.InfrastructureProviderType, Namespace: "capoa-agent-system", Version: DevelopmentVersion},
		{Name: "openshift-assisted", Type: clusterctlv1.BootstrapProviderType, Namespace: "capoa-bootstrap-system", Version: DevelopmentVersion},
		{Name: "openshift-assisted", Type: clusterctlv1.ControlPlaneProviderType, Namespace: "capoa-controlplane-system", Version: DevelopmentVersion},
	}, nil
}

// moduleVersion is the version of a module the lab is built with: from the binary's build
// information, else (a test binary carries none) from test/go.mod through go list, as
// hack/release-manifests.sh reads it.
func moduleVersion(ctx context.Context, path string) (string, error) {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, m := range info.Deps {
			if m.Path != path {
				continue
			}
			if m.Replace != nil && m.Replace.Version != "" {
				return m.Replace.Version, nil
			}
			return m.Version, nil
		}
	}
	root, err := testenv.RepoRoot()
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Version}}", path)
	cmd.Dir = filepath.Join(root, "test")
	cmd.Env = append(os.Environ(), "GOWORK=off")
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("reading the version of %s from test/go.mod: %w", path, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// writeClusterctlInventory writes clusterctl's inventory into the management cluster: the
// clusterctl inventory CRD (clusterctl's own manifest, as `clusterctl init` installs it) and a
// Provider object per provider running in-process, with the labels clusterctl sets
// (components.InventoryObject in sigs.k8s.io/cluster-api/cmd/clusterctl/client/repository).
// The providers themselves are not installed as clusterctl would (Deployments, Services, webhook
// configurations): the lab runs them in-process, where no kubelet would start those pods.
func writeClusterctlInventory(ctx context.Context, cfg *rest.Config) error {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, clusterctlv1.AddToScheme} {
		if err := add(scheme); err != nil {
			return fmt.Errorf("building the inventory's scheme: %w", err)
		}
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return fmt.Errorf("creating a client for the inventory: %w", err)
	}
	objs, err := utilyaml.ToUnstructured(clusterctlconfig.ClusterctlAPIManifest)
	if err != nil {
		return fmt.Errorf("parsing clusterctl's inventory CRD: %w", err)
	}
	for i := range objs {
		if err := c.Create(ctx, &objs[i]); client.IgnoreAlreadyExists(err) != nil {
			return fmt.Errorf("installing clusterctl's inventory CRD %s: %w", objs[i].GetName(), err)
		}
	}
	if err := testenv.WaitForCRD(ctx, c, "providers."+clusterctlv1.GroupVersion.Group); err != nil {
		return err
	}
	providers, err := InventoryProviders(ctx)
	if err != nil {
		return err
	}
	for _, p := range providers {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: p.Namespace,
			Labels: map[string]string{clusterctlv1.ClusterctlLabel: "", clusterv1.ProviderNameLabel: p.ManifestLabel()}}}
		if err := c.Create(ctx, ns); client.IgnoreAlreadyExists(err) != nil {
			return fmt.Errorf("creating namespace %s: %w", p.Namespace, err)
		}
		inv := &clusterctlv1.Provider{
			ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: p.ManifestLabel(), Labels: map[string]string{
				clusterctlv1.ClusterctlLabel:     "",
				clusterv1.ProviderNameLabel:      p.ManifestLabel(),
				clusterctlv1.ClusterctlCoreLabel: clusterctlv1.ClusterctlCoreLabelInventoryValue,
			}},
			ProviderName: p.Name, Type: string(p.Type), Version: p.Version,
		}
		if err := c.Create(ctx, inv); client.IgnoreAlreadyExists(err) != nil {
			return fmt.Errorf("recording provider %s in clusterctl's inventory: %w", p.ManifestLabel(), err)
		}
	}
	return nil
}
