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

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	controlplanev1 "github.com/openshift-assisted/cluster-api-provider-openshift-assisted/api/controlplane/v1alpha3"
	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/controlplane/internal/upgradepath"
)

// +kubebuilder:webhook:verbs=update,path=/validate-controlplane-cluster-x-k8s-io-v1alpha3-openshiftassistedcontrolplane,mutating=false,failurePolicy=fail,matchPolicy=Equivalent,groups=controlplane.cluster.x-k8s.io,resources=openshiftassistedcontrolplanes,versions=v1alpha3,name=validation.openshiftassistedcontrolplane.controlplane.cluster.x-k8s.io,sideEffects=None,admissionReviewVersions=v1

// ControlPlaneValidator refuses a distributionVersion the installed cluster cannot move to (a
// downgrade, a major version change, or a jump of more than one minor version). The controller
// refuses the same (condition and event) when the webhook is not deployed.
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
	running := oldCP.Status.DistributionVersion
	if running == "" || newCP.Spec.DistributionVersion == oldCP.Spec.DistributionVersion {
		return nil, nil
	}
	why := upgradepath.Check(running, newCP.Spec.DistributionVersion)
	if why == "" {
		return nil, nil
	}
	return nil, apierrors.NewInvalid(controlplanev1.GroupVersion.WithKind("OpenshiftAssistedControlPlane").GroupKind(), newCP.Name,
		field.ErrorList{field.Forbidden(field.NewPath("spec", "distributionVersion"), why)})
}

// ValidateDelete accepts every deletion.
func (*ControlPlaneValidator) ValidateDelete(context.Context, *controlplanev1.OpenshiftAssistedControlPlane) (admission.Warnings, error) {
	return nil, nil
}
