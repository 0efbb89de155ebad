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

// Package assistedservice runs the real assisted-service, the lab's hub (issue 43): the server of
// github.com/openshift/assisted-service at the commit hack/ensure-assisted-service.sh pins, built
// from the Go module mirror, in kube-api mode against a management API server, with a PostgreSQL
// of its own. It runs as its operator deploys it (AgentServiceConfig's controller,
// internal/controller/controllers/agentserviceconfig_controller.go at that commit): HTTPS, local
// authentication (ES256 tokens), filesystem storage, its service account's RBAC and in-cluster
// credentials. What cannot run here gets the smallest stand-in, each named with why (standins.go).
// It serves its REST API only: nothing plays the hosts, the image service or Hive here.
package assistedservice

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	rest "k8s.io/client-go/rest"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/pki"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/ports"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/testenv"
)

// DirEnv names the environment variable that points at a folder hack/ensure-assisted-service.sh
// prepared (the binary, its CRDs, RBAC and hardware requirements), instead of running the script.
const DirEnv = "ASSISTED_SERVICE_DIR"

// DefaultNamespace is where the service runs: its NAMESPACE, as upstream's default
// (pkg/leader/leaderelector.go) and the lab's assisted-installer CA's namespace.
const DefaultNamespace = "assisted-installer"

// ServiceAccountName is the service account it runs as (config/rbac/role_binding.yaml).
const ServiceAccountName = "assisted-service"

// Dir returns the folder hack/ensure-assisted-service.sh prepared, building it when needed (cold,
// a few minutes): $ASSISTED_SERVICE_DIR, or the script's output.
func Dir() (string, error) {
	if dir := os.Getenv(DirEnv); dir != "" {
		return dir, nil
	}
	root, err := testenv.RepoRoot()
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(context.Background(), "bash", filepath.Join(root, "hack", "ensure-assisted-service.sh"))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("building assisted-service with hack/ensure-assisted-service.sh (its output says what is missing): %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// Version is the assisted-service the folder dir holds (its root module's pseudo-version, which
// names the commit): the folder's name, as the script keys its cache.
func Version(dir string) string { return filepath.Base(dir) }

// CRDDir is the folder of the service's own CRDs at the pinned commit (its agent-install kinds and
// AgentClusterInstall, and the Hive and metal3 CRDs of its repository's hack/crds).
func CRDDir() (string, error) {
	dir, err := Dir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "crds"), nil
}

// ReleaseImage is one entry of the service's RELEASE_IMAGES (models.ReleaseImage's JSON): the
// releases it knows without reading them. A ClusterImageSet naming another release makes it read
// the image with oc, which the lab cannot (standins.go).
type ReleaseImage struct {
	OpenshiftVersion string `json:"openshift_version"`
	CPUArchitecture  string `json:"cpu_architecture"`
	URL              string `json:"url"`
	Version          string `json:"version"`
}

// OSImage is one entry of its OS_IMAGES (models.OsImage's JSON): the RHCOS live ISO of an
// OpenShift version, which the image service would serve the discovery ISO from.
type OSImage struct {
	OpenshiftVersion string `json:"openshift_version"`
	CPUArchitecture  string `json:"cpu_architecture"`
	URL              string `json:"url"`
	Version          string `json:"version"`
}

// Options configure the service.
type Options struct {
	// KubeConfig reaches the management API server as an administrator: it sets up the service's
	// namespace, service account and RBAC; the service itself runs with the account's token.
	KubeConfig *rest.Config
	// Dir is the working folder (database, storage); default a new temporary folder, which Stop
	// removes. The database runs as the postgres user when the caller is root: every folder
	// above Dir must let others through (mode o+x), as os.TempDir does.
	Dir string
	// Namespace is its NAMESPACE (default DefaultNamespace).
	Namespace string
	// ReleaseImages and OSImages: its RELEASE_IMAGES and OS_IMAGES. OSImages defaults to one
	// live ISO per OpenShift version of ReleaseImages.
	ReleaseImages []ReleaseImage
	OSImages      []OSImage
	// ImageServiceURL is its IMAGE_SERVICE_BASE_URL, the base of the InfraEnvs' ISO URLs (default
	// https://assisted-image-service.lab.invalid: nothing serves it; the lab's hosts resolve it).
	ImageServiceURL string
	// Env adds to, or overrides, its environment.
	Env map[string]string
	// Log receives the service's and its database's output (default: discarded).
	Log io.Writer
}

// Service is a running assisted-service.
type Service struct {
	// URL is its REST API's base (its SERVICE_BASE_URL): https://127.0.0.1:<port>.
	URL string
	// CACertPEM is the CA its serving certificate is signed by: what its clients trust.
	CACertPEM []byte
	// ImageServiceURL is its IMAGE_SERVICE_BASE_URL.
	ImageServiceURL string
	// StorageDir is its filesystem storage (WORK_DIR): per cluster ID, the files it generates
	// (with DUMMY_IGNITION, the install-config, dummy Ignition configs and a kubeconfig).
	StorageDir string
	// Namespace is its NAMESPACE.
	Namespace string
	// Version is the assisted-service version it runs (Version).
	Version string
	// DB is its database.
	DB *Postgres

	dir, bin string
	port     int
	machine  *os.File // holds machineLock while the service runs
	tempDir  bool
	env      []string
	log      io.Writer
	cmd      *exec.Cmd
	done     chan error
	http     *http.Client
}

// Start sets up the service's namespace, service account and RBAC on the API server of
// o.KubeConfig (creating what is missing), starts its database and the service, and waits until
// its REST API answers (at most two minutes: its first start migrates the database).
func Start(ctx context.Context, o Options) (_ *Service, err error) {
	if o.KubeConfig == nil {
		return nil, errors.New("assistedservice.Start: KubeConfig is required")
	}
	bins, err := Dir()
	if err != nil {
		return nil, err
	}
	s := &Service{bin: bins, log: o.Log, Namespace: o.Namespace, Version: Version(bins), ImageServiceURL: o.ImageServiceURL}
	if s.log == nil {
		s.log = io.Discard
	}
	if s.Namespace == "" {
		s.Namespace = DefaultNamespace
	}
	if s.ImageServiceURL == "" {
		s.ImageServiceURL = "https://assisted-image-service.lab.invalid"
	}
	s.dir = o.Dir
	if s.dir == "" {
		if s.dir, err = os.MkdirTemp("", "assisted-service-"); err != nil {
			return nil, err
		}
		s.tempDir = true
	}
	defer func() {
		if err != nil {
			_ = s.Stop()
		}
	}()
	if s.machine, err = lockMachine(ctx); err != nil {
		return nil, err
	}
	// The database runs as another user, which must get through to its folder.
	if err := os.Chmod(s.dir, 0o711); err != nil { //nolint:gosec // a folder others may only pass through
		return nil, err
	}
	s.StorageDir = filepath.Join(s.dir, "data")
	for _, d := range []string{s.StorageDir, filepath.Join(s.StorageDir, "cache"), filepath.Join(s.dir, "bin"), filepath.Join(s.dir, "tls")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	account, err := setUpAccount(ctx, o.KubeConfig, s.Namespace, filepath.Join(bins, "rbac"))
	if err != nil {
		return nil, fmt.Errorf("setting up assisted-service's service account: %w", err)
	}
	if s.DB, err = StartPostgres(ctx, filepath.Join(s.dir, "db"), s.log); err != nil {
		return nil, err
	}
	port, err := ports.Reserve()
	if err != nil {
		return nil, err
	}
	s.port = port
	s.URL = "https://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	if err := s.writeTLS(); err != nil {
		return nil, err
	}
	if err := writeStandIns(filepath.Join(s.dir, "bin")); err != nil {
		return nil, err
	}
	if s.env, err = s.environment(o, account); err != nil {
		return nil, err
	}
	if err := s.start(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// writeTLS issues its serving certificate (127.0.0.1 and localhost) from a CA of its own, as the
// operator has OpenShift's service CA sign it, and sets up a client that trusts it.
func (s *Service) writeTLS() error {
	ca, err := pki.Issue(nil, pki.Request{CommonName: "assisted-service lab CA", CA: true})
	if err != nil {
		return err
	}
	serving, err := pki.Issue(ca, pki.Request{CommonName: "assisted-service", Usages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames: []string{"localhost"}, IPs: []net.IP{net.IPv4(127, 0, 0, 1)}})
	if err != nil {
		return err
	}
	dir := filepath.Join(s.dir, "tls")
	for name, b := range map[string][]byte{"tls.crt": serving.CertPEM, "tls.key": serving.KeyPEM, "ca-bundle.crt": ca.CertPEM} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			return err
		}
	}
	s.CACertPEM = ca.CertPEM
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	s.http = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	return nil
}

// environment is the service's environment: its operator's ConfigMap for a hub
// (agentserviceconfig_controller.go newAssistedCM), less what needs the internet, plus the lab's.
func (s *Service) environment(o Options, account *serviceAccount) ([]string, error) {
	hw, err := os.ReadFile(filepath.Join(s.bin, "hw-requirements.json"))
	if err != nil {
		return nil, fmt.Errorf("the hardware requirements its operator deploys it with: %w", err)
	}
	releases, err := json.Marshal(o.ReleaseImages)
	if err != nil {
		return nil, err
	}
	osImages := o.OSImages
	if osImages == nil {
		osImages = liveISOs(o.ReleaseImages)
	}
	osJSON, err := json.Marshal(osImages)
	if err != nil {
		return nil, err
	}
	key, err := pki.Issue(nil, pki.Request{CommonName: "assisted-service local authentication"})
	if err != nil {
		return nil, err
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.Key.PublicKey)
	if err != nil {
		return nil, err
	}
	tlsDir := filepath.Join(s.dir, "tls")
	env := map[string]string{
		// The operator's (newAssistedCM).
		"SERVICE_BASE_URL":            s.URL,
		"IMAGE_SERVICE_BASE_URL":      s.ImageServiceURL,
		"OS_IMAGES":                   string(osJSON),
		"RELEASE_IMAGES":              string(releases),
		"ISO_IMAGE_TYPE":              "minimal-iso",
		"LOG_LEVEL":                   "info",
		"LOG_FORMAT":                  "text",
		"INSTALL_RH_CA":               "false",
		"DEPLOY_TARGET":               "k8s",
		"STORAGE":                     "filesystem",
		"ISO_WORKSPACE_BASE_DIR":      s.StorageDir,
		"ISO_CACHE_DIR":               filepath.Join(s.StorageDir, "cache"),
		"AUTH_TYPE":                   "local",
		"BASE_DNS_DOMAINS":            "",
		"CHECK_CLUSTER_VERSION":       "True",
		"CREATE_S3_BUCKET":            "False",
		"ENABLE_KUBE_API":             "True",
		"ENABLE_AUTO_ASSIGN":          "True",
		"ENABLE_SINGLE_NODE_DNSMASQ":  "True",
		"IPV6_SUPPORT":                "True",
		"PUBLIC_CONTAINER_REGISTRIES": "quay.io,registry.ci.openshift.org",
		"HW_VALIDATOR_REQUIREMENTS":   string(hw),
		"NAMESPACE":                   s.Namespace,
		"INSTALL_INVOKER":             "assisted-installer-operator",
		"SERVE_HTTPS":                 "True",
		"HTTPS_CERT_FILE":             filepath.Join(tlsDir, "tls.crt"),
		"HTTPS_KEY_FILE":              filepath.Join(tlsDir, "tls.key"),
		"SERVICE_CA_CERT_PATH":        filepath.Join(tlsDir, "ca-bundle.crt"),
		"SKIP_CERT_VERIFICATION":      "False",
		// Its Deployment's (newAssistedServiceDeployment): the database and local-auth keys.
		"DB_HOST":            "127.0.0.1",
		"DB_PORT":            strconv.Itoa(s.DB.Port),
		"DB_USER":            DatabaseUser,
		"DB_PASS":            "lab", // trust authentication: any password
		"DB_NAME":            DatabaseName,
		"EC_PUBLIC_KEY_PEM":  string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})),
		"EC_PRIVATE_KEY_PEM": string(key.KeyPEM),
		"WORK_DIR":           s.StorageDir,
		// What needs the internet or an OpenShift cluster, off: data collection uploads to
		// console.redhat.com.
		"ENABLE_DATA_COLLECTION": "False",
		// openshift-install cannot run here (it needs the release's binaries): its Ignition
		// configs and kubeconfig are dummies, written by the service itself.
		"DUMMY_IGNITION": "True",
		// The pod's in-cluster credentials (standins.go puts its token and CA where client-go
		// reads them).
		"KUBERNETES_SERVICE_HOST": account.host,
		"KUBERNETES_SERVICE_PORT": account.port,
		"PATH":                    filepath.Join(s.dir, "bin") + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME":                    s.dir,
	}
	for k, v := range o.Env {
		env[k] = v
	}
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, k+"="+env[k])
	}
	if err := account.writeFiles(filepath.Join(s.dir, "serviceaccount"), s.Namespace); err != nil {
		return nil, err
	}
	return out, nil
}

// liveISOs is one RHCOS live ISO per OpenShift version (x.y) and architecture of releases.
func liveISOs(releases []ReleaseImage) []OSImage {
	seen := map[string]bool{}
	var out []OSImage
	for _, r := range releases {
		minor := r.OpenshiftVersion
		if parts := strings.SplitN(minor, ".", 3); len(parts) >= 2 {
			minor = parts[0] + "." + parts[1]
		}
		if seen[minor+"/"+r.CPUArchitecture] {
			continue
		}
		seen[minor+"/"+r.CPUArchitecture] = true
		out = append(out, OSImage{OpenshiftVersion: minor, CPUArchitecture: r.CPUArchitecture,
			URL:     "https://rhcos.lab.invalid/" + minor + "/rhcos-live." + r.CPUArchitecture + ".iso",
			Version: minor + ".0"})
	}
	return out
}

// start runs the process and waits until its REST API answers.
func (s *Service) start(ctx context.Context) error {
	// Its REST API's port is a flag (cmd/main.go: -port, 8090 by default, on every interface).
	cmd := inNamespaceFiles(filepath.Join(s.dir, "serviceaccount"), filepath.Join(s.bin, "assisted-service"), "-port", strconv.Itoa(s.port))
	cmd.Env = s.env
	cmd.Dir = s.dir
	cmd.Stdout, cmd.Stderr = s.log, s.log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting assisted-service: %w", err)
	}
	s.cmd, s.done = cmd, make(chan error, 1)
	go func() { s.done <- cmd.Wait() }()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		select {
		case err := <-s.done:
			s.done <- err
			return fmt.Errorf("assisted-service exited while starting: %v (its log has why)", err)
		default:
		}
		if s.ready(ctx) {
			return nil
		}
		if time.Now().After(deadline) {
			return errors.New("assisted-service's REST API did not answer within two minutes")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// ready: the REST API answers its readiness probe (pkg/app/middleware.go: /ready is 200 once the
// service has finished starting).
func (s *Service) ready(ctx context.Context) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/ready", nil)
	if err != nil {
		return false
	}
	resp, err := s.http.Do(req)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// HTTPClient is a client that trusts the service's certificate, with a timeout.
func (s *Service) HTTPClient() *http.Client { return s.http }

// Running returns nil while the process runs, and why it stopped otherwise.
func (s *Service) Running() error {
	if s.cmd == nil {
		return errors.New("assisted-service is stopped")
	}
	select {
	case err := <-s.done:
		s.done <- err
		return fmt.Errorf("assisted-service stopped: %v", err)
	default:
		return nil
	}
}

// Restart stops the process and starts it again on the same port, with its database kept, as
// when its pod is deleted and its Deployment makes another.
func (s *Service) Restart(ctx context.Context) error {
	s.stopProcess()
	return s.start(ctx)
}

// stopProcess stops the service (SIGTERM, then SIGKILL after 10 s).
func (s *Service) stopProcess() {
	if s.cmd == nil {
		return
	}
	select {
	case err := <-s.done:
		_ = err // it had exited: Running says why
	default:
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM)
		select {
		case err := <-s.done:
			_ = err // it exits with the signal's status
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
			err := <-s.done
			_ = err
		}
	}
	s.cmd = nil
}

// Stop stops the service and its database, and removes its folder when Start made it.
func (s *Service) Stop() error {
	s.stopProcess()
	var err error
	if s.DB != nil {
		err = s.DB.Stop()
	}
	if s.tempDir {
		err = errors.Join(err, os.RemoveAll(s.dir))
	}
	if s.machine != nil {
		_ = s.machine.Close() // releases the lock
		s.machine = nil
	}
	return err
}

// lockMachine takes the machine-wide lock that one running service holds: its controller
// manager listens for metrics on :8080 of every interface (cmd/main.go createControllerManager
// sets no metrics address; controller-runtime v0.15's default), which no flag or variable changes
// at this commit, so a second service on the machine fails to start ("error listening on :8080").
// A second lab (another test process) waits for the first's Stop.
func lockMachine(ctx context.Context) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(os.TempDir(), "capoa-assisted-service.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			_ = f.Close()
			return nil, fmt.Errorf("locking %s: %w", f.Name(), err)
		}
		select {
		case <-ctx.Done():
			_ = f.Close()
			return nil, fmt.Errorf("waiting for another lab's assisted-service to stop (it holds %s): %w", f.Name(), ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}
