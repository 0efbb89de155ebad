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

// Package webhooks holds the OpenshiftAssistedControlPlane admission webhooks.
package webhooks

import (
	"context"
	"fmt"
	"slices"

	hiveextv1beta1 "github.com/openshift/assisted-service/api/hiveextension/v1beta1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	controlplanev1alpha2 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha2"
	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha4"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/controlplane/internal/release"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/controlplane/internal/upgradepath"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg/validation"
)

// +kubebuilder:webhook:verbs=create;update,path=/validate-controlplane-cluster-x-k8s-io-v1alpha4-openshiftassistedcontrolplane,mutating=false,failurePolicy=fail,matchPolicy=Equivalent,groups=controlplane.cluster.x-k8s.io,resources=openshiftassistedcontrolplanes,versions=v1alpha4,name=validation.openshiftassistedcontrolplane.controlplane.cluster.x-k8s.io,sideEffects=None,admissionReviewVersions=v1

// ControlPlaneValidator checks the formats of the spec that the CRD schema cannot (SSH key, base
// domain, proxy, object names, tang servers, and the bootstrap settings of
// openshiftAssistedConfigSpec; package validation), on create every field and on update only the
// fields that changed.
//
// It also refuses a distributionVersion the cluster cannot move to from the version it runs
// (status.distributionVersion, read from the workload cluster's ClusterVersion): a downgrade, a
// major version change, or a jump of more than one minor version; and any change of
// distributionVersion while the version that runs is not known (during the installation, or right
// after clusterctl move). The controller refuses the same (condition and event) when the webhook is
// not deployed, and never changes the release image of a cluster being installed. Replica
// transitions and the VIPs are checked by the CRD schema (CEL rules), which also covers the scale
// subresource.
type ControlPlaneValidator struct{}

var _ admission.Validator[*controlplanev1.OpenshiftAssistedControlPlane] = &ControlPlaneValidator{}

// SetupWithManager registers the webhooks with mgr's webhook server: validation, and, when
// mgr's scheme holds v1alpha2, the conversion of v1alpha2 objects (with the lookup of an
// infrastructure template's version it needs).
func SetupWithManager(mgr ctrl.Manager) error {
	controlplanev1alpha2.SetAPIVersionGetter(ContractAPIVersion(mgr.GetClient()))
	return ctrl.NewWebhookManagedBy(mgr, &controlplanev1.OpenshiftAssistedControlPlane{}).
		WithValidator(&ControlPlaneValidator{}).
		Complete()
}

// ValidateCreate checks the formats of a new control plane's spec.
func (*ControlPlaneValidator) ValidateCreate(_ context.Context, cp *controlplanev1.OpenshiftAssistedControlPlane) (admission.Warnings, error) {
	errs := append(annotationErrors(cp, nil), specErrors(&cp.Spec, nil)...)
	return ignoredVIPsWarning(cp, nil), validation.Invalid(controlplanev1.GroupVersion.WithKind(controlplanev1.ControlPlaneKind).GroupKind(), cp.Name, errs)
}

// annotationErrors refuses the release image repository set twice, with our key and upstream's,
// to different values (old: the stored control plane on update, checked only when one of the two
// changed; nil on create).
func annotationErrors(cp, old *controlplanev1.OpenshiftAssistedControlPlane) field.ErrorList {
	ours, upstream := cp.Annotations[controlplanev1.ReleaseImageRepositoryAnnotation], cp.Annotations[controlplanev1.UpstreamReleaseImageRepositoryAnnotation]
	if ours == "" || upstream == "" || ours == upstream {
		return nil
	}
	if old != nil && old.Annotations[controlplanev1.ReleaseImageRepositoryAnnotation] == ours &&
		old.Annotations[controlplanev1.UpstreamReleaseImageRepositoryAnnotation] == upstream {
		return nil
	}
	return field.ErrorList{field.Invalid(field.NewPath("metadata", "annotations").Key(controlplanev1.UpstreamReleaseImageRepositoryAnnotation), upstream,
		fmt.Sprintf("the release image repository is set twice, to %q by %s and to %q by upstream's %s: keep one of the two annotations",
			ours, controlplanev1.ReleaseImageRepositoryAnnotation, upstream, controlplanev1.UpstreamReleaseImageRepositoryAnnotation))}
}

// ValidateUpdate checks the formats of the spec fields that changed, and refuses a change of
// distributionVersion the running cluster cannot take.
func (*ControlPlaneValidator) ValidateUpdate(_ context.Context, oldCP, newCP *controlplanev1.OpenshiftAssistedControlPlane) (admission.Warnings, error) {
	var errs field.ErrorList
	if why := versionChangeRefusal(oldCP, newCP.Spec.DistributionVersion); why != "" {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "distributionVersion"), why))
	}
	errs = append(errs, annotationErrors(newCP, oldCP)...)
	errs = append(errs, specErrors(&newCP.Spec, &oldCP.Spec)...)
	return ignoredVIPsWarning(newCP, oldCP), validation.Invalid(controlplanev1.GroupVersion.WithKind(controlplanev1.ControlPlaneKind).GroupKind(), newCP.Name, errs)
}

// specErrors checks the formats of spec (old: the stored spec on update, nil on create; only the
// fields that changed from it are checked).
func specErrors(spec, old *controlplanev1.OpenshiftAssistedControlPlaneSpec) field.ErrorList {
	if old == nil {
		old = &controlplanev1.OpenshiftAssistedControlPlaneSpec{}
	}
	path := field.NewPath("spec", "config")
	cfg, oldCfg := &spec.Config, &old.Config
	var errs field.ErrorList
	add := func(err *field.Error) { errs = validation.Append(errs, err) }
	if cfg.BaseDomain != oldCfg.BaseDomain {
		add(validation.BaseDomain(path.Child("baseDomain"), cfg.BaseDomain))
	}
	if cfg.SSHAuthorizedKey != oldCfg.SSHAuthorizedKey {
		add(validation.SSHAuthorizedKeys(path.Child("sshAuthorizedKey"), cfg.SSHAuthorizedKey))
	}
	if cfg.PullSecretRef != nil && (oldCfg.PullSecretRef == nil || cfg.PullSecretRef.Name != oldCfg.PullSecretRef.Name) {
		add(validation.ObjectName(path.Child("pullSecretRef", "name"), cfg.PullSecretRef.Name))
	}
	for i, ref := range cfg.ManifestsConfigMapRefs {
		if !slices.Contains(oldCfg.ManifestsConfigMapRefs, ref) {
			add(validation.ObjectName(path.Child("manifestsConfigMapRefs").Index(i).Child("name"), ref.Name))
		}
	}
	if cfg.Proxy != nil && !apiequality.Semantic.DeepEqual(cfg.Proxy, oldCfg.Proxy) {
		errs = append(errs, validation.Proxy(path.Child("proxy"), proxySettings(cfg.Proxy), proxySettings(oldCfg.Proxy))...)
	}
	if d := cfg.DiskEncryption; d != nil && d.TangServers != "" && (oldCfg.DiskEncryption == nil || d.TangServers != oldCfg.DiskEncryption.TangServers) {
		add(validation.TangServers(path.Child("diskEncryption", "tangServers"), d.TangServers))
	}
	return append(errs, validation.ConfigSpec(field.NewPath("spec", "openshiftAssistedConfigSpec"), &spec.OpenshiftAssistedConfigSpec, &old.OpenshiftAssistedConfigSpec)...)
}

func proxySettings(p *hiveextv1beta1.Proxy) *validation.ProxySettings {
	if p == nil {
		return nil
	}
	return &validation.ProxySettings{HTTPProxy: p.HTTPProxy, HTTPSProxy: p.HTTPSProxy, NoProxy: p.NoProxy}
}

// ignoredVIPsWarning warns, on create or when they change, that the VIPs of a single-node control
// plane are not used (it is installed with platform None); nil otherwise. This API version's
// schema refuses such a control plane (a CEL rule on the spec); the upstream provider's
// v1alpha2 accepts it, so a v1alpha2 request gets this warning instead of a refusal.
func ignoredVIPsWarning(cp, old *controlplanev1.OpenshiftAssistedControlPlane) admission.Warnings {
	if ptr.Deref(cp.Spec.Replicas, 1) != 1 || len(cp.Spec.Config.APIVIPs)+len(cp.Spec.Config.IngressVIPs) == 0 {
		return nil
	}
	if old != nil && slices.Equal(old.Spec.Config.APIVIPs, cp.Spec.Config.APIVIPs) && slices.Equal(old.Spec.Config.IngressVIPs, cp.Spec.Config.IngressVIPs) {
		return nil
	}
	return admission.Warnings{"spec.config.apiVIPs and spec.config.ingressVIPs are not used with replicas 1: single-node OpenShift is installed " +
		"with platform None and serves its API and ingress on the node's own address; remove them"}
}

// versionChangeRefusal says why the control plane cp (as stored) cannot have its
// spec.distributionVersion set to version; "" when it can. The change is checked against the
// version the cluster runs, status.distributionVersion; while that is not known, no change is
// allowed.
func versionChangeRefusal(cp *controlplanev1.OpenshiftAssistedControlPlane, version string) string {
	from := cp.Spec.DistributionVersion
	// The version alone: a distributionVersion may end with its release's architecture
	// (release.SplitArchitecture), which adding or removing changes no version.
	if release.Version(version) == release.Version(from) {
		return ""
	}
	running := cp.Status.DistributionVersion
	switch {
	case running != "":
		return upgradepath.Check(running, release.Version(version))
	case installing(cp):
		return fmt.Sprintf("changing distributionVersion from %s to %s is not allowed while the cluster is being installed: "+
			"the installation goes on with OpenShift %s whatever the spec says. Wait for the installation to complete "+
			"(condition Available True and status.distributionVersion set), then change distributionVersion: "+
			"the change will be carried out as an upgrade", from, version, from)
	default:
		return fmt.Sprintf("changing distributionVersion from %s to %s is not allowed while the OpenShift version the cluster runs is not known: "+
			"status.distributionVersion is empty (it is read from the workload cluster's ClusterVersion once the cluster is installed "+
			"and reachable, and is empty for a while after clusterctl move or before the controller first reconciled). "+
			"Retry once status.distributionVersion is set", from, version)
	}
}

// installing tells whether the controller reports the cluster's installation as not completed.
func installing(cp *controlplanev1.OpenshiftAssistedControlPlane) bool {
	if ptr.Deref(cp.Status.Initialization.ControlPlaneInitialized, false) {
		return false
	}
	c := meta.FindStatusCondition(cp.Status.Conditions, controlplanev1.AvailableCondition)
	return c != nil && c.Status != metav1.ConditionTrue
}

// ValidateDelete accepts every deletion.
func (*ControlPlaneValidator) ValidateDelete(context.Context, *controlplanev1.OpenshiftAssistedControlPlane) (admission.Warnings, error) {
	return nil, nil
}
