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

package baremetal

import (
	"context"
	"testing"
	"time"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/internal/steps"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/inventory"
)

type hostEvents struct{ booted, off, cleaned []string }

func (h *hostEvents) Booted(_ context.Context, b inventory.Boot) error {
	h.booted = append(h.booted, b.ISOURL)
	return nil
}
func (h *hostEvents) PoweredOff(_ context.Context, host *inventory.Host) error {
	h.off = append(h.off, host.Name)
	return nil
}
func (h *hostEvents) Deprovisioned(_ context.Context, host *inventory.Host) error {
	h.cleaned = append(h.cleaned, host.Name)
	return nil
}

// TestReconcileSteps checks each state's next step, after the step's duration has elapsed.
func TestReconcileSteps(t *testing.T) {
	host := inventory.Generate("unit", 1, inventory.GenerateOptions{})[0]
	iso := &bmov1alpha1.Image{URL: "https://image/iso", DiskFormat: ptr.To("live-iso")}
	for _, tc := range []struct {
		name        string
		state       bmov1alpha1.ProvisioningState
		image       *bmov1alpha1.Image
		provisioned *bmov1alpha1.Image
		annotations map[string]string
		poweredOn   bool
		deleted     bool
		want        bmov1alpha1.ProvisioningState
		wantBooted  int
		wantCleaned int
	}{
		{name: "new host registers", state: "", want: bmov1alpha1.StateRegistering},
		{name: "registered host is inspected", state: bmov1alpha1.StateRegistering, want: bmov1alpha1.StateInspecting},
		{name: "inspection disabled", state: bmov1alpha1.StateRegistering, want: bmov1alpha1.StateAvailable,
			annotations: map[string]string{bmov1alpha1.InspectAnnotationPrefix: bmov1alpha1.InspectAnnotationValueDisabled}}, //nolint:staticcheck // BMO v0.13 still honours the deprecated annotation; the simulator models it
		{name: "inspected host is available", state: bmov1alpha1.StateInspecting, want: bmov1alpha1.StateAvailable},
		{name: "available host without image stays", state: bmov1alpha1.StateAvailable, poweredOn: true, want: bmov1alpha1.StateAvailable},
		{name: "image set: provisioning", state: bmov1alpha1.StateAvailable, image: iso, want: bmov1alpha1.StateProvisioning},
		{name: "provisioning completes", state: bmov1alpha1.StateProvisioning, image: iso, provisioned: iso, want: bmov1alpha1.StateProvisioned},
		{name: "live ISO boots", state: bmov1alpha1.StateProvisioned, image: iso, provisioned: iso, poweredOn: true,
			want: bmov1alpha1.StateProvisioned, wantBooted: 1},
		{name: "image removed: deprovisioning", state: bmov1alpha1.StateProvisioned, provisioned: iso, poweredOn: true,
			want: bmov1alpha1.StateDeprovisioning},
		{name: "deprovisioning cleans", state: bmov1alpha1.StateDeprovisioning, want: bmov1alpha1.StateAvailable, wantCleaned: 1},
		{name: "moved host takes its status from the annotation", state: "", want: bmov1alpha1.StateProvisioned,
			annotations: map[string]string{bmov1alpha1.StatusAnnotation: `{"provisioning":{"state":"provisioned"},"poweredOn":true}`}},
		{name: "moved host stays paused", state: "", want: "",
			annotations: map[string]string{bmov1alpha1.StatusAnnotation: `{"provisioning":{"state":"provisioned"}}`, bmov1alpha1.PausedAnnotation: "metal3.io/capm3"}},
		{name: "deleted host deprovisions", state: bmov1alpha1.StateProvisioned, provisioned: iso, poweredOn: true,
			deleted: true, want: bmov1alpha1.StateDeprovisioning},
		{name: "host deleted by clusterctl move is not deprovisioned", state: bmov1alpha1.StateProvisioned, provisioned: iso, poweredOn: true,
			deleted: true, want: bmov1alpha1.StateDeleting, annotations: map[string]string{"clusterctl.cluster.x-k8s.io/delete-for-move": ""}},
		{name: "paused host is left alone", state: bmov1alpha1.StateRegistering, want: bmov1alpha1.StateRegistering,
			annotations: map[string]string{bmov1alpha1.PausedAnnotation: ""}},
		{name: "detached host keeps its state", state: bmov1alpha1.StateProvisioned, provisioned: iso, poweredOn: true,
			want: bmov1alpha1.StateProvisioned, annotations: map[string]string{bmov1alpha1.DetachedAnnotation: ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := runtime.NewScheme()
			if err := bmov1alpha1.AddToScheme(s); err != nil {
				t.Fatal(err)
			}
			if err := clientgoscheme.AddToScheme(s); err != nil {
				t.Fatal(err)
			}
			bmh := host.BareMetalHost("ns", "creds")
			bmh.Annotations = tc.annotations
			bmh.Finalizers = []string{bmov1alpha1.BareMetalHostFinalizer}
			bmh.Spec.Image = tc.image
			bmh.Status.Provisioning.State = tc.state
			bmh.Status.PoweredOn = tc.poweredOn
			if tc.deleted {
				bmh.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
			}
			if tc.provisioned != nil {
				bmh.Status.Provisioning.Image = *tc.provisioned
			}
			c := fake.NewClientBuilder().WithScheme(s).WithObjects(bmh).WithStatusSubresource(bmh).Build()
			clk := clocktesting.NewFakePassiveClock(time.Unix(0, 0))
			ev := &hostEvents{}
			r := &Reconciler{Client: c, Inventory: inventory.New(host), Durations: FastDurations(), Hosts: ev,
				Recorder: events.NewFakeRecorder(10), Clock: clk, timer: steps.NewTimer(clk)}
			req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(bmh)}
			res, err := r.Reconcile(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if res.RequeueAfter > 0 { // The step has a duration: let it elapse.
				clk.SetTime(clk.Now().Add(res.RequeueAfter))
				if _, err := r.Reconcile(context.Background(), req); err != nil {
					t.Fatal(err)
				}
			}
			got := &bmov1alpha1.BareMetalHost{}
			if err := c.Get(context.Background(), req.NamespacedName, got); err != nil {
				t.Fatal(err)
			}
			if got.Status.Provisioning.State != tc.want {
				t.Errorf("state %q, want %q", got.Status.Provisioning.State, tc.want)
			}
			if len(ev.booted) != tc.wantBooted || len(ev.cleaned) != tc.wantCleaned {
				t.Errorf("booted %d times and cleaned %d, want %d and %d", len(ev.booted), len(ev.cleaned), tc.wantBooted, tc.wantCleaned)
			}
			if tc.want == bmov1alpha1.StateAvailable && tc.state == bmov1alpha1.StateInspecting && got.Status.HardwareDetails == nil {
				t.Error("inspection reported no hardware")
			}
		})
	}
}
