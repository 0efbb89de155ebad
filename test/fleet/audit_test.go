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

package fleet

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestAuditCounter counts each request once (a watch when it starts, anything else when it
// completes), by user agent and verb and resource, across a log that grows between reads, a line
// cut in two included.
func TestAuditCounter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	first := `{"stage":"ResponseComplete","verb":"get","userAgent":"capoa-infrastructure-manager","objectRef":{"resource":"agents","namespace":"a"}}
{"stage":"ResponseStarted","verb":"watch","userAgent":"capoa-infrastructure-manager/v1 (linux)","objectRef":{"resource":"agents"}}
{"stage":"ResponseComplete","verb":"watch","userAgent":"capoa-infrastructure-manager","objectRef":{"resource":"agents"}}
{"stage":"ResponseComplete","verb":"patch","userAgent":"capoa-infrastructure-manager","objectRef":{"resource":"agentmachines","subresource":"status"}}
{"stage":"ResponseComplete","verb":"get","userAgent":"kubectl/v1.35","requestURI":"/apis?timeout=32s"}
{"stage":"Panic","verb":"get","userAgent":"kubectl","objectRef":{"resource":"pods"}}
{"stage":"ResponseComplete","verb":"get","userAgent":"capoa-bootstrap-`
	if err := os.WriteFile(path, []byte(first), 0o600); err != nil {
		t.Fatal(err)
	}
	a := NewAuditCounter(path)
	if _, err := a.Update(); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`manager","objectRef":{"resource":"secrets"}}` + "\n"); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	got, err := a.Update()
	if err != nil {
		t.Fatal(err)
	}
	want := Requests{
		"capoa-infrastructure-manager": {"get agents": 1, "watch agents": 1, "patch agentmachines/status": 1},
		"kubectl":                      {"get /apis": 1},
		"capoa-bootstrap-manager":      {"get secrets": 1},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("counted %v, want %v", got, want)
	}
	if n := got.Total("capoa-infrastructure-manager"); n != 3 {
		t.Fatalf("total %d, want 3", n)
	}
	// A rotated log (a new, shorter file) is an error, not garbage read from the old offset.
	if err := os.WriteFile(path, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Update(); err == nil {
		t.Fatal("no error for a rotated audit log")
	}
}
