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

package controllers_test

import (
	"testing"

	"github.com/spf13/pflag"

	setup "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/infrastructure/setup"
)

func TestAgentNamespaceFlag(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{nil, ""},
		{[]string{"--agent-namespace=hosts"}, "hosts"},
	} {
		var o setup.Options
		fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
		o.AddFlags(fs)
		if err := fs.Parse(tt.args); err != nil {
			t.Fatal(err)
		}
		if o.AgentNamespace != tt.want {
			t.Errorf("args %v: AgentNamespace = %q, want %q", tt.args, o.AgentNamespace, tt.want)
		}
	}
}
