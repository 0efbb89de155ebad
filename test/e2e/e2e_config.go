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
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"time"

	"sigs.k8s.io/cluster-api/test/framework/clusterctl"
	"sigs.k8s.io/yaml"
)

// LoadE2EConfig reads the suite's configuration: the first file, then each further file (an
// overlay, such as config/kind.yaml) whose variables and intervals replace the first's.
//
// Cluster API's clusterctl.LoadE2EConfig cannot be used as is: its validation requires the kubeadm
// bootstrap and control-plane providers. The providers here come from the local clusterctl
// repository hack/release-manifests.sh writes, so the config has no providers: section and only
// what the suite reads is validated.
func LoadE2EConfig(paths ...string) (*clusterctl.E2EConfig, error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("no e2e config file given")
	}
	var config *clusterctl.E2EConfig
	for _, path := range paths {
		raw, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("reading the e2e config: %w", err)
		}
		c := &clusterctl.E2EConfig{}
		if err := yaml.UnmarshalStrict(raw, c); err != nil {
			return nil, fmt.Errorf("parsing the e2e config %s: %w", path, err)
		}
		if len(c.Providers) > 0 {
			return nil, fmt.Errorf("%s: providers are installed from hack/release-manifests.sh's repository, not from the e2e config", path)
		}
		c.AbsPaths(filepath.Dir(path))
		if config == nil {
			config = c
			continue
		}
		if config.Variables == nil {
			config.Variables = map[string]string{}
		}
		if config.Intervals == nil {
			config.Intervals = map[string][]string{}
		}
		maps.Copy(config.Variables, c.Variables)
		maps.Copy(config.Intervals, c.Intervals)
		config.Images = append(config.Images, c.Images...)
	}
	config.Defaults()
	if err := validate(config); err != nil {
		return nil, err
	}
	return config, nil
}

// requiredVariables are the variables the specs read.
var requiredVariables = []string{
	"OPENSHIFT_VERSION", "OPENSHIFT_VERSION_UPGRADE_TO", "KUBERNETES_VERSION_UPGRADE_TO", "BASE_DOMAIN",
	"API_VIP", "INGRESS_VIP", "SSH_AUTHORIZED_KEY", "TEMPLATE_PROVIDER", "KUBERNETES_VERSION",
}

func validate(c *clusterctl.E2EConfig) error {
	for _, v := range requiredVariables {
		if !c.HasVariable(v) {
			return fmt.Errorf("the e2e config does not set variable %s", v)
		}
	}
	for key, intervals := range c.Intervals {
		if len(intervals) < 1 || len(intervals) > 2 {
			return fmt.Errorf("intervals %s: want a timeout and optionally a polling interval, got %q", key, intervals)
		}
		for _, i := range intervals {
			if _, err := time.ParseDuration(i); err != nil {
				return fmt.Errorf("intervals %s: %w", key, err)
			}
		}
	}
	for i, image := range c.Images {
		if image.Name == "" {
			return fmt.Errorf("images[%d] has no name", i)
		}
		if image.LoadBehavior != clusterctl.MustLoadImage && image.LoadBehavior != clusterctl.TryLoadImage {
			return fmt.Errorf("images[%d]: unknown loadBehavior %q", i, image.LoadBehavior)
		}
	}
	return nil
}
