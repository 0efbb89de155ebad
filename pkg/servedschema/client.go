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
	"fmt"
	"reflect"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/openapi"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Client is a client.Client whose merge patches of the Adapted kinds (of the object and of its
// status) fit the schema the API server serves for them. While that schema is ours (it declares
// status.initialization, the v1beta2 contract's), patches go out unchanged and cost nothing more.
// The served schema is read on the first patch of a kind, and again when the API server refuses
// a patch as invalid: `hypershift install` may replace our CRDs, or ours may replace its, while
// the manager runs.
type Client struct {
	client.Client
	// OpenAPI reads the API server's OpenAPI v3 documents.
	OpenAPI openapi.Client
	// Adapted are the kinds whose patches are adapted.
	Adapted []schema.GroupVersionKind
	// RereadAfter is how long after reading a kind's served schema a refused patch may read it
	// again (DefaultRereadAfter), so that patches refused for another reason do not each cost
	// discovery requests.
	RereadAfter time.Duration

	mu sync.Mutex
	// schemas holds the served schema of each kind read so far: nil when it is ours (or could
	// not be read).
	schemas map[schema.GroupVersionKind]Schema
	// read is when each kind's schema was last read.
	read map[schema.GroupVersionKind]time.Time
}

// DefaultRereadAfter is the RereadAfter of NewClient.
const DefaultRereadAfter = 10 * time.Second

// NewClient returns a Client for the Adapted kinds.
func NewClient(c client.Client, oa openapi.Client, adapted ...schema.GroupVersionKind) *Client {
	return &Client{Client: c, OpenAPI: oa, Adapted: adapted, RereadAfter: DefaultRereadAfter}
}

// Patch patches obj, adapted to the served schema.
func (c *Client) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	return c.patch(ctx, obj, patch, func(p client.Patch) error { return c.Client.Patch(ctx, obj, p, opts...) })
}

// Status returns a writer of the status subresource whose patches are adapted as Patch's are.
func (c *Client) Status() client.SubResourceWriter {
	return &statusWriter{SubResourceWriter: c.Client.Status(), c: c}
}

type statusWriter struct {
	client.SubResourceWriter
	c *Client
}

func (w *statusWriter) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	return w.c.patch(ctx, obj, patch, func(p client.Patch) error { return w.SubResourceWriter.Patch(ctx, obj, p, opts...) })
}

func (c *Client) patch(ctx context.Context, obj client.Object, patch client.Patch, send func(client.Patch) error) error {
	gvk, ok := c.adapted(obj)
	if !ok || patch.Type() != types.MergePatchType {
		return send(patch)
	}
	s := c.schema(ctx, gvk, false)
	err := c.send(obj, patch, s, send)
	if !apierrors.IsInvalid(err) {
		return err
	}
	// Refused: the CRD may have been replaced since the schema was read.
	again := c.schema(ctx, gvk, true)
	if reflect.DeepEqual(s, again) {
		return err
	}
	return c.send(obj, patch, again, send)
}

// send sends patch as it is (s nil: our schema) or adapted to s; an adapted patch that changes
// nothing is not sent.
func (c *Client) send(obj client.Object, patch client.Patch, s Schema, send func(client.Patch) error) error {
	if s == nil {
		return send(patch)
	}
	data, err := patch.Data(obj)
	if err != nil {
		return fmt.Errorf("computing the patch of %s: %w", obj.GetName(), err)
	}
	var p map[string]any
	if err := json.Unmarshal(data, &p); err != nil {
		return fmt.Errorf("decoding the patch of %s: %w", obj.GetName(), err)
	}
	adapted := s.Adapt(p)
	if changesNothing(adapted) {
		return nil
	}
	if data, err = json.Marshal(adapted); err != nil {
		return fmt.Errorf("encoding the patch of %s: %w", obj.GetName(), err)
	}
	return send(client.RawPatch(types.MergePatchType, data))
}

// changesNothing says whether a merge patch holds nothing but the resourceVersion of an
// optimistic lock (and empty objects).
func changesNothing(p map[string]any) bool {
	for k, v := range p {
		if k == "metadata" {
			if m, ok := v.(map[string]any); ok {
				rest := map[string]any{}
				for mk, mv := range m {
					if mk != "resourceVersion" {
						rest[mk] = mv
					}
				}
				if changesNothing(rest) {
					continue
				}
			}
			return false
		}
		if m, ok := v.(map[string]any); ok && changesNothing(m) {
			continue
		}
		return false
	}
	return true
}

func (c *Client) adapted(obj client.Object) (schema.GroupVersionKind, bool) {
	gvk, err := c.GroupVersionKindFor(obj)
	if err != nil {
		return schema.GroupVersionKind{}, false
	}
	for _, a := range c.Adapted {
		if a == gvk {
			return gvk, true
		}
	}
	return gvk, false
}

// schema returns the served schema of gvk to adapt patches to, nil when it is ours; read again
// when refresh is set. A schema that cannot be read is taken as ours: the patch is sent as it is,
// and a refusal says why.
func (c *Client) schema(ctx context.Context, gvk schema.GroupVersionKind, refresh bool) Schema {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.schemas[gvk]; ok && (!refresh || time.Since(c.read[gvk]) < c.RereadAfter) {
		return s
	}
	log := ctrl.LoggerFrom(ctx).WithValues("kind", gvk.Kind, "version", gvk.Version)
	s, err := Fetch(c.OpenAPI, gvk)
	if err != nil {
		log.Error(err, "Reading the served schema; writing in this provider's shape")
	}
	if s != nil && s.Declares("status", "initialization") {
		s = nil // ours
	}
	if c.schemas == nil {
		c.schemas, c.read = map[schema.GroupVersionKind]Schema{}, map[schema.GroupVersionKind]time.Time{}
	}
	c.read[gvk] = time.Now()
	if old, ok := c.schemas[gvk]; !ok || !reflect.DeepEqual(old, s) {
		if s != nil {
			log.Info("The API server serves another schema of this kind than this provider's CRD (as HyperShift installs it): " +
				"its objects are written in that shape")
		} else if ok {
			log.Info("The API server serves this provider's schema of this kind again")
		}
	}
	c.schemas[gvk] = s
	return s
}
