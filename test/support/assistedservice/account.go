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
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	rest "k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

// serviceAccount is what the service's pod gets from its service account: the API server's
// address (the kubernetes Service's environment), a token and the API server's CA.
type serviceAccount struct {
	host, port string
	token      string
	caData     []byte
}

// setUpAccount creates the service's namespace and service account, its RBAC from its manifests
// at the pinned commit (config/rbac/role.yaml, a ClusterRole bound to the account as
// role_binding.yaml binds it, and leader_election_role.yaml, a Role in its namespace), and asks a
// token for the account, as the kubelet does for its pod.
func setUpAccount(ctx context.Context, admin *rest.Config, namespace, rbacDir string) (*serviceAccount, error) {
	cs, err := kubernetes.NewForConfig(admin)
	if err != nil {
		return nil, err
	}
	create := func(err error) error {
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	}
	if err := create(ignoreResult(cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}))); err != nil {
		return nil, err
	}
	if err := create(ignoreResult(cs.CoreV1().ServiceAccounts(namespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: ServiceAccountName}}, metav1.CreateOptions{}))); err != nil {
		return nil, err
	}
	subject := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: ServiceAccountName, Namespace: namespace}}
	clusterRole := &rbacv1.ClusterRole{}
	if err := readManifest(filepath.Join(rbacDir, "role.yaml"), clusterRole); err != nil {
		return nil, err
	}
	if err := create(ignoreResult(cs.RbacV1().ClusterRoles().Create(ctx, clusterRole, metav1.CreateOptions{}))); err != nil {
		return nil, err
	}
	if err := create(ignoreResult(cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "assisted-service-manager-rolebinding-" + namespace},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: clusterRole.Name},
		Subjects:   subject,
	}, metav1.CreateOptions{}))); err != nil {
		return nil, err
	}
	role := &rbacv1.Role{}
	if err := readManifest(filepath.Join(rbacDir, "leader_election_role.yaml"), role); err != nil {
		return nil, err
	}
	if err := create(ignoreResult(cs.RbacV1().Roles(namespace).Create(ctx, role, metav1.CreateOptions{}))); err != nil {
		return nil, err
	}
	if err := create(ignoreResult(cs.RbacV1().RoleBindings(namespace).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects:   subject,
	}, metav1.CreateOptions{}))); err != nil {
		return nil, err
	}
	tr, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, ServiceAccountName, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](48 * 3600)},
	}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("requesting a token for the service account: %w", err)
	}
	u, err := url.Parse(admin.Host)
	if err != nil {
		return nil, err
	}
	host, port, err := net.SplitHostPort(u.Host)
	if err != nil {
		return nil, fmt.Errorf("the API server's address %q: %w", admin.Host, err)
	}
	return &serviceAccount{host: host, port: port, token: tr.Status.Token, caData: admin.CAData}, nil
}

// readManifest reads one object of a YAML file.
func readManifest(path string, into any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := yaml.Unmarshal(b, into); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

func ignoreResult[T any](_ T, err error) error { return err }

// writeFiles writes what the kubelet mounts at /var/run/secrets/kubernetes.io/serviceaccount:
// namespace (no newline), token and ca.crt.
func (a *serviceAccount) writeFiles(dir, namespace string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for name, b := range map[string][]byte{"namespace": []byte(namespace), "token": []byte(a.token), "ca.crt": a.caData} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			return err
		}
	}
	return nil
}
