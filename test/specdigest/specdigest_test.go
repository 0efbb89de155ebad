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

package specdigest

import (
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"
)

func TestDigest(t *testing.T) {
	long := strings.Repeat("x", maxMessage+10)
	report := types.Report{SpecReports: types.SpecReports{
		{LeafNodeText: "passes", State: types.SpecStatePassed},
		{ContainerHierarchyTexts: []string{"A cluster"}, LeafNodeText: "leaves nothing behind", State: types.SpecStateFailed,
			Failure: types.Failure{Message: "AgentMachineList left behind: m0", Location: types.CodeLocation{FileName: "system_test.go", LineNumber: 374}}},
		{LeafNodeText: "times out", State: types.SpecStateTimedout, Failure: types.Failure{Message: long}},
		{LeafNodeText: "skipped", State: types.SpecStateSkipped},
	}}
	got := Digest(report)
	if len(got) != 2 {
		t.Fatalf("want the two failed specs, got %d: %q", len(got), got)
	}
	for _, want := range []string{"FAILED A cluster leaves nothing behind", "system_test.go:374", "AgentMachineList left behind: m0"} {
		if !strings.Contains(got[0], want) {
			t.Errorf("digest %q lacks %q", got[0], want)
		}
	}
	if !strings.Contains(got[1], "(10 bytes more)") || len(got[1]) > maxMessage+200 {
		t.Errorf("a long message is not cut: %d bytes", len(got[1]))
	}
}
