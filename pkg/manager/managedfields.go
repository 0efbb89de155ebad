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

package manager

import (
	"sigs.k8s.io/controller-runtime/pkg/cache"
)

// The managers' caches keep no managed fields (cache.TransformStripManagedFields, the cache's
// DefaultTransform, as controller-runtime advises for code that does not read them): they are
// about a tenth of what the providers allocate, decoded with every watch event and copied with
// every read of the cache, and no controller reads them, except package foreign's. Cluster API's
// own managers keep them (its MachineSet and MachineDeployment controllers read them from their
// cache), and run apart from ours; a test that runs them on a manager with these options must
// make no MachineSets (see testenv.SetupCAPIControllers).

// KeepManagedFields is the cache option (Options.CacheByObject) of a kind whose cached objects
// keep their managed fields: the ClusterDeployments and AgentClusterInstalls whose deletion
// package foreign waits on, reading from them when a controller last wrote (foreign.LastActivity).
func KeepManagedFields() cache.ByObject {
	return cache.ByObject{Transform: keepManagedFields}
}

func keepManagedFields(obj any) (any, error) {
	return obj, nil
}
