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

package ignition

import (
	"encoding/base64"
	"testing"
)

// TestKubeletProviderID reads the providerID a kubelet would register with from the overrides
// the bootstrap provider writes (the drop-in's text as bootstrap's TestProviderIDDropIn expects
// it), with systemd's unquoting; anything else sets none, and overrides that are no Ignition fail.
func TestKubeletProviderID(t *testing.T) {
	dropIn := "# a comment\n[Service]\nEnvironment=\"KUBELET_PROVIDERID=metal3://ns/host%%1/\\\"q\\\"\"\n"
	withFile := func(path, contents string) string {
		return `{"ignition":{"version":"3.1.0"},"storage":{"files":[{"path":"` + path + `","mode":420,"contents":{"source":"data:;base64,` +
			base64.StdEncoding.EncodeToString([]byte(contents)) + `"}}]}}`
	}
	tests := []struct {
		name, overrides, want string
		wantErr               bool
	}{
		{name: "none", overrides: ""},
		{name: "the drop-in", overrides: withFile(ProviderIDDropIn, dropIn), want: `metal3://ns/host%1/"q"`},
		{name: "another file", overrides: withFile("/etc/motd", dropIn)},
		{name: "percent-encoded data URL", overrides: `{"ignition":{"version":"3.1.0"},"storage":{"files":[{"path":"` + ProviderIDDropIn +
			`","contents":{"source":"data:,%5BService%5D%0AEnvironment=%22KUBELET_PROVIDERID=agent://a%22%0A"}}]}}`, want: "agent://a"},
		{name: "not Ignition", overrides: "{", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := KubeletProviderID(tt.overrides)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("KubeletProviderID() = %q, %v; want %q (error %v)", got, err, tt.want, tt.wantErr)
			}
		})
	}
}
