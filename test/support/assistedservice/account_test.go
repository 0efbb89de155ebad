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

package assistedservice

import (
	"path/filepath"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	rest "k8s.io/client-go/rest"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/testenv"
)

// TestSetUpAccountGivesTheServiceItsRBAC: the account's token authenticates as the service
// account, which may do what its manifests let it (list Agents everywhere, hold a Lease in its
// namespace) and not more (delete Namespaces); setting up again changes nothing.
func TestSetUpAccountGivesTheServiceItsRBAC(t *testing.T) {
	bins, err := Dir()
	if err != nil {
		t.Fatal(err)
	}
	env, err := testenv.StartWithOptions(testenv.Options{Scheme: clientgoscheme.Scheme, Workload: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	ctx := t.Context()
	rbac := filepath.Join(bins, "rbac")
	if _, err := setUpAccount(ctx, env.Config, "hub", rbac); err != nil {
		t.Fatal(err)
	}
	account, err := setUpAccount(ctx, env.Config, "hub", rbac)
	if err != nil {
		t.Fatalf("setting up a second time: %v", err)
	}
	cfg := rest.AnonymousClientConfig(env.Config)
	cfg.BearerToken = account.token
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	review, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := review.Status.UserInfo.Username, "system:serviceaccount:hub:"+ServiceAccountName; got != want {
		t.Errorf("the token is %q's, want %q's", got, want)
	}
	can := func(verb, group, resource, namespace string) bool {
		t.Helper()
		r, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, selfAccess(verb, group, resource, namespace), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return r.Status.Allowed
	}
	if !can("list", "agent-install.openshift.io", "agents", "") {
		t.Error("the service may not list Agents")
	}
	if !can("create", "coordination.k8s.io", "leases", "hub") {
		t.Error("the service may not hold its Lease in its namespace")
	}
	if can("delete", "", "namespaces", "") {
		t.Error("the service may delete namespaces: more than its manifests give")
	}
}

func selfAccess(verb, group, resource, namespace string) *authorizationv1.SelfSubjectAccessReview {
	return &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: verb, Group: group, Resource: resource, Namespace: namespace},
	}}
}
