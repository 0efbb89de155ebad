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

package testenv

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"path"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/transport"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	runtimehooksv1 "sigs.k8s.io/cluster-api/api/runtime/hooks/v1alpha1"
	runtimev1 "sigs.k8s.io/cluster-api/api/runtime/v1beta2"
	runtimecatalog "sigs.k8s.io/cluster-api/exp/runtime/catalog"
	runtimeclient "sigs.k8s.io/cluster-api/exp/runtime/client"
	"sigs.k8s.io/cluster-api/util"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// defaultDiscoveryTimeout bounds the discovery call, as in internal/runtime/client/client.go.
const defaultDiscoveryTimeout = 10 * time.Second

// RuntimeClient is the Runtime SDK client (sigs.k8s.io/cluster-api/exp/runtime/client.Client)
// given to Cluster API's controllers run in-process: Cluster API's own client and registry
// (internal/runtime/client/client.go, internal/runtime/registry/registry.go) are internal.
// It follows them function by function, as the comments say, except that it records no metrics.
type RuntimeClient struct {
	catalog *runtimecatalog.Catalog
	reader  client.Reader // reads Namespaces for namespaceSelectors
	// certFile and keyFile are the client certificate it presents (UseClientCertificate), as
	// Cluster API's manager given --runtime-extension-client-cert-file and -key-file.
	certFile, keyFile string

	lock          sync.RWMutex
	ready         bool
	registrations map[string]*extensionRegistration // by handler name ("<handler>.<ExtensionConfig>")
	httpClients   map[string]*http.Client           // by host name and CA bundle
}

var _ runtimeclient.Client = &RuntimeClient{}

// extensionRegistration is one registered handler (internal/runtime/registry ExtensionRegistration).
type extensionRegistration struct {
	name, extensionConfigName, extensionConfigResourceVersion string
	gvh                                                       runtimecatalog.GroupVersionHook
	namespaceSelector                                         labels.Selector
	clientConfig                                              runtimev1.ClientConfig
	timeoutSeconds                                            int32
	failurePolicy                                             runtimev1.FailurePolicy
	settings                                                  map[string]string
}

// callError is a failure to reach an extension or to read its answer: the only errors a
// handler's failurePolicy applies to (upstream's errCallingExtensionHandler).
type callError struct{ error }

func (e callError) Unwrap() error { return e.error }

// NewRuntimeClient returns a RuntimeClient, not ready until WarmUp, that reads Namespaces with
// reader and knows the hooks of sigs.k8s.io/cluster-api/api/runtime/hooks/v1alpha1.
func NewRuntimeClient(reader client.Reader) *RuntimeClient {
	catalog := runtimecatalog.New()
	if err := runtimehooksv1.AddToCatalog(catalog); err != nil {
		panic(fmt.Sprintf("adding Cluster API's runtime hooks to a catalog: %v", err)) // static: cannot fail
	}
	return &RuntimeClient{catalog: catalog, reader: reader,
		registrations: map[string]*extensionRegistration{}, httpClients: map[string]*http.Client{}}
}

// UseClientCertificate makes the client present the certificate and key of the PEM files in
// every call from now on, as Cluster API's manager started with --runtime-extension-client-cert-
// file and --runtime-extension-client-key-file (v1.13, client.go New: the files are read when an
// HTTP client is made).
func (c *RuntimeClient) UseClientCertificate(certFile, keyFile string) {
	c.lock.Lock()
	defer c.lock.Unlock()
	c.certFile, c.keyFile = certFile, keyFile
	clear(c.httpClients)
}

// WarmUp registers every ExtensionConfig of the list, all or nothing, and makes the client ready
// (registry.go WarmUp); it may succeed once.
func (c *RuntimeClient) WarmUp(list *runtimev1.ExtensionConfigList) error {
	if list == nil {
		return errors.New("failed to warm up registry: ExtensionConfigList must not be nil")
	}
	c.lock.Lock()
	defer c.lock.Unlock()
	if c.ready {
		return errors.New("failed to warm up registry: it has already been warmed up")
	}
	var errs []error
	for i := range list.Items {
		if err := c.add(&list.Items[i]); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		c.registrations = map[string]*extensionRegistration{}
		return fmt.Errorf("failed to warm up registry: %w", kerrors.NewAggregate(errs))
	}
	c.ready = true
	return nil
}

// IsReady reports whether WarmUp has succeeded.
func (c *RuntimeClient) IsReady() bool {
	c.lock.RLock()
	defer c.lock.RUnlock()
	return c.ready
}

// Register registers the handlers in the ExtensionConfig's status, replacing those it had
// (client.go Register, registry.go Add).
func (c *RuntimeClient) Register(extensionConfig *runtimev1.ExtensionConfig) error {
	if extensionConfig == nil {
		return errors.New("failed to register ExtensionConfig: it must not be nil")
	}
	c.lock.Lock()
	defer c.lock.Unlock()
	if !c.ready {
		return fmt.Errorf("failed to register ExtensionConfig %q: the registry has not been warmed up", extensionConfig.Name)
	}
	return c.add(extensionConfig)
}

// Unregister removes the ExtensionConfig's handlers (client.go Unregister, registry.go Remove).
func (c *RuntimeClient) Unregister(extensionConfig *runtimev1.ExtensionConfig) error {
	if extensionConfig == nil {
		return errors.New("failed to unregister ExtensionConfig: it must not be nil")
	}
	c.lock.Lock()
	defer c.lock.Unlock()
	if !c.ready {
		return fmt.Errorf("failed to unregister ExtensionConfig %q: the registry has not been warmed up", extensionConfig.Name)
	}
	c.remove(extensionConfig.Name)
	return nil
}

func (c *RuntimeClient) remove(extensionConfigName string) {
	maps.DeleteFunc(c.registrations, func(_ string, r *extensionRegistration) bool {
		return r.extensionConfigName == extensionConfigName
	})
}

// add is registry.go add; the caller holds the lock. Handler names are taken from status.handlers
// as they are: Discover has already qualified them as "<handler>.<ExtensionConfig>".
func (c *RuntimeClient) add(extensionConfig *runtimev1.ExtensionConfig) error {
	c.remove(extensionConfig.Name)
	// Cluster API's ExtensionConfig webhook (internal/webhooks/extensionconfig.go Default) turns a
	// nil namespaceSelector into {}, which matches everything; no such webhook runs here.
	selector := labels.Everything()
	if extensionConfig.Spec.NamespaceSelector != nil {
		var err error
		if selector, err = metav1.LabelSelectorAsSelector(extensionConfig.Spec.NamespaceSelector); err != nil {
			return fmt.Errorf("failed to add ExtensionConfig %q to registry: failed to create namespaceSelector: %w", extensionConfig.Name, err)
		}
	}
	var errs []error
	registrations := []*extensionRegistration{}
	for _, h := range extensionConfig.Status.Handlers {
		gv, err := schema.ParseGroupVersion(h.RequestHook.APIVersion)
		if err != nil {
			errs = append(errs, fmt.Errorf("failed to parse GroupVersion %q of handler %q: %w", h.RequestHook.APIVersion, h.Name, err))
			continue
		}
		registrations = append(registrations, &extensionRegistration{
			name: h.Name, extensionConfigName: extensionConfig.Name, extensionConfigResourceVersion: extensionConfig.ResourceVersion,
			gvh:               runtimecatalog.GroupVersionHook{Group: gv.Group, Version: gv.Version, Hook: h.RequestHook.Hook},
			namespaceSelector: selector, clientConfig: extensionConfig.Spec.ClientConfig,
			timeoutSeconds: h.TimeoutSeconds, failurePolicy: h.FailurePolicy, settings: maps.Clone(extensionConfig.Spec.Settings),
		})
	}
	if len(errs) > 0 {
		return fmt.Errorf("failed to add ExtensionConfig %q to registry: %w", extensionConfig.Name, kerrors.NewAggregate(errs))
	}
	for _, r := range registrations {
		c.registrations[r.name] = r
	}
	return nil
}

// Discover calls the extension's discovery endpoint and returns a copy of the ExtensionConfig
// whose status.handlers lists the handlers it serves (client.go Discover).
func (c *RuntimeClient) Discover(ctx context.Context, extensionConfig *runtimev1.ExtensionConfig) (*runtimev1.ExtensionConfig, error) {
	log := ctrl.LoggerFrom(ctx)
	log.V(4).Info("Performing discovery for ExtensionConfig")
	gvh, err := c.catalog.GroupVersionHook(runtimehooksv1.Discovery)
	if err != nil {
		return nil, fmt.Errorf("failed to discover extension %q: failed to compute GVH of hook: %w", extensionConfig.Name, err)
	}
	httpClient, err := c.httpClient(extensionConfig.Spec.ClientConfig)
	if err != nil {
		return nil, fmt.Errorf("failed to discover extension %q: failed to get http client: %w", extensionConfig.Name, err)
	}
	response := &runtimehooksv1.DiscoveryResponse{}
	call := extensionCall{extensionConfig.Spec.ClientConfig, gvh, gvh, "", defaultDiscoveryTimeout, httpClient}
	if err := c.httpCall(ctx, &runtimehooksv1.DiscoveryRequest{}, response, call); err != nil {
		return nil, fmt.Errorf("failed to discover extension %q: %w", extensionConfig.Name, err)
	}
	if err := validateResponseStatus(log, response, "discover extension", extensionConfig.Name); err != nil {
		return nil, err
	}
	if err := defaultAndValidateDiscoveryResponse(c.catalog, response); err != nil {
		return nil, fmt.Errorf("failed to discover extension %q: %w", extensionConfig.Name, err)
	}
	discovered := extensionConfig.DeepCopy()
	discovered.Status.Handlers = []runtimev1.ExtensionHandler{}
	for _, h := range response.Handlers {
		discovered.Status.Handlers = append(discovered.Status.Handlers, runtimev1.ExtensionHandler{
			Name:           h.Name + "." + extensionConfig.Name, // client.go NameForHandler
			RequestHook:    runtimev1.GroupVersionHook{APIVersion: h.RequestHook.APIVersion, Hook: h.RequestHook.Hook},
			TimeoutSeconds: ptr.Deref(h.TimeoutSeconds, 0),
			FailurePolicy:  runtimev1.FailurePolicy(ptr.Deref(h.FailurePolicy, "")),
		})
	}
	return discovered, nil
}

// GetAllExtensions returns the names of the handlers registered for the hook whose
// ExtensionConfig's namespaceSelector matches forObject's namespace (client.go GetAllExtensions).
func (c *RuntimeClient) GetAllExtensions(ctx context.Context, hook runtimecatalog.Hook, forObject client.Object) ([]string, error) {
	hookName := runtimecatalog.HookName(hook)
	log := ctrl.LoggerFrom(ctx).WithValues("hook", hookName)
	ctx = ctrl.LoggerInto(ctx, log)
	gvh, err := c.catalog.GroupVersionHook(hook)
	if err != nil {
		return nil, fmt.Errorf("failed to get extension handlers for hook %q: failed to compute GroupVersionHook: %w", hookName, err)
	}
	c.lock.RLock()
	var registrations []*extensionRegistration
	for _, r := range c.registrations {
		if r.gvh.GroupHook() == gvh.GroupHook() {
			registrations = append(registrations, r)
		}
	}
	ready := c.ready
	c.lock.RUnlock()
	if !ready {
		return nil, fmt.Errorf("failed to get extension handlers for hook %q: the registry has not been warmed up", gvh.GroupHook())
	}
	// Upstream's order is the registry map's; sorting makes the lab's runs repeatable.
	slices.SortFunc(registrations, func(a, b *extensionRegistration) int { return strings.Compare(a.name, b.name) })
	log.V(4).Info(fmt.Sprintf("Getting all extensions of hook %q for %T %s", hookName, forObject, klog.KObj(forObject)))
	names := []string{}
	for _, r := range registrations {
		matches, err := c.matchNamespace(ctx, r.namespaceSelector, forObject.GetNamespace())
		if err != nil {
			return nil, fmt.Errorf("failed to get extension handlers for hook %q: failed to get extension handler %q: %w", gvh.GroupHook(), r.name, err)
		}
		if !matches {
			log.V(5).Info(fmt.Sprintf("skipping extension handler %q as object %s does not match selector %q of ExtensionConfig", r.name, klog.KObj(forObject), r.namespaceSelector))
			continue
		}
		names = append(names, r.name)
	}
	return names, nil
}

// CallAllExtensions calls, one after the other, every handler GetAllExtensions returns, stops at
// the first error, and aggregates the answers into response (client.go CallAllExtensions).
func (c *RuntimeClient) CallAllExtensions(ctx context.Context, hook runtimecatalog.Hook, forObject client.Object, request runtimehooksv1.RequestObject, response runtimehooksv1.ResponseObject) error {
	log := ctrl.LoggerFrom(ctx).WithValues("hook", runtimecatalog.HookName(hook))
	ctx = ctrl.LoggerInto(ctx, log)
	gvh, err := c.checkHook(hook, request, response)
	if err != nil {
		return fmt.Errorf("failed to call extension handlers: %w", err)
	}
	handlers, err := c.GetAllExtensions(ctx, hook, forObject)
	if err != nil {
		return fmt.Errorf("failed to call extension handlers for hook %q: %w", gvh.GroupHook(), err)
	}
	responses := []runtimehooksv1.ResponseObject{}
	for _, name := range handlers {
		obj, err := c.catalog.NewResponse(gvh)
		if err != nil {
			return fmt.Errorf("failed to call extension handlers for hook %q: failed to call extension handler %q: %w", gvh.GroupHook(), name, err)
		}
		handlerResponse := obj.(runtimehooksv1.ResponseObject)
		if err := c.CallExtension(ctx, hook, forObject, name, request, handlerResponse); err != nil {
			log.Error(err, "failed to call extension handlers")
			return fmt.Errorf("failed to call extension handlers for hook %q: %w", gvh.GroupHook(), err)
		}
		responses = append(responses, handlerResponse)
	}
	// client.go aggregateSuccessfulResponses: Success, the lowest non-zero retryAfterSeconds,
	// and the non-empty messages joined by ", ".
	response.SetStatus(runtimehooksv1.ResponseStatusSuccess)
	messages := []string{}
	for _, r := range responses {
		if aggregated, ok := response.(runtimehooksv1.RetryResponseObject); ok {
			aggregated.SetRetryAfterSeconds(util.LowestNonZeroInt32(aggregated.GetRetryAfterSeconds(), r.(runtimehooksv1.RetryResponseObject).GetRetryAfterSeconds()))
		}
		if r.GetMessage() != "" {
			messages = append(messages, r.GetMessage())
		}
	}
	response.SetMessage(strings.Join(messages, ", "))
	return nil
}

// checkHook returns the hook's GroupVersionHook once request and response are of its types.
func (c *RuntimeClient) checkHook(hook runtimecatalog.Hook, request, response runtime.Object) (runtimecatalog.GroupVersionHook, error) {
	gvh, err := c.catalog.GroupVersionHook(hook)
	if err != nil {
		return gvh, fmt.Errorf("failed to compute GroupVersionHook of hook %q: %w", runtimecatalog.HookName(hook), err)
	}
	if err := c.catalog.ValidateRequest(gvh, request); err != nil {
		return gvh, fmt.Errorf("request object is invalid for hook %q: %w", gvh, err)
	}
	if err := c.catalog.ValidateResponse(gvh, response); err != nil {
		return gvh, fmt.Errorf("response object is invalid for hook %q: %w", gvh, err)
	}
	return gvh, nil
}

// CallExtension calls the named handler and fills response with its answer (client.go
// CallExtension). Its failurePolicy applies only to failing to reach the handler or read its
// answer: Ignore turns that into an empty Success. An answer other than Success is an error.
// WithCaching is honoured: a cached answer is returned without a call, a successful one cached.
func (c *RuntimeClient) CallExtension(ctx context.Context, hook runtimecatalog.Hook, forObject client.Object, name string, request runtimehooksv1.RequestObject, response runtimehooksv1.ResponseObject, opts ...runtimeclient.CallExtensionOption) error {
	options := &runtimeclient.CallExtensionOptions{}
	for _, opt := range opts {
		opt.ApplyToOptions(options)
	}
	log := ctrl.LoggerFrom(ctx).WithValues("extensionHandler", name, "hook", runtimecatalog.HookName(hook))
	ctx = ctrl.LoggerInto(ctx, log)
	hookGVH, err := c.checkHook(hook, request, response)
	if err != nil {
		return fmt.Errorf("failed to call extension handler %q: %w", name, err)
	}
	c.lock.RLock()
	registration, ready := c.registrations[name], c.ready
	c.lock.RUnlock()
	switch {
	case !ready:
		return fmt.Errorf("failed to call extension handler %q: the registry has not been warmed up", name)
	case registration == nil:
		return fmt.Errorf("failed to call extension handler %q: handler with name %q has not been registered", name, name)
	case registration.gvh.GroupHook() != hookGVH.GroupHook():
		return fmt.Errorf("failed to call extension handler %q: handler does not match GroupHook %q", name, hookGVH.GroupHook())
	}
	matches, err := c.matchNamespace(ctx, registration.namespaceSelector, forObject.GetNamespace())
	if err != nil {
		return fmt.Errorf("failed to call extension handler %q: %w", name, err)
	}
	if !matches {
		return fmt.Errorf("failed to call extension handler %q: namespaceSelector did not match object %s", name, client.ObjectKeyFromObject(forObject))
	}

	log.V(4).Info(fmt.Sprintf("Calling extension handler %q", name))
	timeout := runtimehooksv1.DefaultHandlersTimeoutSeconds * time.Second
	if registration.timeoutSeconds != 0 {
		timeout = time.Duration(registration.timeoutSeconds) * time.Second
	}
	// client.go cloneAndAddSettings: the request's own settings win over the ExtensionConfig's.
	request = request.DeepCopyObject().(runtimehooksv1.RequestObject)
	settings := maps.Clone(registration.settings)
	if settings == nil {
		settings = map[string]string{}
	}
	maps.Copy(settings, request.GetSettings())
	request.SetSettings(settings)

	var cacheKey string
	if options.WithCaching {
		cacheKey = options.CacheKeyFunc(registration.name, registration.extensionConfigResourceVersion, request)
		if entry, ok := options.Cache.Has(cacheKey); ok {
			out, cached := reflect.ValueOf(response), reflect.ValueOf(entry.Response)
			if !cached.Type().AssignableTo(out.Type()) {
				return fmt.Errorf("failed to call extension handler %q: cached response of type %s instead of type %s", name, cached.Type(), out.Type())
			}
			reflect.Indirect(out).Set(reflect.Indirect(cached))
			return nil
		}
	}

	httpClient, err := c.httpClient(registration.clientConfig)
	if err != nil {
		return fmt.Errorf("failed to call extension handler %q: failed to get http client: %w", name, err)
	}
	handlerName := strings.TrimSuffix(registration.name, "."+registration.extensionConfigName)
	call := extensionCall{registration.clientConfig, registration.gvh, hookGVH, handlerName, timeout, httpClient}
	if err := c.httpCall(ctx, request, response, call); err != nil {
		if errors.As(err, new(callError)) && registration.failurePolicy == runtimev1.FailurePolicyIgnore {
			log.Error(err, fmt.Sprintf("Ignoring error calling extension handler because of FailurePolicy %q", registration.failurePolicy))
			response.SetStatus(runtimehooksv1.ResponseStatusSuccess)
			response.SetMessage("")
			return nil
		}
		log.Error(err, "Failed to call extension handler")
		return fmt.Errorf("failed to call extension handler %q: %w", name, err)
	}
	if err := validateResponseStatus(log, response, "call extension handler", name); err != nil {
		return err
	}
	if retry, ok := response.(runtimehooksv1.RetryResponseObject); ok && retry.GetRetryAfterSeconds() != 0 {
		log.V(4).Info(fmt.Sprintf("Extension handler returned blocking response with retryAfterSeconds of %d", retry.GetRetryAfterSeconds()))
	} else {
		log.V(4).Info("Extension handler returned success response")
	}
	if options.WithCaching {
		options.Cache.Add(runtimeclient.CallExtensionCacheEntry{CacheKey: cacheKey, Response: response})
	}
	return nil
}

// httpClient returns the client for the extension's host and CA bundle (client.go getHTTPClient
// and createHTTPClient): it trusts the CA bundle only (the system roots if it is empty), checks
// the certificate against the URL's host name, and presents the client certificate, if any.
func (c *RuntimeClient) httpClient(config runtimev1.ClientConfig) (*http.Client, error) {
	u, err := urlForExtension(config, runtimecatalog.GroupVersionHook{}, "")
	if err != nil {
		return nil, err
	}
	key := u.Hostname() + "/" + string(config.CABundle)
	c.lock.Lock()
	defer c.lock.Unlock()
	if httpClient, ok := c.httpClients[key]; ok {
		return httpClient, nil
	}
	tlsConfig, err := transport.TLSConfigFor(&transport.Config{TLS: transport.TLSConfig{CAData: config.CABundle, ServerName: u.Hostname(),
		CertFile: c.certFile, KeyFile: c.keyFile}})
	if err != nil {
		return nil, fmt.Errorf("failed to create tls config: %w", err)
	}
	httpClient := &http.Client{Transport: utilnet.SetTransportDefaults(&http.Transport{TLSClientConfig: tlsConfig})}
	c.httpClients[key] = httpClient
	return httpClient, nil
}

// extensionCall says where and how httpCall calls (client.go httpCallOptions).
type extensionCall struct {
	config                   runtimev1.ClientConfig
	registrationGVH, hookGVH runtimecatalog.GroupVersionHook
	name                     string
	timeout                  time.Duration
	httpClient               *http.Client
}

// httpCall POSTs request as JSON to the handler and decodes the answer into response (client.go
// httpCall). As upstream, the answer's apiVersion and kind are not checked.
func (c *RuntimeClient) httpCall(ctx context.Context, request, response runtime.Object, call extensionCall) error {
	u, err := urlForExtension(call.config, call.registrationGVH, call.name)
	if err != nil {
		return fmt.Errorf("http call failed: %w", err)
	}
	// Upstream converts request and response when the handler serves another version of the hook
	// than the caller's; the catalog has only v1alpha1, with which such a conversion cannot succeed.
	if call.registrationGVH.Version != call.hookGVH.Version {
		return fmt.Errorf("http call failed: handler serves %s, not %s, and hook versions are not converted", call.registrationGVH, call.hookGVH)
	}
	requestGVK, err := c.catalog.Request(call.registrationGVH)
	if err != nil {
		return fmt.Errorf("http call failed: %w", err)
	}
	request.GetObjectKind().SetGroupVersionKind(requestGVK)
	body, err := json.Marshal(request)
	if err != nil {
		return fmt.Errorf("http call failed: failed to marshal request object: %w", err)
	}
	if call.timeout != 0 {
		values := u.Query()
		values.Add("timeout", call.timeout.String())
		u.RawQuery = values.Encode()
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, call.timeout, errors.New("http request timeout expired"))
		defer cancel()
	}
	httpRequest, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("http call failed: failed to create http request: %w", err)
	}
	resp, err := call.httpClient.Do(httpRequest)
	if err != nil {
		return callError{fmt.Errorf("http call failed: %w", err)}
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		respBody, err := io.ReadAll(resp.Body)
		if err != nil {
			return callError{fmt.Errorf("http call failed: got response with status code %d != 200: failed to read response body: %w", resp.StatusCode, err)}
		}
		return callError{fmt.Errorf("http call failed: got response with status code %d != 200: response: %q", resp.StatusCode, string(respBody))}
	}
	if err := json.NewDecoder(resp.Body).Decode(response); err != nil {
		return callError{fmt.Errorf("http call failed: failed to decode response: %w", err)}
	}
	return nil
}

// urlForExtension is client.go urlForExtension: clientConfig.url (https only) or
// https://<service>.<namespace>.svc[:<port>]<path>, followed by the handler's path.
func urlForExtension(config runtimev1.ClientConfig, gvh runtimecatalog.GroupVersionHook, name string) (*url.URL, error) {
	var u *url.URL
	if config.Service.IsDefined() {
		host := config.Service.Name + "." + config.Service.Namespace + ".svc"
		if config.Service.Port != nil {
			host = net.JoinHostPort(host, strconv.Itoa(int(*config.Service.Port)))
		}
		u = &url.URL{Scheme: "https", Host: host, Path: config.Service.Path}
	} else {
		if config.URL == "" {
			return nil, errors.New("failed to compute URL: at least one of service and url should be defined in config")
		}
		var err error
		if u, err = url.Parse(config.URL); err != nil {
			return nil, fmt.Errorf("failed to compute URL: failed to parse url from clientConfig: %w", err)
		}
		if u.Scheme != "https" {
			return nil, fmt.Errorf("failed to compute URL: expected https scheme, got %s", u.Scheme)
		}
	}
	u.Path = path.Join(u.Path, runtimecatalog.GVHToPath(gvh, name))
	return u, nil
}

// defaultAndValidateDiscoveryResponse is client.go's: it defaults timeoutSeconds (10) and
// failurePolicy (Fail), then checks that handler names are unique DNS-1123 labels, timeouts are
// within 0..30s, failure policies Ignore or Fail, and every hook is in the catalog.
func defaultAndValidateDiscoveryResponse(catalog *runtimecatalog.Catalog, discovery *runtimehooksv1.DiscoveryResponse) error {
	var errs []error
	names := map[string]bool{}
	for i := range discovery.Handlers {
		h := &discovery.Handlers[i]
		if h.FailurePolicy == nil {
			h.FailurePolicy = ptr.To(runtimehooksv1.FailurePolicyFail)
		}
		if h.TimeoutSeconds == nil {
			h.TimeoutSeconds = ptr.To[int32](runtimehooksv1.DefaultHandlersTimeoutSeconds)
		}
		if names[h.Name] {
			errs = append(errs, fmt.Errorf("duplicate name for handler %s found", h.Name))
		}
		names[h.Name] = true
		if msgs := validation.IsDNS1123Label(h.Name); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("handler name %s is not valid: %s", h.Name, msgs))
		}
		if *h.TimeoutSeconds < 0 || *h.TimeoutSeconds > 30 {
			errs = append(errs, fmt.Errorf("handler %s timeoutSeconds %d must be between 0 and 30", h.Name, *h.TimeoutSeconds))
		}
		if *h.FailurePolicy != runtimehooksv1.FailurePolicyFail && *h.FailurePolicy != runtimehooksv1.FailurePolicyIgnore {
			errs = append(errs, fmt.Errorf("handler %s failurePolicy %s must equal \"Ignore\" or \"Fail\"", h.Name, *h.FailurePolicy))
		}
		gv, err := schema.ParseGroupVersion(h.RequestHook.APIVersion)
		if err != nil {
			errs = append(errs, fmt.Errorf("handler %s requestHook APIVersion %s is not valid: %w", h.Name, h.RequestHook.APIVersion, err))
		} else if !catalog.IsHookRegistered(runtimecatalog.GroupVersionHook{Group: gv.Group, Version: gv.Version, Hook: h.RequestHook.Hook}) {
			errs = append(errs, fmt.Errorf("handler %s requestHook %s/%s is not in the Runtime SDK catalog", h.Name, h.RequestHook.APIVersion, h.RequestHook.Hook))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("failed to validate discovery response: %w", kerrors.NewAggregate(errs))
	}
	return nil
}

// matchNamespace is client.go matchNamespace: an empty selector matches without a read, any other
// needs the Namespace (so it fails for cluster-scoped objects, whose namespace is "").
func (c *RuntimeClient) matchNamespace(ctx context.Context, selector labels.Selector, namespace string) (bool, error) {
	if selector.Empty() {
		return true, nil
	}
	ns := &metav1.PartialObjectMetadata{}
	ns.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "Namespace"})
	if err := c.reader.Get(ctx, client.ObjectKey{Name: namespace}, ns); err != nil {
		return false, fmt.Errorf("failed to match namespace: failed to get namespace %s: %w", namespace, err)
	}
	return selector.Matches(labels.Set(ns.GetLabels())), nil
}

// validateResponseStatus is client.go validateResponseStatus, except that a Failure's message is
// also put in the error (upstream only logs it, as it may change at each call).
func validateResponseStatus(log logr.Logger, response runtimehooksv1.ResponseObject, operation, target string) error {
	switch response.GetStatus() {
	case runtimehooksv1.ResponseStatusSuccess:
		return nil
	case runtimehooksv1.ResponseStatusFailure:
		log.Info(fmt.Sprintf("Failed to %s %q: got failure response with message %v", operation, target, response.GetMessage()))
		return fmt.Errorf("failed to %s %q: got failure response: %s", operation, target, response.GetMessage())
	default:
		log.Info(fmt.Sprintf("Failed to %s %q: got unknown response status %q with message %v", operation, target, response.GetStatus(), response.GetMessage()))
		return fmt.Errorf("failed to %s %q: got unknown response status %q", operation, target, response.GetStatus())
	}
}
