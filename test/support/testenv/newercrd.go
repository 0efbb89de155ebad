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
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// NewerAgentSpecFields are spec fields of assisted-service's Agent that the newest CRD has
// (NewestCRDDir, agents.agent-install.openshift.io) and the Go types this project pins
// (github.com/openshift/assisted-service/api of 2024-05) lack, with a value for each that the
// newest schema takes (TestNewerAgentSpecFieldsFitTheNewestCRD):
//   - installation_disk_path: a string, "the installation destination disk using either its by-id
//     or by-path value";
//   - fencingCredentialsSecretRef: a string, "a name of a secret in the Agent's namespace that
//     contains fencing credentials" (the host's BMC, for two-node OpenShift with fencing).
//
// A write of a whole Agent from the pinned types (an Update) erases them; a patch of the fields
// the writer owns keeps them.
var NewerAgentSpecFields = map[string]any{
	"installation_disk_path":      "/dev/disk/by-path/pci-0000:00:1f.2-ata-1",
	"fencingCredentialsSecretRef": "bmc-credentials",
}

// NewerAgentSpec returns spec with the values of NewerAgentSpecFields added.
func NewerAgentSpec(spec map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range spec {
		out[k] = v
	}
	for name, v := range NewerAgentSpecFields {
		out[name] = v
	}
	return out
}

// MissingNewerAgentSpecFields lists the fields of NewerAgentSpecFields that agent (read as
// unstructured) lacks or holds with another value.
func MissingNewerAgentSpecFields(agent *unstructured.Unstructured) []string {
	spec, _, _ := unstructured.NestedMap(agent.Object, "spec")
	var missing []string
	for name, v := range NewerAgentSpecFields {
		if fmt.Sprint(spec[name]) != fmt.Sprint(v) {
			missing = append(missing, name)
		}
	}
	return missing
}

// addSchemaProperties adds properties to the object at path (below the root of the schema, for
// example "spec", "provisionRequirements"; "[]" steps into the elements of an array) in every
// version of the CRD named crdName, as a newer release of its operator installs it.
func addSchemaProperties(ctx context.Context, c client.Client, crdName string, properties map[string]any, path ...string) error {
	crd := &unstructured.Unstructured{}
	crd.SetAPIVersion("apiextensions.k8s.io/v1")
	crd.SetKind("CustomResourceDefinition")
	if err := c.Get(ctx, client.ObjectKey{Name: crdName}, crd); err != nil {
		return fmt.Errorf("getting the CRD %s: %w", crdName, err)
	}
	versions, _, err := unstructured.NestedSlice(crd.Object, "spec", "versions")
	if err != nil {
		return fmt.Errorf("reading the versions of the CRD %s: %w", crdName, err)
	}
	at := []string{"schema", "openAPIV3Schema"}
	for _, p := range path {
		if p == "[]" {
			at = append(at, "items")
			continue
		}
		at = append(at, "properties", p)
	}
	at = append(at, "properties")
	for i := range versions {
		v, ok := versions[i].(map[string]any)
		if !ok {
			return fmt.Errorf("version %d of the CRD %s is not an object", i, crdName)
		}
		props, _, err := unstructured.NestedMap(v, at...)
		if err != nil || props == nil {
			return fmt.Errorf("version %d of the CRD %s has no properties at %v: %v", i, crdName, path, err)
		}
		for name, schema := range properties {
			props[name] = schema
		}
		if err := unstructured.SetNestedMap(v, props, at...); err != nil {
			return err
		}
		versions[i] = v
	}
	if err := unstructured.SetNestedSlice(crd.Object, versions, "spec", "versions"); err != nil {
		return err
	}
	if err := c.Update(ctx, crd); err != nil {
		return fmt.Errorf("updating the CRD %s: %w", crdName, err)
	}
	return nil
}

// saveCRDs returns a function that puts the specs (schemas, names, versions) of the CRDs named
// back as they are now: an older hub again, for tests that share the API server.
func saveCRDs(ctx context.Context, c client.Client, names ...string) (restore func(context.Context) error, err error) {
	saved := map[string]map[string]any{}
	for _, name := range names {
		crd := &unstructured.Unstructured{}
		crd.SetAPIVersion("apiextensions.k8s.io/v1")
		crd.SetKind("CustomResourceDefinition")
		if err := c.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
			return nil, fmt.Errorf("getting the CRD %s: %w", name, err)
		}
		spec, _, err := unstructured.NestedMap(crd.Object, "spec")
		if err != nil {
			return nil, fmt.Errorf("reading the spec of the CRD %s: %w", name, err)
		}
		saved[name] = spec
	}
	return func(ctx context.Context) error {
		for _, name := range names {
			if err := setCRDSpec(ctx, c, name, saved[name]); err != nil {
				return fmt.Errorf("restoring the CRD %s: %w", name, err)
			}
		}
		return nil
	}, nil
}

// HypotheticalElementField is a field of the elements of an array of objects that no
// assisted-service release has: the newest CRDs (NewestCRDDir) still have ClusterNetworkEntry cidr
// and hostPrefix alone, MachineNetworkEntry cidr alone, ManifestsConfigMapReference name alone and
// KernelArgument operation and value alone (TestHypotheticalElementsAreAsTheNewestCRDsHaveThem).
// It stands for the field a newer CRD may add to such an element, which the pinned Go types would
// lack: a JSON merge patch of a changed array sends the elements as those types encode them,
// without it. AddHypotheticalNetworkEntryField and AddHypotheticalKernelArgumentField add it to
// the CRD served, the generated one or the newest (UseNewestCRDs).
const HypotheticalElementField = "hypotheticalNewerField"

// AddHypotheticalNetworkEntryField adds HypotheticalElementField (a string) to the elements of
// spec.networking.clusterNetwork of the AgentClusterInstall CRD that the API server of c serves,
// and waits until an AgentClusterInstall written with it under strict field validation is
// accepted. It returns a function that puts the CRD back as it was.
func AddHypotheticalNetworkEntryField(ctx context.Context, c client.Client, ns string) (restore func(context.Context) error, err error) {
	return addHypotheticalElementField(ctx, c, "agentclusterinstalls.extensions.hive.openshift.io", map[string]any{
		"apiVersion": "extensions.hive.openshift.io/v1beta1", "kind": "AgentClusterInstall",
		"metadata": map[string]any{"namespace": ns, "name": "newer-crd-probe"},
		"spec": map[string]any{
			"clusterDeploymentRef": map[string]any{"name": "probe"},
			"networking": map[string]any{"clusterNetwork": []any{
				map[string]any{"cidr": "10.128.0.0/14", "hostPrefix": int64(23), HypotheticalElementField: "probe"},
			}},
			"provisionRequirements": map[string]any{"controlPlaneAgents": int64(1)},
		},
	}, "spec", "networking", "clusterNetwork")
}

// AddHypotheticalKernelArgumentField adds HypotheticalElementField (a string) to the elements of
// spec.kernelArguments of the InfraEnv CRD that the API server of c serves, as
// AddHypotheticalNetworkEntryField does for the AgentClusterInstall's cluster networks.
func AddHypotheticalKernelArgumentField(ctx context.Context, c client.Client, ns string) (restore func(context.Context) error, err error) {
	return addHypotheticalElementField(ctx, c, "infraenvs.agent-install.openshift.io", map[string]any{
		"apiVersion": "agent-install.openshift.io/v1beta1", "kind": "InfraEnv",
		"metadata": map[string]any{"namespace": ns, "name": "newer-crd-probe"},
		"spec": map[string]any{
			"pullSecretRef":   map[string]any{"name": "probe"},
			"kernelArguments": []any{map[string]any{"operation": "append", "value": "quiet", HypotheticalElementField: "probe"}},
		},
	}, "spec", "kernelArguments")
}

// addHypotheticalElementField adds HypotheticalElementField to the elements of the array at path
// of the CRD named crd, and waits until probe, which has it, is accepted under strict field
// validation (a dry run).
func addHypotheticalElementField(ctx context.Context, c client.Client, crd string, probe map[string]any, path ...string) (restore func(context.Context) error, err error) {
	if restore, err = saveCRDs(ctx, c, crd); err != nil {
		return nil, err
	}
	if err := addSchemaProperties(ctx, c, crd, map[string]any{HypotheticalElementField: map[string]any{"type": "string"}},
		append(path, "[]")...); err != nil {
		return nil, err
	}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		p := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(probe)}
		return c.Create(ctx, p, client.DryRunAll, client.FieldValidation(metav1.FieldValidationStrict)) == nil, nil
	})
	if err != nil {
		return nil, fmt.Errorf("waiting for the API server to serve %s in the elements of %v of %s: %w", HypotheticalElementField, path, crd, err)
	}
	return restore, nil
}
