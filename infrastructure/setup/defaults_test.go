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

	"github.com/spf13/pflag"

	setup "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/infrastructure/setup"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/manager"
)

// TestClientRateLimits: the infrastructure manager's own defaults (chosen with make bench), which
// the flags still override; the other managers keep Cluster API's.
func TestClientRateLimits(t *testing.T) {
	for name, tc := range map[string]struct {
		opts  *manager.Options
		args  []string
		qps   float32
		burst int
	}{
		"infrastructure defaults": {opts: setup.NewManagerOptions(), qps: setup.DefaultQPS, burst: setup.DefaultBurst},
		"flags override":          {opts: setup.NewManagerOptions(), args: []string{"--kube-api-qps=20", "--kube-api-burst=30"}, qps: 20, burst: 30},
		"other managers":          {opts: manager.NewOptions("other"), qps: manager.DefaultQPS, burst: manager.DefaultBurst},
	} {
		t.Run(name, func(t *testing.T) {
			fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
			tc.opts.AddFlags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			if tc.opts.QPS != tc.qps || tc.opts.Burst != tc.burst {
				t.Errorf("QPS %v, burst %d; want %v, %d", tc.opts.QPS, tc.opts.Burst, tc.qps, tc.burst)
			}
		})
	}
	if setup.DefaultQPS == manager.DefaultQPS {
		t.Error("the infrastructure manager's defaults are Cluster API's")
	}
}
