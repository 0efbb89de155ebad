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

package assisted

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// TestCheckMirrorRegistry: a mirror registry ConfigMap is refused as assisted-service refuses it
// (missing, no registries.conf, not TOML, no mirror it keeps), and one it uses gets its labels.
func TestCheckMirrorRegistry(t *testing.T) {
	const mirrored = "[[registry]]\nlocation = \"quay.io/ocp\"\n[[registry.mirror]]\nlocation = \"mirror:5000/ocp\"\n"
	for name, tc := range map[string]struct {
		data    map[string]string // nil: no ConfigMap
		wantErr string
	}{
		"a mirror":                     {data: map[string]string{"registries.conf": mirrored}},
		"a tag-only mirror and a CA":   {data: map[string]string{"registries.conf": strings.Replace(mirrored, `"mirror:5000/ocp"`, "\"mirror:5000/ocp\"\npull-from-mirror = \"tag-only\"", 1), "ca-bundle.crt": "x"}},
		"empty: nothing to use":        {data: map[string]string{"registries.conf": ""}},
		"no ConfigMap":                 {wantErr: `Failed to get referenced ConfigMap: configmaps "mirrors" not found`},
		"no registries.conf":           {data: map[string]string{"ca-bundle.crt": "x"}, wantErr: "ConfigMap ns/mirrors does not contain registries.conf key"},
		"not TOML":                     {data: map[string]string{"registries.conf": "[[registry"}, wantErr: "incorrectly formatted toml"},
		"a registry without mirrors":   {data: map[string]string{"registries.conf": "[[registry]]\nlocation = \"quay.io/ocp\"\n"}, wantErr: "failed to find any image mirrors in registry.conf"},
		"only a mirror pulled for all": {data: map[string]string{"registries.conf": strings.Replace(mirrored, `"mirror:5000/ocp"`, "\"mirror:5000/ocp\"\npull-from-mirror = \"all\"", 1)}, wantErr: "failed to find any image mirrors"},
	} {
		t.Run(name, func(t *testing.T) {
			s := runtime.NewScheme()
			if err := corev1.AddToScheme(s); err != nil {
				t.Fatal(err)
			}
			b := fake.NewClientBuilder().WithScheme(s)
			key := client.ObjectKey{Namespace: "ns", Name: "mirrors"}
			if tc.data != nil {
				b = b.WithObjects(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}, Data: tc.data})
			}
			sim := &Simulator{Client: b.Build()}
			err := sim.checkMirrorRegistry(context.Background(), key)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want one with %q", err, tc.wantErr)
			case tc.wantErr != "" || tc.data["registries.conf"] == "":
				return
			}
			cm := &corev1.ConfigMap{}
			if err := sim.Client.Get(context.Background(), key, cm); err != nil {
				t.Fatal(err)
			}
			if cm.Labels[BackupLabel] != "true" || cm.Labels[WatchResourceLabel] != "true" {
				t.Errorf("labels %v, want assisted-service's backup and watch labels", cm.Labels)
			}
		})
	}
}
