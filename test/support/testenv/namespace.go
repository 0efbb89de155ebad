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
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

// DeleteNamespace deletes the namespace ns as `kubectl delete namespace` does on a real cluster,
// and waits until it is gone or timeout passes. envtest runs no kube-controller-manager, so this
// plays its namespace controller (pkg/controller/namespace/deletion/namespaced_resources_deleter.go):
// the namespace turns Terminating (no object can be created in it any more), every namespaced
// resource that can be listed and deleted is deleted with a collection delete, again and again
// while objects remain (those with finalizers stay until their controllers remove them), and
// only then is the namespace's "kubernetes" finalizer removed. On timeout it says which objects
// are left and with which finalizers: what a user would see stuck in a Terminating namespace.
func (e *Environment) DeleteNamespace(ctx context.Context, ns string, timeout time.Duration) error {
	cs, err := kubernetes.NewForConfig(e.Config)
	if err != nil {
		return fmt.Errorf("creating a clientset: %w", err)
	}
	dyn, err := dynamic.NewForConfig(e.Config)
	if err != nil {
		return fmt.Errorf("creating a dynamic client: %w", err)
	}
	if err := cs.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("deleting namespace %s: %w", ns, err)
	}
	resources, err := deletableResources(cs.Discovery())
	if err != nil {
		return err
	}
	deadline := time.Now().Add(timeout)
	for {
		left, err := deleteContents(ctx, dyn, resources, ns)
		if err != nil {
			return err
		}
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("namespace %s still Terminating after %s: %s", ns, timeout, strings.Join(left, "; "))
		}
		time.Sleep(200 * time.Millisecond)
	}
	// Finalize: remove the namespace controller's own finalizer.
	got, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("getting namespace %s: %w", ns, err)
	}
	got.Spec.Finalizers = slices.DeleteFunc(got.Spec.Finalizers, func(f corev1.FinalizerName) bool { return f == corev1.FinalizerKubernetes })
	if _, err := cs.CoreV1().Namespaces().Finalize(ctx, got, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("finalizing namespace %s: %w", ns, err)
	}
	return nil
}

// deletableResources lists the namespaced resources that support list and deletecollection.
func deletableResources(d discovery.DiscoveryInterface) ([]schema.GroupVersionResource, error) {
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
			if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") || !slices.Contains(r.Verbs, "deletecollection") {
				continue
			}
			out = append(out, gv.WithResource(r.Name))
		}
	}
	return out, nil
}

// deleteContents deletes every object of the resources in ns and returns those still there.
func deleteContents(ctx context.Context, dyn dynamic.Interface, resources []schema.GroupVersionResource, ns string) ([]string, error) {
	var left []string
	var errs []error
	for _, gvr := range resources {
		ri := dyn.Resource(gvr).Namespace(ns)
		if err := ri.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("deleting the %s of namespace %s: %w", gvr.Resource, ns, err))
			continue
		}
		list, err := ri.List(ctx, metav1.ListOptions{})
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
