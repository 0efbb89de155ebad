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
	"context"
	"testing"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/controller"
)

// TestUnknownBareMetal: a bare-metal operator the lab does not know is refused, naming the two it
// knows.
func TestUnknownBareMetal(t *testing.T) {
	g := NewWithT(t)
	l := &Lab{opts: Options{BareMetal: "ironic"}}
	err := l.setupBareMetal(context.Background(), nil, nil, nil, controller.Options{})
	g.Expect(err).To(MatchError(`unknown bare-metal operator "ironic": want "sim" or "real"`))
}
