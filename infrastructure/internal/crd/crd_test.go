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
	"os"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/infrastructure/v1beta1"
	capoascheme "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/scheme"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/testenv"
)

var env *testenv.Environment

func TestMain(m *testing.M) {
	s, err := capoascheme.New(infrav1.AddToScheme)
	if err != nil {
		panic(err)
	}
	os.Exit(testenv.MainWithOptions(m, testenv.Options{Scheme: s, CRDPaths: []string{"infrastructure/config/crd/bases"}}, &env))
}

func meta(ns, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: ns, Name: name}
}

// TestEveryKindRoundTrips creates one object of each kind and reads it back unchanged.
func TestEveryKindRoundTrips(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns, err := env.CreateNamespace(ctx, "roundtrip")
	g.Expect(err).NotTo(HaveOccurred())

	selector := &metav1.LabelSelector{MatchLabels: map[string]string{"rack": "r1"}}
	objects := []client.Object{
		&infrav1.AgentCluster{ObjectMeta: meta(ns, "cluster"), Spec: infrav1.AgentClusterSpec{
			ControlPlaneEndpoint: infrav1.APIEndpoint{Host: "api.example.com", Port: 6443},
			IgnitionEndpoint: &infrav1.IgnitionEndpoint{Url: "https://[fd00::1]:22623/config/worker",
				CaCertificateReference: &infrav1.CaCertificateReference{Namespace: ns, Name: "ca"}},
			ClusterDeploymentRef: &infrav1.ClusterDeploymentReference{Name: "cd", Namespace: ns},
		}},
		&infrav1.AgentClusterTemplate{ObjectMeta: meta(ns, "cluster-template"), Spec: infrav1.AgentClusterTemplateSpec{
			Template: infrav1.AgentClusterTemplateResource{
				ObjectMeta: clusterv1.ObjectMeta{Labels: map[string]string{"a": "b"}},
				Spec:       infrav1.AgentClusterSpec{ControlPlaneEndpoint: infrav1.APIEndpoint{Host: "h", Port: 6443}},
			},
		}},
		&infrav1.AgentMachine{ObjectMeta: meta(ns, "machine"), Spec: infrav1.AgentMachineSpec{
			AgentLabelSelector: selector, ProviderID: "agent://0d2f6d7c-1111-2222-3333-444455556666",
		}},
		&infrav1.AgentMachineTemplate{ObjectMeta: meta(ns, "machine-template"), Spec: infrav1.AgentMachineTemplateSpec{
			Template: infrav1.AgentMachineTemplateResource{
				ObjectMeta: clusterv1.ObjectMeta{Annotations: map[string]string{"x": "y"}},
				Spec:       infrav1.AgentMachineSpec{AgentLabelSelector: selector},
			},
		}},
	}
	for _, obj := range objects {
		want := obj.DeepCopyObject().(client.Object)
		g.Expect(env.Client.Create(ctx, obj)).To(Succeed(), "creating %T", obj)
		got := obj.DeepCopyObject().(client.Object)
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(obj), got)).To(Succeed())
		g.Expect(specOf(got)).To(Equal(specOf(want)), "%T read back", obj)
	}

	// The contract fields of the status are served through the status subresource.
	machine := &infrav1.AgentMachine{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "machine"}, machine)).To(Succeed())
	machine.Status.Initialization.Provisioned = ptr.To(true)
	machine.Status.Addresses = []clusterv1.MachineAddress{{Type: clusterv1.MachineInternalIP, Address: "fd00::10"}}
	g.Expect(env.Client.Status().Update(ctx, machine)).To(Succeed())
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(machine), machine)).To(Succeed())
	g.Expect(machine.Status.Initialization.Provisioned).To(HaveValue(BeTrue()))
	g.Expect(machine.Status.Addresses).To(HaveLen(1))
}

func specOf(obj client.Object) any {
	switch o := obj.(type) {
	case *infrav1.AgentCluster:
		return o.Spec
	case *infrav1.AgentClusterTemplate:
		return o.Spec
	case *infrav1.AgentMachine:
		return o.Spec
	case *infrav1.AgentMachineTemplate:
		return o.Spec
	}
	return nil
}

// TestSchemaRejectsChangesToImmutableFields checks that the API server refuses each change with
// a message that says what is wrong.
func TestSchemaRejectsChangesToImmutableFields(t *testing.T) {
	ctx := context.Background()
	ns, err := env.CreateNamespace(ctx, "immutable")
	NewWithT(t).Expect(err).NotTo(HaveOccurred())

	tests := []struct {
		name    string
		obj     client.Object
		mutate  func(client.Object)
		message string
	}{
		{
			name: "cluster template",
			obj:  &infrav1.AgentClusterTemplate{ObjectMeta: meta(ns, "ctmpl")},
			mutate: func(o client.Object) {
				o.(*infrav1.AgentClusterTemplate).Spec.Template.Spec.ControlPlaneEndpoint.Host = "x"
			},
			message: "spec.template is immutable",
		},
		{
			name: "machine providerID",
			obj:  &infrav1.AgentMachine{ObjectMeta: meta(ns, "m"), Spec: infrav1.AgentMachineSpec{ProviderID: "agent://a"}},
			mutate: func(o client.Object) {
				o.(*infrav1.AgentMachine).Spec.ProviderID = "agent://b"
			},
			message: "providerID cannot be changed or removed once set",
		},
		{
			name: "cluster clusterDeploymentRef",
			obj: &infrav1.AgentCluster{ObjectMeta: meta(ns, "c"), Spec: infrav1.AgentClusterSpec{
				ClusterDeploymentRef: &infrav1.ClusterDeploymentReference{Name: "cd1"}}},
			mutate: func(o client.Object) {
				o.(*infrav1.AgentCluster).Spec.ClusterDeploymentRef = nil
			},
			message: "clusterDeploymentRef cannot be changed or removed once set",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(env.Client.Create(ctx, tt.obj)).To(Succeed())
			tt.mutate(tt.obj)
			err := env.Client.Update(ctx, tt.obj)
			g.Expect(err).To(HaveOccurred())
			g.Expect(err.Error()).To(ContainSubstring(tt.message))
		})
	}

	// Setting the providerID the first time is allowed.
	g := NewWithT(t)
	m := &infrav1.AgentMachine{ObjectMeta: meta(ns, "unset")}
	g.Expect(env.Client.Create(ctx, m)).To(Succeed())
	m.Spec.ProviderID = "agent://first"
	g.Expect(env.Client.Update(ctx, m)).To(Succeed())
}

// TestAgentMachineTemplateIsImmutableButForTopologyDryRuns: the provider's admission policy
// (infrastructure/config/admission) refuses a change of spec.template.spec, with what to do, but
// lets through the dry-run with which Cluster API's topology controller compares a cluster's
// template with its ClusterClass's (a dry-run request whose object carries
// topology.cluster.x-k8s.io/dry-run); the template's metadata may change.
func TestAgentMachineTemplateIsImmutableButForTopologyDryRuns(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns, err := env.CreateNamespace(ctx, "tmpl")
	g.Expect(err).NotTo(HaveOccurred())
	tmpl := &infrav1.AgentMachineTemplate{ObjectMeta: meta(ns, "tmpl"), Spec: infrav1.AgentMachineTemplateSpec{
		Template: infrav1.AgentMachineTemplateResource{Spec: infrav1.AgentMachineSpec{
			AgentLabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "1"}}}}}}
	g.Expect(env.Client.Create(ctx, tmpl)).To(Succeed())
	changed := func(annotations map[string]string) *infrav1.AgentMachineTemplate {
		c := tmpl.DeepCopy()
		c.Annotations = annotations
		c.Spec.Template.Spec.AgentLabelSelector.MatchLabels["a"] = "2"
		return c
	}
	const dryRun = "topology.cluster.x-k8s.io/dry-run"

	// The API server enforces a policy shortly after it is created: probed with dry-runs, which
	// change nothing.
	g.Eventually(func(g Gomega) {
		err := env.Client.Update(ctx, changed(nil), client.DryRunAll)
		g.Expect(err).To(HaveOccurred())
		g.Expect(err.Error()).To(ContainSubstring("spec.template.spec is immutable: create a new AgentMachineTemplate and reference it instead"))
	}, 30*time.Second).Should(Succeed())
	g.Expect(env.Client.Update(ctx, changed(map[string]string{dryRun: ""}), client.DryRunAll)).To(Succeed(), "topology's dry-run")
	err = env.Client.Update(ctx, changed(nil))
	g.Expect(err).To(HaveOccurred(), "a change")
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "refused as invalid: %v", err)
	g.Expect(env.Client.Update(ctx, changed(map[string]string{dryRun: ""}))).NotTo(Succeed(), "the annotation on a real update")

	labelled := tmpl.DeepCopy()
	labelled.Labels = map[string]string{"team": "x"}
	g.Expect(env.Client.Update(ctx, labelled)).To(Succeed(), "metadata may change")
}

// TestSchemaRejectsBadInput checks that the API server refuses each malformed object at create
// with a message that names the field and says what to write, and accepts the valid forms beside
// them.
func TestSchemaRejectsBadInput(t *testing.T) {
	ctx := context.Background()
	ns, err := env.CreateNamespace(ctx, "badinput")
	NewWithT(t).Expect(err).NotTo(HaveOccurred())

	cluster := func(ie *infrav1.IgnitionEndpoint, cd *infrav1.ClusterDeploymentReference) *infrav1.AgentCluster {
		return &infrav1.AgentCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "c-"}, Spec: infrav1.AgentClusterSpec{
			IgnitionEndpoint: ie, ClusterDeploymentRef: cd}}
	}
	machine := func(e ...metav1.LabelSelectorRequirement) *infrav1.AgentMachine {
		return &infrav1.AgentMachine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "m-"}, Spec: infrav1.AgentMachineSpec{
			AgentLabelSelector: &metav1.LabelSelector{MatchExpressions: e}}}
	}
	ca := &infrav1.CaCertificateReference{Namespace: ns, Name: "ignition-ca"}
	// endpoint is an AgentCluster whose controlPlaneEndpoint is written in full, as HyperShift's
	// Cluster API v1beta1 types write it (host and port without omitempty).
	endpoint := func(host string, port int64) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
			"controlPlaneEndpoint": map[string]any{"host": host, "port": port}}}}
		u.SetGroupVersionKind(infrav1.GroupVersion.WithKind("AgentCluster"))
		u.SetNamespace(ns)
		u.SetGenerateName("endpoint-")
		return u
	}
	tests := []struct {
		name    string
		obj     client.Object
		message string // "" when accepted
	}{
		{"machine template with a providerID",
			&infrav1.AgentMachineTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "mt-"}, Spec: infrav1.AgentMachineTemplateSpec{
				Template: infrav1.AgentMachineTemplateResource{Spec: infrav1.AgentMachineSpec{ProviderID: "agent://x"}}}},
			`spec.template.spec.providerID: Invalid value: providerID "agent://x" must not be set in a template`},
		{"cluster template with a clusterDeploymentRef",
			&infrav1.AgentClusterTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "ct-"}, Spec: infrav1.AgentClusterTemplateSpec{
				Template: infrav1.AgentClusterTemplateResource{Spec: infrav1.AgentClusterSpec{
					ClusterDeploymentRef: &infrav1.ClusterDeploymentReference{Name: "cd"}}}}},
			"spec.template.spec.clusterDeploymentRef: Invalid value: clusterDeploymentRef must not be set in a template"},
		{"ignition URL of another scheme", cluster(&infrav1.IgnitionEndpoint{Url: "ftp://ignition.example.com/worker"}, nil),
			`spec.ignitionEndpoint.url: Invalid value: "ftp://ignition.example.com/worker": "ftp://ignition.example.com/worker" is not an http or https URL with a host`},
		{"ignition URL without host", cluster(&infrav1.IgnitionEndpoint{Url: "https:///config/worker"}, nil),
			"is not an http or https URL with a host"},
		{"ignition URL that is a path", cluster(&infrav1.IgnitionEndpoint{Url: "/config/worker"}, nil),
			"is not an http or https URL with a host"},
		{"ignition CA without URL", cluster(&infrav1.IgnitionEndpoint{CaCertificateReference: ca}, nil),
			"spec.ignitionEndpoint.caCertificateReference: Invalid value: caCertificateReference is set without url"},
		{"ignition CA in a namespace that cannot exist",
			cluster(&infrav1.IgnitionEndpoint{Url: "https://ignition.example.com", CaCertificateReference: &infrav1.CaCertificateReference{Namespace: "Tenant_A", Name: "ca"}}, nil),
			`"Tenant_A" is not a valid namespace name`},
		{"ignition CA Secret name that cannot exist",
			cluster(&infrav1.IgnitionEndpoint{Url: "https://ignition.example.com", CaCertificateReference: &infrav1.CaCertificateReference{Namespace: ns, Name: "CA cert"}}, nil),
			`"CA cert" is not a valid Secret name`},
		{"ClusterDeployment name that cannot exist", cluster(nil, &infrav1.ClusterDeploymentReference{Name: "My_Cluster"}),
			`spec.clusterDeploymentRef.name: Invalid value: "My_Cluster": "My_Cluster" is not a valid object name`},
		{"ClusterDeployment namespace that cannot exist", cluster(nil, &infrav1.ClusterDeploymentReference{Name: "cd", Namespace: "a.b"}),
			`"a.b" is not a valid namespace name`},
		{"selector operator that does not exist", machine(metav1.LabelSelectorRequirement{Key: "rack", Operator: "Equals", Values: []string{"r1"}}),
			"spec.agentLabelSelector: Invalid value: matchExpressions: every operator must be In, NotIn, Exists or DoesNotExist"},
		{"In without values", machine(metav1.LabelSelectorRequirement{Key: "rack", Operator: metav1.LabelSelectorOpIn}),
			"an In or NotIn expression needs values"},
		{"Exists with values", machine(metav1.LabelSelectorRequirement{Key: "rack", Operator: metav1.LabelSelectorOpExists, Values: []string{"r1"}}),
			"an Exists or DoesNotExist expression takes none"},

		{"ignition CA Secret name longer than any object's",
			cluster(&infrav1.IgnitionEndpoint{Url: "https://ignition.example.com", CaCertificateReference: &infrav1.CaCertificateReference{Namespace: ns, Name: strings.Repeat("a", 254)}}, nil),
			"spec.ignitionEndpoint.caCertificateReference.name: Too long"},
		{"negative control-plane port", endpoint("api.example.com", -1),
			"spec.controlPlaneEndpoint.port in body should be greater than or equal to 0"},
		{"control-plane port above 65535", endpoint("api.example.com", 65536),
			"spec.controlPlaneEndpoint.port in body should be less than or equal to 65535"},
		{"control-plane host longer than any name", endpoint(strings.Repeat("a", 513), 6443),
			"spec.controlPlaneEndpoint.host: Too long: may not be more than 512 bytes"},

		// HyperShift writes the endpoint of its HostedControlPlane's status, empty until the hosted
		// API server has one (hypershift-operator's reconcileAgentCluster); upstream's schemas took
		// it, and so do ours: the controller reads it as not set yet.
		{"empty control-plane endpoint, as HyperShift writes it at first", endpoint("", 0), ""},
		{"control-plane host without its port yet", endpoint("api.example.com", 0), ""},

		{"ignition URL with an IPv4 host", cluster(&infrav1.IgnitionEndpoint{Url: "http://192.168.111.5:22623/config/worker", CaCertificateReference: ca}, nil), ""},
		{"ignition URL with a bracketed IPv6 host", cluster(&infrav1.IgnitionEndpoint{Url: "https://[fd00::5]:22623/config/worker"}, nil), ""},
		{"ignition URL with an IPv6 host without brackets (the controller brackets it)",
			cluster(&infrav1.IgnitionEndpoint{Url: "https://fd00::5:22623/config/worker"}, nil), ""},
		{"selector with every operator", machine(
			metav1.LabelSelectorRequirement{Key: "rack", Operator: metav1.LabelSelectorOpIn, Values: []string{"r1"}},
			metav1.LabelSelectorRequirement{Key: "zone", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"z9"}},
			metav1.LabelSelectorRequirement{Key: "gpu", Operator: metav1.LabelSelectorOpExists},
			metav1.LabelSelectorRequirement{Key: "broken", Operator: metav1.LabelSelectorOpDoesNotExist}), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			err := env.Client.Create(ctx, tt.obj)
			if tt.message == "" {
				g.Expect(err).NotTo(HaveOccurred())
				return
			}
			g.Expect(err).To(HaveOccurred())
			g.Expect(err.Error()).To(ContainSubstring(tt.message))
		})
	}
}

// TestTemplateProviderIDStoredUpstreamCannotChange: upstream's schema let a template carry a
// providerID (ours refuses it at create, so only an object stored under upstream's CRD has one).
// With ours installed, a change or removal of that providerID is refused with the inventory's
// message, as on an AgentMachine.
func TestTemplateProviderIDStoredUpstreamCannotChange(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns, err := env.CreateNamespace(ctx, "stored-providerid")
	g.Expect(err).NotTo(HaveOccurred())
	upstream, err := testenv.ReadCRD("test/support/schemadiff/testdata/cluster-api-provider-agent/master-79696ce/capi-provider.agent-install.openshift.io_agentmachinetemplates.yaml")
	g.Expect(err).NotTo(HaveOccurred())
	ours := ourCRD(t, "agentmachinetemplates")
	g.Expect(testenv.ReplaceCRD(ctx, env.Client, upstream)).To(Succeed())
	defer func() { g.Expect(testenv.ReplaceCRD(ctx, env.Client, ours)).To(Succeed()) }()

	withProviderID := func(id string) *infrav1.AgentMachineTemplate {
		return &infrav1.AgentMachineTemplate{ObjectMeta: meta(ns, "stored"), Spec: infrav1.AgentMachineTemplateSpec{
			Template: infrav1.AgentMachineTemplateResource{Spec: infrav1.AgentMachineSpec{ProviderID: id}}}}
	}
	// Stored once the API server serves upstream's schema.
	g.Eventually(func() error { return env.Client.Create(ctx, withProviderID("agent://a")) }, time.Minute, 200*time.Millisecond).Should(Succeed())

	g.Expect(testenv.ReplaceCRD(ctx, env.Client, ours)).To(Succeed())
	// Ours is served once a template with a providerID is refused at create (probed by dry-run).
	probe := withProviderID("agent://a")
	probe.Name = "probe"
	g.Eventually(func() error { return env.Client.Create(ctx, probe, client.DryRunAll) }, time.Minute, 200*time.Millisecond).
		Should(MatchError(ContainSubstring("must not be set in a template")))

	for _, id := range []string{"agent://b", ""} {
		stored := &infrav1.AgentMachineTemplate{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "stored"}, stored)).To(Succeed())
		g.Expect(stored.Spec.Template.Spec.ProviderID).To(Equal("agent://a"))
		stored.Spec.Template.Spec.ProviderID = id
		err := env.Client.Update(ctx, stored)
		g.Expect(err).To(MatchError(ContainSubstring("spec.template.spec: Invalid value: providerID cannot be changed or removed once set")), "providerID %q", id)
	}
}
