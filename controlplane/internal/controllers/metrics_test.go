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

package controllers

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/metrics"
)

func TestCountControlPlanes(t *testing.T) {
	s := runtime.NewScheme()
	if err := controlplanev1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	cp := func(ns, name, reason string) client.Object {
		o := &controlplanev1.OpenshiftAssistedControlPlane{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		if reason != "" {
			o.Status.Conditions = []metav1.Condition{{Type: controlplanev1.AvailableCondition, Status: metav1.ConditionFalse, Reason: reason}}
		}
		return o
	}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(
		cp("a", "one", controlplanev1.InstallingReason), cp("a", "two", controlplanev1.InstallingReason),
		cp("a", "three", controlplanev1.InstallFailedReason), cp("b", "four", controlplanev1.InstalledReason), cp("b", "new", ""),
	).Build()
	got, err := CountControlPlanes(c)(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []metrics.Count{
		{Labels: []string{"a", "InstallFailed"}, Value: 1},
		{Labels: []string{"a", "Installing"}, Value: 2},
		{Labels: []string{"b", "Installed"}, Value: 1},
		{Labels: []string{"b", "Unknown"}, Value: 1},
	}
	if len(got) != len(want) {
		t.Fatalf("CountControlPlanes = %v, want %v", got, want)
	}
	for i := range want {
		if got[i].Labels[0] != want[i].Labels[0] || got[i].Labels[1] != want[i].Labels[1] || got[i].Value != want[i].Value {
			t.Errorf("count %d = %v, want %v", i, got[i], want[i])
		}
	}
}
