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
	"path/filepath"

	capm3v1beta2 "github.com/metal3-io/cluster-api-provider-metal3/api/v1beta2"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	clusterctlv1 "sigs.k8s.io/cluster-api/cmd/clusterctl/api/v1alpha3"
	clusterctlclient "sigs.k8s.io/cluster-api/cmd/clusterctl/client"
	clusterctlcluster "sigs.k8s.io/cluster-api/cmd/clusterctl/client/cluster"
	clusterctlconfig "sigs.k8s.io/cluster-api/cmd/clusterctl/client/config"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	infrav1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/infrastructure/v1beta1"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/testenv"
)

// MoveCRDLabels are the labels a platform engineer puts on the CRDs of the services the providers
// work with, which their own operators install (not clusterctl), so that `clusterctl move` takes
// their objects along (docs/getting-started.md gives the same list):
//   - BareMetalHosts are nobody's children: they move with their whole hierarchy (the BMC
//     credentials Secret and HardwareData they own), as CAPM3 documents;
//   - Agents are nobody's children either: they move, and assisted-service on the new hub deletes
//     those it holds no host for;
//   - InfraEnvs, ClusterDeployments and AgentClusterInstalls move as children of the providers'
//     objects, their owners: discovery only needs their CRDs labelled.
var MoveCRDLabels = map[string]map[string]string{
	"baremetalhosts.metal3.io":                          {clusterctlv1.ClusterctlLabel: "", clusterctlv1.ClusterctlMoveHierarchyLabel: ""},
	"hardwaredata.metal3.io":                            {clusterctlv1.ClusterctlLabel: ""},
	"agents.agent-install.openshift.io":                 {clusterctlv1.ClusterctlLabel: "", clusterctlv1.ClusterctlMoveLabel: ""},
	"infraenvs.agent-install.openshift.io":              {clusterctlv1.ClusterctlLabel: ""},
	"clusterdeployments.hive.openshift.io":              {clusterctlv1.ClusterctlLabel: ""},
	"agentclusterinstalls.extensions.hive.openshift.io": {clusterctlv1.ClusterctlLabel: ""},
}

// clusterctlInstalled are the API groups of the providers clusterctl init installs, and labels:
// Cluster API's, CAPM3's (infrastructure.cluster.x-k8s.io) and this repository's three.
var clusterctlInstalled = map[string]bool{
	clusterv1.GroupVersion.Group:      true,
	capm3v1beta2.GroupVersion.Group:   true,
	infrav1.GroupVersion.Group:        true,
	bootstrapv1.GroupVersion.Group:    true,
	controlplanev1.GroupVersion.Group: true,
}

// prepareForMove makes env look, to clusterctl, like a management cluster set up as the docs say:
// clusterctl's inventory CRD, the clusterctl label on the CRDs of the providers clusterctl init
// installs (Cluster API, CAPM3, this repository's), and MoveCRDLabels.
func prepareForMove(ctx context.Context, cfg clusterctlconfig.Client, env *testenv.Environment, kubeconfig string) error {
	cluster := clusterctlcluster.New(clusterctlcluster.Kubeconfig{Path: kubeconfig}, cfg)
	if err := cluster.ProviderInventory().EnsureCustomResourceDefinitions(ctx); err != nil {
		return fmt.Errorf("installing clusterctl's inventory CRD: %w", err)
	}
	crds := &apiextensionsv1.CustomResourceDefinitionList{}
	if err := env.Client.List(ctx, crds); err != nil {
		return fmt.Errorf("listing CRDs: %w", err)
	}
	for i := range crds.Items {
		crd := &crds.Items[i]
		labels := MoveCRDLabels[crd.Name]
		if clusterctlInstalled[crd.Spec.Group] {
			labels = map[string]string{clusterctlv1.ClusterctlLabel: ""}
		}
		if len(labels) == 0 {
			continue
		}
		base := crd.DeepCopy()
		if crd.Labels == nil {
			crd.Labels = map[string]string{}
		}
		for k, v := range labels {
			crd.Labels[k] = v
		}
		if err := env.Client.Patch(ctx, crd, client.MergeFrom(base)); err != nil {
			return fmt.Errorf("labelling CRD %s: %w", crd.Name, err)
		}
	}
	return nil
}

// SetUpForClusterctl makes the lab's management cluster look, to clusterctl, like one set up as
// the docs say (prepareForMove), as clusterctl's owner graph (Cluster API's ClusterDeletionSpec)
// and move read it: without the labels, their discovery finds no kind of the providers but the
// Cluster. kubeconfig reaches the management cluster as an administrator.
func (l *Lab) SetUpForClusterctl(ctx context.Context, kubeconfig string) error {
	cfg, err := clusterctlconfig.New(ctx, "")
	if err != nil {
		return fmt.Errorf("clusterctl configuration: %w", err)
	}
	return prepareForMove(ctx, cfg, l.current().env, kubeconfig)
}

// Move starts another management cluster, with the same providers and services, and moves the
// clusters of namespace to it with clusterctl's own move (as `clusterctl move --to-kubeconfig`
// does), the way a platform engineer pivots to a new hub. From then on the lab works with the new
// management cluster (Mgmt, Assisted); the one moved from keeps running and is returned.
func (l *Lab) Move(ctx context.Context, namespace string) (*testenv.Environment, error) {
	from := l.current()
	to, err := l.startManagement(l.ctx)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "lab-move-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	cfg, err := clusterctlconfig.New(ctx, "")
	if err != nil {
		return nil, fmt.Errorf("clusterctl configuration: %w", err)
	}
	fromKubeconfig, toKubeconfig := filepath.Join(dir, "from.kubeconfig"), filepath.Join(dir, "to.kubeconfig")
	for _, m := range []struct {
		env  *testenv.Environment
		path string
	}{{from.env, fromKubeconfig}, {to.env, toKubeconfig}} {
		if err := m.env.WriteKubeconfig(m.path); err != nil {
			return nil, err
		}
		if err := prepareForMove(ctx, cfg, m.env, m.path); err != nil {
			return nil, err
		}
	}
	c, err := clusterctlclient.New(ctx, "", clusterctlclient.InjectConfig(cfg))
	if err != nil {
		return nil, fmt.Errorf("creating the clusterctl client: %w", err)
	}
	if err := c.Move(ctx, clusterctlclient.MoveOptions{
		FromKubeconfig: clusterctlclient.Kubeconfig{Path: fromKubeconfig},
		ToKubeconfig:   clusterctlclient.Kubeconfig{Path: toKubeconfig},
		Namespace:      namespace,
	}); err != nil {
		return nil, fmt.Errorf("clusterctl move: %w", err)
	}
	return from.env, nil
}
