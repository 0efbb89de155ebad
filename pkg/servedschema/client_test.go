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

package servedschema

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/openapi"
	"k8s.io/client-go/openapi/openapitest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	infrav1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/infrastructure/v1beta1"
)

// openAPI returns an OpenAPI v3 client that publishes s as the AgentCluster schema.
func openAPI(t *testing.T, s Schema) *openapitest.FakeClient {
	t.Helper()
	published := Schema{}
	for k, v := range s {
		published[k] = v
	}
	published["x-kubernetes-group-version-kind"] = []any{map[string]any{
		"group": infrav1.GroupVersion.Group, "version": infrav1.GroupVersion.Version, "kind": "AgentCluster"}}
	doc, err := json.Marshal(map[string]any{"components": map[string]any{"schemas": map[string]any{
		"io.openshift.agent-install.capi-provider.v1beta1.AgentCluster": published}}})
	if err != nil {
		t.Fatal(err)
	}
	return &openapitest.FakeClient{PathsMap: map[string]openapi.GroupVersion{
		"apis/" + infrav1.GroupVersion.String(): openapitest.FakeGroupVersion{GVSpec: doc}}}
}

// writes is an API server stand-in: it records the status patches it receives and refuses one
// with an empty condition message while served is HyperShift's schema, as its CRD's minLength does.
type writes struct {
	served *Schema
	sent   []string
}

func (w *writes) funcs() interceptor.Funcs {
	return interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch,
		opts ...client.SubResourcePatchOption) error {
		data, err := patch.Data(obj)
		if err != nil {
			return err
		}
		if string(data) != "{}" {
			w.sent = append(w.sent, string(data))
		}
		if !w.served.Declares("status", "initialization") && strings.Contains(string(data), `"message":""`) {
			return apierrors.NewInvalid(infrav1.GroupVersion.WithKind("AgentCluster").GroupKind(), obj.GetName(),
				field.ErrorList{field.Invalid(field.NewPath("status", "conditions").Index(0).Child("message"), "", "should be at least 1 chars long")})
		}
		return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
	}}
}

func TestClientWritesTheServedShape(t *testing.T) {
	ours, hyperShift := oursSchema(t, "agentclusters"), hyperShiftSchema(t, "agentclusters")
	scheme := runtime.NewScheme()
	if err := infrav1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	ready := metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Ready", LastTransitionTime: metav1.Now()}
	setReady := func(ctx context.Context, c client.Client) error {
		ac := &infrav1.AgentCluster{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "hc1"}, ac); err != nil {
			return err
		}
		before := ac.DeepCopy()
		ac.Status.Conditions = []metav1.Condition{ready}
		ac.Status.Ready = true //nolint:staticcheck // the v1beta1 contract's field
		return c.Status().Patch(ctx, ac, client.MergeFrom(before))
	}
	for _, tc := range []struct {
		name string
		// served is the schema the API server serves when the manager starts, then after the
		// first write.
		served, then Schema
		// want: what reaches the API server.
		want []string
	}{
		{
			name: "our CRD: the patch as it is", served: ours, then: ours,
			want: []string{`{"status":{"conditions":[{"lastTransitionTime":"T","message":"","reason":"Ready","status":"True","type":"Ready"}],"ready":true}}`},
		},
		{
			name: "HyperShift's CRD: the patch in its shape", served: hyperShift, then: hyperShift,
			want: []string{`{"status":{"clusterDeploymentReference":{},"conditions":[{"lastTransitionTime":"T","reason":"Ready","status":"True","type":"Ready"}],"ready":true}}`},
		},
		{
			name:   "HyperShift's CRD put in place of ours while the manager runs: refused once, read again, sent in its shape",
			served: ours, then: hyperShift,
			want: []string{
				`{"status":{"conditions":[{"lastTransitionTime":"T","message":"","reason":"Ready","status":"True","type":"Ready"}],"ready":true}}`,
				`{"status":{"clusterDeploymentReference":{},"conditions":[{"lastTransitionTime":"T","reason":"Ready","status":"True","type":"Ready"}],"ready":true}}`,
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := context.Background()
			served := tc.served
			w := &writes{served: &served}
			base := fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(&infrav1.AgentCluster{}).
				WithObjects(&infrav1.AgentCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "hc1"}}).
				WithInterceptorFuncs(w.funcs()).Build()
			oa := openAPI(t, tc.served)
			c := NewClient(base, oa, infrav1.GroupVersion.WithKind("AgentCluster"))
			c.RereadAfter = 0 // the CRD is replaced right after the first read
			// The schema is read on the first write; the CRD is replaced after that.
			isOurs := tc.served.Declares("status", "initialization")
			g.Expect(c.schema(ctx, infrav1.GroupVersion.WithKind("AgentCluster"), false) == nil).To(Equal(isOurs), "nothing to adapt to our CRD")
			served = tc.then
			oa.PathsMap = openAPI(t, tc.then).PathsMap

			g.Expect(setReady(ctx, c)).To(Succeed())
			ltt, err := json.Marshal(ready.LastTransitionTime)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(w.sent).To(HaveLen(len(tc.want)))
			for i := range tc.want {
				g.Expect(strings.ReplaceAll(w.sent[i], string(ltt), `"T"`)).To(MatchJSON(tc.want[i]), "write %d", i)
			}
			// Nothing changed: nothing is sent.
			g.Expect(setReady(ctx, c)).To(Succeed())
			g.Expect(w.sent).To(HaveLen(len(tc.want)))
		})
	}
}

// TestRefusedPatchesDoNotEachReadTheSchema: a patch refused within RereadAfter of the last read
// of the schema does not read it again; it is refused as the API server said.
func TestRefusedPatchesDoNotEachReadTheSchema(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	scheme := runtime.NewScheme()
	g.Expect(infrav1.AddToScheme(scheme)).To(Succeed())
	served := hyperShiftSchema(t, "agentclusters")
	w := &writes{served: &served}
	base := fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(&infrav1.AgentCluster{}).
		WithObjects(&infrav1.AgentCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "hc1"}}).
		WithInterceptorFuncs(w.funcs()).Build()
	oa := openAPI(t, oursSchema(t, "agentclusters"))
	c := NewClient(base, oa, infrav1.GroupVersion.WithKind("AgentCluster"))
	g.Expect(c.schema(ctx, infrav1.GroupVersion.WithKind("AgentCluster"), false)).To(BeNil(), "ours, when first read")
	oa.PathsMap = openAPI(t, served).PathsMap // replaced right after: not read again yet

	ac := &infrav1.AgentCluster{}
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "hc1"}, ac)).To(Succeed())
	before := ac.DeepCopy()
	ac.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Ready", LastTransitionTime: metav1.Now()}}
	err := c.Status().Patch(ctx, ac, client.MergeFrom(before))
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
	g.Expect(w.sent).To(HaveLen(1), "sent once, not again in another shape")
}
