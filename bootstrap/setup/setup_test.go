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
	"testing"

	. "github.com/onsi/gomega"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/bootstrap/setup"
)

// TestNewManagerOptions: the bootstrap manager follows the hub's TLS profile, has its own leader
// election Lease and caches only the Secrets labelled with a cluster name.
func TestNewManagerOptions(t *testing.T) {
	g := NewWithT(t)
	o := setup.NewManagerOptions()
	g.Expect(o.LeaderElectionID).To(Equal("capoa-bootstrap-leader-election"))
	g.Expect(o.FollowTLSProfile).To(BeTrue())
	g.Expect(o.CacheByObject).To(HaveLen(1))
	for obj, by := range o.CacheByObject {
		g.Expect(obj).To(BeAssignableToTypeOf(&corev1.Secret{}))
		g.Expect(by.Label).NotTo(BeNil(), "only labelled Secrets are cached")
		g.Expect(by.Label.String()).To(ContainSubstring("cluster.x-k8s.io/cluster-name"))
	}
}

// TestFlagsDefaultToUpstreamsEnvironment: each assisted-service flag defaults to the environment
// variable upstream CAPOA's bootstrap provider reads, so that its Deployment keeps working; a flag
// wins over its variable.
func TestFlagsDefaultToUpstreamsEnvironment(t *testing.T) {
	g := NewWithT(t)
	env := map[string]string{
		"USE_INTERNAL_IMAGE_URL":       "true",
		"ASSISTED_SERVICE_NAME":        "svc",
		"ASSISTED_INSTALLER_NAMESPACE": "mce",
		"ASSISTED_CA_BUNDLE_RESOURCE":  "configmap",
		"ASSISTED_CA_BUNDLE_NAMESPACE": "ca-ns",
		"ASSISTED_CA_BUNDLE_NAME":      "ca",
		"ASSISTED_CA_BUNDLE_KEY":       "ca.crt",
	}
	for k, v := range env {
		t.Setenv(k, v)
	}
	var o setup.Options
	fs := pflag.NewFlagSet("env", pflag.ContinueOnError)
	o.AddFlags(fs)
	g.Expect(fs.Parse([]string{"--assisted-ca-bundle-key=tls.crt"})).To(Succeed())
	a := o.AssistedService
	g.Expect(a.UseInternalURL).To(BeTrue())
	g.Expect(a.ServiceName).To(Equal("svc"))
	g.Expect(a.ServiceNamespace).To(Equal("mce"))
	g.Expect(a.CABundle.Resource).To(Equal("configmap"))
	g.Expect(a.CABundle.Namespace).To(Equal("ca-ns"))
	g.Expect(a.CABundle.Name).To(Equal("ca"))
	g.Expect(a.CABundle.Key).To(Equal("tls.crt"), "the flag wins over ASSISTED_CA_BUNDLE_KEY")

	t.Setenv("USE_INTERNAL_IMAGE_URL", "yes")
	var none setup.Options
	fs = pflag.NewFlagSet("other", pflag.ContinueOnError)
	none.AddFlags(fs)
	g.Expect(fs.Parse(nil)).To(Succeed())
	g.Expect(none.AssistedService.UseInternalURL).To(BeFalse(), `only "true" turns the internal URL on, as upstream reads it`)
}
