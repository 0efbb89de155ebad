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

package release

import (
	utilversion "k8s.io/apimachinery/pkg/util/version"
)

// CompareKubernetesVersions compares two Kubernetes versions as semantic versions: -1, 0 or 1,
// and false when either is not one. A leading v and build metadata do not count: Cluster API's
// topology writes v1.32.5, a release names 1.32.5, an OpenShift kubelet reports v1.30.6+a1b2c3d.
func CompareKubernetesVersions(a, b string) (int, bool) {
	v, err := utilversion.ParseSemantic(a)
	if err != nil {
		return 0, false
	}
	c, err := v.Compare(b)
	return c, err == nil
}
