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
	"testing"

	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	"github.com/openshift/assisted-service/models"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/etcd"
)

// TestIsTNF: assisted-service's topology test, two control-plane hosts asked for, no arbiter,
// both masters with fencing credentials.
func TestIsTNF(t *testing.T) {
	known, master := models.HostStatusKnown, models.HostRoleMaster
	two := []aiv1beta1.Agent{named(agentIn(known, master), "a"), named(agentIn(known, master), "b")}
	both := map[string]bool{"a": true, "b": true}
	for _, tc := range []struct {
		name     string
		cp       int
		arbiters int
		agents   []aiv1beta1.Agent
		fenced   map[string]bool
		want     bool
	}{
		{"both fenced", 2, 0, two, both, true},
		{"one fenced", 2, 0, two, map[string]bool{"a": true}, false},
		{"an arbiter", 2, 1, two, both, false},
		{"three control-plane hosts", 3, 0, two, both, false},
		{"one master", 2, 0, two[:1], both, false},
	} {
		if got := isTNF(aciWith(tc.cp, 0), tc.agents, tc.arbiters, tc.fenced); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestWriteFencingSecret: a master whose host has fencing credentials gets the installed
// cluster's openshift-etcd/fencing-credentials-<node> Secret, with the same keys; one without
// gets none.
func TestWriteFencingSecret(t *testing.T) {
	ctx := context.Background()
	c := fake.NewClientBuilder().Build()
	s := &Simulator{fencing: map[types.NamespacedName]map[string][]byte{
		{Namespace: "ns", Name: "a"}: {"address": []byte("redfish://bmc/redfish/v1/Systems/1"), "username": []byte("u"), "password": []byte("p")},
	}}
	withCreds := &aiv1beta1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}}
	without := &aiv1beta1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b"}}
	if err := s.writeFencingSecret(ctx, c, withCreds, "master-0"); err != nil {
		t.Fatal(err)
	}
	if err := s.writeFencingSecret(ctx, c, without, "master-1"); err != nil {
		t.Fatal(err)
	}
	got := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: etcd.FencingNamespace, Name: etcd.FencingSecretPrefix + "master-0"}, got); err != nil {
		t.Fatal(err)
	}
	if string(got.Data["password"]) != "p" || string(got.Data["address"]) != "redfish://bmc/redfish/v1/Systems/1" {
		t.Errorf("got %v", got.Data)
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: etcd.FencingNamespace, Name: etcd.FencingSecretPrefix + "master-1"}, got); err == nil {
		t.Error("a host without credentials got a fencing Secret")
	}
}
