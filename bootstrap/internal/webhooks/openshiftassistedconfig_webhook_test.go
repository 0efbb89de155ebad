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
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/cluster-api/util/conditions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	capoascheme "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/scheme"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/testenv"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/validationtest"
)

var env *testenv.Environment

// TestMain starts an API server with the provider's webhook configuration and a manager serving it.
func TestMain(m *testing.M) {
	s, err := capoascheme.New(bootstrapv1.AddToScheme)
	if err != nil {
		panic(err)
	}
	os.Exit(testenv.WebhookMain(m, testenv.Options{Scheme: s, CRDPaths: []string{"bootstrap/config/crd/bases"},
		WebhookManifestDirs: []string{"bootstrap/config/webhook"}}, SetupWithManager, &env))
}

func installing(status metav1.ConditionStatus) metav1.Condition {
	return metav1.Condition{Type: bootstrapv1.InstallingCondition, Status: status, Reason: "Test", LastTransitionTime: metav1.Now()}
}

// TestSpecChangeRefusedOnceInstalling checks, through the API server, that a spec change is
// accepted before the host installs and refused, with the reason, once it does; metadata
// changes stay allowed.
func TestSpecChangeRefusedOnceInstalling(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns, err := env.CreateNamespace(ctx, "webhook")
	g.Expect(err).NotTo(HaveOccurred())
	config := &bootstrapv1.OpenshiftAssistedConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c"}}
	g.Expect(env.Client.Create(ctx, config)).To(Succeed())

	// Before installing: accepted (retried until the webhook server serves).
	g.Eventually(func() error {
		got := &bootstrapv1.OpenshiftAssistedConfig{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(config), got); err != nil {
			return err
		}
		got.Spec.SSHAuthorizedKey = validationtest.SSHKey
		return env.Client.Update(ctx, got)
	}, 60*time.Second).Should(Succeed())

	got := &bootstrapv1.OpenshiftAssistedConfig{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(config), got)).To(Succeed())
	got.Status.Conditions = []metav1.Condition{installing(metav1.ConditionTrue)}
	got.Status.AgentRef = nil
	g.Expect(env.Client.Status().Update(ctx, got)).To(Succeed())

	got.Spec.SSHAuthorizedKey = validationtest.SSHECDSAKey
	err = env.Client.Update(ctx, got)
	g.Expect(err).To(HaveOccurred())
	g.Expect(err.Error()).To(ContainSubstring("started installing"))
	g.Expect(err.Error()).To(ContainSubstring("delete the Machine"))

	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(config), got)).To(Succeed())
	got.Labels = map[string]string{"a": "b"}
	g.Expect(env.Client.Update(ctx, got)).To(Succeed())
}

// TestValidateUpdate covers the validator's decisions.
func TestValidateUpdate(t *testing.T) {
	installed := metav1.Condition{Type: bootstrapv1.InstalledCondition, Status: metav1.ConditionTrue, Reason: "Test"}
	for _, tc := range []struct {
		name       string
		conditions []metav1.Condition
		change     bool
		wantErr    bool
	}{
		{"not installing, spec changed", nil, true, false},
		{"installing false, spec changed", []metav1.Condition{installing(metav1.ConditionFalse)}, true, false},
		{"installing, spec unchanged", []metav1.Condition{installing(metav1.ConditionTrue)}, false, false},
		{"installing, spec changed", []metav1.Condition{installing(metav1.ConditionTrue)}, true, true},
		{"installed, spec changed", []metav1.Condition{installed}, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			old := &bootstrapv1.OpenshiftAssistedConfig{ObjectMeta: metav1.ObjectMeta{Name: "c"}}
			for _, c := range tc.conditions {
				conditions.Set(old, c)
			}
			updated := old.DeepCopy()
			if tc.change {
				updated.Spec.OSImageVersion = "4.18"
			}
			_, err := (&ConfigValidator{}).ValidateUpdate(context.Background(), old, updated)
			if tc.wantErr {
				g.Expect(err).To(MatchError(ContainSubstring("spec: Forbidden: the host of this config started installing")))
			} else {
				g.Expect(err).NotTo(HaveOccurred())
			}
		})
	}
}

// TestFormatsChecked covers the format checks of both validators: on create every field, on
// update only what changed, so that a config or template stored with a value a check now refuses
// can still have its metadata and other fields written.
func TestFormatsChecked(t *testing.T) {
	const badKey = "spec: Invalid value: line 1 is not an SSH public key: the key data after ssh-ed25519 is not a valid ssh-ed25519 key; " +
		"give one public key per line in the authorized_keys format (type, base64 key, optional comment), such as the content of ~/.ssh/id_ed25519.pub"
	bad := bootstrapv1.OpenshiftAssistedConfigSpec{SSHAuthorizedKey: "ssh-ed25519 AAAA"}
	good := bootstrapv1.OpenshiftAssistedConfigSpec{SSHAuthorizedKey: validationtest.SSHKey}
	withArch := func(s bootstrapv1.OpenshiftAssistedConfigSpec) bootstrapv1.OpenshiftAssistedConfigSpec {
		s.CpuArchitecture = "aarch64"
		return s
	}
	for _, tc := range []struct {
		name     string
		old      *bootstrapv1.OpenshiftAssistedConfigSpec // nil: create
		spec     bootstrapv1.OpenshiftAssistedConfigSpec
		wantPath string // the field of the error; "" when accepted
	}{
		{name: "create, valid", spec: good},
		{name: "create, invalid key", spec: bad, wantPath: "sshAuthorizedKey"},
		{name: "update to an invalid key", old: &good, spec: bad, wantPath: "sshAuthorizedKey"},
		{name: "update of another field, stored key invalid", old: &bad, spec: withArch(bad)},
		{name: "metadata-only update, stored key invalid", old: &bad, spec: bad},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for kind, prefix := range map[string]string{"OpenshiftAssistedConfig": "spec.", "OpenshiftAssistedConfigTemplate": "spec.template.spec."} {
				var err error
				switch {
				case kind == "OpenshiftAssistedConfig" && tc.old == nil:
					_, err = (&ConfigValidator{}).ValidateCreate(context.Background(), &bootstrapv1.OpenshiftAssistedConfig{Spec: tc.spec})
				case kind == "OpenshiftAssistedConfig":
					_, err = (&ConfigValidator{}).ValidateUpdate(context.Background(),
						&bootstrapv1.OpenshiftAssistedConfig{Spec: *tc.old}, &bootstrapv1.OpenshiftAssistedConfig{Spec: tc.spec})
				case tc.old == nil:
					_, err = (&TemplateValidator{}).ValidateCreate(context.Background(), template(tc.spec))
				default:
					_, err = (&TemplateValidator{}).ValidateUpdate(context.Background(), template(*tc.old), template(tc.spec))
				}
				if tc.wantPath == "" {
					if err != nil {
						t.Errorf("%s: unexpected error: %v", kind, err)
					}
					continue
				}
				want := strings.Replace(badKey, "spec:", prefix+tc.wantPath+":", 1)
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("%s: error = %v, want one containing %q", kind, err, want)
				}
			}
		})
	}
}

func template(spec bootstrapv1.OpenshiftAssistedConfigSpec) *bootstrapv1.OpenshiftAssistedConfigTemplate {
	return &bootstrapv1.OpenshiftAssistedConfigTemplate{Spec: bootstrapv1.OpenshiftAssistedConfigTemplateSpec{
		Template: bootstrapv1.OpenshiftAssistedConfigTemplateResource{Spec: spec}}}
}
