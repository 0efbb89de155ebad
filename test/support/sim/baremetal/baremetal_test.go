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
	"slices"
	"strings"
	"testing"
	"time"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
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

type hostEvents struct {
	booted, off, cleaned []string
	boots                []inventory.Boot
}

func (h *hostEvents) Booted(_ context.Context, b inventory.Boot) error {
	h.booted = append(h.booted, b.ISOURL+b.DiskImageURL)
	h.boots = append(h.boots, b)
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
		{name: "inspection disabled", state: bmov1alpha1.StateRegistering, want: bmov1alpha1.StatePreparing,
			annotations: map[string]string{bmov1alpha1.InspectAnnotationPrefix: bmov1alpha1.InspectAnnotationValueDisabled}}, //nolint:staticcheck // BMO v0.13 still honours the deprecated annotation; the simulator models it
		{name: "inspected host is prepared", state: bmov1alpha1.StateInspecting, want: bmov1alpha1.StatePreparing},
		{name: "prepared host is available", state: bmov1alpha1.StatePreparing, want: bmov1alpha1.StateAvailable},
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
			c := fake.NewClientBuilder().WithScheme(s).WithObjects(bmh, credentials("admin", "")).WithStatusSubresource(bmh).Build()
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
			if tc.want == bmov1alpha1.StatePreparing && tc.state == bmov1alpha1.StateInspecting && got.Status.HardwareDetails == nil {
				t.Error("inspection reported no hardware")
			}
		})
	}
}

// TestDiskImageProvisioning: a host provisioned with a disk image gets it deployed with the user
// data of its userData Secret (key userData, else value) in the config drive, boots it and tells
// the lab; an image without a checksum is refused until it has one; a missing or empty Secret
// stops the deploy with BMO's error, retried.
func TestDiskImageProvisioning(t *testing.T) {
	const url = "https://mirror.lab.sim/rhcos-4.20.0-x86_64-openstack.x86_64.qcow2"
	qcow2 := &bmov1alpha1.Image{URL: url, Checksum: "https://mirror.lab.sim/sha256sum.txt",
		ChecksumType: bmov1alpha1.SHA256, DiskFormat: ptr.To("qcow2")}
	noChecksum := &bmov1alpha1.Image{URL: url, DiskFormat: ptr.To("qcow2")}
	secret := func(data map[string][]byte) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "user-data"}, Data: data}
	}
	for _, tc := range []struct {
		name     string
		image    *bmov1alpha1.Image
		userData *corev1.Secret
		noRef    bool
		// want is the state reached; wantErr the error the provisioning pass returns.
		want     bmov1alpha1.ProvisioningState
		wantErr  string
		wantData string
		// wantRefusal is the error message on the host's status.
		wantRefusal string
	}{
		{name: "user data in key userData", image: qcow2, userData: secret(map[string][]byte{"userData": []byte("ign"), "value": []byte("other")}),
			want: bmov1alpha1.StateProvisioned, wantData: "ign"},
		{name: "user data in key value (a Cluster API bootstrap data Secret)", image: qcow2,
			userData: secret(map[string][]byte{"value": []byte("ign"), "format": []byte("ignition")}), want: bmov1alpha1.StateProvisioned, wantData: "ign"},
		{name: "no user data set: an empty config drive", image: qcow2, noRef: true, want: bmov1alpha1.StateProvisioned},
		{name: "user data Secret missing", image: qcow2, want: bmov1alpha1.StateProvisioning,
			wantErr: "failed to provision: could not retrieve user data: failed to fetch secret user-data in namespace ns: "},
		{name: "user data Secret without the keys", image: qcow2, userData: secret(map[string][]byte{"format": []byte("ignition")}),
			want: bmov1alpha1.StateProvisioning, wantErr: "could not retrieve user data: Secret user-data does not contain key userData"},
		{name: "no checksum: refused", image: noChecksum, want: bmov1alpha1.StateAvailable, wantRefusal: "checksum is required for normal images"},
		{name: "unknown checksum type: refused", image: &bmov1alpha1.Image{URL: url, Checksum: "abc", ChecksumType: "crc32"},
			want: bmov1alpha1.StateAvailable, wantRefusal: "unknown checksumType crc32, supported are auto, md5, sha256, sha512"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			host := inventory.Generate("disk-"+tc.name, 1, inventory.GenerateOptions{})[0]
			bmh := host.BareMetalHost("ns", "creds")
			bmh.Finalizers = []string{bmov1alpha1.BareMetalHostFinalizer}
			bmh.Spec.Image = tc.image.DeepCopy()
			if !tc.noRef {
				bmh.Spec.UserData = &corev1.SecretReference{Name: "user-data"}
			}
			bmh.Status.Provisioning.State = bmov1alpha1.StateAvailable
			bmh.Status.PoweredOn = true
			objs := []client.Object{bmh}
			if tc.userData != nil {
				objs = append(objs, tc.userData)
			}
			r, c, ev, clk := unitReconciler(t, host, objs...)
			req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(bmh)}
			var err error
			for range 4 { // available → provisioning → (the deploy's duration) → provisioned → booted
				var res ctrl.Result
				if res, err = r.Reconcile(context.Background(), req); err != nil {
					break
				}
				clk.SetTime(clk.Now().Add(res.RequeueAfter))
			}
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatal(err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
			got := &bmov1alpha1.BareMetalHost{}
			if err := c.Get(context.Background(), req.NamespacedName, got); err != nil {
				t.Fatal(err)
			}
			if got.Status.Provisioning.State != tc.want {
				t.Fatalf("state %q, want %q", got.Status.Provisioning.State, tc.want)
			}
			if got.Status.ErrorMessage != tc.wantRefusal {
				t.Fatalf("error message %q, want %q", got.Status.ErrorMessage, tc.wantRefusal)
			}
			if tc.wantRefusal != "" {
				if got.Status.ErrorType != bmov1alpha1.ProvisioningError || got.Status.OperationalStatus != bmov1alpha1.OperationalStatusError {
					t.Fatalf("error type %q, operational status %q", got.Status.ErrorType, got.Status.OperationalStatus)
				}
				// The image gets a checksum: the error is cleared and the host provisions.
				got.Spec.Image = qcow2.DeepCopy()
				if err := c.Update(context.Background(), got); err != nil {
					t.Fatal(err)
				}
				if _, err := r.Reconcile(context.Background(), req); err != nil {
					t.Fatal(err)
				}
				if err := c.Get(context.Background(), req.NamespacedName, got); err != nil {
					t.Fatal(err)
				}
				if got.Status.Provisioning.State != bmov1alpha1.StateProvisioning || got.Status.ErrorMessage != "" ||
					got.Status.OperationalStatus != bmov1alpha1.OperationalStatusOK {
					t.Fatalf("after the fix: state %q, error %q, operational status %q", got.Status.Provisioning.State,
						got.Status.ErrorMessage, got.Status.OperationalStatus)
				}
			}
			if tc.want != bmov1alpha1.StateProvisioned {
				if len(ev.boots) != 0 {
					t.Fatalf("booted %v before being provisioned", ev.booted)
				}
				if image, _ := host.RunningDiskImage(); image != "" {
					t.Fatalf("the host runs %s before being provisioned", image)
				}
				return
			}
			if len(ev.boots) == 0 {
				t.Fatal("the lab was not told that the host booted the image")
			}
			b := ev.boots[len(ev.boots)-1]
			if b.Host != host || b.DiskImageURL != url || b.ISOURL != "" || string(b.UserData) != tc.wantData {
				t.Fatalf("booted %+v, want the image %s with user data %q", b, url, tc.wantData)
			}
			if tc.userData != nil {
				sec := &corev1.Secret{}
				if err := c.Get(context.Background(), client.ObjectKeyFromObject(tc.userData), sec); err != nil {
					t.Fatal(err)
				}
				if sec.Labels[SecretEnvironmentLabel] != SecretEnvironment {
					t.Fatalf("the user data Secret is not labelled for BMO's cache: %v", sec.Labels)
				}
			}
			// Installed over, it no longer runs the image: the lab is not told again.
			host.InstallToExistingRoot()
			n := len(ev.boots)
			if _, err := r.Reconcile(context.Background(), req); err != nil {
				t.Fatal(err)
			}
			if len(ev.boots) != n {
				t.Fatalf("told again that the host booted the image once OpenShift was installed on it")
			}
		})
	}
}

// unitReconciler is a Reconciler of host on a fake client holding objs, with a fake clock.
// credentials is the BMC credentials Secret "creds" of namespace ns.
func credentials(username, password string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "creds"},
		Data: map[string][]byte{"username": []byte(username), "password": []byte(password)}}
}

// TestRegistrationVerifiesTheBMC: the simulator claims the credentials Secret with BMO's secret
// manager (owner, label, finalizer), fails registration as Ironic does when the BMC refuses them,
// goes on once they are right, and releases the Secret when the host is deleted.
func TestRegistrationVerifiesTheBMC(t *testing.T) {
	host := inventory.Generate("verify", 1, inventory.GenerateOptions{})[0]
	host.BMCUsername, host.BMCPassword = "admin", "right"
	bmh := host.BareMetalHost("ns", "creds")
	bmh.Finalizers = []string{bmov1alpha1.BareMetalHostFinalizer}
	r, c, _, clk := unitReconciler(t, host, bmh, credentials("admin", "wrong"))
	ctx := context.Background()
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(bmh)}
	reconcile := func() {
		t.Helper()
		res, err := r.Reconcile(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		clk.SetTime(clk.Now().Add(res.RequeueAfter))
	}
	reconcile() // registering
	secret := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "creds"}, secret); err != nil {
		t.Fatal(err)
	}
	if secret.Labels[SecretEnvironmentLabel] != SecretEnvironment || len(secret.OwnerReferences) != 1 ||
		!slices.Contains(secret.Finalizers, "baremetalhost.metal3.io/secret") {
		t.Fatalf("the credentials Secret is not claimed as BMO claims it: %+v", secret.ObjectMeta)
	}
	reconcile()
	reconcile()
	got := &bmov1alpha1.BareMetalHost{}
	if err := c.Get(ctx, req.NamespacedName, got); err != nil {
		t.Fatal(err)
	}
	if got.Status.Provisioning.State != bmov1alpha1.StateRegistering || got.Status.ErrorType != bmov1alpha1.RegistrationError ||
		!strings.Contains(got.Status.ErrorMessage, "returned code 401") {
		t.Fatalf("wrong credentials: got %s %s %q", got.Status.Provisioning.State, got.Status.ErrorType, got.Status.ErrorMessage)
	}
	secret.Data["password"] = []byte("right")
	if err := c.Update(ctx, secret); err != nil {
		t.Fatal(err)
	}
	reconcile() // verifying again takes a step
	reconcile()
	if err := c.Get(ctx, req.NamespacedName, got); err != nil {
		t.Fatal(err)
	}
	if got.Status.Provisioning.State != bmov1alpha1.StateInspecting {
		t.Fatalf("right credentials: got %s %q", got.Status.Provisioning.State, got.Status.ErrorMessage)
	}

	if err := c.Delete(ctx, got); err != nil {
		t.Fatal(err)
	}
	for range 6 {
		reconcile()
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "creds"}, secret); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(secret.Finalizers, "baremetalhost.metal3.io/secret") {
		t.Fatal("the credentials Secret was not released")
	}
}

func unitReconciler(t *testing.T, host *inventory.Host, objs ...client.Object) (*Reconciler, client.Client, *hostEvents, *clocktesting.FakePassiveClock) {
	t.Helper()
	s := runtime.NewScheme()
	if err := bmov1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).WithStatusSubresource(&bmov1alpha1.BareMetalHost{}).Build()
	clk := clocktesting.NewFakePassiveClock(time.Unix(0, 0))
	ev := &hostEvents{}
	r := &Reconciler{Client: c, Inventory: inventory.New(host), Durations: FastDurations(), Hosts: ev,
		Recorder: events.NewFakeRecorder(10), Clock: clk, timer: steps.NewTimer(clk)}
	return r, c, ev, clk
}

// TestDeprovisioningFollowsTheCleaningMode: a host deprovisioned (its image removed, or its
// BareMetalHost deleted) is cleaned, its disk wiped, with automatedCleaningMode metadata or unset
// (BMO's default); with disabled it is only powered off and its media ejected, and its disk still
// boots the system installed on it.
func TestDeprovisioningFollowsTheCleaningMode(t *testing.T) {
	iso := bmov1alpha1.Image{URL: "https://image/iso", DiskFormat: ptr.To("live-iso")}
	for _, tc := range []struct {
		name     string
		cleaning bmov1alpha1.AutomatedCleaningMode
		deleted  bool
		wantWipe bool
	}{
		{name: "metadata", cleaning: bmov1alpha1.CleaningModeMetadata, wantWipe: true},
		{name: "unset (BMO's default: metadata)", cleaning: "", wantWipe: true},
		{name: "disabled", cleaning: bmov1alpha1.CleaningModeDisabled},
		{name: "metadata, host deleted", cleaning: bmov1alpha1.CleaningModeMetadata, deleted: true, wantWipe: true},
		{name: "disabled, host deleted", cleaning: bmov1alpha1.CleaningModeDisabled, deleted: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			host := inventory.Generate("unit", 1, inventory.GenerateOptions{})[0]
			host.InsertMedia(iso.URL, true, inventory.OverrideOnce)
			host.PowerOn()
			host.WriteOS()
			if host.PowerOn() != "" || !host.RunsDisk() {
				t.Fatal("the installed host does not run its disk")
			}
			bmh := host.BareMetalHost("ns", "creds")
			bmh.Finalizers = []string{bmov1alpha1.BareMetalHostFinalizer}
			bmh.Spec.AutomatedCleaningMode = tc.cleaning
			bmh.Status.Provisioning.State = bmov1alpha1.StateDeprovisioning
			bmh.Status.Provisioning.Image = iso
			bmh.Status.PoweredOn = true
			if tc.deleted {
				bmh.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
			}
			r, c, ev, clk := unitReconciler(t, host, bmh, credentials("admin", ""))
			req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(bmh)}
			res, err := r.Reconcile(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			clk.SetTime(clk.Now().Add(res.RequeueAfter))
			if _, err := r.Reconcile(context.Background(), req); err != nil {
				t.Fatal(err)
			}
			got := &bmov1alpha1.BareMetalHost{}
			if err := c.Get(context.Background(), req.NamespacedName, got); err != nil {
				t.Fatal(err)
			}
			if s := got.Status.Provisioning.State; s == bmov1alpha1.StateDeprovisioning {
				t.Fatalf("still %s", s)
			}
			if host.Running() != "" || host.RunsDisk() {
				t.Fatal("the host still runs after deprovisioning")
			}
			if wiped := len(ev.cleaned) == 1; wiped != tc.wantWipe || len(ev.cleaned)+len(ev.off) != 1 {
				t.Fatalf("told cleaned %v and powered off %v; want cleaned: %t", ev.cleaned, ev.off, tc.wantWipe)
			}
			// Powered on with nothing attached, the host boots what its disk holds.
			if booted := host.PowerOn(); booted != "" || host.RunsDisk() == tc.wantWipe {
				t.Fatalf("after deprovisioning the host boots %q, runs its installed system: %t; want it to: %t", booted, host.RunsDisk(), !tc.wantWipe)
			}
		})
	}
}
