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

package discovery

// What runs in an installed cluster rather than on a discovery host: the kubelet of each host
// that boots OpenShift (its Node, sim/internal/kubelet) and the assisted-installer-controller
// (openshift/assisted-installer src/assisted_installer_controller), which reports each node's
// remaining stages as it joins (PUT /v2/infra-envs/{id}/hosts/{id}/progress), uploads the
// ingress CA (POST /v2/clusters/{id}/uploads/ingress-cert), reports the monitored operators
// (PUT /v2/clusters/{id}/monitored-operators, subsystem/utils_test.go
// v2ReportMonitoredOperatorStatus) and completes the installation (POST
// /v2/clusters/{id}/actions/complete-installation). openshift-install's output, which
// DUMMY_IGNITION does not write, gets a stand-in: the workload API server's kubeconfig written as
// the cluster's kubeconfig-noingress in the service's storage.

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/openshift/assisted-service/models"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ign "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/internal/ignition"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/internal/kubelet"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/inventory"
)

// Cluster plays the installed clusters of the service's hosts.
type Cluster struct {
	// Workload is the API server of a cluster of the service, where its Nodes register.
	Workload func(ctx context.Context, c *models.Cluster) (client.Client, error)
	// Kubeconfig is the kubeconfig of a cluster's API server, the stand-in for openshift-install's
	// auth/kubeconfig; StorageDir is the service's storage (STORAGE=filesystem), where it goes.
	Kubeconfig func(ctx context.Context, c *models.Cluster) ([]byte, error)
	StorageDir string
	// KubernetesVersion is the kubelet version of a release image ("" when unknown).
	KubernetesVersion func(ctx context.Context, releaseImage string) (string, error)
	// OnInstalled runs once the cluster is finalizing, before the controller completes the
	// installation: what the release's operators write in the cluster (its ClusterVersion).
	OnInstalled func(ctx context.Context, c *models.Cluster, workload client.Client) error
	// PollInterval is how often the controller reads the cluster (default 1 s).
	PollInterval time.Duration
	Log          logr.Logger

	mu          sync.Mutex
	controllers map[string]*controller // cluster ID → its installer controller
	ingressCA   []byte
	wg          sync.WaitGroup
	cancel      []context.CancelFunc
}

// controller is the installer controller of one cluster.
type controller struct {
	api    *apiClient
	id     string
	mu     sync.Mutex
	booted map[string]bool // host IDs whose OpenShift runs
}

// Stop stops every controller and waits for them.
func (cl *Cluster) Stop() {
	cl.mu.Lock()
	for _, c := range cl.cancel {
		c()
	}
	cl.mu.Unlock()
	cl.wg.Wait()
}

func (cl *Cluster) interval() time.Duration {
	if cl.PollInterval == 0 {
		return time.Second
	}
	return cl.PollInterval
}

// nodeBooted: the host booted the OpenShift installed for inst: its kubelet registers its Node,
// and the cluster's installer controller reports its stages.
func (cl *Cluster) nodeBooted(ctx context.Context, h *inventory.Host, inst installation) {
	ctrl := cl.controllerOf(inst)
	for ctx.Err() == nil {
		err := cl.registerNode(ctx, h, inst)
		if err == nil {
			break
		}
		cl.Log.Info("The kubelet could not register its Node; it tries again", "host", h.Name, "reason", err.Error())
		sleep(ctx, cl.interval())
	}
	ctrl.mu.Lock()
	ctrl.booted[inst.hostID] = true
	ctrl.mu.Unlock()
}

// registerNode registers the host's Node as its kubelet does, with what the service installed:
// its hostname, role, node labels and, from the ignition config overrides the service merges
// into the host's ignition (which DUMMY_IGNITION leaves out of the files it writes), the
// kubelet's providerID.
func (cl *Cluster) registerNode(ctx context.Context, h *inventory.Host, inst installation) error {
	// The cluster's hosts, as the installer controller reads them (GET /v2/clusters/{id}, which
	// agent authentication may read; GET of a single host is user authentication's only).
	c, err := getCluster(ctx, inst.service, inst.cluster)
	if err != nil {
		return err
	}
	var host *models.Host
	for _, h := range c.Hosts {
		if h.ID != nil && h.ID.String() == inst.hostID {
			host = h
		}
	}
	if host == nil {
		return fmt.Errorf("the service's cluster %s has no host %s", inst.cluster, inst.hostID)
	}
	workload, err := cl.Workload(ctx, c)
	if err != nil {
		return err
	}
	n := kubelet.Node{Host: h, Name: h.Hostname, Labels: kubelet.RoleLabels(inst.role), BootID: fmt.Sprintf("%s-%d", inst.hostID, time.Now().UnixNano())}
	if host.RequestedHostname != "" {
		n.Name = host.RequestedHostname
	}
	if host.NodeLabels != "" {
		labels := map[string]string{}
		if err := json.Unmarshal([]byte(host.NodeLabels), &labels); err != nil {
			return fmt.Errorf("the host's node labels %q: %w", host.NodeLabels, err)
		}
		for k, v := range labels {
			n.Labels[k] = v
		}
	}
	if n.ProviderID, err = ign.KubeletProviderID(host.IgnitionConfigOverrides); err != nil {
		return err
	}
	for _, m := range c.MachineNetworks {
		n.MachineNetworks = append(n.MachineNetworks, string(m.Cidr))
	}
	if cl.KubernetesVersion != nil && c.OcpReleaseImage != "" {
		if n.KubeletVersion, err = cl.KubernetesVersion(ctx, c.OcpReleaseImage); err != nil {
			return err
		}
	}
	return kubelet.Register(ctx, workload, n, time.Now())
}

func getCluster(ctx context.Context, api *apiClient, id string) (*models.Cluster, error) {
	c := &models.Cluster{}
	if err := api.do(ctx, http.MethodGet, "/clusters/"+url.PathEscape(id), nil, nil, c); err != nil {
		return nil, err
	}
	return c, nil
}

// controllerOf starts the installer controller of the host's cluster if it is not running.
func (cl *Cluster) controllerOf(inst installation) *controller {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if cl.controllers == nil {
		cl.controllers = map[string]*controller{}
	}
	if c := cl.controllers[inst.cluster]; c != nil {
		return c
	}
	c := &controller{api: inst.service, id: inst.cluster, booted: map[string]bool{}}
	cl.controllers[inst.cluster] = c
	ctx, cancel := context.WithCancel(context.Background())
	cl.cancel = append(cl.cancel, cancel)
	cl.wg.Add(1)
	go func() {
		defer cl.wg.Done()
		cl.run(ctx, c)
		cl.mu.Lock()
		delete(cl.controllers, inst.cluster)
		cl.mu.Unlock()
	}()
	return c
}

// run reports the cluster's progress until it is installed, failed or gone.
func (cl *Cluster) run(ctx context.Context, ctrl *controller) {
	log := cl.Log.WithValues("cluster", ctrl.id)
	finalized := false
	for ctx.Err() == nil {
		c, err := getCluster(ctx, ctrl.api, ctrl.id)
		switch {
		case statusOf(err) == http.StatusNotFound:
			return
		case err != nil:
			log.V(1).Info("Reading the cluster failed", "reason", err.Error())
		default:
			status := ""
			if c.Status != nil {
				status = *c.Status
			}
			switch status {
			case models.ClusterStatusInstalled, models.ClusterStatusError, models.ClusterStatusCancelled, models.ClusterStatusAddingHosts:
				return
			}
			if err := cl.reportNodes(ctx, ctrl, c); err != nil {
				log.V(1).Info("Reporting a node's stage failed", "reason", err.Error())
			}
			if status == models.ClusterStatusFinalizing && !finalized {
				if err := cl.finalize(ctx, ctrl, c); err != nil {
					log.Info("Finalizing the installation failed; the controller tries again", "reason", err.Error())
				} else {
					finalized = true
				}
			}
		}
		sleep(ctx, cl.interval())
	}
}

// reportNodes reports the next stage of each host of c that runs OpenShift, one a pass.
func (cl *Cluster) reportNodes(ctx context.Context, ctrl *controller, c *models.Cluster) error {
	sno := c.HighAvailabilityMode != nil && *c.HighAvailabilityMode == models.ClusterHighAvailabilityModeNone
	for _, h := range c.Hosts {
		if h.ID == nil || h.Status == nil || *h.Status != models.HostStatusInstallingInProgress || h.Progress == nil {
			continue
		}
		ctrl.mu.Lock()
		booted := ctrl.booted[h.ID.String()]
		ctrl.mu.Unlock()
		if !booted {
			continue
		}
		role := h.Role
		if h.Bootstrap {
			role = models.HostRoleBootstrap
		}
		next := nodeStages(role, sno, h.Progress.CurrentStage)
		if len(next) == 0 {
			continue
		}
		path := "/infra-envs/" + url.PathEscape(h.InfraEnvID.String()) + "/hosts/" + url.PathEscape(h.ID.String()) + "/progress"
		if err := ctrl.api.do(ctx, http.MethodPut, path, nil, &models.HostProgress{CurrentStage: next[0]}, nil); err != nil {
			return err
		}
	}
	return nil
}

// finalize is the controller's end of the installation: the kubeconfig (openshift-install's
// stand-in), the ingress CA, the monitored operators available, the cluster's own objects, and
// complete-installation.
func (cl *Cluster) finalize(ctx context.Context, ctrl *controller, c *models.Cluster) error {
	if cl.Kubeconfig != nil && cl.StorageDir != "" {
		kc, err := cl.Kubeconfig(ctx, c)
		if err != nil {
			return err
		}
		dir := filepath.Join(cl.StorageDir, ctrl.id)
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "kubeconfig-noingress"), kc, 0o600); err != nil {
			return fmt.Errorf("writing the cluster's kubeconfig-noingress: %w", err)
		}
	}
	ca, err := cl.ingressCAPEM()
	if err != nil {
		return err
	}
	if err := ctrl.api.do(ctx, http.MethodPost, "/clusters/"+url.PathEscape(ctrl.id)+"/uploads/ingress-cert", nil, models.IngressCertParams(ca), nil); err != nil {
		return err
	}
	var ops models.MonitoredOperatorsList
	if err := ctrl.api.do(ctx, http.MethodGet, "/clusters/"+url.PathEscape(ctrl.id)+"/monitored-operators", nil, nil, &ops); err != nil {
		return err
	}
	for _, op := range ops {
		report := &models.OperatorMonitorReport{Name: op.Name, Status: models.OperatorStatusAvailable, StatusInfo: "Available", Version: c.OpenshiftVersion}
		if err := ctrl.api.do(ctx, http.MethodPut, "/clusters/"+url.PathEscape(ctrl.id)+"/monitored-operators", nil, report, nil); err != nil {
			return err
		}
	}
	if cl.OnInstalled != nil {
		workload, err := cl.Workload(ctx, c)
		if err != nil {
			return err
		}
		if err := cl.OnInstalled(ctx, c, workload); err != nil {
			return err
		}
	}
	ok := true
	return ctrl.api.do(ctx, http.MethodPost, "/clusters/"+url.PathEscape(ctrl.id)+"/actions/complete-installation", nil,
		&models.CompletionParams{IsSuccess: &ok}, nil)
}

// waitForControlPlane is the bootstrap host's wait for the control plane: two masters'
// Nodes Ready (fewer when the cluster has fewer other masters).
func (cl *Cluster) waitForControlPlane(ctx context.Context, api *apiClient, clusterID string, interval time.Duration) error {
	for {
		if ready, err := cl.controlPlaneReady(ctx, api, clusterID); err == nil && ready {
			return nil
		}
		sleep(ctx, interval)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

func (cl *Cluster) controlPlaneReady(ctx context.Context, api *apiClient, clusterID string) (bool, error) {
	c, err := getCluster(ctx, api, clusterID)
	if err != nil {
		return false, err
	}
	workload, err := cl.Workload(ctx, c)
	if err != nil {
		return false, err
	}
	want, ready := 0, 0
	for _, h := range c.Hosts {
		if h.Role != models.HostRoleMaster || h.Bootstrap {
			continue
		}
		want++
		name := h.RequestedHostname
		if name == "" {
			inv := models.Inventory{}
			if json.Unmarshal([]byte(h.Inventory), &inv) == nil {
				name = inv.Hostname
			}
		}
		node := &corev1.Node{}
		if workload.Get(ctx, client.ObjectKey{Name: name}, node) != nil {
			continue
		}
		for _, cond := range node.Status.Conditions {
			if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
				ready++
			}
		}
	}
	return ready >= min(2, want), nil
}

// ingressCAPEM is the router's CA (one for every cluster of the lab).
func (cl *Cluster) ingressCAPEM() (string, error) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if cl.ingressCA != nil {
		return string(cl.ingressCA), nil
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ingress-operator@lab"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return "", err
	}
	cl.ingressCA = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	return string(cl.ingressCA), nil
}
