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

package workload

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metainternalversionscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	metainternalversionvalidation "k8s.io/apimachinery/pkg/apis/meta/internalversion/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/endpoints/handlers/negotiation"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// maxBodyBytes is the largest request body accepted, kube-apiserver's default
// (--max-request-body-bytes, 3 MiB).
const maxBodyBytes = 3 << 20

// ServeHTTP serves the cluster's API. k8s.io/apiserver's RequestInfoFactory parses the request
// as kube-apiserver parses it (verb, resource, subresource, namespace, name).
func (c *cluster) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	info, err := c.srv.infoFactory.NewRequestInfo(r)
	if err != nil {
		writeError(w, apierrors.NewBadRequest(err.Error()))
		return
	}
	c.counter.count(r, info)
	if !info.IsResourceRequest {
		c.serveNonResource(w, r, info)
		return
	}
	c.serveResource(w, r, info)
}

// serveNonResource serves the health checks, /version and discovery.
func (c *cluster) serveNonResource(w http.ResponseWriter, r *http.Request, info *request.RequestInfo) {
	path := strings.TrimSuffix(info.Path, "/")
	d := c.srv.discovery
	var body []byte
	contentType := runtime.ContentTypeJSON
	switch {
	case path == "" || isHealthPath(path):
		body, contentType = []byte("ok"), "text/plain; charset=utf-8"
	case path == "/version":
		body = d.version
	case d.legacy[path] != nil:
		aggregated, err := negotiateDiscovery(r, true)
		if err != nil {
			writeError(w, err)
			return
		}
		body = d.legacy[path]
		if aggregated {
			body, contentType = d.aggregated[path], aggregatedContentType
		}
		w.Header().Set("Vary", "Accept")
	case d.groups[path] != nil || d.resources[path] != nil:
		if _, err := negotiateDiscovery(r, false); err != nil {
			writeError(w, err)
			return
		}
		body = d.groups[path]
		if body == nil {
			body = d.resources[path]
		}
	default:
		writeError(w, errNoSuchPath())
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		writeError(w, apierrors.NewMethodNotSupported(schema.GroupResource{}, r.Method))
		return
	}
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		_, _ = w.Write(body)
	}
}

// errNoSuchPath is kube-apiserver's answer for a path it does not serve (its NotFound
// handler).
func errNoSuchPath() error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusNotFound,
		Reason:  metav1.StatusReasonNotFound,
		Message: "the server could not find the requested resource",
		Details: &metav1.StatusDetails{},
	}}
}

// isHealthPath tells whether path is one of kube-apiserver's health checks or one of their
// individual checks (/readyz/ping).
func isHealthPath(path string) bool {
	for _, p := range []string{"/healthz", "/livez", "/readyz"} {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}

// negotiateDiscovery tells whether the client asked for aggregated discovery (allowed if
// aggregatedAllowed), for which client-go's discovery client asks first, falling back to the
// legacy documents.
func negotiateDiscovery(r *http.Request, aggregatedAllowed bool) (bool, error) {
	jsonOnly := []runtime.SerializerInfo{{
		MediaType:        runtime.ContentTypeJSON,
		MediaTypeType:    "application",
		MediaTypeSubType: "json",
		EncodesAsText:    true,
	}}
	mt, ok := negotiation.NegotiateMediaTypeOptions(r.Header.Get("Accept"), jsonOnly, discoveryRestrictions{aggregated: aggregatedAllowed})
	if !ok {
		return false, negotiation.NewNotAcceptableError([]string{runtime.ContentTypeJSON, aggregatedContentType})
	}
	return mt.Convert != nil, nil
}

// discoveryRestrictions allows the conversion of discovery to aggregated discovery (v2).
type discoveryRestrictions struct{ aggregated bool }

// AllowsMediaTypeTransform allows no conversion, or to aggregated discovery if allowed.
func (d discoveryRestrictions) AllowsMediaTypeTransform(_, _ string, target *schema.GroupVersionKind) bool {
	if target == nil {
		return true
	}
	return d.aggregated && *target == schema.GroupVersionKind{Group: "apidiscovery.k8s.io", Version: "v2", Kind: "APIGroupDiscoveryList"}
}

// AllowsServerVersion allows no server version.
func (discoveryRestrictions) AllowsServerVersion(string) bool { return false }

// AllowsStreamSchema allows no stream.
func (discoveryRestrictions) AllowsStreamSchema(string) bool { return false }

// resourceRequest is a request to a resource the cluster serves.
type resourceRequest struct {
	w    http.ResponseWriter
	r    *http.Request
	k    *kindInfo
	info *request.RequestInfo
	// namespace is the request's namespace; empty for cluster-scoped kinds and requests to
	// all namespaces.
	namespace string
	// name is the object's name; empty for requests to a collection.
	name        string
	subresource string
}

// key is the key of the object the request names.
func (rr *resourceRequest) key() client.ObjectKey {
	return client.ObjectKey{Namespace: rr.namespace, Name: rr.name}
}

// serveResource serves a request to a resource: a kind the cluster does not serve is answered
// 404, as kube-apiserver answers for a group or resource it does not have.
func (c *cluster) serveResource(w http.ResponseWriter, r *http.Request, info *request.RequestInfo) {
	k := c.srv.kinds.byResource[schema.GroupVersionResource{Group: info.APIGroup, Version: info.APIVersion, Resource: info.Resource}]
	if k == nil {
		writeError(w, errNoSuchPath())
		return
	}
	rr := &resourceRequest{w: w, r: r, k: k, info: info, namespace: info.Namespace, subresource: info.Subresource}
	// info.Name may come from a metadata.name field selector: the path tells whether the
	// request names an object.
	if len(info.Parts) >= 2 {
		rr.name = info.Name
	}
	if !k.Namespaced {
		// RequestInfo takes /api/v1/namespaces/<name> for the namespace <name>.
		if rr.namespace != "" && info.Resource != "namespaces" {
			writeError(w, errNoSuchPath())
			return
		}
		rr.namespace = ""
	} else if rr.namespace == "" && rr.name != "" {
		writeError(w, errNoSuchPath())
		return
	}
	switch rr.subresource {
	case "":
	case "status":
		if !k.Status {
			writeError(w, errNoSuchPath())
			return
		}
	case "eviction":
		if !k.eviction {
			writeError(w, errNoSuchPath())
			return
		}
	default:
		writeError(w, errNoSuchPath())
		return
	}

	named, collection := rr.name != "", rr.name == "" && rr.subresource == ""
	// A namespaced kind is created and deleted in bulk only in a namespace.
	scoped := !k.Namespaced || rr.namespace != ""
	switch verb := info.Verb; {
	case rr.subresource == "eviction" && verb == "create":
		c.evict(rr)
	case rr.subresource == "eviction":
		writeError(w, apierrors.NewMethodNotSupported(k.storeGVR.GroupResource(), verb))
	case verb == "get" && named:
		c.get(rr)
	case (verb == "list" || verb == "watch") && rr.subresource == "":
		c.list(rr)
	case verb == "create" && collection && scoped:
		c.create(rr)
	case verb == "update" && named:
		c.update(rr)
	case verb == "patch" && named:
		c.patch(rr)
	case verb == "delete" && named && rr.subresource == "":
		c.delete(rr)
	case verb == "deletecollection" && collection && scoped:
		c.deleteCollection(rr)
	default:
		writeError(w, apierrors.NewMethodNotSupported(k.storeGVR.GroupResource(), verb))
	}
}

// get serves a get of an object or its status.
func (c *cluster) get(rr *resourceRequest) {
	out, err := c.negotiate(rr, false)
	if err != nil {
		writeError(rr.w, err)
		return
	}
	obj := rr.k.newObject(c.srv.kinds.scheme)
	if err := c.store.client.Get(rr.r.Context(), rr.key(), obj); err != nil {
		writeError(rr.w, err)
		return
	}
	out.write(rr.w, http.StatusOK, obj)
}

// create serves a create (POST to a collection).
func (c *cluster) create(rr *resourceRequest) {
	out, err := c.negotiate(rr, false)
	if err != nil {
		writeError(rr.w, err)
		return
	}
	var opts metav1.CreateOptions
	if err := queryOptions(rr.r, &opts); err != nil {
		writeError(rr.w, err)
		return
	}
	opts.FieldManager = managerOrUserAgent(opts.FieldManager, rr.r)
	obj, err := c.decode(rr)
	if err != nil {
		writeError(rr.w, err)
		return
	}
	err = c.store.write("", func() error {
		return c.store.client.Create(rr.r.Context(), obj, &client.CreateOptions{
			DryRun: opts.DryRun, FieldManager: opts.FieldManager, FieldValidation: opts.FieldValidation,
		})
	})
	if err != nil {
		writeError(rr.w, err)
		return
	}
	out.write(rr.w, http.StatusCreated, obj)
}

// update serves an update (PUT) of an object or its status.
func (c *cluster) update(rr *resourceRequest) {
	out, err := c.negotiate(rr, false)
	if err != nil {
		writeError(rr.w, err)
		return
	}
	var opts metav1.UpdateOptions
	if err := queryOptions(rr.r, &opts); err != nil {
		writeError(rr.w, err)
		return
	}
	opts.FieldManager = managerOrUserAgent(opts.FieldManager, rr.r)
	obj, err := c.decode(rr)
	if err != nil {
		writeError(rr.w, err)
		return
	}
	if obj.GetName() != rr.name {
		writeError(rr.w, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", obj.GetName(), rr.name)))
		return
	}
	if obj.GetResourceVersion() == "" && !rr.k.builtin {
		// Custom resources allow no unconditional update (their strategy's
		// AllowUnconditionalUpdate).
		writeError(rr.w, apierrors.NewInvalid(rr.k.GVK.GroupKind(), rr.name, field.ErrorList{
			field.Invalid(field.NewPath("metadata", "resourceVersion"), obj.GetResourceVersion(), "must be specified for an update"),
		}))
		return
	}
	ctx := rr.r.Context()
	code := http.StatusOK
	err = c.store.write(rr.subresource, func() error {
		current := rr.k.newObject(c.srv.kinds.scheme)
		switch err := c.store.client.Get(ctx, rr.key(), current); {
		case err == nil:
			// An update can neither remove nor change a deletionTimestamp (rest.BeforeUpdate).
			if current.GetDeletionTimestamp() != nil {
				obj.SetDeletionTimestamp(current.GetDeletionTimestamp())
				obj.SetDeletionGracePeriodSeconds(current.GetDeletionGracePeriodSeconds())
			}
		case apierrors.IsNotFound(err) && rr.subresource == "":
			code = http.StatusCreated // If the kind allows create on update; else the fake client says 404.
		default:
			return err
		}
		uo := client.UpdateOptions{DryRun: opts.DryRun, FieldManager: opts.FieldManager, FieldValidation: opts.FieldValidation}
		if rr.subresource != "" {
			return c.store.client.SubResource(rr.subresource).Update(ctx, obj, &client.SubResourceUpdateOptions{UpdateOptions: uo})
		}
		return c.store.client.Update(ctx, obj, &uo)
	})
	if err != nil {
		writeError(rr.w, err)
		return
	}
	out.write(rr.w, code, obj)
}

// patch serves a patch of an object or its status: JSON patch, merge patch, strategic merge
// patch (built-in kinds only, as kube-apiserver refuses it for custom resources) and
// server-side apply.
func (c *cluster) patch(rr *resourceRequest) {
	out, err := c.negotiate(rr, false)
	if err != nil {
		writeError(rr.w, err)
		return
	}
	pt, err := patchType(rr)
	if err != nil {
		writeError(rr.w, err)
		return
	}
	var opts metav1.PatchOptions
	if err := queryOptions(rr.r, &opts); err != nil {
		writeError(rr.w, err)
		return
	}
	body, err := readBody(rr.r)
	if err != nil {
		writeError(rr.w, err)
		return
	}
	if pt == types.ApplyPatchType {
		err = checkApplyConfiguration(rr, body)
	} else {
		opts.FieldManager = managerOrUserAgent(opts.FieldManager, rr.r)
		if !json.Valid(body) {
			err = apierrors.NewBadRequest("the request body is not valid JSON")
		}
	}
	if err != nil {
		writeError(rr.w, err)
		return
	}

	ctx := rr.r.Context()
	obj := rr.k.newObject(c.srv.kinds.scheme)
	obj.SetName(rr.name)
	obj.SetNamespace(rr.namespace)
	patch := client.RawPatch(pt, body)
	code := http.StatusOK
	err = c.store.write(rr.subresource, func() error {
		if err := c.store.client.Get(ctx, rr.key(), rr.k.newObject(c.srv.kinds.scheme)); err != nil {
			// Only an apply to the object creates it.
			if !apierrors.IsNotFound(err) || pt != types.ApplyPatchType || rr.subresource != "" {
				return err
			}
			code = http.StatusCreated
		}
		po := client.PatchOptions{DryRun: opts.DryRun, Force: opts.Force, FieldManager: opts.FieldManager, FieldValidation: opts.FieldValidation}
		if rr.subresource != "" {
			return c.store.client.SubResource(rr.subresource).Patch(ctx, obj, patch, &client.SubResourcePatchOptions{PatchOptions: po})
		}
		return c.store.client.Patch(ctx, obj, patch, &po)
	})
	if err != nil {
		var status apierrors.APIStatus
		switch {
		case errors.As(err, &status):
		case pt == types.JSONPatchType:
			// As kube-apiserver answers a JSON patch that does not apply (handlers/patch.go).
			err = apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "patch", rr.k.storeGVR.GroupResource(), rr.name, err.Error(), 0, false)
		default:
			err = apierrors.NewBadRequest(err.Error())
		}
		writeError(rr.w, err)
		return
	}
	out.write(rr.w, code, obj)
}

// patchType returns the patch type of the request's Content-Type.
func patchType(rr *resourceRequest) (types.PatchType, error) {
	supported := []string{string(types.JSONPatchType), string(types.MergePatchType), string(types.ApplyPatchType)}
	if rr.k.builtin {
		supported = append(supported, string(types.StrategicMergePatchType))
	}
	mt, _, err := mime.ParseMediaType(rr.r.Header.Get("Content-Type"))
	if err == nil {
		for _, s := range supported {
			if mt == s {
				return types.PatchType(s), nil
			}
		}
	}
	return "", negotiation.NewUnsupportedMediaTypeError(supported)
}

// checkApplyConfiguration checks an apply configuration's type, name and namespace against the
// request, as kube-apiserver does.
func checkApplyConfiguration(rr *resourceRequest, body []byte) error {
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(body, &u.Object); err != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("error decoding YAML: %v", err))
	}
	if u.Object == nil {
		return apierrors.NewBadRequest("the apply configuration is empty")
	}
	if gvk := u.GroupVersionKind(); gvk != rr.k.GVK {
		return apierrors.NewBadRequest(fmt.Sprintf("the apply configuration is a %s, not a %s", gvk, rr.k.GVK))
	}
	if name := u.GetName(); name != "" && name != rr.name {
		return apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", name, rr.name))
	}
	if ns := u.GetNamespace(); rr.k.Namespaced && ns != "" && ns != rr.namespace {
		return apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	return nil
}

// delete serves a delete: an object with finalizers only gets a deletionTimestamp.
func (c *cluster) delete(rr *resourceRequest) {
	out, err := c.negotiate(rr, false)
	if err != nil {
		writeError(rr.w, err)
		return
	}
	opts, err := deleteOptions(rr.r)
	if err != nil {
		writeError(rr.w, err)
		return
	}
	ctx := rr.r.Context()
	var result client.Object
	gone := false
	err = c.store.write("", func() error {
		current := rr.k.newObject(c.srv.kinds.scheme)
		if err := c.store.client.Get(ctx, rr.key(), current); err != nil {
			return err
		}
		if err := checkPreconditions(rr, current, opts.Preconditions); err != nil {
			return err
		}
		result = current
		if len(opts.DryRun) > 0 {
			return nil
		}
		if err := c.store.client.Delete(ctx, current); err != nil {
			return err
		}
		after := rr.k.newObject(c.srv.kinds.scheme)
		switch err := c.store.client.Get(ctx, rr.key(), after); {
		case apierrors.IsNotFound(err):
			gone = true
		case err != nil:
			return err
		default:
			result = after
		}
		return nil
	})
	if err != nil {
		writeError(rr.w, err)
		return
	}
	// kube-apiserver returns the deleted object for pods and custom resources, a Status for the
	// other built-in kinds (the registries' ReturnDeletedObject).
	if gone && rr.k.builtin && rr.k.GVK != podGVK {
		writeStatus(rr.w, metav1.Status{
			Status: metav1.StatusSuccess,
			Code:   http.StatusOK,
			Details: &metav1.StatusDetails{
				Name:  rr.name,
				Group: rr.k.GVK.Group,
				Kind:  rr.k.Resource,
				UID:   result.GetUID(),
			},
		})
		return
	}
	out.write(rr.w, http.StatusOK, result)
}

// deleteOptions reads a delete's options from its body, in any media type, or, without one,
// from its query, as kube-apiserver does (handlers.DeleteResource).
func deleteOptions(r *http.Request) (*metav1.DeleteOptions, error) {
	body, err := readBody(r)
	if err != nil {
		return nil, err
	}
	opts := &metav1.DeleteOptions{}
	if len(body) == 0 {
		if err := queryOptions(r, opts); err != nil {
			return nil, err
		}
		return opts, nil
	}
	s, err := negotiation.NegotiateInputSerializer(r, false, metainternalversionscheme.Codecs)
	if err != nil {
		return nil, err
	}
	defaultGVK := metav1.SchemeGroupVersion.WithKind("DeleteOptions")
	obj, _, err := metainternalversionscheme.Codecs.DecoderToVersion(s.Serializer, defaultGVK.GroupVersion()).Decode(body, &defaultGVK, opts)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if obj != opts {
		return nil, apierrors.NewBadRequest("decoded object cannot be converted to DeleteOptions")
	}
	return opts, nil
}

// checkPreconditions checks a delete's uid and resourceVersion preconditions.
func checkPreconditions(rr *resourceRequest, o client.Object, p *metav1.Preconditions) error {
	if p == nil {
		return nil
	}
	gr := rr.k.storeGVR.GroupResource()
	if p.UID != nil && *p.UID != o.GetUID() {
		return apierrors.NewConflict(gr, rr.name, fmt.Errorf("precondition failed: UID in precondition: %v, UID in object meta: %v", *p.UID, o.GetUID()))
	}
	if p.ResourceVersion != nil && *p.ResourceVersion != o.GetResourceVersion() {
		return apierrors.NewConflict(gr, rr.name, fmt.Errorf("precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v", *p.ResourceVersion, o.GetResourceVersion()))
	}
	return nil
}

// deleteCollection serves a delete of the objects of a collection that match its selectors and
// answers the list of the objects deleted.
func (c *cluster) deleteCollection(rr *resourceRequest) {
	out, err := c.negotiate(rr, true)
	if err != nil {
		writeError(rr.w, err)
		return
	}
	opts, err := c.listOptions(rr)
	if err != nil {
		writeError(rr.w, err)
		return
	}
	sel := newSelector(opts)
	ctx := rr.r.Context()
	deleted := rr.k.newList(c.srv.kinds.scheme)
	err = c.store.write("", func() error {
		list := rr.k.newList(c.srv.kinds.scheme)
		if err := c.store.client.List(ctx, list, client.InNamespace(rr.namespace)); err != nil {
			return err
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			return err
		}
		var matched []runtime.Object
		for _, item := range items {
			o := item.(client.Object)
			if !sel.matches(o) {
				continue
			}
			if err := c.store.client.Delete(ctx, o); client.IgnoreNotFound(err) != nil {
				return err
			}
			matched = append(matched, o)
		}
		return meta.SetList(deleted, matched)
	})
	if err != nil {
		writeError(rr.w, err)
		return
	}
	out.write(rr.w, http.StatusOK, deleted)
}

// evict serves a pod's eviction by deleting the pod, without disruption budgets.
func (c *cluster) evict(rr *resourceRequest) {
	if _, err := readBody(rr.r); err != nil {
		writeError(rr.w, err)
		return
	}
	ctx := rr.r.Context()
	err := c.store.write("", func() error {
		pod := rr.k.newObject(c.srv.kinds.scheme)
		if err := c.store.client.Get(ctx, rr.key(), pod); err != nil {
			return err
		}
		return c.store.client.Delete(ctx, pod)
	})
	if err != nil {
		writeError(rr.w, err)
		return
	}
	writeStatus(rr.w, metav1.Status{Status: metav1.StatusSuccess, Code: http.StatusCreated})
}

// list serves a list or a watch of a collection.
func (c *cluster) list(rr *resourceRequest) {
	opts, err := c.listOptions(rr)
	if err != nil {
		writeError(rr.w, err)
		return
	}
	if opts.Watch {
		c.watch(rr, opts)
		return
	}
	out, err := c.negotiate(rr, true)
	if err != nil {
		writeError(rr.w, err)
		return
	}
	var token *continueToken
	if opts.Continue != "" {
		if token, err = decodeContinue(opts.Continue); err != nil {
			writeError(rr.w, err)
			return
		}
	}
	sel := newSelector(opts)
	items, rv, err := c.listObjects(rr.k, rr.namespace, sel)
	if err != nil {
		writeError(rr.w, err)
		return
	}
	if token != nil {
		// The continuation of a list carries the resourceVersion of its first page.
		rv = token.RV
		i := 0
		for i < len(items) && !token.before(items[i]) {
			i++
		}
		items = items[i:]
	}
	list := rr.k.newList(c.srv.kinds.scheme)
	list.SetResourceVersion(strconv.FormatUint(rv, 10))
	if opts.Limit > 0 && int64(len(items)) > opts.Limit {
		last := items[opts.Limit-1]
		list.SetContinue(encodeContinue(continueToken{RV: rv, Namespace: last.GetNamespace(), Name: last.GetName()}))
		if sel.everything() {
			list.SetRemainingItemCount(ptr.To(int64(len(items)) - opts.Limit))
		}
		items = items[:opts.Limit]
	}
	objs := make([]runtime.Object, len(items))
	for i, o := range items {
		objs[i] = o
	}
	if err := meta.SetList(list, objs); err != nil {
		writeError(rr.w, err)
		return
	}
	out.write(rr.w, http.StatusOK, list)
}

// listObjects returns the objects of a kind in a namespace (all for "") that match sel,
// sorted by namespace and name, and the resourceVersion they are as of.
func (c *cluster) listObjects(k *kindInfo, namespace string, sel *selector) ([]client.Object, uint64, error) {
	c.store.mu.RLock()
	defer c.store.mu.RUnlock()
	items, err := c.listLocked(k, namespace, sel)
	return items, c.store.rv, err
}

// listLocked returns the objects of a kind in a namespace (all for "") that match sel, sorted
// by namespace and name. c.store.mu must be held. It reads client-go's object tracker, under
// the fake client: the fake client takes locks of its own around the calls to the store's
// tracker methods, which take c.store.mu.
func (c *cluster) listLocked(k *kindInfo, namespace string, sel *selector) ([]client.Object, error) {
	list, err := c.store.objects.List(k.storeGVR, k.GVK, namespace)
	if err != nil {
		return nil, err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	out := make([]client.Object, 0, len(items))
	for _, item := range items {
		o := item.(client.Object)
		o.GetObjectKind().SetGroupVersionKind(k.GVK)
		if sel.matches(o) {
			out = append(out, o)
		}
	}
	return out, nil
}

// listOptions parses and validates a list's, watch's or deletecollection's options as
// kube-apiserver does, and checks that the kind supports the fields of the field selector.
// A watch of a named object (/watch/<resource>/<name>) selects on its name.
func (c *cluster) listOptions(rr *resourceRequest) (*metainternalversion.ListOptions, error) {
	opts := &metainternalversion.ListOptions{}
	if err := queryOptions(rr.r, opts); err != nil {
		return nil, err
	}
	if rr.info.Verb == "watch" {
		opts.Watch = true
	}
	if errs := metainternalversionvalidation.ValidateListOptions(opts, true); len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "ListOptions"}, "", errs)
	}
	if rr.name != "" {
		byName := fields.OneTermEqualSelector("metadata.name", rr.name)
		if opts.FieldSelector == nil || opts.FieldSelector.Empty() {
			opts.FieldSelector = byName
		} else {
			opts.FieldSelector = fields.AndSelectors(opts.FieldSelector, byName)
		}
	}
	if opts.FieldSelector != nil {
		for _, req := range opts.FieldSelector.Requirements() {
			if !rr.k.fields[req.Field] {
				return nil, apierrors.NewBadRequest(fmt.Sprintf("field label not supported: %s", req.Field))
			}
		}
	}
	return opts, nil
}

// selector is a list's or watch's label and field selectors.
type selector struct {
	labels labels.Selector
	fields fields.Selector
}

// newSelector returns the selectors of opts.
func newSelector(opts *metainternalversion.ListOptions) *selector {
	s := &selector{labels: opts.LabelSelector, fields: opts.FieldSelector}
	if s.labels != nil && s.labels.Empty() {
		s.labels = nil
	}
	if s.fields != nil && s.fields.Empty() {
		s.fields = nil
	}
	return s
}

// everything tells whether the selector selects every object.
func (s *selector) everything() bool { return s.labels == nil && s.fields == nil }

// matches tells whether o matches the selectors. Fields other than metadata.name and
// metadata.namespace are read from the object's Go value along their JSON names, so that a
// field the JSON omits has its zero value ("false" for a bool), as kube-apiserver's
// ...ToSelectableFields functions give it.
func (s *selector) matches(o client.Object) bool {
	if s.labels != nil && !s.labels.Matches(labels.Set(o.GetLabels())) {
		return false
	}
	if s.fields == nil {
		return true
	}
	set := fields.Set{}
	for _, req := range s.fields.Requirements() {
		switch req.Field {
		case "metadata.name":
			set[req.Field] = o.GetName()
		case "metadata.namespace":
			set[req.Field] = o.GetNamespace()
		default:
			set[req.Field] = fieldValue(o, req.Field)
		}
	}
	return s.fields.Matches(set)
}

// fieldValue returns the value of a field of an object, named by the dotted path of its JSON
// names, as a field selector compares it; "" if the object has no such field or it is nil.
func fieldValue(obj any, path string) string {
	v := reflect.ValueOf(obj)
	for _, name := range strings.Split(path, ".") {
		v = fieldByJSONName(reflect.Indirect(v), name)
	}
	v = reflect.Indirect(v)
	if !v.IsValid() {
		return ""
	}
	switch v.Kind() {
	case reflect.String:
		return v.String()
	case reflect.Bool:
		return strconv.FormatBool(v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.FormatUint(v.Uint(), 10)
	default:
		return fmt.Sprint(v.Interface())
	}
}

// fieldByJSONName returns the field of a struct that has a JSON name, looking into inlined
// structs; the zero Value if there is none.
func fieldByJSONName(v reflect.Value, name string) reflect.Value {
	if v.Kind() != reflect.Struct {
		return reflect.Value{}
	}
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		tagName, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case tagName == "-" || !f.IsExported():
		case tagName == "" && (f.Anonymous || strings.Contains(opts, "inline")):
			if found := fieldByJSONName(reflect.Indirect(v.Field(i)), name); found.IsValid() {
				return found
			}
		case tagName == name:
			return v.Field(i)
		}
	}
	return reflect.Value{}
}

// continueToken is the position of a paginated list.
type continueToken struct {
	RV              uint64
	Namespace, Name string
}

// before tells whether the token's position is before o.
func (t *continueToken) before(o client.Object) bool {
	if o.GetNamespace() != t.Namespace {
		return t.Namespace < o.GetNamespace()
	}
	return t.Name < o.GetName()
}

// encodeContinue encodes a continue token, opaque to clients. Names and namespaces have no "/".
func encodeContinue(t continueToken) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatUint(t.RV, 10) + "/" + t.Namespace + "/" + t.Name))
}

// decodeContinue decodes a continue token.
func decodeContinue(s string) (*continueToken, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	parts := strings.Split(string(b), "/")
	if err != nil || len(parts) != 3 || parts[2] == "" {
		return nil, apierrors.NewBadRequest("continue key is not valid")
	}
	rv, err := strconv.ParseUint(parts[0], 10, 64)
	if err != nil {
		return nil, apierrors.NewBadRequest("continue key is not valid")
	}
	return &continueToken{RV: rv, Namespace: parts[1], Name: parts[2]}, nil
}

// decode decodes the request's body into a new object of its kind, by its Content-Type, and
// puts it in the request's namespace.
func (c *cluster) decode(rr *resourceRequest) (client.Object, error) {
	info, err := negotiation.NegotiateInputSerializer(rr.r, false, rr.k.serializer)
	if err != nil {
		return nil, err
	}
	body, err := readBody(rr.r)
	if err != nil {
		return nil, err
	}
	obj := rr.k.newObject(c.srv.kinds.scheme)
	got, gvk, err := info.Serializer.Decode(body, &rr.k.GVK, obj)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if got != obj || gvk == nil || *gvk != rr.k.GVK {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the body of the request is not a %s", rr.k.GVK))
	}
	obj.GetObjectKind().SetGroupVersionKind(rr.k.GVK)
	switch {
	case !rr.k.Namespaced:
		obj.SetNamespace("")
	case obj.GetNamespace() == "":
		obj.SetNamespace(rr.namespace)
	case obj.GetNamespace() != rr.namespace:
		return nil, apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	return obj, nil
}

// readBody reads a request's body, up to maxBodyBytes.
func readBody(r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("reading the request body: %v", err))
	}
	if len(body) > maxBodyBytes {
		return nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", maxBodyBytes))
	}
	return body, nil
}

// managerOrUserAgent returns the field manager a write names or, if none, the first product
// token of its User-Agent, as kube-apiserver does (handlers.managerOrUserAgent).
func managerOrUserAgent(manager string, r *http.Request) string {
	if manager != "" {
		return manager
	}
	ua, _, _ := strings.Cut(r.UserAgent(), "/")
	if len(ua) > 128 {
		ua = ua[:128]
	}
	return ua
}

// writeError answers err as a metav1.Status with its code; an error that is not an API
// error is an internal error.
func writeError(w http.ResponseWriter, err error) {
	var apiStatus apierrors.APIStatus
	status := apierrors.NewInternalError(err).ErrStatus
	if errors.As(err, &apiStatus) {
		status = apiStatus.Status()
	}
	if status.Status == "" {
		status.Status = metav1.StatusFailure
	}
	if status.Code == 0 {
		status.Code = http.StatusInternalServerError
	}
	writeStatus(w, status)
}

// writeStatus answers a metav1.Status, with its code, in JSON.
func writeStatus(w http.ResponseWriter, status metav1.Status) {
	status.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
	body, err := json.Marshal(status)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", runtime.ContentTypeJSON)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(int(status.Code))
	_, _ = w.Write(body)
}

// output is a negotiated response encoding.
type output struct {
	k    *kindInfo
	info runtime.SerializerInfo
	// partial is the PartialObjectMetadata(List) kind the client asked the objects to be
	// converted to, if any.
	partial *schema.GroupVersionKind
	log     func(error)
}

// negotiate negotiates the response's encoding from the request's Accept header, as
// kube-apiserver does (k8s.io/apiserver handlers/negotiation): JSON unless the client asks
// for another media type the kind is served in; protobuf only for built-in kinds; objects
// converted to PartialObjectMetadata (or its list) if the client asks, as the metadata client
// does.
func (c *cluster) negotiate(rr *resourceRequest, list bool) (*output, error) {
	mt, info, err := negotiation.NegotiateOutputMediaType(rr.r, rr.k.serializer, partialRestrictions{list: list})
	if err != nil {
		return nil, err
	}
	return &output{k: rr.k, info: info, partial: mt.Convert, log: c.logError}, nil
}

// logError logs an error that cannot be answered any more.
func (c *cluster) logError(err error) {
	c.srv.log.V(1).Info("Writing a response failed", "cluster", c.name, "error", err.Error())
}

// write writes an object or a list of the kind, converted if asked.
func (o *output) write(w http.ResponseWriter, code int, obj runtime.Object) {
	// Typed objects lose their type in controller-runtime's (fake) client.
	if _, ok := obj.(client.ObjectList); ok {
		obj.GetObjectKind().SetGroupVersionKind(o.k.listGVK)
	} else {
		obj.GetObjectKind().SetGroupVersionKind(o.k.GVK)
	}
	contentType := o.info.MediaType
	if o.partial != nil {
		obj = toPartial(obj, *o.partial)
		contentType += ";as=" + o.partial.Kind + ";g=" + o.partial.Group + ";v=" + o.partial.Version
	}
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	if err := o.info.Serializer.Encode(obj, w); err != nil {
		o.log(err)
	}
}

// partialRestrictions allows the conversion of objects to PartialObjectMetadata and of lists
// to PartialObjectMetadataList, and watch streams.
type partialRestrictions struct{ list bool }

// AllowsMediaTypeTransform allows no conversion, or to the PartialObjectMetadata kind that
// fits the request.
func (p partialRestrictions) AllowsMediaTypeTransform(_, _ string, target *schema.GroupVersionKind) bool {
	if target == nil {
		return true
	}
	if target.Group != metav1.GroupName || (target.Version != "v1" && target.Version != "v1beta1") {
		return false
	}
	if p.list {
		return target.Kind == "PartialObjectMetadataList"
	}
	return target.Kind == "PartialObjectMetadata"
}

// AllowsServerVersion allows no server version.
func (partialRestrictions) AllowsServerVersion(string) bool { return false }

// AllowsStreamSchema allows watch streams.
func (partialRestrictions) AllowsStreamSchema(s string) bool { return s == "watch" }

// toPartial converts an object to a PartialObjectMetadata, or a list to a
// PartialObjectMetadataList, of type gvk.
func toPartial(obj runtime.Object, gvk schema.GroupVersionKind) runtime.Object {
	if o, ok := obj.(client.Object); ok {
		p := &metav1.PartialObjectMetadata{ObjectMeta: *objectMeta(o)}
		p.SetGroupVersionKind(gvk)
		return p
	}
	list, ok := obj.(client.ObjectList)
	if !ok {
		return obj
	}
	p := &metav1.PartialObjectMetadataList{}
	p.SetGroupVersionKind(gvk)
	p.SetResourceVersion(list.GetResourceVersion())
	p.SetContinue(list.GetContinue())
	p.SetRemainingItemCount(list.GetRemainingItemCount())
	_ = meta.EachListItem(list, func(item runtime.Object) error {
		if o, ok := item.(client.Object); ok {
			p.Items = append(p.Items, metav1.PartialObjectMetadata{
				TypeMeta:   metav1.TypeMeta{Kind: "PartialObjectMetadata", APIVersion: gvk.GroupVersion().String()},
				ObjectMeta: *objectMeta(o),
			})
		}
		return nil
	})
	return p
}

// objectMeta returns a copy of an object's metadata.
func objectMeta(o client.Object) *metav1.ObjectMeta {
	if a, ok := o.(metav1.ObjectMetaAccessor); ok {
		if m, ok := a.GetObjectMeta().(*metav1.ObjectMeta); ok {
			return m.DeepCopy()
		}
	}
	return &metav1.ObjectMeta{
		Name:              o.GetName(),
		Namespace:         o.GetNamespace(),
		UID:               o.GetUID(),
		ResourceVersion:   o.GetResourceVersion(),
		Generation:        o.GetGeneration(),
		CreationTimestamp: o.GetCreationTimestamp(),
		DeletionTimestamp: o.GetDeletionTimestamp(),
		Labels:            o.GetLabels(),
		Annotations:       o.GetAnnotations(),
		OwnerReferences:   o.GetOwnerReferences(),
		Finalizers:        o.GetFinalizers(),
		ManagedFields:     o.GetManagedFields(),
	}
}

// queryOptions decodes a request's query parameters into opts (metav1 CreateOptions,
// ListOptions and the like), as kube-apiserver does; a bad parameter is a 400.
func queryOptions(r *http.Request, opts runtime.Object) error {
	if err := metainternalversionscheme.ParameterCodec.DecodeParameters(r.URL.Query(), metav1.SchemeGroupVersion, opts); err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	return nil
}
