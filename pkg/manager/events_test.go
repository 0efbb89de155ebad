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

package manager_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/go-logr/logr/funcr"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/manager"
)

// accessReviewer answers the SelfSubjectAccessReviews of EventRecorders: allowed per API group
// of the events resource, or errs per group, and records what it was asked.
type accessReviewer struct {
	allowed map[string]bool
	errs    map[string]error
	asked   []authorizationv1.ResourceAttributes
}

func (a *accessReviewer) client() client.Client {
	return fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
		Create: func(_ context.Context, _ client.WithWatch, obj client.Object, _ ...client.CreateOption) error {
			review, ok := obj.(*authorizationv1.SelfSubjectAccessReview)
			if !ok || review.Spec.ResourceAttributes == nil {
				return errors.New("not a SelfSubjectAccessReview of a resource")
			}
			attrs := *review.Spec.ResourceAttributes
			a.asked = append(a.asked, attrs)
			if err := a.errs[attrs.Group]; err != nil {
				return err
			}
			review.Status.Allowed = a.allowed[attrs.Group]
			return nil
		},
	}).Build()
}

func TestEventRecorders(t *testing.T) {
	review := func(namespace, group string) authorizationv1.ResourceAttributes {
		return authorizationv1.ResourceAttributes{Namespace: namespace, Verb: "create", Group: group, Resource: "events"}
	}
	const (
		coreMsg = `"msg"="This manager may not create events.k8s.io Events: writing core/v1 Events"`
		noneMsg = `"msg"="This manager may create no Events (events.k8s.io or core): events are refused, conditions still say what happens"`
	)
	for _, tc := range []struct {
		name      string
		namespace string
		allowed   map[string]bool
		wantAsked []string // the groups asked, in order
		wantCore  bool     // core/v1 Events rather than the events API
		wantLog   string   // "" for no log line
	}{
		{name: "events API allowed", namespace: "lab", allowed: map[string]bool{"events.k8s.io": true, "": true},
			wantAsked: []string{"events.k8s.io"}},
		{name: "only core events allowed (HyperShift's capi-provider role)", namespace: "lab", allowed: map[string]bool{"": true},
			wantAsked: []string{"events.k8s.io", ""}, wantCore: true, wantLog: coreMsg},
		{name: "only core events allowed, every namespace", allowed: map[string]bool{"": true},
			wantAsked: []string{"events.k8s.io", ""}, wantCore: true, wantLog: coreMsg},
		{name: "no events allowed", namespace: "lab",
			wantAsked: []string{"events.k8s.io", ""}, wantLog: noneMsg},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reviewer := &accessReviewer{allowed: tc.allowed}
			apiRecorder, coreRecorder := events.NewFakeRecorder(1), record.NewFakeRecorder(1)
			coreRecorder.IncludeObject = true
			mgr := &testManager{client: reviewer.client(), recorder: apiRecorder, coreRecorder: coreRecorder}
			var logs []string
			ctx := ctrl.LoggerInto(context.Background(), funcr.New(func(_, args string) { logs = append(logs, args) }, funcr.Options{}))

			o := &manager.Options{WatchNamespace: tc.namespace}
			recorders, err := o.EventRecorders(ctx, mgr)
			if err != nil {
				t.Fatal(err)
			}

			var want []authorizationv1.ResourceAttributes
			for _, g := range tc.wantAsked {
				want = append(want, review(tc.namespace, g))
			}
			if !slices.Equal(reviewer.asked, want) {
				t.Errorf("asked %+v, want %+v", reviewer.asked, want)
			}
			switch {
			case tc.wantLog == "" && len(logs) != 0:
				t.Errorf("logged %q, want nothing", logs)
			case tc.wantLog != "" && (len(logs) != 1 || !strings.Contains(logs[0], tc.wantLog) || !strings.Contains(logs[0], `"namespace"="`+tc.namespace+`"`)):
				t.Errorf("logged %q, want one line with %s and the namespace %q", logs, tc.wantLog, tc.namespace)
			}

			pod := &corev1.Pod{TypeMeta: ctrl.TypeMeta{Kind: "Pod", APIVersion: "v1"}}
			node := &corev1.Node{}
			r := recorders("agent-controller")
			r.Eventf(pod, node, corev1.EventTypeWarning, "Failed", "Install", "host %s failed", "h1")
			if tc.wantCore {
				if len(mgr.recorderNames) != 0 || !slices.Equal(mgr.coreRecorderNames, []string{"agent-controller"}) {
					t.Errorf("recorders asked: events API %q, core %q; want only the core one, for agent-controller", mgr.recorderNames, mgr.coreRecorderNames)
				}
				// The core Event is about the regarding object, with the note as its message.
				if got, want := next(coreRecorder.Events), "Warning Failed host h1 failed involvedObject{kind=Pod,apiVersion=v1}"; got != want {
					t.Errorf("core event %q, want %q", got, want)
				}
				return
			}
			if len(mgr.coreRecorderNames) != 0 || !slices.Equal(mgr.recorderNames, []string{"agent-controller"}) {
				t.Errorf("recorders asked: events API %q, core %q; want only the events API's, for agent-controller", mgr.recorderNames, mgr.coreRecorderNames)
			}
			if got, want := next(apiRecorder.Events), "Warning Failed host h1 failed"; got != want {
				t.Errorf("event %q, want %q", got, want)
			}
		})
	}
}

// next is the event a fake recorder has written, "" if none.
func next(events chan string) string {
	select {
	case e := <-events:
		return e
	default:
		return ""
	}
}

func TestEventRecordersErrors(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name    string
		allowed map[string]bool
		errs    map[string]error
		want    string
	}{
		{name: "asking about the events API", errs: map[string]error{"events.k8s.io": boom},
			want: `asking the API server whether this manager may create events (group "events.k8s.io"): boom`},
		{name: "asking about core events", errs: map[string]error{"": boom},
			want: `asking the API server whether this manager may create events (group ""): boom`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reviewer := &accessReviewer{allowed: tc.allowed, errs: tc.errs}
			o := &manager.Options{WatchNamespace: "lab"}
			recorders, err := o.EventRecorders(context.Background(), &testManager{client: reviewer.client()})
			if err == nil || err.Error() != tc.want || !errors.Is(err, boom) {
				t.Errorf("EventRecorders error %v, want %q wrapping the client's error", err, tc.want)
			}
			if recorders != nil {
				t.Error("EventRecorders returned recorders with its error")
			}
		})
	}
}
