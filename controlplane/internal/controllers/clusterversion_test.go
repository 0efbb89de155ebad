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

package controllers_test

import (
	"context"

	. "github.com/onsi/gomega"
	configv1 "github.com/openshift/api/config/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The workload cluster's ClusterVersion is handled as unstructured: the test scheme, like the
// provider's, does not register OpenShift's config API.

func toUnstructured(cv *configv1.ClusterVersion) (*unstructured.Unstructured, error) {
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(cv)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: obj}
	u.SetGroupVersionKind(configv1.GroupVersion.WithKind("ClusterVersion"))
	return u, nil
}

func history(versions ...string) []configv1.UpdateHistory {
	h := []configv1.UpdateHistory{}
	for _, v := range versions {
		h = append(h, configv1.UpdateHistory{State: configv1.CompletedUpdate, Version: v, Image: "quay.io/ocp@sha256:" + v,
			StartedTime: metav1.Now(), CompletionTime: ptrTime(metav1.Now()), Verified: true})
	}
	return h
}

func ptrTime(t metav1.Time) *metav1.Time { return &t }

// createClusterVersion creates the workload cluster's ClusterVersion, as the installer leaves it.
func createClusterVersion(ctx context.Context, version string) error {
	cv := &configv1.ClusterVersion{ObjectMeta: metav1.ObjectMeta{Name: "version"},
		Spec: configv1.ClusterVersionSpec{ClusterID: "9b1e9e1c-0000-4000-8000-000000000001", Channel: "stable-4.18"}}
	u, err := toUnstructured(cv)
	if err != nil {
		return err
	}
	if err := workload.Client.Create(ctx, u); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return setClusterVersionStatus(ctx, version, history(version))
}

func setClusterVersionStatus(ctx context.Context, desired string, h []configv1.UpdateHistory) error {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(configv1.GroupVersion.WithKind("ClusterVersion"))
	if err := workload.Client.Get(ctx, client.ObjectKey{Name: "version"}, u); err != nil {
		return err
	}
	cv := &configv1.ClusterVersion{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, cv); err != nil {
		return err
	}
	cv.Status = configv1.ClusterVersionStatus{
		Desired: configv1.Release{Version: desired, Image: "quay.io/ocp@sha256:" + desired}, History: h,
		ObservedGeneration: cv.Generation, VersionHash: "hash-" + desired,
		Conditions: []configv1.ClusterOperatorStatusCondition{{Type: configv1.OperatorProgressing, Status: configv1.ConditionFalse,
			LastTransitionTime: metav1.Now(), Message: "Cluster version is " + desired}},
	}
	nu, err := toUnstructured(cv)
	if err != nil {
		return err
	}
	return workload.Client.Status().Update(ctx, nu)
}

// completeUpdate plays the cluster-version operator finishing an update to version.
func completeUpdate(ctx context.Context, version, from string) error {
	return setClusterVersionStatus(ctx, version, history(version, from))
}

func getClusterVersion(ctx context.Context, g Gomega) *configv1.ClusterVersion {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(configv1.GroupVersion.WithKind("ClusterVersion"))
	g.Expect(workload.Client.Get(ctx, client.ObjectKey{Name: "version"}, u)).To(Succeed())
	cv := &configv1.ClusterVersion{}
	g.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, cv)).To(Succeed())
	return cv
}
