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

package e2e

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/test/framework"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/lab"
)

// Management is the management cluster a spec runs against, with the bare-metal hosts it can
// hand out. The lab path gives every spec a lab of its own (the lab's workload API server is
// shared by every cluster of the lab, so two clusters in one lab would see each other's Nodes
// and ClusterVersion); the kind path shares one kind cluster and one pool of hosts.
type Management interface {
	// Proxy reaches the management cluster as an administrator.
	Proxy() framework.ClusterProxy
	// AddHosts makes n more bare-metal hosts available in namespace, as BareMetalHosts whose
	// names start with prefix.
	AddHosts(ctx context.Context, namespace, prefix string, n int) error
	// AddSelfBootedHosts makes n more hosts, named after prefix, boot the discovery ISO of the
	// Machines whose infrastructure is an AgentMachine, as a person does for the agent flavor.
	AddSelfBootedHosts(prefix string, n int) error
	// PullSecret is the .dockerconfigjson of the clusters' pull secrets when the management
	// cluster has its own (the lab's registry credentials); nil otherwise.
	PullSecret() []byte
	// ProviderLogs are the log files of the providers' controllers, in the artifacts folder.
	ProviderLogs() ([]string, error)
	// ReleaseHosts deletes the BareMetalHosts of namespace and returns their hosts to the pool.
	ReleaseHosts(ctx context.Context, namespace string) error
	// Dispose stops what the management cluster started for the spec.
	Dispose(ctx context.Context) error
}

// labManagement is a lab (test/lab) started for one spec: its providers run in-process, as they
// do in the lab's other tests, and log into a file of the spec's artifacts.
type labManagement struct {
	lab     *lab.Lab
	proxy   framework.ClusterProxy
	logFile *os.File
	tmpDir  string
	// selfBootedSets counts AddSelfBootedHosts calls, which name their hosts after it.
	selfBootedSets atomic.Int32
}

// klogFlags configure klog, which every in-process controller logs through (the providers'
// manager.Run sets controller-runtime's logger to klog, as their main.go does).
var klogFlags = sync.OnceValue(func() *flag.FlagSet {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	return fs
})

// redirectKlog sends klog's output to w only (no copy on stderr).
func redirectKlog(w io.Writer) error {
	fs := klogFlags()
	for name, value := range map[string]string{"logtostderr": "false", "alsologtostderr": "false", "stderrthreshold": "FATAL", "one_output": "true"} {
		if err := fs.Set(name, value); err != nil {
			return fmt.Errorf("setting klog's %s: %w", name, err)
		}
	}
	klog.SetOutput(w)
	return nil
}

// StartLabManagement starts a lab named name and logs its controllers into
// artifactFolder/clusters/<name>/logs/controllers.log.
func StartLabManagement(ctx context.Context, name, artifactFolder string) (Management, error) {
	dir := filepath.Join(artifactFolder, "clusters", name)
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o750); err != nil {
		return nil, fmt.Errorf("creating the artifacts folder of %s: %w", name, err)
	}
	logFile, err := os.Create(filepath.Join(dir, "logs", "controllers.log"))
	if err != nil {
		return nil, fmt.Errorf("creating the controllers' log file: %w", err)
	}
	if err := redirectKlog(logFile); err != nil {
		_ = logFile.Close()
		return nil, err
	}
	l, err := lab.Start(ctx, lab.Options{ControllerManager: true, Topology: true})
	if err != nil {
		klog.Flush()
		_ = redirectKlog(io.Discard)
		_ = logFile.Close()
		return nil, fmt.Errorf("starting the lab: %w", err)
	}
	m := &labManagement{lab: l, logFile: logFile}
	// The kubeconfig holds a client key: it goes into a temporary folder, not the artifacts.
	if m.tmpDir, err = os.MkdirTemp("", "capoa-e2e-"+name+"-"); err != nil {
		_ = m.Dispose(ctx)
		return nil, fmt.Errorf("creating a temporary folder: %w", err)
	}
	kubeconfig := filepath.Join(m.tmpDir, "kubeconfig")
	if err := l.Mgmt.WriteKubeconfig(kubeconfig); err != nil {
		_ = m.Dispose(ctx)
		return nil, err
	}
	if err := l.SetUpForClusterctl(ctx, kubeconfig); err != nil {
		_ = m.Dispose(ctx)
		return nil, err
	}
	scheme, err := managementScheme()
	if err != nil {
		_ = m.Dispose(ctx)
		return nil, err
	}
	m.proxy = admittingProxy{
		ClusterProxy:           framework.NewClusterProxy(name, kubeconfig, scheme, framework.WithMachineLogCollector(hostLogCollector{})),
		releaseImageRepository: l.Releases.Repository(),
	}
	return m, nil
}

// admittingProxy is the lab's management cluster as Cluster API's framework reaches it. The
// manifests it creates (Create, CreateOrUpdate: how the framework applies a cluster template,
// ours and those of Cluster API's own specs alike) first get what the lab's API server does not
// write but a real management cluster does (lab.Adapt): the rollout strategy Cluster API's
// defaulting webhook gives a MachineDeployment, and, as the release-image-repository annotation
// a user of a mirror sets, the lab's release registry in place of quay.io, which the lab cannot
// reach. On kind, the webhooks run and quay.io answers: nothing is adapted there.
type admittingProxy struct {
	framework.ClusterProxy
	releaseImageRepository string
}

func (p admittingProxy) Create(ctx context.Context, resources []byte, options ...framework.CreateOption) error {
	adapted, err := adaptManifests(resources, p.releaseImageRepository)
	if err != nil {
		return err
	}
	return p.ClusterProxy.Create(ctx, adapted, options...)
}

func (p admittingProxy) CreateOrUpdate(ctx context.Context, resources []byte, options ...framework.CreateOrUpdateOption) error {
	adapted, err := adaptManifests(resources, p.releaseImageRepository)
	if err != nil {
		return err
	}
	return p.ClusterProxy.CreateOrUpdate(ctx, adapted, options...)
}

// managementScheme is the lab's management scheme, which both paths use: every third-party API
// and the three providers'.
func managementScheme() (*runtime.Scheme, error) {
	s, err := lab.Scheme()
	if err != nil {
		return nil, fmt.Errorf("building the management scheme: %w", err)
	}
	return s, nil
}

func (m *labManagement) Proxy() framework.ClusterProxy { return m.proxy }

// AddHosts adds hosts named <namespace>-<prefix>-<i>: the specs share the lab, whose servers
// differ by name (inventory.AddNew).
func (m *labManagement) AddHosts(ctx context.Context, namespace, prefix string, n int) error {
	if _, err := m.lab.AddHosts(ctx, namespace, namespace+"-"+prefix, n); err != nil {
		return fmt.Errorf("adding %d simulated hosts: %w", n, err)
	}
	return nil
}

// AddSelfBootedHosts adds hosts named <prefix>-<k>-<i>, k counting the calls: the specs share the
// lab, whose servers differ by name (inventory.AddNew).
func (m *labManagement) AddSelfBootedHosts(prefix string, n int) error {
	if err := m.lab.AddSelfBootedHosts(fmt.Sprintf("%s-%d", prefix, m.selfBootedSets.Add(1)), n); err != nil {
		return fmt.Errorf("adding %d self-booted hosts: %w", n, err)
	}
	return nil
}

func (m *labManagement) PullSecret() []byte { return m.lab.PullSecret() }

func (m *labManagement) ProviderLogs() ([]string, error) {
	klog.Flush()
	return []string{m.logFile.Name()}, nil
}

// ReleaseHosts is a no-op: the lab, hosts included, goes away with the spec.
func (m *labManagement) ReleaseHosts(context.Context, string) error { return nil }

func (m *labManagement) Dispose(ctx context.Context) error {
	var errs []error
	if m.proxy != nil {
		m.proxy.Dispose(ctx)
	}
	if m.lab != nil {
		if err := m.lab.Stop(); err != nil {
			errs = append(errs, fmt.Errorf("stopping the lab: %w", err))
		}
	}
	klog.Flush()
	if err := redirectKlog(io.Discard); err != nil {
		errs = append(errs, err)
	}
	if err := m.logFile.Close(); err != nil {
		errs = append(errs, fmt.Errorf("closing the controllers' log file: %w", err))
	}
	if m.tmpDir != "" {
		errs = append(errs, os.RemoveAll(m.tmpDir))
	}
	return errors.Join(errs...)
}

// hostLogCollector is the framework's log collector for machines whose hosts cannot be logged
// into from the management side (simulated hosts, or libvirt VMs): for each Machine it writes
// what tells what happened to its host, its infrastructure machine and BareMetalHost.
type hostLogCollector struct{}

// bareMetalHostAnnotation is where CAPM3 records the host of a Metal3Machine (namespace/name).
const bareMetalHostAnnotation = "metal3.io/BareMetalHost"

func (hostLogCollector) CollectMachineLog(ctx context.Context, c client.Client, m *clusterv1.Machine, outputPath string) error {
	if err := os.MkdirAll(outputPath, 0o750); err != nil {
		return fmt.Errorf("creating %s: %w", outputPath, err)
	}
	ref := m.Spec.InfrastructureRef
	mapping, err := c.RESTMapper().RESTMapping(schema.GroupKind{Group: ref.APIGroup, Kind: ref.Kind})
	if err != nil {
		return fmt.Errorf("resolving %s.%s: %w", ref.Kind, ref.APIGroup, err)
	}
	infra := &unstructured.Unstructured{}
	infra.SetGroupVersionKind(mapping.GroupVersionKind)
	if err := c.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: ref.Name}, infra); err != nil {
		return fmt.Errorf("reading %s %s: %w", ref.Kind, ref.Name, err)
	}
	if err := writeYAML(filepath.Join(outputPath, strings.ToLower(ref.Kind)+".yaml"), infra.Object); err != nil {
		return err
	}
	hostKey, ok := infra.GetAnnotations()[bareMetalHostAnnotation]
	if !ok {
		return nil
	}
	ns, name, found := strings.Cut(hostKey, "/")
	if !found {
		return fmt.Errorf("annotation %s=%q is not namespace/name", bareMetalHostAnnotation, hostKey)
	}
	host := &bmov1alpha1.BareMetalHost{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, host); err != nil {
		return fmt.Errorf("reading BareMetalHost %s: %w", hostKey, err)
	}
	return writeYAML(filepath.Join(outputPath, "baremetalhost.yaml"), host)
}

func (hostLogCollector) CollectMachinePoolLog(context.Context, client.Client, *clusterv1.MachinePool, string) error {
	return nil // the templates have no MachinePools
}

func (hostLogCollector) CollectInfrastructureLogs(ctx context.Context, c client.Client, cluster *clusterv1.Cluster, outputPath string) error {
	hosts := &bmov1alpha1.BareMetalHostList{}
	if err := c.List(ctx, hosts, client.InNamespace(cluster.Namespace)); err != nil {
		return fmt.Errorf("listing BareMetalHosts: %w", err)
	}
	if err := os.MkdirAll(outputPath, 0o750); err != nil {
		return fmt.Errorf("creating %s: %w", outputPath, err)
	}
	var b strings.Builder
	for _, h := range hosts.Items {
		consumer := ""
		if h.Spec.ConsumerRef != nil {
			consumer = h.Spec.ConsumerRef.Name
		}
		fmt.Fprintf(&b, "%s\tstate=%s\toperationalStatus=%s\tconsumer=%s\terror=%s\n", h.Name,
			h.Status.Provisioning.State, h.Status.OperationalStatus, consumer, h.Status.ErrorMessage)
	}
	return writeFile(filepath.Join(outputPath, "baremetalhosts.txt"), []byte(b.String()))
}

func writeYAML(path string, obj any) error {
	raw, err := yaml.Marshal(obj)
	if err != nil {
		return fmt.Errorf("marshalling %s: %w", filepath.Base(path), err)
	}
	return writeFile(path, raw)
}

func writeFile(path string, data []byte) error {
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// InventoryHost is a host of the kind path's inventory (kind/run.sh writes it): a libvirt VM
// that sushy-tools exposes over Redfish.
type InventoryHost struct {
	Name           string `json:"name"`
	BootMACAddress string `json:"bootMACAddress"`
	BMCAddress     string `json:"bmcAddress"`
	Username       string `json:"username"`
	Password       string `json:"password"`
}

// Inventory is the kind path's host inventory file.
type Inventory struct {
	Hosts []InventoryHost `json:"hosts"`
}

// LoadInventory reads and checks a host inventory file.
func LoadInventory(path string) (*Inventory, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the host inventory: %w", err)
	}
	inv := &Inventory{}
	if err := yaml.UnmarshalStrict(raw, inv); err != nil {
		return nil, fmt.Errorf("parsing the host inventory %s: %w", path, err)
	}
	seen := map[string]bool{}
	for i, h := range inv.Hosts {
		switch {
		case h.Name == "" || h.BootMACAddress == "" || h.BMCAddress == "" || h.Username == "" || h.Password == "":
			return nil, fmt.Errorf("host inventory %s: hosts[%d] needs name, bootMACAddress, bmcAddress, username and password", path, i)
		case seen[h.Name]:
			return nil, fmt.Errorf("host inventory %s: host %s appears twice", path, h.Name)
		}
		seen[h.Name] = true
	}
	return inv, nil
}

// BareMetalHost returns the BareMetalHost and BMC credentials Secret of h in namespace, named
// name, as a lab administrator creates them for BMO.
func (h InventoryHost) BareMetalHost(namespace, name string) (*bmov1alpha1.BareMetalHost, *corev1.Secret) {
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name + "-bmc"},
		StringData: map[string]string{"username": h.Username, "password": h.Password},
	}
	host := &bmov1alpha1.BareMetalHost{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: bmov1alpha1.BareMetalHostSpec{
			Online:         true,
			BootMACAddress: h.BootMACAddress,
			BootMode:       bmov1alpha1.UEFI,
			BMC: bmov1alpha1.BMCDetails{Address: h.BMCAddress, CredentialsName: secret.Name,
				DisableCertificateVerification: true},
		},
	}
	return host, secret
}

// externalManagement is a management cluster the suite did not start (kind on the kind path),
// shared by every spec, with a pool of real hosts.
type externalManagement struct {
	proxy     framework.ClusterProxy
	logFolder string

	mu    sync.Mutex
	free  []InventoryHost
	inUse map[string][]InventoryHost // by namespace
}

// providerLabels select the Deployments of the providers clusterctl installed (clusterctl labels
// every object of a provider's components with its name).
var providerLabels = []string{
	"cluster-api", "infrastructure-metal3", "infrastructure-agent", "bootstrap-openshift-assisted",
	"control-plane-openshift-assisted",
}

// NewExternalManagement reaches the management cluster of kubeconfig, hands out the hosts of
// inventory, and streams the providers' logs into artifactFolder/clusters/<name>/logs/.
func NewExternalManagement(ctx context.Context, name, kubeconfig string, inventory *Inventory, artifactFolder string) (Management, error) {
	scheme, err := managementScheme()
	if err != nil {
		return nil, err
	}
	m := &externalManagement{
		proxy:     framework.NewClusterProxy(name, kubeconfig, scheme, framework.WithMachineLogCollector(hostLogCollector{})),
		logFolder: filepath.Join(artifactFolder, "clusters", name, "logs"),
		free:      append([]InventoryHost(nil), inventory.Hosts...),
		inUse:     map[string][]InventoryHost{},
	}
	for _, provider := range providerLabels {
		framework.WatchDeploymentLogsByLabelSelector(ctx, framework.WatchDeploymentLogsByLabelSelectorInput{
			GetLister: m.proxy.GetClient(),
			Cache:     m.proxy.GetCache(ctx),
			ClientSet: m.proxy.GetClientSet(),
			Labels:    map[string]string{clusterv1.ProviderNameLabel: provider},
			LogPath:   m.logFolder,
		})
	}
	return m, nil
}

func (m *externalManagement) Proxy() framework.ClusterProxy { return m.proxy }

func (m *externalManagement) AddHosts(ctx context.Context, namespace, prefix string, n int) error {
	m.mu.Lock()
	if len(m.free) < n {
		free := len(m.free)
		m.mu.Unlock()
		return fmt.Errorf("the host inventory has %d free hosts, %d wanted", free, n)
	}
	taken := m.free[:n:n]
	m.free = m.free[n:]
	m.inUse[namespace] = append(m.inUse[namespace], taken...)
	m.mu.Unlock()
	c := m.proxy.GetClient()
	for i, h := range taken {
		host, secret := h.BareMetalHost(namespace, fmt.Sprintf("%s-%d", prefix, i))
		if err := c.Create(ctx, secret); client.IgnoreAlreadyExists(err) != nil {
			return fmt.Errorf("creating the BMC credentials of %s: %w", h.Name, err)
		}
		if err := c.Create(ctx, host); err != nil {
			return fmt.Errorf("creating the BareMetalHost of %s: %w", h.Name, err)
		}
	}
	return nil
}

// AddSelfBootedHosts fails: the kind path's hosts are VMs that Metal3 boots; nothing boots them
// from an InfraEnv's ISO for the agent flavor.
func (m *externalManagement) AddSelfBootedHosts(string, int) error {
	return errors.New("the kind path has no self-booted hosts: its VMs boot through Metal3 (use a Metal3 flavor)")
}

func (m *externalManagement) PullSecret() []byte { return nil }

func (m *externalManagement) ProviderLogs() ([]string, error) {
	var files []string
	err := filepath.WalkDir(m.logFolder, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".log") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing the providers' logs: %w", err)
	}
	return files, nil
}

// ReleaseHosts deletes the namespace's BareMetalHosts (BMO deprovisions them first) and, once
// they are gone, returns their hosts to the pool.
func (m *externalManagement) ReleaseHosts(ctx context.Context, namespace string) error {
	c := m.proxy.GetClient()
	if err := c.DeleteAllOf(ctx, &bmov1alpha1.BareMetalHost{}, client.InNamespace(namespace)); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting the BareMetalHosts of %s: %w", namespace, err)
	}
	hosts := &bmov1alpha1.BareMetalHostList{}
	if err := c.List(ctx, hosts, client.InNamespace(namespace)); err != nil {
		return fmt.Errorf("listing the BareMetalHosts of %s: %w", namespace, err)
	}
	if len(hosts.Items) > 0 {
		return fmt.Errorf("%d BareMetalHosts of %s are still deprovisioning", len(hosts.Items), namespace)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.free = append(m.free, m.inUse[namespace]...)
	delete(m.inUse, namespace)
	return nil
}

// Dispose leaves the shared management cluster running (kind/run.sh deletes it).
func (m *externalManagement) Dispose(context.Context) error { return nil }
