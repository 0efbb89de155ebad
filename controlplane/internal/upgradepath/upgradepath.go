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

// Package upgradepath holds the rule for which OpenShift upgrades the control plane accepts. It
// is a leaf package: the controller that runs upgrades and the webhook that refuses impossible
// ones both use it.
package upgradepath

import (
	"fmt"

	"github.com/blang/semver/v4"
)

// Check tells why OpenShift cannot go from version current to target, or "" when it can:
// no downgrade, no major version change, and at most one minor version at a time.
func Check(current, target string) string {
	c, err := semver.ParseTolerant(current)
	if err != nil {
		return fmt.Sprintf("the running version %q is not a version: %v", current, err)
	}
	t, err := semver.ParseTolerant(target)
	if err != nil {
		return fmt.Sprintf("distributionVersion %q is not a version: %v", target, err)
	}
	switch {
	case t.LT(c):
		return fmt.Sprintf("downgrading OpenShift from %s to %s is not supported: set distributionVersion back to %s or later", current, target, current)
	case t.Major != c.Major:
		return fmt.Sprintf("cannot upgrade OpenShift from %s to %s: a major version change is not supported", current, target)
	case t.Minor > c.Minor+1:
		return fmt.Sprintf("cannot upgrade OpenShift from %s to %s: OpenShift upgrades one minor version at a time, set distributionVersion to a 4.%d release first", current, target, c.Minor+1)
	}
	return ""
}
