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

package rbac_test

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// egressPorts are the TCP ports each manager connects to, which its NetworkPolicy must open. Every
// manager reaches API servers: the management cluster's through the kubernetes Service (443,
// translated to 6443 on most clusters), workload clusters' on 6443. The bootstrap manager also
// downloads discovery ignitions from assisted-service: at the URL it advertises (443), or, with
// --use-internal-assisted-service-url, at its Service's port 8090. The control plane also reads
// release images from registries (443).
var egressPorts = map[string][]string{
	"infrastructure": {"443", "6443"},
	"bootstrap":      {"443", "6443", "8090"},
	"controlplane":   {"443", "6443"},
}

// TestNetworkPolicies checks that each manager ships a NetworkPolicy that selects its Pod, opens
// ingress only to the ports its container serves, and restricts egress to the ports it connects to.
func TestNetworkPolicies(t *testing.T) {
	for _, mt := range managers {
		t.Run(mt.dir, func(t *testing.T) {
			var policies, deployments []unstructured.Unstructured
			for _, o := range components[mt.dir] {
				switch o.GetKind() {
				case "NetworkPolicy":
					policies = append(policies, o)
				case "Deployment":
					deployments = append(deployments, o)
				}
			}
			if len(policies) != 1 || len(deployments) != 1 {
				t.Fatalf("%s/config/default has %d NetworkPolicies and %d Deployments, want one of each", mt.dir, len(policies), len(deployments))
			}
			np, d := policies[0], deployments[0]
			selector, _, _ := unstructured.NestedStringMap(np.Object, "spec", "podSelector", "matchLabels")
			podLabels, _, _ := unstructured.NestedStringMap(d.Object, "spec", "template", "metadata", "labels")
			if len(selector) == 0 {
				t.Fatalf("NetworkPolicy %s selects every Pod of the namespace", np.GetName())
			}
			for k, v := range selector {
				if podLabels[k] != v {
					t.Errorf("NetworkPolicy %s selects %s=%s, which the manager Pod (labels %v) does not have", np.GetName(), k, v, podLabels)
				}
			}
			types, _, _ := unstructured.NestedStringSlice(np.Object, "spec", "policyTypes")
			if fmt.Sprint(types) != "[Ingress Egress]" {
				t.Errorf("NetworkPolicy %s policyTypes = %v, want [Ingress Egress]", np.GetName(), types)
			}
			served := map[string]bool{}
			containers, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
			for _, c := range containers {
				ports, _, _ := unstructured.NestedSlice(c.(map[string]any), "ports")
				for _, p := range ports {
					name, _, _ := unstructured.NestedString(p.(map[string]any), "name")
					served[name] = true
				}
			}
			ingress, _, _ := unstructured.NestedSlice(np.Object, "spec", "ingress")
			if len(ingress) == 0 {
				t.Fatalf("NetworkPolicy %s allows no ingress: the probes, metrics and webhooks would be cut", np.GetName())
			}
			opened := map[string]bool{}
			for _, rule := range ingress {
				ports, _, _ := unstructured.NestedSlice(rule.(map[string]any), "ports")
				if len(ports) == 0 {
					t.Errorf("NetworkPolicy %s has an ingress rule open to every port", np.GetName())
				}
				for _, p := range ports {
					name, _, _ := unstructured.NestedFieldNoCopy(p.(map[string]any), "port")
					s := fmt.Sprint(name)
					opened[s] = true
					if !served[s] {
						t.Errorf("NetworkPolicy %s opens port %s, which the manager container does not name (ports %v)", np.GetName(), s, served)
					}
				}
			}
			for p := range served {
				if !opened[p] {
					t.Errorf("the manager serves port %s, which NetworkPolicy %s does not open", p, np.GetName())
				}
			}
			egress, _, _ := unstructured.NestedSlice(np.Object, "spec", "egress")
			reached := map[string]bool{}
			for _, rule := range egress {
				ports, _, _ := unstructured.NestedSlice(rule.(map[string]any), "ports")
				if len(ports) == 0 {
					t.Errorf("NetworkPolicy %s has an egress rule open to every port", np.GetName())
				}
				for _, p := range ports {
					port, _, _ := unstructured.NestedFieldNoCopy(p.(map[string]any), "port")
					reached[fmt.Sprint(port)] = true
				}
			}
			for _, p := range egressPorts[mt.dir] {
				if !reached[p] {
					t.Errorf("the %s manager connects to port %s, which NetworkPolicy %s does not open", mt.dir, p, np.GetName())
				}
			}
		})
	}
}
