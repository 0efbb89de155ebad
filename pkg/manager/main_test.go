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
	"strings"
	"testing"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// providerFlags stands for a provider's setup.Options.
type providerFlags struct{ agentNamespace string }

func (p *providerFlags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&p.agentNamespace, "agent-namespace", "", "")
}

var testKind = schema.GroupVersionKind{Group: "example.test", Version: "v1", Kind: "Thing"}

func addThing(s *runtime.Scheme) error {
	s.AddKnownTypeWithName(testKind, &corev1.ConfigMap{})
	return nil
}

func TestPrepare(t *testing.T) {
	prep := func(args ...string) (*Options, *providerFlags, *runtime.Scheme, error) {
		o, p := NewOptions("test"), &providerFlags{}
		s, err := prepare(pflag.NewFlagSet("manager", pflag.ContinueOnError), args, o, p, []func(*runtime.Scheme) error{addThing})
		return o, p, s, err
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--concurrency=0"}, "invalid flags: --concurrency must be at least 1"},
		{[]string{"--no-such-flag"}, "unknown flag: --no-such-flag"},
	} {
		if _, _, _, err := prep(tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.args, err, tc.want)
		}
	}

	// The one successful case (Validate applies the logging configuration, once per process).
	o, p, s, err := prep("--concurrency=3", "--agent-namespace=agents", "--v=2")
	if err != nil {
		t.Fatal(err)
	}
	if o.Concurrency != 3 || p.agentNamespace != "agents" {
		t.Errorf("concurrency %d, agent namespace %q: the shared and the provider's flags were not both parsed", o.Concurrency, p.agentNamespace)
	}
	if !s.Recognizes(testKind) {
		t.Errorf("the scheme lacks the provider's kind %v", testKind)
	}
	if !s.Recognizes(corev1.SchemeGroupVersion.WithKind("Secret")) {
		t.Error("the scheme lacks the shared third-party APIs (pkg/scheme)")
	}
}
