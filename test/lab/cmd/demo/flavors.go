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

package main

import (
	"fmt"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/lab"
)

// The labs a demo runs on: the real assisted-service and baremetal-operator, or their simulators.
const (
	labReal = "real"
	labSim  = "sim"
)

// flavor is a cluster the demo can create, and the lab it needs.
type flavor struct {
	options lab.ClusterOptions
	// lab is the lab the flavor runs on by default; simOnly says why it cannot run on the real
	// components ("" when it can).
	lab, simOnly string
}

// flavors are the demo's flavors (--flavor).
var flavors = map[string]flavor{
	"multinode": {options: lab.ClusterOptions{ControlPlanes: 3, Workers: 2}, lab: labReal},
	"image":     {options: lab.ClusterOptions{ControlPlanes: 3, Workers: 2, DiskImage: true}, lab: labReal},
	// The cluster's mirrors reach assisted-service through the InfraEnv's spec.mirrorRegistryRef,
	// which the service's pinned commit (May 2024) does not have: a newer hub's feature.
	"disconnected": {options: lab.ClusterOptions{ControlPlanes: 3, Workers: 2, Disconnected: true}, lab: labSim,
		simOnly: "its mirrors reach assisted-service through the InfraEnv's mirrorRegistryRef, which the real service's pinned commit lacks"},
	"sno":       {options: lab.ClusterOptions{ControlPlanes: 1}, lab: labReal},
	"agent":     {options: lab.ClusterOptions{ControlPlanes: 3, Workers: 2, Infrastructure: lab.Agent}, lab: labReal},
	"agent-sno": {options: lab.ClusterOptions{ControlPlanes: 1, Infrastructure: lab.Agent}, lab: labReal},
}

// flavorOptions is the cluster of flavor name, in the demo's namespace.
func flavorOptions(name string) (lab.ClusterOptions, error) {
	f, ok := flavors[name]
	if !ok {
		return lab.ClusterOptions{}, fmt.Errorf("unknown flavor %q: use multinode, image, disconnected, sno, agent or agent-sno", name)
	}
	o := f.options
	o.Namespace, o.Name, o.Version = "demo", "demo", "4.17.3"
	return o, nil
}

// labOptions is the lab for flavor: kind (--lab) when set, else the flavor's own. A flavor
// that needs a newer hub than the real service's is refused on the real lab, saying why.
func labOptions(name, kind string, newestCRDs bool) (lab.Options, error) {
	f, ok := flavors[name]
	if !ok {
		return lab.Options{}, fmt.Errorf("unknown flavor %q", name)
	}
	if kind == "" {
		kind = f.lab
		if newestCRDs {
			// The newest CRDs are a newer hub's: only the simulators serve them.
			kind = labSim
		}
	}
	switch kind {
	case labSim:
		return lab.Options{NewestCRDs: newestCRDs}, nil
	case labReal:
		if f.simOnly != "" {
			return lab.Options{}, fmt.Errorf("flavor %s needs LAB=sim: %s", name, f.simOnly)
		}
		if newestCRDs {
			return lab.Options{}, fmt.Errorf("NEWEST_CRDS=true needs LAB=sim: the real assisted-service serves its own commit's CRDs")
		}
		return lab.Options{Assisted: lab.AssistedReal, BareMetal: lab.BareMetalReal}, nil
	}
	return lab.Options{}, fmt.Errorf("unknown lab %q: use real or sim", kind)
}

// labName names the lab o runs.
func labName(o lab.Options) string {
	if o.Assisted == lab.AssistedReal {
		return labReal
	}
	return "simulated"
}

// components says what plays assisted-service and the baremetal-operator in the lab o runs.
func components(o lab.Options) string {
	if o.Assisted == lab.AssistedReal {
		return "the real assisted-service with PostgreSQL and the real baremetal-operator"
	}
	return "the simulators of assisted-service and the baremetal-operator"
}
