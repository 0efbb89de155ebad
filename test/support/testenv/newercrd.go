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

// NewerAgentSpecFields are spec fields of assisted-service's Agent that a hub runs and that the
// Go types this project pins (github.com/openshift/assisted-service/api of 2024-05) lack, with a
// value for each and its schema:
//   - installation_disk_path: a string (openshift/assisted-service api/v1beta1/agent_types.go,
//     AgentSpec.InstallationDiskPath, "the installation destination disk using either its by-id
//     or by-path value", in the tree of commit 0ee7bc59ee2c);
//   - fencingCredentialsSecretRef: a reference to the Secret of the host's BMC credentials for
//     two-node OpenShift with fencing (assisted-service docs/enhancements, "TNF": "the Agent CRD
//     has a FencingCredentialsSecretRef field referencing a Kubernetes Secret").
//
// A write of a whole Agent from the pinned types (an Update) erases them; a patch of the fields
// the writer owns keeps them.
var NewerAgentSpecFields = map[string]struct {
	Schema map[string]any
	Value  any
}{
	"installation_disk_path": {
		Schema: map[string]any{"type": "string"},
		Value:  "/dev/disk/by-path/pci-0000:00:1f.2-ata-1",
	},
	"fencingCredentialsSecretRef": {
		Schema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}},
		Value:  map[string]any{"name": "bmc-credentials"},
	},
}

// AddNewerAgentSpecFields adds NewerAgentSpecFields to the spec schema of the Agent CRD that the
// API server of c serves, as a newer assisted-service installs it, and waits until an Agent
// written with them keeps them (the API server prunes unknown fields until then).
func AddNewerAgentSpecFields(ctx context.Context, c client.Client, ns string) error {
	schemas := map[string]any{}
	for name, f := range NewerAgentSpecFields {
		schemas[name] = f.Schema
	}
	if err := addSchemaProperties(ctx, c, "agents.agent-install.openshift.io", schemas, "spec"); err != nil {
		return err
	}

	// A probe Agent shows when the new schema is served.
	probe := &unstructured.Unstructured{}
	probe.SetAPIVersion("agent-install.openshift.io/v1beta1")
	probe.SetKind("Agent")
	probe.SetNamespace(ns)
	probe.SetName("newer-crd-probe")
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_ = c.Delete(ctx, probe.DeepCopy())
		p := probe.DeepCopy()
		p.Object["spec"] = NewerAgentSpec(map[string]any{"role": "", "approved": false})
		if err := c.Create(ctx, p); err != nil {
			return false, nil // retried until the probe is accepted
		}
		got := probe.DeepCopy()
		if err := c.Get(ctx, client.ObjectKeyFromObject(p), got); err != nil {
			return false, nil // retried
		}
		defer func() { _ = c.Delete(ctx, got) }()
		return MissingNewerAgentSpecFields(got) == nil, nil
	})
}

// NewerAgentSpec returns spec with the values of NewerAgentSpecFields added.
func NewerAgentSpec(spec map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range spec {
		out[k] = v
	}
	for name, f := range NewerAgentSpecFields {
		out[name] = f.Value
	}
	return out
}

// MissingNewerAgentSpecFields lists the fields of NewerAgentSpecFields that agent (read as
// unstructured) lacks or holds with another value.
func MissingNewerAgentSpecFields(agent *unstructured.Unstructured) []string {
	spec, _, _ := unstructured.NestedMap(agent.Object, "spec")
	var missing []string
	for name, f := range NewerAgentSpecFields {
		if fmt.Sprint(spec[name]) != fmt.Sprint(f.Value) {
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

// AddArbiterAgentsField adds spec.provisionRequirements.arbiterAgents (an integer, minimum 0) to
// the AgentClusterInstall CRD that the API server of c serves, as assisted-service installs it
// from 2025 on (api/hiveextension/v1beta1 ProvisionRequirements.ArbiterAgents: "the minimum
// number of matching approved and ready Agents with the arbiter role required to launch the
// install"), and waits until the API server accepts an AgentClusterInstall with it under strict
// field validation. The pinned Go types, and the CRD generated from them, lack it: without this
// the test API server is a hub that cannot install two-node OpenShift with an arbiter.
func AddArbiterAgentsField(ctx context.Context, c client.Client, ns string) error {
	if err := addSchemaProperties(ctx, c, "agentclusterinstalls.extensions.hive.openshift.io",
		map[string]any{"arbiterAgents": map[string]any{"type": "integer", "minimum": int64(0)}}, "spec", "provisionRequirements"); err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		probe := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "extensions.hive.openshift.io/v1beta1", "kind": "AgentClusterInstall",
			"metadata": map[string]any{"namespace": ns, "name": "newer-crd-probe"},
			"spec": map[string]any{
				"clusterDeploymentRef":  map[string]any{"name": "probe"},
				"networking":            map[string]any{},
				"provisionRequirements": map[string]any{"controlPlaneAgents": int64(2), "arbiterAgents": int64(1)},
			},
		}}
		return c.Create(ctx, probe, client.DryRunAll, client.FieldValidation(metav1.FieldValidationStrict)) == nil, nil
	})
}

// MirrorRegistryRefSchema is the schema of spec.mirrorRegistryRef of the AgentClusterInstall and
// InfraEnv CRDs of assisted-service's per-cluster mirror registry (api/hiveextension/v1beta1
// MirrorRegistryConfigMapReference: name and namespace, both required; the InfraEnv's field has the
// same type; docs/user-guide/cluster-mirror-registry.md). The pinned Go types lack both fields.
var MirrorRegistryRefSchema = map[string]any{
	"type":     "object",
	"required": []any{"name", "namespace"},
	"properties": map[string]any{
		"name":      map[string]any{"type": "string"},
		"namespace": map[string]any{"type": "string"},
	},
}

// MirrorRegistryRefCRDs are the CRDs that have spec.mirrorRegistryRef on a newer hub.
var MirrorRegistryRefCRDs = []string{"agentclusterinstalls.extensions.hive.openshift.io", "infraenvs.agent-install.openshift.io"}

// AddMirrorRegistryRefFields adds spec.mirrorRegistryRef to the AgentClusterInstall and InfraEnv
// CRDs that the API server of c serves, as assisted-service installs them from 2025 on (ACM 2.13),
// and waits until an InfraEnv written with it under strict field validation is accepted. It
// returns a function that puts the CRDs back as they were (an older hub again), for tests that
// share the API server.
func AddMirrorRegistryRefFields(ctx context.Context, c client.Client, ns string) (restore func(context.Context) error, err error) {
	restore, err = saveCRDs(ctx, c, MirrorRegistryRefCRDs...)
	if err != nil {
		return nil, err
	}
	for _, name := range MirrorRegistryRefCRDs {
		if err := addSchemaProperties(ctx, c, name, map[string]any{"mirrorRegistryRef": MirrorRegistryRefSchema}, "spec"); err != nil {
			return nil, err
		}
	}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		probe := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "agent-install.openshift.io/v1beta1", "kind": "InfraEnv",
			"metadata": map[string]any{"namespace": ns, "name": "newer-crd-probe"},
			"spec": map[string]any{
				"pullSecretRef":     map[string]any{"name": "probe"},
				"mirrorRegistryRef": map[string]any{"name": "probe", "namespace": ns},
			},
		}}
		if served := c.Create(ctx, probe, client.DryRunAll, client.FieldValidation(metav1.FieldValidationStrict)) == nil; !served {
			return false, nil // retried until the API server serves the field
		}
		aci := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "extensions.hive.openshift.io/v1beta1", "kind": "AgentClusterInstall",
			"metadata": map[string]any{"namespace": ns, "name": "newer-crd-probe"},
			"spec": map[string]any{
				"clusterDeploymentRef":  map[string]any{"name": "probe"},
				"networking":            map[string]any{},
				"provisionRequirements": map[string]any{"controlPlaneAgents": int64(1)},
				"mirrorRegistryRef":     map[string]any{"name": "probe", "namespace": ns},
			},
		}}
		return c.Create(ctx, aci, client.DryRunAll, client.FieldValidation(metav1.FieldValidationStrict)) == nil, nil
	})
	if err != nil {
		return nil, fmt.Errorf("waiting for the API server to serve spec.mirrorRegistryRef: %w", err)
	}
	return restore, nil
}

// saveCRDs returns a function that puts the versions (schemas) of the CRDs named back as they
// are now: an older hub again, for tests that share the API server.
func saveCRDs(ctx context.Context, c client.Client, names ...string) (restore func(context.Context) error, err error) {
	saved := map[string]*unstructured.Unstructured{}
	for _, name := range names {
		crd := &unstructured.Unstructured{}
		crd.SetAPIVersion("apiextensions.k8s.io/v1")
		crd.SetKind("CustomResourceDefinition")
		if err := c.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
			return nil, fmt.Errorf("getting the CRD %s: %w", name, err)
		}
		saved[name] = crd
	}
	return func(ctx context.Context) error {
		for name, old := range saved {
			crd := &unstructured.Unstructured{}
			crd.SetAPIVersion("apiextensions.k8s.io/v1")
			crd.SetKind("CustomResourceDefinition")
			if err := c.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
				return fmt.Errorf("getting the CRD %s: %w", name, err)
			}
			versions, _, _ := unstructured.NestedSlice(old.Object, "spec", "versions")
			if err := unstructured.SetNestedSlice(crd.Object, versions, "spec", "versions"); err != nil {
				return err
			}
			if err := c.Update(ctx, crd); err != nil {
				return fmt.Errorf("restoring the CRD %s: %w", name, err)
			}
		}
		return nil
	}, nil
}

// HypotheticalElementField is a field of the elements of an array of objects that no
// assisted-service release has: the newest types upstream (openshift/assisted-service
// api/hiveextension/v1beta1/agentclusterinstall_types.go, the version with
// ProvisionRequirements.ArbiterAgents and spec.loadBalancer; api/v1beta1/infraenv_types.go, the
// version with spec.mirrorRegistryRef and spec.imageType) still have ClusterNetworkEntry cidr and
// hostPrefix alone, MachineNetworkEntry cidr alone, ManifestsConfigMapReference name alone and
// KernelArgument operation and value alone. It stands for the field a newer CRD may add to such an
// element, which the pinned Go types would lack: a JSON merge patch of a changed array sends the
// elements as those types encode them, without it.
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
