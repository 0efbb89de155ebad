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
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// NewestCRDDir is the folder, relative to the repository root, of the newest CRDs of
// assisted-service and Hive: copied verbatim by hack/newest-crds.sh from their repositories at
// NewestAssistedServiceCommit and NewestHiveCommit (its README.md says from where, file by file).
// They are what a hub that runs those releases serves, with the fields the pinned Go types (and
// the CRDs of ThirdPartyCRDDir, generated from them) lack.
const NewestCRDDir = "test/support/testenv/crds-newest"

// NewestCRDProjects are the folders of NewestCRDDir. Each replaces the folder of the same name of
// ThirdPartyCRDDir, file for file: the same kinds (of Hive's, the two the providers use).
var NewestCRDProjects = []string{"assisted-service", "hive"}

// newestPaths returns paths (absolute) with those inside ThirdPartyCRDDir/<project>, for each of
// NewestCRDProjects, moved to NewestCRDDir/<project>: the same files, in their newest version.
func newestPaths(root string, paths []string) []string {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		for _, project := range NewestCRDProjects {
			generated := filepath.Join(root, ThirdPartyCRDDir, project)
			if p == generated || strings.HasPrefix(p, generated+string(filepath.Separator)) {
				p = filepath.Join(root, NewestCRDDir, project) + strings.TrimPrefix(p, generated)
				break
			}
		}
		out = append(out, p)
	}
	return out
}

// NewestCRDs reads the CRDs of NewestCRDDir below the repository root root.
func NewestCRDs(root string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, project := range NewestCRDProjects {
		files, err := filepath.Glob(filepath.Join(root, NewestCRDDir, project, "*.yaml"))
		if err != nil {
			return nil, err
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("no CRDs in %s", filepath.Join(NewestCRDDir, project))
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				return nil, err
			}
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := yaml.UnmarshalStrict(data, crd); err != nil {
				return nil, fmt.Errorf("reading %s: %w", f, err)
			}
			crds = append(crds, crd)
		}
	}
	return crds, nil
}

var newestCache struct {
	once sync.Once
	crds map[string]*apiextensionsv1.CustomResourceDefinition
	err  error
}

// NewestCRD returns the newest CRD (NewestCRDDir) named name (<plural>.<group>).
func NewestCRD(name string) (*apiextensionsv1.CustomResourceDefinition, error) {
	newestCache.once.Do(func() {
		root, err := RepoRoot()
		if err != nil {
			newestCache.err = err
			return
		}
		crds, err := NewestCRDs(root)
		if err != nil {
			newestCache.err = err
			return
		}
		newestCache.crds = map[string]*apiextensionsv1.CustomResourceDefinition{}
		for _, crd := range crds {
			newestCache.crds[crd.Name] = crd
		}
	})
	if newestCache.err != nil {
		return nil, newestCache.err
	}
	crd, ok := newestCache.crds[name]
	if !ok {
		return nil, fmt.Errorf("no CRD %s in %s", name, NewestCRDDir)
	}
	return crd.DeepCopy(), nil
}

// ValidateNewest checks value against the field at path (below the root of the schema, for
// example "spec", "mirrorRegistryRef"; "[]" steps into the items of an array; no path: value is a
// whole object) of the storage version of the newest CRD named crd, as the API server checks a
// write under strict field validation: the field exists, and value has its type, passes its
// OpenAPI validations (required properties, enums, bounds, formats, patterns; not its CEL rules)
// and holds no field the schema lacks. A nil value checks only that the field exists (a write
// that removes it). It is what tells, without an API server, that what the providers write in
// fields the pinned Go types lack is what the newest hub takes: a refresh of NewestCRDDir that
// renames or retypes such a field fails the tests that call it.
func ValidateNewest(crd string, value any, path ...string) error {
	c, err := NewestCRD(crd)
	if err != nil {
		return err
	}
	return validateAgainst(c, value, path...)
}

// validateAgainst is ValidateNewest with the CRD c.
func validateAgainst(c *apiextensionsv1.CustomResourceDefinition, value any, path ...string) error {
	crd := c.Name
	var version *apiextensionsv1.CustomResourceDefinitionVersion
	for i := range c.Spec.Versions {
		if c.Spec.Versions[i].Storage {
			version = &c.Spec.Versions[i]
		}
	}
	if version == nil || version.Schema == nil || version.Schema.OpenAPIV3Schema == nil {
		return fmt.Errorf("the CRD %s has no schema of its storage version", crd)
	}
	props := version.Schema.OpenAPIV3Schema
	at := field.NewPath(crd)
	for _, p := range path {
		switch p {
		case "[]":
			if props.Items == nil || props.Items.Schema == nil {
				return fmt.Errorf("%s of the CRD %s is not an array", at, crd)
			}
			props, at = props.Items.Schema, at.Index(0)
		default:
			next, ok := props.Properties[p]
			if !ok {
				return fmt.Errorf("the CRD %s (%s) has no field %s", crd, version.Name, at.Child(p))
			}
			props, at = &next, at.Child(p)
		}
	}
	if value == nil {
		return nil
	}
	value, err := asDecoded(value)
	if err != nil {
		return fmt.Errorf("encoding the value of %s: %w", at, err)
	}

	internal := &apiextensionsinternal.JSONSchemaProps{}
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(props, internal, nil); err != nil {
		return fmt.Errorf("converting the schema of %s: %w", at, err)
	}
	var errs field.ErrorList
	structural, err := structuralschema.NewStructural(internal)
	if err != nil {
		return fmt.Errorf("the schema of %s is not structural: %w", at, err)
	}
	// The paths of unknown fields start with the value's own path (a parent path also makes a
	// field named kind, apiVersion or metadata of a value below the root unknown, as it is to the
	// API server).
	for _, unknown := range pruning.PruneWithOptions(runtime.DeepCopyJSONValue(value), structural, len(path) == 0,
		structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true, ParentPath: []string{at.String()}}) {
		errs = append(errs, field.Forbidden(field.NewPath(unknown), "unknown field: the CRD has no such field"))
	}
	validator, _, err := apiservervalidation.NewSchemaValidator(internal)
	if err != nil {
		return fmt.Errorf("the schema of %s: %w", at, err)
	}
	errs = append(errs, apiservervalidation.ValidateCustomResource(at, value, validator)...)
	return errs.ToAggregate()
}

// asDecoded returns v as the API server decodes it from JSON (integers as int64, structs as
// maps), so that a value as the providers build it validates as the one the API server receives.
func asDecoded(v any) (any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	if err := utiljson.Unmarshal(data, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// newestProbes returns, by CRD name, an object in the namespace ns that the newest CRD takes and
// the CRD of ThirdPartyCRDDir refuses under strict field validation (it has a field only the
// newest has): the API server serves the newest CRD once it takes the object. The CRDs not named
// here (ClusterImageSet, NMStateConfig, ...) have no such field the tests use.
func newestProbes(ns string) map[string]map[string]any {
	meta := map[string]any{"namespace": ns, "name": "newest-crd-probe"}
	return map[string]map[string]any{
		"agents.agent-install.openshift.io": {
			"apiVersion": "agent-install.openshift.io/v1beta1", "kind": "Agent", "metadata": meta,
			"spec": NewerAgentSpec(map[string]any{"role": "", "approved": false}),
		},
		"infraenvs.agent-install.openshift.io": {
			"apiVersion": "agent-install.openshift.io/v1beta1", "kind": "InfraEnv", "metadata": meta,
			"spec": map[string]any{
				"pullSecretRef":     map[string]any{"name": "probe"},
				"mirrorRegistryRef": map[string]any{"name": "probe", "namespace": ns},
				"imageType":         "full-iso",
			},
		},
		"agentclusterinstalls.extensions.hive.openshift.io": {
			"apiVersion": "extensions.hive.openshift.io/v1beta1", "kind": "AgentClusterInstall", "metadata": meta,
			"spec": map[string]any{
				"clusterDeploymentRef":  map[string]any{"name": "probe"},
				"networking":            map[string]any{},
				"provisionRequirements": map[string]any{"controlPlaneAgents": int64(2), "arbiterAgents": int64(1)},
				"mirrorRegistryRef":     map[string]any{"name": "probe", "namespace": ns},
			},
		},
		"clusterdeployments.hive.openshift.io": {
			"apiVersion": "hive.openshift.io/v1", "kind": "ClusterDeployment", "metadata": meta,
			"spec": map[string]any{
				"baseDomain":  "example.com",
				"clusterName": "probe",
				"platform":    map[string]any{"agentBareMetal": map[string]any{"agentSelector": map[string]any{}}},
				"clusterMetadata": map[string]any{
					"clusterID": "probe", "infraID": "probe",
					"adminKubeconfigSecretRef": map[string]any{"name": "probe"},
					"metadataJSONSecretRef":    map[string]any{"name": "probe"},
				},
			},
		},
	}
}

// probe creates obj as a dry run under strict field validation: nil when the API server takes it.
func probe(ctx context.Context, c client.Client, obj map[string]any) error {
	u := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(obj)}
	return c.Create(ctx, u, client.DryRunAll, client.FieldValidation(metav1.FieldValidationStrict))
}

// UseNewestCRDs makes the API server of c a newer hub: it replaces the spec of each CRD of
// assisted-service and Hive that it serves with the newest one's (NewestCRDs), an update of the
// live CRD as an upgrade of the hub's operators does, and waits until the API server serves them
// (it takes, as a dry run under strict field validation, an object in the namespace ns, which
// must exist, with fields only the newest CRDs have). Objects stored before keep their fields.
// It returns a function that puts the CRDs back as they were and waits until the API server
// serves them again: an older hub again, for tests that share the API server.
func UseNewestCRDs(ctx context.Context, c client.Client, ns string) (restore func(context.Context) error, err error) {
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	newest, err := NewestCRDs(root)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, crd := range newest {
		live := &metav1.PartialObjectMetadata{}
		live.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
		err := c.Get(ctx, client.ObjectKey{Name: crd.Name}, live)
		switch {
		case apierrors.IsNotFound(err):
			continue // not served here: a test API server with a few kinds
		case err != nil:
			return nil, fmt.Errorf("getting the CRD %s: %w", crd.Name, err)
		}
		names = append(names, crd.Name)
	}
	probes := newestProbes(ns)
	for name := range probes {
		if !slices.Contains(names, name) {
			delete(probes, name)
		}
	}
	// What the API server took before: what it takes again once restored.
	before := map[string]bool{}
	for name, p := range probes {
		before[name] = probe(ctx, c, p) == nil
	}
	restoreSpecs, err := saveCRDs(ctx, c, names...)
	if err != nil {
		return nil, err
	}
	for _, crd := range newest {
		if !slices.Contains(names, crd.Name) {
			continue
		}
		spec, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&crd.Spec)
		if err != nil {
			return nil, err
		}
		if err := setCRDSpec(ctx, c, crd.Name, spec); err != nil {
			return nil, err
		}
	}
	if err := waitForProbes(ctx, c, probes, func(string) bool { return true }); err != nil {
		return nil, fmt.Errorf("waiting for the API server to serve the newest CRDs: %w", err)
	}
	return func(ctx context.Context) error {
		if err := restoreSpecs(ctx); err != nil {
			return err
		}
		if err := waitForProbes(ctx, c, probes, func(name string) bool { return before[name] }); err != nil {
			return fmt.Errorf("waiting for the API server to serve the CRDs it served before the newest: %w", err)
		}
		return nil
	}, nil
}

// waitForProbes waits, for at most a minute, until the API server takes each of probes (by CRD
// name) exactly when accept says it should.
func waitForProbes(ctx context.Context, c client.Client, probes map[string]map[string]any, accept func(crd string) bool) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		last = nil
		for name, p := range probes {
			err := probe(ctx, c, p)
			switch {
			case accept(name) && err != nil:
				last = fmt.Errorf("the probe of %s is refused: %w", name, err)
			case !accept(name) && err == nil:
				last = fmt.Errorf("the probe of %s is still taken", name)
			}
		}
		return last == nil, nil
	})
	if err != nil && last != nil {
		return errors.Join(err, last)
	}
	return err
}

// setCRDSpec replaces the spec of the live CRD named name with spec (unstructured).
func setCRDSpec(ctx context.Context, c client.Client, name string, spec map[string]any) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		crd := &unstructured.Unstructured{}
		crd.SetAPIVersion("apiextensions.k8s.io/v1")
		crd.SetKind("CustomResourceDefinition")
		if err := c.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
			return err
		}
		crd.Object["spec"] = runtime.DeepCopyJSON(spec)
		return c.Update(ctx, crd)
	})
	if err != nil {
		return fmt.Errorf("updating the CRD %s: %w", name, err)
	}
	return nil
}
