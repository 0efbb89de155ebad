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
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	conditionsv1 "github.com/openshift/custom-resource-status/conditions/v1"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	infrav1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/infrastructure/v1beta1"
	capoascheme "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/scheme"
)

const testUnbindTimeout = time.Minute

// schemeOnce is the scheme of the package's tests, built once for the fake clients of the unit tests.
var schemeOnce = sync.OnceValues(func() (*runtime.Scheme, error) { return capoascheme.New(infrav1.AddToScheme) })

func testScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	scheme, err := schemeOnce()
	if err != nil {
		t.Fatal(err)
	}
	return scheme
}

// deleteFixture is an AgentMachineReconciler on a fake client that records the patches it sends
// (by kind) and can fail them.
type deleteFixture struct {
	r        *AgentMachineReconciler
	c        client.Client
	recorder *events.FakeRecorder
	// patches are the patches sent, "Kind name: data".
	patches []string
	// getErr fails the Gets of that kind, patchErr the patches of that kind.
	getErr   map[string]error
	patchErr map[string]error
}

func kindOf(obj client.Object) string {
	switch obj.(type) {
	case *aiv1beta1.Agent:
		return "Agent"
	case *clusterv1.Machine:
		return "Machine"
	case *clusterv1.Cluster:
		return "Cluster"
	case *hivev1.ClusterDeployment:
		return "ClusterDeployment"
	case *infrav1.AgentMachine:
		return "AgentMachine"
	}
	return "other"
}

func newDeleteFixture(t *testing.T, objects ...client.Object) *deleteFixture {
	t.Helper()
	scheme := testScheme(t)
	f := &deleteFixture{recorder: events.NewFakeRecorder(10), getErr: map[string]error{}, patchErr: map[string]error{}}
	f.c = fake.NewClientBuilder().WithScheme(scheme).WithObjects(objects...).
		WithIndex(&aiv1beta1.Agent{}, agentClaimIndex, indexAgentClaim).
		WithIndex(&aiv1beta1.Agent{}, agentClaimOwnerIndex, indexAgentClaimOwner).
		WithIndex(&infrav1.AgentMachine{}, agentMachineUIDIndex, indexAgentMachineUID).
		WithIndex(&clusterv1.Machine{}, hookedMachineIndex, indexHookedMachine).
		WithInterceptorFuncs(interceptor.Funcs{
			Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				if err := f.getErr[kindOf(obj)]; err != nil {
					return err
				}
				return c.Get(ctx, key, obj, opts...)
			},
			Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
				data, err := patch.Data(obj)
				if err != nil {
					return err
				}
				f.patches = append(f.patches, kindOf(obj)+" "+obj.GetName()+": "+string(data))
				if err := f.patchErr[kindOf(obj)]; err != nil {
					return err
				}
				return c.Patch(ctx, obj, patch, opts...)
			},
		}).Build()
	f.r = &AgentMachineReconciler{Client: f.c, APIReader: f.c, AgentReader: f.c, Recorder: f.recorder, UnbindTimeout: testUnbindTimeout}
	return f
}

// agent returns the Agent as stored.
func (f *deleteFixture) agent(g Gomega) *aiv1beta1.Agent {
	a := &aiv1beta1.Agent{}
	g.Expect(f.c.Get(context.Background(), client.ObjectKey{Namespace: "agents", Name: "a1"}, a)).To(Succeed())
	return a
}

// deletingAgentMachine is AgentMachine ns/m1, which claimed Agent agents/a1 and chose it.
func deletingAgentMachine() *infrav1.AgentMachine {
	am := &infrav1.AgentMachine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m1", UID: "am-uid",
		Finalizers:  []string{infrav1.AgentMachineFinalizer, infrav1.UpstreamAgentMachineFinalizer},
		Annotations: map[string]string{infrav1.ChosenAgentAnnotation: "agents/a1", "keep": "me"}}}
	am.Status.AgentRef = &infrav1.AgentReference{Namespace: "agents", Name: "a1"}
	am.Spec.ProviderID = "agent://a1"
	return am
}

// boundAgent is Agent agents/a1 as am's claim left it: bound to ns/cd, with the ignition token,
// headers and pool of the claim, and the spec it had before in the previous-spec annotation (none
// when previous is nil).
func boundAgent(am *infrav1.AgentMachine, previous *previousSpec) *aiv1beta1.Agent {
	a := testAgent("a1", withLabel("rack", "r1"))
	markClaimed(a, am)
	a.Annotations["keep"] = "me"
	a.Spec.ClusterDeploymentName = &aiv1beta1.ClusterReference{Namespace: "ns", Name: "cd"}
	a.Spec.IgnitionEndpointTokenReference = &aiv1beta1.IgnitionEndpointTokenReference{Namespace: "ns", Name: "agentmachine-m1-ignition-token"}
	a.Spec.IgnitionEndpointHTTPHeaders = map[string]string{"X-Nodepool": "np1"}
	a.Spec.MachineConfigPool = "ignition"
	if previous != nil {
		raw, err := json.Marshal(previous)
		if err != nil {
			panic(err) // a previousSpec always encodes
		}
		a.Annotations[infrav1.PreviousSpecAnnotation] = string(raw)
	}
	return a
}

func unbindRequested(a *aiv1beta1.Agent, at time.Time) *aiv1beta1.Agent {
	a.Annotations[infrav1.UnbindRequestedAnnotation] = at.UTC().Format(time.RFC3339)
	return a
}

func withBound(a *aiv1beta1.Agent, status corev1.ConditionStatus, reason string) *aiv1beta1.Agent {
	conditionsv1.SetStatusConditionNoHeartbeat(&a.Status.Conditions, conditionsv1.Condition{Type: aiv1beta1.BoundCondition, Status: status, Reason: reason})
	return a
}

func clusterDeploymentObject(name string, deleting bool) *hivev1.ClusterDeployment {
	cd := &hivev1.ClusterDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
	if deleting {
		cd.DeletionTimestamp = ptr.To(metav1.Now())
		cd.Finalizers = []string{"hive.openshift.io/deprovision"}
	}
	return cd
}

// TestReleaseRequestsTheUnbind: the first release of a bound Agent restores the spec the claim
// changed (or no ClusterDeployment, when the one it had is going or the record is unreadable),
// records when it asked, in one locked patch, and waits for assisted-service.
func TestReleaseRequestsTheUnbind(t *testing.T) {
	old := &aiv1beta1.ClusterReference{Namespace: "ns", Name: "old"}
	previous := &previousSpec{ClusterDeploymentName: old, IgnitionEndpointHTTPHeaders: map[string]string{"X-Before": "1"}, MachineConfigPool: "master"}
	for _, tt := range []struct {
		name         string
		agent        func(*infrav1.AgentMachine) *aiv1beta1.Agent
		objects      []client.Object
		wantSpec     aiv1beta1.AgentSpec // the fields the claim changed
		wantPrevious string              // the previous-spec annotation afterwards
		// wantPatch is the patch sent, with TIME for the time of the request.
		wantPatch string
	}{
		{name: "bound back to the ClusterDeployment it had",
			agent:   func(am *infrav1.AgentMachine) *aiv1beta1.Agent { return boundAgent(am, previous) },
			objects: []client.Object{clusterDeploymentObject("old", false)},
			wantSpec: aiv1beta1.AgentSpec{ClusterDeploymentName: old, IgnitionEndpointHTTPHeaders: map[string]string{"X-Before": "1"},
				MachineConfigPool: "master"},
			wantPrevious: `{"clusterDeploymentName":{"name":"old","namespace":"ns"},"ignitionEndpointHTTPHeaders":{"X-Before":"1"},"machineConfigPool":"master"}`,
			wantPatch: `Agent a1: {"metadata":{"annotations":{"` + infrav1.UnbindRequestedAnnotation + `":"TIME"},"resourceVersion":"999"},` +
				`"spec":{"clusterDeploymentName":{"name":"old"},"ignitionEndpointHTTPHeaders":{"X-Before":"1","X-Nodepool":null},` +
				`"ignitionEndpointTokenReference":null,"machineConfigPool":"master"}}`},
		{name: "the ClusterDeployment it had is being deleted",
			agent:        func(am *infrav1.AgentMachine) *aiv1beta1.Agent { return boundAgent(am, previous) },
			objects:      []client.Object{clusterDeploymentObject("old", true)},
			wantSpec:     aiv1beta1.AgentSpec{IgnitionEndpointHTTPHeaders: map[string]string{"X-Before": "1"}, MachineConfigPool: "master"},
			wantPrevious: `{"ignitionEndpointHTTPHeaders":{"X-Before":"1"},"machineConfigPool":"master"}`,
			wantPatch: `Agent a1: {"metadata":{"annotations":{"` + infrav1.PreviousSpecAnnotation + `":"{\"ignitionEndpointHTTPHeaders\":{\"X-Before\":\"1\"},\"machineConfigPool\":\"master\"}",` +
				`"` + infrav1.UnbindRequestedAnnotation + `":"TIME"},"resourceVersion":"999"},` +
				`"spec":{"clusterDeploymentName":null,"ignitionEndpointHTTPHeaders":{"X-Before":"1","X-Nodepool":null},` +
				`"ignitionEndpointTokenReference":null,"machineConfigPool":"master"}}`},
		{name: "the ClusterDeployment it had is gone",
			agent:        func(am *infrav1.AgentMachine) *aiv1beta1.Agent { return boundAgent(am, previous) },
			wantSpec:     aiv1beta1.AgentSpec{IgnitionEndpointHTTPHeaders: map[string]string{"X-Before": "1"}, MachineConfigPool: "master"},
			wantPrevious: `{"ignitionEndpointHTTPHeaders":{"X-Before":"1"},"machineConfigPool":"master"}`},
		{name: "free before the claim",
			agent:        func(am *infrav1.AgentMachine) *aiv1beta1.Agent { return boundAgent(am, &previousSpec{}) },
			wantPrevious: `{}`,
			wantPatch: `Agent a1: {"metadata":{"annotations":{"` + infrav1.UnbindRequestedAnnotation + `":"TIME"},"resourceVersion":"999"},` +
				`"spec":{"clusterDeploymentName":null,"ignitionEndpointHTTPHeaders":null,"ignitionEndpointTokenReference":null,"machineConfigPool":null}}`},
		// cluster-api-provider-agent's claims (adopted) have no previous-spec annotation.
		{name: "no record of the previous spec",
			agent: func(am *infrav1.AgentMachine) *aiv1beta1.Agent { return boundAgent(am, nil) }},
		{name: "an unreadable record of the previous spec",
			agent: func(am *infrav1.AgentMachine) *aiv1beta1.Agent {
				a := boundAgent(am, nil)
				a.Annotations[infrav1.PreviousSpecAnnotation] = "{"
				return a
			},
			wantPrevious: "{"},
		{name: "annotations stripped",
			agent: func(am *infrav1.AgentMachine) *aiv1beta1.Agent {
				a := boundAgent(am, previous)
				a.Annotations = nil
				return a
			}},
		// Whoever may edit the Agent can write any time there: one in the future would hold the
		// release for as long, requeued until then. It is asked again, from now.
		{name: "an unbind requested in the future",
			agent: func(am *infrav1.AgentMachine) *aiv1beta1.Agent {
				return unbindRequested(boundAgent(am, &previousSpec{}), time.Now().AddDate(10, 0, 0))
			},
			wantPrevious: `{}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			am := deletingAgentMachine()
			agent := tt.agent(am)
			f := newDeleteFixture(t, append([]client.Object{agent}, tt.objects...)...)
			before := time.Now().Truncate(time.Second)
			res, done, err := f.r.release(context.Background(), am)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(done).To(BeFalse())
			g.Expect(res).To(Equal(ctrl.Result{RequeueAfter: testUnbindTimeout}))

			got := f.agent(g)
			g.Expect(got.Spec.ClusterDeploymentName).To(Equal(tt.wantSpec.ClusterDeploymentName))
			g.Expect(got.Spec.IgnitionEndpointTokenReference).To(Equal(tt.wantSpec.IgnitionEndpointTokenReference))
			g.Expect(got.Spec.IgnitionEndpointHTTPHeaders).To(Equal(tt.wantSpec.IgnitionEndpointHTTPHeaders))
			g.Expect(got.Spec.MachineConfigPool).To(Equal(tt.wantSpec.MachineConfigPool))
			g.Expect(got.Labels).To(HaveKeyWithValue(infrav1.AgentClaimedByLabel, "am-uid"), "still claimed until it is unbound")
			requested, err := time.Parse(time.RFC3339, got.Annotations[infrav1.UnbindRequestedAnnotation])
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(requested).To(BeTemporally(">=", before))
			g.Expect(requested).To(BeTemporally("<=", time.Now()))
			if tt.wantPrevious == "" {
				g.Expect(got.Annotations).NotTo(HaveKey(infrav1.PreviousSpecAnnotation))
			} else {
				g.Expect(got.Annotations).To(HaveKeyWithValue(infrav1.PreviousSpecAnnotation, tt.wantPrevious))
			}
			g.Expect(f.patches).To(HaveLen(1))
			g.Expect(f.patches[0]).To(ContainSubstring(`"resourceVersion":"999"`), "a locked patch")
			if tt.wantPatch != "" {
				g.Expect(f.patches[0]).To(Equal(strings.ReplaceAll(tt.wantPatch, "TIME", got.Annotations[infrav1.UnbindRequestedAnnotation])))
			}
			g.Expect(condition(am, infrav1.AgentReservedCondition)).To(Equal(&metav1.Condition{Type: infrav1.AgentReservedCondition,
				Status: metav1.ConditionTrue, Reason: infrav1.UnbindingReason, Message: "Waiting for assisted-service to unbind Agent a1"}))
			g.Expect(am.Status.AgentRef).NotTo(BeNil())
			g.Expect(drain(f.recorder)).To(Equal([]string{"Normal AgentUnbinding Unbinding Agent agents/a1"}))
		})
	}
}

// TestReleaseWaitsForTheUnbind: once the unbind is asked for, the claim is dropped when
// assisted-service reports the Agent unbound (or bound back to its previous ClusterDeployment), or
// when the unbind timeout passed (with a warning); until then nothing is written.
func TestReleaseWaitsForTheUnbind(t *testing.T) {
	previous := &previousSpec{ClusterDeploymentName: &aiv1beta1.ClusterReference{Namespace: "ns", Name: "old"}}
	const released = "Normal AgentReleased Released Agent agents/a1"
	for _, tt := range []struct {
		name       string
		previous   *previousSpec
		ago        time.Duration
		bound      corev1.ConditionStatus // "": no Bound condition
		reason     string
		wantDone   bool
		wantEvents []string
	}{
		{name: "no Bound condition yet", ago: 10 * time.Second},
		{name: "still bound", ago: 10 * time.Second, bound: corev1.ConditionTrue, reason: aiv1beta1.BoundReason},
		{name: "unbinding", ago: 10 * time.Second, bound: corev1.ConditionFalse, reason: aiv1beta1.UnbindingReason},
		{name: "unbound", ago: 10 * time.Second, bound: corev1.ConditionFalse, reason: aiv1beta1.UnboundReason,
			wantDone: true, wantEvents: []string{released}},
		{name: "unbound, pending user action", ago: 10 * time.Second, bound: corev1.ConditionFalse, reason: aiv1beta1.UnbindingPendingUserActionReason,
			wantDone: true, wantEvents: []string{released}},
		{name: "bound back to its previous ClusterDeployment", previous: previous, ago: 10 * time.Second,
			bound: corev1.ConditionTrue, reason: aiv1beta1.BoundReason, wantDone: true, wantEvents: []string{released}},
		{name: "bound back, not yet", previous: previous, ago: 10 * time.Second, bound: corev1.ConditionFalse, reason: aiv1beta1.UnboundReason},
		{name: "timed out", ago: testUnbindTimeout + 2*time.Second, bound: corev1.ConditionTrue, reason: aiv1beta1.BoundReason, wantDone: true,
			wantEvents: []string{"Warning UnbindTimedOut assisted-service did not report Agent agents/a1 unbound within 1m0s; releasing it anyway", released}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			am := deletingAgentMachine()
			prev := tt.previous
			if prev == nil {
				prev = &previousSpec{}
			}
			agent := unbindRequested(boundAgent(am, prev), time.Now().Add(-tt.ago))
			agent.Labels[infrav1.UpstreamAgentClaimLabel] = "am-uid"
			agent.Annotations[infrav1.UpstreamAgentClaimNamespaceAnnotation] = "ns"
			if tt.bound != "" {
				withBound(agent, tt.bound, tt.reason)
			}
			f := newDeleteFixture(t, agent)
			f.r.reserved.reserve(client.ObjectKeyFromObject(agent), am.UID, true, time.Now())
			res, done, err := f.r.release(context.Background(), am)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(done).To(Equal(tt.wantDone))
			g.Expect(drain(f.recorder)).To(Equal(tt.wantEvents))
			reserved := condition(am, infrav1.AgentReservedCondition)
			if !tt.wantDone {
				// Requeued for a second after the timeout passes, counted from the request time as
				// written: RFC 3339 drops the fraction of a second (up to 1 s less), and the time
				// this test took since it wrote it passed too (a few ms, more on a loaded machine:
				// centring on the upper end with 1 s either way failed at 49.99 s of 50-51 s).
				g.Expect(res.RequeueAfter).To(And(BeNumerically("<=", testUnbindTimeout-tt.ago+time.Second),
					BeNumerically(">", testUnbindTimeout-tt.ago-5*time.Second)))
				g.Expect(f.patches).To(BeEmpty())
				g.Expect(reserved).To(Equal(&metav1.Condition{Type: infrav1.AgentReservedCondition, Status: metav1.ConditionTrue,
					Reason: infrav1.UnbindingReason, Message: "Waiting for assisted-service to unbind Agent a1"}))
				g.Expect(am.Status.AgentRef).NotTo(BeNil())
				g.Expect(am.Annotations).To(HaveKey(infrav1.ChosenAgentAnnotation))
				return
			}
			g.Expect(res).To(Equal(ctrl.Result{}))
			// Only the claim goes: the labels and annotations of others stay, the spec as the
			// unbind left it.
			g.Expect(f.patches).To(Equal([]string{`Agent a1: {"metadata":{"annotations":{"` +
				infrav1.UpstreamAgentClaimNamespaceAnnotation + `":null,"` + infrav1.ClaimOwnerAnnotation + `":null,"` +
				infrav1.PreviousSpecAnnotation + `":null,"` + infrav1.UnbindRequestedAnnotation + `":null},` +
				`"labels":{"` + infrav1.UpstreamAgentClaimLabel + `":null,"` + infrav1.AgentClaimedByLabel + `":null},"resourceVersion":"999"}}`}))
			got := f.agent(g)
			g.Expect(got.Labels).To(Equal(map[string]string{"rack": "r1"}))
			g.Expect(got.Annotations).To(Equal(map[string]string{"keep": "me"}))
			g.Expect(am.Status.AgentRef).To(BeNil())
			g.Expect(am.Annotations).To(Equal(map[string]string{"keep": "me"}), "the choice is forgotten")
			g.Expect(f.r.reserved.heldByOther(client.ObjectKeyFromObject(agent), "another", time.Now())).To(BeFalse(), "the reservation is released")
			g.Expect(reserved).To(Equal(&metav1.Condition{Type: infrav1.AgentReservedCondition, Status: metav1.ConditionFalse,
				Reason: infrav1.NoAgentReason, Message: "The Agent is released"}))
			for _, typ := range mirroredTypes {
				g.Expect(condition(am, typ)).To(Equal(&metav1.Condition{Type: typ, Status: metav1.ConditionUnknown,
					Reason: infrav1.NoAgentReason, Message: "The Agent is released"}), typ)
			}
		})
	}
}

// TestReleaseWithoutAgent: an AgentMachine whose Agent is gone (or that never claimed one) is
// released at once, its choice forgotten.
func TestReleaseWithoutAgent(t *testing.T) {
	for _, tt := range []struct {
		name string
		am   func() *infrav1.AgentMachine
	}{
		{"the claimed Agent is gone", deletingAgentMachine},
		{"never claimed", func() *infrav1.AgentMachine {
			return &infrav1.AgentMachine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m1", UID: "am-uid"}}
		}},
		// Another AgentMachine's Agent is not ours to release.
		{"the Agent is another's", func() *infrav1.AgentMachine {
			am := deletingAgentMachine()
			am.UID = "other-uid"
			return am
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			owner := deletingAgentMachine()
			var objects []client.Object
			if tt.name == "the Agent is another's" {
				objects = append(objects, boundAgent(owner, &previousSpec{}))
			}
			f := newDeleteFixture(t, objects...)
			am := tt.am()
			res, done, err := f.r.release(context.Background(), am)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(done).To(BeTrue())
			g.Expect(res).To(Equal(ctrl.Result{}))
			g.Expect(f.patches).To(BeEmpty())
			g.Expect(am.Annotations).NotTo(HaveKey(infrav1.ChosenAgentAnnotation))
			g.Expect(condition(am, infrav1.AgentReservedCondition)).To(Equal(&metav1.Condition{Type: infrav1.AgentReservedCondition,
				Status: metav1.ConditionFalse, Reason: infrav1.NoAgentReason, Message: "No Agent is claimed"}))
			for _, typ := range mirroredTypes {
				g.Expect(condition(am, typ)).To(Equal(&metav1.Condition{Type: typ, Status: metav1.ConditionUnknown,
					Reason: infrav1.NoAgentReason, Message: "The Agent is released"}), typ)
			}
		})
	}
}

// TestReleaseErrors: a read or write that fails ends the release with an error that says which.
func TestReleaseErrors(t *testing.T) {
	boom := errors.New("boom")
	previous := &previousSpec{ClusterDeploymentName: &aiv1beta1.ClusterReference{Namespace: "ns", Name: "old"}}
	notFound := apierrors.NewNotFound(schema.GroupResource{Group: "agent-install.openshift.io", Resource: "agents"}, "a1")
	for _, tt := range []struct {
		name     string
		agent    func(*infrav1.AgentMachine) *aiv1beta1.Agent
		getErr   map[string]error
		patchErr map[string]error
		wantErr  string
		wantDone bool
	}{
		{name: "the Agent cannot be read", agent: func(am *infrav1.AgentMachine) *aiv1beta1.Agent { return boundAgent(am, previous) },
			getErr: map[string]error{"Agent": boom}, wantErr: "getting Agent agents/a1: boom"},
		{name: "the previous ClusterDeployment cannot be read", agent: func(am *infrav1.AgentMachine) *aiv1beta1.Agent { return boundAgent(am, previous) },
			getErr: map[string]error{"ClusterDeployment": boom}, wantErr: "reading ClusterDeployment ns/old: boom"},
		{name: "the unbind cannot be written", agent: func(am *infrav1.AgentMachine) *aiv1beta1.Agent { return boundAgent(am, &previousSpec{}) },
			patchErr: map[string]error{"Agent": boom}, wantErr: "unbinding Agent agents/a1: boom"},
		{name: "the release cannot be written", agent: func(am *infrav1.AgentMachine) *aiv1beta1.Agent {
			return withBound(unbindRequested(boundAgent(am, &previousSpec{}), time.Now()), corev1.ConditionFalse, aiv1beta1.UnboundReason)
		}, patchErr: map[string]error{"Agent": boom}, wantErr: "releasing Agent agents/a1: boom"},
		// Deleted between the read and the release: nothing is left to release, and the
		// AgentMachine no longer points at it.
		{name: "the Agent went before its release", agent: func(am *infrav1.AgentMachine) *aiv1beta1.Agent {
			return withBound(unbindRequested(boundAgent(am, &previousSpec{}), time.Now()), corev1.ConditionFalse, aiv1beta1.UnboundReason)
		}, patchErr: map[string]error{"Agent": notFound}, wantDone: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			am := deletingAgentMachine()
			f := newDeleteFixture(t, tt.agent(am))
			f.getErr, f.patchErr = tt.getErr, tt.patchErr
			if f.getErr == nil {
				f.getErr = map[string]error{}
			}
			if f.patchErr == nil {
				f.patchErr = map[string]error{}
			}
			res, done, err := f.r.release(context.Background(), am)
			if tt.wantErr != "" {
				g.Expect(err).To(MatchError(tt.wantErr))
			} else {
				g.Expect(err).NotTo(HaveOccurred())
			}
			g.Expect(done).To(Equal(tt.wantDone))
			g.Expect(res).To(Equal(ctrl.Result{}))
			if tt.wantDone {
				g.Expect(am.Status.AgentRef).To(BeNil())
				g.Expect(am.Annotations).NotTo(HaveKey(infrav1.ChosenAgentAnnotation))
				g.Expect(condition(am, infrav1.AgentReservedCondition).Reason).To(Equal(infrav1.NoAgentReason))
			}
		})
	}
}

func TestUnbound(t *testing.T) {
	toOld := previousSpec{ClusterDeploymentName: &aiv1beta1.ClusterReference{Namespace: "ns", Name: "old"}}
	for _, tt := range []struct {
		name     string
		previous previousSpec
		status   corev1.ConditionStatus // "": no Bound condition
		reason   string
		want     bool
	}{
		{"to none: no condition", previousSpec{}, "", "", false},
		{"to none: bound", previousSpec{}, corev1.ConditionTrue, aiv1beta1.BoundReason, false},
		{"to none: unbinding", previousSpec{}, corev1.ConditionFalse, aiv1beta1.UnbindingReason, false},
		{"to none: binding", previousSpec{}, corev1.ConditionFalse, aiv1beta1.BindingReason, false},
		{"to none: unbound", previousSpec{}, corev1.ConditionFalse, aiv1beta1.UnboundReason, true},
		{"to none: pending user action", previousSpec{}, corev1.ConditionFalse, aiv1beta1.UnbindingPendingUserActionReason, true},
		{"to none: unknown", previousSpec{}, corev1.ConditionUnknown, aiv1beta1.UnboundReason, false},
		{"back: no condition", toOld, "", "", false},
		{"back: bound", toOld, corev1.ConditionTrue, aiv1beta1.BoundReason, true},
		{"back: true, another reason", toOld, corev1.ConditionTrue, aiv1beta1.BindingReason, false},
		{"back: unbound", toOld, corev1.ConditionFalse, aiv1beta1.UnboundReason, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := testAgent("a1")
			if tt.status != "" {
				withBound(a, tt.status, tt.reason)
			}
			NewWithT(t).Expect(unbound(a, tt.previous)).To(Equal(tt.want))
		})
	}
}

func TestUnbindTimeout(t *testing.T) {
	g := NewWithT(t)
	g.Expect((&AgentMachineReconciler{}).unbindTimeout()).To(Equal(DefaultUnbindTimeout))
	g.Expect((&AgentMachineReconciler{UnbindTimeout: -time.Second}).unbindTimeout()).To(Equal(DefaultUnbindTimeout))
	g.Expect((&AgentMachineReconciler{UnbindTimeout: 5 * time.Second}).unbindTimeout()).To(Equal(5 * time.Second))
}

func TestClusterDeploymentGoing(t *testing.T) {
	ref := &aiv1beta1.ClusterReference{Namespace: "ns", Name: "old"}
	for _, tt := range []struct {
		name    string
		objects []client.Object
		getErr  error
		want    bool
		wantErr string
	}{
		{name: "there", objects: []client.Object{clusterDeploymentObject("old", false)}, want: false},
		{name: "being deleted", objects: []client.Object{clusterDeploymentObject("old", true)}, want: true},
		{name: "gone", want: true},
		{name: "another one there", objects: []client.Object{clusterDeploymentObject("new", false)}, want: true},
		{name: "unreadable", getErr: errors.New("boom"), wantErr: "reading ClusterDeployment ns/old: boom"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			f := newDeleteFixture(t, tt.objects...)
			if tt.getErr != nil {
				f.getErr["ClusterDeployment"] = tt.getErr
			}
			got, err := f.r.clusterDeploymentGoing(context.Background(), ref)
			if tt.wantErr != "" {
				g.Expect(err).To(MatchError(tt.wantErr))
			} else {
				g.Expect(err).NotTo(HaveOccurred())
			}
			g.Expect(got).To(Equal(tt.want))
		})
	}
}

// hookedMachine is Machine ns/<name> of Cluster c1, infrastructure AgentMachine agentMachine,
// carrying our pre-terminate hook and another annotation.
func hookedMachine(name, agentMachine string) *clusterv1.Machine {
	return &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: map[string]string{clusterv1.ClusterNameLabel: "c1"},
			Annotations: map[string]string{infrav1.PreTerminateHookAnnotation: preTerminateHookOwner, "keep": "me"}},
		Spec: clusterv1.MachineSpec{ClusterName: "c1", InfrastructureRef: clusterv1.ContractVersionedObjectReference{
			APIGroup: infrav1.GroupVersion.Group, Kind: agentMachineKind, Name: agentMachine}},
	}
}

const hookRemoval = `Machine m1: {"metadata":{"annotations":{"` + infrav1.PreTerminateHookAnnotation + `":null}}}`

func TestRemovePreTerminateHook(t *testing.T) {
	notFound := apierrors.NewNotFound(schema.GroupResource{Group: "cluster.x-k8s.io", Resource: "machines"}, "m1")
	for _, tt := range []struct {
		name        string
		machine     *clusterv1.Machine
		patchErr    error
		wantPatches []string
		wantErr     string
	}{
		{name: "no Machine"},
		{name: "no hook", machine: func() *clusterv1.Machine {
			m := hookedMachine("m1", "m1")
			delete(m.Annotations, infrav1.PreTerminateHookAnnotation)
			return m
		}()},
		{name: "hooked", machine: hookedMachine("m1", "m1"), wantPatches: []string{hookRemoval}},
		{name: "the Machine is gone", machine: hookedMachine("m1", "m1"), patchErr: notFound, wantPatches: []string{hookRemoval}},
		{name: "the patch fails", machine: hookedMachine("m1", "m1"), patchErr: errors.New("boom"), wantPatches: []string{hookRemoval},
			wantErr: "removing the pre-terminate hook from Machine m1: boom"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			var objects []client.Object
			if tt.machine != nil {
				objects = append(objects, tt.machine)
			}
			f := newDeleteFixture(t, objects...)
			if tt.patchErr != nil {
				f.patchErr["Machine"] = tt.patchErr
			}
			var m *clusterv1.Machine
			if tt.machine != nil {
				m = &clusterv1.Machine{}
				g.Expect(f.c.Get(context.Background(), client.ObjectKeyFromObject(tt.machine), m)).To(Succeed())
			}
			err := f.r.removePreTerminateHook(context.Background(), m)
			if tt.wantErr != "" {
				g.Expect(err).To(MatchError(tt.wantErr))
			} else {
				g.Expect(err).NotTo(HaveOccurred())
			}
			g.Expect(f.patches).To(Equal(tt.wantPatches))
			if tt.machine != nil && tt.patchErr == nil {
				got := &clusterv1.Machine{}
				g.Expect(f.c.Get(context.Background(), client.ObjectKeyFromObject(tt.machine), got)).To(Succeed())
				g.Expect(got.Annotations).To(Equal(map[string]string{"keep": "me"}))
			}
		})
	}
}

// TestReconcileMachineDeleting: while its Machine is being deleted, the AgentMachine waits for
// Cluster API to reach the pre-terminate hook (the Node drained), then releases its Agent, and
// removes the hook once it is released.
func TestReconcileMachineDeleting(t *testing.T) {
	deleting := func(reason string) func(*clusterv1.Machine) {
		return func(m *clusterv1.Machine) {
			conditions.Set(m, metav1.Condition{Type: clusterv1.MachineDeletingCondition, Status: metav1.ConditionTrue, Reason: reason})
		}
	}
	const waitingForDrain = "Waiting for Cluster API to drain the Machine before the Agent is unbound"
	for _, tt := range []struct {
		name        string
		machine     func(*clusterv1.Machine)
		agent       bool
		want        ctrl.Result
		wantReason  string // of AgentReserved; "": none set
		wantMessage string
		wantPatches []string
	}{
		{name: "no hook", machine: func(m *clusterv1.Machine) {
			delete(m.Annotations, infrav1.PreTerminateHookAnnotation)
			deleting(clusterv1.MachineDeletingWaitingForPreTerminateHookReason)(m)
		}, agent: true},
		{name: "no Deleting condition yet", agent: true, wantReason: infrav1.UnbindingReason, wantMessage: waitingForDrain},
		{name: "draining", machine: deleting(clusterv1.MachineDeletingDrainingNodeReason), agent: true,
			wantReason: infrav1.UnbindingReason, wantMessage: waitingForDrain},
		{name: "at the hook", machine: deleting(clusterv1.MachineDeletingWaitingForPreTerminateHookReason), agent: true,
			want: ctrl.Result{RequeueAfter: testUnbindTimeout}, wantReason: infrav1.UnbindingReason, wantMessage: "Waiting for assisted-service to unbind Agent a1"},
		{name: "at the hook, released", machine: deleting(clusterv1.MachineDeletingWaitingForPreTerminateHookReason),
			wantReason: infrav1.NoAgentReason, wantMessage: "No Agent is claimed", wantPatches: []string{hookRemoval}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			am := deletingAgentMachine()
			m := hookedMachine("m1", "m1")
			if tt.machine != nil {
				tt.machine(m)
			}
			objects := []client.Object{m}
			if tt.agent {
				objects = append(objects, boundAgent(am, &previousSpec{}))
			}
			f := newDeleteFixture(t, objects...)
			live := &clusterv1.Machine{}
			g.Expect(f.c.Get(context.Background(), client.ObjectKeyFromObject(m), live)).To(Succeed())
			res, err := f.r.reconcileMachineDeleting(context.Background(), &scope{agentMachine: am, machine: live})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(res).To(Equal(tt.want))
			c := condition(am, infrav1.AgentReservedCondition)
			if tt.wantReason == "" {
				g.Expect(c).To(BeNil())
			} else {
				g.Expect(c).NotTo(BeNil())
				g.Expect(c.Reason).To(Equal(tt.wantReason))
				g.Expect(c.Message).To(Equal(tt.wantMessage))
			}
			var machinePatches []string
			for _, p := range f.patches {
				if strings.HasPrefix(p, "Machine ") {
					machinePatches = append(machinePatches, p)
				}
			}
			g.Expect(machinePatches).To(Equal(tt.wantPatches))
			if tt.agent && tt.want.RequeueAfter > 0 {
				g.Expect(f.agent(g).Annotations).To(HaveKey(infrav1.UnbindRequestedAnnotation), "the unbind is asked for")
			} else if tt.agent {
				g.Expect(f.patches).To(BeEmpty(), "the Agent is left bound")
			}
		})
	}
}

// TestReconcileDelete: a deleted AgentMachine releases its Agent, removes the hook from its
// Machine, then its finalizers and what this process remembers of its ignition token; until its
// Agent is released it keeps them.
func TestReconcileDelete(t *testing.T) {
	for _, tt := range []struct {
		name          string
		agent         bool
		noMachine     bool
		hookErr       error
		want          ctrl.Result
		wantErr       string
		wantFinalized bool // the finalizers are removed
	}{
		{name: "released", wantFinalized: true},
		{name: "released, no Machine", noMachine: true, wantFinalized: true},
		{name: "unbinding", agent: true, want: ctrl.Result{RequeueAfter: testUnbindTimeout}},
		{name: "the hook cannot be removed", hookErr: errors.New("boom"), wantErr: "removing the pre-terminate hook from Machine m1: boom"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := context.Background()
			am := deletingAgentMachine()
			am.DeletionTimestamp = ptr.To(metav1.Now())
			objects := []client.Object{hookedMachine("m1", "m1")}
			if tt.agent {
				objects = append(objects, boundAgent(am, &previousSpec{}))
			}
			f := newDeleteFixture(t, objects...)
			if tt.hookErr != nil {
				f.patchErr["Machine"] = tt.hookErr
			}
			f.r.tokens.Store(am.UID, [32]byte{1})
			f.r.tokensRead.Store(am.UID, time.Now())
			s := &scope{agentMachine: am}
			if !tt.noMachine {
				s.machine = &clusterv1.Machine{}
				g.Expect(f.c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "m1"}, s.machine)).To(Succeed())
			}
			res, err := f.r.reconcileDelete(ctx, s)
			if tt.wantErr != "" {
				g.Expect(err).To(MatchError(tt.wantErr))
			} else {
				g.Expect(err).NotTo(HaveOccurred())
			}
			g.Expect(res).To(Equal(tt.want))
			stored := &clusterv1.Machine{}
			g.Expect(f.c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "m1"}, stored)).To(Succeed())
			_, token := f.r.tokens.Load(am.UID)
			_, read := f.r.tokensRead.Load(am.UID)
			if tt.wantFinalized {
				g.Expect(am.Finalizers).To(BeEmpty())
				g.Expect(token || read).To(BeFalse(), "the token is forgotten")
			} else {
				g.Expect(am.Finalizers).To(Equal([]string{infrav1.AgentMachineFinalizer, infrav1.UpstreamAgentMachineFinalizer}))
				g.Expect(token && read).To(BeTrue())
			}
			if tt.wantFinalized && !tt.noMachine {
				g.Expect(stored.Annotations).NotTo(HaveKey(infrav1.PreTerminateHookAnnotation))
			} else {
				g.Expect(stored.Annotations).To(HaveKey(infrav1.PreTerminateHookAnnotation))
			}
		})
	}
}

// TestReleaseOrphanedHooks: the hook of a Machine whose AgentMachine the API server says is gone
// is removed (with an event), unless the Machine or its Cluster is paused, the Machine is outside
// the watch filter or being moved; nothing is read from the API server without such a Machine.
func TestReleaseOrphanedHooks(t *testing.T) {
	boom := errors.New("boom")
	gone := apierrors.NewNotFound(schema.GroupResource{Group: infrav1.GroupVersion.Group, Resource: "agentmachines"}, "m1")
	const removed = "Normal PreTerminateHookRemoved Removed the pre-terminate hook of AgentMachine m1, which is gone"
	cluster := func(paused bool) *clusterv1.Cluster {
		return &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c1"}, Spec: clusterv1.ClusterSpec{Paused: ptr.To(paused)}}
	}
	withAnnotation := func(k string) func(*clusterv1.Machine) { return func(m *clusterv1.Machine) { m.Annotations[k] = "" } }
	for _, tt := range []struct {
		name        string
		machine     func(*clusterv1.Machine) // nil: the Machine is as hookedMachine makes it
		other       *clusterv1.Machine       // instead of Machine m1
		cluster     *clusterv1.Cluster
		watchFilter string
		apiErr      error // of the AgentMachine's read; nil: it exists
		getErr      map[string]error
		patchErr    error
		wantReads   int
		wantRemoved bool
		wantErr     string
	}{
		{name: "the AgentMachine exists", cluster: cluster(false), wantReads: 1},
		{name: "orphaned", cluster: cluster(false), apiErr: gone, wantReads: 1, wantRemoved: true},
		{name: "orphaned, its Cluster gone", apiErr: gone, wantReads: 1, wantRemoved: true},
		{name: "orphaned, no Cluster", machine: func(m *clusterv1.Machine) { delete(m.Labels, clusterv1.ClusterNameLabel) },
			apiErr: gone, wantReads: 1, wantRemoved: true},
		{name: "orphaned, paused", machine: withAnnotation(clusterv1.PausedAnnotation), cluster: cluster(false), apiErr: gone, wantReads: 1},
		{name: "orphaned, its Cluster paused", cluster: cluster(true), apiErr: gone, wantReads: 1},
		{name: "orphaned, being moved", machine: withAnnotation("clusterctl.cluster.x-k8s.io/delete-for-move"), cluster: cluster(false),
			apiErr: gone, wantReads: 1},
		{name: "orphaned, outside the watch filter", watchFilter: "mine", cluster: cluster(false), apiErr: gone, wantReads: 1},
		{name: "orphaned, in the watch filter", watchFilter: "mine", machine: func(m *clusterv1.Machine) { m.Labels[clusterv1.WatchLabel] = "mine" },
			cluster: cluster(false), apiErr: gone, wantReads: 1, wantRemoved: true},
		{name: "the AgentMachine cannot be read", cluster: cluster(false), apiErr: boom, wantReads: 1, wantErr: "reading AgentMachine m1: boom"},
		{name: "the Cluster cannot be read", getErr: map[string]error{"Cluster": boom}, apiErr: gone, wantReads: 1,
			wantErr: "getting the Cluster of Machine m1: failed to get Cluster ns/c1: boom"},
		{name: "the hook cannot be removed", cluster: cluster(false), apiErr: gone, patchErr: boom, wantReads: 1,
			wantErr: "removing the pre-terminate hook from Machine m1: boom"},
		{name: "the Machines cannot be listed", getErr: map[string]error{"list": boom}, apiErr: gone,
			wantErr: "listing the Machines of AgentMachine m1: boom"},
		{name: "a Machine of another AgentMachine", other: hookedMachine("m2", "m2"), apiErr: gone},
		{name: "a Machine in another namespace", other: func() *clusterv1.Machine {
			m := hookedMachine("m1", "m1")
			m.Namespace = "other"
			return m
		}(), apiErr: gone},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := context.Background()
			m := tt.other
			if m == nil {
				m = hookedMachine("m1", "m1")
				if tt.machine != nil {
					tt.machine(m)
				}
			}
			objects := []client.Object{m}
			if tt.cluster != nil {
				objects = append(objects, tt.cluster)
			}
			f := newDeleteFixture(t, objects...)
			for k, v := range tt.getErr {
				f.getErr[k] = v
			}
			if tt.patchErr != nil {
				f.patchErr["Machine"] = tt.patchErr
			}
			if err := f.getErr["list"]; err != nil {
				f.r.Client = interceptor.NewClient(f.c.(client.WithWatch), interceptor.Funcs{
					List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error { return err },
				})
			}
			reads := 0
			f.r.APIReader = agentMachineReads(g, tt.apiErr, &reads)
			f.r.WatchFilterValue = tt.watchFilter
			err := f.r.releaseOrphanedHooks(ctx, client.ObjectKey{Namespace: "ns", Name: "m1"})
			if tt.wantErr != "" {
				g.Expect(err).To(MatchError(tt.wantErr))
			} else {
				g.Expect(err).NotTo(HaveOccurred())
			}
			g.Expect(reads).To(Equal(tt.wantReads), "reads of the AgentMachine from the API server")
			stored := &clusterv1.Machine{}
			g.Expect(f.c.Get(ctx, client.ObjectKeyFromObject(m), stored)).To(Succeed())
			if tt.wantRemoved {
				g.Expect(stored.Annotations).To(Equal(map[string]string{"keep": "me"}))
				g.Expect(drain(f.recorder)).To(Equal([]string{removed}))
			} else {
				g.Expect(stored.Annotations).To(HaveKey(infrav1.PreTerminateHookAnnotation))
				g.Expect(drain(f.recorder)).To(BeEmpty())
			}
		})
	}
}

// agentMachineReads answers the reads of AgentMachine ns/m1 from the API server with err, and
// counts them.
func agentMachineReads(g Gomega, err error, reads *int) readerFunc {
	return func(_ context.Context, key client.ObjectKey, obj client.Object) error {
		*reads++
		g.Expect(obj).To(BeAssignableToTypeOf(&infrav1.AgentMachine{}))
		g.Expect(key).To(Equal(client.ObjectKey{Namespace: "ns", Name: "m1"}))
		return err
	}
}

// TestReleaseStaleClaims: an Agent still claimed for an AgentMachine that the API server says is
// gone is released, with a Warning event on the Agent: unbound first when its host's installation
// has not started, its binding kept when it has (only the claim goes). A claim whose AgentMachine
// exists (by name, or by UID under another name) or an Agent outside the AgentMachine's scope is
// left alone, and without a claimed Agent the API server is not asked.
func TestReleaseStaleClaims(t *testing.T) {
	gone := apierrors.NewNotFound(schema.GroupResource{Group: infrav1.GroupVersion.Group, Resource: "agentmachines"}, "m1")
	am := deletingAgentMachine()
	installed := func(status corev1.ConditionStatus, reason string) func(*aiv1beta1.Agent) {
		return func(a *aiv1beta1.Agent) {
			conditionsv1.SetStatusConditionNoHeartbeat(&a.Status.Conditions, conditionsv1.Condition{Type: aiv1beta1.InstalledCondition, Status: status, Reason: reason})
		}
	}
	previous := &previousSpec{}
	const (
		unbinding = "Warning StaleClaim AgentMachine ns/m1, which claimed this Agent, was removed without releasing it; unbinding the Agent and returning its host to the pool"
		keeping   = "Warning StaleClaim AgentMachine ns/m1, which claimed this Agent, was removed without releasing it; the host's installation has started, so the Agent stays bound to its cluster and only the claim is dropped. Delete the Agent if the host left that cluster"
		asked     = "Normal AgentUnbinding Unbinding Agent ns/a1"
		released  = "Normal AgentReleased Released Agent ns/a1"
	)
	for _, tt := range []struct {
		name        string
		agent       func(*aiv1beta1.Agent)
		holder      *infrav1.AgentMachine // an AgentMachine in the cache
		apiErr      error                 // of the AgentMachine's read; nil: it exists
		patchErr    error                 // of the Agent's patches
		watchFilter string
		wantReads   int
		wantEvents  []string
		wantClaimed bool
		wantBound   bool // still bound to ns/cd
		wantRequeue bool
	}{
		{name: "the AgentMachine exists", apiErr: nil, wantReads: 1, wantClaimed: true, wantBound: true},
		{name: "gone: unbind first", apiErr: gone, wantReads: 1, wantEvents: []string{asked, unbinding}, wantClaimed: true, wantRequeue: true},
		{name: "gone: unbound, released", agent: func(a *aiv1beta1.Agent) {
			unbindRequested(a, time.Now())
			a.Spec.ClusterDeploymentName = nil
			withBound(a, corev1.ConditionFalse, aiv1beta1.UnboundReason)
		}, apiErr: gone, wantReads: 1, wantEvents: []string{released}},
		{name: "gone: the Agent changed since the cache's copy", apiErr: gone, patchErr: apierrors.NewConflict(schema.GroupResource{Resource: "agents"}, "a1", errors.New("changed")),
			wantReads: 1, wantClaimed: true, wantBound: true, wantRequeue: true},
		{name: "gone: installed, binding kept", agent: installed(corev1.ConditionTrue, aiv1beta1.InstalledReason), apiErr: gone, wantReads: 1,
			wantEvents: []string{released, keeping}, wantBound: true},
		{name: "gone: installing, binding kept", agent: installed(corev1.ConditionFalse, aiv1beta1.InstallationInProgressReason), apiErr: gone, wantReads: 1,
			wantEvents: []string{released, keeping}, wantBound: true},
		{name: "gone: installation failed, unbind first", agent: installed(corev1.ConditionFalse, aiv1beta1.InstallationFailedReason), apiErr: gone, wantReads: 1,
			wantEvents: []string{asked, unbinding}, wantClaimed: true, wantRequeue: true},
		{name: "gone by name, its UID another AgentMachine's", holder: &infrav1.AgentMachine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "m9", UID: am.UID}},
			apiErr: gone, wantReads: 1, wantClaimed: true, wantBound: true},
		{name: "upstream's claim by name", agent: func(a *aiv1beta1.Agent) {
			delete(a.Labels, infrav1.AgentClaimedByLabel)
			delete(a.Annotations, infrav1.ClaimOwnerAnnotation)
			a.Labels[infrav1.UpstreamAgentClaimLabel] = "m1"
			a.Annotations[infrav1.UpstreamAgentClaimNamespaceAnnotation] = "ns"
			installed(corev1.ConditionTrue, aiv1beta1.InstalledReason)(a)
		}, apiErr: gone, wantReads: 1, wantEvents: []string{released, keeping}, wantBound: true},
		{name: "a manager with a watch filter", watchFilter: "mine", apiErr: gone, wantClaimed: true, wantBound: true},
		{name: "an Agent of another namespace", agent: func(a *aiv1beta1.Agent) { a.Namespace = "agents" }, apiErr: gone, wantClaimed: true, wantBound: true},
		{name: "no claim", agent: func(a *aiv1beta1.Agent) {
			delete(a.Labels, infrav1.AgentClaimedByLabel)
			delete(a.Annotations, infrav1.ClaimOwnerAnnotation)
		}, apiErr: gone, wantBound: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := context.Background()
			a := boundAgent(am, previous)
			a.Namespace = "ns"
			if tt.agent != nil {
				tt.agent(a)
			}
			objects := []client.Object{a}
			if tt.holder != nil {
				objects = append(objects, tt.holder)
			}
			f := newDeleteFixture(t, objects...)
			if tt.patchErr != nil {
				f.patchErr["Agent"] = tt.patchErr
			}
			reads := 0
			f.r.APIReader = agentMachineReads(g, tt.apiErr, &reads)
			f.r.WatchFilterValue = tt.watchFilter
			res, err := f.r.releaseStaleClaims(ctx, client.ObjectKey{Namespace: "ns", Name: "m1"})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(reads).To(Equal(tt.wantReads), "reads of the AgentMachine from the API server")
			if tt.wantRequeue {
				g.Expect(res.RequeueAfter).To(BeNumerically(">", 0))
			} else {
				g.Expect(res.RequeueAfter).To(BeZero())
			}
			var events []string
			for len(f.recorder.Events) > 0 {
				events = append(events, <-f.recorder.Events)
			}
			g.Expect(events).To(Equal(tt.wantEvents))
			got := &aiv1beta1.Agent{}
			g.Expect(f.c.Get(ctx, client.ObjectKeyFromObject(a), got)).To(Succeed())
			_, claimed := got.Labels[infrav1.AgentClaimedByLabel]
			_, upstream := got.Labels[infrav1.UpstreamAgentClaimLabel]
			g.Expect(claimed || upstream).To(Equal(tt.wantClaimed), "claim labels %v", got.Labels)
			g.Expect(got.Spec.ClusterDeploymentName != nil).To(Equal(tt.wantBound), "binding %v", got.Spec.ClusterDeploymentName)
			g.Expect(got.Labels).To(HaveKeyWithValue("rack", "r1"))
		})
	}
}
