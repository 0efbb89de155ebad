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

package rbac_test

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"

	bootstrapsetup "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/bootstrap/setup"
	controlplanesetup "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/controlplane/setup"
	infrasetup "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/infrastructure/setup"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/manager"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/tlsprofile"
)

// TestEveryManagerFollowsTheHubsTLSProfile: the grant on apiservers.config.openshift.io in every
// table (commonRows) is there because each provider's manager follows the hub's TLS security
// profile; its TLS flags say that they win over it.
func TestEveryManagerFollowsTheHubsTLSProfile(t *testing.T) {
	for name, newOptions := range map[string]func() *manager.Options{
		"infrastructure": infrasetup.NewManagerOptions,
		"bootstrap":      bootstrapsetup.NewManagerOptions,
		"controlplane":   controlplanesetup.NewManagerOptions,
	} {
		t.Run(name, func(t *testing.T) {
			o := newOptions()
			if !o.FollowTLSProfile {
				t.Fatal("the manager does not follow the hub's TLS security profile")
			}
			fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
			o.AddFlags(fs)
			for _, flag := range []string{"tls-min-version", "tls-cipher-suites"} {
				if !strings.Contains(fs.Lookup(flag).Usage, tlsprofile.FlagHelp) {
					t.Errorf("--%s does not say that it wins over the hub's profile: %q", flag, fs.Lookup(flag).Usage)
				}
			}
		})
	}
}
