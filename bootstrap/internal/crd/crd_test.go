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

package crd_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/bootstrap/v1alpha2"
	capoascheme "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/scheme"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/testenv"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/validationtest"
)

var env *testenv.Environment

func TestMain(m *testing.M) {
	s, err := capoascheme.New(bootstrapv1.AddToScheme)
	if err != nil {
		panic(err)
	}
	os.Exit(testenv.MainWithOptions(m, testenv.Options{Scheme: s, CRDPaths: []string{"bootstrap/config/crd/bases"}}, &env))
}

func fullSpec() bootstrapv1.OpenshiftAssistedConfigSpec {
	return bootstrapv1.OpenshiftAssistedConfigSpec{
		Proxy:                &aiv1beta1.Proxy{HTTPProxy: "http://proxy:3128", NoProxy: ".cluster.local"},
		PullSecretRef:        &corev1.LocalObjectReference{Name: "pull-secret"},
		AdditionalNTPSources: []string{"ntp1.example.com", "10.0.0.1"},
		SSHAuthorizedKey:     "ssh-ed25519 AAAA test",
		NMStateConfigLabelSelector: metav1.LabelSelector{
			MatchLabels: map[string]string{"infraenv": "lab"},
		},
		CpuArchitecture:       "aarch64",
		KernelArguments:       []aiv1beta1.KernelArgument{{Operation: "append", Value: "console=ttyS0"}},
		AdditionalTrustBundle: "-----BEGIN CERTIFICATE-----\n...\n-----END CERTIFICATE-----\n",
		OSImageVersion:        "4.17",
		NodeRegistration: bootstrapv1.NodeRegistrationOptions{
			Name: "worker-0", KubeletExtraLabels: []string{"rack=r1"}, ProviderID: "agent://x",
		},
		PreBootstrapCommands:        []string{"echo pre"},
		PostBootstrapCommands:       []string{"echo post"},
		BootstrapCommandSentinelDir: "/var/lib/example",
		PostBootstrapKubeconfigPath: "/etc/kubernetes/kubeconfig",
	}
}

// TestEveryKindRoundTrips creates one object of each kind and reads it back unchanged.
func TestEveryKindRoundTrips(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns, err := env.CreateNamespace(ctx, "roundtrip")
	g.Expect(err).NotTo(HaveOccurred())

	config := &bootstrapv1.OpenshiftAssistedConfig{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "config"},
		Spec:       fullSpec(),
	}
	g.Expect(env.Client.Create(ctx, config)).To(Succeed())
	gotConfig := &bootstrapv1.OpenshiftAssistedConfig{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(config), gotConfig)).To(Succeed())
	g.Expect(gotConfig.Spec).To(Equal(fullSpec()))

	// A template names no host: every config made from it would install the same hostname.
	named := &bootstrapv1.OpenshiftAssistedConfigTemplate{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "named"},
		Spec: bootstrapv1.OpenshiftAssistedConfigTemplateSpec{Template: bootstrapv1.OpenshiftAssistedConfigTemplateResource{
			Spec: fullSpec(),
		}},
	}
	err = env.Client.Create(ctx, named)
	g.Expect(err).To(HaveOccurred())
	g.Expect(err.Error()).To(ContainSubstring("spec.template.spec.nodeRegistration.name: Invalid value: " +
		"nodeRegistration.name must not be a fixed name in a template"))

	// A host metadata variable names each host by itself (upstream's templates use $METADATA_NAME).
	for i, name := range []string{"$METADATA_NAME", "${METADATA_LOCAL_HOSTNAME}"} {
		byHost := &bootstrapv1.OpenshiftAssistedConfigTemplate{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("by-host-%d", i)},
			Spec: bootstrapv1.OpenshiftAssistedConfigTemplateSpec{Template: bootstrapv1.OpenshiftAssistedConfigTemplateResource{
				Spec: bootstrapv1.OpenshiftAssistedConfigSpec{NodeRegistration: bootstrapv1.NodeRegistrationOptions{
					Name: name, KubeletExtraLabels: []string{"example.com/host=$METADATA_UUID"}}},
			}},
		}
		g.Expect(env.Client.Create(ctx, byHost)).To(Succeed(), name)
	}

	// Nor one providerID: every host would register with it.
	fixedID := fullSpec()
	fixedID.NodeRegistration.Name = ""
	err = env.Client.Create(ctx, &bootstrapv1.OpenshiftAssistedConfigTemplate{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "fixed-provider-id"},
		Spec:       bootstrapv1.OpenshiftAssistedConfigTemplateSpec{Template: bootstrapv1.OpenshiftAssistedConfigTemplateResource{Spec: fixedID}},
	})
	g.Expect(err).To(MatchError(ContainSubstring("spec.template.spec.nodeRegistration.providerID: Invalid value: " +
		"nodeRegistration.providerID must not be fixed in a template")))

	templateSpec := fullSpec()
	templateSpec.NodeRegistration.Name = ""
	templateSpec.NodeRegistration.ProviderID = "metal3://${METADATA_METAL3_NAMESPACE}/$METADATA_METAL3_NAME/m"
	template := &bootstrapv1.OpenshiftAssistedConfigTemplate{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "template"},
		Spec: bootstrapv1.OpenshiftAssistedConfigTemplateSpec{Template: bootstrapv1.OpenshiftAssistedConfigTemplateResource{
			ObjectMeta: clusterv1.ObjectMeta{Labels: map[string]string{"role": "worker"}},
			Spec:       templateSpec,
		}},
	}
	g.Expect(env.Client.Create(ctx, template)).To(Succeed())
	gotTemplate := &bootstrapv1.OpenshiftAssistedConfigTemplate{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(template), gotTemplate)).To(Succeed())
	g.Expect(gotTemplate.Spec).To(Equal(template.Spec))

	// The contract fields of the status are served through the status subresource.
	gotConfig.Status.DataSecretName = "config-bootstrap"
	gotConfig.Status.Initialization.DataSecretCreated = ptr.To(true)
	gotConfig.Status.InfraEnvRef = &corev1.ObjectReference{Kind: "InfraEnv", Namespace: ns, Name: "config"}
	g.Expect(env.Client.Status().Update(ctx, gotConfig)).To(Succeed())
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(config), gotConfig)).To(Succeed())
	g.Expect(gotConfig.Status.DataSecretName).To(Equal("config-bootstrap"))
	g.Expect(gotConfig.Status.Initialization.DataSecretCreated).To(HaveValue(BeTrue()))
}

// TestSchemaDefaultsAndRejects checks the defaults the schema applies and the input it refuses.
func TestSchemaDefaultsAndRejects(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns, err := env.CreateNamespace(ctx, "schema")
	g.Expect(err).NotTo(HaveOccurred())

	config := &bootstrapv1.OpenshiftAssistedConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "defaults"}}
	g.Expect(env.Client.Create(ctx, config)).To(Succeed())
	g.Expect(config.Spec.CpuArchitecture).To(Equal("x86_64"))

	tests := []struct {
		name    string
		spec    func(*bootstrapv1.OpenshiftAssistedConfigSpec)
		message string
	}{
		{"unknown architecture", func(s *bootstrapv1.OpenshiftAssistedConfigSpec) { s.CpuArchitecture = "i386" },
			`spec.cpuArchitecture: Unsupported value: "i386"`},
		{"hostname that is not a DNS name", func(s *bootstrapv1.OpenshiftAssistedConfigSpec) { s.NodeRegistration.Name = "Worker_0" },
			`spec.nodeRegistration.name: Invalid value: "Worker_0": name must be a lowercase hostname (RFC 1123), such as master-0 or master-0.example.com, or a host metadata variable such as METADATA_NAME written with a leading dollar sign`},
		{"a variable that is no host metadata", func(s *bootstrapv1.OpenshiftAssistedConfigSpec) { s.NodeRegistration.Name = "$HOSTNAME" },
			"name must be a lowercase hostname (RFC 1123)"},
		{"hostname longer than a DNS name", func(s *bootstrapv1.OpenshiftAssistedConfigSpec) { s.NodeRegistration.Name = strings.Repeat("a", 254) },
			"spec.nodeRegistration.name: Too long"},
		{"providerID longer than a Machine's", func(s *bootstrapv1.OpenshiftAssistedConfigSpec) {
			s.NodeRegistration.ProviderID = "metal3://" + strings.Repeat("a", 510)
		}, "spec.nodeRegistration.providerID: Too long"},
		{"providerID without a provider", func(s *bootstrapv1.OpenshiftAssistedConfigSpec) { s.NodeRegistration.ProviderID = "0f6a-uuid" },
			`spec.nodeRegistration.providerID: Invalid value: "0f6a-uuid": providerID must be <provider>://<id> without spaces`},
		{"providerID with a space", func(s *bootstrapv1.OpenshiftAssistedConfigSpec) { s.NodeRegistration.ProviderID = "metal3://a b" },
			"providerID must be <provider>://<id> without spaces"},
		{"relative sentinel directory", func(s *bootstrapv1.OpenshiftAssistedConfigSpec) { s.BootstrapCommandSentinelDir = "var/lib/capoa" },
			"spec.bootstrapCommandSentinelDir in body should match"},
		{"NTP source that is neither address nor name", func(s *bootstrapv1.OpenshiftAssistedConfigSpec) {
			s.AdditionalNTPSources = []string{"10.0.0.1", "ntp server"}
		}, `spec.additionalNTPSources[1]: Invalid value: "ntp server": "ntp server" is not an IP address or a host name`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			c := &bootstrapv1.OpenshiftAssistedConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "bad-"}}
			tt.spec(&c.Spec)
			err := env.Client.Create(ctx, c)
			g.Expect(err).To(HaveOccurred())
			g.Expect(err.Error()).To(ContainSubstring(tt.message))
		})
	}

	// Values upstream's schema accepted and that work here with upstream's meaning
	// (docs/migration.md, "Constraints added on upstream's fields"): an empty command is an empty
	// line of the script, sshAuthorizedKey holds many keys, one per line, past 4096 bytes, the
	// sentinel directory takes characters upstream's unquoted script took (+, @, ~, :, ...), and
	// the kubeconfig path any that upstream's double-quoted one took (a relative one, a space).
	keys := strings.TrimSuffix(strings.Repeat(validationtest.SSHKey+"\n", 50), "\n")
	g.Expect(len(keys)).To(BeNumerically(">", 4096))
	upstreamValues := &bootstrapv1.OpenshiftAssistedConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "upstream-values"},
		Spec: bootstrapv1.OpenshiftAssistedConfigSpec{
			PreBootstrapCommands: []string{"echo pre", ""}, PostBootstrapCommands: []string{""}, SSHAuthorizedKey: keys,
			BootstrapCommandSentinelDir: "/var/lib/capoa+run@host~1:a,b=c#d!e", PostBootstrapKubeconfigPath: "etc/kube config'",
		}}
	g.Expect(env.Client.Create(ctx, upstreamValues)).To(Succeed())
	g.Expect(upstreamValues.Spec.PreBootstrapCommands).To(Equal([]string{"echo pre", ""}))
	g.Expect(upstreamValues.Spec.SSHAuthorizedKey).To(Equal(keys))
}
