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

// Package system holds the system tests: Ginkgo specs that create, grow, upgrade and delete
// OpenShift clusters in the simulated bare-metal lab (test/lab), through every real controller.
package system

import (
	"context"
	"io"
	"os"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/specdigest"
)

const (
	// timeout bounds each step of a spec: simulated steps take about 100 ms, but the two cores
	// of a CI machine are shared by two API servers and a dozen controllers.
	timeout  = 3 * time.Minute
	interval = 500 * time.Millisecond
)

func TestSystem(t *testing.T) {
	if os.Getenv("SYSTEM_TEST_VERBOSE") != "" {
		ctrl.SetLogger(zap.New(zap.UseDevMode(true)))
	} else {
		ctrl.SetLogger(zap.New(zap.WriteTo(io.Discard)))
	}
	RegisterFailHandler(Fail)
	specdigest.RunSpecs(t, "System")
}

var ctx = context.Background()

// startsFirst marks the containers that take longest (90 to 130 s each on 2 cores, 2026-11-28):
// Ginkgo hands them to its processes before the others, so that the short ones fill in at the
// end and no long one starts last, keeping one process busy while the other has nothing left.
var startsFirst = SpecPriority(1)
