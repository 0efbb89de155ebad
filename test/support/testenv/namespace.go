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
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DeleteNamespace deletes the namespace ns as `kubectl delete namespace` does, and waits until it
// is gone or timeout passes. envtest runs no kube-controller-manager: the first call starts one
// for the environment with its namespace controller only (StartControllerManager; Stop stops
// it), which turns the namespace Terminating, deletes everything in it and then removes the
// namespace's "kubernetes" finalizer, as on a real cluster (objects with finalizers stay until
// their controllers remove them). On timeout it says which objects are left and with which
// finalizers: what a user would see stuck in a Terminating namespace.
func (e *Environment) DeleteNamespace(ctx context.Context, ns string, timeout time.Duration) error {
	kcm, err := e.namespaceController()
	if err != nil {
		return err
	}
	if err := e.Client.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("deleting namespace %s: %w", ns, err)
	}
	deadline := time.Now().Add(timeout)
	for {
		err := e.Client.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("getting namespace %s: %w", ns, err)
		}
		if err := kcm.Running(); err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return e.stuckNamespace(ctx, ns, timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// namespaceController starts the environment's kube-controller-manager with its namespace
// controller, once.
func (e *Environment) namespaceController() (*ControllerManager, error) {
	e.nsMu.Lock()
	defer e.nsMu.Unlock()
	if e.nsController != nil {
		return e.nsController, nil
	}
	kcm, err := e.StartControllerManager(context.Background(), io.Discard, "namespace")
	if err != nil {
		return nil, err
	}
	e.nsController = kcm
	return kcm, nil
}

// stuckNamespace is the error of a namespace still Terminating after timeout: the objects left in
// it and their finalizers.
func (e *Environment) stuckNamespace(ctx context.Context, ns string, timeout time.Duration) error {
	d, err := discovery.NewDiscoveryClientForConfig(e.Config)
	if err != nil {
		return fmt.Errorf("creating a discovery client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(e.Config)
	if err != nil {
		return fmt.Errorf("creating a dynamic client: %w", err)
	}
	resources, err := listableResources(d)
	if err != nil {
		return err
	}
	left, err := contents(ctx, dyn, resources, ns)
	return errors.Join(fmt.Errorf("namespace %s still Terminating after %s: %s", ns, timeout, strings.Join(left, "; ")), err)
}

// listableResources lists the namespaced resources that support list.
func listableResources(d discovery.DiscoveryInterface) ([]schema.GroupVersionResource, error) {
	lists, err := d.ServerPreferredNamespacedResources()
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		return nil, fmt.Errorf("discovering namespaced resources: %w", err)
	}
	var out []schema.GroupVersionResource
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") {
				continue
			}
			out = append(out, gv.WithResource(r.Name))
		}
	}
	return out, nil
}

// contents lists the objects of the resources in ns, with their finalizers.
func contents(ctx context.Context, dyn dynamic.Interface, resources []schema.GroupVersionResource, ns string) ([]string, error) {
	var left []string
	var errs []error
	for _, gvr := range resources {
		list, err := dyn.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			if !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("listing the %s of namespace %s: %w", gvr.Resource, ns, err))
			}
			continue
		}
		for _, o := range list.Items {
			left = append(left, fmt.Sprintf("%s %s (finalizers %v)", o.GetKind(), o.GetName(), o.GetFinalizers()))
		}
	}
	return left, errors.Join(errs...)
}
