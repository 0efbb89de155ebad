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
	"strings"
	"sync"
	"testing"
	"time"

	capm3v1beta2 "github.com/metal3-io/cluster-api-provider-metal3/api/v1beta2"
	configv1 "github.com/openshift/api/config/v1"
	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
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

func TestSelectMachineForScaleDown(t *testing.T) {
	for name, tc := range map[string]struct {
		machines  []*clusterv1.Machine
		outdated  map[string]string
		arbiter   bool // the arbiter goes (there is one too many)
		installed bool
		want      string
		wantWhy   string
	}{
		"two-node: a surplus control-plane Machine goes, never the older arbiter": {
			machines:  []*clusterv1.Machine{asArbiter(machine("a1", 1, true, "")), machine("m2", 2, true, ""), machine("m3", 3, true, ""), machine("m4", 4, true, "")},
			outdated:  map[string]string{"a1": "x", "m2": "x"},
			installed: true, want: "m2",
		},
		"two-node: the outdated arbiter goes once its replacement surged in": {
			machines: []*clusterv1.Machine{asArbiter(machine("a1", 1, true, "")), machine("m2", 2, true, ""), machine("m3", 3, true, ""), asArbiter(machine("a4", 4, true, ""))},
			outdated: map[string]string{"a1": "x"},
			arbiter:  true, installed: true, want: "a1",
		},
		"two-node: the arbiter's member counts towards quorum": {
			machines: []*clusterv1.Machine{machine("m1", 1, true, "", clusterv1.DeleteMachineAnnotation), machine("m2", 2, false, ""),
				asArbiter(machine("a3", 3, true, "")), machine("m4", 4, true, "")},
			installed: true, want: "m1",
		},
		"two-node: no arbiter to remove": {
			machines: []*clusterv1.Machine{machine("m1", 1, true, ""), machine("m2", 2, true, "")},
			arbiter:  true, installed: true, wantWhy: "no Machine of that kind",
		},
		"oldest healthy when all are healthy": {
			machines:  []*clusterv1.Machine{machine("m1", 1, true, ""), machine("m2", 2, true, ""), machine("m3", 3, true, ""), machine("m4", 4, true, "")},
			installed: true, want: "m1",
		},
		"delete annotation first": {
			machines: []*clusterv1.Machine{machine("m1", 1, true, ""), machine("m2", 2, false, ""), machine("m3", 3, true, "", clusterv1.DeleteMachineAnnotation),
				machine("m4", 4, true, "")},
			installed: true, want: "m3",
		},
		"unhealthy before healthy": {
			machines:  []*clusterv1.Machine{machine("m1", 1, true, ""), machine("m2", 2, true, ""), machine("m3", 3, false, ""), machine("m4", 4, true, "")},
			installed: true, want: "m3",
		},
		"most crowded failure domain": {
			machines: []*clusterv1.Machine{machine("m1", 1, true, "a"), machine("m2", 2, true, "b"), machine("m3", 3, true, "b"),
				machine("m4", 4, true, "c")},
			installed: true, want: "m2",
		},
		"quorum would be lost": {
			machines:  []*clusterv1.Machine{machine("m1", 1, true, ""), machine("m2", 2, true, ""), machine("m3", 3, false, "", clusterv1.DeleteMachineAnnotation), machine("m4", 4, false, "")},
			installed: true, want: "m3",
		},
		"healthy removal below quorum is refused": {
			machines:  []*clusterv1.Machine{machine("m1", 1, true, "", clusterv1.DeleteMachineAnnotation), machine("m2", 2, true, ""), machine("m3", 3, false, ""), machine("m4", 4, false, "")},
			installed: true, wantWhy: "below etcd quorum",
		},
		"last healthy member is never removed": {
			machines:  []*clusterv1.Machine{machine("m1", 1, true, "", clusterv1.DeleteMachineAnnotation), machine("m2", 2, false, "")},
			installed: true, wantWhy: "below etcd quorum",
		},
		"before the installation quorum does not apply": {
			machines:  []*clusterv1.Machine{machine("m1", 1, false, ""), machine("m2", 2, false, "")},
			installed: false, want: "m1",
		},
	} {
		t.Run(name, func(t *testing.T) {
			got, why := selectMachineForScaleDown(tc.machines, tc.outdated, tc.installed, tc.arbiter)
			if tc.wantWhy != "" {
				if got != nil || !strings.Contains(why, tc.wantWhy) {
					t.Fatalf("got %v %q, want nil and a reason containing %q", got, why, tc.wantWhy)
				}
				return
			}
			if got == nil || got.Name != tc.want {
				t.Fatalf("got %v (%s), want %s", got, why, tc.want)
			}
		})
	}
}

func TestFailureDomainForNewMachine(t *testing.T) {
	cluster := &clusterv1.Cluster{}
	if got := failureDomainForNewMachine(cluster, nil); got != "" {
		t.Errorf("no failure domains: got %q", got)
	}
	cluster.Status.FailureDomains = []clusterv1.FailureDomain{
		{Name: "c", ControlPlane: ptr.To(true)}, {Name: "a", ControlPlane: ptr.To(true)},
		{Name: "b", ControlPlane: ptr.To(true)}, {Name: "workers", ControlPlane: ptr.To(false)},
	}
	var machines []*clusterv1.Machine
	var got []string
	for i := range 5 {
		fd := failureDomainForNewMachine(cluster, machines)
		got = append(got, fd)
		machines = append(machines, machine("m", i, true, fd))
	}
	if strings.Join(got, ",") != "a,b,c,a,b" {
		t.Errorf("spread = %v, want a,b,c,a,b", got)
	}
}

func TestDesiredUpdate(t *testing.T) {
	offered := []configv1.Release{{Version: "4.18.1", Image: "quay.io/ocp@sha256:graph"}}
	for _, tc := range []struct {
		name, version, digest string
		available             []configv1.Release
		want                  *configv1.Update
		wantErr               bool
	}{
		{name: "GA, offered by the update service", version: "4.18.1", digest: "reg/ocp@sha256:abc", available: offered,
			want: &configv1.Update{Version: "4.18.1"}},
		{name: "GA, no update service (disconnected)", version: "4.18.1", digest: "reg/ocp@sha256:abc",
			want: &configv1.Update{Version: "4.18.1", Image: "reg/ocp@sha256:abc"}},
		{name: "GA, not offered", version: "4.18.2", digest: "reg/ocp@sha256:abc", available: offered,
			want: &configv1.Update{Version: "4.18.2", Image: "reg/ocp@sha256:abc"}},
		{name: "GA, not offered and not resolved", version: "4.18.2", available: offered, wantErr: true},
		{name: "GA, offered and not resolved", version: "4.18.1", available: offered, want: &configv1.Update{Version: "4.18.1"}},
		{name: "release candidate", version: "4.18.0-rc.2", digest: "reg/ocp@sha256:abc", available: []configv1.Release{{Version: "4.18.0-rc.2"}},
			want: &configv1.Update{Version: "4.18.0-rc.2", Image: "reg/ocp@sha256:abc"}},
		{name: "release candidate, not resolved", version: "4.18.0-rc.2", wantErr: true},
		{name: "not a version", version: "latest", digest: "reg/ocp@sha256:abc", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := desiredUpdate(tc.version, tc.digest, tc.available)
			if (err != nil) != tc.wantErr {
				t.Fatalf("desiredUpdate: %v, want an error: %v", err, tc.wantErr)
			}
			if !tc.wantErr && *got != *tc.want {
				t.Errorf("desiredUpdate = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestNotAccepted: the cluster-version operator's refusals of the update asked, with what to do,
// once its status is about that request.
func TestNotAccepted(t *testing.T) {
	want := &configv1.Update{Version: "4.18.1", Image: "quay.io/ocp@sha256:abc"}
	cv := func(generation, observed int64, u *configv1.Update, conds ...configv1.ClusterOperatorStatusCondition) *configv1.ClusterVersion {
		return &configv1.ClusterVersion{ObjectMeta: metav1.ObjectMeta{Generation: generation},
			Spec: configv1.ClusterVersionSpec{DesiredUpdate: u}, Status: configv1.ClusterVersionStatus{ObservedGeneration: observed, Conditions: conds}}
	}
	unverified := configv1.ClusterOperatorStatusCondition{Type: "ReleaseAccepted", Status: configv1.ConditionFalse, Reason: "RetrievePayload",
		Message: `Retrieving payload failed version="4.18.1" image="quay.io/ocp@sha256:abc" failure=The update cannot be verified: unable to verify sha256:abc`}
	invalid := configv1.ClusterOperatorStatusCondition{Type: "Invalid", Status: configv1.ConditionTrue, Reason: "InvalidClusterVersion",
		Message: "The cluster version is invalid: spec.desiredUpdate.version: when image is empty the update must be an available update"}
	for _, tc := range []struct {
		name string
		cv   *configv1.ClusterVersion
		want []string
	}{
		{name: "accepted", cv: cv(2, 2, want, configv1.ClusterOperatorStatusCondition{Type: "ReleaseAccepted", Status: configv1.ConditionTrue})},
		{name: "not verified", cv: cv(2, 2, want, unverified), want: []string{"does not accept the release", "cannot be verified", "signature ConfigMap", "openshift-config-managed"}},
		{name: "invalid", cv: cv(2, 2, want, invalid), want: []string{"finds the update invalid", "available update", "update service does not offer it"}},
		{name: "status of an earlier request", cv: cv(3, 2, want, unverified)},
		{name: "another request in place", cv: cv(2, 2, &configv1.Update{Version: "4.18.1"}, invalid)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := notAccepted(tc.cv, want)
			if len(tc.want) == 0 && got != "" {
				t.Fatalf("notAccepted = %q, want none", got)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("notAccepted = %q, want it to contain %q", got, w)
				}
			}
		})
	}
}

// TestScaleDownRemovesOneMachineAtATime reconciles a 5-Machine control plane scaled to 3: the
// first pass deletes one Machine, and nothing more is deleted while it is still going away.
func TestScaleDownRemovesOneMachineAtATime(t *testing.T) {
	s, err := capoascheme.New(controlplanev1.AddToScheme)
	if err != nil {
		t.Fatal(err)
	}
	oacp := testOACP(3)
	var objs []client.Object
	for i, name := range []string{"m1", "m2", "m3", "m4", "m5"} {
		m := machine(name, i, true, "")
		m.Namespace = "ns"
		// A finalizer keeps a deleted Machine around, as Cluster API's Machine controller does.
		m.Finalizers = []string{clusterv1.MachineFinalizer}
		objs = append(objs, m)
	}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).WithStatusSubresource(&clusterv1.Machine{}).Build()
	r := &Reconciler{Client: c, APIReader: c, Recorder: events.NewFakeRecorder(10)}
	installed := &hiveextv1beta1.AgentClusterInstall{}
	installed.Status.DebugInfo.State = "installed"

	deleting := func() []string {
		list := &clusterv1.MachineList{}
		if err := c.List(context.Background(), list); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, m := range list.Items {
			if !m.DeletionTimestamp.IsZero() {
				names = append(names, m.Name)
			}
		}
		return names
	}
	for pass := range 2 {
		list := &clusterv1.MachineList{}
		if err := c.List(context.Background(), list); err != nil {
			t.Fatal(err)
		}
		sc := &scope{oacp: oacp, cluster: testCluster(nil, nil), aci: installed}
		for i := range list.Items {
			sc.machines = append(sc.machines, &list.Items[i])
		}
		if _, err := r.reconcileMachines(context.Background(), sc); err != nil {
			t.Fatal(err)
		}
		if got := deleting(); len(got) != 1 || got[0] != "m1" {
			t.Fatalf("pass %d: Machines being deleted = %v, want only the oldest, m1", pass, got)
		}
	}
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
	r := &Reconciler{Client: c, APIReader: c, Recorder: events.NewFakeRecorder(10)}
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
			r := &Reconciler{Client: c, APIReader: c, Recorder: events.NewFakeRecorder(10)}
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
