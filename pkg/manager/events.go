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

package manager

import (
	"context"
	"fmt"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
)

// EventRecorders returns what gives each controller of the manager its event recorder. It is
// the events API (events.k8s.io/v1), which the providers' manifests grant. When the manager may
// not create those Events in the namespace it watches (--namespace; all namespaces without it)
// but may create core/v1 Events, it writes core/v1 Events instead. HyperShift runs the agent
// provider under its capi-provider Role, which grants core events and not events.k8s.io
// (control-plane-operator capi-provider role.yaml); there, every event of the events API was
// refused and reached only the log. The check is two SelfSubjectAccessReviews at start.
func (o *Options) EventRecorders(ctx context.Context, mgr ctrl.Manager) (func(name string) events.EventRecorder, error) {
	allowed := func(group string) (bool, error) {
		review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: o.WatchNamespace, Verb: "create", Group: group, Resource: "events"},
		}}
		if err := mgr.GetClient().Create(ctx, review); err != nil {
			return false, fmt.Errorf("asking the API server whether this manager may create events (group %q): %w", group, err)
		}
		return review.Status.Allowed, nil
	}
	eventsAPI, err := allowed("events.k8s.io")
	if err != nil {
		return nil, err
	}
	if eventsAPI {
		return mgr.GetEventRecorder, nil
	}
	core, err := allowed("")
	if err != nil {
		return nil, err
	}
	log := ctrl.LoggerFrom(ctx)
	if !core {
		log.Info("This manager may create no Events (events.k8s.io or core): events are refused, conditions still say what happens", "namespace", o.WatchNamespace)
		return mgr.GetEventRecorder, nil
	}
	log.Info("This manager may not create events.k8s.io Events: writing core/v1 Events", "namespace", o.WatchNamespace)
	return func(name string) events.EventRecorder {
		// The core/v1 recorder is deprecated in controller-runtime for the events API, which
		// this manager may not use here.
		return coreEventRecorder{mgr.GetEventRecorderFor(name)} //nolint:staticcheck // see above
	}, nil
}

// coreEventRecorder writes the events API's Eventf as a core/v1 Event, which has no action and
// no related object.
type coreEventRecorder struct{ record.EventRecorder }

func (r coreEventRecorder) Eventf(regarding, _ runtime.Object, eventtype, reason, _, note string, args ...any) {
	r.EventRecorder.Eventf(regarding, eventtype, reason, note, args...)
}

var _ events.EventRecorder = coreEventRecorder{}
