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

// Package specdigest runs a Ginkgo suite and, when specs fail, logs why each failed after the
// suite's own output: a CI log that keeps only its tail then still shows the failure message
// (what was left behind, what never became ready), not only the spec's name and line.
package specdigest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
)

// maxMessage bounds the part of each failure message the digest repeats.
const maxMessage = 3000

// RunSpecs registers the digest's report and runs the suite as ginkgo.RunSpecs does; call it
// instead of ginkgo.RunSpecs from the suite's Test function.
func RunSpecs(t *testing.T, description string, args ...any) bool {
	t.Helper()
	var failures []string
	ginkgo.ReportAfterSuite("failure digest", func(r ginkgo.Report) {
		failures = Digest(r)
	})
	ok := ginkgo.RunSpecs(t, description, args...)
	for _, f := range failures {
		t.Log(f)
	}
	return ok
}

// Digest describes each failed spec of a report: its full text, where it failed, and the
// failure message, cut to maxMessage bytes.
func Digest(r types.Report) []string {
	var out []string
	for _, spec := range r.SpecReports {
		if !spec.State.Is(types.SpecStateFailureStates) {
			continue
		}
		msg := spec.Failure.Message
		if len(msg) > maxMessage {
			msg = msg[:maxMessage] + fmt.Sprintf("... (%d bytes more)", len(msg)-maxMessage)
		}
		out = append(out, fmt.Sprintf("FAILED %s [%s] at %s:\n%s", strings.TrimSpace(spec.FullText()), spec.State,
			spec.Failure.Location, msg))
	}
	return out
}
