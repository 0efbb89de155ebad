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

// Package rbac_test checks the privileges of the three managers as they are installed: each
// provider's config/default is built with the project's kustomize (what a release ships), its
// ServiceAccount, ClusterRoles, Roles and bindings are applied to a real API server, and
// SubjectAccessReviews (what `kubectl auth can-i --as` asks) check, row by row, what each manager
// may and may not do (rbac_test.go); each manager's NetworkPolicy is checked against the ports
// its Deployment serves (networkpolicy_test.go).
package rbac_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/testenv"
)

var (
	// env is the API server the managers' RBAC is applied to.
	env *testenv.Environment
	// components are the objects of each provider's config/default, by provider folder.
	components = map[string][]unstructured.Unstructured{}
)

// rbacKinds are the kinds applied to the API server: what the SubjectAccessReviews depend on.
var rbacKinds = map[string]bool{
	"Namespace": true, "ServiceAccount": true, "ClusterRole": true, "ClusterRoleBinding": true,
	"Role": true, "RoleBinding": true,
}

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	root, err := testenv.RepoRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for _, mgr := range managers {
		objs, err := build(root, mgr.dir)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		components[mgr.dir] = objs
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if env, err = testenv.Start(scheme); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping envtest:", err)
		}
	}()
	ctx := context.Background()
	for _, mgr := range managers {
		// Namespaces first: the Roles and ServiceAccounts live in them.
		for _, first := range []bool{true, false} {
			for i := range components[mgr.dir] {
				o := components[mgr.dir][i].DeepCopy()
				if !rbacKinds[o.GetKind()] || (o.GetKind() == "Namespace") != first {
					continue
				}
				if err := env.Client.Create(ctx, o); err != nil {
					fmt.Fprintf(os.Stderr, "applying %s %s of %s: %v\n", o.GetKind(), o.GetName(), mgr.dir, err)
					return 1
				}
			}
		}
	}
	return m.Run()
}

// build runs `kustomize build <dir>/config/default` with the project's kustomize (the one
// hack/release-manifests.sh builds the release with) and decodes its objects.
func build(root, dir string) ([]unstructured.Unstructured, error) {
	ctx := context.Background()
	tool := exec.CommandContext(ctx, filepath.Join(root, "hack", "ensure-tool.sh"), "kustomize")
	tool.Stderr = os.Stderr
	out, err := tool.Output()
	if err != nil {
		return nil, fmt.Errorf("hack/ensure-tool.sh kustomize: %w", err)
	}
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, strings.TrimSpace(string(out)), "build", filepath.Join(root, dir, "config", "default"))
	cmd.Stderr = &stderr
	manifests, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s/config/default: %w\n%s", dir, err, stderr.String())
	}
	var objs []unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(manifests), 4096)
	for {
		var o unstructured.Unstructured
		if err := dec.Decode(&o.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return objs, nil
			}
			return nil, fmt.Errorf("decoding the output of kustomize build %s/config/default: %w", dir, err)
		}
		if len(o.Object) > 0 {
			objs = append(objs, o)
		}
	}
}
