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

package controllers

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/blang/semver/v4"
	configv1 "github.com/openshift/api/config/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/cluster-api/controllers/clustercache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/controlplane/internal/release"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/controlplane/internal/upgradepath"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/metrics"
)

// clusterVersionName is the name of the workload cluster's only ClusterVersion.
const clusterVersionName = "version"

// newClusterVersion returns an empty ClusterVersion. It is handled as unstructured, so that the
// manager's scheme needs no OpenShift API.
func newClusterVersion() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(configv1.GroupVersion.WithKind("ClusterVersion"))
	return u
}

// upgradeState is what the upgrade step observed.
type upgradeState struct {
	// inProgress is true while the workload cluster moves to spec.distributionVersion.
	inProgress bool
	// refused explains why spec.distributionVersion cannot be reached.
	refused string
	// from and to are the versions of the upgrade in progress.
	from, to string
	// progress is the ClusterVersion's Progressing message.
	progress string
	// notAccepted says why the cluster-version operator does not take the update.
	notAccepted string
}

// desiredUpdate is the ClusterVersion desiredUpdate for a release. A GA release that the
// cluster's update service offers (it is in status.availableUpdates) is asked by version: the
// cluster-version operator takes the graph's image, and the update service vouches for the edge.
// Anything else (a disconnected cluster, which reaches no update service; release candidates,
// nightlies) is asked by the release image pinned by digest, with its version: the operator
// verifies the digest's signature (from the signature stores it reaches, or the signature
// ConfigMaps oc-mirror writes) and refuses it otherwise, as it refuses a version-only request
// that is not an available update (openshift/cluster-version-operator lib/validation).
func desiredUpdate(version, digestImage string, available []configv1.Release) (*configv1.Update, error) {
	v, err := semver.ParseTolerant(version)
	if err != nil {
		return nil, fmt.Errorf("distributionVersion %q is not a version: %w", version, err)
	}
	if len(v.Pre) == 0 {
		for _, a := range available {
			if a.Version == v.String() {
				return &configv1.Update{Version: v.String()}, nil
			}
		}
	}
	if digestImage == "" {
		return nil, fmt.Errorf("the release image of %s is not resolved yet (and the cluster's update service does not offer it)", version)
	}
	return &configv1.Update{Version: v.String(), Image: digestImage}, nil
}

// notAccepted says why the cluster-version operator does not take the update it was asked,
// with what to do, from its conditions (pkg/cvo/status.go: Invalid, ReleaseAccepted); "" when
// nothing says it refuses, or when its status predates the request.
func notAccepted(cv *configv1.ClusterVersion, want *configv1.Update) string {
	u := cv.Spec.DesiredUpdate
	if u == nil || u.Version != want.Version || u.Image != want.Image || cv.Status.ObservedGeneration < cv.Generation {
		return ""
	}
	for _, c := range cv.Status.Conditions {
		switch {
		case c.Type == "Invalid" && c.Status == configv1.ConditionTrue:
			return "the cluster-version operator finds the update invalid: " + c.Message +
				" (the cluster's update service does not offer it: check the cluster's channel and upstream, or its connection to them)"
		case c.Type == "ReleaseAccepted" && c.Status == configv1.ConditionFalse:
			msg := "the cluster-version operator does not accept the release: " + c.Message
			if strings.Contains(c.Message, "cannot be verified") {
				msg += " (the cluster holds no signature of this release: apply the release's signature ConfigMap, which oc-mirror writes, " +
					"to the cluster's openshift-config-managed namespace, or let the cluster reach its signature stores)"
			}
			return msg
		}
	}
	return ""
}

// runningVersion is the version a ClusterVersion's history says the cluster runs: the newest
// entry (the history is newest first) whose state is Completed. During an upgrade that is the
// version upgraded from; while the first installation is still Partial there is none ("").
func runningVersion(history []configv1.UpdateHistory) string {
	for _, h := range history {
		if h.State == configv1.CompletedUpdate {
			return h.Version
		}
	}
	return ""
}

// workloadClusterVersion is the workload cluster's ClusterVersion, typed and as read (to patch it),
// and the client it was read with.
type workloadClusterVersion struct {
	cv     *configv1.ClusterVersion
	raw    *unstructured.Unstructured
	client client.Client
}

// readClusterVersion reads the workload cluster's ClusterVersion, and watches it so that its
// changes reconcile the control plane. When it cannot be read yet it returns nil and why.
func (r *OpenshiftAssistedControlPlaneReconciler) readClusterVersion(ctx context.Context, s *scope) (*workloadClusterVersion, string, error) {
	const notConnected = "waiting for a connection to the workload cluster"
	c, err := r.ClusterCache.GetClient(ctx, client.ObjectKeyFromObject(s.cluster))
	if err != nil {
		ctrl.LoggerFrom(ctx).Info("Cannot reach the workload cluster yet", "error", err.Error())
		return nil, notConnected, nil
	}
	// Follow the ClusterVersion's changes rather than polling it.
	if err := r.ClusterCache.Watch(ctx, client.ObjectKeyFromObject(s.cluster), clustercache.NewWatcher(clustercache.WatcherOptions{
		Name:    "openshiftassistedcontrolplane-watchClusterVersion",
		Watcher: r.controller,
		Kind:    newClusterVersion(),
		EventHandler: handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
			return []reconcile.Request{{NamespacedName: client.ObjectKeyFromObject(s.oacp)}}
		}),
	})); err != nil {
		if errors.Is(err, clustercache.ErrClusterNotConnected) {
			return nil, notConnected, nil
		}
		return nil, "", fmt.Errorf("watching the workload cluster's ClusterVersion: %w", err)
	}
	u := newClusterVersion()
	if err := c.Get(ctx, client.ObjectKey{Name: clusterVersionName}, u); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, "the workload cluster has no ClusterVersion yet", nil
		}
		return nil, "", fmt.Errorf("getting the workload cluster's ClusterVersion: %w", err)
	}
	cv := &configv1.ClusterVersion{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, cv); err != nil {
		return nil, "", fmt.Errorf("reading the workload cluster's ClusterVersion: %w", err)
	}
	return &workloadClusterVersion{cv: cv, raw: u, client: c}, "", nil
}

// reconcileUpgrade reads the version the installed cluster runs from its ClusterVersion into
// status.distributionVersion (the only place it comes from: never from spec), then moves the
// cluster to spec.distributionVersion through the ClusterVersion, and reports the progress.
func (r *OpenshiftAssistedControlPlaneReconciler) reconcileUpgrade(ctx context.Context, s *scope) error {
	oacp := s.oacp
	w, waiting, err := r.readClusterVersion(ctx, s)
	if err != nil {
		return err
	}
	if w != nil {
		if running := runningVersion(w.cv.Status.History); running != "" {
			previous := oacp.Status.DistributionVersion
			oacp.Status.DistributionVersion = running
			if previous != "" && previous != running {
				r.Recorder.Eventf(oacp, nil, corev1.EventTypeNormal, "Upgraded", "Upgrade", "The cluster runs OpenShift %s (was %s)", running, previous)
			}
		} else {
			waiting = "the workload cluster's ClusterVersion reports no completed installation yet"
		}
	}
	// The version alone: a distributionVersion may end with its release's architecture.
	current, target := oacp.Status.DistributionVersion, release.Version(oacp.Spec.DistributionVersion)
	if current == "" {
		// What runs is not known (yet): nothing is asked of the cluster until it is.
		ctrl.LoggerFrom(ctx).V(1).Info("The running OpenShift version is not known yet", "reason", waiting)
		return nil
	}
	if current == target {
		return nil
	}
	why := upgradepath.Check(current, target)
	if mismatch := (*versionMismatchError)(nil); why == "" && errors.As(s.releaseErr, &mismatch) {
		why = fmt.Sprintf("%s: set spec.version to the Kubernetes version of OpenShift %s, or leave it unset", mismatch, target)
	}
	if why != "" {
		if s.upgrade.refused == "" && !isUpgradingReported(oacp, controlplanev1.UpgradeRefusedReason, why) {
			r.Recorder.Eventf(oacp, nil, corev1.EventTypeWarning, "UpgradeRefused", "Upgrade", why)
		}
		s.upgrade.refused = why
		return nil
	}
	s.upgrade = upgradeState{inProgress: true, from: current, to: target}
	if w == nil {
		s.upgrade.progress = waiting
		return nil
	}
	cv := w.cv

	want, err := desiredUpdate(target, s.specRelease.DigestImage, cv.Status.AvailableUpdates)
	if err != nil {
		s.upgrade.progress = err.Error()
		return nil //nolint:nilerr // not ready to upgrade yet: reported in the Upgrading condition, retried with the release
	}
	if cv.Spec.DesiredUpdate == nil || cv.Spec.DesiredUpdate.Version != want.Version || cv.Spec.DesiredUpdate.Image != want.Image {
		u := w.raw
		before := u.DeepCopy()
		if err := unstructured.SetNestedField(u.Object, map[string]any{"version": want.Version}, "spec", "desiredUpdate"); err != nil {
			return fmt.Errorf("setting desiredUpdate: %w", err)
		}
		if want.Image != "" {
			_ = unstructured.SetNestedField(u.Object, want.Image, "spec", "desiredUpdate", "image")
		}
		if err := w.client.Patch(ctx, u, client.MergeFrom(before)); err != nil {
			return fmt.Errorf("setting the workload cluster's ClusterVersion desiredUpdate: %w", err)
		}
		metrics.Upgrades.Inc()
		ctrl.LoggerFrom(ctx).Info("Requested an OpenShift upgrade", "from", current, "to", target)
		r.Recorder.Eventf(oacp, nil, corev1.EventTypeNormal, "UpgradeStarted", "Upgrade", "Requested the upgrade from OpenShift %s to %s", current, target)
	}
	if why := notAccepted(cv, want); why != "" {
		if !isUpgradingReported(oacp, controlplanev1.UpgradeNotAcceptedReason, notAcceptedMessage(current, target, why)) {
			r.Recorder.Eventf(oacp, nil, corev1.EventTypeWarning, controlplanev1.UpgradeNotAcceptedReason, "Upgrade", why)
		}
		s.upgrade.notAccepted = why
		return nil
	}
	for _, cond := range cv.Status.Conditions {
		if cond.Type == configv1.OperatorProgressing && cond.Message != "" {
			s.upgrade.progress = cond.Message
		}
	}
	if s.upgrade.progress == "" && len(cv.Status.History) > 0 {
		h := cv.Status.History[0]
		s.upgrade.progress = fmt.Sprintf("ClusterVersion history: %s is %s", h.Version, h.State)
	}
	return nil
}
