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

package main

import (
	"strings"
	"testing"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/lab"
)

func TestLabOptions(t *testing.T) {
	onReal := lab.Options{Assisted: lab.AssistedReal, BareMetal: lab.BareMetalReal}
	for _, tc := range []struct {
		flavor, kind string
		newest       bool
		want         lab.Options
		err          string
	}{
		{flavor: "multinode", want: onReal},
		{flavor: "sno", want: onReal},
		{flavor: "image", want: onReal},
		{flavor: "agent", want: onReal},
		{flavor: "agent-sno", want: onReal},
		{flavor: "multinode", kind: "sim", want: lab.Options{}},
		{flavor: "disconnected", want: lab.Options{}},
		{flavor: "disconnected", kind: "real", err: "flavor disconnected needs LAB=sim: its mirrors"},
		{flavor: "multinode", newest: true, want: lab.Options{NewestCRDs: true}},
		{flavor: "multinode", kind: "real", newest: true, err: "NEWEST_CRDS=true needs LAB=sim"},
		{flavor: "multinode", kind: "vm", err: `unknown lab "vm"`},
		{flavor: "huge", err: `unknown flavor "huge"`},
	} {
		got, err := labOptions(tc.flavor, tc.kind, tc.newest)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("labOptions(%q, %q, %v) = %v, want an error with %q", tc.flavor, tc.kind, tc.newest, err, tc.err)
			}
			continue
		}
		if err != nil || got.Assisted != tc.want.Assisted || got.BareMetal != tc.want.BareMetal || got.NewestCRDs != tc.want.NewestCRDs {
			t.Errorf("labOptions(%q, %q, %v) = %+v, %v, want %+v", tc.flavor, tc.kind, tc.newest, got, err, tc.want)
		}
	}
}

func TestFlavorOptions(t *testing.T) {
	for name, f := range flavors {
		o, err := flavorOptions(name)
		if err != nil {
			t.Fatalf("flavorOptions(%q): %v", name, err)
		}
		if o.Namespace != "demo" || o.Name != "demo" || o.Version == "" || o.ControlPlanes != f.options.ControlPlanes || o.Workers != f.options.Workers {
			t.Errorf("flavorOptions(%q) = %+v", name, o)
		}
		if (f.lab == labSim) != (f.simOnly != "") {
			t.Errorf("flavor %q runs on %s by default, yet says %q of the real lab", name, f.lab, f.simOnly)
		}
	}
	if _, err := flavorOptions("huge"); err == nil {
		t.Error(`flavorOptions("huge") = nil error`)
	}
}
