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
	"crypto/ed25519"
	"crypto/rand"
	"net/http"
	"strings"
	"testing"
	"time"

	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/testenv"
)

// TestServiceBuildsADiscoveryImage starts the real assisted-service against an API server with its
// own CRDs, and checks what only the real one shows: its controllers, under its own RBAC and
// in-cluster credentials, give an InfraEnv its discovery ISO URL and boot artifacts from its
// database; after a restart that keeps the database, the InfraEnv's iPXE script (served by the
// service, authorised by the InfraEnv's token) is still there.
func TestServiceBuildsADiscoveryImage(t *testing.T) {
	crds, err := CRDDir()
	if err != nil {
		t.Fatal(err)
	}
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, aiv1beta1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	env, err := testenv.StartWithOptions(testenv.Options{Scheme: scheme, Workload: true, ExtraCRDPaths: []string{crds}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	ctx := t.Context()
	svc, err := Start(ctx, Options{
		KubeConfig:    env.Config,
		ReleaseImages: []ReleaseImage{{OpenshiftVersion: "4.14", CPUArchitecture: "x86_64", URL: "quay.io/openshift-release-dev/ocp-release:4.14.0-x86_64", Version: "4.14.0"}},
		Log:           t.Output(),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := svc.Stop(); err != nil {
			t.Error(err)
		}
	})
	if !strings.HasPrefix(svc.Version, "v1.0.10-0.") {
		t.Errorf("Version = %q, want the pinned root pseudo-version", svc.Version)
	}

	c := env.Client
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "tenant-"}}
	if err := c.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	pullSecret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "pull-secret"},
		Type:       corev1.SecretTypeDockerConfigJson,
		Data:       map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{"quay.io":{"auth":"bGFiOmxhYg=="}}}`)},
	}
	if err := c.Create(ctx, pullSecret); err != nil {
		t.Fatal(err)
	}
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	sshPub, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	ie := &aiv1beta1.InfraEnv{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "hosts"},
		Spec: aiv1beta1.InfraEnvSpec{
			PullSecretRef:    &corev1.LocalObjectReference{Name: pullSecret.Name},
			SSHAuthorizedKey: strings.TrimSpace(string(ssh.MarshalAuthorizedKey(sshPub))),
			CpuArchitecture:  "x86_64",
		},
	}
	if err := c.Create(ctx, ie); err != nil {
		t.Fatal(err)
	}
	ipxe := waitFor(t, time.Minute, func() (string, bool) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(ie), ie); err != nil {
			t.Fatal(err)
		}
		return ie.Status.BootArtifacts.IpxeScriptURL, ie.Status.ISODownloadURL != "" && ie.Status.BootArtifacts.IpxeScriptURL != ""
	})
	if !strings.HasPrefix(ie.Status.ISODownloadURL, svc.ImageServiceURL+"/") {
		t.Errorf("isoDownloadURL %q is not the image service's (%s)", ie.Status.ISODownloadURL, svc.ImageServiceURL)
	}
	if !strings.HasPrefix(ipxe, svc.URL+"/") {
		t.Fatalf("the iPXE script URL %q is not the service's (%s)", ipxe, svc.URL)
	}
	fetch := func() int {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, ipxe, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := svc.HTTPClient().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	if code := fetch(); code != http.StatusOK {
		t.Fatalf("GET the iPXE script: %d, want 200", code)
	}
	if err := svc.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if code := fetch(); code != http.StatusOK {
		t.Fatalf("after a restart with the database kept, GET the iPXE script: %d, want 200", code)
	}
}

// waitFor polls f until it says done or the timeout passes (then the test fails).
func waitFor[T any](t *testing.T, timeout time.Duration, f func() (T, bool)) T {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		v, done := f()
		if done {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("not done within %s (last: %v)", timeout, v)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestOneServiceAMachine: while a service holds the machine's lock, another waits (and gives up
// with its context); once it is released, the other gets it.
func TestOneServiceAMachine(t *testing.T) {
	first, err := lockMachine(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	if second, err := lockMachine(ctx); err == nil {
		_ = second.Close()
		t.Fatal("a second service got the machine while the first held it")
	} else if !strings.Contains(err.Error(), "waiting for another lab's assisted-service") {
		t.Errorf("the wait says %q, want what it waits for", err)
	}
	_ = first.Close()
	second, err := lockMachine(t.Context())
	if err != nil {
		t.Fatalf("after the first released it: %v", err)
	}
	_ = second.Close()
}
