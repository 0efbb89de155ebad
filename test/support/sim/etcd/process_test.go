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

package etcd

import (
	"strings"
	"testing"
)

// TestFreeURLHandsOutAPortOnce: the URLs of members are chosen before their etcd binds them, so
// a port once handed out is not handed out again in the process, though it is still free.
func TestFreeURLHandsOutAPortOnce(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		u, err := freeURL()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(u, "http://127.0.0.1:") {
			t.Fatalf("freeURL() = %q, want http://127.0.0.1:<port>", u)
		}
		if seen[u] {
			t.Fatalf("%s handed out twice", u)
		}
		seen[u] = true
	}
}
