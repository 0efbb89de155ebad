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

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha3"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/controlplane/internal/upgradepath"
)

// +kubebuilder:webhook:verbs=update,path=/validate-controlplane-cluster-x-k8s-io-v1alpha3-openshiftassistedcontrolplane,mutating=false,failurePolicy=fail,matchPolicy=Equivalent,groups=controlplane.cluster.x-k8s.io,resources=openshiftassistedcontrolplanes,versions=v1alpha3,name=validation.openshiftassistedcontrolplane.controlplane.cluster.x-k8s.io,sideEffects=None,admissionReviewVersions=v1

// ControlPlaneValidator refuses a distributionVersion the cluster cannot move to from the version
// it runs (status.distributionVersion, read from the workload cluster's ClusterVersion): a
// downgrade, a major version change, or a jump of more than one minor version; and any change of
// distributionVersion while the version that runs is not known (during the installation, or right
// after clusterctl move). The controller refuses the same (condition and event) when the webhook is
// not deployed, and never changes the release image of a cluster being installed. Replica
// transitions are checked by the CRD schema (a CEL transition rule), which also covers the scale
// subresource.
type ControlPlaneValidator struct{}

var _ admission.Validator[*controlplanev1.OpenshiftAssistedControlPlane] = &ControlPlaneValidator{}

// SetupWithManager registers the webhook with mgr's webhook server.
func SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &controlplanev1.OpenshiftAssistedControlPlane{}).
		WithValidator(&ControlPlaneValidator{}).
		Complete()
}

// ValidateCreate accepts every new control plane: the schema validates what needs no cluster.
func (*ControlPlaneValidator) ValidateCreate(context.Context, *controlplanev1.OpenshiftAssistedControlPlane) (admission.Warnings, error) {
	return nil, nil
}

// ValidateUpdate refuses a change of distributionVersion the running cluster cannot take.
func (*ControlPlaneValidator) ValidateUpdate(_ context.Context, oldCP, newCP *controlplanev1.OpenshiftAssistedControlPlane) (admission.Warnings, error) {
	why := versionChangeRefusal(oldCP, newCP.Spec.DistributionVersion)
	if why == "" {
		return nil, nil
	}
	return nil, apierrors.NewInvalid(controlplanev1.GroupVersion.WithKind("OpenshiftAssistedControlPlane").GroupKind(), newCP.Name,
		field.ErrorList{field.Forbidden(field.NewPath("spec", "distributionVersion"), why)})
}

// versionChangeRefusal says why the control plane cp (as stored) cannot have its
// spec.distributionVersion set to version; "" when it can. The change is checked against the
// version the cluster runs, status.distributionVersion; while that is not known, no change is
// allowed.
func versionChangeRefusal(cp *controlplanev1.OpenshiftAssistedControlPlane, version string) string {
	from := cp.Spec.DistributionVersion
	if version == from {
		return ""
	}
	running := cp.Status.DistributionVersion
	switch {
	case running != "":
		return upgradepath.Check(running, version)
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
