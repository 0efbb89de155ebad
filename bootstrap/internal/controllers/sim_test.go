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
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	capm3v1beta2 "github.com/metal3-io/cluster-api-provider-metal3/api/v1beta2"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	"github.com/openshift/assisted-service/models"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/testenv"
)

// sim is a small stand-in, for these tests only, for what surrounds the bootstrap provider:
//   - assisted-service: an InfraEnv gets an ISO URL (which changes when the InfraEnv is
//     re-created); a host that boots it registers an Agent with an inventory, bound to the
//     InfraEnv's ClusterDeployment; an approved Agent starts installing.
//   - Cluster API's Machine controller: it copies a config's dataSecretName to its Machine.
//   - CAPM3: once a Machine has bootstrap data, it associates a free BareMetalHost with the
//     Machine's Metal3Machine and gives the host the Metal3Machine's image.
//   - a BareMetalHost: a host whose image is an InfraEnv's ISO boots it.
//
// It polls every namespace that is not "gone" (where assisted-service, CAPM3 and the hosts have
// disappeared).
type sim struct {
	c client.Client

	mu sync.Mutex
	// gone are namespaces where nothing is simulated any more.
	gone map[string]bool
	// provisionedWith records, per BareMetalHost (namespace/name), the Metal3Machine image URL
	// and format at the moment CAPM3 associated the host.
	provisionedWith map[string]capm3v1beta2.Image
	// newerCRD are namespaces whose Agents register with the spec fields of a newer
	// assisted-service (testenv.NewerAgentSpecFields), as a hub with a newer Agent CRD has them.
	newerCRD map[string]bool
	// staleToken are namespaces whose InfraEnvs publish a token that assisted-service refuses.
	staleToken map[string]bool
	// service is assisted-service's REST API: it serves discovery ignitions to the holder of an
	// InfraEnv's token, which the InfraEnv's events URL carries.
	service *httptest.Server
}

func newSim(c client.Client) *sim {
	s := &sim{c: c, gone: map[string]bool{}, provisionedWith: map[string]capm3v1beta2.Image{}, newerCRD: map[string]bool{}, staleToken: map[string]bool{}}
	s.service = httptest.NewTLSServer(http.HandlerFunc(s.serveFiles))
	return s
}

// serviceToken is the token of the InfraEnv whose ID (assisted-service's, the UID here) is id.
func serviceToken(id string) string { return "token-of-" + id }

// eventsURL is the events URL of the InfraEnv whose ID is id, carrying token.
func (s *sim) eventsURL(id, token string) string {
	return fmt.Sprintf("%s/api/assisted-install/v2/events?api_key=%s&infra_env_id=%s", s.service.URL, token, id)
}

// serveFiles serves GET /api/assisted-install/v2/infra-envs/{id}/downloads/files?file_name=discovery.ign
// to the InfraEnv's token: a discovery ignition whose agent.service registers with that InfraEnv.
func (s *sim) serveFiles(w http.ResponseWriter, r *http.Request) {
	id, ok := strings.CutPrefix(r.URL.Path, "/api/assisted-install/v2/infra-envs/")
	id, ok2 := strings.CutSuffix(id, "/downloads/files")
	switch {
	case !ok || !ok2:
		http.NotFound(w, r)
	case r.URL.Query().Get("api_key") != serviceToken(id):
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	case r.URL.Query().Get("file_name") != "discovery.ign":
		http.Error(w, "unknown file", http.StatusBadRequest)
	default:
		unit := map[string]any{"name": "agent.service", "enabled": true,
			"contents": "[Service]\nExecStart=/usr/local/bin/agent --url " + s.service.URL + " --infra-env-id " + id + "\n"}
		ign, err := json.Marshal(map[string]any{"ignition": map[string]any{"version": "3.1.0"}, "systemd": map[string]any{"units": []any{unit}}})
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = w.Write(ign)
	}
}

// registersWith is the InfraEnv ID that the discovery agent of an Ignition config (the bootstrap
// data of a host that boots a disk image) registers with: the agent.service of a config it merges.
func registersWith(data []byte) string {
	var ign struct {
		Ignition struct {
			Config struct {
				Merge []struct {
					Source string `json:"source"`
				} `json:"merge"`
			} `json:"config"`
		} `json:"ignition"`
	}
	if json.Unmarshal(data, &ign) != nil {
		return ""
	}
	for _, m := range ign.Ignition.Config.Merge {
		encoded, ok := strings.CutPrefix(m.Source, "data:;base64,")
		if !ok {
			continue
		}
		child, err := base64.StdEncoding.DecodeString(encoded)
		if err != nil {
			continue
		}
		if _, rest, ok := strings.Cut(string(child), "--infra-env-id "); ok {
			id, _, _ := strings.Cut(rest, `\n`)
			return id
		}
	}
	return ""
}

func (s *sim) setGone(ns string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gone[ns] = true
}

func (s *sim) setNewerCRD(ns string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.newerCRD[ns] = true
}

func (s *sim) setStaleToken(ns string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.staleToken[ns] = true
}

// tokenFor is the token an InfraEnv publishes.
func (s *sim) tokenFor(ie *aiv1beta1.InfraEnv) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.staleToken[ie.Namespace] {
		return "stale-token"
	}
	return serviceToken(string(ie.UID))
}

func (s *sim) isNewerCRD(ns string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.newerCRD[ns]
}

func (s *sim) isGone(ns string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gone[ns]
}

func (s *sim) imageAtProvisioning(bmh client.ObjectKey) (capm3v1beta2.Image, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	img, ok := s.provisionedWith[bmh.String()]
	return img, ok
}

// run polls until ctx is done.
func (s *sim) run(ctx context.Context) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			for _, step := range []func(context.Context) error{s.serveISOs, s.copyDataSecretNames, s.associateHosts, s.bootHosts, s.install} {
				if err := step(ctx); err != nil && ctx.Err() == nil {
					fmt.Println("sim:", err)
				}
			}
		}
	}
}

func (s *sim) serveISOs(ctx context.Context) error {
	list := &aiv1beta1.InfraEnvList{}
	if err := s.c.List(ctx, list); err != nil {
		return err
	}
	for i := range list.Items {
		ie := &list.Items[i]
		if s.isGone(ie.Namespace) || ie.Status.ISODownloadURL != "" || !ie.DeletionTimestamp.IsZero() {
			continue
		}
		ie.Status.ISODownloadURL = fmt.Sprintf("https://assisted.example/images/%s/discovery.iso", ie.UID)
		ie.Status.InfraEnvDebugInfo.EventsURL = s.eventsURL(string(ie.UID), s.tokenFor(ie))
		ie.Status.CreatedTime = ptr.To(metav1.Now())
		if err := s.c.Status().Update(ctx, ie); err != nil {
			return err
		}
	}
	return nil
}

func (s *sim) copyDataSecretNames(ctx context.Context) error {
	list := &bootstrapv1.OpenshiftAssistedConfigList{}
	if err := s.c.List(ctx, list); err != nil {
		return err
	}
	for i := range list.Items {
		cfg := &list.Items[i]
		if s.isGone(cfg.Namespace) || cfg.Status.DataSecretName == "" {
			continue
		}
		for _, ref := range cfg.OwnerReferences {
			if ref.Kind != "Machine" {
				continue
			}
			m := &clusterv1.Machine{}
			if err := s.c.Get(ctx, client.ObjectKey{Namespace: cfg.Namespace, Name: ref.Name}, m); err != nil {
				return client.IgnoreNotFound(err)
			}
			if ptr.Deref(m.Spec.Bootstrap.DataSecretName, "") == cfg.Status.DataSecretName {
				continue
			}
			before := m.DeepCopy()
			m.Spec.Bootstrap.DataSecretName = ptr.To(cfg.Status.DataSecretName)
			if err := s.c.Patch(ctx, m, client.MergeFrom(before)); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *sim) associateHosts(ctx context.Context) error {
	list := &capm3v1beta2.Metal3MachineList{}
	if err := s.c.List(ctx, list); err != nil {
		return err
	}
	for i := range list.Items {
		m3m := &list.Items[i]
		if s.isGone(m3m.Namespace) || m3m.Annotations["metal3.io/BareMetalHost"] != "" {
			continue
		}
		m := &clusterv1.Machine{}
		if err := s.c.Get(ctx, client.ObjectKey{Namespace: m3m.Namespace, Name: m3m.Name}, m); err != nil {
			return client.IgnoreNotFound(err)
		}
		if m.Spec.Bootstrap.DataSecretName == nil {
			continue // CAPM3 waits for bootstrap data.
		}
		hosts := &bmov1alpha1.BareMetalHostList{}
		selector := labels.Everything()
		if m3m.Spec.HostSelector != nil {
			selector = labels.SelectorFromSet(m3m.Spec.HostSelector.MatchLabels)
		}
		if err := s.c.List(ctx, hosts, client.InNamespace(m3m.Namespace), client.MatchingLabelsSelector{Selector: selector}); err != nil {
			return err
		}
		for j := range hosts.Items {
			bmh := &hosts.Items[j]
			if bmh.Spec.ConsumerRef != nil {
				continue
			}
			bmh.Spec.ConsumerRef = &corev1.ObjectReference{APIVersion: capm3v1beta2.GroupVersion.String(), Kind: "Metal3Machine", Namespace: m3m.Namespace, Name: m3m.Name}
			bmh.Spec.Image = &bmov1alpha1.Image{URL: m3m.Spec.Image.URL, DiskFormat: ptr.To(m3m.Spec.Image.DiskFormat)}
			bmh.Spec.UserData = &corev1.SecretReference{Namespace: m.Namespace, Name: *m.Spec.Bootstrap.DataSecretName}
			bmh.Spec.Online = true
			if err := s.c.Update(ctx, bmh); err != nil {
				return err
			}
			// Recorded once the host is provisioning with it, which is what tests then read.
			s.mu.Lock()
			s.provisionedWith[client.ObjectKeyFromObject(bmh).String()] = m3m.Spec.Image
			s.mu.Unlock()
			before := m3m.DeepCopy()
			if m3m.Annotations == nil {
				m3m.Annotations = map[string]string{}
			}
			m3m.Annotations["metal3.io/BareMetalHost"] = bmh.Namespace + "/" + bmh.Name
			if err := s.c.Patch(ctx, m3m, client.MergeFrom(before)); err != nil {
				return err
			}
			break
		}
	}
	return nil
}

// bootHosts makes every BareMetalHost whose image is an InfraEnv's ISO register its Agent; CAPM3
// keeps the host's image in step with the Metal3Machine's.
func (s *sim) bootHosts(ctx context.Context) error {
	hosts := &bmov1alpha1.BareMetalHostList{}
	if err := s.c.List(ctx, hosts); err != nil {
		return err
	}
	for i := range hosts.Items {
		bmh := &hosts.Items[i]
		if s.isGone(bmh.Namespace) || bmh.Spec.ConsumerRef == nil || bmh.Spec.Image == nil {
			continue
		}
		m3m := &capm3v1beta2.Metal3Machine{}
		if err := s.c.Get(ctx, client.ObjectKey{Namespace: bmh.Namespace, Name: bmh.Spec.ConsumerRef.Name}, m3m); err != nil {
			return client.IgnoreNotFound(err)
		}
		if m3m.Spec.Image.URL != bmh.Spec.Image.URL {
			bmh.Spec.Image.URL = m3m.Spec.Image.URL
			if err := s.c.Update(ctx, bmh); err != nil {
				return err
			}
		}
		if ptr.Deref(bmh.Spec.Image.DiskFormat, "") != capm3v1beta2.LiveIsoDiskFormat {
			if err := s.bootDisk(ctx, bmh); err != nil {
				return err
			}
			continue
		}
		if err := s.boot(ctx, bmh.Namespace, "agent-"+bmh.Name, bmh.Spec.BootMACAddress, bmh.Spec.Image.URL); err != nil {
			return err
		}
	}
	return nil
}

// boot registers the Agent of a host with MAC address mac that booted the ISO at isoURL (once).
func (s *sim) boot(ctx context.Context, ns, agentName, mac, isoURL string) error {
	ies := &aiv1beta1.InfraEnvList{}
	if err := s.c.List(ctx, ies, client.InNamespace(ns)); err != nil {
		return err
	}
	for i := range ies.Items {
		ie := &ies.Items[i]
		if ie.Status.ISODownloadURL == "" || ie.Status.ISODownloadURL != isoURL {
			continue
		}
		agent := &aiv1beta1.Agent{}
		err := s.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: agentName}, agent)
		if err == nil || client.IgnoreNotFound(err) != nil {
			return err
		}
		return s.register(ctx, ie, agentName, mac)
	}
	return nil
}

// bootDisk registers (once) the Agent of a host that boots a disk image: with the InfraEnv its
// bootstrap data's discovery agent names.
func (s *sim) bootDisk(ctx context.Context, bmh *bmov1alpha1.BareMetalHost) error {
	if bmh.Spec.UserData == nil {
		return nil
	}
	data := &corev1.Secret{}
	if err := s.c.Get(ctx, client.ObjectKey{Namespace: bmh.Namespace, Name: bmh.Spec.UserData.Name}, data); err != nil {
		return client.IgnoreNotFound(err)
	}
	id := registersWith(data.Data["value"])
	if id == "" {
		return nil
	}
	ies := &aiv1beta1.InfraEnvList{}
	if err := s.c.List(ctx, ies, client.InNamespace(bmh.Namespace)); err != nil {
		return err
	}
	for i := range ies.Items {
		ie := &ies.Items[i]
		if string(ie.UID) != id {
			continue
		}
		agentName := "agent-" + bmh.Name
		err := s.c.Get(ctx, client.ObjectKey{Namespace: ie.Namespace, Name: agentName}, &aiv1beta1.Agent{})
		if err == nil || client.IgnoreNotFound(err) != nil {
			return err
		}
		return s.register(ctx, ie, agentName, bmh.Spec.BootMACAddress)
	}
	return nil
}

// register creates an Agent registered through ie for a host with MAC address mac.
func (s *sim) register(ctx context.Context, ie *aiv1beta1.InfraEnv, agentName, mac string) error {
	agent := &aiv1beta1.Agent{
		ObjectMeta: metav1.ObjectMeta{Namespace: ie.Namespace, Name: agentName,
			Labels: map[string]string{aiv1beta1.InfraEnvNameLabel: ie.Name}},
		Spec: aiv1beta1.AgentSpec{Role: models.HostRoleAutoAssign},
	}
	if ie.Spec.ClusterRef != nil {
		agent.Spec.ClusterDeploymentName = &aiv1beta1.ClusterReference{Name: ie.Spec.ClusterRef.Name, Namespace: ie.Spec.ClusterRef.Namespace}
	}
	if err := s.c.Create(ctx, agent); err != nil {
		return err
	}
	if s.isNewerCRD(ie.Namespace) {
		// Set before the inventory is reported, so before the provider can match the Agent.
		patch, err := json.Marshal(map[string]any{"spec": testenv.NewerAgentSpec(nil)})
		if err != nil {
			return err
		}
		if err := s.c.Patch(ctx, agent, client.RawPatch(types.MergePatchType, patch)); err != nil {
			return err
		}
	}
	agent.Status = aiv1beta1.AgentStatus{
		Role: models.HostRoleAutoAssign,
		Inventory: aiv1beta1.HostInventory{
			Hostname: strings.ReplaceAll(mac, ":", ""),
			Interfaces: []aiv1beta1.HostInterface{{Name: "eth0", MacAddress: mac,
				IPV4Addresses: []string{"192.168.111.10/24"}, IPV6Addresses: []string{}, Flags: []string{"up"}}},
			Disks: []aiv1beta1.HostDisk{
				{ID: "/dev/disk/by-id/sda", Name: "sda", Path: "/dev/sda", SizeBytes: 120e9, DriveType: "HDD",
					InstallationEligibility: aiv1beta1.HostInstallationEligibility{Eligible: true, NotEligibleReasons: []string{}}},
				{ID: "/dev/disk/by-id/sdb", Name: "sdb", Path: "/dev/sdb", SizeBytes: 480e9, DriveType: "SSD",
					InstallationEligibility: aiv1beta1.HostInstallationEligibility{Eligible: true, NotEligibleReasons: []string{}}},
			},
		},
		DebugInfo: aiv1beta1.DebugInfo{State: models.HostStatusKnown, StateInfo: "Host is ready to be installed"},
	}
	return s.c.Status().Update(ctx, agent)
}

// install starts installing every approved Agent that assisted-service knows.
func (s *sim) install(ctx context.Context) error {
	list := &aiv1beta1.AgentList{}
	if err := s.c.List(ctx, list); err != nil {
		return err
	}
	for i := range list.Items {
		a := &list.Items[i]
		if s.isGone(a.Namespace) || !a.Spec.Approved || a.Status.DebugInfo.State != models.HostStatusKnown {
			continue
		}
		a.Status.Role = a.Spec.Role
		a.Status.DebugInfo.State = models.HostStatusInstallingInProgress
		a.Status.DebugInfo.StateInfo = "Writing image to disk"
		a.Status.Progress = aiv1beta1.HostProgressInfo{CurrentStage: models.HostStageWritingImageToDisk, InstallationPercentage: 40}
		if err := s.c.Status().Update(ctx, a); err != nil {
			return err
		}
	}
	return nil
}
