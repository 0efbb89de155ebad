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

package lab

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/testenv"
)

// TestMoveCRDLabelsAreDocumented checks that docs/getting-started.md tells users to put on each
// CRD exactly the labels the lab puts on it before a move (MoveCRDLabels), and nothing more.
func TestMoveCRDLabelsAreDocumented(t *testing.T) {
	g := NewWithT(t)
	root, err := testenv.RepoRoot()
	g.Expect(err).NotTo(HaveOccurred())
	doc, err := os.ReadFile(filepath.Join(root, "docs", "getting-started.md"))
	g.Expect(err).NotTo(HaveOccurred())
	documented := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^kubectl label crd (\S+) (.+)$`).FindAllStringSubmatch(string(doc), -1) {
		labels := strings.Fields(m[2])
		sort.Strings(labels)
		documented[m[1]] = strings.Join(labels, " ")
	}
	want := map[string]string{}
	for crd, labels := range MoveCRDLabels {
		parts := []string{}
		for k, v := range labels {
			parts = append(parts, k+"="+v)
		}
		sort.Strings(parts)
		want[crd] = strings.Join(parts, " ")
	}
	g.Expect(documented).To(Equal(want))
}
