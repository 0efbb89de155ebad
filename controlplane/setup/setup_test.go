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

package setup_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/controlplane/setup"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/foreign"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/pki"
)

// TestNewManagerOptions: the control-plane manager follows the hub's TLS profile, has its own
// leader election Lease, caches only the Secrets labelled with a cluster name, and keeps the
// managed fields of the ClusterDeployments and AgentClusterInstalls.
func TestNewManagerOptions(t *testing.T) {
	g := NewWithT(t)
	o := setup.NewManagerOptions()
	g.Expect(o.LeaderElectionID).To(Equal("capoa-controlplane-leader-election"))
	g.Expect(o.FollowTLSProfile).To(BeTrue())
	g.Expect(o.WebhookRequestClientCert).To(BeTrue(), "the runtime extension's hooks verify Cluster API's client certificate")
	g.Expect(o.CacheByObject).To(HaveLen(3))
	for obj, by := range o.CacheByObject {
		switch obj.(type) {
		case *corev1.Secret:
			g.Expect(by.Label).NotTo(BeNil(), "only labelled Secrets are cached")
			g.Expect(by.Label.String()).To(ContainSubstring("cluster.x-k8s.io/cluster-name"))
		case *hivev1.ClusterDeployment, *hiveextv1beta1.AgentClusterInstall:
			// The deletion reads when Hive or assisted-service last wrote them (package foreign).
			withManagedFields := obj.DeepCopyObject().(client.Object)
			withManagedFields.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "hive"}})
			g.Expect(by.Transform).NotTo(BeNil(), "%T would get the default transform, which drops managed fields", obj)
			cached, err := by.Transform(withManagedFields)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(cached.(client.Object).GetManagedFields()).To(HaveLen(1), "%T cached without its managed fields", obj)
		default:
			t.Errorf("unexpected cache option for %T", obj)
		}
	}
}

// TestFlags: the provider's own flags fill Options; without them, release images come from the
// default registry only, no extra CA is read, a deletion waits foreign.DefaultTimeout, and the
// runtime extension of in-place updates is not served.
func TestFlags(t *testing.T) {
	for name, tc := range map[string]struct {
		args     []string
		want     []string
		caFile   string
		deadline time.Duration
		inPlace  bool
		clientCA string
	}{
		"defaults": {deadline: foreign.DefaultTimeout},
		"set": {
			args: []string{"--allowed-release-registries=mirror.example.com:5000,quay.io", "--release-registry-ca-file=/etc/ca.pem", "--foreign-finalizer-timeout=0s",
				"--in-place-updates=true", "--in-place-updates-client-ca-file=/etc/capi-client-ca.pem"},
			want:     []string{"mirror.example.com:5000", "quay.io"},
			caFile:   "/etc/ca.pem",
			deadline: 0,
			inPlace:  true,
			clientCA: "/etc/capi-client-ca.pem",
		},
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			var o setup.Options
			fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
			o.AddFlags(fs)
			g.Expect(fs.Parse(tc.args)).To(Succeed())
			if tc.want == nil {
				g.Expect(o.AllowedReleaseRegistries).To(BeEmpty())
			} else {
				g.Expect(o.AllowedReleaseRegistries).To(Equal(tc.want))
			}
			g.Expect(o.ReleaseRegistryCAFile).To(Equal(tc.caFile))
			g.Expect(o.ForeignFinalizerTimeout).NotTo(BeNil())
			g.Expect(*o.ForeignFinalizerTimeout).To(Equal(tc.deadline))
			g.Expect(o.InPlaceUpdates).To(Equal(tc.inPlace), "the runtime extension is served only when asked for")
			g.Expect(o.InPlaceUpdatesClientCAFile).To(Equal(tc.clientCA))
		})
	}
}

// TestValidate: a client CA file for hooks that are not served, or one that holds no CA, stops
// the manager with a message that says what to set.
func TestValidate(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "ca.crt")
	g := NewWithT(t)
	g.Expect(os.WriteFile(good, pki.MustIssue(t, nil, pki.Request{CommonName: "ca", CA: true}).CertPEM, 0o600)).To(Succeed())
	for name, tc := range map[string]struct {
		o    setup.Options
		want string
	}{
		"in-place updates off":        {o: setup.Options{}},
		"in-place updates, no CA":     {o: setup.Options{InPlaceUpdates: true}},
		"in-place updates and the CA": {o: setup.Options{InPlaceUpdates: true, InPlaceUpdatesClientCAFile: good}},
		"a CA without in-place updates": {o: setup.Options{InPlaceUpdatesClientCAFile: good},
			want: "--in-place-updates-client-ca-file is set but --in-place-updates is not"},
		"a CA file that is missing": {o: setup.Options{InPlaceUpdates: true, InPlaceUpdatesClientCAFile: filepath.Join(dir, "missing")},
			want: "--in-place-updates-client-ca-file: reading the client CA file"},
	} {
		t.Run(name, func(t *testing.T) {
			err := tc.o.Validate()
			if tc.want == "" {
				NewWithT(t).Expect(err).NotTo(HaveOccurred())
				return
			}
			NewWithT(t).Expect(err).To(MatchError(ContainSubstring(tc.want)))
		})
	}
}
