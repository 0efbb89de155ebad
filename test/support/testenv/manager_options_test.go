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

package testenv

import (
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/manager"
)

// TestManagerOptionsAreProductionOnesForATest checks that a test's manager keeps the provider's
// production options and changes only the metrics, health probes, leader election, controller
// name validation, the in-process ClusterCache (shut down with the manager, retrying after 1 s)
// and, when the environment installed webhooks, the webhook server.
func TestManagerOptionsAreProductionOnesForATest(t *testing.T) {
	o := manager.NewOptions("test")
	o.WatchNamespace = "ns1"
	o.LeaderElect = true
	o.HealthAddr = ":9440"
	o.CAPI.DiagnosticsAddress = ":8443"

	e := &Environment{env: &envtest.Environment{}, Scheme: runtime.NewScheme()}
	opts, err := e.ManagerOptions(o)
	if err != nil {
		t.Fatal(err)
	}
	if opts.Scheme != e.Scheme {
		t.Error("the manager does not use the environment's scheme")
	}
	if _, ok := opts.Cache.DefaultNamespaces["ns1"]; !ok || len(opts.Cache.DefaultNamespaces) != 1 {
		t.Errorf("cache namespaces = %v, want the production ones (ns1)", opts.Cache.DefaultNamespaces)
	}
	if opts.Client.Cache == nil || len(opts.Client.Cache.DisableFor) != 2 {
		t.Errorf("client cache = %+v, want the production uncached kinds (ConfigMaps, Secrets)", opts.Client.Cache)
	}
	if opts.Metrics.BindAddress != "0" || opts.HealthProbeBindAddress != "0" || opts.LeaderElection {
		t.Errorf("metrics %q, health %q, leader election %v: want all off", opts.Metrics.BindAddress,
			opts.HealthProbeBindAddress, opts.LeaderElection)
	}
	c := opts.Controller
	if c.SkipNameValidation == nil || !*c.SkipNameValidation || c.UsePriorityQueue == nil || *c.UsePriorityQueue {
		t.Errorf("controller config %+v, want ControllerConfig's (name validation skipped, no priority queue)", c)
	}
	if opts.WebhookServer != nil {
		t.Error("a webhook server without installed webhook configurations or --webhook-port")
	}
	if !o.InProcess || o.ClusterCacheRetryInterval != ClusterCacheRetryInterval {
		t.Errorf("InProcess %v, ClusterCache retry %v: want in-process, with %v", o.InProcess, o.ClusterCacheRetryInterval, ClusterCacheRetryInterval)
	}

	e.env.WebhookInstallOptions = envtest.WebhookInstallOptions{
		ValidatingWebhooks:  []*admissionv1.ValidatingWebhookConfiguration{{}},
		LocalServingHost:    "127.0.0.1",
		LocalServingPort:    12345,
		LocalServingCertDir: "/certs",
	}
	opts, err = e.ManagerOptions(o)
	if err != nil {
		t.Fatal(err)
	}
	s, ok := opts.WebhookServer.(*webhook.DefaultServer)
	if !ok || s.Options.Host != "127.0.0.1" || s.Options.Port != 12345 || s.Options.CertDir != "/certs" {
		t.Errorf("webhook server %#v, want envtest's host, port and certificates", opts.WebhookServer)
	}
}
