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

package lab

// The lab on the real assisted-service (Options.Assisted = AssistedReal): the service at the
// commit test/support/assistedservice pins runs as a process against the management cluster's API
// server, with its own CRDs; the lab's hosts talk to it over its REST API
// (test/support/sim/discovery), and the installed clusters' side that no host plays (the
// installer controller's reports, the kubelets, openshift-install's kubeconfig) and Hive's
// spec.installed (hive.go) get stand-ins.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	"github.com/openshift/assisted-service/models"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/assistedservice"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/assisted"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/discovery"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/inventory"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/testenv"
)

// Which assisted-service a lab runs (Options.Assisted).
const (
	// AssistedSim is the assisted-service simulator (test/support/sim/assisted), the default.
	AssistedSim = "sim"
	// AssistedReal is the real assisted-service (test/support/assistedservice).
	AssistedReal = "real"
)

// realAssisted is a management cluster's real assisted-service and the hosts and clusters that
// talk to it.
type realAssisted struct {
	service *assistedservice.Service
	hosts   *discovery.Hosts
	cluster *discovery.Cluster
	// workloads holds a client of each workload API server, by its host.
	workloads sync.Map
	logFile   *os.File
}

// stop stops the hosts, the clusters' stand-ins and the service; its log is removed unless
// keepLog (the lab failed: the error says where it is).
func (r *realAssisted) stop(keepLog bool) error {
	var errs []error
	if r.hosts != nil {
		r.hosts.Stop()
	}
	if r.cluster != nil {
		r.cluster.Stop()
	}
	if r.service != nil {
		errs = append(errs, r.service.Stop())
	}
	errs = append(errs, r.logFile.Close())
	if keepLog {
		errs = append(errs, fmt.Errorf("the log of the real assisted-service is kept in %s", r.logFile.Name()))
	} else {
		errs = append(errs, os.Remove(r.logFile.Name()))
	}
	return errors.Join(errs...)
}

// realHubCRDs makes o a hub whose assisted-service and Hive CRDs are the real service's own, at
// its commit (assistedservice.CRDDir), in place of those generated from the pinned Go modules.
// The BareMetalHost CRD of its repository (hack/crds) is left out: the hub's BareMetalHosts are
// the baremetal-operator's, whose own CRD the lab installs.
func realHubCRDs(o *testenv.Options) error {
	dir, err := assistedservice.CRDDir()
	if err != nil {
		return err
	}
	files, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("reading the real assisted-service's CRDs: %w", err)
	}
	root, err := testenv.RepoRoot()
	if err != nil {
		return err
	}
	entries, err := os.ReadDir(filepath.Join(root, testenv.ThirdPartyCRDDir))
	if err != nil {
		return fmt.Errorf("reading the third-party CRDs (run `make manifests`): %w", err)
	}
	o.CRDPaths = slices.Clone(testenv.ProviderCRDDirs)
	for _, e := range entries {
		if e.IsDir() && e.Name() != "assisted-service" && e.Name() != "hive" {
			o.CRDPaths = append(o.CRDPaths, filepath.Join(testenv.ThirdPartyCRDDir, e.Name()))
		}
	}
	for _, f := range files {
		if !f.IsDir() && !strings.HasPrefix(f.Name(), "metal3.io_") {
			o.ExtraCRDPaths = append(o.ExtraCRDPaths, filepath.Join(dir, f.Name()))
		}
	}
	return nil
}

// startRealAssisted runs the real assisted-service for management cluster m and the stand-ins
// around it; the hosts it returns are told what the bare-metal side does to them.
func (l *Lab) startRealAssisted(ctx context.Context, m *management, core ctrl.Manager) (inventory.HostEvents, error) {
	// The service's log goes to a file of its own, kept when the lab fails (Stop says where).
	logFile, err := os.CreateTemp("", "capoa-lab-assisted-service-*.log")
	if err != nil {
		return nil, fmt.Errorf("creating the log of %s's assisted-service: %w", m.name, err)
	}
	r := &realAssisted{logFile: logFile}
	m.real = r
	svc, err := assistedservice.Start(ctx, assistedservice.Options{
		KubeConfig:    m.env.Config,
		ReleaseImages: l.serviceReleaseImages(),
		Env:           serviceSpeed(l.opts.Speed),
		Log:           logFile,
	})
	if err != nil {
		return nil, fmt.Errorf("starting the real assisted-service of %s (its log: %s): %w", m.name, logFile.Name(), err)
	}
	r.service = svc
	// Its REST API is HTTPS with a CA of its own: the hub's administrator puts the CA where the
	// bootstrap provider reads it, as on the simulator's hub.
	if err := writeAssistedCA(ctx, m.env.Client, svc.CACertPEM); err != nil {
		return nil, fmt.Errorf("%s: %w", m.name, err)
	}
	log := ctrl.Log.WithName(m.name)
	r.cluster = &discovery.Cluster{
		Workload:          r.workloadClient(l, m),
		Kubeconfig:        func(ctx context.Context, c *models.Cluster) ([]byte, error) { return l.serviceKubeconfig(ctx, m, c) },
		StorageDir:        svc.StorageDir,
		KubernetesVersion: l.kubernetesVersion,
		OnInstalled: func(ctx context.Context, c *models.Cluster, workload client.Client) error {
			ic, err := l.installedCluster(ctx, m, c, workload)
			if err != nil {
				return err
			}
			return l.clusterInstalled(ctx, ic)
		},
		Log: log.WithName("installed-clusters"),
	}
	r.hosts = &discovery.Hosts{
		Inventory: l.Inventory,
		// The image service is configured with the service's URL and CA.
		ImageService: &discovery.ImageService{BaseURL: svc.ImageServiceURL, ServiceURL: svc.URL, HTTP: svc.HTTPClient()},
		Cluster:      r.cluster,
		Log:          log.WithName("hosts"),
	}
	if err := setupHiveInstalledStandIn(core); err != nil {
		return nil, err
	}
	return r.hosts, nil
}

// serviceReleaseImages are the lab's releases as assisted-service's RELEASE_IMAGES lists them:
// each by the digest its ClusterImageSets name (the control plane pins the release it resolves),
// then by tag. A release image it does not list, it reads with oc, which the lab cannot run.
func (l *Lab) serviceReleaseImages() []assistedservice.ReleaseImage {
	versions := make([]string, 0, len(Releases))
	for v := range Releases {
		versions = append(versions, v)
	}
	slices.Sort(versions)
	out := make([]assistedservice.ReleaseImage, 0, 2*len(versions))
	for _, version := range versions {
		parts := strings.SplitN(version, ".", 3)
		img := assistedservice.ReleaseImage{OpenshiftVersion: parts[0] + "." + parts[1], CPUArchitecture: "x86_64", Version: version}
		if digest, ok := l.versions.Load(version); ok {
			img.URL = fmt.Sprintf("%s@%s", l.Releases.Repository(), digest)
			out = append(out, img)
		}
		img.URL = fmt.Sprintf("%s:%s-x86_64", l.Releases.Repository(), version)
		out = append(out, img)
	}
	return out
}

// clusterDeploymentOf is the ClusterDeployment of a cluster of the service: the one of its name
// and base domain (the service names the cluster after spec.clusterName).
func clusterDeploymentOf(ctx context.Context, c client.Client, mc *models.Cluster) (*hivev1.ClusterDeployment, error) {
	cds := &hivev1.ClusterDeploymentList{}
	if err := c.List(ctx, cds); err != nil {
		return nil, fmt.Errorf("listing ClusterDeployments: %w", err)
	}
	for i := range cds.Items {
		if cd := &cds.Items[i]; cd.Spec.ClusterName == mc.Name && cd.Spec.BaseDomain == mc.BaseDNSDomain {
			return cd, nil
		}
	}
	return nil, fmt.Errorf("no ClusterDeployment is the service's cluster %s.%s", mc.Name, mc.BaseDNSDomain)
}

// workloadConfig is the API server of a cluster of the service: the lab's shared one, or the one
// Options.Workloads gives its ClusterDeployment.
func (l *Lab) workloadConfig(ctx context.Context, m *management, mc *models.Cluster) (*rest.Config, *hivev1.ClusterDeployment, error) {
	cd, err := clusterDeploymentOf(ctx, m.env.Client, mc)
	if err != nil {
		return nil, nil, err
	}
	if l.opts.Workloads == nil {
		return l.Workload.Config, cd, nil
	}
	cfg, err := l.opts.Workloads(ctx, client.ObjectKeyFromObject(cd))
	return cfg, cd, err
}

func (r *realAssisted) workloadClient(l *Lab, m *management) func(ctx context.Context, c *models.Cluster) (client.Client, error) {
	return func(ctx context.Context, mc *models.Cluster) (client.Client, error) {
		cfg, _, err := l.workloadConfig(ctx, m, mc)
		if err != nil {
			return nil, err
		}
		if c, ok := r.workloads.Load(cfg.Host); ok {
			return c.(client.Client), nil //nolint:forcetypeassert // only clients are stored
		}
		scheme, err := WorkloadScheme()
		if err != nil {
			return nil, err
		}
		c, err := client.New(cfg, client.Options{Scheme: scheme})
		if err != nil {
			return nil, fmt.Errorf("a client of the workload cluster: %w", err)
		}
		r.workloads.Store(cfg.Host, c)
		return c, nil
	}
}

// serviceKubeconfig is the stand-in for openshift-install's auth/kubeconfig of a cluster, which
// DUMMY_IGNITION replaces with a dummy: the workload API server's.
func (l *Lab) serviceKubeconfig(ctx context.Context, m *management, mc *models.Cluster) ([]byte, error) {
	cfg, cd, err := l.workloadConfig(ctx, m, mc)
	if err != nil {
		return nil, err
	}
	return assisted.WorkloadKubeconfig(cfg, cd.Name)
}

// installedCluster is what the lab's cluster-installed hook needs of a cluster of the service.
func (l *Lab) installedCluster(ctx context.Context, m *management, mc *models.Cluster, workload client.Client) (assisted.InstalledCluster, error) {
	cfg, cd, err := l.workloadConfig(ctx, m, mc)
	if err != nil {
		return assisted.InstalledCluster{}, err
	}
	ic := assisted.InstalledCluster{ClusterDeployment: cd, ReleaseImage: mc.OcpReleaseImage, Workload: workload, WorkloadConfig: cfg}
	if ref := cd.Spec.ClusterInstallRef; ref != nil {
		aci := &hiveextv1beta1.AgentClusterInstall{}
		if err := m.env.Client.Get(ctx, client.ObjectKey{Namespace: cd.Namespace, Name: ref.Name}, aci); err != nil {
			return ic, fmt.Errorf("reading the AgentClusterInstall of ClusterDeployment %s: %w", cd.Name, err)
		}
		ic.AgentClusterInstall = aci
	}
	if ic.AgentClusterInstall == nil {
		return ic, fmt.Errorf("ClusterDeployment %s has no AgentClusterInstall", cd.Name)
	}
	return ic, nil
}

// serviceSpeed is the real service's pace for the lab's speed. At Fast, its host and cluster state
// monitors run every second instead of every 8 and 10 s (cmd/main.go HOST_MONITOR_INTERVAL and
// CLUSTER_MONITOR_INTERVAL at the pinned commit): each host and cluster transition that the
// monitors make (known to preparing, preparing to installing, finalizing to installed...) waits
// for their next run, and a lab's install takes those waits a dozen times. Its agent controller
// looks at a day-2 host's Node (approving its CSRs, then setting the host Joined and Done, which
// is when its Agent says added-to-existing-cluster) every second instead of every minute
// (APPROVE_CSRS_REQUEUE_DURATION; agent_controller.go requeues so while the Node is not Ready):
// each day-2 host waited up to a minute for it. Realistic keeps the service's own intervals.
func serviceSpeed(speed Speed) map[string]string {
	if speed == Realistic {
		return nil
	}
	return map[string]string{"HOST_MONITOR_INTERVAL": "1s", "CLUSTER_MONITOR_INTERVAL": "1s", "APPROVE_CSRS_REQUEUE_DURATION": "1s"}
}
