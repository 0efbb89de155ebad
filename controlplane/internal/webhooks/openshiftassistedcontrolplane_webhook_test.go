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

package webhooks

import (
	"context"
	"os"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha3"
	capoascheme "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/scheme"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/testenv"
)

var env *testenv.Environment

// TestMain starts an API server with the provider's webhook configuration and a manager serving it.
func TestMain(m *testing.M) {
	s, err := capoascheme.New(bootstrapv1.AddToScheme, controlplanev1.AddToScheme)
	if err != nil {
		panic(err)
	}
	os.Exit(testenv.WebhookMain(m, s, "controlplane/config/webhook", SetupWithManager, &env))
}

func controlPlane(spec, running string) *controlplanev1.OpenshiftAssistedControlPlane {
	cp := &controlplanev1.OpenshiftAssistedControlPlane{ObjectMeta: metav1.ObjectMeta{Name: "cp"}}
	cp.Spec.DistributionVersion = spec
	cp.Status.DistributionVersion = running
	return cp
}

func TestValidateUpdate(t *testing.T) {
	for name, tc := range map[string]struct {
		old     *controlplanev1.OpenshiftAssistedControlPlane
		newVer  string
		wantErr string
	}{
		"not installed: any version":  {old: controlPlane("4.17.3", ""), newVer: "4.16.0"},
		"patch upgrade":               {old: controlPlane("4.17.3", "4.17.3"), newVer: "4.17.9"},
		"minor upgrade":               {old: controlPlane("4.17.3", "4.17.3"), newVer: "4.18.0"},
		"downgrade":                   {old: controlPlane("4.18.0", "4.18.0"), newVer: "4.17.3", wantErr: "downgrading OpenShift from 4.18.0 to 4.17.3 is not supported"},
		"two minors":                  {old: controlPlane("4.17.3", "4.17.3"), newVer: "4.19.0", wantErr: "one minor version at a time"},
		"back to the running version": {old: controlPlane("4.18.0", "4.17.3"), newVer: "4.17.3"},
		"unchanged version":           {old: controlPlane("4.15.0", "4.17.3"), newVer: "4.15.0"},
	} {
		t.Run(name, func(t *testing.T) {
			newCP := tc.old.DeepCopy()
			newCP.Spec.DistributionVersion = tc.newVer
			_, err := (&ControlPlaneValidator{}).ValidateUpdate(context.Background(), tc.old, newCP)
			if tc.wantErr == "" && err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

// TestWebhookRefusesDowngradeThroughTheAPIServer checks the webhook as installed from
// config/webhook: the API server refuses a downgrade of an installed cluster.
func TestWebhookRefusesDowngradeThroughTheAPIServer(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns, err := env.CreateNamespace(ctx, "webhook")
	g.Expect(err).NotTo(HaveOccurred())
	cp := &controlplanev1.OpenshiftAssistedControlPlane{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cp"},
		Spec: controlplanev1.OpenshiftAssistedControlPlaneSpec{
			Replicas: ptr.To[int32](1), DistributionVersion: "4.18.0",
			Config: controlplanev1.OpenshiftAssistedControlPlaneConfigSpec{BaseDomain: "example.com"},
			MachineTemplate: controlplanev1.OpenshiftAssistedControlPlaneMachineTemplate{InfrastructureRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "Metal3MachineTemplate", Name: "t"}},
		},
	}
	g.Expect(env.Client.Create(ctx, cp)).To(Succeed())
	cp.Status.DistributionVersion = "4.18.0"
	g.Expect(env.Client.Status().Update(ctx, cp)).To(Succeed())

	cp.Spec.DistributionVersion = "4.17.3"
	err = env.Client.Update(ctx, cp)
	g.Expect(err).To(MatchError(ContainSubstring("downgrading OpenShift from 4.18.0 to 4.17.3 is not supported")))

	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(cp), cp)).To(Succeed())
	cp.Spec.DistributionVersion = "4.18.3"
	g.Expect(env.Client.Update(ctx, cp)).To(Succeed())
}
