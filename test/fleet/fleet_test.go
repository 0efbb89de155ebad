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

// Package fleet_test is the fleet benchmark (make bench): N single-node clusters at once, through
// the three providers, each provider a process of its own.
package fleet_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/lab"
)

// providerEnv names, in the environment of the benchmark's binary run again, the provider that
// process runs (lab.RunProviderProcess) instead of the benchmarks.
const providerEnv = "CAPOA_FLEET_PROVIDER"

func TestMain(m *testing.M) {
	if name := os.Getenv(providerEnv); name != "" {
		if err := lab.RunProviderProcess(name, os.Args[1:]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	// The benchmark prints tables; the lab's own logs would drown them.
	ctrl.SetLogger(logr.Discard())
	os.Exit(m.Run())
}
