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

// Package testenv is the test harness shared by every module: a real kube-apiserver and etcd
// (envtest) with the CRDs of this repository's providers and of the projects they work with
// (Cluster API, CAPM3, BareMetalHost, assisted-service and Hive) installed.
//
// The binaries come from KUBEBUILDER_ASSETS; when it is unset, hack/ensure-envtest.sh builds
// them from source (once, cached outside the repository) and prints their folder.
package testenv

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	runtimev1 "sigs.k8s.io/cluster-api/api/runtime/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/ports"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/procstat"
)

// ThirdPartyCRDDir is the folder, relative to the repository root, of the CRDs generated with
// controller-gen from the pinned third-party API modules (see `make manifests`).
const ThirdPartyCRDDir = "test/support/testenv/crds"

// ProviderCRDDirs are the folders, relative to the repository root, of this repository's CRDs.
var ProviderCRDDirs = []string{
	"infrastructure/config/crd/bases",
	"bootstrap/config/crd/bases",
	"controlplane/config/crd/bases",
}

// ProviderAdmissionDirs are the folders, relative to the repository root, of this repository's
// admission policies (ValidatingAdmissionPolicies and their bindings, evaluated by the API server).
var ProviderAdmissionDirs = []string{"infrastructure/config/admission"}

// RepoRoot returns the repository root: the nearest folder above the working directory that
// holds go.work.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.work found above the working directory: run the tests inside the repository")
		}
		dir = parent
	}
}

// CRDPaths returns every CRD folder the harness installs: the providers' and the third parties'.
func CRDPaths(root string) ([]string, error) {
	paths := make([]string, 0, len(ProviderCRDDirs)+8)
	for _, d := range ProviderCRDDirs {
		paths = append(paths, filepath.Join(root, d))
	}
	entries, err := os.ReadDir(filepath.Join(root, ThirdPartyCRDDir))
	if err != nil {
		return nil, fmt.Errorf("reading the third-party CRDs (run `make manifests`): %w", err)
	}
	for _, e := range entries {
		if e.IsDir() {
			paths = append(paths, filepath.Join(root, ThirdPartyCRDDir, e.Name()))
		}
	}
	return paths, nil
}

// AssetsDir returns the folder holding kube-apiserver and etcd: KUBEBUILDER_ASSETS when set,
// else the folder hack/ensure-envtest.sh builds them into.
func AssetsDir(root string) (string, error) {
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		return dir, nil
	}
	cmd := exec.CommandContext(context.Background(), "bash", filepath.Join(root, "hack", "ensure-envtest.sh"))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("building the envtest binaries with hack/ensure-envtest.sh: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// Environment is a running API server with the CRDs installed.
type Environment struct {
	env *envtest.Environment
	// Config reaches the API server as an administrator.
	Config *rest.Config
	// Client is an uncached client with the scheme the environment was started with.
	Client client.Client
	// Scheme is the scheme of Client.
	Scheme *runtime.Scheme
	// ProfileSocket is the unix socket on which the API server serves /debug/pprof without
	// authentication, when ProfileDirEnv was set; empty otherwise.
	ProfileSocket string

	// nsController is the kube-controller-manager that DeleteNamespace starts, once (nsMu).
	nsMu         sync.Mutex
	nsController *ControllerManager
}

// ProfileDirEnv names the environment variable that, when set to a folder, gives every API
// server a test starts a profiling socket there (kube-apiserver's --debug-socket-path,
// apiserver-<test process>-<n>.sock): what a benchmark or a slow suite reads to see where the API
// servers' CPU goes, which in the lab is most of it.
const ProfileDirEnv = "CAPOA_APISERVER_PROFILE_DIR"

// apiServers numbers the API servers of this process, for their profiling sockets.
var apiServers atomic.Int64

// Options configure an Environment.
type Options struct {
	// Scheme is the scheme of the environment's client; it must hold every kind the tests use.
	Scheme *runtime.Scheme
	// WebhookManifestDirs are folders, relative to the repository root, of webhook configuration
	// manifests (for example "bootstrap/config/webhook") to install. A manager serves them when
	// started with WebhookServerOptions.
	WebhookManifestDirs []string
	// ExtraCRDPaths are further CRD files or folders to install.
	ExtraCRDPaths []string
	// CRDPaths, when set, are the CRD files or folders, relative to the repository root, installed
	// instead of every provider's and third party's (ExtraCRDPaths are added, the admission
	// policies installed as with those): what a package that tests a few kinds needs. Each CRD
	// costs an API server CPU when it is installed, by its size (the 46 of a hub, 1.5 MB, about
	// 4 s of the 8.3 s of CPU an API server takes to start and stop on 2 cores; 4.5 s without).
	CRDPaths []string
	// CRDs, when set, are installed instead of the project's and the third-party CRDs (and
	// ExtraCRDPaths): an API server as an older release left it, for upgrade tests.
	CRDs []*apiextensionsv1.CustomResourceDefinition
	// APIServerArgs are further kube-apiserver flags (without the leading dashes), e.g. an
	// audit log for a benchmark that counts every client's requests.
	APIServerArgs map[string]string
	// Workload makes the API server a workload cluster's: it gets ExtraCRDPaths only, none of the
	// management cluster's CRDs (installing them cost each API server about 5 s of CPU).
	Workload bool
	// NewestCRDs installs the newest CRDs of assisted-service and Hive (NewestCRDDir, copied from
	// their repositories) in place of those of ThirdPartyCRDDir, generated from the pinned Go
	// modules: a hub whose assisted-service and Hive are the newest their repositories publish,
	// from its start (UseNewestCRDs makes a running API server one). With CRDPaths, the paths
	// inside ThirdPartyCRDDir's assisted-service and hive folders are replaced, file for file.
	// Not with CRDs or Workload.
	NewestCRDs bool
}

// Start starts an API server and etcd, installs the CRDs and waits until they are served.
func Start(scheme *runtime.Scheme, extraCRDPaths ...string) (*Environment, error) {
	return StartWithOptions(Options{Scheme: scheme, ExtraCRDPaths: extraCRDPaths})
}

// StartWorkload starts the API server of a workload cluster: Kubernetes' own APIs and the CRDs
// of extraCRDPaths (an OpenShift cluster's that a test needs), no management cluster's.
func StartWorkload(scheme *runtime.Scheme, extraCRDPaths ...string) (*Environment, error) {
	return StartWithOptions(Options{Scheme: scheme, ExtraCRDPaths: extraCRDPaths, Workload: true})
}

// StartWithOptions starts an API server and etcd, installs the CRDs and the webhook
// configurations, and waits until the CRDs are served.
func StartWithOptions(o Options) (*Environment, error) {
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	// Cluster API's runtime API, which SetupCAPIControllers needs, goes into the scheme now,
	// before any manager of the environment decodes with it: a scheme is not safe to write while
	// it is read (a watch decoding on another goroutine crashed the test binary with "concurrent
	// map read and map write" when a later test's SetupCAPIControllers added it).
	if o.Scheme != nil && !o.Workload {
		if err := runtimev1.AddToScheme(o.Scheme); err != nil {
			return nil, fmt.Errorf("adding Cluster API's runtime API to the scheme: %w", err)
		}
	}
	assets, err := AssetsDir(root)
	if err != nil {
		return nil, err
	}
	crdPaths := o.ExtraCRDPaths
	switch {
	case o.Workload:
	case o.CRDPaths != nil:
		crdPaths = make([]string, 0, len(o.CRDPaths)+len(o.ExtraCRDPaths))
		for _, p := range o.CRDPaths {
			crdPaths = append(crdPaths, filepath.Join(root, p))
		}
		crdPaths = append(crdPaths, o.ExtraCRDPaths...)
	default:
		hub, err := CRDPaths(root)
		if err != nil {
			return nil, err
		}
		crdPaths = append(hub, o.ExtraCRDPaths...)
	}
	if o.NewestCRDs {
		if o.CRDs != nil || o.Workload {
			return nil, errors.New("testenv.Options: NewestCRDs replaces the third-party CRDs of a hub: not with CRDs or Workload")
		}
		crdPaths = newestPaths(root, crdPaths)
	}
	webhookPaths := make([]string, 0, len(o.WebhookManifestDirs))
	for _, d := range o.WebhookManifestDirs {
		webhookPaths = append(webhookPaths, filepath.Join(root, d))
	}
	webhooks := envtest.WebhookInstallOptions{Paths: webhookPaths, LocalServingHost: "127.0.0.1"}
	if len(webhookPaths) > 0 {
		// The test's webhook server binds this port after the environment has started: a
		// reserved one stays free until then.
		if webhooks.LocalServingPort, err = ports.Reserve(); err != nil {
			return nil, err
		}
	}
	crds := envtest.CRDInstallOptions{
		Paths:              crdPaths,
		ErrorIfPathMissing: true,
		Scheme:             o.Scheme,
	}
	if o.CRDs != nil {
		crds = envtest.CRDInstallOptions{CRDs: o.CRDs, Scheme: o.Scheme}
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory: assets,
		CRDInstallOptions:     crds,
		WebhookInstallOptions: webhooks,
		// On two shared cores an API server with many watches can take longer than envtest's
		// default 20 s to start or to drain its connections and stop.
		ControlPlaneStartTimeout: time.Minute,
		ControlPlaneStopTimeout:  time.Minute,
	}
	for k, v := range o.APIServerArgs {
		env.ControlPlane.GetAPIServer().Configure().Set(k, v)
	}
	var socket string
	if dir := os.Getenv(ProfileDirEnv); dir != "" {
		// kube-apiserver serves /debug/pprof on this socket without authentication:
		// curl --unix-socket <socket> 'http://x/debug/pprof/profile?seconds=30' > cpu.pprof
		socket = filepath.Join(dir, fmt.Sprintf("apiserver-%d-%d.sock", os.Getpid(), apiServers.Add(1)))
		env.ControlPlane.GetAPIServer().Configure().Set("debug-socket-path", socket)
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("starting envtest (binaries in %s): %w", assets, err)
	}
	c, err := client.New(cfg, client.Options{Scheme: o.Scheme})
	if err != nil {
		_ = env.Stop()
		return nil, fmt.Errorf("creating client: %w", err)
	}
	if o.CRDs == nil && !o.Workload {
		if err := installAdmissionPolicies(context.Background(), c, root); err != nil {
			_ = env.Stop()
			return nil, err
		}
	}
	return &Environment{env: env, Config: cfg, Client: c, Scheme: o.Scheme, ProfileSocket: socket}, nil
}

// ControlPlaneCPU returns the CPU time this environment's kube-apiserver and etcd have used, read
// from /proc: its processes alone, known by their certificate and data folders, which no other
// environment shares.
func (e *Environment) ControlPlaneCPU() (apiServer, etcd time.Duration, err error) {
	if apiServer, err = procstat.CPUOf("kube-apiserver", "--cert-dir="+e.env.ControlPlane.APIServer.CertDir); err != nil {
		return 0, 0, err
	}
	if etcd, err = procstat.CPUOf("etcd", "--data-dir="+e.env.ControlPlane.Etcd.DataDir); err != nil {
		return 0, 0, err
	}
	return apiServer, etcd, nil
}

// WebhookServerOptions returns the options of a webhook server that serves the webhook
// configurations the environment installed (host, port and certificates of envtest).
func (e *Environment) WebhookServerOptions() webhook.Options {
	w := e.env.WebhookInstallOptions
	return webhook.Options{Host: w.LocalServingHost, Port: w.LocalServingPort, CertDir: w.LocalServingCertDir}
}

// Stop stops the API server and etcd.
func (e *Environment) Stop() error {
	e.nsMu.Lock()
	kcm := e.nsController
	e.nsController = nil
	e.nsMu.Unlock()
	var err error
	if kcm != nil {
		err = kcm.Stop()
	}
	return errors.Join(err, e.env.Stop())
}

// WriteKubeconfig writes a kubeconfig file that reaches the environment's API server as its
// administrator (for kubectl, or for libraries such as clusterctl's that take a file).
func (e *Environment) WriteKubeconfig(path string) error {
	cfg := e.Config
	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken}
	kc.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "admin"}
	kc.CurrentContext = "envtest"
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		return fmt.Errorf("writing the kubeconfig %s: %w", path, err)
	}
	return nil
}

// CreateNamespace creates a namespace with a generated name that starts with prefix.
func (e *Environment) CreateNamespace(ctx context.Context, prefix string) (string, error) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}
	if err := e.Client.Create(ctx, ns); err != nil {
		return "", fmt.Errorf("creating namespace: %w", err)
	}
	return ns.Name, nil
}

// Main starts an environment for a package's tests, runs them and stops it; call it from
// TestMain and exit with what it returns. The environment is stored in *env for the tests.
func Main(m *testing.M, scheme *runtime.Scheme, env **Environment) int {
	return MainWithOptions(m, Options{Scheme: scheme}, env)
}

// MainWithOptions is Main with an environment started with o.
func MainWithOptions(m *testing.M, o Options, env **Environment) int {
	return mainWith(o, env, func(*Environment) int { return m.Run() })
}

// mainWith starts an environment with o, stores it in *env, calls run (which runs the tests and
// returns their exit code) and stops the environment.
func mainWith(o Options, env **Environment, run func(*Environment) int) int {
	if Fuzzing() {
		// Fuzz targets use fake clients: no API server, which each fuzz worker process would
		// otherwise start and, at the end of the fuzzing time, wait to stop.
		return run(nil)
	}
	e, err := StartWithOptions(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	*env = e
	code := run(e)
	if err := e.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping envtest:", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// Fuzzing tells whether the test binary runs a fuzz target (go test -fuzz, coordinator or
// worker): run it with -run '^$' so that no test that needs the API server runs with it.
func Fuzzing() bool {
	if !flag.Parsed() {
		flag.Parse()
	}
	f := flag.Lookup("test.fuzz")
	return f != nil && f.Value.String() != ""
}

// installAdmissionPolicies creates the objects of the manifests in ProviderAdmissionDirs (all but
// the kustomize files), as the providers' components install them. The API server enforces a
// policy shortly after it is created.
func installAdmissionPolicies(ctx context.Context, c client.Client, root string) error {
	for _, dir := range ProviderAdmissionDirs {
		files, err := filepath.Glob(filepath.Join(root, dir, "*.yaml"))
		if err != nil {
			return err
		}
		for _, f := range files {
			if base := filepath.Base(f); strings.HasPrefix(base, "kustomiz") {
				continue
			}
			data, err := os.ReadFile(f)
			if err != nil {
				return fmt.Errorf("reading %s: %w", f, err)
			}
			dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
			for {
				u := &unstructured.Unstructured{}
				if err := dec.Decode(&u.Object); err != nil {
					if errors.Is(err, io.EOF) {
						break
					}
					return fmt.Errorf("decoding %s: %w", f, err)
				}
				if len(u.Object) == 0 {
					continue
				}
				if err := c.Create(ctx, u); err != nil {
					return fmt.Errorf("creating %s %s from %s: %w", u.GetKind(), u.GetName(), f, err)
				}
			}
		}
	}
	return nil
}
