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

package simtest

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	. "github.com/onsi/gomega"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	"github.com/openshift/assisted-service/models"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/inventory"
)

const rhcosMirror = "https://mirror.lab.sim/pub/openshift-v4/x86_64/dependencies/rhcos/4.20/4.20.0/"

// apiClient is an HTTPS client of the assisted-service simulator's REST API that trusts only its
// CA, as the bootstrap provider's does.
func apiClient(g Gomega) *http.Client {
	pool := x509.NewCertPool()
	g.Expect(pool.AppendCertsFromPEM(sim.CACertPEM())).To(BeTrue(), "the simulator's CA is PEM")
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
}

// filesURL is the URL of the InfraEnv file name on the REST API, for the infra_env_id id and the
// api_key key ("" leaves a parameter out).
func filesURL(id, name, key string) string {
	q := url.Values{}
	if name != "" {
		q.Set("file_name", name)
	}
	if key != "" {
		q.Set("api_key", key)
	}
	return fmt.Sprintf("%s/api/assisted-install/v2/infra-envs/%s/downloads/files?%s", sim.ServiceURL(), id, q.Encode())
}

// eventsKey is the api_key and the infra_env_id of the InfraEnv's events URL, where the bootstrap
// provider takes them from.
func eventsKey(g Gomega, ie *aiv1beta1.InfraEnv) (key, id string) {
	u, err := url.Parse(ie.Status.InfraEnvDebugInfo.EventsURL)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ie.Status.InfraEnvDebugInfo.EventsURL).To(HavePrefix(sim.ServiceURL() + "/api/assisted-install/v2/events?api_key="))
	return u.Query().Get("api_key"), u.Query().Get("infra_env_id")
}

// get GETs u and returns the answer's status, headers and body.
func get(g Gomega, c *http.Client, u string) (int, http.Header, []byte) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	g.Expect(err).NotTo(HaveOccurred())
	resp, err := c.Do(req)
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	g.Expect(err).NotTo(HaveOccurred())
	return resp.StatusCode, resp.Header, body
}

// discoveryIgnition downloads the InfraEnv's discovery ignition as the bootstrap provider does.
func discoveryIgnition(g Gomega, ie *aiv1beta1.InfraEnv) []byte {
	key, id := eventsKey(g, ie)
	status, header, body := get(g, apiClient(g), filesURL(id, "discovery.ign", key))
	g.Expect(status).To(Equal(http.StatusOK), string(body))
	g.Expect(header.Get("Content-Type")).To(Equal("application/octet-stream"))
	g.Expect(header.Get("Content-Disposition")).To(Equal(`attachment; filename="discovery.ign"`))
	return body
}

// TestDiscoveryIgnitionDownload: the REST API serves an InfraEnv's discovery ignition, shaped as
// assisted-service's, for the token of the InfraEnv's events URL, and refuses, as
// assisted-service's local authentication does, requests without it or with another one.
func TestDiscoveryIgnitionDownload(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t, "discovery-ign")
	const pullSecret = `{"auths":{"quay.io":{"auth":"c2VjcmV0"}}}`
	g.Expect(mgmt.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pull-secret"},
		Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(pullSecret)}})).To(Succeed())
	ie := createInfraEnv(t, g, ns, "a", nil)
	other := createInfraEnv(t, g, ns, "b", nil)
	for _, obj := range []*aiv1beta1.InfraEnv{ie, other} {
		base := obj.DeepCopy()
		obj.Spec.SSHAuthorizedKey = "ssh-ed25519 AAAA lab\n\nssh-rsa BBBB lab2\n"
		g.Expect(mgmt.Client.Patch(ctx, obj, client.MergeFrom(base))).To(Succeed())
	}
	key, id := eventsKey(g, ie)
	g.Expect(id).To(Equal(string(ie.UID)))
	otherKey, _ := eventsKey(g, other)
	g.Expect(otherKey).NotTo(Equal(key))

	c := apiClient(g)
	for _, tc := range []struct {
		name, url string
		want      int
		message   string
	}{
		{name: "no api_key", url: filesURL(id, "discovery.ign", ""), want: http.StatusUnauthorized, message: "unauthenticated for invalid credentials"},
		{name: "a made-up api_key", url: filesURL(id, "discovery.ign", "eyJhbGciOiJFUzI1NiJ9.e30.AAAA"), want: http.StatusUnauthorized},
		{name: "a forged signature", url: filesURL(id, "discovery.ign", key[:strings.LastIndex(key, ".")]+"."+strings.Repeat("A", 86)),
			want: http.StatusUnauthorized},
		{name: "another InfraEnv's api_key", url: filesURL(id, "discovery.ign", otherKey), want: http.StatusNotFound, message: "Object Not Found"},
		{name: "an unknown InfraEnv", url: filesURL("00000000-0000-4000-8000-000000000000", "discovery.ign", key), want: http.StatusNotFound},
		{name: "an unknown file", url: filesURL(id, "kubeconfig", key), want: http.StatusBadRequest,
			message: "file_name in query should be one of [discovery.ign ipxe-script static-network-config]"},
		{name: "no file name", url: filesURL(id, "", key), want: http.StatusBadRequest, message: "file_name in query is required"},
		{name: "the iPXE script", url: filesURL(id, "ipxe-script", key), want: http.StatusOK},
		{name: "the discovery ignition", url: filesURL(id, "discovery.ign", key), want: http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			status, header, body := get(g, c, tc.url)
			g.Expect(status).To(Equal(tc.want), string(body))
			if tc.want == http.StatusOK {
				return
			}
			g.Expect(header.Get("Content-Type")).To(Equal("application/json"))
			var e struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			}
			g.Expect(json.Unmarshal(body, &e)).To(Succeed())
			g.Expect(e.Code).To(Equal(tc.want))
			if tc.message != "" {
				g.Expect(e.Message).To(Equal(tc.message))
			}
			g.Expect(string(body)).NotTo(ContainSubstring(key), "an error never echoes the token")
		})
	}

	ign := discoveryIgnition(g, ie)
	var cfg struct {
		Ignition struct{ Version string } `json:"ignition"`
		Passwd   struct {
			Users []struct {
				Name              string   `json:"name"`
				SSHAuthorizedKeys []string `json:"sshAuthorizedKeys"`
			} `json:"users"`
		} `json:"passwd"`
		Systemd struct {
			Units []struct {
				Name     string `json:"name"`
				Enabled  bool   `json:"enabled"`
				Contents string `json:"contents"`
			} `json:"units"`
		} `json:"systemd"`
		Storage struct {
			Files []struct {
				Path     string `json:"path"`
				Contents struct {
					Source string `json:"source"`
				} `json:"contents"`
			} `json:"files"`
		} `json:"storage"`
	}
	g.Expect(json.Unmarshal(ign, &cfg)).To(Succeed())
	g.Expect(cfg.Ignition.Version).To(Equal("3.1.0"))
	g.Expect(cfg.Passwd.Users).To(HaveLen(1))
	g.Expect(cfg.Passwd.Users[0].Name).To(Equal("core"))
	g.Expect(cfg.Passwd.Users[0].SSHAuthorizedKeys).To(Equal([]string{"ssh-ed25519 AAAA lab", "ssh-rsa BBBB lab2"}))
	g.Expect(cfg.Systemd.Units).NotTo(BeEmpty())
	agent := cfg.Systemd.Units[0]
	g.Expect(agent.Name).To(Equal("agent.service"))
	g.Expect(agent.Enabled).To(BeTrue())
	g.Expect(agent.Contents).To(MatchRegexp(`(?m)^ExecStart=/usr/local/bin/agent --url %s --infra-env-id %s --agent-version \S+ --insecure=false `,
		strings.ReplaceAll(sim.ServiceURL(), ".", `\.`), ie.UID))
	g.Expect(agent.Contents).To(MatchRegexp(`(?m)^Environment=PULL_SECRET_TOKEN=\S+\.\S+\.\S+$`))
	files := map[string]string{}
	for _, f := range cfg.Storage.Files {
		files[f.Path] = f.Contents.Source
	}
	g.Expect(files).To(HaveKeyWithValue("/root/.docker/config.json", "data:,"+url.PathEscape(pullSecret)))
	g.Expect(files).To(HaveKeyWithValue("/etc/assisted-service/service-ca-cert.crt",
		"data:text/plain;charset=utf-8;base64,"+base64.StdEncoding.EncodeToString(sim.CACertPEM())))

	// While the service is down, its route answers 503.
	sim.SetAvailable(false)
	status, _, _ := get(g, c, filesURL(id, "discovery.ign", key))
	sim.SetAvailable(true)
	g.Expect(status).To(Equal(http.StatusServiceUnavailable))
}

// TestDiskImageDiscovery installs single-node clusters on BareMetalHosts provisioned with an
// RHCOS disk image whose user data (the bootstrap data Secret's value) merges the discovery
// ignition downloaded from the REST API, as the bootstrap provider's image-based flow writes it:
// the host boots the image from its disk, Ignition reads the config drive and the discovery agent
// registers in the InfraEnv, and once approved the host is installed to its existing root and
// runs OpenShift from its disk. A metal image reads no config drive: nothing registers.
func TestDiskImageDiscovery(t *testing.T) {
	ns := newNamespace(t, "diskimage")
	for _, tc := range []struct {
		name  string
		image string
		mode  bmov1alpha1.BootMode
		// merge is the source of the ignition.config.merge entry holding the discovery ignition.
		merge     func(ign []byte) string
		registers bool
	}{
		{name: "openstack-uefi", image: "rhcos-4.20.0-x86_64-openstack.x86_64.qcow2", mode: bmov1alpha1.UEFI,
			merge: func(ign []byte) string { return "data:;base64," + base64.StdEncoding.EncodeToString(ign) }, registers: true},
		// A legacy BIOS: Ironic sets the disk to boot, and the installer changes no boot order.
		{name: "nutanix-legacy", image: "rhcos-4.20.0-x86_64-nutanix.x86_64.qcow2", mode: bmov1alpha1.Legacy,
			merge: func(ign []byte) string { return "data:," + url.PathEscape(string(ign)) }, registers: true},
		{name: "metal", image: "rhcos-4.20.0-x86_64-metal.x86_64.raw.gz", mode: bmov1alpha1.UEFI,
			merge: func(ign []byte) string { return "data:;base64," + base64.StdEncoding.EncodeToString(ign) }},
		// The Ignition config refers to the discovery ignition on the service: the lab's hosts
		// reach no server, so Ignition fails.
		{name: "https-reference", image: "rhcos-4.20.0-x86_64-openstack.x86_64.qcow2", mode: bmov1alpha1.UEFI,
			merge: func([]byte) string { return rhcosMirror + "discovery.ign" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			host := inventory.Generate("diskimage-"+tc.name+"-"+ns, 1, inventory.GenerateOptions{})[0]
			inv.Add(host)
			cd, _ := createCluster(g, ns, tc.name, 1, 0)
			ie := createInfraEnv(t, g, ns, tc.name, &aiv1beta1.ClusterReference{Name: cd.Name, Namespace: ns})
			userData, err := json.Marshal(map[string]any{"ignition": map[string]any{"version": "3.1.0",
				"config": map[string]any{"merge": []map[string]string{{"source": tc.merge(discoveryIgnition(g, ie))}}}}})
			g.Expect(err).NotTo(HaveOccurred())
			// The bootstrap data Secret, as Cluster API's bootstrap providers write it.
			secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: tc.name + "-bootstrap"},
				Data: map[string][]byte{"value": userData, "format": []byte("ignition")}}
			g.Expect(mgmt.Client.Create(ctx, secret)).To(Succeed())
			bmh := host.BareMetalHost(ns, "bmc-credentials")
			bmh.Spec.BootMode = tc.mode
			bmh.Spec.Image = &bmov1alpha1.Image{URL: rhcosMirror + tc.image, Checksum: rhcosMirror + "sha256sum.txt",
				ChecksumType: bmov1alpha1.SHA256, DiskFormat: ptr.To("qcow2")}
			bmh.Spec.UserData = &corev1.SecretReference{Name: secret.Name, Namespace: ns}
			g.Expect(mgmt.Client.Create(ctx, bmh)).To(Succeed())
			g.Eventually(func(g Gomega) {
				g.Expect(mgmt.Client.Get(ctx, client.ObjectKeyFromObject(bmh), bmh)).To(Succeed())
				g.Expect(bmh.Status.Provisioning.State).To(Equal(bmov1alpha1.StateProvisioned))
				image, data := host.RunningDiskImage()
				g.Expect(image).To(Equal(bmh.Spec.Image.URL), "the host runs the image from its disk")
				g.Expect(data).To(Equal(userData), "its config drive holds the user data")
			}, timeout).Should(Succeed())

			if !tc.registers {
				g.Consistently(func(g Gomega) {
					agents := &aiv1beta1.AgentList{}
					g.Expect(mgmt.Client.List(ctx, agents, client.InNamespace(ns),
						client.MatchingLabels{aiv1beta1.InfraEnvNameLabel: ie.Name})).To(Succeed())
					g.Expect(agents.Items).To(BeEmpty())
				}, "2s").Should(Succeed())
				return
			}
			g.Eventually(func(g Gomega) {
				a := agentOf(g, ns, host)
				g.Expect(a.Labels).To(HaveKeyWithValue(aiv1beta1.InfraEnvNameLabel, ie.Name))
				g.Expect(a.Spec.ClusterDeploymentName.Name).To(Equal(cd.Name))
				g.Expect(a.Status.DebugInfo.EventsURL).To(HavePrefix(sim.ServiceURL() + "/api/assisted-install/v2/events?api_key="))
				g.Expect(a.Status.DebugInfo.EventsURL).To(HaveSuffix("&host_id=" + a.Name))
			}, timeout).Should(Succeed())
			approve(g, ns, []*inventory.Host{host}, models.HostRoleMaster)
			g.Eventually(func(g Gomega) {
				g.Expect(agentOf(g, ns, host).Status.DebugInfo.State).To(Equal(models.HostStatusInstalled))
			}, timeout).Should(Succeed())
			g.Expect(host.RunsDisk()).To(BeTrue(), "the installed host runs OpenShift from its disk")
			image, _ := host.RunningDiskImage()
			g.Expect(image).To(BeEmpty(), "OpenShift replaced the discovery system")
			g.Expect(host.Running()).To(BeEmpty())
		})
	}
}

// TestDiskImageWithoutChecksum: BMO refuses an image without a checksum (but a live ISO's): the
// host is not provisioned and says why.
func TestDiskImageWithoutChecksum(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t, "nochecksum")
	host := inventory.Generate("nochecksum-"+ns, 1, inventory.GenerateOptions{})[0]
	inv.Add(host)
	bmh := host.BareMetalHost(ns, "bmc-credentials")
	bmh.Spec.Image = &bmov1alpha1.Image{URL: rhcosMirror + "rhcos-4.20.0-x86_64-openstack.x86_64.qcow2", DiskFormat: ptr.To("qcow2")}
	g.Expect(mgmt.Client.Create(ctx, bmh)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(mgmt.Client.Get(ctx, client.ObjectKeyFromObject(bmh), bmh)).To(Succeed())
		// Refused where the image is first taken up: after inspection, in preparing (the real
		// BMO refuses it at admission already; the simulator's lab runs no BMO webhook).
		g.Expect(bmh.Status.Provisioning.State).To(Equal(bmov1alpha1.StatePreparing))
		g.Expect(bmh.Status.ErrorType).To(Equal(bmov1alpha1.ProvisioningError))
		g.Expect(bmh.Status.ErrorMessage).To(Equal("checksum is required for normal images"))
		g.Expect(bmh.Status.OperationalStatus).To(Equal(bmov1alpha1.OperationalStatusError))
	}, timeout).Should(Succeed())
	image, _ := host.RunningDiskImage()
	g.Expect(image).To(BeEmpty())
}
