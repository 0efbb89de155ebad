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

// Package cvo is a stand-in for OpenShift's cluster-version operator in the workload cluster: it
// keeps the ClusterVersion "version" (config.openshift.io/v1) and, when spec.desiredUpdate asks for
// another release, moves status.desired to it and records the update in status.history as
// Partial, then Completed, with the Available, Progressing and Failing conditions the real
// operator sets. InstallCRD installs OpenShift's ClusterVersion CRD (kept in crds/, copied from the
// pinned github.com/openshift/api module) in the workload API server.
package cvo

import (
	"context"
	_ "embed" // the CRD
	"fmt"
	"strings"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/yaml"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/internal/steps"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/sim/release"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/testenv"
)

// ClusterVersionName is the name of the one ClusterVersion of a cluster.
const ClusterVersionName = "version"

// ReleaseRepository is where release images are taken from when only a version is given.
const ReleaseRepository = "quay.io/openshift-release-dev/ocp-release"

// Condition types the cluster-version operator sets besides the configv1 ones.
const (
	// Failing is ClusterVersion's condition for an update that cannot proceed.
	Failing configv1.ClusterStatusConditionType = "Failing"
)

// CRDFile is the ClusterVersion CRD, relative to the repository root: OpenShift's own manifest,
// copied from the pinned github.com/openshift/api module by `make manifests`.
const CRDFile = "test/support/sim/cvo/crds/config.openshift.io_clusterversions.yaml"

//go:embed crds/config.openshift.io_clusterversions.yaml
var crdYAML []byte

// CRD returns the ClusterVersion CRD (embedded in the binary).
func CRD() (*apiextensionsv1.CustomResourceDefinition, error) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(crdYAML, crd); err != nil {
		return nil, fmt.Errorf("reading the ClusterVersion CRD: %w", err)
	}
	return crd, nil
}

// InstallCRD creates the ClusterVersion CRD in the API server cfg reaches (the workload cluster),
// unless it exists, and waits until it is established.
func InstallCRD(ctx context.Context, cfg *rest.Config) error {
	crd, err := CRD()
	if err != nil {
		return err
	}
	s := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(s); err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		return fmt.Errorf("creating a client: %w", err)
	}
	return testenv.InstallCRD(ctx, c, crd)
}

// Durations are how long the operator takes.
type Durations struct {
	// Update: an update from Partial to Completed.
	Update time.Duration
	// NodeUpdate: the machine-config operator's update of one node (drain, new config, reboot).
	NodeUpdate time.Duration
}

// FastDurations are the defaults for tests. A node's update is long enough that a worker's
// in-place update in Cluster API, which starts once the update completes, meets its node still at
// the former version, as on a real cluster, where the worker pool updates after the masters.
func FastDurations() Durations {
	return Durations{Update: 200 * time.Millisecond, NodeUpdate: 4 * time.Second}
}

// RealisticDurations are in the order of a real update's.
func RealisticDurations() Durations {
	return Durations{Update: 10 * time.Minute, NodeUpdate: 8 * time.Minute}
}

// Release returns the release of a version or of a release image pull spec: either may be empty
// (the version of an image pinned by digest is in its payload: release.ReadPayload).
func Release(version, image string) configv1.Release {
	if version == "" {
		version = release.TagVersion(image)
	}
	if image == "" && version != "" {
		image = fmt.Sprintf("%s:%s-x86_64", ReleaseRepository, version)
	}
	return configv1.Release{Version: version, Image: image}
}

// EnsureClusterVersion leaves the cluster's ClusterVersion as an installation completed at release r
// leaves it: created if missing, and its history's first entry Completed at r. As the real
// operator does (openshift/cluster-version-operator pkg/cvo/status.go, mergeOperatorHistory): the
// installation starts the history with one Partial entry (the install payload, not verified), which
// turns Completed in place, with a completion time, once the payload is applied; an existing
// history that says more than that is left alone. The assisted-service simulator's
// OnClusterInstalled calls it: assisted-service reports a cluster installed only once the
// cluster-version operator reports it Available, so nobody outside sees the Partial entry in the lab.
//
// upstream is the update service the installer configures ("": the default, which a disconnected
// cluster cannot reach).
func EnsureClusterVersion(ctx context.Context, c client.Client, r configv1.Release, upstream string) error {
	cv := &configv1.ClusterVersion{ObjectMeta: metav1.ObjectMeta{Name: ClusterVersionName}}
	err := c.Get(ctx, client.ObjectKeyFromObject(cv), cv)
	switch {
	case apierrors.IsNotFound(err):
		cv.Spec = configv1.ClusterVersionSpec{ClusterID: configv1.ClusterID(uuid.NewUUID()), Channel: channel(r.Version),
			Upstream: configv1.URL(upstream)}
		if err := c.Create(ctx, cv); err != nil {
			return fmt.Errorf("creating the ClusterVersion: %w", err)
		}
	case err != nil:
		return fmt.Errorf("reading the ClusterVersion: %w", err)
	}
	now := metav1.Now()
	if h := cv.Status.History; len(h) > 1 || len(h) == 1 && (h[0].State != configv1.PartialUpdate || h[0].Image != r.Image) {
		return nil
	}
	installing := StartInstall(cv, r, now)
	installing.State = configv1.CompletedUpdate
	installing.CompletionTime = &now
	setConditions(cv, r, false, now)
	if err := c.Status().Update(ctx, cv); err != nil {
		return fmt.Errorf("writing the ClusterVersion's status: %w", err)
	}
	return nil
}

// StartInstall writes, in cv's status, what the cluster-version operator writes when an
// installation at release r starts (unless its history already has it): the desired release and a
// history of one Partial entry, not verified, Progressing True. It returns that history entry.
func StartInstall(cv *configv1.ClusterVersion, r configv1.Release, now metav1.Time) *configv1.UpdateHistory {
	if len(cv.Status.History) == 0 {
		cv.Status.History = []configv1.UpdateHistory{{State: configv1.PartialUpdate, StartedTime: now,
			Version: r.Version, Image: r.Image, Verified: false}}
	}
	cv.Status.Desired = r
	cv.Status.ObservedGeneration = cv.Generation
	cv.Status.VersionHash = hash(r)
	setConditions(cv, r, true, now)
	return &cv.Status.History[0]
}

func channel(version string) string {
	parts := strings.SplitN(version, ".", 3)
	if len(parts) < 2 {
		return ""
	}
	return "stable-" + parts[0] + "." + parts[1]
}

func hash(r configv1.Release) string {
	h := uint32(2166136261)
	for _, c := range r.Image {
		h = (h ^ uint32(c)) * 16777619
	}
	return fmt.Sprintf("%08x", h)
}

// setCondition sets a condition of cv's status.
func setCondition(cv *configv1.ClusterVersion, t configv1.ClusterStatusConditionType, s configv1.ConditionStatus, reason, msg string, now metav1.Time) {
	for i := range cv.Status.Conditions {
		c := &cv.Status.Conditions[i]
		if c.Type == t {
			if c.Status != s {
				c.LastTransitionTime = now
			}
			c.Status, c.Reason, c.Message = s, reason, msg
			return
		}
	}
	cv.Status.Conditions = append(cv.Status.Conditions, configv1.ClusterOperatorStatusCondition{
		Type: t, Status: s, Reason: reason, Message: msg, LastTransitionTime: now})
}

func setConditions(cv *configv1.ClusterVersion, r configv1.Release, progressing bool, now metav1.Time) {
	set := func(t configv1.ClusterStatusConditionType, s configv1.ConditionStatus, reason, msg string) {
		setCondition(cv, t, s, reason, msg, now)
	}
	if v := completedVersion(cv); v != "" {
		set(configv1.OperatorAvailable, configv1.ConditionTrue, "", "Done applying "+v)
	} else {
		set(configv1.OperatorAvailable, configv1.ConditionFalse, "", "") // still installing
	}
	set(Failing, configv1.ConditionFalse, "", "")
	if progressing {
		set(configv1.OperatorProgressing, configv1.ConditionTrue, "", "Working towards "+r.Version)
	} else {
		set(configv1.OperatorProgressing, configv1.ConditionFalse, "", "Cluster version is "+r.Version)
	}
}

// completedVersion is the version of the newest Completed update; "" while the installation is
// Partial.
func completedVersion(cv *configv1.ClusterVersion) string {
	for _, h := range cv.Status.History {
		if h.State == configv1.CompletedUpdate {
			return h.Version
		}
	}
	return ""
}

// UpdateService answers the cluster-version operator's graph requests (openshift/cluster-version-
// operator pkg/cincinnati): the releases offered to a cluster of version current in channel, by the
// update service at upstream ("" is the default, https://api.openshift.com/api/upgrades_info/v1/graph).
// An error is an update service that cannot be reached, as from a disconnected cluster.
type UpdateService func(ctx context.Context, upstream, channel, current string) ([]configv1.Release, error)

// SignatureStore tells whether the signature stores a cluster reaches (mirror.openshift.com, for
// a cluster that reaches upstream) hold a signature of the release digest that the cluster trusts.
type SignatureStore func(ctx context.Context, upstream, digest string) bool

// Labels and namespace of the signature ConfigMaps a disconnected cluster verifies releases with
// (library-go pkg/verify/store/configmap: binaryData keys "<algorithm>-<hex>-<n>"), as oc-mirror
// writes them.
const (
	SignatureNamespace = "openshift-config-managed"
	SignatureLabel     = "release.openshift.io/verification-signatures"
)

// Condition types and reasons of an update the operator does not accept (pkg/cvo/status.go,
// pkg/cvo/updatepayload.go).
const (
	Invalid                configv1.ClusterStatusConditionType = "Invalid"
	ReleaseAccepted        configv1.ClusterStatusConditionType = "ReleaseAccepted"
	InvalidClusterVersion                                      = "InvalidClusterVersion"
	RetrievePayload                                            = "RetrievePayload"
	PayloadLoaded                                              = "PayloadLoaded"
	VersionNotInUpdatesMsg                                     = "when image is empty the update must be an available update"
	NotByDigestMsg                                             = "release images that are not accessed via digest cannot be verified"
)

// Reconciler simulates the cluster-version operator. Register it with a manager of the workload
// cluster.
//
// As the real operator: a desiredUpdate by version only must be one of status.availableUpdates
// (or of the history), which only an update service the cluster reaches fills (Invalid=True,
// InvalidClusterVersion, otherwise: lib/validation ValidateClusterVersion); a desiredUpdate by
// image must name it by digest and the digest must carry a signature the cluster trusts, from the
// signature stores it reaches or from signature ConfigMaps (ReleaseAccepted=False, RetrievePayload,
// "The update cannot be verified", otherwise: pkg/cvo/updatepayload.go), unless force is set.
type Reconciler struct {
	Client    client.Client
	Durations Durations
	Clock     clock.PassiveClock
	// Updates is the update service (nil: none is reachable).
	Updates UpdateService
	// Signatures are the signature stores (nil: none is reachable).
	Signatures SignatureStore
	// KubernetesVersion reads the Kubernetes version of a release image. With it the simulator
	// also plays the machine-config operator's node updates (updateNodes): the master pool's
	// nodes before the update completes, the worker pool's after (the cluster-version operator
	// does not wait for worker pools). Nil: Nodes are left alone.
	KubernetesVersion func(ctx context.Context, image string) (string, error)

	timer *steps.Timer
}

// SetupWithManager registers the simulator with mgr, a manager of the workload cluster.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, opts controller.Options) error {
	if r.Client == nil {
		r.Client = mgr.GetClient()
	}
	if r.Durations == (Durations{}) {
		r.Durations = FastDurations()
	}
	r.timer = steps.NewTimer(r.Clock)
	return ctrl.NewControllerManagedBy(mgr).Named("sim-clusterversion").
		For(&configv1.ClusterVersion{}).WithOptions(opts).Complete(r)
}

// Reconcile starts or completes the update spec.desiredUpdate asks for.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cv := &configv1.ClusterVersion{}
	if err := r.Client.Get(ctx, req.NamespacedName, cv); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if req.Name != ClusterVersionName {
		return ctrl.Result{}, nil
	}
	if len(cv.Status.History) == 0 {
		return ctrl.Result{}, nil // Not installed yet: EnsureClusterVersion writes the first status.
	}
	before := cv.DeepCopy()
	now := metav1.NewTime(r.now())
	cv.Status.ObservedGeneration = cv.Generation
	r.retrieveUpdates(ctx, cv, now)
	target := cv.Status.Desired
	if u := cv.Spec.DesiredUpdate; u != nil && (u.Version != "" || u.Image != "") {
		accepted, err := r.accept(ctx, cv, *u, now)
		if err != nil {
			return ctrl.Result{}, err
		}
		if !accepted {
			return r.writeStatus(ctx, before, cv, ctrl.Result{RequeueAfter: time.Second})
		}
		target = Release(u.Version, u.Image)
		if u.Image == "" {
			target = findRelease(cv, u.Version)
		}
	}
	var current *configv1.UpdateHistory
	if len(cv.Status.History) > 0 {
		current = &cv.Status.History[0]
	}
	result := ctrl.Result{}
	switch {
	case target.Version == "" && target.Image == "":
	case current == nil || current.Image != target.Image:
		// A new update starts: the previous one, if still partial, is superseded.
		cv.Status.Desired = target
		cv.Status.VersionHash = hash(target)
		if current != nil && current.CompletionTime == nil {
			// As mergeOperatorHistory: a superseded update keeps its state and gets a completion time.
			current.CompletionTime = &now
		}
		cv.Status.History = append([]configv1.UpdateHistory{{State: configv1.PartialUpdate, StartedTime: now,
			Version: target.Version, Image: target.Image, Verified: false}}, cv.Status.History...)
		r.timer.Forget(cv.UID)
		setConditions(cv, target, true, now)
		ctrl.LoggerFrom(ctx).Info("Cluster update started", "version", target.Version)
	case current.State == configv1.PartialUpdate:
		if w := r.timer.Remaining(cv.UID, current.Image, r.Durations.Update); w > 0 {
			result.RequeueAfter = w
			break
		}
		// The machine-config operator reports its new version once the master pool runs it.
		w, err := r.nodes(ctx, cv, true)
		if err != nil {
			return ctrl.Result{}, err
		}
		if w > 0 {
			result.RequeueAfter = w
			break
		}
		current.State = configv1.CompletedUpdate
		current.CompletionTime = &now
		setConditions(cv, target, false, now)
		ctrl.LoggerFrom(ctx).Info("Cluster update completed", "version", target.Version)
	}
	if len(cv.Status.History) > 0 && cv.Status.History[0].State == configv1.CompletedUpdate {
		w, err := r.nodes(ctx, cv, false)
		if err != nil {
			return ctrl.Result{}, err
		}
		if w > 0 && (result.RequeueAfter == 0 || w < result.RequeueAfter) {
			result.RequeueAfter = w
		}
	}
	return r.writeStatus(ctx, before, cv, result)
}

// nodes updates the nodes of the master or the worker pool to the Kubernetes version of the
// update in progress or last completed (see updateNodes), and returns how long to wait before
// looking again (0: the pool is done). An installation (a history of one entry) has nothing to
// update: its nodes joined at the release's version.
func (r *Reconciler) nodes(ctx context.Context, cv *configv1.ClusterVersion, masters bool) (time.Duration, error) {
	if r.KubernetesVersion == nil || len(cv.Status.History) < 2 {
		return 0, nil
	}
	image := cv.Status.History[0].Image
	kube, err := r.KubernetesVersion(ctx, image)
	if err != nil {
		return 0, fmt.Errorf("reading the Kubernetes version of release %s: %w", image, err)
	}
	return r.updateNodes(ctx, masters, kube)
}

// writeStatus writes cv's status when it changed from before's.
func (r *Reconciler) writeStatus(ctx context.Context, before, cv *configv1.ClusterVersion, result ctrl.Result) (ctrl.Result, error) {
	if apiequality.Semantic.DeepEqual(before.Status, cv.Status) {
		return result, nil
	}
	if err := r.Client.Status().Update(ctx, cv); err != nil {
		return ctrl.Result{}, fmt.Errorf("updating the ClusterVersion's status: %w", err)
	}
	return result, nil
}

// retrieveUpdates fills status.availableUpdates from the update service, and RetrievedUpdates
// (pkg/cvo/availableupdates.go).
func (r *Reconciler) retrieveUpdates(ctx context.Context, cv *configv1.ClusterVersion, now metav1.Time) {
	current := completedVersion(cv)
	cv.Status.AvailableUpdates = nil
	switch {
	case cv.Spec.Channel == "" || current == "":
		setCondition(cv, configv1.RetrievedUpdates, configv1.ConditionFalse, "NoChannel", "The update channel has not been configured.", now)
	case r.Updates == nil:
		setCondition(cv, configv1.RetrievedUpdates, configv1.ConditionFalse, "RemoteFailed",
			"Unable to retrieve available updates: no update service answers", now)
	default:
		updates, err := r.Updates(ctx, string(cv.Spec.Upstream), cv.Spec.Channel, current)
		if err != nil {
			setCondition(cv, configv1.RetrievedUpdates, configv1.ConditionFalse, "RemoteFailed", "Unable to retrieve available updates: "+err.Error(), now)
			return
		}
		cv.Status.AvailableUpdates = updates
		setCondition(cv, configv1.RetrievedUpdates, configv1.ConditionTrue, "", "", now)
	}
}

// findRelease is the release of version among the available updates, then the history (the
// zero Release when neither has it).
func findRelease(cv *configv1.ClusterVersion, version string) configv1.Release {
	for _, u := range cv.Status.AvailableUpdates {
		if u.Version == version {
			return u
		}
	}
	for _, h := range cv.Status.History {
		if h.Version == version {
			return configv1.Release{Version: h.Version, Image: h.Image}
		}
	}
	return configv1.Release{}
}

// accept tells whether the operator takes the desired update u, and says why not in Invalid or
// ReleaseAccepted otherwise.
func (r *Reconciler) accept(ctx context.Context, cv *configv1.ClusterVersion, u configv1.Update, now metav1.Time) (bool, error) {
	if u.Image == "" {
		if findRelease(cv, u.Version).Image == "" {
			setCondition(cv, Invalid, configv1.ConditionTrue, InvalidClusterVersion,
				fmt.Sprintf("The cluster version is invalid: spec.desiredUpdate.version: Invalid value: %q: %s", u.Version, VersionNotInUpdatesMsg), now)
			return false, nil
		}
		setCondition(cv, Invalid, configv1.ConditionFalse, "", "", now)
		return true, nil
	}
	setCondition(cv, Invalid, configv1.ConditionFalse, "", "", now)
	if !u.Force {
		failure := ""
		_, digest, byDigest := strings.Cut(u.Image, "@")
		switch {
		case !byDigest:
			failure = "The update cannot be verified: " + NotByDigestMsg
		default:
			signed, err := r.signed(ctx, string(cv.Spec.Upstream), digest)
			if err != nil {
				return false, err
			}
			if !signed {
				failure = fmt.Sprintf("The update cannot be verified: unable to verify %s against keyrings: verifier-public-key-redhat", digest)
			}
		}
		if failure != "" {
			setCondition(cv, ReleaseAccepted, configv1.ConditionFalse, RetrievePayload,
				fmt.Sprintf("Retrieving payload failed version=%q image=%q failure=%s", u.Version, u.Image, failure), now)
			return false, nil
		}
	}
	setCondition(cv, ReleaseAccepted, configv1.ConditionTrue, PayloadLoaded,
		fmt.Sprintf("Payload loaded version=%q image=%q architecture=\"amd64\"", u.Version, u.Image), now)
	return true, nil
}

// signed tells whether digest has a signature the cluster trusts: in a signature ConfigMap, or
// in the signature stores it reaches.
func (r *Reconciler) signed(ctx context.Context, upstream, digest string) (bool, error) {
	list := &corev1.ConfigMapList{}
	if err := r.Client.List(ctx, list, client.InNamespace(SignatureNamespace), client.HasLabels{SignatureLabel}); err != nil {
		return false, fmt.Errorf("listing the signature ConfigMaps: %w", err)
	}
	prefix := strings.Replace(digest, ":", "-", 1) + "-"
	for _, cm := range list.Items {
		for k := range cm.BinaryData {
			if strings.HasPrefix(k, prefix) {
				return true, nil
			}
		}
	}
	return r.Signatures != nil && r.Signatures(ctx, upstream, digest), nil
}

func (r *Reconciler) now() time.Time {
	if r.Clock == nil {
		return time.Now()
	}
	return r.Clock.Now()
}
