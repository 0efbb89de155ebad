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

package controllers_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/controlplane/internal/release"
	setup "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/controlplane/setup"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/manager"
	capoascheme "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/scheme"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/cvo"
	simrelease "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/release"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/testenv"
)

var (
	// mgmt is the management cluster the provider runs against.
	mgmt *testenv.Environment
	// workload plays the installed OpenShift cluster: the admin kubeconfig the simulated
	// assisted-service hands out points at it, and it serves the ClusterVersion CRD.
	workload *testenv.Environment
	// workloadKubeconfig is an admin kubeconfig of workload.
	workloadKubeconfig []byte
	// releaseRepo is the repository, in an in-process registry, of the release images the tests use.
	releaseRepo string
	// mirror is a registry as a disconnected site's mirror is (HTTPS with its own CA, token
	// authentication for mirrorUser and mirrorPassword) holding the release 4.17.3 in
	// <host>/ocp-release.
	mirror *simrelease.Registry
	// mirrorDigest is the digest of the mirror's release.
	mirrorDigest v1.Hash
)

const (
	mirrorUser     = "mirror-reader"
	mirrorPassword = "s3cr3t-mirror-password"
)

// Releases the in-process registry serves, and the Kubernetes version each carries.
var releases = map[string]string{"4.17.3": "1.30.4", "4.18.0": "1.31.2", "4.19.0": "1.32.1", "4.20.0": "1.33.2"}

// releaseDigests are the digests of the releases' x86_64 images, by version.
var releaseDigests = map[string]string{}

// pinnedRelease is the x86_64 release image of version in releaseRepo, pinned by digest, as
// ClusterImageSets hold it.
func pinnedRelease(version string) string { return releaseRepo + "@" + releaseDigests[version] }

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if testenv.Fuzzing() {
		// Fuzz targets use fake clients: no API server or registry for each fuzz worker to start.
		return m.Run()
	}
	// Controller logs go to a file (CAPOA_TEST_LOG, default: discarded) to keep test output readable.
	logOut := io.Discard
	if p := os.Getenv("CAPOA_TEST_LOG"); p != "" {
		f, err := os.Create(p)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer func() { _ = f.Close() }()
		logOut = f
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(logOut), zap.UseDevMode(true)))
	scheme, err := capoascheme.New(bootstrapv1.AddToScheme, controlplanev1.AddToScheme)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	reg := simrelease.StartRegistry()
	defer reg.Close()
	releaseRepo = reg.Host + "/ocp-release"
	for version, kube := range releases {
		img, err := reg.PushRelease(release.Image(releaseRepo, version, "x86_64"), kube)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		digest, err := img.Digest()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		releaseDigests[version] = digest.String()
	}

	if mirror, err = simrelease.StartSecureRegistry(simrelease.SecureOptions{Username: mirrorUser, Password: mirrorPassword}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer mirror.Close()
	mirrored, err := mirror.PushRelease(release.Image(mirror.Host+"/ocp-release", "4.17.3", "x86_64"), releases["4.17.3"])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if mirrorDigest, err = mirrored.Digest(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}

	if mgmt, err = testenv.Start(scheme); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = mgmt.Stop() }()
	root, err := testenv.RepoRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if workload, err = testenv.StartWorkload(scheme, filepath.Join(root, cvo.CRDFile)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = workload.Stop() }()
	if workloadKubeconfig, err = kubeconfigOf(workload); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}

	ctx, cancel := context.WithCancel(ctrl.SetupSignalHandler())
	defer cancel()
	// As in production: the kubeconfig Secrets are read from the cache of cluster-labelled Secrets.
	// (testenv's manager options run it in-process, with the lab's ClusterCache retry.)
	opts := &manager.Options{Concurrency: 2, CacheByObject: setup.NewManagerOptions().CacheByObject}
	mgr, err := mgmt.NewManager(opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// The same entry point as main.go and the lab.
	if err := setup.Setup(ctx, mgr, opts, setup.Options{AllowedReleaseRegistries: []string{reg.Host, mirror.Host, unreachableRegistry}}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return testenv.RunWithManager(ctx, m, mgr, nil)
}

// kubeconfigOf returns an admin kubeconfig for an environment, like the one assisted-service
// writes for an installed cluster.
func kubeconfigOf(e *testenv.Environment) ([]byte, error) {
	host := e.Config.Host
	if !strings.HasPrefix(host, "https://") && !strings.HasPrefix(host, "http://") {
		host = "https://" + host
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["workload"] = &clientcmdapi.Cluster{Server: host, CertificateAuthorityData: e.Config.CAData}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{
		ClientCertificateData: e.Config.CertData, ClientKeyData: e.Config.KeyData, Token: e.Config.BearerToken,
	}
	cfg.Contexts["admin"] = &clientcmdapi.Context{Cluster: "workload", AuthInfo: "admin"}
	cfg.CurrentContext = "admin"
	return clientcmd.Write(*cfg)
}
