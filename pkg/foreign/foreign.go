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

// Package foreign decides how long a deletion waits for another service's controller (Hive,
// assisted-service) to release an object the providers deleted, and when the providers may
// remove that service's finalizers themselves.
//
// The finalizers of another service stand for work only that service can do (assisted-service
// deregisters the cluster from its database, Hive deprovisions): removing them while the service
// runs but is slow orphans its records. They are removed only when the service is shown to be
// gone:
//   - the object's CustomResourceDefinition is absent or being deleted (the service is being
//     uninstalled, and Kubernetes cannot finish deleting the CRD while its objects hold
//     finalizers), or
//   - no controller has written the object for the configured timeout since its deletion began
//     (metadata.managedFields records the time of every writer's last write; a live controller
//     that works on a deletion updates the object's status or finalizers).
//
// A timeout of 0 disables the second rule: the deletion then waits as long as the service needs.
package foreign

import (
	"context"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DefaultTimeout is how long no controller may have acted on a deleted object before its
// finalizers are removed, unless configured otherwise (--foreign-finalizer-timeout).
const DefaultTimeout = 5 * time.Minute

// TimeoutFlag is the managers' flag that sets Policy.Timeout.
const TimeoutFlag = "foreign-finalizer-timeout"

// TimeoutFlagUsage is the help text of TimeoutFlag.
const TimeoutFlagUsage = "How long a deletion waits for Hive or assisted-service to act on an object the manager deleted " +
	"(a ClusterDeployment, an AgentClusterInstall) before it removes their finalizers itself. Counted from the deletion " +
	"or the last write of any controller to the object, whichever is later. Finalizers are removed at once when the " +
	"object's CRD is absent or being deleted. 0 waits as long as those services need."

// Reason says why the finalizers were removed.
type Reason string

const (
	// CRDGone means the object's CustomResourceDefinition is absent or being deleted.
	CRDGone Reason = "CRDGone"
	// NoControllerActivity means no controller wrote the object for the timeout.
	NoControllerActivity Reason = "NoControllerActivity"
)

// Policy decides about the finalizers of other services' objects.
type Policy struct {
	// Reader reads CustomResourceDefinitions' metadata (uncached: only deletions need it).
	Reader client.Reader
	// Timeout: see the package documentation. 0 never removes finalizers for inactivity.
	Timeout time.Duration
	// Clock tells the time (default: the real clock).
	Clock clock.PassiveClock
}

// Verdict is what Wait decided.
type Verdict struct {
	// Removed is set when the finalizers were removed (Reason says why).
	Removed bool
	Reason  Reason
	// Finalizers are the finalizers the object held.
	Finalizers []string
	// Message says what the deletion waits for, or why the finalizers were removed.
	Message string
	// RequeueAfter is when to look again (when the timeout would pass).
	RequeueAfter time.Duration
}

// Wait is called for an object being deleted (deletionTimestamp set) that still holds
// finalizers. It removes them, with a merge patch that writes nothing else, when the service
// that owns them is shown to be gone; otherwise it tells what the deletion waits for and when
// to look again. service names that service in messages ("Hive", "assisted-service").
func (p Policy) Wait(ctx context.Context, c client.Client, obj client.Object, service string) (Verdict, error) {
	v := Verdict{Finalizers: obj.GetFinalizers()}
	kind := kindOf(c, obj)
	desc := fmt.Sprintf("%s %s/%s", kind, obj.GetNamespace(), obj.GetName())
	gone, err := p.crdGone(ctx, c, obj)
	if err != nil {
		return v, err
	}
	if gone != "" {
		v.Reason = CRDGone
		v.Message = fmt.Sprintf("%s: removed the finalizers %s of %s", gone, strings.Join(v.Finalizers, ", "), desc)
		return v, p.strip(ctx, c, obj, &v)
	}
	last := LastActivity(obj)
	idle := p.clock().Since(last)
	if p.Timeout > 0 && idle >= p.Timeout {
		v.Reason = NoControllerActivity
		v.Message = fmt.Sprintf("No controller acted on %s for %s (is %s running?): removed its finalizers %s",
			desc, idle.Round(time.Second), service, strings.Join(v.Finalizers, ", "))
		return v, p.strip(ctx, c, obj, &v)
	}
	v.Message = fmt.Sprintf("Waiting for %s to remove the finalizers %s of %s (last acted on %s ago)",
		service, strings.Join(v.Finalizers, ", "), desc, idle.Round(time.Second))
	if p.Timeout > 0 {
		v.Message += fmt.Sprintf("; they are removed after %s without activity", p.Timeout)
		v.RequeueAfter = p.Timeout - idle + time.Second
	}
	return v, nil
}

func (p Policy) strip(ctx context.Context, c client.Client, obj client.Object, v *Verdict) error {
	before, ok := obj.DeepCopyObject().(client.Object)
	if !ok {
		return fmt.Errorf("copying %s", obj.GetName())
	}
	obj.SetFinalizers(nil)
	// Not found: the object went meanwhile. No match: its CRD went with it.
	if err := c.Patch(ctx, obj, client.MergeFrom(before)); err != nil && !apierrors.IsNotFound(err) && !meta.IsNoMatchError(err) {
		return fmt.Errorf("removing the finalizers of %s: %w", obj.GetName(), err)
	}
	v.Removed = true
	return nil
}

// crdGone returns why the object's CRD counts as gone ("" when it is installed).
func (p Policy) crdGone(ctx context.Context, c client.Client, obj client.Object) (string, error) {
	gvk, err := c.GroupVersionKindFor(obj)
	if err != nil {
		return "", fmt.Errorf("finding the kind of %s: %w", obj.GetName(), err)
	}
	// The CRD is named <plural>.<group>. A kind the API server no longer serves has no mapping:
	// guess its plural as Kubernetes does, and let the CRD itself tell whether it is gone.
	var resource schema.GroupVersionResource
	switch mapping, err := c.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version); {
	case meta.IsNoMatchError(err):
		resource, _ = meta.UnsafeGuessKindToResource(gvk)
	case err != nil:
		return "", fmt.Errorf("mapping %s: %w", gvk.Kind, err)
	default:
		resource = mapping.Resource
	}
	name := resource.Resource + "." + resource.Group
	crd := &metav1.PartialObjectMetadata{}
	crd.SetGroupVersionKind(schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"})
	reader := p.Reader
	if reader == nil {
		reader = c
	}
	switch err := reader.Get(ctx, client.ObjectKey{Name: name}, crd); {
	case apierrors.IsNotFound(err):
		return fmt.Sprintf("The CRD %s is not installed", name), nil
	case err != nil:
		return "", fmt.Errorf("reading CRD %s: %w", name, err)
	case !crd.DeletionTimestamp.IsZero():
		return fmt.Sprintf("The CRD %s is being deleted (its service is uninstalled)", name), nil
	}
	return "", nil
}

// LastActivity is the later of the object's deletion and the last write any field manager
// made to it.
func LastActivity(obj client.Object) time.Time {
	var last time.Time
	if ts := obj.GetDeletionTimestamp(); ts != nil {
		last = ts.Time
	}
	for _, mf := range obj.GetManagedFields() {
		if mf.Time != nil && mf.Time.After(last) {
			last = mf.Time.Time
		}
	}
	return last
}

func (p Policy) clock() clock.PassiveClock {
	if p.Clock != nil {
		return p.Clock
	}
	return clock.RealClock{}
}

func kindOf(c client.Client, obj client.Object) string {
	if gvk, err := c.GroupVersionKindFor(obj); err == nil {
		return gvk.Kind
	}
	return fmt.Sprintf("%T", obj)
}
