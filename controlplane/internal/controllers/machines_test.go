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
	"sync"
	"testing"
	"time"

	capm3v1beta2 "github.com/metal3-io/cluster-api-provider-metal3/api/v1beta2"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	capoascheme "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/scheme"
)

// machine returns a Machine created at minute age, healthy or not, in failure domain fd.
func machine(name string, age int, healthy bool, fd string, annotations ...string) *clusterv1.Machine {
	m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Name: name,
		CreationTimestamp: metav1.NewTime(time.Date(2026, 1, 1, 0, age, 0, 0, time.UTC))}}
	m.Spec.FailureDomain = fd
	status := metav1.ConditionFalse
	if healthy {
		status = metav1.ConditionTrue
	}
	m.Status.Conditions = []metav1.Condition{{Type: clusterv1.MachineReadyCondition, Status: status}}
	for _, a := range annotations {
		if m.Annotations == nil {
			m.Annotations = map[string]string{}
		}
		m.Annotations[a] = ""
	}
	return m
}

// asArbiter labels m as the arbiter Machine of two-node OpenShift.
func asArbiter(m *clusterv1.Machine) *clusterv1.Machine {
	m.Labels = map[string]string{controlplanev1.ArbiterMachineLabel: ""}
	return m
}

// TestScaleUpWaitsForTheCacheToShowItsMachine: a reconcile that runs before the cache shows the
// Machine the previous one created would count one Machine short and create another. Here the
// cache hides each new Machine from Get and List for its first reads; two scale-up passes from 0
// to 1 must create exactly one Machine, because the first does not return before the cache
// shows it (Cluster API's MachineSet pattern).
// scaleUpFixture is a control plane of one replica with a Metal3MachineTemplate, and the objects
// its Machine creation reads (the template, and the CRDs whose labels give Cluster API the
// contract version of the kinds).
func scaleUpFixture(t *testing.T) (*runtime.Scheme, *controlplanev1.OpenshiftAssistedControlPlane, []client.Object) {
	t.Helper()
	s, err := capoascheme.New(controlplanev1.AddToScheme, bootstrapv1.AddToScheme)
	if err != nil {
		t.Fatal(err)
	}
	oacp := testOACP(1)
	oacp.UID = "oacp-uid"
	oacp.Spec.MachineTemplate.Spec.InfrastructureRef = clusterv1.ContractVersionedObjectReference{
		APIGroup: capm3v1beta2.GroupVersion.Group, Kind: "Metal3MachineTemplate", Name: "cp"}
	tmpl := &capm3v1beta2.Metal3MachineTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cp"}}
	crd := func(plural string) *apiextensionsv1.CustomResourceDefinition {
		return &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{
			Name:   plural + "." + capm3v1beta2.GroupVersion.Group,
			Labels: map[string]string{"cluster.x-k8s.io/v1beta2": capm3v1beta2.GroupVersion.Version},
		}}
	}
	return s, oacp, []client.Object{tmpl, crd("metal3machinetemplates"), crd("metal3machines")}
}

func TestScaleUpWaitsForTheCacheToShowItsMachine(t *testing.T) {
	s, oacp, objs := scaleUpFixture(t)
	const lag = 3 // reads of a new Machine that miss it
	hidden := map[string]int{}
	var mu sync.Mutex
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).WithInterceptorFuncs(interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if _, ok := obj.(*clusterv1.Machine); ok {
				mu.Lock()
				hidden[obj.GetName()] = lag
				mu.Unlock()
			}
			return c.Create(ctx, obj, opts...)
		},
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, ok := obj.(*clusterv1.Machine); ok {
				mu.Lock()
				defer mu.Unlock()
				if hidden[key.Name] > 0 {
					hidden[key.Name]--
					return apierrors.NewNotFound(clusterv1.GroupVersion.WithResource("machines").GroupResource(), key.Name)
				}
			}
			return c.Get(ctx, key, obj, opts...)
		},
	}).Build()
	listShown := func() []*clusterv1.Machine {
		list := &clusterv1.MachineList{}
		if err := c.List(context.Background(), list); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		var out []*clusterv1.Machine
		for i := range list.Items {
			if hidden[list.Items[i].Name] == 0 {
				out = append(out, &list.Items[i])
			}
		}
		return out
	}
	r := &OpenshiftAssistedControlPlaneReconciler{Client: c, APIReader: c, Recorder: events.NewFakeRecorder(10)}
	for pass := range 2 {
		sc := &scope{oacp: oacp, cluster: testCluster(nil, nil), machines: listShown()}
		if _, err := r.reconcileMachines(context.Background(), sc); err != nil {
			t.Fatalf("pass %d: %v", pass, err)
		}
	}
	list := &clusterv1.MachineList{}
	if err := c.List(context.Background(), list); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 {
		var names []string
		for _, m := range list.Items {
			names = append(names, m.Name)
		}
		t.Errorf("Machines %v: want exactly one (a reconcile counted from a stale cache)", names)
	}
}

// TestMachineCreateWhoseResponseIsLost: a Machine create can fail at the client after the API
// server stored it (a lost response). Its config and infrastructure must then stay, or the
// Machine waits forever for a bootstrap config that "does not exist" while it counts as a
// replica. They are removed only when the API server says the Machine is not there, and kept
// when that cannot be told.
func TestMachineCreateWhoseResponseIsLost(t *testing.T) {
	for name, tc := range map[string]struct {
		stored       bool // the API server stored the Machine although the create failed
		checkFails   bool // the check that follows fails too
		wantErr      bool
		wantMachines int
		wantKept     bool // config and infrastructure remain
	}{
		"lost response: the Machine is kept as created":            {stored: true, wantMachines: 1, wantKept: true},
		"refused: what was created is removed":                     {wantErr: true},
		"lost response, and the check fails: nothing is removed":   {stored: true, checkFails: true, wantErr: true, wantMachines: 1, wantKept: true},
		"refused, and the check fails: nothing is removed, either": {checkFails: true, wantErr: true, wantKept: true},
	} {
		t.Run(name, func(t *testing.T) {
			s, oacp, objs := scaleUpFixture(t)
			failGet := tc.checkFails
			c := fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).WithInterceptorFuncs(interceptor.Funcs{
				Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
					if _, ok := obj.(*clusterv1.Machine); !ok {
						return c.Create(ctx, obj, opts...)
					}
					if tc.stored {
						if err := c.Create(ctx, obj, opts...); err != nil {
							return err
						}
					}
					return apierrors.NewTimeoutError("the response was lost", 1)
				},
				Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
					if _, ok := obj.(*clusterv1.Machine); ok && failGet {
						failGet = false
						return apierrors.NewServiceUnavailable("unavailable")
					}
					return c.Get(ctx, key, obj, opts...)
				},
			}).Build()
			r := &OpenshiftAssistedControlPlaneReconciler{Client: c, APIReader: c, Recorder: events.NewFakeRecorder(10)}
			_, err := r.reconcileMachines(context.Background(), &scope{oacp: oacp, cluster: testCluster(nil, nil)})
			if (err != nil) != tc.wantErr {
				t.Fatalf("reconcile error %v, want an error: %v", err, tc.wantErr)
			}
			machines, configs, infras := &clusterv1.MachineList{}, &bootstrapv1.OpenshiftAssistedConfigList{}, &capm3v1beta2.Metal3MachineList{}
			for _, l := range []client.ObjectList{machines, configs, infras} {
				if err := c.List(context.Background(), l); err != nil {
					t.Fatal(err)
				}
			}
			if len(machines.Items) != tc.wantMachines {
				t.Errorf("%d Machines, want %d", len(machines.Items), tc.wantMachines)
			}
			if kept := len(configs.Items) == 1 && len(infras.Items) == 1; kept != tc.wantKept || (!kept && len(configs.Items)+len(infras.Items) != 0) {
				t.Errorf("%d configs and %d Metal3Machines left, want them kept: %v", len(configs.Items), len(infras.Items), tc.wantKept)
			}
		})
	}
}
